/* cmrs_segment.cl - the segment family, for short rows (spmv_common.cl comes first).
 *
 * Algorithm 1 gives every lane HEIGHT slots in local memory: each strip then pays HEIGHT
 * stores to clear them, HEIGHT loads and a HEIGHT-row reduction, however few products it
 * holds - most of the work when rows are short (mu of a few), and it caps HEIGHT at what
 * local memory allows. Here the strip's entries are in row order (CSR order within the
 * strip, the CMRS "rows" order), so each row is one contiguous run of entries. A warp walks
 * the strip WARP entries at a time; each lane forms its product, and a segmented suffix
 * scan of warp shuffles, restarted at every row change, leaves each run's sum in the run's
 * first lane. Complete runs are written at once; the run that reaches the last lane may go
 * on in the next step and is carried over. Nothing per row lives in local memory, so HEIGHT
 * can be large (one warp for 32..256 short rows), limited only by the packing's ROW_BITS.
 * Rows without entries are written too (alpha*0 + beta*y): a run's head also covers the
 * rows between the previous run and its own.
 *
 * The same walk over a tile of a long strip writes each of the tile's HEIGHT row sums
 * (zero for rows it does not touch) to `partial` for cmrs_combine.
 *
 * Warp primitives: REDUCE 2 uses NVIDIA's shfl.sync / vote.sync (WARP must be 32);
 * REDUCE 1 emulates them in local memory with barriers, which needs one warp per group.
 * The summation order is fixed by the lane pattern, so results are the same every run.
 */
#if REDUCE == 2
#if WARP != 32
#error "the segment kernel's warp shuffles need WARP == 32"
#endif
#define SHUFFLE_UP_U32(v, d) shuffle_up_u32(v, d)
#define SHUFFLE_IDX_U32(v, s) shuffle_idx_u32(v, s)
#define SHUFFLE_DOWN(v, d) shuffle_down(v, d)
#define SHUFFLE_IDX(v, s) shuffle_idx(v, s)
#define BALLOT(p) warp_ballot(p)
#elif REDUCE == 1
#if WG_SIZE != WARP
#error "the segment kernel's local-memory warp emulation needs WG_SIZE == WARP"
#endif
/* Emulated warp primitives: write, barrier, read the partner's value, barrier. The group is
 * one warp and every loop below is uniform over it, so every work-item meets every barrier. */
static inline uint emu_up_u32(__local uint *su, uint lane, uint v, uint d)
{
    su[lane] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint r = lane >= d ? su[lane - d] : v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
static inline uint emu_idx_u32(__local uint *su, uint lane, uint v, uint s)
{
    su[lane] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint r = su[s];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
static inline real_t emu_down(__local real_t *sv, uint lane, real_t v, uint d)
{
    sv[lane] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    const real_t r = lane + d < WARP ? sv[lane + d] : v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
static inline real_t emu_idx(__local real_t *sv, uint lane, real_t v, uint s)
{
    sv[lane] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    const real_t r = sv[s];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
static inline uint emu_ballot(__local uint *su, uint lane, bool p)
{
    su[lane] = p ? 1u << lane : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint m = 0;
    for (uint l = 0; l < WARP; ++l)
        m |= su[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    return m;
}
#define SHUFFLE_UP_U32(v, d) emu_up_u32(su, lane, v, d)
#define SHUFFLE_IDX_U32(v, s) emu_idx_u32(su, lane, v, s)
#define SHUFFLE_DOWN(v, d) emu_down(sv, lane, v, d)
#define SHUFFLE_IDX(v, s) emu_idx(sv, lane, v, s)
#define BALLOT(p) emu_ballot(su, lane, p)
#else
#error "the segment kernel supports REDUCE 1 (local emulation) and 2 (NVIDIA shuffles)"
#endif

#if WARP > 32
#error "the segment kernel's ballot holds at most 32 lanes"
#endif

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
cmrs_spmv(const uint rows, const uint strips, const uint strip_groups, const uint tiles,
          const uint tile_entries, __global const uint *restrict strip_ptr,
          __global const uint *restrict col_ind, __global const uchar *restrict row_in_strip,
          __global const real_t *restrict val, __global const uint *restrict tile_start,
          __global const uint *restrict tile_strip, __global real_t *restrict partial,
          __global const real_t *restrict x, __global real_t *restrict y, const real_t alpha,
          const real_t beta)
{
    const uint lane = get_local_id(0) % WARP;
    const uint warp = get_local_id(0) / WARP;
    const work w =
        find_work(warp, strips, strip_groups, tiles, tile_entries, strip_ptr, tile_start, tile_strip);
#if REDUCE == 1
    __local real_t sv[WARP];
    __local uint su[WARP];
#endif
    /* The open run of the previous step: its row (-1: none yet) and its sum so far. */
    int carry_row = -1;
    real_t carry = 0;
    for (uint base = w.begin; base < w.end; base += WARP) {
        const uint j = base + lane;
        uint r = HEIGHT; /* lanes past the end form a sentinel run of row HEIGHT */
        real_t p = 0;
        if (j < w.end) {
            const uint c = entry_column(col_ind, j, &r, row_in_strip);
            p = load_value(val + j) * x[c];
        }
        const uint below = SHUFFLE_UP_U32(r, 1);
        const int prev_row = lane == 0 ? carry_row : (int)below;
        const bool head = lane == 0 || r != below;
        const uint heads = BALLOT(head);
        /* My run ends where the next head is (or at the last lane). */
        const uint above = heads & ~((2u << lane) - 1u);
        const uint run_end = above ? 31 - clz(above & (0u - above)) : WARP;
        for (uint d = 1; d < WARP; d <<= 1) {
            const real_t t = SHUFFLE_DOWN(p, d);
            if (lane + d < run_end)
                p += t;
        }
        const uint last = 31 - clz(heads); /* head of the run that may go on */
        if (lane == 0) {
            if ((int)r == carry_row)
                p += carry;
            else if (carry_row >= 0)
                emit_row(&w, (uint)carry_row, carry, rows, y, partial, alpha, beta);
        }
        if (head) {
            for (int q = prev_row + 1; q < (int)r; ++q) /* rows without entries */
                emit_row(&w, (uint)q, 0, rows, y, partial, alpha, beta);
            if (lane != last)
                emit_row(&w, r, p, rows, y, partial, alpha, beta);
        }
        carry = SHUFFLE_IDX(p, last);
        carry_row = (int)SHUFFLE_IDX_U32(r, last);
    }
    if (!w.active)
        return;
    if (lane == 0 && carry_row >= 0 && carry_row < HEIGHT)
        emit_row(&w, (uint)carry_row, carry, rows, y, partial, alpha, beta);
    for (int q = carry_row + 1 + (int)lane; q < HEIGHT; q += WARP) /* trailing empty rows */
        emit_row(&w, (uint)q, 0, rows, y, partial, alpha, beta);
}
