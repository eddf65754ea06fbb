/* cmrs_spmm.cl - many vectors at once: Y = alpha*A*X + beta*Y for a block of vectors, on the
 * arrays of whichever family's layout the matrix's plan chose (after spmv_common.cl and the
 * warp layer, warp.cl, of which it uses warp_sync alone).
 *
 * One warp of WARP lanes takes one strip. Its lanes form ENTRY_GROUPS groups of VEC_LANES:
 * a group takes one stored entry at a time, and lane v of the group multiplies it by the
 * entry's row of X for vectors v, v + VEC_LANES, ... (VEC_PER_LANE of them). So the matrix
 * is read once for the whole block, and a row-major X gives each group one contiguous load
 * per entry; where a warp's lanes all share one entry (as many runs as lanes) it is one group
 * and needs no reduction at all. The host's shape (host/exec/spmm.c) gives a slice's lane two
 * runs where a launch has 4 or more.
 *
 * Two walks, by layout:
 *   positions (strip, segment, MODULO layouts): group g takes the strip's stored entries
 *     g, g + ENTRY_GROUPS, ... in order, whatever their rows (the row in strip from the
 *     column word, or row_in_strip; a strip's narrow offsets decoded by entry_at), each lane adding into its own local-memory slot per
 *     (row, vector) - no lane touches another's, as in the strip family. Then the groups'
 *     slots are added pairwise in a fixed tree (warp_sync between steps), and group g
 *     writes rows g, g + ENTRY_GROUPS, ...
 *   rows (slice layout, KERNEL SLICE: entry i of row r at StripPtr + i x HEIGHT + r):
 *     group g walks rows g, g + ENTRY_GROUPS, ... one at a time, summing in registers - no
 *     local memory, no synchronisation. Narrow columns (COLUMN_BITS 16) are steps along the
 *     row, so this walk is the one that can read them.
 * Holes (MODULO and slice layouts) are skipped: no X load, no add. Long strips (the split
 * path's, flagged in StripPtr; never slices) are taken tile by tile, a warp each, as the
 * SpMV kernels take them: a tile's sums go to the block product's own partial sums, and
 * cmrs_spmm_combine adds each strip's tiles in tile order into Y. Every element of Y is
 * summed in an order fixed by the layout and the launch's shape: the same bits every run.
 *
 * Build options besides spmv_common.cl's (host/plan/plan_options.c, cmrs_plan_spmm_options):
 *   VEC_LANES     lanes sharing one entry, a power of two dividing WARP        (required)
 *   VEC_PER_LANE  runs of vectors each lane takes                               (required)
 *   VEC_WIDTH     vectors in a run: 1, or 2 or 4 consecutive ones of a row-major block
 *                 loaded and stored as one vector (the host keeps runs whole and aligned)
 *                                                                               (default 1)
 * A launch covers VEC_LANES x VEC_PER_LANE x VEC_WIDTH vectors at most.
 */
#if !defined(VEC_LANES) || !defined(VEC_PER_LANE)
#error "VEC_LANES and VEC_PER_LANE must be defined"
#endif
#if VEC_LANES < 1 || (VEC_LANES & (VEC_LANES - 1)) != 0 || WARP % VEC_LANES != 0
#error "VEC_LANES must be a power of two dividing WARP"
#endif
#ifndef VEC_WIDTH
#define VEC_WIDTH 1
#endif
#if VEC_WIDTH == 1
typedef real_t realv_t;
#elif VEC_WIDTH == 2
typedef real2_t realv_t;
#elif VEC_WIDTH == 4
typedef real4_t realv_t;
#else
#error "VEC_WIDTH must be 1, 2 or 4"
#endif
/* A run of vectors at element `at`: one load or store of VEC_WIDTH elements. */
#define RUN(p, at) (*(__global realv_t *)((p) + (at)))
#define X_RUN(at) (*(__global const realv_t *)(x + (at)))
#define ENTRY_GROUPS (WARP / VEC_LANES)
#define HOLES (KERNEL == CMRS_KERNEL_MODULO || KERNEL == CMRS_KERNEL_SLICE)
#define ROW_WALK (KERNEL == CMRS_KERNEL_SLICE)
#define SPMM_SLOTS (!ROW_WALK && (HEIGHT > 1 || ENTRY_GROUPS > 1))

/* Vectors a launch covers at most: the width of a tile's partial sums of a row. */
#define LAUNCH_VECTORS (VEC_LANES * VEC_PER_LANE * VEC_WIDTH)

/* In the order of enum cmrs_spmm_arg (cmrs_abi.h). Element (i, j) of X is
 * x[i * x_row + j * x_vec] (row-major: x_row = ld, x_vec = 1), of Y likewise; the launch
 * takes vectors vec_begin .. vec_end - 1. */
#define CMRS_SPMM_PARAMS                                                                           \
    const uint rows, const uint strips, const uint tiles, const uint tile_entries,                 \
        __global const index_t *restrict strip_ptr, __global const uint *restrict col_ind,         \
        __global const uchar *restrict row_in_strip, __global const stored_t *restrict val,        \
        __global const index_t *restrict tile_start, __global const uint *restrict tile_strip,     \
        __global real_t *restrict partial, __global const real_t *restrict x,                      \
        const ulong x_row, const ulong x_vec, __global real_t *restrict y, const ulong y_row,      \
        const ulong y_vec, const uint vec_begin, const uint vec_end, const real_t alpha,           \
        const real_t beta

/* A run of Y leaves: alpha and beta applied; with beta == 0, Y is not read. */
INLINE void store_block(__global real_t *y, ulong at, realv_t sum, real_t alpha, real_t beta)
{
    RUN(y, at) = beta == (real_t)0 ? alpha * sum : alpha * sum + beta * RUN(y, at);
}

/* Row r of a strip or tile, run (q, v): the tile's partial sums, or Y's elements. */
INLINE void emit(bool tile, uint item, uint strip, uint r, uint q, uint v, bool on, realv_t sum,
                 uint rows, __global real_t *partial, __global real_t *y, ulong y_row,
                 ulong y_vec, uint vec_begin, real_t alpha, real_t beta)
{
    const uint slot = (q * VEC_LANES + v) * VEC_WIDTH, row = strip * HEIGHT + r;
    if (tile)
        RUN(partial, ((ulong)item * HEIGHT + r) * LAUNCH_VECTORS + slot) = sum;
    else if (on && row < rows)
        store_block(y, (ulong)row * y_row + (ulong)(vec_begin + slot) * y_vec, sum, alpha, beta);
}

__kernel CMRS_KERNEL_ATTRIBUTES void cmrs_spmm(CMRS_SPMM_PARAMS)
{
    const uint lane = warp_lane();
    const uint group = lane / VEC_LANES, v = lane % VEC_LANES;
    /* the tiles of long strips first (their chains of loads are the longest), then the
     * strips; a long strip's own warp, a padding tile and warps past the end have nothing
     * to do, but make every warp_sync */
    const uint item = get_group_id(0) * WARPS_PER_GROUP + warp_index();
    const bool tile = item < tiles;
    uint strip = CMRS_NO_STRIP;
    index_t begin = 0, end = 0;
    if (tile) {
        strip = tile_strip[item];
        if (strip != CMRS_NO_STRIP) {
            begin = tile_start[item];
            end = min(begin + tile_entries, strip_ptr[strip + 1] & ENTRY_MASK);
        }
    } else if (item - tiles < strips) {
        const index_t b = strip_ptr[item - tiles];
        strip = (b & LONG_STRIP) ? CMRS_NO_STRIP : item - tiles;
        begin = b & ENTRY_MASK;
        end = strip == CMRS_NO_STRIP ? begin : strip_ptr[strip + 1] & ENTRY_MASK;
    }
    const bool active = strip != CMRS_NO_STRIP;
    /* this lane's vectors: which are in the launch, and where they start in X */
    bool on[VEC_PER_LANE];
    ulong x_at[VEC_PER_LANE];
#pragma unroll
    for (uint q = 0; q < VEC_PER_LANE; ++q) {
        const uint vec = vec_begin + (q * VEC_LANES + v) * VEC_WIDTH;
        on[q] = vec < vec_end;
        x_at[q] = (ulong)vec * x_vec;
    }
#define Y_AT(row, q)                                                                               \
    ((ulong)(row)*y_row + (ulong)(vec_begin + ((q)*VEC_LANES + v) * VEC_WIDTH) * y_vec)

#if ROW_WALK
    /* ---- rows: group g walks its rows, SLICE_AHEAD words at a time (spmv_common.cl) ---- */
    for (uint r = group; active && r < HEIGHT; r += ENTRY_GROUPS) {
        uint column = FIRST_COLUMN(strip);
        (void)column;
        realv_t sum[VEC_PER_LANE];
#pragma unroll
        for (uint q = 0; q < VEC_PER_LANE; ++q)
            sum[q] = (realv_t)0;
        for (index_t j = begin + r; j < end; j += SLICE_AHEAD * HEIGHT) {
            uint w[SLICE_AHEAD];
#pragma unroll
            for (int t = 0; t < SLICE_AHEAD; ++t)
                w[t] = j + t * HEIGHT < end ? LOAD_WORD(j + t * HEIGHT) : HOLE_WORD;
#pragma unroll
            for (int t = 0; t < SLICE_AHEAD; ++t) {
                if (NO_ENTRY(w[t])) {
                    SKIP(w[t]);
                    continue;
                }
                const uint col = NEXT_COLUMN(w[t]);
                const real_t a = VALUE_AT(j + t * HEIGHT, w[t], col);
#pragma unroll
                for (uint q = 0; q < VEC_PER_LANE; ++q)
                    if (on[q])
                        sum[q] += a * X_RUN((ulong)col * x_row + x_at[q]);
            }
        }
        const uint row = strip * HEIGHT + r;
#pragma unroll
        for (uint q = 0; q < VEC_PER_LANE; ++q)
            if (on[q] && row < rows)
                store_block(y, Y_AT(row, q), sum[q], alpha, beta);
    }
#else
    /* ---- positions: group g takes every ENTRY_GROUPS-th entry of the strip ---- */
#if SPMM_SLOTS
    __local realv_t slots[WARPS_PER_GROUP * HEIGHT * VEC_PER_LANE * WARP];
    __local realv_t *base = slots + warp_index() * (HEIGHT * VEC_PER_LANE * WARP);
#define SLOT(r, q) base[((r)*VEC_PER_LANE + (q)) * WARP + lane]
#endif
    realv_t sum[VEC_PER_LANE]; /* HEIGHT 1: the row's sums stay in registers */
#pragma unroll
    for (uint q = 0; q < VEC_PER_LANE; ++q)
        sum[q] = (realv_t)0;
#if HEIGHT > 1
    for (uint r = 0; r < HEIGHT; ++r)
#pragma unroll
        for (uint q = 0; q < VEC_PER_LANE; ++q)
            SLOT(r, q) = (realv_t)0;
#define ADD_TO(r, q, p) SLOT(r, q) += (p)
#else
#define ADD_TO(r, q, p) sum[q] += (p)
#endif
    /* Entry j + t*ENTRY_GROUPS of this group: its value (0 for a hole), row and X loads,
     * all issued before the first add needs one. */
#define ENTRY(t)                                                                                   \
    const index_t j##t = j + (t)*ENTRY_GROUPS;                                                     \
    const uint3 e##t = entry_at(col_ind, j##t, row_in_strip, strips, first);                       \
    const bool real##t = !HOLES || e##t.z != CMRS_HOLE;                                            \
    const real_t a##t = real##t ? VALUE_AT(j##t, e##t.z, e##t.x) : (real_t)0;                      \
    realv_t x##t[VEC_PER_LANE];                                                                    \
    for (uint q = 0; q < VEC_PER_LANE; ++q)                                                        \
        x##t[q] = real##t && on[q] ? X_RUN((ulong)e##t.x * x_row + x_at[q]) : (realv_t)0;
#define ADD(t)                                                                                     \
    if (real##t)                                                                                   \
        for (uint q = 0; q < VEC_PER_LANE; ++q)                                                    \
            ADD_TO(e##t.y, q, a##t * x##t[q]);
    /* a strip's narrow offsets: what each 16-bit word adds up to its 32-bit word */
    const uint first = active ? STRIP_FIRST(strip) : 0u;
    index_t j = begin + group;
    for (; j + 3 * ENTRY_GROUPS < end; j += 4 * ENTRY_GROUPS) {
        ENTRY(0)
        ENTRY(1)
        ENTRY(2)
        ENTRY(3)
        ADD(0)
        ADD(1)
        ADD(2)
        ADD(3)
    }
    for (; j < end; j += ENTRY_GROUPS) {
        ENTRY(0)
        ADD(0)
    }
#if SPMM_SLOTS
#if HEIGHT == 1
#pragma unroll
    for (uint q = 0; q < VEC_PER_LANE; ++q)
        SLOT(0, q) = sum[q];
#endif
    /* The groups' slots added pairwise, group g + width into g: a fixed order. */
    warp_sync();
    for (uint width = ENTRY_GROUPS / 2; width > 0; width >>= 1) {
        if (group < width)
            for (uint r = 0; r < HEIGHT; ++r)
#pragma unroll
                for (uint q = 0; q < VEC_PER_LANE; ++q)
                    SLOT(r, q) += base[((r * VEC_PER_LANE + q) * WARP) + lane + width * VEC_LANES];
        warp_sync();
    }
    /* group 0's slots hold the sums; group g writes rows g, g + ENTRY_GROUPS, ... */
    for (uint r = group; active && r < HEIGHT; r += ENTRY_GROUPS) {
#pragma unroll
        for (uint q = 0; q < VEC_PER_LANE; ++q)
            emit(tile, item, strip, r, q, v, on[q], base[(r * VEC_PER_LANE + q) * WARP + v], rows,
                 partial, y, y_row, y_vec, vec_begin, alpha, beta);
    }
#else /* HEIGHT 1 and one group: the lane holds its row's sums */
#pragma unroll
    for (uint q = 0; q < VEC_PER_LANE; ++q)
        if (active)
            emit(tile, item, strip, 0, q, v, on[q], sum[q], rows, partial, y, y_row, y_vec,
                 vec_begin, alpha, beta);
#endif
#endif
}

/* The long strips' rows: work-item (s, r, slot) where tile s is the first of its strip adds
 * that strip's tiles' partial sums of row r in tile order (they are consecutive; padding
 * tiles are CMRS_NO_STRIP) and writes Y - the same order every run. Arguments in the order
 * of enum cmrs_spmm_combine_arg. */
__kernel void cmrs_spmm_combine(const uint rows, const uint tiles,
                                __global const uint *restrict tile_strip,
                                __global const real_t *restrict partial,
                                __global real_t *restrict y, const ulong y_row, const ulong y_vec,
                                const uint vec_begin, const uint vec_end, const real_t alpha,
                                const real_t beta)
{
    const ulong i = get_global_id(0);
    const uint slot = i % LAUNCH_VECTORS, r = (i / LAUNCH_VECTORS) % HEIGHT;
    const ulong s = i / LAUNCH_VECTORS / HEIGHT;
    if (s >= tiles || vec_begin + slot >= vec_end)
        return;
    const uint strip = tile_strip[s];
    if (strip == CMRS_NO_STRIP || (s > 0 && tile_strip[s - 1] == strip))
        return;
    const uint row = strip * HEIGHT + r;
    if (row >= rows)
        return;
    real_t sum = 0;
    for (ulong t = s; t < tiles && tile_strip[t] == strip; ++t)
        sum += partial[(t * HEIGHT + r) * LAUNCH_VECTORS + slot];
    const ulong at = (ulong)row * y_row + (ulong)(vec_begin + slot) * y_vec;
    y[at] = beta == (real_t)0 ? alpha * sum : alpha * sum + beta * y[at];
}
