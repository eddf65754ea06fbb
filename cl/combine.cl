/* combine.cl - the sums of the long strips' tiles (the split path), in a fixed order: in
 * the tiles' own work-group (combine_in_group, GROUP_COMBINE), in the work-group that finishes
 * a strip's last tile (combine_last, LAST_COMBINE) or by the cmrs_combine kernel (after
 * spmv_common.cl, warp.cl and dots.cl in every program: with DOTS, each adds the solvers'
 * terms of the rows it writes). */

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

/* LAST_COMBINE: after a tiles' work-group has written its partial sums, its work-item 0 counts
 * the group's tiles of each strip in the strip's counter (an atomic add; the counters follow
 * the partial sums in their buffer, one a tile, that of the strip's first tile used). The
 * group whose add completes the count has every tile's sums and adds them up: its work-items
 * share a row's tiles in turn (item q of a row takes tiles q, q + LAST_SHARES, ...), then the
 * row's work-item adds the shares in order - a fixed order whichever group it is, so the same
 * bits run after run - writes the row and sets the counter back to 0 for the next launch. No
 * second kernel, and no tile waits for another: a strip of thousands of tiles is combined by
 * a whole work-group, where cmrs_combine gives a row one work-item.
 * It needs the other groups' stores visible to this group's loads within the launch: after the
 * group's barrier its work-item 0 fences the group's stores before the count (cumulative, as a
 * grid-wide barrier's release is), the reads go past any cache that may hold the partial sums
 * of an earlier launch (volatile), and the host builds it only where that holds
 * (host/plan/plan_split.c, cmrs_plan_tiles_fence: NVIDIA, with PTX's device-wide fence, and
 * CPUs, whose caches are coherent). With DOTS the strip's terms go to the real4 of its first
 * tile after the work-groups' (dots_store's extra), the other tiles' set to 0 by their own
 * groups: the next kernel adds them in index order, as it does the groups'. */
#ifndef LAST_COMBINE
#define LAST_COMBINE 0
#endif
/* A long strip's row written with its tiles' sum; with DOTS its terms added to acc. */
#if DOTS
#define COMBINED_ROW(acc, row, sum)                                                                \
    acc = dots_terms(acc, x, dot_w, row, store_row(y, row, sum, alpha, beta))
#else
#define COMBINED_ROW(acc, row, sum) store_row(y, row, sum, alpha, beta)
#endif
#if LAST_COMBINE
#if DOTS_WARP_SUMS
#error "the last tile's combine shares the work-group's dots scratch, which DOTS_WARP_SUMS has not"
#endif
#if FENCE_PTX
#define DEVICE_FENCE() asm volatile("membar.gl;" ::: "memory")
#else
#define DEVICE_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif
/* rows of a strip a pass takes, and the work-items that share each row's tiles */
#define LAST_ROWS (HEIGHT < WG_SIZE ? HEIGHT : WG_SIZE)
#define LAST_SHARES (WG_SIZE / LAST_ROWS)
/* The kernel's local memory for it: the rows' shares, the strips the group completes. With DOTS
 * the shares take the epilogue's scratch, free until the strip's terms are summed: a solver's
 * product then takes no more local memory a group than with the second kernel (a solver's
 * product holds much a group already: more leaves fewer groups resident on a GPU;
 * docs/dev/PERFORMANCE.md, COMBINE_LAST). */
#if DOTS
#define LAST_SHARES_SCRATCH __local real_t *const last_shares = (__local real_t *)dots_scratch;
#else
#define LAST_SHARES_SCRATCH __local real_t last_shares[WG_SIZE];
#endif
#define LAST_COMBINE_SCRATCH LAST_SHARES_SCRATCH __local uint last_done[WARPS_PER_GROUP + 1];
#if DOTS
#define LAST_DOTS_PARAMS                                                                           \
    , __global const real_t *x, __global const real_t *dot_w, __global real_t *ws, uint dots_at,   \
        __local real4_t *dots_scratch
#define LAST_DOTS_ARGS , x, dot_w, ws, dots_at, dots_scratch
#else
#define LAST_DOTS_PARAMS
#define LAST_DOTS_ARGS
#endif

/* Tile t's strip: its first tile (whose counter it counts in) and its number of tiles. */
INLINE uint2 strip_tiles(uint t, uint strip, uint tile_entries, __global const index_t *strip_ptr,
                         __global const index_t *tile_start)
{
    const index_t begin = strip_ptr[strip] & ENTRY_MASK;
    const index_t len = (strip_ptr[strip + 1] & ENTRY_MASK) - begin;
    return (uint2)(t - (uint)((tile_start[t] - begin) / tile_entries),
                   (uint)((len + tile_entries - 1) / tile_entries));
}

INLINE void combine_last(const work *w, uint first_tile_group, uint rows, uint tiles,
                         uint tile_entries, __global const index_t *strip_ptr,
                         __global const index_t *tile_start, __global const uint *tile_strip,
                         __global real_t *partial_, __global real_t *y, real_t alpha, real_t beta,
                         __local real_t *shares, __local uint *done LAST_DOTS_PARAMS)
{
    /* The group's partial sums written. On NVIDIA the strips' groups pass no barrier here (a
     * fenced barrier at the end of every group, tens of thousands of them, made the products
     * markedly slower; docs/dev/PERFORMANCE.md, COMBINE_LAST); elsewhere every group passes
     * it, as in combine_in_group, behind whose group role PoCL 3.1 let the tiles read sums not
     * yet written. */
#if FENCE_PTX
    if (!w->tile) /* the same for the whole group */
        return;
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
#else
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (!w->tile)
        return;
#endif
    volatile __global const real_t *partial = partial_;
    volatile __global uint *count = (volatile __global uint *)(partial_ + (index_t)tiles * HEIGHT);
    const uint l = get_local_id(0);
    if (l == 0) {
        DEVICE_FENCE(); /* ... and out of the group before it counts them */
        const uint first = (w->group - first_tile_group) * WARPS_PER_GROUP;
        const uint end = min(first + WARPS_PER_GROUP, tiles);
        uint completed = 0;
        for (uint s = first, e; s < end; s = e) { /* the group's tiles of one strip: [s, e) */
            const uint strip = tile_strip[s];
            for (e = s + 1; e < end && tile_strip[e] == strip;)
                ++e;
            const uint2 st = strip_tiles(s, strip, tile_entries, strip_ptr, tile_start);
#if DOTS
            for (uint t = max(s, st.x + 1); t < e; ++t) /* the first tile's: the strip's terms */
                vstore4((real4_t)0, get_num_groups(0) + t, ws + dots_at);
#endif
            if (atomic_add(count + st.x, e - s) + (e - s) == st.y)
                done[completed++] = st.x;
        }
        done[WARPS_PER_GROUP] = completed;
        DEVICE_FENCE(); /* the count before the loads of the other groups' sums */
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint completed = done[WARPS_PER_GROUP];
    for (uint d = 0; d < completed; ++d) { /* the same for the whole group */
        const uint t0 = done[d], strip = tile_strip[t0];
        const uint n = strip_tiles(t0, strip, tile_entries, strip_ptr, tile_start).y;
#if DOTS
        real4_t acc = (real4_t)0;
#endif
        for (uint r0 = 0; r0 < HEIGHT; r0 += LAST_ROWS) {
            const uint q = l / LAST_ROWS, r = r0 + l % LAST_ROWS;
            real_t share = 0;
            if (q < LAST_SHARES && r < HEIGHT)
                for (uint t = t0 + q; t < t0 + n; t += LAST_SHARES)
                    share += partial[(index_t)t * HEIGHT + r];
            shares[l] = share;
            barrier(CLK_LOCAL_MEM_FENCE);
            const uint row = strip * HEIGHT + r;
            if (l < LAST_ROWS && r < HEIGHT && row < rows) {
                real_t sum = 0;
                for (uint k = 0; k < LAST_SHARES; ++k)
                    sum += shares[k * LAST_ROWS + l];
                COMBINED_ROW(acc, row, sum);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
#if DOTS
        const real4_t terms = group_sum4(acc, dots_scratch, WG_SIZE);
        if (l == 0)
            vstore4(terms, get_num_groups(0) + t0, ws + dots_at);
#endif
        if (l == 0)
            count[t0] = 0;
    }
}
#define COMBINE_LAST(w)                                                                            \
    combine_last(w, first_tile_group, rows, tiles, tile_entries, strip_ptr, tile_start,            \
                 tile_strip, partial, y, alpha, beta, last_shares, last_done LAST_DOTS_ARGS)
#else
#define LAST_COMBINE_SCRATCH
#define COMBINE_LAST(w)
#endif

/* The long strips: each of the HEIGHT rows of long strip k sums its tiles' partial sums
 * first_tile[k] .. first_tile[k+1]-1 in tile order - the same order every run. Arguments in
 * the order of enum cmrs_combine_arg. (Not in the fused CG iteration's program: the slice
 * family it belongs to never splits a strip.)
 * COMBINE_FOLDS (with DOTS): the kernel also adds up the first kernel's real4s (fold_n at
 * fold_at), a fixed share a work-group, into its own: the solver's next kernel then reads this
 * kernel's few real4s, and no reduction's launch runs between the product and the step - the
 * host gives it work-groups enough for a share of a few real4s a work-item
 * (host/exec/spmv_dots.c). Each work-group adds its share in index order after its rows' terms,
 * the same order every run. */
#if !CG_FUSED
__kernel void cmrs_combine(const uint rows, const uint long_strips,
                           __global const uint *restrict long_strip,
                           __global const uint *restrict first_tile,
                           __global const real_t *restrict partial, __global real_t *restrict y,
                           const real_t alpha, const real_t beta DOTS_PARAMS COMBINE_DOTS_PARAMS)
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
        COMBINED_ROW(acc, row, sum);
    }
#if DOTS
    const uint share = (fold_n + get_num_groups(0) - 1) / get_num_groups(0);
    const uint begin = get_group_id(0) * share, end = min(begin + share, fold_n);
    for (uint u = begin + get_local_id(0); u < end; u += CMRS_COMBINE_GROUP)
        acc += vload4(u, ws + fold_at);
    dots_store_group(acc, ws, dots_at, scratch, CMRS_COMBINE_GROUP);
#endif
}
#endif
