/* amg_spgemm.c - sparse matrix products for the AMG setup (issue 57): A T for the smoothed
 * prolongator and R A P for the coarse operator. Gustavson's row-by-row product: a marker
 * array finds each row's distinct columns, a dense accumulator sums its products, and the
 * row's columns are sorted, so the result is canonical CSR and the same on every run. The
 * rows go in ranges to the set-up's host threads (host/base/parallel.c), each with a marker,
 * an accumulator and an output buffer of its own: a row's entries do not depend on which
 * thread made them, so the product is the same bits whatever the threads.
 * One pass, each thread's rows into its buffer, then the buffers copied to their places: a
 * first pass that counted each row's columns, so that the rows could be written in place,
 * walked every product twice (docs/dev/PERFORMANCE.md, "the Galerkin product in one pass").
 * The price: the product's memory twice over while the buffers are copied. */
#include "precond/precond.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

/* A thread's rows of the product, as they are made. */
typedef struct spgemm_share_out {
    int32_t *col;
    double *val;
    int64_t n, cap;
    bool failed;
} spgemm_share_out;

typedef struct spgemm_job {
    const cmrscl_csr *a, *b;
    cmrscl_csr *c;
    spgemm_share_out *out;
    bool copy; /* the second step: each thread's buffer to its place in c */
} spgemm_job;

/* Room for `more` entries beyond out->n: the capacity grows by half again, so a share that
 * guessed low copies each entry a few times at most. */
static bool reserve(spgemm_share_out *out, int64_t more)
{
    if (out->n + more <= out->cap)
        return true;
    int64_t cap = out->cap + out->cap / 2;
    if (cap < out->n + more)
        cap = out->n + more;
    int32_t *col = realloc(out->col, (size_t)cap * sizeof(int32_t));
    if (col)
        out->col = col;
    double *val = col ? realloc(out->val, (size_t)cap * sizeof(double)) : NULL;
    if (val)
        out->val = val;
    if (!col || !val)
        return false;
    out->cap = cap;
    return true;
}

/* Rows [first, end) of a * b into out, each row's length into row_length[i + 1]: the marker
 * holds b's columns (-1 at first), the accumulator `sum` is 0 at first and again after each
 * row. */
static void product_rows(const cmrscl_csr *a, const cmrscl_csr *b, int32_t *marker, double *sum,
                         int64_t *row_length, spgemm_share_out *out, int64_t first, int64_t end)
{
    for (int64_t i = first; i < end; ++i) {
        int64_t bound = 0; /* the row's products: room for its columns */
        for (int64_t ka = a->row_ptr[i]; ka < a->row_ptr[i + 1]; ++ka)
            bound += b->row_ptr[a->col_ind[ka] + 1] - b->row_ptr[a->col_ind[ka]];
        if (bound > b->cols)
            bound = b->cols;
        if (!reserve(out, bound)) {
            out->failed = true;
            return;
        }
        int32_t *cols = out->col + out->n;
        int64_t n = 0;
        for (int64_t ka = a->row_ptr[i]; ka < a->row_ptr[i + 1]; ++ka) {
            int32_t r = a->col_ind[ka];
            double v = a->values[ka];
            for (int64_t kb = b->row_ptr[r]; kb < b->row_ptr[r + 1]; ++kb) {
                int32_t j = b->col_ind[kb];
                if (marker[j] != (int32_t)i) {
                    marker[j] = (int32_t)i;
                    cols[n++] = j;
                }
                sum[j] += v * b->values[kb];
            }
        }
        sort_columns(cols, n);
        double *vals = out->val + out->n;
        for (int64_t k = 0; k < n; ++k) {
            vals[k] = sum[cols[k]];
            sum[cols[k]] = 0;
        }
        row_length[i + 1] = n;
        out->n += n;
    }
}

static void spgemm_share(void *ctx, int thread, int threads)
{
    spgemm_job *j = ctx;
    spgemm_share_out *out = &j->out[thread];
    int64_t begin, end;
    cmrs_parallel_range(j->a->rows, thread, threads, &begin, &end);
    if (j->copy) { /* c's row_ptr holds the rows' offsets now */
        int64_t at = j->c->row_ptr[begin];
        memcpy(j->c->col_ind + at, out->col, (size_t)out->n * sizeof(int32_t));
        memcpy(j->c->values + at, out->val, (size_t)out->n * sizeof(double));
        return;
    }
    int32_t *marker = cmrscl_alloc((size_t)j->b->cols + 1, sizeof(int32_t));
    double *sum = calloc((size_t)j->b->cols + 1, sizeof(double));
    /* a first guess at the share's entries: twice a's */
    int64_t guess = 2 * (j->a->row_ptr[end] - j->a->row_ptr[begin]);
    out->failed = !marker || !sum || !reserve(out, guess > 0 ? guess : 1);
    for (int32_t k = 0; !out->failed && k < j->b->cols; ++k)
        marker[k] = -1;
    if (!out->failed)
        product_rows(j->a, j->b, marker, sum, j->c->row_ptr, out, begin, end);
    free(marker);
    free(sum);
}

cmrscl_status cmrs_amg_spgemm(const cmrscl_csr *a, const cmrscl_csr *b, cmrscl_csr *c)
{
    *c = (cmrscl_csr){0};
    if (a->cols != b->rows)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "sparse product: %d x %d times %d x %d (inner sizes differ)",
                           (int)a->rows, (int)a->cols, (int)b->rows, (int)b->cols);
    int threads = cmrs_parallel_threads();
    if ((int64_t)threads > a->rows / 1024 + 1) /* a few rows: a thread's arrays cost more */
        threads = (int)(a->rows / 1024 + 1);
    spgemm_share_out *out = calloc((size_t)threads, sizeof *out);
    bool ok = out && (c->row_ptr = cmrscl_alloc((size_t)a->rows + 1, sizeof(int64_t))) != NULL;
    spgemm_job job = {a, b, c, out, false};
    if (ok) {
        cmrs_parallel_run(threads, spgemm_share, &job);
        for (int t = 0; t < threads; ++t)
            ok = ok && !out[t].failed;
    }
    if (ok) {
        c->row_ptr[0] = 0;
        for (int32_t i = 0; i < a->rows; ++i)
            c->row_ptr[i + 1] += c->row_ptr[i];
        c->rows = a->rows, c->cols = b->cols, c->nnz = c->row_ptr[a->rows];
        ok = (c->col_ind = cmrs_parallel_alloc((size_t)c->nnz + 1, sizeof(int32_t))) &&
             (c->values = cmrs_parallel_alloc((size_t)c->nnz + 1, sizeof(double)));
    }
    if (ok) {
        job.copy = true;
        cmrs_parallel_run(threads, spgemm_share, &job);
    }
    for (int t = 0; out && t < threads; ++t)
        free(out[t].col), free(out[t].val);
    free(out);
    if (ok)
        return CMRSCL_OK;
    cmrscl_csr_free(c);
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
