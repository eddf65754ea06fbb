/* matrix_read.c - a device matrix read back: its plan (cmrscl_matrix_params, the versioned
 * view of include/cmrscl.h), StripPtr for the tuner and the device path, and the whole CMRS
 * arrays (cmrscl_matrix_read_cmrs), plain whatever the device stores (the values
 * decoded from their dictionary or widened from floats, narrow columns back to
 * column words, holes dropped). */
#include "exec/exec.h"

#include <stdlib.h>
#include <string.h>

/* The reverse of cmrs_index_narrow (matrix.c), for arrays read back: the last element first, so
 * none is overwritten before it moves. */
static void index_widen(uint64_t *a, size_t n, int index_bits)
{
    for (size_t k = n; index_bits == 32 && k-- > 0;)
        a[k] = ((const uint32_t *)a)[k];
}

static cmrscl_status read_buffer(cmrscl_matrix m, cl_mem buf, size_t bytes, void *dst)
{
    if (bytes == 0)
        return CMRSCL_OK;
    cl_int err = clEnqueueReadBuffer(m->ctx->queue, buf, CL_TRUE, 0, bytes, dst, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueReadBuffer");
}

cmrscl_status cmrs_matrix_read_strip_ptr(cmrscl_matrix m, uint64_t *out)
{
    const cmrscl_params *p = &m->params;
    size_t n = (size_t)p->strips + 1;
    cmrscl_status st = read_buffer(m, m->buf[BUF_STRIP_PTR], (size_t)p->index_bits / 8 * n, out);
    if (st == CMRSCL_OK) {
        index_widen(out, n, p->index_bits);
        for (size_t s = 0; s < n; ++s)
            out[s] &= ~STRIP_PTR_LONG(p->index_bits); /* the kernels' flag */
    }
    return st;
}

/* Narrow or implied columns back as column words (c: StripPtr read, the shape set). */
static cmrscl_status read_narrow_columns(cmrscl_matrix m, cmrscl_cmrs *c)
{
    size_t bytes = cmrs_matrix_column_bytes(&m->params, (size_t)c->nnz);
    void *narrow = malloc(bytes);
    if (!narrow)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to read back the matrix");
    cmrscl_status st = read_buffer(m, m->buf[BUF_COL_IND], bytes, narrow);
    if (st == CMRSCL_OK && m->params.column_bits == 0)
        cmrs_implied_decode(narrow, c, c->col_ind);
    else if (st == CMRSCL_OK)
        cmrs_narrow_decode(narrow, c, m->params.dict_bits, plan_narrow_kind(&m->params),
                           c->col_ind);
    free(narrow);
    return st;
}

cmrscl_status cmrscl_matrix_params(cmrscl_matrix m, cmrscl_params *out)
{
    size_t room = 0;
    cmrscl_status st = m ? cmrs_params_room(out, &room)
                         : cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    if (st != CMRSCL_OK)
        return st;
    cmrscl_params plan;
    pthread_mutex_lock(&m->lock); /* device_bytes grows with a first update */
    plan = m->params;
    pthread_mutex_unlock(&m->lock);
    cmrs_params_deliver(&plan, out, room);
    return CMRSCL_OK;
}

cmrscl_status cmrscl_matrix_read_cmrs(cmrscl_matrix m, cmrscl_cmrs *out)
{
    if (!m || !out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix or out is NULL");
    memset(out, 0, sizeof *out);
    const cmrscl_params *p = &m->params;
    /* MODULO, slice: the stored entries, holes included; dropped below */
    size_t nnz = (size_t)p->stored_entries;
    size_t strips = (size_t)p->strips + 1;
    bool packed = p->layout == CMRSCL_LAYOUT_PACKED;
    cmrscl_cmrs c = {p->rows,
                     p->cols,
                     p->height,
                     p->strips,
                     p->stored_entries,
                     packed,
                     p->row_bits,
                     p->order == CMRSCL_ORDER_COLUMNS,
                     NULL,
                     NULL,
                     NULL,
                     NULL};
    c.strip_ptr = cmrscl_alloc(strips, sizeof(uint64_t));
    c.col_ind = cmrscl_alloc(nnz, sizeof(uint32_t));
    c.row_in_strip = packed ? NULL : cmrscl_alloc(nnz, 1);
    c.values = cmrscl_alloc(nnz, sizeof(double));
    size_t raw_bytes = cmrs_matrix_values_bytes(p, nnz); /* as stored: the dictionary for DICT */
    void *raw = malloc(raw_bytes);
    cmrscl_status st = CMRSCL_OK;
    if (!c.strip_ptr || !c.col_ind || (!packed && !c.row_in_strip) || !c.values || !raw)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to read back the matrix");
    if (st == CMRSCL_OK)
        st = cmrs_matrix_read_strip_ptr(m, c.strip_ptr);
    if (st == CMRSCL_OK && p->column_bits < 32)
        st = read_narrow_columns(m, &c);
    else if (st == CMRSCL_OK)
        st = read_buffer(m, m->buf[BUF_COL_IND], sizeof(uint32_t) * nnz, c.col_ind);
    if (st == CMRSCL_OK && !packed)
        st = read_buffer(m, m->buf[BUF_ROW_IN_STRIP], nnz, c.row_in_strip);
    if (st == CMRSCL_OK)
        st = read_buffer(m, m->buf[BUF_VALUES], raw_bytes, raw);
    if (st == CMRSCL_OK && plan_value_codec(p)->in_column_words) {
        /* the dictionary's slots, and with DIAGONAL the diagonal after them */
        size_t slots = (size_t)1 << p->dict_bits, diagonal = plan_diagonal_values(p);
        double *dict = malloc(sizeof(double) * (slots + diagonal));
        if (dict) {
            cmrs_values_convert(dict, CMRSCL_DOUBLE, raw, p->precision,
                                (int64_t)(slots + diagonal));
            cmrs_values_decode_dict(c.col_ind, c.values, (int64_t)nnz, p->row_bits, p->dict_bits,
                                    dict, diagonal ? dict + slots : NULL);
            free(dict);
        } else {
            st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to read back the matrix");
        }
    } else if (st == CMRSCL_OK) {
        cmrs_values_convert(c.values, CMRSCL_DOUBLE, raw, plan_stored_precision(p),
                            p->stored_entries);
    }
    free(raw);
    if (st == CMRSCL_OK && plan_has_holes(p->kernel))
        cmrs_drop_holes(&c);
    if (st != CMRSCL_OK) {
        cmrscl_cmrs_free(&c);
        return st;
    }
    *out = c;
    return CMRSCL_OK;
}
