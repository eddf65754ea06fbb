/* spmv_common.cl - what every CMRS SpMV kernel family shares. host/runtime/program.c builds each
 * family as cmrs_abi.h (the host's contract), this file, warp.cl (the warp layer) and the
 * family's file (cmrs_strip.cl, cmrs_segment.cl, cmrs_modulo.cl). This file holds
 *   - the build options and their checks,
 *   - decoding an entry (column, row in strip and value, packed or not, as the values are
 *     stored),
 *   - loads of the streamed matrix arrays, with an optional "evict first" cache hint,
 *   - the work a warp takes: a short strip, or a tile of a long strip (the split path),
 *   - the sums of the tiles of long strips in a fixed order (combine.cl): in the tiles'
 *     work-group (combine_in_group), in the group that finishes a strip's last tile
 *     (combine_last), or by the combine kernel.
 *
 * Build options (host/plan/plan.c makes them):
 *   HEIGHT        rows per strip, >= 1                                        (required)
 *   WARP          work-items per strip or tile, a power of two                (required)
 *   WG_SIZE       work-group size, a multiple of WARP                         (required)
 *   VALUE_DOUBLE  1: double values and vectors, 0: float                      (required)
 *   PACKED        1: row in strip in the low ROW_BITS bits of col_ind (narrow
 *                 offsets: NARROW_ROW_BITS, entry_at)                         (default 1)
 *   ROW_BITS      bits of the row in strip when packed                        (default 4)
 *   REDUCE        the warp layer's backend (warp.cl): 1 local memory + barriers,
 *                 2 NVIDIA warp shuffles (PTX), 3 OpenCL sub-groups           (default 1)
 *   SG_RELATIVE   REDUCE 3: 1 when cl_khr_subgroup_shuffle_relative is there  (default 0)
 *   REQD_SUBGROUP REDUCE 3: the sub-group size the kernel asks the compiler for
 *                 (intel_reqd_sub_group_size), 0 where it cannot             (default 0)
 *   CACHE_HINT    1: matrix arrays loaded with ld.global.cs (NVIDIA), so the
 *                 streamed matrix does not evict x from L2                    (default 0)
 *   INDEX64       1: entry indices (StripPtr, the tiles' first entries, the loops over
 *                 entries, the partial sums' slots) are ulong, for matrices of 2^31
 *                 stored entries or more; 0: uint, which costs ordinary matrices nothing
 *                 (host/plan/plan.c chooses; column indices and row, strip and tile numbers
 *                 stay 32-bit either way)                                     (default 0)
 *   GROUP_COMBINE 1: the tiles of each long strip lie in one work-group, which sums them
 *                 itself after a barrier (combine_in_group); 0: cmrs_combine, a second
 *                 kernel, does                                                (default 0)
 *   LAST_COMBINE  1: the work-group that finishes a long strip's last tile sums its tiles
 *                 (combine_last)                                              (default 0)
 *   FENCE_PTX     LAST_COMBINE: 1 fences with PTX's membar.gl (NVIDIA), 0 with
 *                 mem_fence (CPUs)                                            (default 0)
 *   VALUES        how the values are stored: CMRS_VALUES_PLAIN, _FLOAT, _DICT, _DIAGONAL
 *                 (below, "the values")                                       (default PLAIN)
 *   DICT_BITS     VALUES DICT, DIAGONAL: bits of an entry's dictionary index  (default 0)
 *   COLUMN_BITS   32: a column word per entry; 16: narrow columns (host/format/
 *                 cmrs_narrow.c) - the slice family's 16-bit steps along a row, dictionary
 *                 index in their low DICT_BITS, or the strip family's 16-bit offsets
 *                 from the strip's first column (entry_at); 0: implied columns, the strip
 *                 family at HEIGHT 1 where each row's columns are one run: only the strips'
 *                 first columns, entry j's column its first plus its place in the strip
 *                                                                            (default 32)
 *   NARROW_ROW_BITS the strip family's narrow offsets: bits of the row in strip
 *                 beside each offset (0 unpacked, else ceil(log2 HEIGHT))
 *                                                   (required with those offsets)
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
#ifndef ROW_BITS
#define ROW_BITS 4
#endif
#ifndef REDUCE
#define REDUCE CMRS_REDUCE_LOCAL
#endif
#ifndef REQD_SUBGROUP
#define REQD_SUBGROUP 0
#endif
#ifndef CACHE_HINT
#define CACHE_HINT 0
#endif
#ifndef INDEX64
#define INDEX64 0
#endif
#ifndef GROUP_COMBINE
#define GROUP_COMBINE 0
#endif
#ifndef VALUES
#define VALUES CMRS_VALUES_PLAIN
#endif
#ifndef DICT_BITS
#define DICT_BITS 0
#endif
#ifndef COLUMN_BITS
#define COLUMN_BITS 32
#endif
/* narrow columns: steps along a slice's rows, or offsets from a strip's first column (as
 * literals: the conversion kernels, which include this file, define no KERNEL) */
#if COLUMN_BITS == 16 && KERNEL == CMRS_KERNEL_SLICE
#define NARROW_STEPS 1
#else
#define NARROW_STEPS 0
#endif
#if COLUMN_BITS == 16 && KERNEL == CMRS_KERNEL_STRIP
#define NARROW_OFFSETS 1
#else
#define NARROW_OFFSETS 0
#endif
#if COLUMN_BITS == 0 && KERNEL == CMRS_KERNEL_STRIP && HEIGHT == 1 && DICT_BITS == 0
#define IMPLIED_COLUMNS 1
#else
#define IMPLIED_COLUMNS 0
#endif
#if COLUMN_BITS != 32 && !NARROW_STEPS && !NARROW_OFFSETS && !IMPLIED_COLUMNS
#error "COLUMN_BITS is 32, 16 for the slice and strip families' narrow columns, or 0 for implied columns (strips of HEIGHT 1, no dictionary index)"
#endif

/* Helpers are inlined into the kernel, always: a helper left out of line takes its arrays
 * by address, and that puts them in (slow, per-thread) stack memory. */
#define INLINE static inline __attribute__((always_inline))

#define ROW_MASK ((1u << ROW_BITS) - 1u)
#define WARPS_PER_GROUP (WG_SIZE / WARP)
/* An entry's index, and StripPtr's top bit, which marks a long strip: the split path (tiles
 * + combine) owns its rows. */
#if INDEX64
typedef ulong index_t;
#define LONG_STRIP ((ulong)1 << CMRS_LONG_STRIP_BIT(64))
#else
typedef uint index_t;
#define LONG_STRIP (1u << CMRS_LONG_STRIP_BIT(32))
#endif
#define ENTRY_MASK (~LONG_STRIP)

#if PACKED && HEIGHT > (1 << ROW_BITS)
#error "HEIGHT does not fit ROW_BITS"
#endif
/* The kernel's attribute: its work-group size, and under sub-groups the sub-group size the
 * warp layer counts on, where the device lets the kernel ask for it. */
#if REQD_SUBGROUP
#define CMRS_KERNEL_ATTRIBUTES                                                                     \
    __attribute__((reqd_work_group_size(WG_SIZE, 1, 1)))                                           \
    __attribute__((intel_reqd_sub_group_size(REQD_SUBGROUP)))
#else
#define CMRS_KERNEL_ATTRIBUTES __attribute__((reqd_work_group_size(WG_SIZE, 1, 1)))
#endif

#if VALUE_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real_t;
typedef double2 real2_t;
typedef double4 real4_t;
#else
typedef float real_t;
typedef float2 real2_t;
typedef float4 real4_t;
#endif

/* ---- loads of the streamed matrix arrays ---- */

#if CACHE_HINT
/* ld.global.cs: "cache streaming, likely accessed once" - evict-first in L1 and L2, so the
 * matrix, read exactly once per product, leaves L2 to x. Vectors of consecutive entries at
 * an index that is a multiple of their length: one 8- or 16-byte load (ld.global.cs.v2/v4)
 * instead of two or four. */
INLINE uint load_index(__global const uint *p)
{
    uint v;
    asm("ld.global.cs.u32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
/* a narrow column word, zero-extended: PTX lets a load fill a register wider than its type */
INLINE uint load_step(__global const ushort *p)
{
    uint v;
    asm("ld.global.cs.u16 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
INLINE uint2 load_index2(__global const uint *p)
{
    uint a, b;
    asm("ld.global.cs.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "l"(p));
    return (uint2)(a, b);
}
INLINE uint4 load_index4(__global const uint *p)
{
    uint a, b, c, d;
    asm("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p));
    return (uint4)(a, b, c, d);
}
INLINE float load_f32(__global const float *p)
{
    float v;
    asm("ld.global.cs.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}
INLINE float2 load_f32x2(__global const float *p)
{
    float a, b;
    asm("ld.global.cs.v2.f32 {%0, %1}, [%2];" : "=f"(a), "=f"(b) : "l"(p));
    return (float2)(a, b);
}
INLINE float4 load_f32x4(__global const float *p)
{
    float a, b, c, d;
    asm("ld.global.cs.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(a), "=f"(b), "=f"(c), "=f"(d) : "l"(p));
    return (float4)(a, b, c, d);
}
#if VALUE_DOUBLE
INLINE double load_f64(__global const double *p)
{
    double v;
    asm("ld.global.cs.f64 %0, [%1];" : "=d"(v) : "l"(p));
    return v;
}
INLINE double2 load_f64x2(__global const double *p)
{
    double a, b;
    asm("ld.global.cs.v2.f64 {%0, %1}, [%2];" : "=d"(a), "=d"(b) : "l"(p));
    return (double2)(a, b);
}
INLINE double4 load_f64x4(__global const double *p)
{
    return (double4)(load_f64x2(p), load_f64x2(p + 2));
}
#endif
#else
/* Casts, not vload: they promise the vector's alignment, so the loads are single 8- and
 * 16-byte accesses. */
#define load_index(p) (*(p))
#define load_step(p) ((uint)*(p))
#define load_index2(p) (*(__global const uint2 *)(p))
#define load_index4(p) (*(__global const uint4 *)(p))
#define load_f32(p) (*(p))
#define load_f32x2(p) (*(__global const float2 *)(p))
#define load_f32x4(p) (*(__global const float4 *)(p))
#define load_f64(p) (*(p))
#define load_f64x2(p) (*(__global const double2 *)(p))
#define load_f64x4(p) (*(__global const double4 *)(p))
#endif

/* ---- the values: how they are stored (VALUES, cmrscl_values in cmrscl.h) ----
 *   PLAIN  one real_t per entry, at the entry's index;
 *   FLOAT  doubles that are all exactly floats, one float per entry, widened here;
 *   DICT   `val` is the dictionary, and an entry's index into it sits in DICT_BITS bits of
 *          its column word, above the row in strip: column << (ROW_BITS + DICT_BITS) |
 *          index << ROW_BITS | row (packed), column << DICT_BITS | index (unpacked). The
 *          dictionary is a few values that stay in L1: an entry moves its column word only.
 *   DIAGONAL as DICT for the entries off the diagonal; those on it hold the last index,
 *          DICT_MASK, and read their value at val[2^DICT_BITS + column] - the diagonal's own
 *          array after the dictionary's slots (column == row there): a value a row.
 * Every codec hands the kernel the same value, so the products are the same bits.
 * VALUE_AT(j, c, col): entry j's value, from its column word c and its column col (which
 * only DIAGONAL reads); VALUES2_AT, VALUES4_AT: a vector of them, from 32-bit words. */
#if VALUES == CMRS_VALUES_FLOAT && !VALUE_DOUBLE
#error "VALUES FLOAT stores doubles as floats: it needs VALUE_DOUBLE"
#endif
#if VALUES != CMRS_VALUES_DICT && VALUES != CMRS_VALUES_DIAGONAL && DICT_BITS != 0
#error "DICT_BITS belongs to VALUES DICT and DIAGONAL"
#endif
#if VALUES == CMRS_VALUES_FLOAT
typedef float stored_t; /* what `val` holds */
#else
typedef real_t stored_t;
#endif
/* where an entry's dictionary index starts: above the row in strip, or at bit 0 of a slice's
 * narrow column word (step << DICT_BITS | index) */
#define DICT_SHIFT (PACKED && !NARROW_STEPS ? ROW_BITS : 0)
#define COLUMN_SHIFT (DICT_SHIFT + DICT_BITS)
#define DICT_MASK ((1u << DICT_BITS) - 1u)
#define COLUMN_OF(c) ((c) >> COLUMN_SHIFT)
#define ROW_OF(c) ((c)&ROW_MASK)
#define DICT_OF(c) (((c) >> DICT_SHIFT) & DICT_MASK)

#if VALUES == CMRS_VALUES_DICT || VALUES == CMRS_VALUES_DIAGONAL
/* Dictionary entry i: an indexed load the L1 cache answers. A select chain between
 * hoisted entries instead (bits <= 2) measured slower on an H100: fem:50:3 double 0.068 ms
 * against 0.059 (docs/dev/PERFORMANCE.md, values codecs). The buffer holds 2^DICT_BITS entries,
 * and with DIAGONAL the diagonal after them: the last index picks the address, not the value,
 * so an entry still makes one load. */
#if VALUES == CMRS_VALUES_DIAGONAL
#define DICT_AT(i, col) val[(i) == DICT_MASK ? (1u << DICT_BITS) + (col) : (i)]
#else
#define DICT_AT(i, col) val[i]
#endif
#define VALUE_AT(j, c, col) DICT_AT(DICT_OF(c), col)
#define VALUE_OF_WORD(c) DICT_AT(DICT_OF(c), COLUMN_OF(c))
#define VALUES2_AT(j, c) ((real2_t)(VALUE_OF_WORD(c.s0), VALUE_OF_WORD(c.s1)))
#define VALUES4_AT(j, c)                                                                           \
    ((real4_t)(VALUE_OF_WORD(c.s0), VALUE_OF_WORD(c.s1), VALUE_OF_WORD(c.s2),                      \
               VALUE_OF_WORD(c.s3)))
#elif VALUES == CMRS_VALUES_FLOAT
#define VALUE_AT(j, c, col) ((double)load_f32(val + (j)))
#define VALUES2_AT(j, c) convert_double2(load_f32x2(val + (j)))
#define VALUES4_AT(j, c) convert_double4(load_f32x4(val + (j)))
#elif VALUE_DOUBLE
#define VALUE_AT(j, c, col) load_f64(val + (j))
#define VALUES2_AT(j, c) load_f64x2(val + (j))
#define VALUES4_AT(j, c) load_f64x4(val + (j))
#else
#define VALUE_AT(j, c, col) load_f32(val + (j))
#define VALUES2_AT(j, c) load_f32x2(val + (j))
#define VALUES4_AT(j, c) load_f32x4(val + (j))
#endif

/* Entry j: (column, row within the strip, column word - what DICT_OF reads). Returned by
 * value: values whose address is taken and that live across barriers are where some OpenCL
 * compilers stumble (PoCL 3.1 gave intermittently wrong sums with an out-parameter here).
 * A strip's narrow offsets (host/format/cmrs_narrow.c): 16-bit words after the strips' first
 * columns, offset << (NARROW_ROW_BITS + DICT_BITS) | index << NARROW_ROW_BITS | row, the row
 * in as few bits as HEIGHT needs; `first` is STRIP_FIRST of the entry's strip. Implied
 * columns (one row a strip, its columns one run): no word at all, the column is the strip's
 * first plus the entry's place in it, so STRIP_FIRST is that first column less the strip's
 * first entry (mod 2^32; a tile's entries count from their strip's start too). */
#if IMPLIED_COLUMNS
#define STRIP_FIRST(strip) (col_ind[strip] - (uint)(strip_ptr[strip] & ENTRY_MASK))
#elif NARROW_OFFSETS
#define STRIP_FIRST(strip) col_ind[strip]
#ifndef NARROW_ROW_BITS /* the host's plan_narrow_row_bits: 0 unpacked, else ceil(log2 HEIGHT) */
#error "NARROW_ROW_BITS must be defined with a strip's narrow columns"
#endif
#else
#define STRIP_FIRST(strip) 0u
#endif
INLINE uint3 entry_at(__global const uint *col_ind, index_t j, __global const uchar *row_in_strip,
                      uint strips, uint first)
{
#if IMPLIED_COLUMNS
    (void)row_in_strip, (void)strips;
    return (uint3)(first + (uint)j, 0u, 0u);
#elif NARROW_OFFSETS
    const uint w = load_step((__global const ushort *)(col_ind + strips) + j);
    const uint column = first + (w >> (NARROW_ROW_BITS + DICT_BITS));
    const uint index = (w >> NARROW_ROW_BITS) & DICT_MASK;
#if PACKED
    const uint row = w & ((1u << NARROW_ROW_BITS) - 1u);
#else
    const uint row = row_in_strip[j];
#endif
    return (uint3)(column, row, index << DICT_SHIFT);
#else
    (void)strips, (void)first;
    const uint c = load_index(col_ind + j);
#if PACKED
    return (uint3)(COLUMN_OF(c), ROW_OF(c), c);
#else
    return (uint3)(COLUMN_OF(c), row_in_strip[j], c);
#endif
#endif
}

/* ---- a slice's rows, walked a column word at a time (cmrs_slice.cl, cmrs_spmm.cl) ----
 * LOAD_WORD(j): the word of stored position j - a 32-bit column word, or with narrow columns
 * (COLUMN_BITS 16, host/format/cmrs_narrow.c) the 16-bit step word after the strips' first
 * columns; HOLE_WORD: a padding position; NEXT_COLUMN(w): the column of word w, with narrow
 * columns by adding its step to the walk's running `column`, which starts a row at
 * FIRST_COLUMN(strip). The walks load SLICE_AHEAD words of a row before using any (past the
 * row's end: holes). With narrow columns each column depends on the words before it, and a
 * loop that tests each word before the next load walks the row one load latency an entry
 * (H100, docs/dev/PERFORMANCE.md: fem:50:3 float 0.084 ms against 0.052 with 32-bit words; four
 * ahead 0.035; two 0.052, eight 0.037). 32-bit words gain too: stencil7:160 float 0.066 ms
 * one ahead, 0.061 four ahead. With -DSLICE_WORDS_EARLY=1 (narrow columns on NVIDIA: the plan,
 * host/plan/plan_options.c) the walk loads the next SLICE_AHEAD words before it uses these:
 * there the narrow walk is latency-bound where 32-bit words' is not (H200, docs/dev/PERFORMANCE.md,
 * "narrow words early"), and a row with jump words walks eight at a time, its extra positions
 * then costing no extra round trip on a stencil's rows. */
#ifndef SLICE_WORDS_EARLY
#define SLICE_WORDS_EARLY 0
#endif
#ifndef SLICE_AHEAD /* a build option may set it (measurements) */
#if SLICE_WORDS_EARLY && defined(NARROW_JUMPS) && NARROW_JUMPS
#define SLICE_AHEAD 8
#else
#define SLICE_AHEAD 4
#endif
#endif
#if SLICE_AHEAD < 1
#error "SLICE_AHEAD is a count of words, 1 or more"
#endif
/* dst[k] = the word at position at + k x HEIGHT, a hole from `end` on */
#define LOAD_WORDS(dst, at, end)                                                                   \
    for (int k_ = 0; k_ < SLICE_AHEAD; ++k_)                                                       \
    (dst)[k_] = (at) + k_ * HEIGHT < (end) ? LOAD_WORD((at) + k_ * HEIGHT) : HOLE_WORD
#if COLUMN_BITS == 16
#define LOAD_WORD(j) load_step((__global const ushort *)(col_ind + strips) + (j))
#define HOLE_WORD CMRS_NARROW_HOLE
#define NEXT_COLUMN(w) (column += (w) >> DICT_BITS)
#define FIRST_COLUMN(strip) col_ind[strip]
#else
#define LOAD_WORD(j) load_index(col_ind + (j))
#define HOLE_WORD CMRS_HOLE
#define NEXT_COLUMN(w) COLUMN_OF(w)
#define FIRST_COLUMN(strip) 0u
#endif
/* NO_ENTRY(w): a word that stands for no entry - a hole, or with -DNARROW_JUMPS=1 a jump
 * (cmrs_abi.h), whose SKIP(w) adds its distance to the walk's column. A hole reads as a jump
 * too there: only holes follow it in its row, so the column it leaves is never used. */
#ifndef NARROW_JUMPS
#define NARROW_JUMPS 0
#endif
#if COLUMN_BITS == 16 && NARROW_JUMPS
#define NO_ENTRY(w) ((w)&CMRS_NARROW_JUMP)
#define SKIP(w) (column += ((w) & (CMRS_NARROW_JUMP - 1u)) << CMRS_NARROW_JUMP_SHIFT)
#else
#define NO_ENTRY(w) ((w) == HOLE_WORD)
#define SKIP(w) ((void)0)
#endif

/* x at column `col`, for an entry of row `row`. Built with -DDIAGONAL=1 (the solvers' Jacobi
 * preconditioner, host/solve/) a product multiplies by the identity's row instead - 1 at the
 * diagonal, 0 elsewhere - so y = alpha * diag(A): the diagonal of any layout through its own
 * decode, exactly (every other product is a zero), and x is not read. */
#ifndef DIAGONAL
#define DIAGONAL 0
#endif
#if DIAGONAL
#define GATHER(col, row) ((col) == (row) ? (real_t)1 : (real_t)0)
#elif defined(CG_FUSED) && CG_FUSED /* the next direction, made as it is gathered (cg_fused.cl) */
#define GATHER(col, row) CG_DIRECTION(col)
#else
#define GATHER(col, row) x[col]
#endif

/* The BLAS convention: with beta == 0, y is written without being read (it may be NaN).
 * Returns the value written (the solvers' epilogue, dots.cl, uses it). */
INLINE real_t store_row(__global real_t *y, uint row, real_t sum, real_t alpha, real_t beta)
{
    const real_t v = beta == (real_t)0 ? alpha * sum : alpha * sum + beta * y[row];
    y[row] = v;
    return v;
}

/* ---- the work of one warp ----
 * Groups take strips, one per warp, or tiles of long strips: the tiles' groups are ids
 * first_tile_group and on, the strips' groups the others. GPUs start groups roughly in id
 * order, so whichever role has the longer chains of loads goes first (host/exec/matrix.c) and
 * the other fills in behind it, instead of forming a tail. A role is the same for the
 * whole group, so barriers stay uniform. A long strip is skipped by the strip role (its
 * StripPtr carries LONG_STRIP); its tiles cover it. */
typedef struct work {
    index_t begin, end; /* entries [begin, end) */
    uint group;         /* the work-group's number this round (dots.cl, FOR_GROUPS) */
    uint strip;         /* the strip they belong to */
    uint item;          /* strip or tile number */
    bool tile;          /* role of the group: tile of a long strip (partial sums out) */
    bool active;        /* false: nothing to do, but the warp still joins every barrier */
} work;

INLINE void find_work(work *out, uint group, uint warp, uint strips, uint first_tile_group,
                      uint tiles, uint tile_entries, __global const index_t *strip_ptr,
                      __global const index_t *tile_start, __global const uint *tile_strip)
{
    const uint tile_groups = (tiles + WARPS_PER_GROUP - 1) / WARPS_PER_GROUP;
    work w;
    w.tile = group >= first_tile_group && group - first_tile_group < tile_groups;
    /* the strips' groups: those before the tiles', then those after them */
    const uint strip_group = group < first_tile_group ? group : group - tile_groups;
    w.item = (w.tile ? group - first_tile_group : strip_group) * WARPS_PER_GROUP + warp;
    w.group = group;
    w.begin = w.end = w.strip = 0;
    w.active = w.item < (w.tile ? tiles : strips);
    if (w.active && !w.tile) {
        const index_t b = strip_ptr[w.item];
        w.active = (b & LONG_STRIP) == 0;
        w.strip = w.item;
        if (w.active) {
            w.begin = b;
            w.end = strip_ptr[w.item + 1] & ENTRY_MASK;
        }
    } else if (w.active) {
        w.strip = tile_strip[w.item];
        w.active = w.strip != CMRS_NO_STRIP;
        if (w.active) {
            w.begin = tile_start[w.item];
            w.end = min(w.begin + tile_entries, strip_ptr[w.strip + 1] & ENTRY_MASK);
        }
    }
    *out = w;
}

/* The parameters of cmrs_spmv, the same in every family, in the order of enum cmrs_spmv_arg
 * (cmrs_abi.h), by which host/exec/matrix_arrays.c and host/exec/spmv.c set them. */
#define CMRS_SPMV_PARAMS                                                                           \
    const uint rows, const uint strips, const uint first_tile_group, const uint tiles,             \
        const uint tile_entries, __global const index_t *restrict strip_ptr,                       \
        __global const uint *restrict col_ind, __global const uchar *restrict row_in_strip,        \
        __global const stored_t *restrict val, __global const index_t *restrict tile_start,        \
        __global const uint *restrict tile_strip, __global real_t *restrict partial,               \
        __global const real_t *restrict x, __global real_t *restrict y, const real_t alpha,        \
        const real_t beta

/* Whether a warp's row r is a row of y that it writes (not a tile's partial sum, not past
 * the last row). */
INLINE bool emits_y(const work *w, uint r, uint rows)
{
    return !w->tile && w->strip * HEIGHT + r < rows;
}

/* A row's sum leaves the warp: y in the strip role (alpha, beta applied), the tile's slot
 * of partial sums otherwise (combined later). Returns the value written to y (0 where none:
 * emits_y). */
INLINE real_t emit_row(const work *w, uint r, real_t sum, uint rows, __global real_t *y,
                       __global real_t *partial, real_t alpha, real_t beta)
{
    if (w->tile) {
        partial[(index_t)w->item * HEIGHT + r] = sum;
        return 0;
    }
    return emits_y(w, r, rows) ? store_row(y, w->strip * HEIGHT + r, sum, alpha, beta) : (real_t)0;
}
