/* coo_to_csr.c - COO entries -> canonical CSR (rows in order, ascending columns,
 * duplicates summed in input order) on all host threads. The input comes in pieces (the
 * Matrix Market reader's threads each parse one piece of the file), in input order:
 *   1. count entries per row, one histogram per thread (its pieces);
 *   2. turn the histograms into each thread's first slot in every row (a scan);
 *   3. scatter: each thread places its entries in input order - a stable counting sort;
 *   4. per row: a stable sort by column (usually a check: files list rows' entries in
 *      order) and the sum of duplicates in input order;
 *   5. close the gaps duplicates left (rare; serial).
 * Every step's result is fixed by the input alone, so the CSR is bit for bit the same for
 * any thread count, and the same as two stable counting sorts would give. */
#include "io/io.h"

#include <stdlib.h>
#include <string.h>

/* Rows this short are insertion-sorted; longer ones merge runs of this length. */
#define SHORT_ROW 32

typedef struct build {
    int32_t rows;
    const coo_piece *pieces;
    int npieces, count_threads; /* threads with a histogram: each takes a run of pieces */
    int64_t *counts;            /* count_threads x rows: counts, then first slots */
    int64_t *range_sum;         /* per thread: entries of its rows (step 2) */
    int64_t *row_ptr;
    int32_t *col_ind;
    double *val;
    int32_t *row_len;   /* step 4: entries left in each row after merging duplicates (at
                           most cols, however many duplicates it had) */
    int64_t *merged;    /* per thread: duplicates merged in its rows */
    bool out_of_memory; /* a thread could not get sort scratch */
} build;

static void piece_range(const build *b, int thread, int *first, int *last)
{
    *first = (int)((int64_t)b->npieces * thread / b->count_threads);
    *last = (int)((int64_t)b->npieces * (thread + 1) / b->count_threads);
}

static void count_rows(void *ctx, int thread, int threads)
{
    build *b = ctx;
    if (thread >= b->count_threads)
        return;
    int64_t *count = b->counts + (size_t)thread * (size_t)b->rows;
    int first, last;
    piece_range(b, thread, &first, &last);
    for (int p = first; p < last; ++p)
        for (int64_t k = 0; k < b->pieces[p].count; ++k)
            count[b->pieces[p].row[k]]++;
}

/* Step 2 in two passes over row ranges: totals per range, then (after the ranges'
 * offsets are known) row_ptr and each histogram thread's first slot per row. */
static void sum_rows(void *ctx, int thread, int threads)
{
    build *b = ctx;
    int64_t r0, r1, sum = 0;
    cmrs_parallel_range(b->rows, thread, threads, &r0, &r1);
    for (int t = 0; t < b->count_threads; ++t) {
        const int64_t *count = b->counts + (size_t)t * (size_t)b->rows;
        for (int64_t r = r0; r < r1; ++r)
            sum += count[r];
    }
    b->range_sum[thread] = sum;
}

static void first_slots(void *ctx, int thread, int threads)
{
    build *b = ctx;
    int64_t r0, r1, at = b->range_sum[thread];
    cmrs_parallel_range(b->rows, thread, threads, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        b->row_ptr[r] = at;
        for (int t = 0; t < b->count_threads; ++t) {
            int64_t *slot = b->counts + (size_t)t * (size_t)b->rows + r;
            int64_t n = *slot;
            *slot = at;
            at += n;
        }
    }
}

static void scatter(void *ctx, int thread, int threads)
{
    build *b = ctx;
    if (thread >= b->count_threads)
        return;
    int64_t *slot = b->counts + (size_t)thread * (size_t)b->rows;
    int first, last;
    piece_range(b, thread, &first, &last);
    for (int p = first; p < last; ++p) {
        const coo_piece *c = &b->pieces[p];
        for (int64_t k = 0; k < c->count; ++k) {
            int64_t at = slot[c->row[k]]++;
            b->col_ind[at] = c->col[k];
            b->val[at] = c->val ? c->val[k] : 1.0; /* pattern files: ones */
        }
    }
}

/* Row lengths are 64-bit before duplicates are merged: a row may repeat its entries more
 * than INT32_MAX times. */
static void insertion_sort(int32_t *col, double *val, int64_t n)
{
    for (int64_t i = 1; i < n; ++i) {
        int32_t c = col[i];
        int64_t j = i;
        double v = val[i];
        for (; j > 0 && col[j - 1] > c; --j) /* '>' keeps equal columns in input order */
            col[j] = col[j - 1], val[j] = val[j - 1];
        col[j] = c, val[j] = v;
    }
}

/* Stable merge of [lo, mid) and [mid, hi) of (c, v) into (dc, dv). */
static void merge(const int32_t *c, const double *v, int64_t lo, int64_t mid, int64_t hi,
                  int32_t *dc, double *dv)
{
    int64_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi) {
        bool right = c[j] < c[i]; /* ties from the left run: stable */
        dc[k] = right ? c[j] : c[i];
        dv[k++] = right ? v[j++] : v[i++];
    }
    for (; i < mid; ++i, ++k)
        dc[k] = c[i], dv[k] = v[i];
    for (; j < hi; ++j, ++k)
        dc[k] = c[j], dv[k] = v[j];
}

/* Stable sort of one row by column; scratch holds n columns and n values. */
static void sort_row(int32_t *col, double *val, int64_t n, int32_t *scol, double *sval)
{
    int64_t i = 1;
    while (i < n && col[i - 1] <= col[i])
        ++i;
    if (i >= n)
        return; /* already in order: the common case */
    for (int64_t lo = 0; lo < n; lo += SHORT_ROW)
        insertion_sort(col + lo, val + lo, n - lo < SHORT_ROW ? n - lo : SHORT_ROW);
    int32_t *c = col, *dc = scol;
    double *v = val, *dv = sval;
    for (int64_t width = SHORT_ROW; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = mid + width < n ? mid + width : n;
            merge(c, v, lo, mid, hi, dc, dv);
        }
        int32_t *tc = c;
        double *tv = v;
        c = dc, v = dv, dc = tc, dv = tv;
    }
    if (c != col) {
        memcpy(col, c, sizeof *col * (size_t)n);
        memcpy(val, v, sizeof *val * (size_t)n);
    }
}

/* Step 4 over rows holding an equal share of the entries (the last thread also takes the
 * empty rows at the end). */
static void sort_and_merge(void *ctx, int thread, int threads)
{
    build *b = ctx;
    int64_t e0, e1;
    cmrs_parallel_range(b->row_ptr[b->rows], thread, threads, &e0, &e1);
    int64_t lo = cmrs_csr_row_at(b->row_ptr, b->rows, e0);
    int64_t hi = thread == threads - 1 ? b->rows : cmrs_csr_row_at(b->row_ptr, b->rows, e1);
    int32_t *scol = NULL;
    double *sval = NULL;
    int64_t cap = 0, merged = 0;
    for (int64_t r = lo; r < hi; ++r) {
        int64_t begin = b->row_ptr[r], n = b->row_ptr[r + 1] - begin;
        int32_t *col = b->col_ind + begin;
        double *val = b->val + begin;
        if (n > SHORT_ROW && n > cap) {
            free(scol), free(sval);
            cap = n;
            scol = cmrscl_alloc((size_t)cap, sizeof *scol);
            sval = cmrscl_alloc((size_t)cap, sizeof *sval);
            if (!scol || !sval) {
                b->out_of_memory = true;
                break;
            }
        }
        if (n > SHORT_ROW)
            sort_row(col, val, n, scol, sval);
        else
            insertion_sort(col, val, n);
        int64_t w = 0;
        for (int64_t k = 0; k < n; ++k) {
            if (w > 0 && col[w - 1] == col[k]) {
                val[w - 1] += val[k];
            } else {
                col[w] = col[k];
                val[w++] = val[k];
            }
        }
        b->row_len[r] = (int32_t)w; /* distinct columns: w <= cols */
        merged += n - w;
    }
    free(scol), free(sval);
    b->merged[thread] = merged;
}

/* Step 5: rows move down over the gaps, in order (each lands at or before its place). */
static void close_gaps(build *b)
{
    int64_t w = 0;
    for (int32_t r = 0; r < b->rows; ++r) {
        int64_t begin = b->row_ptr[r], n = b->row_len[r];
        memmove(b->col_ind + w, b->col_ind + begin, sizeof(int32_t) * (size_t)n);
        memmove(b->val + w, b->val + begin, sizeof(double) * (size_t)n);
        b->row_ptr[r] = w;
        w += n;
    }
    b->row_ptr[b->rows] = w;
}

cmrscl_status cmrs_csr_from_coo_pieces(int32_t rows, int32_t cols, const coo_piece *pieces,
                                       int npieces, int threads, cmrscl_csr *out)
{
    memset(out, 0, sizeof *out);
    int64_t n = 0;
    for (int p = 0; p < npieces; ++p)
        n += pieces[p].count;
    if (threads < 1)
        threads = 1;
    /* One histogram per thread costs 8 bytes a row each: no more of them than keeps that
     * within the size of the entries themselves (many rows, few entries: fewer threads). */
    int64_t fit = (16 * n + (1 << 20)) / (8 * ((int64_t)rows + 1));
    int count_threads = (int)(fit < 1 ? 1 : fit < threads ? fit : threads);
    if (count_threads > npieces)
        count_threads = npieces > 0 ? npieces : 1;
    build b = {.rows = rows, .pieces = pieces, .npieces = npieces, .count_threads = count_threads};
    b.counts = calloc((size_t)count_threads * ((size_t)rows + 1), sizeof(int64_t));
    b.range_sum = cmrscl_alloc((size_t)threads, sizeof(int64_t));
    b.merged = calloc((size_t)threads, sizeof(int64_t));
    b.row_ptr = cmrscl_alloc((size_t)rows + 1, sizeof(int64_t));
    b.row_len = cmrscl_alloc((size_t)rows + 1, sizeof(int32_t));
    /* Huge pages for the big arrays: the scatter faults them in on all threads. */
    b.col_ind = cmrs_parallel_alloc((size_t)n, sizeof(int32_t));
    b.val = cmrs_parallel_alloc((size_t)n, sizeof(double));
    cmrscl_status st = CMRSCL_OK;
    if (!b.counts || !b.range_sum || !b.merged || !b.row_ptr || !b.row_len || !b.col_ind || !b.val)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to sort %lld entries",
                         (long long)n);
    if (st == CMRSCL_OK) {
        cmrs_parallel_run(count_threads, count_rows, &b);
        cmrs_parallel_run(threads, sum_rows, &b);
        for (int64_t t = 0, at = 0; t < threads; ++t) { /* range totals -> range offsets */
            int64_t s = b.range_sum[t];
            b.range_sum[t] = at;
            at += s;
        }
        b.row_ptr[rows] = n;
        cmrs_parallel_run(threads, first_slots, &b);
        cmrs_parallel_run(count_threads, scatter, &b);
        cmrs_parallel_run(threads, sort_and_merge, &b);
        if (b.out_of_memory)
            st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to sort a row");
    }
    int64_t merged = 0;
    for (int t = 0; st == CMRSCL_OK && t < threads; ++t)
        merged += b.merged[t];
    if (st == CMRSCL_OK && merged)
        close_gaps(&b);
    free(b.counts), free(b.range_sum), free(b.merged), free(b.row_len);
    if (st != CMRSCL_OK) {
        free(b.row_ptr), free(b.col_ind), free(b.val);
        return st;
    }
    *out = (cmrscl_csr){rows, cols, n - merged, b.row_ptr, b.col_ind, b.val};
    return CMRSCL_OK;
}

/* The first entry outside the matrix, in input order, or -1: each thread finds the first
 * in its range, the lowest wins. */
typedef struct bounds_check {
    int32_t rows, cols;
    const int32_t *row, *col;
    int64_t n, *first_bad;
} bounds_check;

static void check_bounds(void *ctx, int thread, int threads)
{
    const bounds_check *c = ctx;
    int64_t k0, k1;
    cmrs_parallel_range(c->n, thread, threads, &k0, &k1);
    c->first_bad[thread] = -1;
    for (int64_t k = k0; k < k1; ++k)
        if ((uint32_t)c->row[k] >= (uint32_t)c->rows || (uint32_t)c->col[k] >= (uint32_t)c->cols) {
            c->first_bad[thread] = k;
            return;
        }
}

cmrscl_status cmrscl_csr_from_coo(int32_t rows, int32_t cols, int64_t nnz, const int32_t *row_idx,
                                  const int32_t *col_idx, const double *values, cmrscl_csr *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    if (rows < 0 || cols < 0 || nnz < 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "negative size %d x %d, nnz %lld", rows,
                           cols, (long long)nnz);
    if (nnz > 0 && (!row_idx || !col_idx))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "row or column index array is NULL");
    int threads = nnz < (1 << 16) ? 1 : cmrs_parallel_threads();
    int64_t first_bad[256];
    bounds_check check = {rows, cols, row_idx, col_idx, nnz, first_bad};
    cmrs_parallel_run(threads, check_bounds, &check);
    for (int t = 0; t < threads; ++t)
        if (first_bad[t] >= 0) {
            int64_t k = first_bad[t];
            return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                               "entry %lld at (%d, %d) is outside the %d x %d matrix", (long long)k,
                               row_idx[k], col_idx[k], rows, cols);
        }
    /* One piece per thread: the same entries in the same order, cut in equal runs. */
    coo_piece pieces[256];
    for (int t = 0; t < threads; ++t) {
        int64_t k0, k1;
        cmrs_parallel_range(nnz, t, threads, &k0, &k1);
        if (k1 > k0) /* the arrays may be NULL when there are no entries */
            pieces[t] =
                (coo_piece){row_idx + k0, col_idx + k0, values ? values + k0 : NULL, k1 - k0};
        else
            pieces[t] = (coo_piece){NULL, NULL, NULL, 0};
    }
    return cmrs_csr_from_coo_pieces(rows, cols, pieces, threads, threads, out);
}

cmrscl_status cmrs_csr_canonical_copy(const cmrscl_csr *a, cmrscl_csr *out)
{
    *out = (cmrscl_csr){0};
    int32_t *row_idx = cmrscl_alloc((size_t)a->nnz + 1, sizeof(int32_t));
    if (!row_idx)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "a canonical copy of %lld entries",
                           (long long)a->nnz);
    for (int32_t i = 0; i < a->rows; ++i)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            row_idx[k] = i;
    cmrscl_status st =
        cmrscl_csr_from_coo(a->rows, a->cols, a->nnz, row_idx, a->col_ind, a->values, out);
    free(row_idx);
    return st;
}
