/* row_starts.c - a sparse product's row counts, made on the device, into its rows' starts on
 * the host's threads (amg_galerkin.c: C's rows and the transpose's), with the checks the
 * device's counts need: a row reported -1 (its table overflowed) and more entries than 32-bit
 * starts hold. */
#include "precond/precond.h"

#include <stdlib.h>

/* Each thread's share of the rows' counts: summed, then turned into their starts in place. */
typedef struct starts_job {
    int32_t *rows; /* n + 1: the counts at [1..n], then the starts at [0..n] */
    int32_t n;
    int64_t *total;  /* a thread's sum; then the starts before its rows */
    int32_t *failed; /* a thread's first row counted -1, or -1 */
    int32_t *most;   /* a thread's longest row */
    bool place;      /* the second pass */
} starts_job;

static void starts_share(void *ctx, int thread, int threads)
{
    const starts_job *j = ctx;
    int64_t begin, end, sum = j->total[thread];
    cmrs_parallel_range(j->n, thread, threads, &begin, &end);
    if (!j->place) {
        int32_t most = 0;
        j->failed[thread] = -1, sum = 0;
        for (int64_t i = begin; i < end; ++i) {
            if (j->rows[i + 1] < 0 && j->failed[thread] < 0)
                j->failed[thread] = (int32_t)i;
            sum += j->rows[i + 1];
            most = j->rows[i + 1] > most ? j->rows[i + 1] : most;
        }
        j->total[thread] = sum;
        j->most[thread] = most;
        return;
    }
    for (int64_t i = begin; i < end; ++i) { /* row i + 1's start over row i's count */
        sum += j->rows[i + 1];
        j->rows[i + 1] = (int32_t)sum;
    }
}

cmrscl_status cmrs_row_starts(int32_t *rows, int32_t n, int table, int64_t *nnz, int32_t *longest)
{
    int threads = cmrs_parallel_threads();
    int64_t *total = calloc((size_t)threads, sizeof *total);
    int32_t *failed = calloc((size_t)threads, sizeof *failed);
    int32_t *most = calloc((size_t)threads, sizeof *most);
    if (!total || !failed || !most) {
        free(total), free(failed), free(most);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "a sparse product on the device");
    }
    starts_job job = {rows, n, total, failed, most, false};
    cmrs_parallel_run(threads, starts_share, &job);
    int32_t bad = -1;
    int64_t sum = 0;
    *longest = 0;
    for (int t = 0; t < threads; ++t) {
        bad = bad < 0 ? failed[t] : bad;
        *longest = most[t] > *longest ? most[t] : *longest;
        int64_t part = total[t];
        total[t] = sum, sum += part;
    }
    cmrscl_status st = CMRSCL_OK;
    if (bad >= 0 || sum > INT32_MAX)
        st = cmrscl_fail(
            CMRSCL_ERROR_UNSUPPORTED,
            bad >= 0 ? "a sparse product on the device: row %d of C has more than %d columns"
                     : "a sparse product on the device: more than 2^31 - 1 entries (%d rows)",
            bad >= 0 ? (int)bad : (int)n, table);
    if (st == CMRSCL_OK) {
        job.place = true;
        cmrs_parallel_run(threads, starts_share, &job);
        rows[0] = 0;
        *nnz = sum;
    }
    free(total), free(failed), free(most);
    return st;
}
