/* cmrs_slice.c - the layout of the slice kernel (cl/cmrs_slice.cl): each strip of HEIGHT rows
 * laid out as a slice - entry i of the strip's row r at position i x HEIGHT + r of the strip,
 * so the strip's HEIGHT lanes, one per row, read consecutive words at each step - with rows
 * shorter than the strip's longest padded by holes (cmrs_holes.c). What it costs is those
 * holes: cmrs_slice_stored counts them for the plan before anything is built. Narrow columns
 * with jumps (cmrs_narrow.c) need a position more before each step too long for an entry's
 * word: a hole there, which the narrow encoder turns into the jump's word. The slices are
 * made straight from the CSR: their strips are row-ordered, and a row-ordered CMRS's positions
 * are the CSR's entries in order, so one built first (nnz positions more, written to fresh
 * pages and read once again) would only be copied. */
#include "format/format.h"

#include <math.h>

typedef struct slice_job {
    holed_source src;
    const int64_t *row_ptr;
    const int32_t *col_ind; /* the CSR's columns: with jump_above, where the jumps go */
    int64_t jump_above;     /* a step longer takes a jump position before it; 0: no jumps */
    bool write;
    cmrs_holed *out;
    const cmrs_values *values;     /* the CSR's, and the precision they take; NULL: none */
    int64_t stored[64], jumps[64]; /* cmrs_slice_stored: per thread */
} slice_job;

/* Position q takes CSR entry k, row r of its strip: what cmrs_build would put at position k
 * of a row-ordered CMRS - its column word, its value converted. */
static void place_entry(const slice_job *j, uint64_t q, int64_t k, uint32_t r)
{
    const cmrscl_cmrs *shape = j->src.in;
    cmrscl_cmrs *c = &j->out->cmrs;
    const uint32_t col = (uint32_t)j->col_ind[k];
    if (shape->packed) {
        c->col_ind[q] = col << shape->row_bits | r;
    } else {
        c->col_ind[q] = col;
        c->row_in_strip[q] = (uint8_t)r;
    }
    const cmrs_values *v = j->values;
    if (v && v->dst_precision == CMRSCL_DOUBLE)
        ((double *)j->out->values)[q] = v->src_precision == CMRSCL_DOUBLE
                                            ? ((const double *)v->src)[k]
                                            : (double)((const float *)v->src)[k];
    else if (v)
        ((float *)j->out->values)[q] = v->src_precision == CMRSCL_DOUBLE
                                           ? (float)((const double *)v->src)[k]
                                           : ((const float *)v->src)[k];
    if (j->src.perm_bits == 64)
        ((uint64_t *)j->out->perm)[q] = (uint64_t)k;
    else if (j->src.perm_bits == 32)
        ((uint32_t *)j->out->perm)[q] = (uint32_t)k;
}

/* Position q takes CSR entry k (row r of its strip), or a hole for UINT64_MAX. */
static void place(const slice_job *j, uint64_t q, uint64_t k, uint32_t r)
{
    if (k != UINT64_MAX)
        place_entry(j, q, (int64_t)k, r);
    else
        cmrs_holed_place(&j->src, j->out, q, k);
}

/* The jump positions row `row` needs: its steps longer than jump_above, each column from the
 * one before in the row, the first from `first`, its strip's first column (cmrs_narrow.c). */
static int64_t row_jumps(const slice_job *j, int64_t row, int64_t first)
{
    int64_t jumps = 0, before = first;
    for (int64_t k = j->row_ptr[row]; j->jump_above && k < j->row_ptr[row + 1]; ++k) {
        jumps += j->col_ind[k] - before > j->jump_above;
        before = j->col_ind[k];
    }
    return jumps;
}

/* Strip s's rows r0 .. r1 - 1: the smallest of their first columns (with jumps), and the
 * most positions a row takes - its entries and its jumps; *jumps: theirs over the strip. */
static int64_t strip_width(const slice_job *j, int64_t r0, int64_t r1, int64_t *first,
                           int64_t *jumps)
{
    const int64_t *row_ptr = j->row_ptr;
    int64_t width = 0;
    *first = INT64_MAX, *jumps = 0;
    for (int64_t r = r0; j->jump_above && r < r1; ++r)
        if (row_ptr[r] < row_ptr[r + 1] && j->col_ind[row_ptr[r]] < *first)
            *first = j->col_ind[row_ptr[r]];
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t row_jumped = row_jumps(j, r, *first);
        *jumps += row_jumped;
        if (row_ptr[r + 1] - row_ptr[r] + row_jumped > width)
            width = row_ptr[r + 1] - row_ptr[r] + row_jumped;
    }
    return width;
}

/* Pass 1 puts each strip's stored length in out->cmrs.strip_ptr[s + 1] (or, without out,
 * adds it to the thread's count); pass 2 places its positions. */
static void slice_strips(void *ctx, int thread, int threads)
{
    slice_job *j = ctx;
    const cmrscl_cmrs *in = j->src.in;
    const int64_t *row_ptr = j->row_ptr;
    const int64_t h = in->height;
    int64_t s0, s1;
    cmrs_parallel_range(in->strips, thread, threads, &s0, &s1);
    for (int64_t s = s0; s < s1; ++s) {
        const int64_t r0 = s * h, r1 = r0 + h < in->rows ? r0 + h : in->rows;
        int64_t first, jumps;
        const int64_t width = strip_width(j, r0, r1, &first, &jumps);
        if (!j->out) {
            j->stored[thread] += width * h;
            j->jumps[thread] += jumps;
            continue;
        }
        if (!j->write) {
            j->out->cmrs.strip_ptr[s + 1] = (uint64_t)(width * h);
            continue;
        }
        const uint64_t base = j->out->cmrs.strip_ptr[s];
        for (int64_t r = 0; r < h; ++r) {
            const int64_t row = r0 + r;
            const int64_t len = row < in->rows ? row_ptr[row + 1] - row_ptr[row] : 0;
            const uint64_t entry0 = row < in->rows ? (uint64_t)row_ptr[row] : 0;
            int64_t i = 0, before = first;
            for (int64_t e = 0; e < len; ++e) {
                if (j->jump_above) { /* a jump: a hole here, which the narrow words fill */
                    const int64_t column = j->col_ind[row_ptr[row] + e];
                    if (column - before > j->jump_above)
                        place(j, base + (uint64_t)(i++ * h + r), UINT64_MAX, 0);
                    before = column;
                }
                place(j, base + (uint64_t)(i++ * h + r), entry0 + (uint64_t)e, (uint32_t)r);
            }
            for (; i < width; ++i)
                place(j, base + (uint64_t)(i * h + r), UINT64_MAX, 0);
        }
    }
}

int64_t cmrs_slice_stored(int32_t rows, const int64_t *row_ptr, const int32_t *col_ind, int height,
                          int64_t jump_above, int64_t *jumps)
{
    cmrscl_cmrs shape = {.rows = rows, .height = height, .strips = (rows + height - 1) / height};
    slice_job j = {
        .src = {.in = &shape}, .row_ptr = row_ptr, .col_ind = col_ind, .jump_above = jump_above};
    int threads = format_threads(rows);
    threads = threads > 64 ? 64 : threads;
    cmrs_parallel_run(threads, slice_strips, &j);
    int64_t stored = 0, jumped = 0;
    for (int t = 0; t < threads; ++t)
        stored += j.stored[t], jumped += j.jumps[t];
    if (jumps)
        *jumps = jumped;
    return stored;
}

double cmrs_slice_holes(int32_t rows, int32_t cols, const int64_t *row_ptr, int height)
{
    if (!cmrs_packing_fits(cols, height))
        return INFINITY;
    return (double)cmrs_slice_stored(rows, row_ptr, NULL, height, 0, NULL) / (double)row_ptr[rows];
}

cmrscl_status cmrs_slice_from_csr(int32_t rows, int32_t cols, const int64_t *row_ptr,
                                  const int32_t *col_ind, int height, unsigned flags,
                                  const cmrs_values *values, int64_t jump_above, int perm_bits,
                                  cmrs_holed *out)
{
    if (flags & CMRSCL_CMRS_ORDER_COLUMNS)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "the slices are laid out from row-ordered strips, not column-ordered");
    /* the header cmrs_build gives a row-ordered CMRS: what the holes' steps read */
    const bool packed = !(flags & CMRSCL_CMRS_UNPACKED) && cmrs_packing_fits(cols, height);
    const cmrscl_cmrs shape = {.rows = rows,
                               .cols = cols,
                               .nnz = row_ptr[rows],
                               .height = height,
                               .strips = (int32_t)(((int64_t)rows + height - 1) / height),
                               .packed = packed,
                               .row_bits = packed ? cmrscl_cmrs_row_bits(height) : 0};
    /* src.values only marks that values are laid out (the holes' and the padding's zeros): the
     * entries take theirs from the CSR, never through it */
    slice_job j = {.src = {&shape, values,
                           values ? cmrscl_precision_size(values->dst_precision) : 0, NULL,
                           perm_bits},
                   .row_ptr = row_ptr,
                   .col_ind = col_ind,
                   .jump_above = jump_above,
                   .out = out,
                   .values = values};
    int threads = format_threads(shape.nnz);
    cmrscl_status st = cmrs_holed_start(&j.src, out);
    if (st == CMRSCL_OK) {
        cmrs_parallel_run(threads, slice_strips, &j); /* pass 1: the lengths */
        st = cmrs_holed_allocate(&j.src, out);
    }
    if (st == CMRSCL_OK) {
        j.write = true;
        cmrs_parallel_run(threads, slice_strips, &j); /* pass 2: the positions */
    }
    return st;
}
