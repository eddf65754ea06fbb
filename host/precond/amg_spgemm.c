/* amg_spgemm.c - sparse matrix products for the AMG setup (issue 57): A T for the smoothed
 * prolongator and R A P for the coarse operator. Gustavson's row-by-row product in two
 * passes: the first counts each row's distinct columns with a marker array, so the second
 * writes into arrays of the exact size; a dense accumulator sums each row's products, and
 * the row's columns are sorted, so the result is canonical CSR and the same on every run.
 * Both passes take the rows in ranges on the set-up's host threads (host/base/parallel.c),
 * each thread with a marker and an accumulator of its own: a row's entries do not depend on
 * which thread made them, so the product is the same bits whatever the threads. The result's
 * arrays are the set-up's big ones (cmrs_parallel_alloc: huge pages, fewer faults). Counting
 * first walks every product twice; one pass into each thread's own buffer, then copied into
 * place, made the Galerkin products faster but A T slower, and the set-up no faster
 * (docs/dev/PERFORMANCE.md, "AMG's sparse products in one pass"), at twice the memory. */
#include "precond/precond.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

static int compare_int32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* A row's columns in ascending order: insertion sort for the short rows AMG's products make
 * (glibc's qsort is a merge sort that may allocate its buffer on every call), qsort beyond
 * (docs/dev/PERFORMANCE.md, INSERTION_ROW). */
#define INSERTION_ROW 64
static void sort_columns(int32_t *c, int64_t n)
{
    if (n > INSERTION_ROW) {
        qsort(c, (size_t)n, sizeof(int32_t), compare_int32);
        return;
    }
    for (int64_t i = 1; i < n; ++i) {
        int32_t v = c[i];
        int64_t j = i;
        for (; j > 0 && c[j - 1] > v; --j)
            c[j] = c[j - 1];
        c[j] = v;
    }
}

/* One thread's share of a product: its rows, its marker (b's columns, -1 at first) and its
 * accumulator (0 at first). */
typedef struct spgemm_job {
    const cmrscl_csr *a, *b;
    cmrscl_csr *c;
    int32_t **marker;
    double **sum;
    bool fill;               /* the second pass */
    const atomic_bool *stop; /* where set, the product is no longer wanted (may be NULL) */
    atomic_bool stopped;
} spgemm_job;

/* Entries of each row of a * b into row_ptr[i + 1] (the prefix sums come after). */
static void count_rows(const cmrscl_csr *a, const cmrscl_csr *b, int32_t *marker, int64_t *row_ptr,
                       int64_t begin, int64_t end)
{
    for (int64_t i = begin; i < end; ++i) {
        int64_t n = 0;
        for (int64_t ka = a->row_ptr[i]; ka < a->row_ptr[i + 1]; ++ka) {
            int32_t r = a->col_ind[ka];
            for (int64_t kb = b->row_ptr[r]; kb < b->row_ptr[r + 1]; ++kb)
                if (marker[b->col_ind[kb]] != (int32_t)i) {
                    marker[b->col_ind[kb]] = (int32_t)i;
                    ++n;
                }
        }
        row_ptr[i + 1] = n;
    }
}

/* Columns and values of each row; marker at -1 again, sum at 0. */
static void fill_rows(const cmrscl_csr *a, const cmrscl_csr *b, int32_t *marker, double *sum,
                      cmrscl_csr *c, int64_t first, int64_t end)
{
    for (int64_t i = first; i < end; ++i) {
        int64_t begin = c->row_ptr[i], n = begin;
        for (int64_t ka = a->row_ptr[i]; ka < a->row_ptr[i + 1]; ++ka) {
            int32_t r = a->col_ind[ka];
            double v = a->values[ka];
            for (int64_t kb = b->row_ptr[r]; kb < b->row_ptr[r + 1]; ++kb) {
                int32_t j = b->col_ind[kb];
                if (marker[j] != (int32_t)i) {
                    marker[j] = (int32_t)i;
                    c->col_ind[n++] = j;
                }
                sum[j] += v * b->values[kb];
            }
        }
        sort_columns(c->col_ind + begin, n - begin);
        for (int64_t k = begin; k < n; ++k) {
            c->values[k] = sum[c->col_ind[k]];
            sum[c->col_ind[k]] = 0;
        }
    }
}

/* How often a thread looks whether the product is still wanted: every this many rows (and
 * 16 times as many columns of its marker). */
#define STOP_ROWS 4096
#define STOP_COLUMNS ((int64_t)STOP_ROWS * 16)

static bool stopping(spgemm_job *j)
{
    if (!j->stop || !atomic_load_explicit(j->stop, memory_order_relaxed))
        return false;
    atomic_store(&j->stopped, true);
    return true;
}

static void spgemm_share(void *ctx, int thread, int threads)
{
    spgemm_job *j = ctx;
    int64_t begin, end;
    cmrs_parallel_range(j->a->rows, thread, threads, &begin, &end);
    int32_t *marker = j->marker[thread];
    for (int64_t k = 0; k < j->b->cols; k += STOP_COLUMNS) { /* (fresh pages: faults) */
        if (stopping(j))
            return;
        for (int64_t c = k; c < j->b->cols && c < k + STOP_COLUMNS; ++c)
            marker[c] = -1;
    }
    for (int64_t first = begin; first < end; first += STOP_ROWS) {
        if (stopping(j))
            return;
        int64_t last = first + STOP_ROWS < end ? first + STOP_ROWS : end;
        if (j->fill)
            fill_rows(j->a, j->b, marker, j->sum[thread], j->c, first, last);
        else
            count_rows(j->a, j->b, marker, j->c->row_ptr, first, last);
    }
}

cmrscl_status cmrs_amg_spgemm(const cmrscl_csr *a, const cmrscl_csr *b, cmrscl_csr *c)
{
    bool stopped;
    return cmrs_amg_spgemm_unless(a, b, c, NULL, &stopped);
}

cmrscl_status cmrs_amg_spgemm_unless(const cmrscl_csr *a, const cmrscl_csr *b, cmrscl_csr *c,
                                     const atomic_bool *stop, bool *stopped)
{
    *c = (cmrscl_csr){0};
    *stopped = false;
    if (a->cols != b->rows)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "sparse product: %d x %d times %d x %d (inner sizes differ)",
                           (int)a->rows, (int)a->cols, (int)b->rows, (int)b->cols);
    int threads = cmrs_parallel_threads();
    if ((int64_t)threads > a->rows / 1024 + 1) /* a few rows: a thread's arrays cost more */
        threads = (int)(a->rows / 1024 + 1);
    int32_t **marker = calloc((size_t)threads, sizeof *marker);
    double **sum = calloc((size_t)threads, sizeof *sum);
    bool ok =
        marker && sum && (c->row_ptr = cmrscl_alloc((size_t)a->rows + 1, sizeof(int64_t))) != NULL;
    for (int t = 0; ok && t < threads; ++t)
        ok = (marker[t] = cmrscl_alloc((size_t)b->cols + 1, sizeof(int32_t))) != NULL;
    spgemm_job job = {.a = a, .b = b, .c = c, .marker = marker, .sum = sum, .stop = stop};
    atomic_init(&job.stopped, false);
    bool counted = false;
    if (ok) {
        cmrs_parallel_run(threads, spgemm_share, &job);
        counted = !atomic_load(&job.stopped) && !stopping(&job); /* (before the big arrays) */
    }
    if (counted) {
        c->row_ptr[0] = 0;
        for (int32_t i = 0; i < a->rows; ++i)
            c->row_ptr[i + 1] += c->row_ptr[i];
        c->rows = a->rows, c->cols = b->cols, c->nnz = c->row_ptr[a->rows];
        ok = (c->col_ind = cmrs_parallel_alloc((size_t)c->nnz + 1, sizeof(int32_t))) &&
             (c->values = cmrs_parallel_alloc((size_t)c->nnz + 1, sizeof(double)));
        for (int t = 0; ok && t < threads; ++t)
            ok = (sum[t] = calloc((size_t)b->cols + 1, sizeof(double))) != NULL;
    }
    if (ok && counted) {
        job.fill = true;
        cmrs_parallel_run(threads, spgemm_share, &job);
    }
    for (int t = 0; t < threads && marker && sum; ++t)
        free(marker[t]), free(sum[t]);
    free(marker), free(sum);
    *stopped = atomic_load(&job.stopped);
    if (ok && counted && !*stopped)
        return CMRSCL_OK;
    cmrscl_csr_free(c);
    if (*stopped)
        return CMRSCL_OK;
    return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "sparse product of %d x %d and %d x %d",
                       (int)a->rows, (int)a->cols, (int)b->rows, (int)b->cols);
}

cmrscl_status cmrs_amg_galerkin(const cmrscl_csr *r, const cmrscl_csr *a, const cmrscl_csr *p,
                                cmrscl_csr *c)
{
    cmrscl_csr ap = {0};
    cmrscl_status st = cmrs_amg_spgemm(a, p, &ap);
    if (st == CMRSCL_OK)
        st = cmrs_amg_spgemm(r, &ap, c);
    cmrscl_csr_free(&ap);
    return st;
}
