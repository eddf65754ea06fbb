/* cmrs_holes.c - what the layouts with holes share (the MODULO layout, cmrs_modulo.c; the
 * slice layout, cmrs_slice.c): each re-lays the strips of a built CMRS in two passes over the
 * strips - the stored length of each, then its positions, each an entry of the input or a
 * hole (col_ind CMRS_HOLE, value 0, permutation all bits set) - and the way back, holes
 * dropped, for reading a matrix back. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

static uint64_t perm_at(const void *perm, int bits, uint64_t k)
{
    if (!perm)
        return k; /* row-ordered strips: positions are CSR entries */
    return bits == 64 ? ((const uint64_t *)perm)[k] : ((const uint32_t *)perm)[k];
}

cmrscl_status cmrs_holed_start(const holed_source *src, cmrs_holed *out)
{
    memset(out, 0, sizeof *out);
    cmrscl_cmrs *c = &out->cmrs;
    *c = *src->in;
    c->col_ind = NULL, c->row_in_strip = NULL, c->values = NULL;
    c->strip_ptr = cmrscl_alloc((size_t)c->strips + 1, sizeof(uint64_t));
    if (!c->strip_ptr)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d strips", c->strips);
    c->strip_ptr[0] = 0;
    return CMRSCL_OK;
}

cmrscl_status cmrs_holed_allocate(const holed_source *src, cmrs_holed *out)
{
    cmrscl_cmrs *c = &out->cmrs;
    for (int32_t s = 0; s < c->strips; ++s)
        c->strip_ptr[s + 1] += c->strip_ptr[s];
    c->nnz = (int64_t)c->strip_ptr[c->strips];
    size_t n = (size_t)c->nnz, vs = src->value_size;
    c->col_ind = cmrs_parallel_alloc(n + CMRS_ENTRY_PAD, sizeof(uint32_t));
    c->row_in_strip = c->packed ? NULL : cmrs_parallel_alloc(n + 1, 1);
    out->values = src->values ? cmrs_parallel_alloc(n + CMRS_ENTRY_PAD, vs) : NULL;
    out->perm = src->perm_bits ? cmrs_parallel_alloc(n + 1, (size_t)src->perm_bits / 8) : NULL;
    if (!c->col_ind || (!c->packed && !c->row_in_strip) || (src->values && !out->values) ||
        (src->perm_bits && !out->perm)) {
        cmrs_holed_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                           "no memory for a layout of %lld stored entries (%lld with holes)",
                           (long long)src->in->nnz, (long long)n);
    }
    memset(c->col_ind + n, 0, CMRS_ENTRY_PAD * sizeof(uint32_t));
    if (src->values)
        memset((char *)out->values + n * vs, 0, CMRS_ENTRY_PAD * vs);
    return CMRSCL_OK;
}

void cmrs_holed_place(const holed_source *src, cmrs_holed *out, uint64_t q, uint64_t k)
{
    const cmrscl_cmrs *in = src->in;
    const bool hole = k == UINT64_MAX;
    out->cmrs.col_ind[q] = hole ? CMRS_HOLE : in->col_ind[k];
    if (!in->packed)
        out->cmrs.row_in_strip[q] = hole ? 0 : in->row_in_strip[k];
    if (src->values) {
        char *dst = (char *)out->values + q * src->value_size;
        if (hole)
            memset(dst, 0, src->value_size);
        else
            memcpy(dst, (const char *)src->values + k * src->value_size, src->value_size);
    }
    if (src->perm_bits) {
        /* the input permutation (if any) has the output's width */
        uint64_t e = hole ? UINT64_MAX : perm_at(src->perm, src->perm_bits, k);
        if (src->perm_bits == 64)
            ((uint64_t *)out->perm)[q] = e;
        else
            ((uint32_t *)out->perm)[q] = (uint32_t)e;
    }
}

void cmrs_holed_free(cmrs_holed *out)
{
    cmrscl_cmrs_free(&out->cmrs);
    free(out->values);
    free(out->perm);
    memset(out, 0, sizeof *out);
}

void cmrs_drop_holes(cmrscl_cmrs *c)
{
    uint64_t to = 0;
    for (int32_t s = 0; s < c->strips; ++s) {
        uint64_t begin = c->strip_ptr[s], end = c->strip_ptr[s + 1];
        c->strip_ptr[s] = to;
        for (uint64_t k = begin; k < end; ++k) {
            if (c->col_ind[k] == CMRS_HOLE)
                continue;
            c->col_ind[to] = c->col_ind[k];
            if (c->row_in_strip)
                c->row_in_strip[to] = c->row_in_strip[k];
            if (c->values)
                c->values[to] = c->values[k];
            ++to;
        }
    }
    c->strip_ptr[c->strips] = to;
    c->nnz = (int64_t)to;
}
