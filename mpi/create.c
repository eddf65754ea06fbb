/* create.c - a distributed matrix from each rank's rows (cmrscl_dist_create): the layout (rows as
 * given, x in proportion), the split of the rows into the local block (own columns, renumbered) and
 * the remote block (halo columns, compressed and ascending, so grouped by owner), the communication
 * plan (who sends which x entries to whom, computed once by MPI_Alltoall(v)), the two cmrscl
 * matrices and the exchange's device side. */
#include "dist_internal.h"

#include <stdlib.h>
#include <string.h>

static int compare_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The halo: the distinct columns outside [col0, col1), ascending. */
static cmrscl_status find_halo(const cmrscl_csr *a, int32_t col0, int32_t col1, int32_t **halo,
                               int32_t *count)
{
    int64_t n = 0, nnz = a->row_ptr[a->rows];
    for (int64_t k = 0; k < nnz; ++k)
        n += a->col_ind[k] < col0 || a->col_ind[k] >= col1;
    int32_t *h = malloc(sizeof *h * ((size_t)n + 1));
    if (!h)
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld halo entries",
                              (long long)n);
    n = 0;
    for (int64_t k = 0; k < nnz; ++k)
        if (a->col_ind[k] < col0 || a->col_ind[k] >= col1)
            h[n++] = a->col_ind[k];
    qsort(h, (size_t)n, sizeof *h, compare_int32);
    int64_t unique = 0;
    for (int64_t k = 0; k < n; ++k)
        if (unique == 0 || h[k] != h[unique - 1])
            h[unique++] = h[k];
    *halo = h, *count = (int32_t)unique;
    return CMRSCL_OK;
}

/* Splits rows into the local block (columns col0..col1-1 as 0..) and the remote block (halo
 * columns as their index in the halo; only the rows with such entries, listed ascending in
 * *remote_row); entries keep their order within each row. */
static cmrscl_status split_blocks(const cmrscl_csr *a, int32_t col0, int32_t col1,
                                  const int32_t *halo, int32_t nhalo, cmrscl_csr *local,
                                  cmrscl_csr *remote, int32_t **remote_row)
{
    int64_t nnz = a->row_ptr[a->rows], nl = 0;
    int32_t nr = 0;
    for (int32_t i = 0; i < a->rows; ++i) {
        int64_t own = 0;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            own += a->col_ind[k] >= col0 && a->col_ind[k] < col1;
        nl += own;
        nr += own < a->row_ptr[i + 1] - a->row_ptr[i];
    }
    *remote_row = malloc(sizeof **remote_row * ((size_t)nr + 1));
    cmrscl_status st = *remote_row ? cmrs_dist_csr_alloc(a->rows, col1 - col0, nl, local)
                                   : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                                    "no memory for %d remote rows", nr);
    if (st == CMRSCL_OK && (st = cmrs_dist_csr_alloc(nr, nhalo, nnz - nl, remote)) != CMRSCL_OK)
        cmrscl_csr_free(local);
    if (st != CMRSCL_OK) {
        free(*remote_row), *remote_row = NULL;
        return st;
    }
    int64_t l = 0, r = 0;
    for (int32_t i = 0, ri = 0; i < a->rows; ++i) {
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
            int32_t c = a->col_ind[k];
            if (c >= col0 && c < col1) {
                local->col_ind[l] = c - col0;
                local->values[l++] = a->values[k];
            } else {
                const int32_t *at = bsearch(&c, halo, (size_t)nhalo, sizeof *halo, compare_int32);
                remote->col_ind[r] = (int32_t)(at - halo);
                remote->values[r++] = a->values[k];
            }
        }
        local->row_ptr[i + 1] = l;
        if (r > remote->row_ptr[ri]) {
            (*remote_row)[ri++] = i;
            remote->row_ptr[ri] = r;
        }
    }
    return CMRSCL_OK;
}

/* Rows of every rank (as given) and the column ranges in the same proportions. Collective;
 * every rank reaches the same verdict, so no agreement is needed. */
static cmrscl_status layout(cmrscl_dist_matrix m, const cmrscl_csr *a, int64_t *row_first,
                            int64_t *col_first)
{
    int ranks = m->plan.ranks;
    int64_t mine = a->rows;
    int bounds[2] = {a->cols, -a->cols}, agreed[2];
    int rc = MPI_Allgather(&mine, 1, MPI_INT64_T, row_first + 1, 1, MPI_INT64_T, m->comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Allreduce(bounds, agreed, 2, MPI_INT, MPI_MAX, m->comm);
    if (rc != MPI_SUCCESS)
        return cmrs_dist_fail_mpi(rc, "MPI_Allgather/MPI_Allreduce (layout)");
    row_first[0] = 0;
    for (int r = 0; r < ranks; ++r)
        row_first[r + 1] += row_first[r];
    int64_t rows = row_first[ranks], cols = a->cols;
    if (agreed[0] != -agreed[1]) /* the same verdict on every rank: no agreement needed */
        return cmrs_dist_fail(
            CMRSCL_ERROR_INVALID_ARGUMENT,
            "the ranks' local_rows->cols differ (%d to %d): give the global count", -agreed[1],
            agreed[0]);
    if (rows > INT32_MAX)
        return cmrs_dist_fail(CMRSCL_ERROR_TOO_LARGE, "%lld rows in all exceed 32-bit indices",
                              (long long)rows);
    for (int r = 0; r <= ranks; ++r)
        col_first[r] = rows > 0 ? cols * row_first[r] / rows : cmrs_dist_even_first(cols, r, ranks);
    int me = m->plan.rank;
    m->plan.rows = rows, m->plan.cols = cols;
    m->plan.first_row = (int32_t)row_first[me];
    m->plan.local_rows = a->rows;
    m->plan.first_col = (int32_t)col_first[me];
    m->plan.local_cols = (int32_t)(col_first[me + 1] - col_first[me]);
    return CMRSCL_OK;
}

/* The neighbours (ranks with entries to receive or send) and where their entries sit. */
static cmrscl_status neighbours(cmrscl_dist_matrix m, const int *recv, const int *send,
                                const int *recv_at, const int *send_at)
{
    int nb = 0;
    for (int r = 0; r < m->plan.ranks; ++r)
        nb += recv[r] > 0 || send[r] > 0;
    m->plan.neighbours = nb;
    m->nb_rank = malloc(sizeof *m->nb_rank * ((size_t)nb + 1));
    m->nb_recv = malloc(sizeof *m->nb_recv * ((size_t)nb + 1));
    m->nb_send = malloc(sizeof *m->nb_send * ((size_t)nb + 1));
    m->nb_recv_at = malloc(sizeof *m->nb_recv_at * ((size_t)nb + 1));
    m->nb_send_at = malloc(sizeof *m->nb_send_at * ((size_t)nb + 1));
    m->requests = malloc(sizeof *m->requests * (2 * (size_t)nb + 1));
    if (!m->nb_rank || !m->nb_recv || !m->nb_send || !m->nb_recv_at || !m->nb_send_at ||
        !m->requests)
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d neighbours", nb);
    for (int r = 0, k = 0; r < m->plan.ranks; ++r) {
        if (recv[r] == 0 && send[r] == 0)
            continue;
        m->nb_rank[k] = r, m->nb_recv[k] = recv[r], m->nb_send[k] = send[r];
        m->nb_recv_at[k] = recv_at[r], m->nb_send_at[k++] = send_at[r];
    }
    return CMRSCL_OK;
}

/* Who needs what: the halo's entries counted per owner and told to the owners
 * (MPI_Alltoall), then the columns themselves (MPI_Alltoallv). *send_local receives the
 * local columns this rank sends, grouped by destination in rank order. Collective, agreed. */
static cmrscl_status exchange_plan(cmrscl_dist_matrix m, const int64_t *col_first,
                                   int32_t **send_local)
{
    int ranks = m->plan.ranks;
    int *counts = calloc(4 * (size_t)ranks, sizeof *counts);
    int *recv = counts, *send = counts + ranks, *recv_at = send + ranks, *send_at = recv_at + ranks;
    int32_t *wanted = NULL;
    cmrscl_status st = cmrs_dist_agree(
        m->comm, counts ? CMRSCL_OK : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory"));
    int rc = MPI_SUCCESS;
    if (st == CMRSCL_OK) {
        for (int32_t h = 0; h < m->plan.halo; ++h)
            recv[cmrs_dist_owner(col_first, ranks, m->halo_cols[h])]++;
        rc = MPI_Alltoall(recv, 1, MPI_INT, send, 1, MPI_INT, m->comm);
    }
    int64_t nsend = 0;
    if (st == CMRSCL_OK && rc == MPI_SUCCESS) {
        for (int r = 0; r < ranks; ++r) {
            recv_at[r] = r ? recv_at[r - 1] + recv[r - 1] : 0;
            send_at[r] = (int)nsend, nsend += send[r];
        }
        wanted = nsend <= INT32_MAX ? malloc(sizeof *wanted * (size_t)(nsend + 1)) : NULL;
        st = cmrs_dist_agree(m->comm, wanted ? CMRSCL_OK
                                             : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                                              "no memory to send %lld x entries",
                                                              (long long)nsend));
    }
    if (st == CMRSCL_OK && rc == MPI_SUCCESS)
        rc = MPI_Alltoallv(m->halo_cols, recv, recv_at, MPI_INT32_T, wanted, send, send_at,
                           MPI_INT32_T, m->comm);
    if (st == CMRSCL_OK && rc != MPI_SUCCESS)
        st = cmrs_dist_fail_mpi(rc, "MPI_Alltoall(v) (the exchange plan)");
    if (st == CMRSCL_OK) {
        st = neighbours(m, recv, send, recv_at, send_at);
        m->plan.sent = (int32_t)nsend;
        /* The requested global columns become this rank's local ones. */
        for (int64_t k = 0; st == CMRSCL_OK && k < nsend; ++k)
            if ((wanted[k] -= m->plan.first_col) < 0 || wanted[k] >= m->plan.local_cols)
                st = cmrs_dist_fail(CMRSCL_ERROR_INVALID_MATRIX,
                                    "asked for column %d, not this rank's",
                                    wanted[k] + m->plan.first_col);
        st = cmrs_dist_agree(m->comm, st);
    }
    free(counts);
    if (st != CMRSCL_OK)
        free(wanted), wanted = NULL;
    *send_local = wanted;
    return st;
}

/* A square matrix's diagonal on this rank's rows (entries of a row's diagonal summed, as the
 * product sums them; 0 where there is none), rounded to the precision as the device holds the
 * values: what the distributed solver's Jacobi preconditioner divides by. */
static cmrscl_status keep_diagonal(cmrscl_dist_matrix m, const cmrscl_csr *a)
{
    if (m->plan.rows != m->plan.cols)
        return CMRSCL_OK;
    m->diagonal = calloc((size_t)a->rows + 1, sizeof *m->diagonal);
    if (!m->diagonal)
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the diagonal");
    for (int32_t i = 0; i < a->rows; ++i) {
        double d = 0;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            if (a->col_ind[k] == m->plan.first_row + i)
                d += a->values[k];
        m->diagonal[i] = m->plan.precision == CMRSCL_FLOAT ? (double)(float)d : d;
    }
    return CMRSCL_OK;
}

/* The halo and the two blocks of this rank's rows (local work). */
static cmrscl_status build_blocks(cmrscl_dist_matrix m, const cmrscl_csr *a, cmrscl_csr *local,
                                  cmrscl_csr *remote)
{
    int32_t col0 = m->plan.first_col, col1 = col0 + m->plan.local_cols;
    cmrscl_status st = find_halo(a, col0, col1, &m->halo_cols, &m->plan.halo);
    if (st == CMRSCL_OK)
        st = split_blocks(a, col0, col1, m->halo_cols, m->plan.halo, local, remote, &m->remote_row);
    m->plan.local_nnz = local->nnz, m->plan.remote_nnz = remote->nnz;
    m->plan.remote_rows = remote->rows;
    return st == CMRSCL_OK ? keep_diagonal(m, a) : st;
}

/* The device side: both matrices, each with its own plan, and the exchange's buffers. */
static cmrscl_status build_device(cmrscl_dist_matrix m, const cmrscl_csr *local,
                                  const cmrscl_csr *remote, const int32_t *send_local,
                                  const cmrscl_options *opt)
{
    cmrscl_precision p = m->plan.precision;
    if (opt && opt->renumber == CMRSCL_RENUMBER_HUBS)
        return cmrs_dist_fail(CMRSCL_ERROR_UNSUPPORTED,
                              "renumbering (cmrscl_options.renumber) is not available for a "
                              "distributed matrix: each rank keeps its rows' numbering");
    cmrscl_status st = cmrscl_matrix_create_from_csr(m->ctx, p, local, opt, &m->local);
    if (st == CMRSCL_OK && m->plan.halo > 0)
        st = cmrscl_matrix_create_from_csr(m->ctx, p, remote, opt, &m->remote);
    if (st == CMRSCL_OK)
        st = cmrs_halo_setup(m, send_local);
    return st;
}

cmrscl_status cmrs_dist_create_rows(MPI_Comm comm, cmrscl_context ctx, cmrscl_precision precision,
                                    const cmrscl_csr *a, const cmrscl_options *opt,
                                    cmrscl_dist_matrix *out)
{
    *out = NULL;
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    cmrscl_dist_matrix m = calloc(1, sizeof *m);
    int64_t *row_first = malloc(sizeof *row_first * ((size_t)ranks + 1));
    int64_t *col_first = malloc(sizeof *col_first * ((size_t)ranks + 1));
    cmrscl_status st = m && row_first && col_first
                           ? CMRSCL_OK
                           : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory");
    if ((st = cmrs_dist_agree(comm, st)) != CMRSCL_OK) {
        free(m), free(row_first), free(col_first);
        MPI_Comm_free(&comm);
        return st;
    }
    m->comm = comm, m->ctx = ctx;
    m->window = MPI_WIN_NULL;
    MPI_Comm_rank(comm, &m->plan.rank);
    m->plan.ranks = ranks;
    m->plan.precision = precision;
    m->type = precision == CMRSCL_DOUBLE ? MPI_DOUBLE : MPI_FLOAT;
    cmrscl_csr local = {0}, remote = {0}, parts = {0};
    int32_t *send_local = NULL;
    int64_t halo[2];
    st = cmrs_dist_repartition(comm, a, &parts, &m->owned, &m->plan.partition, halo);
    m->plan.halo_by_rows = halo[0], m->plan.halo_by_graph = halo[1];
    if (m->plan.partition == CMRSCL_PARTITION_GRAPH)
        a = &parts;
    if (st == CMRSCL_OK)
        st = layout(m, a, row_first, col_first); /* the same outcome on every rank */
    if (st == CMRSCL_OK)
        st = cmrs_dist_agree(comm, build_blocks(m, a, &local, &remote));
    if (st == CMRSCL_OK)
        st = exchange_plan(m, col_first, &send_local);
    if (st == CMRSCL_OK)
        st = cmrs_window_setup(m);
    if (st == CMRSCL_OK)
        st = cmrs_dist_agree(comm, build_device(m, &local, &remote, send_local, opt));
    int64_t nnz = m->plan.local_nnz + m->plan.remote_nnz;
    int rc = st == CMRSCL_OK ? MPI_Allreduce(&nnz, &m->plan.nnz, 1, MPI_INT64_T, MPI_SUM, comm)
                             : MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        st = cmrs_dist_fail_mpi(rc, "MPI_Allreduce (entries)");
    cmrscl_csr_free(&local);
    cmrscl_csr_free(&remote);
    cmrscl_csr_free(&parts);
    free(send_local), free(row_first), free(col_first);
    if (st != CMRSCL_OK)
        cmrscl_dist_free(m);
    else
        *out = m;
    return st;
}

cmrscl_status cmrscl_dist_create(MPI_Comm comm, cmrscl_context ctx, cmrscl_precision precision,
                                 const cmrscl_csr *local_rows, const cmrscl_options *opt,
                                 cmrscl_dist_matrix *out)
{
    if (out)
        *out = NULL;
    MPI_Comm dup;
    cmrscl_status st = cmrs_dist_comm_dup(comm, &dup);
    if (st != CMRSCL_OK)
        return st;
    st = cmrs_dist_check_args(ctx, precision, out);
    if (st == CMRSCL_OK)
        st = local_rows ? cmrscl_csr_validate(local_rows)
                        : cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "local_rows is NULL");
    if ((st = cmrs_dist_agree(dup, st)) != CMRSCL_OK) {
        MPI_Comm_free(&dup);
        return st;
    }
    return cmrs_dist_create_rows(dup, ctx, precision, local_rows, opt, out);
}
