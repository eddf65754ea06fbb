/* cmrs_strip.cl - the strip family: y = alpha*A*x + beta*y for A in CMRS, Algorithm 1 of
 * Koza et al. (2014), generalised (after spmv_common.cl and the warp layer, warp.cl).
 *
 * One warp of WARP work-items takes one strip of HEIGHT rows (or one tile of a long strip).
 * WARP may be narrower than the hardware warp: several strips then share it. Each
 * work-item sums its products into its own HEIGHT slots of local memory (slot of row r at
 * [r][lane]: a lane only ever touches its own slots, so accumulating needs no
 * synchronisation, and the lanes of a warp always hit distinct banks). HEIGHT 1 keeps the
 * single sum in a register: that is CSR-vector (WARP lanes per row) and, with WARP 1,
 * CSR-scalar - the paper's baselines, in the same runtime.
 *
 * The warp then reduces its HEIGHT x WARP partial sums to HEIGHT row sums, through the warp
 * layer:
 *   with genuine shuffles (NVIDIA PTX, sub-groups): a reduce-scatter butterfly of xor
 *     shuffles in registers, HEIGHT_POW2 - 1 shuffles for all rows (HEIGHT up to 32 and at
 *     most WARP), else each row's own butterfly;
 *   without (LOCAL): a tree in local memory, a warp_sync (a group barrier) between steps.
 * Either way the order of the additions is fixed by the lanes, so results are the same
 * every run.
 *
 * Narrow columns (COLUMN_BITS 16, host/format/cmrs_narrow.c): each entry's 16-bit word holds
 * its offset from the strip's first column, its dictionary index and its row in as few bits
 * as HEIGHT needs (NARROW_ROW_BITS), decoded by entry_at on its own - for strips whose
 * columns span less than the 16 - NARROW_ROW_BITS - DICT_BITS bits left (dense rows): 2
 * bytes of column an entry instead of 4.
 */
#define SLOTS (HEIGHT > 1 || !WARP_HAS_SHUFFLE)
#if DOTS_WARP_SUMS && (GROUP_COMBINE || !WARP_HAS_SHUFFLE)
#error "a solver's terms by lanes: rows written by shuffles' lanes, none by the group"
#endif

/* ---- with shuffles: butterflies of xor shuffles ---- */
#if WARP_HAS_SHUFFLE
/* HEIGHT rounded up to a power of two: the butterfly halves the rows at each step. */
#if HEIGHT <= 1
#define HEIGHT_POW2 1
#elif HEIGHT <= 2
#define HEIGHT_POW2 2
#elif HEIGHT <= 4
#define HEIGHT_POW2 4
#elif HEIGHT <= 8
#define HEIGHT_POW2 8
#elif HEIGHT <= 16
#define HEIGHT_POW2 16
#elif HEIGHT <= 32
#define HEIGHT_POW2 32
#else
#define HEIGHT_POW2 0 /* taller: a butterfly per row */
#endif
/* One butterfly for all rows needs a lane per row at the end. */
#define ROWS_BUTTERFLY (HEIGHT_POW2 > 0 && HEIGHT_POW2 <= WARP)

/* The butterfly below is straight-line code with literal indices into v[], so v[] is
 * promoted to registers before any optimisation runs. Written as loops, the compiler
 * folds `upper ? v[i] : v[i + N]` into a load from a selected address, and that dynamic
 * index keeps v[] in (slow, per-thread) stack memory: seen in clang's PTX and measured as
 * a 2-3x slower kernel on an H200 for HEIGHT 9..16.
 *
 * ELEM: rows i and i + N of a lane's half [0, 2N); the lane keeps the half selected by its
 * lane bit O and adds the partner's copy of that half. */
#define ELEM(i, N, O)                                                                              \
    {                                                                                              \
        const real_t lo_ = v[i], hi_ = v[(i) + (N)];                                               \
        v[i] = (upper ? hi_ : lo_) + warp_shuffle_xor(upper ? lo_ : hi_, (O));                     \
    }
#define ELEMS1(N, O) ELEM(0, N, O)
#define ELEMS2(N, O) ELEMS1(N, O) ELEM(1, N, O)
#define ELEMS4(N, O) ELEMS2(N, O) ELEM(2, N, O) ELEM(3, N, O)
#define ELEMS8(N, O) ELEMS4(N, O) ELEM(4, N, O) ELEM(5, N, O) ELEM(6, N, O) ELEM(7, N, O)
#define ELEMS16(N, O)                                                                              \
    ELEMS8(N, O) ELEM(8, N, O) ELEM(9, N, O) ELEM(10, N, O) ELEM(11, N, O) ELEM(12, N, O)          \
        ELEM(13, N, O) ELEM(14, N, O) ELEM(15, N, O)
#define STEP(N, O)                                                                                 \
    {                                                                                              \
        const bool upper = (lane & (O)) != 0;                                                      \
        ELEMS##N(N, O)                                                                             \
    }
#define LOAD(r) v[r] = (r) < HEIGHT ? mine[(r)*WARP] : (real_t)0;
#define LOADS4(b) LOAD(b) LOAD((b) + 1) LOAD((b) + 2) LOAD((b) + 3)

#if ROWS_BUTTERFLY
/* Reduce-scatter: HEIGHT_POW2 - 1 shuffles leave each lane one row; plain xor steps then
 * sum the WARP / HEIGHT_POW2 lanes sharing that row. Lane l ends with row
 * l / (WARP / HEIGHT_POW2). `first` is the register sum when HEIGHT is 1. Returns the row of
 * the strip this lane wrote to y, HEIGHT where none, *written its value (a solver's terms by
 * lanes, dots.cl, DOTS_LANE_ROW). */
INLINE uint reduce_shuffle(__local const real_t *mine, real_t first, uint lane, const work *w,
                           uint rows, __global real_t *y, __global real_t *partial, real_t alpha,
                           real_t beta, real_t *written)
{
    real_t v[HEIGHT_POW2 < 4 ? 4 : HEIGHT_POW2];
#if HEIGHT == 1
    v[0] = first;
#else
    LOADS4(0)
#endif
#if HEIGHT_POW2 >= 8
    LOADS4(4)
#endif
#if HEIGHT_POW2 >= 16
    LOADS4(8) LOADS4(12)
#endif
#if HEIGHT_POW2 >= 32
    LOADS4(16) LOADS4(20) LOADS4(24) LOADS4(28)
#endif
#if HEIGHT_POW2 == 32
    STEP(16, WARP / 2) STEP(8, WARP / 4) STEP(4, WARP / 8) STEP(2, WARP / 16) STEP(1, WARP / 32)
#elif HEIGHT_POW2 == 16
    STEP(8, WARP / 2) STEP(4, WARP / 4) STEP(2, WARP / 8) STEP(1, WARP / 16)
#elif HEIGHT_POW2 == 8
    STEP(4, WARP / 2) STEP(2, WARP / 4) STEP(1, WARP / 8)
#elif HEIGHT_POW2 == 4
    STEP(2, WARP / 2) STEP(1, WARP / 4)
#elif HEIGHT_POW2 == 2
    STEP(1, WARP / 2)
#endif
    for (uint o = WARP / (2 * HEIGHT_POW2); o > 0; o >>= 1)
        v[0] += warp_shuffle_xor(v[0], o);
    const uint lanes_per_row = WARP / HEIGHT_POW2;
    const uint r = lane / lanes_per_row;
    if (!(w->active && lane % lanes_per_row == 0 && r < HEIGHT))
        return HEIGHT;
    *written = emit_row(w, r, v[0], rows, y, partial, alpha, beta);
    return emits_y(w, r, rows) ? r : HEIGHT;
}
#else
#if DOTS_WARP_SUMS
#error "a solver's terms by lanes need a lane a row (ROWS_BUTTERFLY): host/exec/spmv_dots.c"
#endif
/* More rows than lanes, or taller than 32: each row's WARP slots summed by its own
 * butterfly, lane r % WARP writing row r. */
INLINE uint reduce_shuffle(__local const real_t *mine, real_t first, uint lane, const work *w,
                           uint rows, __global real_t *y, __global real_t *partial, real_t alpha,
                           real_t beta, real_t *written)
{
    (void)written;
    for (uint r = 0; r < HEIGHT; ++r) {
        real_t v = mine[r * WARP];
        for (uint o = WARP / 2; o > 0; o >>= 1)
            v += warp_shuffle_xor(v, o);
        if (w->active && lane == r % WARP)
            emit_row(w, r, v, rows, y, partial, alpha, beta);
    }
    return HEIGHT;
}
#endif
#endif /* WARP_HAS_SHUFFLE */

/* ---- without shuffles: a tree in local memory ---- */
#if !WARP_HAS_SHUFFLE
/* At step `width`, slots [width, 2*width) of each row are added into [0, width). Every
 * work-item of the group reaches every warp_sync (a group barrier on this backend). */
INLINE void reduce_local(__local real_t *base, uint lane, const work *w, uint rows,
                         __global real_t *y, __global real_t *partial, real_t alpha, real_t beta)
{
    warp_sync();
    for (uint width = WARP / 2; width > 0; width >>= 1) {
        for (uint k = lane; k < HEIGHT * width; k += WARP) {
            const uint r = k / width, l = k % width;
            base[r * WARP + l] += base[r * WARP + l + width];
        }
        warp_sync();
    }
    for (uint r = lane; w->active && r < HEIGHT; r += WARP)
        emit_row(w, r, base[r * WARP], rows, y, partial, alpha, beta);
}
#endif /* !WARP_HAS_SHUFFLE */

/* Entry j + k*WARP of this lane: product and row; then its sum, in a register when HEIGHT
 * is 1, else in the lane's slot of its row. */
#define ENTRY(k)                                                                                   \
    const uint3 e##k = entry_at(col_ind, j + (k)*WARP, row_in_strip, strips, first);               \
    const uint r##k = e##k.y;                                                                      \
    const real_t p##k =                                                                            \
        VALUE_AT(j + (k)*WARP, e##k.z, e##k.x) * GATHER(e##k.x, w.strip * HEIGHT + e##k.y);
#if HEIGHT == 1
#define ADD(k) sum += p##k;
#else
#define ADD(k) mine[r##k * WARP] += p##k;
#endif

__kernel CMRS_KERNEL_ATTRIBUTES void cmrs_spmv(CMRS_SPMV_PARAMS DOTS_PARAMS)
{
    DOTS_SCRATCH
    LAST_COMBINE_SCRATCH
    DOTS_RETURN_IF_STOPPED();
    const uint lane = warp_lane();
    const uint warp = warp_index();
#if SLOTS
    __local real_t slots[WARPS_PER_GROUP * HEIGHT * WARP];
    __local real_t *base = slots + warp * (HEIGHT * WARP);
    __local real_t *mine = base + lane;
#else
    __local real_t *mine = 0;
#endif
    DOTS_GROUP_BEGIN();
    FOR_GROUPS(group)
    {
        work w;
        find_work(&w, group, warp, strips, first_tile_group, tiles, tile_entries, strip_ptr,
                  tile_start, tile_strip);
        /* narrow offsets: what each 16-bit word of the strip adds up to its 32-bit word */
        const uint first = w.active ? STRIP_FIRST(w.strip) : 0u;
        real_t sum = 0; /* HEIGHT 1: the row's sum stays in a register */
#if HEIGHT > 1
        for (uint r = 0; r < HEIGHT; ++r)
            mine[r * WARP] = (real_t)0;
#endif
        /* Four entries per lane at a time: all their loads (column, value, then x) in flight
         * before the first sum needs one. */
        index_t j = w.begin + lane;
        for (; j + 3 * WARP < w.end; j += 4 * WARP) {
            ENTRY(0)
            ENTRY(1)
            ENTRY(2)
            ENTRY(3)
            ADD(0)
            ADD(1)
            ADD(2)
            ADD(3)
        }
        for (; j < w.end; j += WARP) {
            ENTRY(0)
            ADD(0)
        }
#if WARP_HAS_SHUFFLE
        real_t written = 0;
        const uint wrote = reduce_shuffle(mine, sum, lane, &w, rows, y, partial, alpha, beta,
                                          &written);
        DOTS_LANE_ROW(wrote, w.strip * HEIGHT + wrote, written);
#else
#if HEIGHT == 1
        mine[0] = sum;
#endif
        reduce_local(base, lane, &w, rows, y, partial, alpha, beta);
#endif
        combine_in_group(&w, first_tile_group, rows, tiles, tile_strip, partial, y, alpha, beta);
        COMBINE_LAST(&w);
        DOTS_OF_GROUP(&w);
    }
    DOTS_GROUP_END();
}
