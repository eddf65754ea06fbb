/* combine.cl - the sums of the long strips' tiles (the split path), in a fixed order: in
 * the tiles' own work-group (combine_in_group, GROUP_COMBINE) or by the cmrs_combine kernel
 * (after spmv_common.cl, warp.cl and dots.cl in every program: with DOTS, cmrs_combine adds
 * the solvers' terms of the rows it writes). */

/* GROUP_COMBINE: the group's tiles have written their partial sums; after the barrier the
 * work-item of (tile slot s, row r), where s is the first of a long strip's tiles, adds
 * that strip's tiles in tile order - what cmrs_combine does, so the same bits - and writes
 * the row. No second kernel, no atomics. Every group passes the barrier, strips' groups
 * too: behind the group's role (uniform, so legal) PoCL 3.1 let the tiles read partial
 * sums not yet written (warps of 8 lanes, tests/test_kernel.c split_strip). */
INLINE void combine_in_group(const work *w, uint first_tile_group, uint rows, uint tiles,
                             __global const uint *tile_strip, __global const real_t *partial,
                             __global real_t *y, real_t alpha, real_t beta)
{
#if GROUP_COMBINE
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (!w->tile)
        return;
    const uint first = (get_group_id(0) - first_tile_group) * WARPS_PER_GROUP;
    const uint end = min(first + WARPS_PER_GROUP, tiles);
    for (uint i = get_local_id(0); i < WARPS_PER_GROUP * HEIGHT; i += WG_SIZE) {
        const uint s = first + i / HEIGHT, r = i % HEIGHT;
        const uint strip = s < end ? tile_strip[s] : CMRS_NO_STRIP;
        if (strip == CMRS_NO_STRIP || (s > first && tile_strip[s - 1] == strip))
            continue;
        const uint row = strip * HEIGHT + r;
        real_t sum = 0;
        for (uint t = s; t < end && tile_strip[t] == strip; ++t)
            sum += partial[(index_t)t * HEIGHT + r];
        if (row < rows)
            store_row(y, row, sum, alpha, beta);
    }
#endif
}

/* The long strips: each of the HEIGHT rows of long strip k sums its tiles' partial sums
 * first_tile[k] .. first_tile[k+1]-1 in tile order - the same order every run. Arguments in
 * the order of enum cmrs_combine_arg. (Not in the fused CG iteration's program: the slice
 * family it belongs to never splits a strip.) */
#if !CG_FUSED
__kernel void cmrs_combine(const uint rows, const uint long_strips,
                           __global const uint *restrict long_strip,
                           __global const uint *restrict first_tile,
                           __global const real_t *restrict partial, __global real_t *restrict y,
                           const real_t alpha,
                           const real_t beta DOTS_PARAMS COMBINE_DOTS_X)
{
#if DOTS /* the solvers' epilogue (dots.cl) over the rows of this group's work-items */
    __local real4_t scratch[CMRS_COMBINE_GROUP];
    DOTS_RETURN_IF_STOPPED();
    real4_t acc = (real4_t)0;
#endif
    const uint i = get_global_id(0);
    const uint k = i / HEIGHT, r = i % HEIGHT;
    const uint row = i < long_strips * HEIGHT ? long_strip[k] * HEIGHT + r : rows;
    if (row < rows) {
        real_t sum = 0;
        for (uint t = first_tile[k]; t < first_tile[k + 1]; ++t)
            sum += partial[(index_t)t * HEIGHT + r];
        const real_t yv = store_row(y, row, sum, alpha, beta);
#if DOTS
        acc = dots_terms(acc, x, dot_w, row, yv);
#else
        (void)yv;
#endif
    }
#if DOTS
    dots_store(acc, ws, dots_at, scratch, CMRS_COMBINE_GROUP);
#endif
}
#endif
