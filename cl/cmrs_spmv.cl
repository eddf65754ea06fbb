/* cmrs_spmv.cl - y = alpha*A*x + beta*y for A in CMRS (Koza et al. 2014, Algorithm 1).
 *
 * One warp of WARP work-items processes one strip of HEIGHT rows. Each work-item sums its
 * products into its own HEIGHT private slots in local memory (slot of row r at
 * partial[r][lane]: a lane only ever touches its own column, so the accumulation needs no
 * synchronisation, and lanes of a warp always hit distinct banks whatever their rows).
 * The warp then reduces the HEIGHT x WARP partial sums to HEIGHT row sums:
 *   REDUCE == 1 (local):   a tree in local memory with work-group barriers; any device.
 *   REDUCE == 2 (shuffle): butterfly warp shuffles (NVIDIA inline PTX shfl.sync with a
 *                          full member mask); each lane reads back only its own slots.
 * Neither relies on implicit warp synchrony, which OpenCL does not define.
 *
 * Build options (host/params.c makes them):
 *   HEIGHT        rows per strip, >= 1                                   (required)
 *   WARP          work-items per strip, a power of two                   (required)
 *   WG_SIZE       work-group size, a multiple of WARP                    (required)
 *   VALUE_DOUBLE  1: double values and vectors, 0: float                 (required)
 *   PACKED        1: row in strip in the low CMRS_BITS bits of col_ind   (default 1)
 *   REDUCE        1: local, 2: shuffle                                   (default 1)
 */
#ifndef HEIGHT
#error "HEIGHT (rows per strip) must be defined"
#endif
#ifndef WARP
#error "WARP (work-items per strip) must be defined"
#endif
#ifndef WG_SIZE
#error "WG_SIZE (work-group size) must be defined"
#endif
#ifndef VALUE_DOUBLE
#error "VALUE_DOUBLE (0: float, 1: double) must be defined"
#endif
#ifndef PACKED
#define PACKED 1
#endif
#ifndef REDUCE
#define REDUCE 1
#endif

#define CMRS_BITS 4
#define ROW_MASK ((1u << CMRS_BITS) - 1u)
#define WARPS_PER_GROUP (WG_SIZE / WARP)

#if (WARP & (WARP - 1)) != 0 || WG_SIZE % WARP != 0
#error "WARP must be a power of two dividing WG_SIZE"
#endif
#if PACKED && HEIGHT > (1 << CMRS_BITS)
#error "the packed layout holds at most 16 rows per strip"
#endif

#if VALUE_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real_t;
#else
typedef float real_t;
#endif

/* The BLAS convention: with beta == 0, y is written without being read (it may be NaN). */
inline void store_row(__global real_t *y, uint row, real_t sum, real_t alpha, real_t beta)
{
    y[row] = beta == (real_t)0 ? alpha * sum : alpha * sum + beta * y[row];
}

#if REDUCE == 2
#if WARP != 32
#error "the shuffle reduction needs WARP == 32"
#endif
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
#error "the shuffle reduction supports HEIGHT <= 32"
#endif

inline uint shuffle_xor_u32(uint v, uint lane_mask)
{
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;"
                 : "=r"(r)
                 : "r"(v), "r"(lane_mask));
    return r;
}
#if VALUE_DOUBLE
inline real_t shuffle_xor(real_t v, uint lane_mask)
{
    uint2 u = as_uint2(v);
    u.x = shuffle_xor_u32(u.x, lane_mask);
    u.y = shuffle_xor_u32(u.y, lane_mask);
    return as_double(u);
}
#else
inline real_t shuffle_xor(real_t v, uint lane_mask)
{
    return as_float(shuffle_xor_u32(as_uint(v), lane_mask));
}
#endif

/* The butterfly below is straight-line code with literal indices into v[], so v[] is
 * promoted to registers before any optimisation runs. Written as loops, the compiler
 * folds `upper ? v[i] : v[i + N]` into a load from a selected address, and that dynamic
 * index keeps v[] in (slow, per-thread) stack memory: seen in clang's PTX and measured as
 * a 2-3x slower kernel on an H200 for HEIGHT 9..16.
 *
 * ELEM: rows i and i + N of a lane's half [0, 2N); the lane keeps the half selected by its
 * lane bit O and adds the partner's copy of that half. */
#define ELEM(i, N, O)                                                                  \
    {                                                                                  \
        const real_t lo_ = v[i], hi_ = v[(i) + (N)];                                   \
        v[i] = (upper ? hi_ : lo_) + shuffle_xor(upper ? lo_ : hi_, (O));              \
    }
#define ELEMS1(N, O) ELEM(0, N, O)
#define ELEMS2(N, O) ELEMS1(N, O) ELEM(1, N, O)
#define ELEMS4(N, O) ELEMS2(N, O) ELEM(2, N, O) ELEM(3, N, O)
#define ELEMS8(N, O) ELEMS4(N, O) ELEM(4, N, O) ELEM(5, N, O) ELEM(6, N, O) ELEM(7, N, O)
#define ELEMS16(N, O)                                                                  \
    ELEMS8(N, O) ELEM(8, N, O) ELEM(9, N, O) ELEM(10, N, O) ELEM(11, N, O) ELEM(12, N, O) \
        ELEM(13, N, O) ELEM(14, N, O) ELEM(15, N, O)
#define STEP(N, O)                                                                     \
    {                                                                                  \
        const bool upper = (lane & (O)) != 0;                                          \
        ELEMS##N(N, O)                                                                 \
    }
#define LOAD(r) v[r] = (r) < HEIGHT ? mine[(r)*WARP] : (real_t)0;
#define LOADS4(b) LOAD(b) LOAD((b) + 1) LOAD((b) + 2) LOAD((b) + 3)

/* Reduce-scatter: HEIGHT_POW2 - 1 shuffles leave each lane one row; plain xor steps then
 * sum the WARP / HEIGHT_POW2 lanes sharing that row. Lane l ends with row
 * l / (WARP / HEIGHT_POW2). */
inline void reduce_shuffle(__local const real_t *mine, uint lane, uint strip, uint strips,
                           uint rows, __global real_t *y, real_t alpha, real_t beta)
{
    real_t v[HEIGHT_POW2 < 4 ? 4 : HEIGHT_POW2];
    LOADS4(0)
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
        v[0] += shuffle_xor(v[0], o);
    const uint lanes_per_row = WARP / HEIGHT_POW2;
    const uint r = lane / lanes_per_row;
    const uint row = strip * HEIGHT + r;
    if (lane % lanes_per_row == 0 && r < HEIGHT && strip < strips && row < rows)
        store_row(y, row, v[0], alpha, beta);
}
#endif /* REDUCE == 2 */

#if REDUCE == 1
/* Tree over lanes: at step `width`, slots [width, 2*width) of each row are added into
 * [0, width). Every work-item of the group reaches every barrier. */
inline void reduce_local(__local real_t *base, uint lane, uint strip, uint strips, uint rows,
                         __global real_t *y, real_t alpha, real_t beta)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint width = WARP / 2; width > 0; width >>= 1) {
        for (uint k = lane; k < HEIGHT * width; k += WARP) {
            const uint r = k / width, l = k % width;
            base[r * WARP + l] += base[r * WARP + l + width];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (strip >= strips)
        return;
    for (uint r = lane; r < HEIGHT; r += WARP) {
        const uint row = strip * HEIGHT + r;
        if (row < rows)
            store_row(y, row, base[r * WARP], alpha, beta);
    }
}
#endif /* REDUCE == 1 */

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1))) void
cmrs_spmv(const uint rows, const uint strips, __global const uint *restrict strip_ptr,
          __global const uint *restrict col_ind, __global const uchar *restrict row_in_strip,
          __global const real_t *restrict val, __global const real_t *restrict x,
          __global real_t *restrict y, const real_t alpha, const real_t beta)
{
    __local real_t partial[WARPS_PER_GROUP * HEIGHT * WARP];
    const uint lane = get_local_id(0) % WARP;
    const uint warp = get_local_id(0) / WARP;
    const uint strip = get_group_id(0) * WARPS_PER_GROUP + warp;
    __local real_t *base = partial + warp * (HEIGHT * WARP);
    __local real_t *mine = base + lane;

    for (uint r = 0; r < HEIGHT; ++r)
        mine[r * WARP] = (real_t)0;
    if (strip < strips) {
        const uint end = strip_ptr[strip + 1];
        for (uint j = strip_ptr[strip] + lane; j < end; j += WARP) {
#if PACKED
            const uint c = col_ind[j];
            mine[(c & ROW_MASK) * WARP] += val[j] * x[c >> CMRS_BITS];
#else
            mine[row_in_strip[j] * WARP] += val[j] * x[col_ind[j]];
#endif
        }
    }
#if REDUCE == 1
    reduce_local(base, lane, strip, strips, rows, y, alpha, beta);
#elif REDUCE == 2
    reduce_shuffle(mine, lane, strip, strips, rows, y, alpha, beta);
#else
#error "REDUCE must be 1 (local) or 2 (shuffle)"
#endif
}
