/* cmrs_modulo.c - the layout of the MODULO kernel (paper, section 7; cl/cmrs_modulo.cl): each
 * strip of a built CMRS is re-laid so that within one step of WARP positions, no two
 * positions of the same class (position % MODULO) hold entries of the same row, inserting
 * holes (entries that contribute nothing) where no waiting entry fits; and the way back
 * (holes dropped) for reading a matrix back. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

/* One pass over a range of strips: pass 1 counts each strip's stored length into
 * strip_ptr[s + 1]; pass 2 writes the entries from strip_ptr[s] on. */
typedef struct modulo_job {
    const cmrscl_cmrs *in;
    const void *values; /* value_size bytes per position of `in`; NULL: none */
    size_t value_size;
    const void *perm; /* CSR entry per position of `in` (perm_bits); NULL: the identity */
    int perm_bits;    /* 0: no permutation out */
    int modulo, warp;
    bool write;
    uint64_t *strip_ptr;
    cmrs_modulo_out *out;
    bool out_of_memory;
} modulo_job;

static uint32_t row_of(const cmrscl_cmrs *c, uint64_t k)
{
    return c->packed ? c->col_ind[k] & ((1u << c->row_bits) - 1u) : c->row_in_strip[k];
}

static uint64_t perm_at(const void *perm, int bits, uint64_t k)
{
    if (!perm)
        return k; /* row-ordered strips: positions are CSR entries */
    return bits == 64 ? ((const uint64_t *)perm)[k] : ((const uint32_t *)perm)[k];
}

/* Position q of the output: the input entry k, or a hole when k is UINT64_MAX. */
static void place(const modulo_job *j, uint64_t q, uint64_t k)
{
    const cmrscl_cmrs *in = j->in;
    cmrs_modulo_out *o = j->out;
    bool hole = k == UINT64_MAX;
    o->cmrs.col_ind[q] = hole ? CMRS_HOLE : in->col_ind[k];
    if (!in->packed)
        o->cmrs.row_in_strip[q] = hole ? 0 : in->row_in_strip[k];
    if (j->values) {
        char *dst = (char *)o->values + q * j->value_size;
        if (hole)
            memset(dst, 0, j->value_size);
        else
            memcpy(dst, (const char *)j->values + k * j->value_size, j->value_size);
    }
    if (j->perm_bits) {
        /* the input permutation (if any) has the output's width */
        uint64_t e = hole ? UINT64_MAX : perm_at(j->perm, j->perm_bits, k);
        if (j->perm_bits == 64)
            ((uint64_t *)o->perm)[q] = e;
        else
            ((uint32_t *)o->perm)[q] = (uint32_t)e;
    }
}

/* Strip s: positions are filled in order; position q (of the strip) has class q % MODULO,
 * and takes the first entry of the window (the next 2 * WARP waiting entries, in the
 * strip's order) whose row this class has not taken yet in the current step of WARP
 * positions, else a hole. A waiting entry is only passed over for one of another row
 * (the rows a class has taken block every entry of those rows), so each row keeps its
 * entries' order. The first position of a class in a step always takes the window's first
 * entry: every step places at least min(MODULO, waiting) entries. */
static uint64_t lay_strip(const modulo_job *j, int32_t s, uint64_t *win, uint64_t *used,
                          uint64_t *stamp)
{
    const cmrscl_cmrs *in = j->in;
    const uint64_t begin = in->strip_ptr[s], end = in->strip_ptr[s + 1];
    const size_t window = 2 * (size_t)j->warp, height = (size_t)in->height;
    const uint64_t base = j->write ? j->strip_ptr[s] : 0;
    uint64_t next = begin, q = 0;
    size_t waiting = 0;
    while (next < end || waiting > 0) {
        if (q % (uint64_t)j->warp == 0)
            ++*stamp; /* a new step: every class's rows are free again */
        while (waiting < window && next < end)
            win[waiting++] = next++;
        uint64_t *taken = used + (q % (uint64_t)j->modulo) * height;
        size_t pick = waiting;
        for (size_t i = 0; i < waiting && pick == waiting; ++i)
            if (taken[row_of(in, win[i])] != *stamp)
                pick = i;
        uint64_t k = UINT64_MAX;
        if (pick < waiting) {
            k = win[pick];
            taken[row_of(in, k)] = *stamp;
            memmove(win + pick, win + pick + 1, (waiting - pick - 1) * sizeof *win);
            --waiting;
        }
        if (j->write)
            place(j, base + q, k);
        ++q;
    }
    return q;
}

static void lay_strips(void *ctx, int thread, int threads)
{
    modulo_job *j = ctx;
    int64_t s0, s1;
    parallel_range(j->in->strips, thread, threads, &s0, &s1);
    uint64_t *win = cmrscl_alloc(2 * (size_t)j->warp, sizeof *win);
    uint64_t *used = calloc((size_t)j->modulo * (size_t)j->in->height, sizeof *used);
    uint64_t stamp = 0;
    if (!win || !used)
        j->out_of_memory = true;
    for (int64_t s = s0; s < s1 && win && used; ++s) {
        uint64_t n = lay_strip(j, (int32_t)s, win, used, &stamp);
        if (!j->write)
            j->strip_ptr[s + 1] = n;
    }
    free(win), free(used);
}

cmrscl_status cmrs_modulo_layout(const cmrscl_cmrs *in, const void *values, size_t value_size,
                                 const void *perm, int perm_bits, int modulo, int warp,
                                 cmrs_modulo_out *out)
{
    memset(out, 0, sizeof *out);
    modulo_job j = {in, values, value_size, perm, perm_bits, modulo, warp, false, NULL, out, false};
    int threads = format_threads(in->nnz);
    cmrscl_cmrs *c = &out->cmrs;
    *c = *in;
    c->strip_ptr = j.strip_ptr = cmrscl_alloc((size_t)in->strips + 1, sizeof(uint64_t));
    c->col_ind = NULL, c->row_in_strip = NULL, c->values = NULL;
    if (c->strip_ptr) {
        c->strip_ptr[0] = 0;
        parallel_run(threads, lay_strips, &j); /* pass 1: the lengths */
        for (int32_t s = 0; s < in->strips; ++s)
            c->strip_ptr[s + 1] += c->strip_ptr[s];
        c->nnz = (int64_t)c->strip_ptr[in->strips];
        size_t n = (size_t)c->nnz;
        c->col_ind = parallel_alloc(n + CMRS_ENTRY_PAD, sizeof(uint32_t));
        c->row_in_strip = in->packed ? NULL : parallel_alloc(n + 1, 1);
        out->values = values ? parallel_alloc(n + CMRS_ENTRY_PAD, value_size) : NULL;
        out->perm = perm_bits ? parallel_alloc(n + 1, (size_t)perm_bits / 8) : NULL;
        if (c->col_ind && (in->packed || c->row_in_strip) && (!values || out->values) &&
            (!perm_bits || out->perm)) {
            memset(c->col_ind + n, 0, CMRS_ENTRY_PAD * sizeof(uint32_t));
            if (values)
                memset((char *)out->values + n * value_size, 0, CMRS_ENTRY_PAD * value_size);
            j.write = true;
            parallel_run(threads, lay_strips, &j); /* pass 2: the entries */
        } else {
            j.out_of_memory = true;
        }
    }
    if (!c->strip_ptr || j.out_of_memory) {
        cmrs_modulo_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                           "no memory for the MODULO layout of %lld entries", (long long)in->nnz);
    }
    return CMRSCL_OK;
}

void cmrs_modulo_free(cmrs_modulo_out *out)
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
