/* amg_smooth.c - AMG's smoothed prolongator P = (I - omega D^-1 A) T (issue 57): from A T,
 * made on the host's threads or on a device (the sink's), and - at theta > 0 - from the
 * filtered matrix instead, so that P does not spread along weak couplings (cmrs_amg_filter);
 * plain aggregation's P = T. */
#include "precond/precond.h"

#include <stdlib.h>
#include <string.h>

/* P = T - omega D^-1 (A T): A T's pattern holds T's (every a_ii is stored), so each of T's
 * entries of row i (one a candidate kept on its aggregate) is added where A T has its column.
 * Rows in pieces on the host's threads. */
typedef struct smooth_job {
    const cmrscl_csr *t;
    const double *diag_inv;
    double omega;
    cmrscl_csr *p;
} smooth_job;

static void smooth_piece(void *ctx, int64_t piece)
{
    const smooth_job *j = ctx;
    const cmrscl_csr *t = j->t;
    cmrscl_csr *p = j->p;
    int64_t begin, end;
    cmrs_amg_piece_rows(piece, p->rows, &begin, &end);
    for (int64_t i = begin; i < end; ++i) {
        double w = j->omega * j->diag_inv[i];
        int64_t e = t->row_ptr[i]; /* both rows' columns ascend */
        for (int64_t k = p->row_ptr[i]; k < p->row_ptr[i + 1]; ++k) {
            p->values[k] *= -w;
            if (e < t->row_ptr[i + 1] && p->col_ind[k] == t->col_ind[e])
                p->values[k] += t->values[e++];
        }
    }
}

/* p = A T on entry: P = T - omega D^-1 p (diag_inv: D^-1). */
static void smooth_prolongator(const cmrs_amg_level *l, const double *diag_inv, double omega,
                               cmrscl_csr *p)
{
    smooth_job job = {&l->T, diag_inv, omega, p};
    cmrs_parallel_pieces(cmrs_parallel_threads(), cmrs_amg_pieces(p->rows), smooth_piece, &job);
}

cmrscl_status cmrs_amg_smoothed(const cmrs_amg_sink *sink, int l, cmrs_amg_level *lv, double omega,
                                bool elsewhere)
{
    if (elsewhere &&
        sink->prolongator(sink->ctx, l, &lv->A, &lv->T, lv->diag_inv, omega, &lv->P) == CMRSCL_OK)
        return CMRSCL_OK;
    cmrscl_status st = elsewhere ? cmrs_amg_spgemm(&lv->A, &lv->T, &lv->P) : CMRSCL_OK;
    if (st == CMRSCL_OK)
        smooth_prolongator(lv, lv->diag_inv, omega, &lv->P);
    return st;
}

cmrscl_status cmrs_amg_filtered_prolongator(cmrs_amg_hierarchy *h, int l, const cmrs_amg_options *o)
{
    cmrs_amg_level *lv = &h->level[l];
    cmrscl_csr f;
    double *diag_inv = NULL, rho = 1;
    cmrscl_status st = cmrs_amg_filter_on(&lv->A, &lv->strong, &f);
    if (st == CMRSCL_OK)
        st = cmrs_amg_inverse_diagonal(&f, l, &diag_inv, NULL);
    if (st == CMRSCL_OK)
        st = cmrs_amg_spectral_radius(&f, diag_inv, h->symmetric, o->rho_steps, &rho);
    if (st == CMRSCL_OK)
        st = cmrs_amg_spgemm(&f, &lv->T, &lv->P);
    if (st == CMRSCL_OK)
        smooth_prolongator(lv, diag_inv, o->smooth_scale / rho, &lv->P);
    free(diag_inv);
    cmrscl_csr_free(&f);
    return st;
}

cmrscl_status cmrs_amg_unsmoothed(cmrs_amg_level *lv)
{
    const cmrscl_csr *t = &lv->T;
    cmrscl_csr *p = &lv->P;
    *p = (cmrscl_csr){t->rows, t->cols, t->nnz, NULL, NULL, NULL};
    p->row_ptr = cmrscl_alloc((size_t)t->rows + 1, sizeof(int64_t));
    p->col_ind = cmrscl_alloc((size_t)t->nnz, sizeof(int32_t));
    p->values = cmrscl_alloc((size_t)t->nnz, sizeof(double));
    if (!p->row_ptr || !p->col_ind || !p->values) {
        cmrscl_csr_free(p);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG: a copy of %lld entries",
                           (long long)t->nnz);
    }
    memcpy(p->row_ptr, t->row_ptr, ((size_t)t->rows + 1) * sizeof(int64_t));
    memcpy(p->col_ind, t->col_ind, (size_t)t->nnz * sizeof(int32_t));
    memcpy(p->values, t->values, (size_t)t->nnz * sizeof(double));
    return CMRSCL_OK;
}
