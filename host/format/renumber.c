/* renumber.c - P A P^T of a square CSR matrix with P the hub sort (cmrscl_renumber HUBS): the
 * rows longer than the mean first, by descending length, then every other row in its order.
 * Built here: the order, the renumbered CSR with each row's columns ascending again, and where
 * each entry went (for values updates in the caller's order). Deterministic: ties keep their
 * order, equal columns their entry order. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

/* A row's entries are sorted by their new column (cmrs_sort_entries); they are gathered in
 * entry order and the sort is stable, so duplicates keep it. */
void cmrs_sort_entries(cmrs_entry *e, cmrs_entry *tmp, int64_t n)
{
    enum { RUN = 16 };
    for (int64_t lo = 0; lo < n; lo += RUN) {
        int64_t hi = lo + RUN < n ? lo + RUN : n;
        for (int64_t i = lo + 1; i < hi; ++i) {
            cmrs_entry t = e[i];
            int64_t j = i;
            for (; j > lo && e[j - 1].col > t.col; --j)
                e[j] = e[j - 1];
            e[j] = t;
        }
    }
    cmrs_entry *from = e, *to = tmp;
    for (int64_t width = RUN; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n,
                    hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                to[k++] = from[b].col < from[a].col ? from[b++] : from[a++];
            while (a < mid)
                to[k++] = from[a++];
            while (b < hi)
                to[k++] = from[b++];
        }
        cmrs_entry *t = from;
        from = to, to = t;
    }
    if (from != e)
        memcpy(e, from, (size_t)n * sizeof *e);
}

typedef struct renumber_job {
    const int64_t *row_ptr;
    const int32_t *col_ind;
    const char *values;
    size_t value_size;
    const int32_t *order, *inverse;
    cmrs_renumbered *out;
    int64_t pieces;
    int32_t hubs; /* the rows numbered first: new numbers below this */
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

/* Entry `entry` of the old rows at new position `at`, in column col. */
static inline void place(const renumber_job *j, int64_t at, int32_t col, int64_t entry)
{
    cmrs_renumbered *o = j->out;
    o->col_ind[at] = col;
    o->entry[entry] = at;
    if (j->value_size == sizeof(double) && j->values)
        ((double *)o->values)[at] = ((const double *)j->values)[entry];
    else if (j->values)
        ((float *)o->values)[at] = ((const float *)j->values)[entry];
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
    cmrs_entry *e = malloc(2 * (size_t)(longest ? longest : 1) * sizeof *e), *tmp = e + longest;
    if (!e) {
        o->failed = true;
        return;
    }
    for (int64_t r = begin; r < end; ++r) {
        int32_t old = j->order[r];
        int64_t first = j->row_ptr[old], n = j->row_ptr[old + 1] - first, at = o->row_ptr[r];
        bool ascending = true;
        for (int64_t k = 1; k < n && ascending; ++k)
            ascending = j->col_ind[first + k] >= j->col_ind[first + k - 1];
        /* Sorted rows: the rows that stay keep their order, so a row's columns among them stay
         * ascending, and the hubs (numbered first) are all the row sorts; else the whole row. */
        int64_t sorted = 0;
        for (int64_t k = 0; k < n; ++k) {
            int32_t col = j->inverse[j->col_ind[first + k]];
            if (!ascending || col < j->hubs)
                e[sorted++] = (cmrs_entry){col, first + k};
        }
        cmrs_sort_entries(e, tmp, sorted);
        for (int64_t k = 0; k < sorted; ++k)
            place(j, at + k, e[k].col, e[k].entry);
        for (int64_t k = 0, to = at + sorted; ascending && k < n; ++k) {
            int32_t col = j->inverse[j->col_ind[first + k]];
            if (col >= j->hubs)
                place(j, to++, col, first + k);
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

cmrscl_status cmrs_renumber_hubs(int32_t rows, int32_t cols, const int64_t *row_ptr,
                                 const int32_t *col_ind, const void *values, size_t value_size,
                                 cmrs_renumbered *out)
{
    memset(out, 0, sizeof *out);
    if (rows != cols) /* P numbers rows and columns alike */
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "renumbering (cmrscl_options.renumber) needs a square matrix: this one "
                           "is %d x %d",
                           rows, cols);
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
    int32_t hubs = 0;
    while (hubs < rows &&
           (double)(row_ptr[out->order[hubs] + 1] - row_ptr[out->order[hubs]]) > mean)
        ++hubs;
    renumber_job job = {row_ptr,    col_ind, values, value_size,
                        out->order, inverse, out,    threads == 1 ? 1 : 16 * (int64_t)threads,
                        hubs};
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
