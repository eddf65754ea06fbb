/* cmrs_segment.cl - the segment family, for short and irregular rows (after spmv_common.cl
 * and the warp layer, warp.cl).
 *
 * Algorithm 1 gives every lane HEIGHT slots in local memory: each strip then pays HEIGHT
 * stores to clear them, HEIGHT loads and a HEIGHT-row reduction, however few products it
 * holds - most of the work when rows are short, and it caps HEIGHT at what local memory
 * allows. Here the strip's entries are in row order (the CMRS "rows" order), so each row is
 * one contiguous run of entries, and nothing per row lives in local memory: HEIGHT can be
 * large (one warp for 32..256 short rows), limited only by the packing's ROW_BITS.
 *
 * A warp walks its strip CHUNK = LANE_ENTRIES x WARP entries at a time, lane l taking the
 * LANE_ENTRIES consecutive entries at l x LANE_ENTRIES with one vector load of columns and
 * one of values (the walk starts at the strip's first entry rounded down to a multiple of
 * LANE_ENTRIES; entries before it count as row -1, entries past the end as row HEIGHT).
 *   1. In the lane: runs of equal rows are summed in order. A run that starts and ends in
 *      the lane is complete and written at once; the lane keeps its first run (row
 *      `first`, which may have begun in earlier lanes) and its last run (row `last`, which
 *      may go on in later lanes).
 *   2. Across the warp: a segmented prefix scan of warp shuffles over the lanes' last runs
 *      (segments: lanes with the same `last`) gives each lane the sum of its row from the
 *      segment's start. A lane whose first run ends in it adds the previous lane's prefix
 *      when that lane's last row is its first; a lane whose last row does not go on in the
 *      next lane writes it. The last lane's run goes on into the next chunk as the carry.
 * Rows without entries are written too (alpha*0 + beta*y): whoever sees the gap between
 * two rows writes the rows in it. The same walk over a tile of a long strip writes each of
 * the tile's HEIGHT row sums (zero for rows it does not touch) to `partial`.
 *
 * Build options besides spmv_common.cl's: LANE_ENTRIES (1, 2 or 4; default 4).
 * The lanes talk through the warp layer (warp.cl): NVIDIA shuffles (WARP 32), sub-groups
 * (any width), or, on the LOCAL backend, one work-item per strip (WARP 1: devices without
 * shuffles, and CPUs) or several lanes with the shuffles emulated in local memory between
 * group barriers (one warp per work-group; kept as the portable model of the warp scan that
 * the Oclgrind tests run - the plan never picks it, because PoCL 3.1 gave intermittently wrong
 * sums with it when its work-groups ran on several threads of a loaded machine,
 * docs/dev/PERFORMANCE.md).
 * The summation order is fixed by the lane pattern, so results are the same every run.
 */
#if DOTS_WARP_SUMS
#error "this family's solver product sums by work-group (host/exec/spmv_dots.c)"
#endif
#ifndef LANE_ENTRIES
#define LANE_ENTRIES 4
#endif
#if LANE_ENTRIES != 1 && LANE_ENTRIES != 2 && LANE_ENTRIES != 4
#error "LANE_ENTRIES must be 1, 2 or 4"
#endif
#if LANE_ENTRIES > CMRS_ENTRY_PAD
#error "a lane's vector of entries may reach past nnz by more than the arrays' padding"
#endif
#define CHUNK (LANE_ENTRIES * WARP)
#if REDUCE == CMRS_REDUCE_SHUFFLE && WARP != 32
#error "the segment kernel's NVIDIA shuffles need WARP == 32"
#endif
#if REDUCE == CMRS_REDUCE_LOCAL && WARP > 1 && WG_SIZE != WARP
#error "the segment kernel's local-memory warp emulation needs WG_SIZE == WARP"
#endif

/* The run that reaches the end of a chunk and may go on: its row and its sum so far. */
typedef struct carry_t {
    int row;
    real_t sum;
} carry_t;

/* A row's sum leaves the warp, if the row is one of the strip's (not -1 or HEIGHT). */
INLINE void emit(const work *w, int row, real_t sum, uint rows, __global real_t *y,
                        __global real_t *partial, real_t alpha, real_t beta)
{
    if (row >= 0 && row < HEIGHT)
        emit_row(w, (uint)row, sum, rows, y, partial, alpha, beta);
}

/* Rows strictly between `from` and `to` have no entries. */
INLINE void emit_gap(const work *w, int from, int to, uint rows, __global real_t *y,
                            __global real_t *partial, real_t alpha, real_t beta)
{
    for (int q = max(from + 1, 0); q < min(to, HEIGHT); ++q)
        emit_row(w, (uint)q, 0, rows, y, partial, alpha, beta);
}

/* The lane's LANE_ENTRIES entries from j0 (a multiple of LANE_ENTRIES): rows and products. */
typedef struct lane_entries {
    int r[LANE_ENTRIES];
    real_t p[LANE_ENTRIES];
} lane_entries;

/* A lane's vector of column words at j, and of their values (VALUES_AT: as stored). */
#if LANE_ENTRIES == 4
#define COLUMNS(j) load_index4(col_ind + (j))
#define LANE_VALUES(j, c) VALUES4_AT(j, c)
#elif LANE_ENTRIES == 2
#define COLUMNS(j) load_index2(col_ind + (j))
#define LANE_VALUES(j, c) VALUES2_AT(j, c)
#else
#define COLUMNS(j) load_index(col_ind + (j))
#define LANE_VALUES(j, c) VALUE_AT(j, c, COLUMN_OF(c))
#endif

/* Entry j0 + k of the lane, from component ck of its columns and vk of its values. Written
 * out per component (no loop selecting components by index): Intel's OpenCL compiler got the
 * loop's component selects wrong in kernels of fixed sub-group size (2026.2: products of
 * other entries' values, tests/test_kernel.c segment_packed). */
#if CG_FUSED /* its GATHER reads vectors only the kernel's own arguments hold (cg_fused.cl) */
#error "the fused CG iteration is built for the strip, MODULO and slice families, not this one"
#endif
#if PACKED
#define LANE_ENTRY(k, ck, vk)                                                                      \
    e.r[k] = j0 + (k) < w->begin ? -1 : HEIGHT;                                                    \
    e.p[k] = 0;                                                                                    \
    if (j0 + (k) >= w->begin && j0 + (k) < w->end) {                                               \
        e.r[k] = (int)ROW_OF(ck);                                                                  \
        e.p[k] = (vk)*GATHER(COLUMN_OF(ck), w->strip * HEIGHT + e.r[k]);                           \
    }
#else
#define LANE_ENTRY(k, ck, vk)                                                                      \
    e.r[k] = j0 + (k) < w->begin ? -1 : HEIGHT;                                                    \
    e.p[k] = 0;                                                                                    \
    if (j0 + (k) >= w->begin && j0 + (k) < w->end) {                                               \
        e.r[k] = (int)row_in_strip[j0 + (k)];                                                      \
        e.p[k] = (vk)*GATHER(COLUMN_OF(ck), w->strip * HEIGHT + e.r[k]);                           \
    }
#endif

INLINE void load_lane(lane_entries *out, const work *w, index_t j0, __global const uint *col_ind,
                      __global const uchar *row_in_strip, __global const stored_t *val,
                      __global const real_t *x)
{
    lane_entries e;
    /* Whole vectors: the arrays are padded so the last one stays inside them. */
    const bool any = j0 + LANE_ENTRIES > w->begin && j0 < w->end;
    const uint zero = 0;
#if LANE_ENTRIES == 4
    const uint4 c = any ? COLUMNS(j0) : (uint4)(zero);
    const real4_t v = any ? LANE_VALUES(j0, c) : (real4_t)(0);
    LANE_ENTRY(0, c.s0, v.s0)
    LANE_ENTRY(1, c.s1, v.s1)
    LANE_ENTRY(2, c.s2, v.s2)
    LANE_ENTRY(3, c.s3, v.s3)
#elif LANE_ENTRIES == 2
    const uint2 c = any ? COLUMNS(j0) : (uint2)(zero);
    const real2_t v = any ? LANE_VALUES(j0, c) : (real2_t)(0);
    LANE_ENTRY(0, c.s0, v.s0)
    LANE_ENTRY(1, c.s1, v.s1)
#else
    const uint c = any ? COLUMNS(j0) : zero;
    const real_t v = any ? LANE_VALUES(j0, c) : 0;
    LANE_ENTRY(0, c, v)
#endif
    *out = e;
}

/* Step 1, in the lane: sums the runs in order, writes the complete ones and the gaps
 * between runs, and returns the first run's sum (*first_sum) and the last run's. */
INLINE real_t lane_runs(const lane_entries *e, real_t *first_sum, const work *w,
                               uint rows, __global real_t *y, __global real_t *partial,
                               real_t alpha, real_t beta)
{
    int run = e->r[0];
    real_t sum = e->p[0];
    bool first_done = false;
    *first_sum = 0;
#pragma unroll
    for (uint k = 1; k < LANE_ENTRIES; ++k) {
        if (e->r[k] == run) {
            sum += e->p[k];
            continue;
        }
        if (first_done)
            emit(w, run, sum, rows, y, partial, alpha, beta); /* began and ended here */
        else
            *first_sum = sum, first_done = true;
        emit_gap(w, run, e->r[k], rows, y, partial, alpha, beta);
        run = e->r[k];
        sum = e->p[k];
    }
    if (!first_done)
        *first_sum = sum;
    return sum;
}

/* Steps 1 and 2 for one chunk; updates the carry for the next. */
INLINE void chunk(const lane_entries *e, uint lane, carry_t *carry_io, const work *w, uint rows,
                  __global real_t *y, __global real_t *partial, real_t alpha,
                  real_t beta WARP_SCRATCH_PARAMS)
{
    carry_t carry = *carry_io;
    const int first = e->r[0], last = e->r[LANE_ENTRIES - 1];
    const bool single = first == last;
    real_t first_sum;
    real_t tail = lane_runs(e, &first_sum, w, rows, y, partial, alpha, beta);
    /* The carry joins lane 0's first run, or is complete. */
    if (lane == 0) {
        if (first == carry.row) {
            first_sum += carry.sum;
            tail = single ? first_sum : tail;
        } else {
            emit(w, carry.row, carry.sum, rows, y, partial, alpha, beta);
            emit_gap(w, carry.row, first, rows, y, partial, alpha, beta);
        }
    }
    /* Segmented prefix scan of the tails over lanes with the same last row. */
    const int prev_last = (int)warp_shuffle_up_u32((uint)last, 1);
    const uint start = warp_last_head(lane == 0 || last != prev_last); /* my segment's first */
    for (uint d = 1; d < WARP; d <<= 1) {
        const real_t t = warp_shuffle_up(tail, d);
        if (lane >= start + d)
            tail += t;
    }
    const real_t prev_tail = warp_shuffle_up(tail, 1);
    const int next_first = (int)warp_shuffle_down_u32((uint)first, 1);
    if (lane > 0 && !single) { /* my first run ends here: it may have begun before */
        emit(w, first, first_sum + (prev_last == first ? prev_tail : 0), rows, y, partial, alpha,
             beta);
    }
    if (lane > 0 && prev_last != first)
        emit_gap(w, prev_last, first, rows, y, partial, alpha, beta);
    if (lane == 0 && !single)
        emit(w, first, first_sum, rows, y, partial, alpha, beta);
    if (lane + 1 < WARP && next_first != last) /* my last row does not go on */
        emit(w, last, tail, rows, y, partial, alpha, beta);
    carry.row = (int)warp_shuffle_idx_u32((uint)last, WARP - 1);
    carry.sum = warp_shuffle_idx(tail, WARP - 1);
    *carry_io = carry;
}

__kernel CMRS_KERNEL_ATTRIBUTES void cmrs_spmv(CMRS_SPMV_PARAMS DOTS_PARAMS)
{
    WARP_SCRATCH
    DOTS_SCRATCH
    LAST_COMBINE_SCRATCH
    DOTS_RETURN_IF_STOPPED();
    const uint lane = warp_lane();
    const uint warp = warp_index();
    DOTS_GROUP_BEGIN();
    FOR_GROUPS(group)
    {
        work w;
        find_work(&w, group, warp, strips, first_tile_group, tiles, tile_entries, strip_ptr,
                  tile_start, tile_strip);
        carry_t carry = {-1, 0};
        /* Two chunks at a time: every lane has both chunks' loads in flight before the first
         * sum needs one. */
        const index_t first_entry = w.begin / LANE_ENTRIES * LANE_ENTRIES;
        for (index_t base = first_entry; base < w.end; base += 2 * CHUNK) {
            lane_entries a, b;
            load_lane(&a, &w, base + lane * LANE_ENTRIES, col_ind, row_in_strip, val, x);
            load_lane(&b, &w, base + CHUNK + lane * LANE_ENTRIES, col_ind, row_in_strip, val, x);
            chunk(&a, lane, &carry, &w, rows, y, partial, alpha, beta WARP_SCRATCH_ARGS);
            if (base + CHUNK < w.end) /* uniform over the warp */
                chunk(&b, lane, &carry, &w, rows, y, partial, alpha, beta WARP_SCRATCH_ARGS);
        }
        if (w.active) {
            if (lane == 0)
                emit(&w, carry.row, carry.sum, rows, y, partial, alpha, beta);
            for (int q = max(carry.row, -1) + 1 + (int)lane; q < HEIGHT; q += WARP) /* the gap */
                emit_row(&w, (uint)q, 0, rows, y, partial, alpha, beta);
        }
        combine_in_group(&w, first_tile_group, rows, tiles, tile_strip, partial, y, alpha, beta);
        COMBINE_LAST(&w);
        DOTS_OF_GROUP(&w);
    }
    DOTS_GROUP_END();
}
