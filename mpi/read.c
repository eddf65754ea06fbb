/* read.c - distributed matrices from a Matrix Market file or a generator spec, without any
 * rank holding the whole matrix. A file: each rank parses one share of the entry lines, the
 * row lengths are summed into even blocks of rows (MPI_Reduce_scatter), the rows are cut by
 * entries (partition.c), and each coordinate goes to its row's owner (MPI_Alltoallv) in file
 * order, so duplicates are summed as the serial reader sums them. A spec: each rank builds an
 * even block of rows for the lengths, then its own rows. */
#include "dist_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Coordinates on their way to their rows' owners. */
typedef struct triplets {
    int32_t *row, *col;
    double *val;
    int64_t n;
} triplets;

static void triplets_free(triplets *t)
{
    free(t->row), free(t->col), free(t->val);
    memset(t, 0, sizeof *t);
}

static bool triplets_alloc(triplets *t, int64_t n)
{
    t->n = n;
    t->row = malloc(sizeof *t->row * ((size_t)n + 1));
    t->col = malloc(sizeof *t->col * ((size_t)n + 1));
    t->val = malloc(sizeof *t->val * ((size_t)n + 1));
    return t->row && t->col && t->val;
}

/* The entry lines of all shares against the size line's count (the same verdict on every
 * rank). */
static cmrscl_status check_count(MPI_Comm comm, const cmrscl_mtx_share *s, const char *path)
{
    int64_t lines = 0;
    int rc = MPI_Allreduce(&s->lines, &lines, 1, MPI_INT64_T, MPI_SUM, comm);
    if (rc != MPI_SUCCESS)
        return cmrs_dist_fail_mpi(rc, "MPI_Allreduce (entry lines)");
    if (lines != s->declared)
        return cmrs_dist_fail(CMRSCL_ERROR_PARSE,
                              "%s: %s file: %lld entry lines, but the size line declares %lld",
                              path, lines < s->declared ? "truncated" : "too long",
                              (long long)lines, (long long)s->declared);
    return CMRSCL_OK;
}

/* The row cuts from the share's row lengths, summed into even blocks of rows: one array of
 * `rows` ints per rank. */
static cmrscl_status cut_rows(MPI_Comm comm, const cmrscl_mtx_share *s, int64_t *first)
{
    int rank = 0, ranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    int64_t b0 = cmrs_dist_even_first(s->rows, rank, ranks);
    int64_t bn = cmrs_dist_even_first(s->rows, rank + 1, ranks) - b0;
    int32_t *len = calloc((size_t)s->rows + 1, sizeof *len);
    int32_t *block = malloc(sizeof *block * ((size_t)bn + 1));
    int *counts = malloc(sizeof *counts * (size_t)ranks);
    cmrscl_status st = len && block && counts
                           ? CMRSCL_OK
                           : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                            "no memory for the lengths of %d rows", s->rows);
    if ((st = cmrs_dist_agree(comm, st)) == CMRSCL_OK) {
        for (int64_t k = 0; k < s->count; ++k)
            len[s->row_idx[k]]++;
        for (int r = 0; r < ranks; ++r)
            counts[r] = (int)(cmrs_dist_even_first(s->rows, r + 1, ranks) -
                              cmrs_dist_even_first(s->rows, r, ranks));
        int rc = MPI_Reduce_scatter(len, block, counts, MPI_INT32_T, MPI_SUM, comm);
        st = rc == MPI_SUCCESS ? cmrs_dist_partition(comm, s->rows, b0, bn, block, first)
                               : cmrs_dist_fail_mpi(rc, "MPI_Reduce_scatter (row lengths)");
    }
    free(len), free(block), free(counts);
    return st;
}

/* The share's coordinates grouped by their rows' owners, each group in file order;
 * count[r] and at[r] say where group r is. */
static cmrscl_status group_by_owner(const cmrscl_mtx_share *s, const int64_t *first, int ranks,
                                    int *count, int *at, triplets *out)
{
    int64_t *n = calloc((size_t)ranks + 1, sizeof *n);
    if (!n || !triplets_alloc(out, s->count)) {
        free(n);
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld coordinates",
                              (long long)s->count);
    }
    int *owner = malloc(sizeof *owner * ((size_t)s->count + 1));
    for (int64_t k = 0; owner && k < s->count; ++k)
        n[owner[k] = cmrs_dist_owner(first, ranks, s->row_idx[k])]++;
    int64_t next = 0;
    for (int r = 0; owner && r < ranks; ++r) {
        if (n[r] > INT_MAX || next > INT_MAX)
            break;
        count[r] = (int)n[r], at[r] = (int)next;
        n[r] = next, next += count[r];
    }
    cmrscl_status st = !owner ? cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory")
                       : next != s->count
                           ? cmrs_dist_fail(CMRSCL_ERROR_TOO_LARGE,
                                            "more than %d coordinates for one rank", INT_MAX)
                           : CMRSCL_OK;
    for (int64_t k = 0; st == CMRSCL_OK && k < s->count; ++k) {
        int64_t to = n[owner[k]]++;
        out->row[to] = s->row_idx[k], out->col[to] = s->col_idx[k], out->val[to] = s->values[k];
    }
    free(owner), free(n);
    return st;
}

/* Every coordinate to its row's owner (received in rank order, so in file order), then this
 * rank's rows as canonical CSR. Collective, agreed. */
static cmrscl_status redistribute(MPI_Comm comm, const cmrscl_mtx_share *s, const int64_t *first,
                                  cmrscl_csr *out)
{
    int rank = 0, ranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    int *counts = calloc(4 * (size_t)ranks, sizeof *counts);
    int *send = counts, *send_at = counts + ranks, *recv = send_at + ranks, *recv_at = recv + ranks;
    triplets mine = {0}, got = {0};
    cmrscl_status st = counts ? group_by_owner(s, first, ranks, send, send_at, &mine)
                              : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory");
    int rc = MPI_SUCCESS;
    if ((st = cmrs_dist_agree(comm, st)) == CMRSCL_OK)
        rc = MPI_Alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, comm);
    int64_t total = 0;
    for (int r = 0; st == CMRSCL_OK && rc == MPI_SUCCESS && r < ranks; ++r)
        recv_at[r] = (int)total, total += recv[r];
    if (st == CMRSCL_OK && rc == MPI_SUCCESS)
        st = cmrs_dist_agree(comm, total <= INT_MAX && triplets_alloc(&got, total)
                                       ? CMRSCL_OK
                                       : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                                        "no memory for %lld coordinates",
                                                        (long long)total));
    if (st == CMRSCL_OK && rc == MPI_SUCCESS)
        rc = MPI_Alltoallv(mine.row, send, send_at, MPI_INT32_T, got.row, recv, recv_at,
                           MPI_INT32_T, comm);
    if (st == CMRSCL_OK && rc == MPI_SUCCESS)
        rc = MPI_Alltoallv(mine.col, send, send_at, MPI_INT32_T, got.col, recv, recv_at,
                           MPI_INT32_T, comm);
    if (st == CMRSCL_OK && rc == MPI_SUCCESS)
        rc = MPI_Alltoallv(mine.val, send, send_at, MPI_DOUBLE, got.val, recv, recv_at, MPI_DOUBLE,
                           comm);
    if (st == CMRSCL_OK && rc != MPI_SUCCESS)
        st = cmrs_dist_fail_mpi(rc, "MPI_Alltoall(v) (coordinates to their rows' owners)");
    triplets_free(&mine);
    if (st == CMRSCL_OK) {
        for (int64_t k = 0; k < got.n; ++k)
            got.row[k] -= (int32_t)first[rank];
        st = cmrs_dist_agree(comm,
                             cmrscl_csr_from_coo((int32_t)(first[rank + 1] - first[rank]), s->cols,
                                                 got.n, got.row, got.col, got.val, out));
    }
    triplets_free(&got);
    free(counts);
    return st;
}

/* What both create paths start with: the matrix's own communicator, the rank, room for the
 * row cuts, and the arguments checked (input: the path or the spec). Not yet agreed. */
typedef struct start {
    MPI_Comm comm;
    int rank, ranks;
    int64_t *first; /* ranks + 1 */
} start;

static cmrscl_status start_create(MPI_Comm comm, cmrscl_context ctx, cmrscl_precision precision,
                                  const char *input, const char *what, cmrscl_dist_matrix *out,
                                  start *s)
{
    if (out)
        *out = NULL;
    memset(s, 0, sizeof *s);
    cmrscl_status st = cmrs_dist_comm_dup(comm, &s->comm);
    if (st != CMRSCL_OK)
        return st;
    MPI_Comm_rank(s->comm, &s->rank);
    MPI_Comm_size(s->comm, &s->ranks);
    s->first = malloc(sizeof *s->first * ((size_t)s->ranks + 1));
    st = cmrs_dist_check_args(ctx, precision, out);
    if (st == CMRSCL_OK && !input)
        st = cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "%s is NULL", what);
    if (st == CMRSCL_OK && !s->first)
        st = cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory");
    return st;
}

/* The end of both paths: this rank's rows become the distributed matrix (which takes the
 * communicator), or, after a failure, everything is released. */
static cmrscl_status finish_create(start *s, cmrscl_status st, cmrscl_context ctx,
                                   cmrscl_precision precision, const cmrscl_csr *rows,
                                   const cmrscl_options *opt, cmrscl_dist_matrix *out)
{
    free(s->first);
    if (st != CMRSCL_OK) {
        MPI_Comm_free(&s->comm);
        return st;
    }
    return cmrs_dist_create_rows(s->comm, ctx, precision, rows, opt, out);
}

cmrscl_status cmrscl_dist_create_from_mtx(MPI_Comm comm, cmrscl_context ctx,
                                          cmrscl_precision precision, const char *path,
                                          const cmrscl_options *opt, cmrscl_dist_matrix *out)
{
    start s;
    cmrscl_status st = start_create(comm, ctx, precision, path, "path", out, &s);
    if (s.comm == MPI_COMM_NULL)
        return st;
    cmrscl_mtx_share share = {0};
    cmrscl_csr rows = {0};
    if (st == CMRSCL_OK)
        st = cmrscl_mtx_read_share(path, s.rank, s.ranks, &share);
    if ((st = cmrs_dist_agree(s.comm, st)) == CMRSCL_OK)
        st = check_count(s.comm, &share, path);
    if (st == CMRSCL_OK)
        st = cut_rows(s.comm, &share, s.first);
    if (st == CMRSCL_OK)
        st = redistribute(s.comm, &share, s.first, &rows);
    cmrscl_mtx_share_free(&share);
    st = finish_create(&s, st, ctx, precision, &rows, opt, out);
    cmrscl_csr_free(&rows);
    return st;
}

cmrscl_status cmrscl_dist_create_generated(MPI_Comm comm, cmrscl_context ctx,
                                           cmrscl_precision precision, const char *spec,
                                           const cmrscl_options *opt, cmrscl_dist_matrix *out)
{
    start s;
    cmrscl_status st = start_create(comm, ctx, precision, spec, "spec", out, &s);
    if (s.comm == MPI_COMM_NULL)
        return st;
    int64_t rows = 0;
    int32_t *len = NULL;
    cmrscl_csr block = {0};
    if (st == CMRSCL_OK) /* the size: no rows built for the stencils and fem */
        st = cmrscl_csr_generate_rows(spec, 0, 0, &block, &rows);
    cmrscl_csr_free(&block);
    /* An even block of rows for their lengths, then the rows cut by entries. */
    int r = s.rank;
    int64_t b0 = cmrs_dist_even_first(rows, r, s.ranks),
            bn = cmrs_dist_even_first(rows, r + 1, s.ranks) - b0;
    if (st == CMRSCL_OK)
        st = cmrscl_csr_generate_rows(spec, b0, bn, &block, NULL);
    if (st == CMRSCL_OK && !(len = malloc(sizeof *len * ((size_t)bn + 1))))
        st = cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld rows",
                            (long long)bn);
    for (int64_t i = 0; st == CMRSCL_OK && i < bn; ++i)
        len[i] = (int32_t)(block.row_ptr[i + 1] - block.row_ptr[i]);
    if ((st = cmrs_dist_agree(s.comm, st)) == CMRSCL_OK)
        st = cmrs_dist_partition(s.comm, rows, b0, bn, len, s.first);
    free(len);
    if (st == CMRSCL_OK) { /* every rank agrees, whether its rows moved or not */
        if (s.first[r] != b0 || s.first[r + 1] != b0 + bn) {
            cmrscl_csr_free(&block);
            st = cmrscl_csr_generate_rows(spec, s.first[r], s.first[r + 1] - s.first[r], &block,
                                          NULL);
        }
        st = cmrs_dist_agree(s.comm, st);
    }
    st = finish_create(&s, st, ctx, precision, &block, opt, out);
    cmrscl_csr_free(&block);
    return st;
}
