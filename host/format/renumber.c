/* renumber.c - P A P^T of a square CSR matrix with P the hub sort (cmrscl_renumber HUBS): the
 * rows longer than the mean first, by descending length, then every other row in its order.
 * Built here: the order, the renumbered CSR with each row's columns ascending again, and where
 * each entry went (for values updates in the caller's order). Deterministic: ties keep their
 * order, equal columns their entry order. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

/* A row's entries sorted by their new column (then by entry: duplicates keep their order). */
typedef struct renumber_entry {
    int32_t col;
    int64_t entry;
} renumber_entry;

static int compare_entries(const void *a, const void *b)
{
    const renumber_entry *x = a, *y = b;
    if (x->col != y->col)
        return (x->col > y->col) - (x->col < y->col);
    return (x->entry > y->entry) - (x->entry < y->entry);
}

static void sort_entries(renumber_entry *e, int64_t n)
{
    if (n > 24) {
        qsort(e, (size_t)n, sizeof *e, compare_entries);
        return;
    }
    for (int64_t i = 1; i < n; ++i) /* short rows: insertion sort, no calls */
        for (int64_t j = i; j > 0 && compare_entries(&e[j - 1], &e[j]) > 0; --j) {
            renumber_entry t = e[j];
            e[j] = e[j - 1], e[j - 1] = t;
        }
}

typedef struct renumber_job {
    const int64_t *row_ptr;
    const int32_t *col_ind;
    const char *values;
    size_t value_size;
    const int32_t *order, *inverse;
    cmrs_renumbered *out;
    int64_t pieces;
} renumber_job;

/* The first new row of piece p of `pieces`: the first row whose entries start at or after
 * p / pieces of all (the last piece ends at the rows' end). */
static int64_t first_row_of(const cmrs_renumbered *o, int64_t p, int64_t pieces)
{
    if (p >= pieces)
        return o->rows;
    int64_t target = (int64_t)((double)o->nnz * (double)p / (double)pieces), lo = 0, hi = o->rows;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (o->row_ptr[mid] < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Piece `piece` of the new rows, each from its old row: the pieces hold about equal entries
 * (the longest rows come first, so equal counts of rows would leave one thread most of the
 * work). */
static void renumber_rows(void *ctx, int64_t piece)
{
    const renumber_job *j = ctx;
    cmrs_renumbered *o = j->out;
    int64_t begin = first_row_of(o, piece, j->pieces), end = first_row_of(o, piece + 1, j->pieces);
    int64_t longest = 0;
    for (int64_t r = begin; r < end; ++r)
        longest = o->row_ptr[r + 1] - o->row_ptr[r] > longest ? o->row_ptr[r + 1] - o->row_ptr[r]
                                                              : longest;
    renumber_entry *e = malloc((size_t)(longest ? longest : 1) * sizeof *e);
    if (!e) {
        o->failed = true;
        return;
    }
    for (int64_t r = begin; r < end; ++r) {
        int32_t old = j->order[r];
        int64_t first = j->row_ptr[old], n = j->row_ptr[old + 1] - first, at = o->row_ptr[r];
        for (int64_t k = 0; k < n; ++k)
            e[k] = (renumber_entry){j->inverse[j->col_ind[first + k]], first + k};
        sort_entries(e, n);
        for (int64_t k = 0; k < n; ++k) {
            o->col_ind[at + k] = e[k].col;
            o->entry[e[k].entry] = at + k;
            if (j->values)
                memcpy((char *)o->values + (size_t)(at + k) * j->value_size,
                       j->values + (size_t)e[k].entry * j->value_size, j->value_size);
        }
    }
    free(e);
}

void cmrs_renumbered_free(cmrs_renumbered *r)
{
    free(r->row_ptr), free(r->col_ind), free(r->values), free(r->order), free(r->entry);
    memset(r, 0, sizeof *r);
}

/* A row's bucket in the counting sort: the longest rows first, and every row not above the
 * mean in one last bucket, in order - the rest of the matrix keeps the locality it has. */
static int64_t bucket(int64_t length, int64_t longest, double mean)
{
    return (double)length <= mean ? longest + 1 : longest - length;
}

cmrscl_status cmrs_renumber_hubs(int32_t rows, const int64_t *row_ptr, const int32_t *col_ind,
                                 const void *values, size_t value_size, cmrs_renumbered *out)
{
    memset(out, 0, sizeof *out);
    int64_t nnz = row_ptr[rows], longest = 0;
    for (int32_t r = 0; r < rows; ++r)
        longest = row_ptr[r + 1] - row_ptr[r] > longest ? row_ptr[r + 1] - row_ptr[r] : longest;
    out->rows = rows, out->nnz = nnz;
    out->row_ptr = cmrscl_alloc((size_t)rows + 1, sizeof *out->row_ptr);
    out->col_ind = cmrs_parallel_alloc((size_t)nnz + 1, sizeof *out->col_ind);
    out->values = values ? cmrs_parallel_alloc((size_t)nnz + 1, value_size) : NULL;
    out->order = cmrscl_alloc((size_t)rows + 1, sizeof *out->order);
    out->entry = cmrs_parallel_alloc((size_t)nnz + 1, sizeof *out->entry);
    int32_t *inverse = cmrscl_alloc((size_t)rows + 1, sizeof *inverse);
    int64_t *start = calloc((size_t)longest + 3, sizeof *start);
    if (!out->row_ptr || !out->col_ind || (values && !out->values) || !out->order || !out->entry ||
        !inverse || !start) {
        free(inverse), free(start);
        cmrs_renumbered_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                           "no memory to renumber a matrix of %d rows and %lld entries", rows,
                           (long long)nnz);
    }
    /* a counting sort by bucket: a hub of length L starts after every longer one */
    double mean = rows ? (double)nnz / rows : 0;
    for (int32_t r = 0; r < rows; ++r)
        ++start[bucket(row_ptr[r + 1] - row_ptr[r], longest, mean) + 1];
    for (int64_t l = 1; l <= longest + 2; ++l)
        start[l] += start[l - 1];
    for (int32_t r = 0; r < rows; ++r) {
        int32_t at = (int32_t)start[bucket(row_ptr[r + 1] - row_ptr[r], longest, mean)]++;
        out->order[at] = r;
        inverse[r] = at;
    }
    out->row_ptr[0] = 0;
    for (int32_t r = 0; r < rows; ++r)
        out->row_ptr[r + 1] = out->row_ptr[r] + row_ptr[out->order[r] + 1] - row_ptr[out->order[r]];
    free(start);
    int threads = format_threads(nnz);
    renumber_job job = {row_ptr,    col_ind, values, value_size,
                        out->order, inverse, out,    threads == 1 ? 1 : 16 * (int64_t)threads};
    cmrs_parallel_pieces(threads, job.pieces, renumber_rows, &job);
    free(inverse);
    if (out->failed) {
        cmrs_renumbered_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to sort a renumbered row");
    }
    return CMRSCL_OK;
}

typedef struct move_job {
    const int64_t *entry;
    int64_t nnz;
    const char *values;
    size_t value_size;
    char *out;
} move_job;

/* A thread's share of the caller's entries, each to its place (the places are a permutation:
 * no two threads write one). */
static void move_share(void *ctx, int thread, int threads)
{
    const move_job *j = ctx;
    int64_t begin, end;
    cmrs_parallel_range(j->nnz, thread, threads, &begin, &end);
    if (j->value_size == sizeof(double))
        for (int64_t k = begin; k < end; ++k)
            ((double *)j->out)[j->entry[k]] = ((const double *)j->values)[k];
    else
        for (int64_t k = begin; k < end; ++k)
            ((float *)j->out)[j->entry[k]] = ((const float *)j->values)[k];
}

void cmrs_renumber_move_values(const int64_t *entry, int64_t nnz, const void *values,
                               size_t value_size, void *out)
{
    move_job job = {entry, nnz, values, value_size, out};
    cmrs_parallel_run(format_threads(nnz), move_share, &job);
}
