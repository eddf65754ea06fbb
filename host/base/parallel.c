/* parallel.c - the host's threads: how many to use, and a fork-join that runs one function
 * on every thread. The set-up steps (reading, COO -> CSR, CSR -> CMRS) split their work
 * into contiguous ranges, one per thread, so results never depend on the thread count. */
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) */
#include "base/base.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_THREADS 256

static _Thread_local const atomic_int *thread_limit; /* cmrs_parallel_limit's; NULL: none */

const atomic_int *cmrs_parallel_limit(const atomic_int *limit)
{
    const atomic_int *before = thread_limit;
    thread_limit = limit;
    return before;
}

int cmrs_parallel_threads(void)
{
    const char *env = getenv("CMRSCL_THREADS");
    long n = env && *env ? strtol(env, NULL, 10) : 0;
    if (n <= 0) {
#ifdef CPU_COUNT
        cpu_set_t set; /* the CPUs this process may run on, not all the machine has */
        n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
#endif
        if (n <= 0)
            n = sysconf(_SC_NPROCESSORS_ONLN);
    }
    int limit = thread_limit ? atomic_load(thread_limit) : 0;
    if (limit > 0 && n > limit)
        n = limit;
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

typedef struct worker {
    parallel_fn fn;
    void *ctx;
    int thread, threads;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    w->fn(w->ctx, w->thread, w->threads);
    return NULL;
}

void cmrs_parallel_run(int threads, parallel_fn fn, void *ctx)
{
    if (threads < 1)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    worker w[MAX_THREADS];
    pthread_t id[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    for (int t = 0; t < threads; ++t)
        w[t] = (worker){fn, ctx, t, threads};
    for (int t = 1; t < threads; ++t)
        started[t] = pthread_create(&id[t], NULL, worker_main, &w[t]) == 0;
    fn(ctx, 0, threads);
    /* A thread that could not be started does its share here: slower, same result. */
    for (int t = 1; t < threads; ++t) {
        if (started[t])
            pthread_join(id[t], NULL);
        else
            fn(ctx, t, threads);
    }
}

typedef struct piece_queue {
    parallel_piece_fn fn;
    void *ctx;
    int64_t pieces;
    atomic_int_fast64_t next;
} piece_queue;

static void take_pieces(void *ctx, int thread, int threads)
{
    (void)thread, (void)threads;
    piece_queue *q = ctx;
    for (int64_t p; (p = atomic_fetch_add(&q->next, 1)) < q->pieces;)
        q->fn(q->ctx, p);
}

void cmrs_parallel_pieces(int threads, int64_t pieces, parallel_piece_fn fn, void *ctx)
{
    piece_queue q = {fn, ctx, pieces, 0};
    cmrs_parallel_run(threads < pieces ? threads : (int)(pieces > 0 ? pieces : 1), take_pieces, &q);
}

void cmrs_parallel_range(int64_t n, int thread, int threads, int64_t *begin, int64_t *end)
{
    *begin = n * thread / threads;
    *end = n * (thread + 1) / threads;
}

void *cmrs_parallel_alloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    size_t bytes = n * size > 0 ? n * size : 1, huge = (size_t)2 << 20;
    if (bytes < 4 * huge)
        return malloc(bytes);
    void *p = NULL;
    if (posix_memalign(&p, huge, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE); /* advice: ignored where there are no huge pages */
#endif
    return p;
}

typedef struct copy_job {
    char *dst;
    const char *src;
    size_t n;
} copy_job;

static void copy_share(void *ctx, int thread, int threads)
{
    const copy_job *j = ctx;
    int64_t begin, end;
    cmrs_parallel_range((int64_t)j->n, thread, threads, &begin, &end);
    if (end > begin)
        memcpy(j->dst + begin, j->src + begin, (size_t)(end - begin));
}

void cmrs_parallel_copy(void *dst, const void *src, size_t bytes)
{
    copy_job job = {dst, src, bytes};
    cmrs_parallel_run(cmrs_parallel_threads(), copy_share, &job);
}
