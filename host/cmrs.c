/* cmrs.c - CSR <-> CMRS on the host (paper, section 3): StripPtr, ColInd with the row in
 * strip packed into its low row_bits bits (or a separate RowInStrip array when the
 * packing does not fit), the optional per-strip column ordering (section 4, "fourth
 * optimization"), and the exact way back to CSR. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int cmrscl_cmrs_row_bits(int height)
{
    if (height < 1 || height > CMRSCL_MAX_HEIGHT)
        return 0;
    int bits = CMRSCL_CMRS_BITS;
    while ((1 << bits) < height)
        ++bits;
    return bits;
}

bool cmrs_packing_fits(int32_t cols, int height)
{
    int bits = cmrscl_cmrs_row_bits(height);
    return bits > 0 && height <= CMRSCL_MAX_PACKED_HEIGHT && (int64_t)cols <= (1ll << (32 - bits));
}

void cmrscl_cmrs_free(cmrscl_cmrs *cmrs)
{
    if (!cmrs)
        return;
    free(cmrs->strip_ptr);
    free(cmrs->col_ind);
    free(cmrs->row_in_strip);
    free(cmrs->values);
    memset(cmrs, 0, sizeof *cmrs);
}

/* Column ordering: a stable sort of all entries by column followed by a stable sort by
 * strip leaves each strip sorted by column with ties in CSR (row) order; two counting
 * sorts make it O(nnz + cols + strips). */
static cmrscl_status column_order(int32_t rows, int32_t cols, const int32_t *row_ptr,
                                  const int32_t *col_ind, int height, int32_t strips,
                                  int32_t **perm)
{
    int32_t nnz = row_ptr[rows];
    int32_t *strip_of = cmrscl_alloc((size_t)nnz, sizeof(int32_t));
    int32_t *a = cmrscl_alloc((size_t)nnz, sizeof(int32_t));
    int32_t *b = cmrscl_alloc((size_t)nnz, sizeof(int32_t));
    int32_t *starts = cmrscl_alloc((size_t)(cols > strips ? cols : strips) + 1, sizeof(int32_t));
    if (!strip_of || !a || !b || !starts) {
        free(strip_of), free(a), free(b), free(starts);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to order %d entries", nnz);
    }
    for (int32_t i = 0; i < rows; ++i)
        for (int32_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
            strip_of[k] = i / height;
    for (int32_t k = 0; k < nnz; ++k)
        a[k] = k;
    counting_sort(col_ind, cols, a, b, nnz, starts);
    counting_sort(strip_of, strips, b, a, nnz, starts);
    free(strip_of), free(b), free(starts);
    *perm = a;
    return CMRSCL_OK;
}

cmrscl_status cmrs_build_structure(int32_t rows, int32_t cols, const int32_t *row_ptr,
                                   const int32_t *col_ind, int height, unsigned flags,
                                   cmrscl_cmrs *out, int32_t **perm)
{
    memset(out, 0, sizeof *out);
    *perm = NULL;
    if (height < 1 || height > CMRSCL_MAX_HEIGHT)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "height %d is outside 1..%d", height,
                           CMRSCL_MAX_HEIGHT);
    int32_t nnz = row_ptr[rows];
    int32_t strips = (int32_t)(((int64_t)rows + height - 1) / height);
    bool packed = !(flags & CMRSCL_CMRS_UNPACKED) && cmrs_packing_fits(cols, height);
    int bits = cmrscl_cmrs_row_bits(height);
    bool ordered = (flags & CMRSCL_CMRS_ORDER_COLUMNS) != 0;

    out->strip_ptr = cmrscl_alloc((size_t)strips + 1, sizeof(uint32_t));
    out->col_ind = calloc((size_t)nnz + CMRS_ENTRY_PAD, sizeof(uint32_t));
    out->row_in_strip = packed ? NULL : cmrscl_alloc((size_t)nnz, sizeof(uint8_t));
    uint8_t *row_of = cmrscl_alloc((size_t)nnz, sizeof(uint8_t)); /* row in strip per CSR entry */
    if (!out->strip_ptr || !out->col_ind || (!packed && !out->row_in_strip) || !row_of) {
        free(row_of);
        cmrscl_cmrs_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for CMRS of %d entries",
                           nnz);
    }
    for (int32_t s = 0; s <= strips; ++s)
        out->strip_ptr[s] = (uint32_t)row_ptr[(int64_t)s * height < rows ? s * height : rows];
    for (int32_t i = 0; i < rows; ++i)
        memset(row_of + row_ptr[i], i % height, (size_t)(row_ptr[i + 1] - row_ptr[i]));

    if (ordered) {
        cmrscl_status st = column_order(rows, cols, row_ptr, col_ind, height, strips, perm);
        if (st != CMRSCL_OK) {
            free(row_of);
            cmrscl_cmrs_free(out);
            return st;
        }
    }
    const int32_t *p = *perm;
    for (int32_t k = 0; k < nnz; ++k) {
        int32_t e = p ? p[k] : k;
        uint32_t c = (uint32_t)col_ind[e];
        if (packed)
            out->col_ind[k] = c << bits | row_of[e];
        else {
            out->col_ind[k] = c;
            out->row_in_strip[k] = row_of[e];
        }
    }
    free(row_of);
    out->rows = rows;
    out->cols = cols;
    out->nnz = nnz;
    out->height = height;
    out->strips = strips;
    out->packed = packed;
    out->row_bits = packed ? bits : 0;
    out->column_ordered = ordered;
    return CMRSCL_OK;
}

void cmrs_gather_values(void *dst, cmrscl_precision dst_precision, const void *src,
                        cmrscl_precision src_precision, const int32_t *perm, int32_t nnz)
{
#define GATHER(DT, ST)                                                                             \
    for (int32_t k = 0; k < nnz; ++k)                                                              \
    ((DT *)dst)[k] = (DT)((const ST *)src)[perm ? perm[k] : k]
    if (dst_precision == CMRSCL_DOUBLE && src_precision == CMRSCL_DOUBLE)
        GATHER(double, double);
    else if (dst_precision == CMRSCL_DOUBLE)
        GATHER(double, float);
    else if (src_precision == CMRSCL_DOUBLE)
        GATHER(float, double);
    else
        GATHER(float, float);
#undef GATHER
}

cmrscl_status cmrscl_cmrs_from_csr(const cmrscl_csr *csr, int height, unsigned flags,
                                   cmrscl_cmrs *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    cmrscl_status st = cmrscl_csr_validate(csr);
    if (st != CMRSCL_OK)
        return st;
    int32_t *perm = NULL;
    st = cmrs_build_structure(csr->rows, csr->cols, csr->row_ptr, csr->col_ind, height, flags, out,
                              &perm);
    if (st != CMRSCL_OK)
        return st;
    out->values = cmrscl_alloc((size_t)csr->nnz, sizeof(double));
    if (!out->values) {
        free(perm);
        cmrscl_cmrs_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d values", csr->nnz);
    }
    cmrs_gather_values(out->values, CMRSCL_DOUBLE, csr->values, CMRSCL_DOUBLE, perm, csr->nnz);
    free(perm);
    return CMRSCL_OK;
}

/* Checks a CMRS struct well enough that converting it cannot read or write out of bounds. */
static cmrscl_status cmrs_validate(const cmrscl_cmrs *m)
{
    if (m->rows < 0 || m->cols < 0 || m->nnz < 0 || m->height < 1 || m->height > CMRSCL_MAX_HEIGHT)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "bad CMRS sizes %d x %d, nnz %d, height %d",
                           m->rows, m->cols, m->nnz, m->height);
    if (m->strips != (int32_t)(((int64_t)m->rows + m->height - 1) / m->height))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "%d strips for %d rows of height %d",
                           m->strips, m->rows, m->height);
    if (m->packed ? !cmrs_packing_fits(m->cols, m->height) ||
                        m->row_bits != cmrscl_cmrs_row_bits(m->height)
                  : (m->nnz > 0 && !m->row_in_strip))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                           "layout does not match height/columns (row_bits %d for height %d)",
                           m->row_bits, m->height);
    if (!m->strip_ptr || (m->nnz > 0 && (!m->col_ind || !m->values)))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "CMRS array is NULL");
    if (m->strip_ptr[0] != 0 || m->strip_ptr[m->strips] != (uint32_t)m->nnz)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "strip_ptr must run from 0 to nnz = %d",
                           m->nnz);
    for (int32_t s = 0; s < m->strips; ++s) {
        /* Both bounds before the entries are read: a strip may not end past nnz even
         * when a later strip_ptr comes back down to it. */
        if (m->strip_ptr[s + 1] < m->strip_ptr[s] || m->strip_ptr[s + 1] > (uint32_t)m->nnz)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "strip_ptr[%d] = %u is outside %u..%d",
                               s + 1, m->strip_ptr[s + 1], m->strip_ptr[s], m->nnz);
        for (uint32_t k = m->strip_ptr[s]; k < m->strip_ptr[s + 1]; ++k) {
            uint32_t c = m->packed ? m->col_ind[k] >> m->row_bits : m->col_ind[k];
            uint32_t r = m->packed ? m->col_ind[k] & ((1u << m->row_bits) - 1) : m->row_in_strip[k];
            int64_t row = (int64_t)s * m->height + r;
            if (r >= (uint32_t)m->height || row >= m->rows || c >= (uint32_t)m->cols)
                return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                                   "entry %u: row %lld, column %u outside the %d x %d matrix", k,
                                   (long long)row, c, m->rows, m->cols);
        }
    }
    return CMRSCL_OK;
}

cmrscl_status cmrscl_cmrs_to_csr(const cmrscl_cmrs *cmrs, cmrscl_csr *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!out || !cmrs)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "cmrs or out is NULL");
    cmrscl_status st = cmrs_validate(cmrs);
    if (st != CMRSCL_OK)
        return st;
    /* row_bits means something only in the packed layout (validated there). */
    const uint32_t mask = cmrs->packed ? (1u << cmrs->row_bits) - 1 : 0;
    int32_t *row_ptr = calloc((size_t)cmrs->rows + 2, sizeof(int32_t));
    int32_t *col_ind = cmrscl_alloc((size_t)cmrs->nnz, sizeof(int32_t));
    double *values = cmrscl_alloc((size_t)cmrs->nnz, sizeof(double));
    if (!row_ptr || !col_ind || !values) {
        free(row_ptr), free(col_ind), free(values);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for CSR of %d entries",
                           cmrs->nnz);
    }
    /* Count entries per row into row_ptr[row + 2], prefix-sum so row_ptr[row + 1] is the
     * row's first slot, then place entries advancing that cursor: the standard stable
     * scatter, which leaves row_ptr[row + 1] at the row's end. */
    for (int pass = 0; pass < 2; ++pass) {
        for (int32_t s = 0; s < cmrs->strips; ++s) {
            for (uint32_t k = cmrs->strip_ptr[s]; k < cmrs->strip_ptr[s + 1]; ++k) {
                uint32_t r = cmrs->packed ? cmrs->col_ind[k] & mask : cmrs->row_in_strip[k];
                int32_t row = s * cmrs->height + (int32_t)r;
                if (pass == 0) {
                    row_ptr[row + 2]++;
                    continue;
                }
                int32_t at = row_ptr[row + 1]++;
                col_ind[at] =
                    (int32_t)(cmrs->packed ? cmrs->col_ind[k] >> cmrs->row_bits : cmrs->col_ind[k]);
                values[at] = cmrs->values[k];
            }
        }
        if (pass == 0)
            for (int32_t i = 0; i < cmrs->rows; ++i)
                row_ptr[i + 2] += row_ptr[i + 1];
    }
    out->rows = cmrs->rows;
    out->cols = cmrs->cols;
    out->nnz = cmrs->nnz;
    out->row_ptr = row_ptr;
    out->col_ind = col_ind;
    out->values = values;
    return CMRSCL_OK;
}
