/* matrix.c - the public face of a distributed matrix: the checks and the CSR its creators share,
 * freeing it, and the queries (layout, neighbours, halo, blocks, rows read back); create.c makes
 * one from each rank's rows. */
#include "dist_internal.h"

#include <stdlib.h>
#include <string.h>

cmrscl_status cmrs_dist_comm_dup(MPI_Comm comm, MPI_Comm *out)
{
    *out = MPI_COMM_NULL;
    if (comm == MPI_COMM_NULL)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "the communicator is MPI_COMM_NULL");
    int rc = MPI_Comm_dup(comm, out);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
    return rc == MPI_SUCCESS ? CMRSCL_OK : cmrs_dist_fail_mpi(rc, "MPI_Comm_dup");
}

cmrscl_status cmrs_dist_check_args(cmrscl_context ctx, cmrscl_precision precision,
                                   cmrscl_dist_matrix *out)
{
    if (!ctx || !out)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "ctx or out is NULL");
    if (precision != CMRSCL_FLOAT && precision != CMRSCL_DOUBLE)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                              "precision %d is neither float nor double", (int)precision);
    return CMRSCL_OK;
}

/* An empty CSR of `rows` x `cols` with room for nnz entries. */
cmrscl_status cmrs_dist_csr_alloc(int32_t rows, int32_t cols, int64_t nnz, cmrscl_csr *out)
{
    memset(out, 0, sizeof *out);
    out->rows = rows, out->cols = cols, out->nnz = nnz;
    out->row_ptr = malloc(sizeof *out->row_ptr * ((size_t)rows + 1));
    out->col_ind = malloc(sizeof *out->col_ind * ((size_t)nnz + 1));
    out->values = malloc(sizeof *out->values * ((size_t)nnz + 1));
    if (out->row_ptr && out->col_ind && out->values) {
        out->row_ptr[0] = 0;
        return CMRSCL_OK;
    }
    cmrscl_csr_free(out);
    return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d rows, %lld entries",
                          rows, (long long)nnz);
}

void cmrscl_dist_free(cmrscl_dist_matrix m)
{
    if (!m)
        return;
    cmrs_dist_solver_free(m->solver);
    cmrs_halo_free(m);
    cmrs_window_free(m); /* collective: every rank frees its matrix */
    cmrscl_matrix_free(m->local);
    cmrscl_matrix_free(m->remote);
    free(m->halo_cols), free(m->remote_row), free(m->owned), free(m->diagonal);
    free(m->nb_rank), free(m->nb_recv), free(m->nb_send);
    free(m->nb_recv_at), free(m->nb_send_at), free(m->requests);
    if (m->comm != MPI_COMM_NULL)
        MPI_Comm_free(&m->comm);
    free(m);
}

cmrscl_status cmrscl_dist_matrix_plan(cmrscl_dist_matrix m, cmrscl_dist_plan *out)
{
    if (!m || !out)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix or out is NULL");
    *out = m->plan;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_dist_neighbours(cmrscl_dist_matrix m, int max, int *ranks, int32_t *received,
                                     int32_t *sent, int *count)
{
    if (!m || max < 0)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL or max < 0");
    for (int k = 0; k < m->plan.neighbours && k < max; ++k) {
        if (ranks)
            ranks[k] = m->nb_rank[k];
        if (received)
            received[k] = m->nb_recv[k];
        if (sent)
            sent[k] = m->nb_send[k];
    }
    if (count)
        *count = m->plan.neighbours;
    return CMRSCL_OK;
}

/* n entries of an array the matrix keeps, copied out. */
static cmrscl_status copy_out(cmrscl_dist_matrix m, int32_t *out, const int32_t *kept, int32_t n,
                              const char *what)
{
    if (!m || (!out && n > 0))
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix or %s is NULL", what);
    if (n > 0)
        memcpy(out, kept, sizeof *out * (size_t)n);
    return CMRSCL_OK;
}

cmrscl_status cmrscl_dist_halo_columns(cmrscl_dist_matrix m, int32_t *columns)
{
    return copy_out(m, columns, m ? m->halo_cols : NULL, m ? m->plan.halo : 0, "columns");
}

cmrscl_status cmrscl_dist_remote_rows(cmrscl_dist_matrix m, int32_t *rows)
{
    return copy_out(m, rows, m ? m->remote_row : NULL, m ? m->plan.remote_rows : 0, "rows");
}

cmrscl_status cmrscl_dist_owned_rows(cmrscl_dist_matrix m, int32_t *rows)
{
    if (!m || m->owned)
        return copy_out(m, rows, m ? m->owned : NULL, m ? m->plan.local_rows : 0, "rows");
    if (!rows && m->plan.local_rows > 0)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "rows is NULL");
    for (int32_t i = 0; i < m->plan.local_rows; ++i)
        rows[i] = m->plan.first_row + i;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_dist_blocks(cmrscl_dist_matrix m, cmrscl_matrix *local, cmrscl_matrix *remote)
{
    if (!m)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    if (local)
        *local = m->local;
    if (remote)
        *remote = m->remote;
    return CMRSCL_OK;
}

/* A block's rows as the device holds them. */
static cmrscl_status read_block(cmrscl_matrix block, cmrscl_csr *out)
{
    memset(out, 0, sizeof *out);
    if (!block)
        return CMRSCL_OK;
    cmrscl_cmrs c;
    cmrscl_status st = cmrscl_matrix_read_cmrs(block, &c);
    if (st == CMRSCL_OK)
        st = cmrscl_cmrs_to_csr(&c, out);
    cmrscl_cmrs_free(&c);
    return st;
}

cmrscl_status cmrscl_dist_read_rows(cmrscl_dist_matrix m, cmrscl_csr *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!m || !out)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix or out is NULL");
    cmrscl_csr l, r;
    cmrscl_status st = read_block(m->local, &l);
    if (st == CMRSCL_OK)
        st = read_block(m->remote, &r);
    if (st != CMRSCL_OK) {
        cmrscl_csr_free(&l);
        return st;
    }
    /* Row by row: the local entries, then the remote ones after the local columns (remote
     * row j is local row remote_row[j]). */
    int32_t rows = m->plan.local_rows, lc = m->plan.local_cols;
    cmrscl_csr a = {.rows = rows, .cols = lc + m->plan.halo, .nnz = l.nnz + r.nnz};
    a.row_ptr = malloc(sizeof *a.row_ptr * ((size_t)rows + 1));
    a.col_ind = malloc(sizeof *a.col_ind * ((size_t)a.nnz + 1));
    a.values = malloc(sizeof *a.values * ((size_t)a.nnz + 1));
    if (!a.row_ptr || !a.col_ind || !a.values) {
        cmrscl_csr_free(&a);
        st = cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d rows", rows);
    }
    int64_t n = 0;
    for (int32_t i = 0, j = 0; st == CMRSCL_OK && i < rows; ++i) {
        a.row_ptr[i] = n;
        for (int64_t k = l.row_ptr[i]; k < l.row_ptr[i + 1]; ++k)
            a.col_ind[n] = l.col_ind[k], a.values[n++] = l.values[k];
        if (j < r.rows && m->remote_row[j] == i) {
            for (int64_t k = r.row_ptr[j]; k < r.row_ptr[j + 1]; ++k)
                a.col_ind[n] = lc + r.col_ind[k], a.values[n++] = r.values[k];
            ++j;
        }
    }
    if (st == CMRSCL_OK) {
        a.row_ptr[rows] = n;
        *out = a;
    }
    cmrscl_csr_free(&l);
    cmrscl_csr_free(&r);
    return st;
}
