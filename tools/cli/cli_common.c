/* cli_common.c - what every command-line tool of the project shares: its name in messages,
 * the clock, a median, and the one-line report of a library failure. */
#include "cli.h"

#include <stdlib.h>
#include <time.h>

const char *cli_name = "cmrscl-run";

double cli_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int cli_fail(const char *what, cmrscl_status status)
{
    fprintf(stderr, "%s: %s: %s: %s\n", cli_name, what, cmrscl_status_name(status),
            *cmrscl_last_error() ? cmrscl_last_error() : cmrscl_status_message(status));
    /* The library's INVALID_ARGUMENT here is an option or value of the user's that only the
     * device or the matrix shows to be wrong (a work-group that is no multiple of the plan's
     * warp): a usage error, like the values the parser refuses. */
    return status == CMRSCL_ERROR_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_RUN_FAILED;
}

int cli_open_device(const cli_options *opt, cmrscl_context *ctx, cmrscl_device_info *dev)
{
    cmrscl_status st = cmrscl_context_create(opt->device, ctx);
    if (st != CMRSCL_OK)
        return cli_fail("selecting the device", st);
    cmrscl_context_device_info(*ctx, dev);
    return 0;
}
