/* cmrs_narrow.c - narrow columns, 2-byte column words. The rows of a strip of a banded matrix
 * (stencils, FEM) or of a small one gather from a window far narrower than the matrix, so
 * each strip stores its first column once (the smallest of its columns) and each entry a
 * 16-bit word relative to it. Two kinds, by layout:
 *   steps (slices): the position of an entry says its row (entry i of row r at i x HEIGHT +
 *     r), so the word needs no row bits: the step from the column before in the row (the
 *     row's first entry: from the strip's first column), the dictionary index in the low
 *     dict_bits - step << dict_bits | index. A hole is CMRS_NARROW_HOLE (all ones, which no
 *     step the plan admits reaches). The lane walking a row adds the steps as it goes
 *     (cl/cmrs_slice.cl). With jumps (a stencil's planes, a FEM mesh's far layers: steps
 *     too long for 16 bits less the index), an entry's step keeps the word's top bit clear
 *     and a longer one takes a jump word before it (cl/cmrs_abi.h, CMRS_NARROW_JUMP), in
 *     the hole the slice layout left there: 2 bytes more for that entry, not 2 more for
 *     every entry of the matrix.
 *   offsets (strips): the offset from the strip's first column, the dictionary index and
 *     the row in strip in as few bits as the height needs (cmrs_narrow_row_bits, not the
 *     paper's 4: a strip of one row spends none) - offset << (row bits + dict_bits) |
 *     index << row bits | row - so the strip family's lanes, which take a strip's entries
 *     in any order, decode each word on its own (cl/spmv_common.cl, entry_at). The plan
 *     keeps the offset below its field's all ones, so no word is CMRS_NARROW_HOLE.
 * The device array: `strips` 32-bit first columns, then the 16-bit words, one per stored
 * position (and CMRS_ENTRY_PAD more, zero): 2 bytes an entry instead of 4. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

typedef struct narrow_job {
    const int64_t *row_ptr;
    const int32_t *col_ind;
    int32_t rows;
    int height;
    int64_t strips;
    int64_t largest[64]; /* per thread; -1: a row's columns go down */
} narrow_job;

static void largest_steps(void *ctx, int thread, int threads)
{
    narrow_job *j = ctx;
    int64_t s0, s1, largest = 0;
    cmrs_parallel_range(j->strips, thread, threads, &s0, &s1);
    for (int64_t s = s0; s < s1 && largest >= 0; ++s) {
        int64_t r0 = s * j->height, r1 = r0 + j->height < j->rows ? r0 + j->height : j->rows;
        int64_t first = INT64_MAX;
        for (int64_t r = r0; r < r1; ++r)
            if (j->row_ptr[r] < j->row_ptr[r + 1] && j->col_ind[j->row_ptr[r]] < first)
                first = j->col_ind[j->row_ptr[r]];
        for (int64_t r = r0; r < r1 && largest >= 0; ++r) {
            int64_t before = first;
            for (int64_t k = j->row_ptr[r]; k < j->row_ptr[r + 1]; ++k) {
                int64_t step = j->col_ind[k] - before;
                if (step < 0) {
                    largest = -1;
                    break;
                }
                largest = step > largest ? step : largest;
                before = j->col_ind[k];
            }
        }
    }
    j->largest[thread] = largest;
}

/* offsets: a strip's largest column less its smallest */
static void largest_spans(void *ctx, int thread, int threads)
{
    narrow_job *j = ctx;
    int64_t s0, s1, largest = 0;
    cmrs_parallel_range(j->strips, thread, threads, &s0, &s1);
    for (int64_t s = s0; s < s1; ++s) {
        int64_t r0 = s * j->height, r1 = r0 + j->height < j->rows ? r0 + j->height : j->rows;
        int32_t lo = INT32_MAX, hi = -1;
        for (int64_t k = j->row_ptr[r0]; k < j->row_ptr[r1]; ++k) {
            lo = j->col_ind[k] < lo ? j->col_ind[k] : lo;
            hi = j->col_ind[k] > hi ? j->col_ind[k] : hi;
        }
        largest = hi >= 0 && (int64_t)hi - lo > largest ? (int64_t)hi - lo : largest;
    }
    j->largest[thread] = largest;
}

/* implied columns: -1 where a row's columns are not one ascending run (c, c + 1, ...) */
static void row_runs(void *ctx, int thread, int threads)
{
    narrow_job *j = ctx;
    int64_t r0, r1, largest = 0;
    cmrs_parallel_range(j->rows, thread, threads, &r0, &r1);
    for (int64_t r = r0; r < r1 && largest >= 0; ++r)
        for (int64_t k = j->row_ptr[r] + 1; k < j->row_ptr[r + 1]; ++k)
            if (j->col_ind[k] != j->col_ind[k - 1] + 1) {
                largest = -1;
                break;
            }
    j->largest[thread] = largest;
}

/* The largest value of whichever kind, over all host threads (at most 64). */
static int64_t largest_over_threads(narrow_job *j, void (*kind)(void *, int, int))
{
    int threads = format_threads(j->row_ptr[j->rows]);
    threads = threads > 64 ? 64 : threads;
    cmrs_parallel_run(threads, kind, j);
    int64_t largest = 0;
    for (int t = 0; t < threads; ++t) {
        if (j->largest[t] < 0)
            return -1;
        largest = j->largest[t] > largest ? j->largest[t] : largest;
    }
    return largest;
}

int64_t cmrs_narrow_largest_step(int32_t rows, const int64_t *row_ptr, const int32_t *col_ind,
                                 int height)
{
    narrow_job j = {row_ptr, col_ind, rows, height, ((int64_t)rows + height - 1) / height, {0}};
    return largest_over_threads(&j, largest_steps);
}

int64_t cmrs_narrow_largest_offset(int32_t rows, const int64_t *row_ptr, const int32_t *col_ind,
                                   int height)
{
    narrow_job j = {row_ptr, col_ind, rows, height, ((int64_t)rows + height - 1) / height, {0}};
    return largest_over_threads(&j, largest_spans);
}

bool cmrs_rows_are_runs(int32_t rows, const int64_t *row_ptr, const int32_t *col_ind)
{
    narrow_job j = {row_ptr, col_ind, rows, 1, rows, {0}};
    return largest_over_threads(&j, row_runs) == 0;
}

int cmrs_narrow_row_bits(int height, bool packed)
{
    int bits = 0;
    while (packed && (1 << bits) < height)
        ++bits;
    return bits;
}

size_t cmrs_narrow_bytes(int32_t strips, int64_t stored)
{
    size_t words = (size_t)stored + CMRS_ENTRY_PAD;
    return sizeof(uint32_t) * (size_t)strips + sizeof(uint16_t) * (words + (words & 1));
}

typedef struct code_job {
    const cmrscl_cmrs *c;
    int dict_bits;
    narrow_kind kind;
    int row_bits; /* offsets: bits of the row in strip in a 16-bit word */
    uint32_t *first;
    uint16_t *words;
    uint32_t *wide; /* decode: the column words out */
} code_job;

/* A strip's first column: the smallest column field among its words - a slice's holes
 * aside (a strip has none, and its last column's word may be all ones). */
static uint32_t first_column(const cmrscl_cmrs *c, int64_t s, int shift, bool holes)
{
    uint32_t first = UINT32_MAX;
    bool any = false;
    for (uint64_t k = c->strip_ptr[s]; k < c->strip_ptr[s + 1]; ++k)
        if (!(holes && c->col_ind[k] == CMRS_HOLE) && c->col_ind[k] >> shift <= first)
            first = c->col_ind[k] >> shift, any = true;
    return any ? first : 0;
}

static void encode_strips(void *ctx, int thread, int threads)
{
    const code_job *j = ctx;
    const cmrscl_cmrs *c = j->c;
    const int shift = c->row_bits + j->dict_bits; /* a 32-bit word's column */
    const uint32_t index_mask = (1u << j->dict_bits) - 1u;
    const uint32_t row_mask = (1u << j->row_bits) - 1u; /* offsets: the row the word keeps */
    int64_t s0, s1;
    cmrs_parallel_range(c->strips, thread, threads, &s0, &s1);
    for (int64_t s = s0; s < s1; ++s) {
        const uint64_t begin = c->strip_ptr[s], end = c->strip_ptr[s + 1];
        j->first[s] = first_column(c, s, shift, j->kind != NARROW_OFFSETS);
        if (j->kind == NARROW_OFFSETS) {
            for (uint64_t k = begin; k < end; ++k) {
                const uint32_t w = c->col_ind[k];
                j->words[k] =
                    (uint16_t)(((w >> shift) - j->first[s]) << (j->row_bits + j->dict_bits) |
                               ((w >> c->row_bits) & index_mask) << j->row_bits | (w & row_mask));
            }
            continue;
        }
        for (int r = 0; r < c->height; ++r) {
            uint32_t before = j->first[s];
            for (uint64_t k = begin + (uint64_t)r; k < end; k += (uint64_t)c->height) {
                const uint32_t w = c->col_ind[k];
                const uint64_t next = k + (uint64_t)c->height;
                if (w == CMRS_HOLE && j->kind == NARROW_STEPS_JUMPS && next < end &&
                    c->col_ind[next] != CMRS_HOLE) { /* a jump: the step's high bits */
                    const uint32_t jump =
                        ((c->col_ind[next] >> shift) - before) >> CMRS_NARROW_JUMP_SHIFT;
                    j->words[k] = (uint16_t)(CMRS_NARROW_JUMP | jump);
                    before += jump << CMRS_NARROW_JUMP_SHIFT;
                    continue;
                }
                if (w == CMRS_HOLE) {
                    j->words[k] = CMRS_NARROW_HOLE;
                    continue;
                }
                const uint32_t index = (w >> c->row_bits) & index_mask;
                j->words[k] = (uint16_t)(((w >> shift) - before) << j->dict_bits | index);
                before = w >> shift;
            }
        }
    }
}

cmrscl_status cmrs_narrow_encode(const cmrscl_cmrs *c, int dict_bits, narrow_kind kind, void **out)
{
    size_t bytes = cmrs_narrow_bytes(c->strips, c->nnz);
    *out = cmrs_parallel_alloc(bytes, 1);
    if (!*out)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld narrow columns",
                           (long long)c->nnz);
    code_job j = {c,    dict_bits,
                  kind, cmrs_narrow_row_bits(c->height, c->packed),
                  *out, (uint16_t *)((uint32_t *)*out + c->strips),
                  NULL};
    /* the padding, and the word that rounds the array to 4 bytes: zeros */
    size_t pad = bytes - sizeof(uint32_t) * (size_t)c->strips - sizeof(uint16_t) * (size_t)c->nnz;
    memset(j.words + c->nnz, 0, pad);
    cmrs_parallel_run(format_threads(c->nnz), encode_strips, &j);
    return CMRSCL_OK;
}

static void decode_strips(void *ctx, int thread, int threads)
{
    const code_job *j = ctx;
    const cmrscl_cmrs *c = j->c;
    const int shift = c->row_bits + j->dict_bits; /* a 32-bit word's column */
    const uint16_t index_mask = (uint16_t)((1u << j->dict_bits) - 1u);
    const uint32_t row_mask = (1u << j->row_bits) - 1u;
    int64_t s0, s1;
    cmrs_parallel_range(c->strips, thread, threads, &s0, &s1);
    for (int64_t s = s0; s < s1; ++s) {
        const uint64_t begin = c->strip_ptr[s], end = c->strip_ptr[s + 1];
        if (j->kind == NARROW_OFFSETS) {
            for (uint64_t k = begin; k < end; ++k) {
                const uint32_t w = j->words[k];
                j->wide[k] = (j->first[s] + (w >> (j->row_bits + j->dict_bits))) << shift |
                             ((w >> j->row_bits) & index_mask) << c->row_bits | (w & row_mask);
            }
            continue;
        }
        for (int r = 0; r < c->height; ++r) {
            uint32_t column = j->first[s];
            const uint32_t row = c->packed ? (uint32_t)r : 0;
            for (uint64_t k = begin + (uint64_t)r; k < end; k += (uint64_t)c->height) {
                const uint16_t w = j->words[k];
                if (w == CMRS_NARROW_HOLE ||
                    (j->kind == NARROW_STEPS_JUMPS && (w & CMRS_NARROW_JUMP))) {
                    if (w != CMRS_NARROW_HOLE) /* a jump */
                        column += (uint32_t)(w & (CMRS_NARROW_JUMP - 1)) << CMRS_NARROW_JUMP_SHIFT;
                    j->wide[k] = CMRS_HOLE;
                    continue;
                }
                column += (uint32_t)(w >> j->dict_bits);
                j->wide[k] = column << shift | (uint32_t)(w & index_mask) << c->row_bits | row;
            }
        }
    }
}

void cmrs_narrow_decode(const void *narrow, const cmrscl_cmrs *c, int dict_bits, narrow_kind kind,
                        uint32_t *col_ind)
{
    code_job j = {c,
                  dict_bits,
                  kind,
                  cmrs_narrow_row_bits(c->height, c->packed),
                  (uint32_t *)narrow,
                  (uint16_t *)((const uint32_t *)narrow + c->strips),
                  col_ind};
    cmrs_parallel_run(format_threads(c->nnz), decode_strips, &j);
}

/* Implied columns: a strip of one row whose columns are one run stores its first column (0
 * when empty); entry k of strip s is column first[s] + (k - strip_ptr[s]). */
size_t cmrs_implied_bytes(int32_t strips)
{
    return sizeof(uint32_t) * ((size_t)strips > 0 ? (size_t)strips : 1);
}

cmrscl_status cmrs_implied_encode(const cmrscl_cmrs *c, void **out)
{
    uint32_t *first = calloc(cmrs_implied_bytes(c->strips), 1);
    if (!first)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d first columns",
                           c->strips);
    for (int32_t s = 0; s < c->strips; ++s)
        if (c->strip_ptr[s] < c->strip_ptr[s + 1])
            first[s] = c->col_ind[c->strip_ptr[s]] >> c->row_bits;
    *out = first;
    return CMRSCL_OK;
}

void cmrs_implied_decode(const void *implied, const cmrscl_cmrs *c, uint32_t *col_ind)
{
    const uint32_t *first = implied;
    for (int32_t s = 0; s < c->strips; ++s)
        for (uint64_t k = c->strip_ptr[s]; k < c->strip_ptr[s + 1]; ++k)
            col_ind[k] = (first[s] + (uint32_t)(k - c->strip_ptr[s])) << c->row_bits;
}
