/* multiply.c - C = A B for any two CSR matrices (cmrscl_csr_multiply, include/cmrscl_precond.h):
 * the machinery of AMG's Galerkin products made public. On the device (amg_galerkin.c,
 * cl/spgemm.cl: a work-item or, on a GPU, a work-group a row of C) where it can; on the host's
 * threads (amg_spgemm.c) where it cannot - the same bits either way, since both add each
 * entry's products in the order of A's row and B's rows without fma. C stays on the device
 * where the caller asks for a matrix: it is made there from the product's own buffers, never
 * crossing the bus. */
#include "precond/precond.h"

#include <stdio.h>
#include <string.h>

/* cmrscl_csr_validate's verdict on `what`, its message prefixed with the call and the operand;
 * *canonical (may be NULL): each row's columns strictly ascending. */
static cmrscl_status check_csr(const cmrscl_csr *m, const char *what, bool *canonical)
{
    cmrscl_status st = cmrs_csr_validate_canonical(m, NULL, canonical);
    if (st == CMRSCL_OK)
        return st;
    char why[256];
    snprintf(why, sizeof why, "%s", cmrscl_last_error());
    return cmrscl_fail(st, "cmrscl_csr_multiply: %s: %s", what, why);
}

static cmrscl_status check_arguments(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_csr *b,
                                     cmrscl_precision precision, const cmrscl_matrix *c_matrix,
                                     const cmrscl_csr *c_csr, bool *b_canonical)
{
    if (!a || !b)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "cmrscl_csr_multiply: A or B is NULL");
    if (!c_matrix && !c_csr)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "cmrscl_csr_multiply: neither c_matrix nor c_csr asked for");
    if (c_matrix && !ctx)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "cmrscl_csr_multiply: c_matrix needs a context (ctx is NULL)");
    if (c_matrix && precision != CMRSCL_FLOAT && precision != CMRSCL_DOUBLE)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "cmrscl_csr_multiply: precision %d (float or double)", (int)precision);
    cmrscl_status st = check_csr(a, "A", NULL);
    if (st == CMRSCL_OK)
        st = check_csr(b, "B", b_canonical);
    if (st == CMRSCL_OK && a->cols != b->rows)
        st = cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                         "cmrscl_csr_multiply: A is %d x %d and B %d x %d: A's columns must be "
                         "B's rows",
                         (int)a->rows, (int)a->cols, (int)b->rows, (int)b->cols);
    return st;
}

/* C on the device (*on_device) or, where it cannot, on the host's threads (info->reason). */
static cmrscl_status product(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_csr *b,
                             bool b_canonical, cmrs_device_csr *there, cmrscl_csr *here,
                             cmrscl_multiply_info *info)
{
    cmrscl_status st = CMRSCL_ERROR_UNSUPPORTED;
    if (!ctx)
        snprintf(info->reason, sizeof info->reason, "no context: the host's reference");
    else if (a->nnz == 0 || b->nnz == 0)
        snprintf(info->reason, sizeof info->reason, "A or B has no entries");
    else if ((st = cmrs_device_multiply(ctx, a, b, b_canonical, 0, there, &info->upload_seconds)) !=
             CMRSCL_OK)
        snprintf(info->reason, sizeof info->reason, "%s", cmrscl_last_error());
    info->on_device = st == CMRSCL_OK;
    if (!info->on_device) /* (an upload the device then gave up on is no part of the host's C) */
        info->upload_seconds = 0;
    return info->on_device ? st : cmrs_amg_spgemm(a, b, here);
}

cmrscl_status cmrscl_csr_multiply(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_csr *b,
                                  cmrscl_precision precision, cmrscl_matrix *c_matrix,
                                  cmrscl_csr *c_csr, cmrscl_multiply_info *info)
{
    double t0 = cmrscl_seconds();
    cmrscl_multiply_info ignored;
    info = info ? info : &ignored;
    memset(info, 0, sizeof *info);
    if (c_matrix)
        *c_matrix = NULL;
    if (c_csr)
        *c_csr = (cmrscl_csr){0};
    bool b_canonical = false;
    cmrscl_status st = check_arguments(ctx, a, b, precision, c_matrix, c_csr, &b_canonical);
    if (st != CMRSCL_OK)
        return st;
    cmrs_device_csr there = {0};
    cmrscl_csr here = {0};
    st = product(ctx, a, b, b_canonical, &there, &here, info);
    info->product_seconds = cmrscl_seconds() - t0;
    if (st == CMRSCL_OK && c_matrix)
        st = info->on_device
                 ? cmrs_matrix_create_from_doubles_cl(ctx, precision, there.rows, there.cols,
                                                      (int32_t)there.nnz, there.ptr, there.col,
                                                      there.val, c_matrix)
                 : cmrscl_matrix_create_from_csr(ctx, precision, &here, NULL, c_matrix);
    if (st == CMRSCL_OK && c_csr) {
        if (info->on_device)
            st = cmrs_device_csr_download(ctx, &there, c_csr);
        else
            *c_csr = here, here = (cmrscl_csr){0};
    }
    if (st != CMRSCL_OK && c_matrix && *c_matrix)
        cmrscl_matrix_free(*c_matrix), *c_matrix = NULL;
    cmrs_device_csr_release(&there);
    cmrscl_csr_free(&here);
    info->seconds = cmrscl_seconds() - t0;
    return st;
}
