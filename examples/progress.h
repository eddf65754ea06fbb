/* progress.h - a progress line on stderr for the examples' loops: on a terminal only, once a
 * loop has run two seconds, at most four times a second - so short runs, pipes and logs print
 * exactly what they did before, and a long run is never silent. */
#ifndef CMRSCL_EXAMPLES_PROGRESS_H
#define CMRSCL_EXAMPLES_PROGRESS_H

#include <stdio.h>
#include <time.h>
#include <unistd.h>

typedef struct progress {
    double start, last; /* seconds: the loop's start, the last line */
    int tty;
} progress;

static inline double progress_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline progress progress_begin(void)
{
    progress p = {progress_now(), 0.0, isatty(fileno(stderr))};
    return p;
}

/* "NAME: iteration IT of at most MAX, WHAT VALUE", overwriting the line before. */
static inline void progress_show(progress *p, const char *name, int it, int max, const char *what,
                                 double value)
{
    double now = progress_now();
    if (!p->tty || now - p->start < 2.0 || now - p->last < 0.25)
        return;
    p->last = now;
    fprintf(stderr, "\r%s: iteration %d of at most %d, %s %.3e ", name, it, max, what, value);
    fflush(stderr);
}

/* Clears the line, where one was shown, before the results are printed. */
static inline void progress_end(const progress *p)
{
    if (p->tty && p->last > 0.0)
        fputs("\r\033[K", stderr);
}

#endif
