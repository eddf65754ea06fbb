/* cmrs_modulo.c - the layout of the MODULO kernel (paper, section 7; cl/cmrs_modulo.cl): each
 * strip of a built CMRS is re-laid so that within one step of WARP positions, no two
 * positions of the same class (position % MODULO) hold entries of the same row, inserting
 * holes (entries that contribute nothing) where no waiting entry fits (the two passes and
 * the holes: cmrs_holes.c). */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

/* One pass over a range of strips: pass 1 counts each strip's stored length into
 * strip_ptr[s + 1]; pass 2 writes the entries from strip_ptr[s] on. */
typedef struct modulo_job {
    holed_source src;
    int modulo, warp;
    bool write;
    cmrs_holed *out;
    bool out_of_memory;
} modulo_job;

static uint32_t row_of(const cmrscl_cmrs *c, uint64_t k)
{
    return c->packed ? c->col_ind[k] & ((1u << c->row_bits) - 1u) : c->row_in_strip[k];
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
    const cmrscl_cmrs *in = j->src.in;
    const uint64_t begin = in->strip_ptr[s], end = in->strip_ptr[s + 1];
    const size_t window = 2 * (size_t)j->warp, height = (size_t)in->height;
    const uint64_t base = j->write ? j->out->cmrs.strip_ptr[s] : 0;
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
            cmrs_holed_place(&j->src, j->out, base + q, k);
        ++q;
    }
    return q;
}

static void lay_strips(void *ctx, int thread, int threads)
{
    modulo_job *j = ctx;
    int64_t s0, s1;
    cmrs_parallel_range(j->src.in->strips, thread, threads, &s0, &s1);
    uint64_t *win = cmrscl_alloc(2 * (size_t)j->warp, sizeof *win);
    uint64_t *used = calloc((size_t)j->modulo * (size_t)j->src.in->height, sizeof *used);
    uint64_t stamp = 0;
    if (!win || !used)
        j->out_of_memory = true;
    for (int64_t s = s0; s < s1 && win && used; ++s) {
        uint64_t n = lay_strip(j, (int32_t)s, win, used, &stamp);
        if (!j->write)
            j->out->cmrs.strip_ptr[s + 1] = n;
    }
    free(win), free(used);
}

cmrscl_status cmrs_modulo_layout(const cmrscl_cmrs *in, const void *values, size_t value_size,
                                 const void *perm, int perm_bits, int modulo, int warp,
                                 cmrs_holed *out)
{
    modulo_job j = {{in, values, value_size, perm, perm_bits}, modulo, warp, false, out, false};
    int threads = format_threads(in->nnz);
    cmrscl_status st = cmrs_holed_start(&j.src, out);
    if (st == CMRSCL_OK)
        cmrs_parallel_run(threads, lay_strips, &j); /* pass 1: the lengths */
    if (st == CMRSCL_OK && !j.out_of_memory)
        st = cmrs_holed_allocate(&j.src, out);
    if (st == CMRSCL_OK && !j.out_of_memory) {
        j.write = true;
        cmrs_parallel_run(threads, lay_strips, &j); /* pass 2: the entries */
    }
    if (st == CMRSCL_OK && j.out_of_memory) /* a thread's scratch */
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                         "no memory for the MODULO layout of %lld entries", (long long)in->nnz);
    if (st != CMRSCL_OK)
        cmrs_holed_free(out);
    return st;
}
