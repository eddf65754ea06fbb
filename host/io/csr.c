/* csr.c - compressed sparse rows on the host: validation and the CPU reference SpMV in
 * double that every check compares against (COO -> CSR is in coo_to_csr.c). Both walk
 * large matrices on all host threads - a product of billions of entries is checked in
 * seconds - and both give the same answer, message and bits for any thread count. */
#include "io/io.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Matrices this small are walked on the calling thread. */
#define PARALLEL_MIN_ENTRIES (1 << 16)

static int threads_for(int64_t entries)
{
    return entries < PARALLEL_MIN_ENTRIES ? 1 : cmrs_parallel_threads();
}

int64_t cmrs_csr_row_at(const int64_t *row_ptr, int32_t rows, int64_t e)
{
    int64_t a = 0, z = rows;
    while (a < z) {
        int64_t m = (a + z) / 2;
        if (row_ptr[m] < e)
            a = m + 1;
        else
            z = m;
    }
    return a;
}

/* Thread t's rows [*r0, *r1): whole rows holding about an equal share of the entries (the
 * last thread also takes the empty rows at the end). row_ptr must be non-decreasing. */
static void entry_share(const int64_t *row_ptr, int32_t rows, int t, int threads, int64_t *r0,
                        int64_t *r1)
{
    int64_t e0, e1;
    cmrs_parallel_range(row_ptr[rows], t, threads, &e0, &e1);
    *r0 = t == 0 ? 0 : cmrs_csr_row_at(row_ptr, rows, e0);
    *r1 = t == threads - 1 ? rows : cmrs_csr_row_at(row_ptr, rows, e1);
}

/* Row pointers between 32 and 64 bits, on the host's threads (millions of rows, on the paths
 * of matrix creation and AMG's set-up on the device). */
typedef struct ptr_copy {
    const int32_t *narrow_in;
    const int64_t *wide_in;
    int64_t *wide_out;
    int32_t *narrow_out;
    int64_t n;
} ptr_copy;

static void ptr_share(void *ctx, int t, int threads)
{
    const ptr_copy *c = ctx;
    int64_t begin, end;
    cmrs_parallel_range(c->n, t, threads, &begin, &end);
    for (int64_t i = begin; i < end; ++i)
        if (c->wide_out)
            c->wide_out[i] = c->narrow_in[i];
        else
            c->narrow_out[i] = (int32_t)c->wide_in[i];
}

static void *copy_ptr(ptr_copy c, void *out)
{
    if (out)
        cmrs_parallel_run(threads_for(c.n), ptr_share, &c);
    return out;
}

int64_t *cmrs_csr_widen_row_ptr(const int32_t *row_ptr, int32_t rows)
{
    int64_t *wide = cmrs_parallel_alloc((size_t)rows + 1, sizeof *wide);
    return copy_ptr((ptr_copy){.narrow_in = row_ptr, .wide_out = wide, .n = (int64_t)rows + 1},
                    wide);
}

int32_t *cmrs_csr_narrow_row_ptr(const int64_t *row_ptr, int32_t rows)
{
    int32_t *narrow = cmrs_parallel_alloc((size_t)rows + 1, sizeof *narrow);
    return copy_ptr((ptr_copy){.wide_in = row_ptr, .narrow_out = narrow, .n = (int64_t)rows + 1},
                    narrow);
}

/* ---- validation: the first offender of each thread's range, the lowest one reported ---- */

typedef struct validation {
    int32_t rows, cols;
    const int64_t *row_ptr;
    const int32_t *col_ind;
    int64_t bad[256]; /* per thread: the first bad row pointer or entry, or -1 */
    int64_t row[256]; /* ... and the row of that entry */
    bool sorted[256]; /* per thread: its rows' columns are non-decreasing */
    bool strict[256]; /* ... and increasing (no column twice in a row) */
} validation;

static void check_row_ptr(void *ctx, int t, int threads)
{
    validation *v = ctx;
    int64_t i0, i1;
    cmrs_parallel_range(v->rows, t, threads, &i0, &i1);
    v->bad[t] = -1;
    for (int64_t i = i0; i < i1; ++i)
        if (v->row_ptr[i + 1] < v->row_ptr[i]) {
            v->bad[t] = i;
            return;
        }
}

static void check_entries(void *ctx, int t, int threads)
{
    validation *v = ctx;
    int64_t r0, r1;
    entry_share(v->row_ptr, v->rows, t, threads, &r0, &r1);
    v->bad[t] = -1;
    bool sorted = true, strict = true;
    for (int64_t i = r0; i < r1; ++i)
        for (int64_t k = v->row_ptr[i]; k < v->row_ptr[i + 1]; ++k) {
            if ((uint32_t)v->col_ind[k] >= (uint32_t)v->cols) {
                v->bad[t] = k, v->row[t] = i;
                return;
            }
            sorted &= k == v->row_ptr[i] || v->col_ind[k] >= v->col_ind[k - 1];
            strict &= k == v->row_ptr[i] || v->col_ind[k] > v->col_ind[k - 1];
        }
    v->sorted[t] = sorted, v->strict[t] = strict;
}

/* The first thread that found something, or -1. */
static int first_bad(const validation *v, int threads)
{
    for (int t = 0; t < threads; ++t)
        if (v->bad[t] >= 0)
            return t;
    return -1;
}

/* cmrs_csr_validate_structure, also saying whether every row's columns increase. */
static cmrscl_status validate_structure(int32_t rows, int32_t cols, const int64_t *row_ptr,
                                        const int32_t *col_ind, bool *rows_sorted,
                                        bool *rows_strict)
{
    if (rows < 0 || cols < 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "negative size %d x %d", rows, cols);
    if (!row_ptr)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "row_ptr is NULL");
    if (row_ptr[0] != 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "row_ptr[0] = %lld, expected 0",
                           (long long)row_ptr[0]);
    validation *v = malloc(sizeof *v);
    if (!v)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to validate a matrix");
    *v = (validation){.rows = rows, .cols = cols, .row_ptr = row_ptr, .col_ind = col_ind};
    int threads = threads_for(rows);
    cmrs_parallel_run(threads, check_row_ptr, v);
    int t = first_bad(v, threads);
    int64_t nnz = t < 0 ? row_ptr[rows] : 0;
    cmrscl_status st = CMRSCL_OK;
    if (t >= 0) {
        int64_t i = v->bad[t];
        st = cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                         "row_ptr decreases: row_ptr[%lld] = %lld < row_ptr[%lld] = %lld",
                         (long long)i + 1, (long long)row_ptr[i + 1], (long long)i,
                         (long long)row_ptr[i]);
    } else if (nnz > 0 && !col_ind) {
        st = cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "col_ind is NULL but nnz = %lld",
                         (long long)nnz);
    } else {
        threads = threads_for(nnz);
        cmrs_parallel_run(threads, check_entries, v);
        if ((t = first_bad(v, threads)) >= 0) {
            int64_t k = v->bad[t];
            st = cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                             "col_ind[%lld] = %d (row %lld) is outside 0..%d", (long long)k,
                             col_ind[k], (long long)v->row[t], cols - 1);
        }
    }
    bool sorted = true, strict = true;
    for (int k = 0; k < threads && st == CMRSCL_OK; ++k)
        sorted &= v->sorted[k], strict &= v->strict[k];
    if (rows_sorted && st == CMRSCL_OK)
        *rows_sorted = sorted;
    if (rows_strict && st == CMRSCL_OK)
        *rows_strict = strict;
    free(v);
    return st;
}

cmrscl_status cmrs_csr_validate_structure(int32_t rows, int32_t cols, const int64_t *row_ptr,
                                          const int32_t *col_ind, bool *rows_sorted)
{
    return validate_structure(rows, cols, row_ptr, col_ind, rows_sorted, NULL);
}

cmrscl_status cmrscl_csr_validate(const cmrscl_csr *csr) { return cmrs_csr_validate(csr, NULL); }

cmrscl_status cmrs_csr_validate(const cmrscl_csr *csr, bool *rows_sorted)
{
    return cmrs_csr_validate_canonical(csr, rows_sorted, NULL);
}

cmrscl_status cmrs_csr_validate_canonical(const cmrscl_csr *csr, bool *rows_sorted, bool *canonical)
{
    if (!csr)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "csr is NULL");
    cmrscl_status st = validate_structure(csr->rows, csr->cols, csr->row_ptr, csr->col_ind,
                                          rows_sorted, canonical);
    if (st != CMRSCL_OK)
        return st;
    if (csr->row_ptr[csr->rows] != csr->nnz)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "row_ptr[rows] = %lld but nnz = %lld",
                           (long long)csr->row_ptr[csr->rows], (long long)csr->nnz);
    if (csr->nnz > 0 && !csr->values)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "values is NULL but nnz = %lld",
                           (long long)csr->nnz);
    return CMRSCL_OK;
}

void cmrscl_csr_free(cmrscl_csr *csr)
{
    if (!csr)
        return;
    free(csr->row_ptr);
    free(csr->col_ind);
    free(csr->values);
    memset(csr, 0, sizeof *csr);
}

/* ---- the transpose ---- */

/* A counting sort by column on the host's threads, each entry of a column placed in A's row
 * order - the serial sort's result whatever the threads. Two ways to share it out:
 *   - by A's rows (the usual; each thread an equal share of the entries): thread t counts
 *     the columns of its rows in a histogram of its own, the histograms' running sums give
 *     each thread its slot in every column, and each thread places its rows' entries there:
 *     A read twice in all. The histograms take threads x columns words of 8 bytes for the
 *     while, so as many threads as keep them within TRANSPOSE_HISTOGRAM words an entry: at
 *     most 16 bytes an entry beside the transpose's own 12 (docs/dev/PERFORMANCE.md,
 *     TRANSPOSE_HISTOGRAM);
 *   - by columns, where even two histograms would not fit (a wide matrix of few entries):
 *     thread t owns a range of A's columns and walks all of A twice, counting then placing
 *     its own - every thread streams all of A, a read that grows with the threads. */
#define TRANSPOSE_HISTOGRAM 2
typedef struct transpose_job {
    const cmrscl_csr *a;
    cmrscl_csr *t;
    int64_t **count; /* by rows: each thread's histogram, then its next slot in each column */
    int threads;
    int pass; /* by rows: 0 count, 1 running sums, 2 place; by columns: 0 count, 2 place */
} transpose_job;

static void transpose_by_rows(void *ctx, int thread, int threads)
{
    const transpose_job *j = ctx;
    const cmrscl_csr *a = j->a;
    cmrscl_csr *t = j->t;
    int64_t lo, hi;
    if (j->pass == 1) { /* a range of columns: the threads' counts into running sums */
        cmrs_parallel_range(t->rows, thread, threads, &lo, &hi);
        for (int64_t c = lo; c < hi; ++c) {
            int64_t sum = 0;
            for (int u = 0; u < j->threads; ++u) {
                int64_t n = j->count[u][c];
                j->count[u][c] = sum, sum += n;
            }
            t->row_ptr[c + 1] = sum;
        }
        return;
    }
    int64_t *count = j->count[thread];
    entry_share(a->row_ptr, a->rows, thread, threads, &lo, &hi);
    if (j->pass == 0) {
        for (int64_t k = a->row_ptr[lo]; k < a->row_ptr[hi]; ++k)
            ++count[a->col_ind[k]];
        return;
    }
    for (int64_t i = lo; i < hi; ++i)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
            int32_t c = a->col_ind[k];
            int64_t slot = t->row_ptr[c] + count[c]++;
            t->col_ind[slot] = (int32_t)i;
            t->values[slot] = a->values[k];
        }
}

static void transpose_by_columns(void *ctx, int thread, int threads)
{
    const transpose_job *j = ctx;
    const cmrscl_csr *a = j->a;
    cmrscl_csr *t = j->t;
    int64_t lo, hi;
    cmrs_parallel_range(t->rows, thread, threads, &lo, &hi);
    if (j->pass == 0) {
        for (int64_t k = 0; k < a->nnz; ++k)
            if (a->col_ind[k] >= lo && a->col_ind[k] < hi)
                ++t->row_ptr[a->col_ind[k] + 1];
        return;
    }
    int64_t *next = t->row_ptr; /* row c's next slot, shifted back afterwards */
    for (int32_t i = 0; i < a->rows; ++i)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            if (a->col_ind[k] >= lo && a->col_ind[k] < hi) {
                int64_t slot = next[a->col_ind[k]]++;
                t->col_ind[slot] = i;
                t->values[slot] = a->values[k];
            }
}

/* By rows on `threads` threads' histograms; false (nothing done) when they cannot be had. */
static bool transpose_rows(const cmrscl_csr *a, cmrscl_csr *t, int threads)
{
    int64_t **count = calloc((size_t)threads, sizeof *count);
    bool ok = count != NULL;
    for (int u = 0; ok && u < threads; ++u)
        ok = (count[u] = calloc((size_t)t->rows + 1, sizeof(int64_t))) != NULL;
    if (ok) {
        transpose_job job = {a, t, count, threads, 0};
        cmrs_parallel_run(threads, transpose_by_rows, &job);
        job.pass = 1;
        cmrs_parallel_run(threads, transpose_by_rows, &job);
        for (int32_t c = 0; c < t->rows; ++c)
            t->row_ptr[c + 1] += t->row_ptr[c];
        job.pass = 2;
        cmrs_parallel_run(threads, transpose_by_rows, &job);
    }
    for (int u = 0; count && u < threads; ++u)
        free(count[u]);
    free(count);
    return ok;
}

cmrscl_status cmrscl_csr_transpose(const cmrscl_csr *a, cmrscl_csr *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    cmrscl_status st = cmrscl_csr_validate(a);
    if (st != CMRSCL_OK)
        return st;
    cmrscl_csr t = {.rows = a->cols, .cols = a->rows, .nnz = a->nnz};
    size_t nnz = (size_t)a->nnz;
    t.row_ptr = calloc((size_t)t.rows + 1, sizeof *t.row_ptr);
    t.col_ind = cmrscl_alloc(nnz, sizeof *t.col_ind);
    t.values = cmrscl_alloc(nnz, sizeof *t.values);
    if (!t.row_ptr || !t.col_ind || !t.values) {
        cmrscl_csr_free(&t);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                           "no memory for the transpose of %lld entries", (long long)a->nnz);
    }
    int threads = threads_for(a->nnz);
    int64_t fit = TRANSPOSE_HISTOGRAM * a->nnz / ((int64_t)t.rows + 1);
    int by_rows = fit < threads ? (int)fit : threads;
    if (by_rows < 2 || !transpose_rows(a, &t, by_rows)) { /* one thread: by_rows is 1 */
        transpose_job job = {a, &t, NULL, threads, 0};
        cmrs_parallel_run(threads, transpose_by_columns, &job);
        for (int32_t c = 0; c < t.rows; ++c)
            t.row_ptr[c + 1] += t.row_ptr[c];
        job.pass = 2;
        cmrs_parallel_run(threads, transpose_by_columns, &job);
        for (int32_t c = t.rows; c > 0; --c)
            t.row_ptr[c] = t.row_ptr[c - 1];
        t.row_ptr[0] = 0;
    }
    *out = t;
    return CMRSCL_OK;
}

/* ---- the reference product ---- */

/* One row of alpha*A*x + beta*y0 in double, the ground truth, and the magnitude term of its
 * rounding bound (used by the check). y0 is read only when beta != 0. The row is summed with
 * its rounding carried (each product's error by fma, each sum's by Knuth's two-sum, added in
 * at the end: Ogita, Rump and Oishi's Dot2): as exact as twice the precision would give,
 * so the truth does not round like what it checks - a residual b - A x that cancels down to
 * a millionth of |A| |x| keeps its digits (cmrscl-run solve's check). */
static double row_reference(const cmrscl_csr *a, int64_t i, double alpha, const double *x,
                            double beta, const double *y0, double *magnitude)
{
    double sum = 0.0, carry = 0.0, mag = 0.0; /* A x = sum + carry */
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
        double v = x[a->col_ind[k]], p = a->values[k] * v;
        double next = sum + p, z = next - sum;
        carry += fma(a->values[k], v, -p) + ((sum - (next - z)) + (p - z));
        sum = next, mag += fabs(p);
    }
    *magnitude = fabs(alpha) * mag + (beta != 0.0 ? fabs(beta * y0[i]) : 0.0);
    /* alpha (sum + carry) + beta y0, the two products' and their sum's roundings carried */
    double p = alpha * sum, q = beta != 0.0 ? beta * y0[i] : 0.0;
    double next = p + q, z = next - p;
    double rest = fma(alpha, sum, -p) + alpha * carry + ((p - (next - z)) + (q - z));
    if (beta != 0.0)
        rest += fma(beta, y0[i], -q);
    /* beyond the range the carried rounding is Inf - Inf: the plain sum's Inf or NaN stands */
    return isfinite(next) ? next + rest : next;
}

typedef struct reference {
    const cmrscl_csr *a;
    double alpha, beta, unit_roundoff;
    const double *x, *y0, *y;
    double *out; /* the product's y */
    /* The check, per block of CHECK_BLOCK rows: sum of squared differences, of squared
     * reference values, and the worst bound ratio; summed in block order afterwards. */
    double (*block)[3];
    int64_t blocks;
} reference;

static void product_rows(void *ctx, int t, int threads)
{
    const reference *r = ctx;
    int64_t i0, i1;
    entry_share(r->a->row_ptr, r->a->rows, t, threads, &i0, &i1);
    for (int64_t i = i0; i < i1; ++i) {
        double magnitude;
        r->out[i] = row_reference(r->a, i, r->alpha, r->x, r->beta, r->out, &magnitude);
    }
}

/* y is written by the threads, through reference.out (which clang-tidy does not follow). */
cmrscl_status cmrscl_csr_spmv(const cmrscl_csr *csr, double alpha, const double *x, double beta,
                              double *y) // NOLINT(readability-non-const-parameter)
{
    cmrscl_status st = cmrscl_csr_validate(csr);
    if (st != CMRSCL_OK)
        return st;
    if ((csr->cols > 0 && !x) || (csr->rows > 0 && !y))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "x or y is NULL");
    reference r = {.a = csr, .alpha = alpha, .beta = beta, .x = x, .out = y};
    cmrs_parallel_run(threads_for(csr->nnz), product_rows, &r);
    return CMRSCL_OK;
}

/* Rows per block of the check: the blocks, not the threads, fix the order of its sums. */
#define CHECK_BLOCK 4096

static void check_blocks(void *ctx, int t, int threads)
{
    const reference *r = ctx;
    const cmrscl_csr *a = r->a;
    int64_t b0, b1;
    cmrs_parallel_range(r->blocks, t, threads, &b0, &b1);
    for (int64_t b = b0; b < b1; ++b) {
        double diff2 = 0.0, ref2 = 0.0, worst = 0.0;
        int64_t end = (b + 1) * CHECK_BLOCK < a->rows ? (b + 1) * CHECK_BLOCK : a->rows;
        for (int64_t i = b * CHECK_BLOCK; i < end; ++i) {
            double mag, yi = r->y[i];
            double ref = row_reference(a, i, r->alpha, r->x, r->beta, r->y0, &mag);
            if (!isfinite(ref) != !isfinite(yi) || (!isfinite(ref) && !(ref == yi))) {
                if (!(isnan(ref) && isnan(yi))) /* NaN matches NaN; inf must match exactly */
                    worst = INFINITY;
                continue;
            }
            if (!isfinite(ref))
                continue;
            double d = yi - ref;
            diff2 += d * d;
            ref2 += ref * ref;
            double len = (double)(a->row_ptr[i + 1] - a->row_ptr[i]);
            double ratio = fabs(d) / ((len + 10) * r->unit_roundoff * mag + DBL_MIN);
            if (ratio > worst)
                worst = ratio;
        }
        r->block[b][0] = diff2, r->block[b][1] = ref2, r->block[b][2] = worst;
    }
}

cmrscl_status cmrscl_csr_spmv_check(const cmrscl_csr *a, double alpha, const double *x, double beta,
                                    const double *y0, const double *y, double unit_roundoff,
                                    double *relative_error, double *bound_ratio)
{
    if (relative_error)
        *relative_error = INFINITY;
    if (bound_ratio) /* a failed check must never read as a pass */
        *bound_ratio = INFINITY;
    cmrscl_status st = cmrscl_csr_validate(a);
    if (st != CMRSCL_OK)
        return st;
    if ((a->cols > 0 && !x) || (a->rows > 0 && (!y || (beta != 0.0 && !y0))))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "x, y or y0 is NULL");
    reference r = {a, alpha, beta, unit_roundoff, x, y0, y, NULL, NULL, 0};
    r.blocks = ((int64_t)a->rows + CHECK_BLOCK - 1) / CHECK_BLOCK;
    if (!(r.block = cmrscl_alloc((size_t)r.blocks, sizeof *r.block)))
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to check %d rows", a->rows);
    cmrs_parallel_run(threads_for(a->nnz), check_blocks, &r);
    double diff2 = 0.0, ref2 = 0.0, worst = 0.0;
    for (int64_t b = 0; b < r.blocks; ++b) {
        diff2 += r.block[b][0], ref2 += r.block[b][1];
        worst = r.block[b][2] > worst ? r.block[b][2] : worst;
    }
    free(r.block);
    if (relative_error)
        *relative_error = ref2 > 0.0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    if (bound_ratio)
        *bound_ratio = worst;
    return CMRSCL_OK;
}

/* The longest row over a thread's rows (a maximum: the same whatever the threads). */
typedef struct longest_job {
    int32_t rows;
    const int64_t *row_ptr;
    int64_t longest[256]; /* per thread */
} longest_job;

static void longest_share(void *ctx, int t, int threads)
{
    longest_job *j = ctx;
    int64_t r0, r1, longest = 0;
    cmrs_parallel_range(j->rows, t, threads, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        int64_t length = j->row_ptr[r + 1] - j->row_ptr[r];
        longest = length > longest ? length : longest;
    }
    j->longest[t] = longest;
}

int64_t cmrs_csr_longest_row(int32_t rows, const int64_t *row_ptr)
{
    longest_job job = {.rows = rows, .row_ptr = row_ptr};
    int threads = threads_for(rows);
    cmrs_parallel_run(threads, longest_share, &job);
    int64_t longest = 0;
    for (int t = 0; t < threads; ++t)
        longest = job.longest[t] > longest ? job.longest[t] : longest;
    return longest;
}
