/* convert.cl - the device side of cmrscl_matrix_create_from_cl (host/exec/matrix_device.c) and
 * of the values-only updates (host/exec/matrix_update.c): checks of a canonical CSR held on the
 * device, the sample of columns the statistics need, CSR -> CMRS (StripPtr, packed or unpacked
 * ColInd, values, column-ordered strips), and the permutation and gather of updates (and the
 * dictionary bits a coded matrix drops at its first update).
 *
 * Built after cmrs_abi.h and spmv_common.cl (cmrs_program_get), which give CMRS_ENTRY_PAD, real_t,
 * LONG_STRIP and ENTRY_MASK: the padding and the StripPtr flag are defined once for the host,
 * the kernels that write them and those that read them.
 * The strip height, layout and order are kernel arguments, so one program per pair of
 * precisions serves every plan; the HEIGHT, WARP and WG_SIZE spmv_common.cl requires are
 * set to 1 and mean nothing here.
 *
 * Build options:
 *   VALUE_DOUBLE   1: the matrix holds doubles, 0: floats                     (required)
 *   SOURCE_DOUBLE  1: the CSR values read are doubles, 0: floats              (required)
 *   INDEX64        the matrix's entry indices (spmv_common.cl): 1 ulong, 0 uint (default 0)
 *   CONVERT_GROUP  work-items per group (host/exec/convert_launch.h)                (required)
 *   STRIP_HEIGHT_LOGS  strip heights 2^0 .. 2^(n-1) of the row totals (host/plan/plan.h)
 *                                                                             (required)
 *
 * The CSR read here has int32 row pointers (cmrscl_matrix_create_from_cl), so its indices
 * are uint: nnz < 2^31, an entry index plus the padding, or a strip's begin plus its length,
 * never wraps; products of a strip and the height are taken in ulong. What the matrix holds
 * - StripPtr, the permutation of updates - is index_t, and so are the updates' counts: they
 * serve matrices made on the host too, of any size. */
#ifndef SOURCE_DOUBLE
#error "SOURCE_DOUBLE (0: float, 1: double CSR values) must be defined"
#endif

#if SOURCE_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double source_t;
#else
typedef float source_t;
#endif

/* The row of entry e: the last r in [lo, hi) with row_ptr[r] <= e, for row_ptr[lo] <= e <
 * row_ptr[hi] (empty rows share their start with the next row, which is the one holding e).
 * Reads stay in row_ptr[lo..hi-1] whatever row_ptr holds, so the check kernel may call it on
 * bad input. */
INLINE uint row_in(__global const int *row_ptr, uint lo, uint hi, uint e)
{
    while (hi - lo > 1) {
        const uint mid = lo + (hi - lo) / 2;
        if ((uint)row_ptr[mid] <= e)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Entries of [begin, end) (one row, ascending columns) with a column below `limit`. The
 * search starts at begin + guess and gallops outwards before it bisects: rows of a strip
 * tend to look alike (stencils, FEM), so the entry's own place in its row is a good guess,
 * and a bad one costs at most twice a bisection. */
INLINE uint count_below(__global const int *col_ind, uint begin, uint end, int limit, uint guess)
{
    uint lo = begin, hi = end, step = 1; /* the answer lies in [lo, hi] */
    const uint g = end - begin > guess ? begin + guess : end;
    if (g < end && col_ind[g] < limit) {
        lo = g + 1;
        while (end - lo > step && col_ind[lo + step - 1] < limit) {
            lo += step;
            step *= 2;
        }
        hi = end - lo > step ? lo + step - 1 : end;
    } else {
        hi = g;
        while (hi - begin > step && col_ind[hi - step] >= limit) {
            hi -= step;
            step *= 2;
        }
        lo = hi - begin > step ? hi - step + 1 : begin;
    }
    while (lo < hi) {
        const uint mid = lo + (hi - lo) / 2;
        if (col_ind[mid] < limit)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - begin;
}

/* Canonical CSR, checked with one work-item per row pointer and per entry; bad[] receives
 * the first offender of each kind (INT_MAX: none, set by the host):
 *   bad[0]  i where 0 = row_ptr[0] <= row_ptr[1] <= ... <= row_ptr[rows] = nnz breaks,
 *   bad[1]  an entry whose column is outside 0..cols-1,
 *   bad[2]  an entry whose column is not above the previous entry's of the same row.
 * A column not above its predecessor's is allowed only where a row starts; those are few
 * (at most one per row), so only they pay for the search of their row. The host reads the
 * entry checks only when the row pointers passed. */
__kernel void convert_check(const uint rows, const int cols, const uint nnz,
                            __global const int *restrict row_ptr,
                            __global const int *restrict col_ind, volatile __global int *bad)
{
    const uint i = get_global_id(0);
    if (i <= rows) {
        const int v = row_ptr[i];
        const bool ok = v >= 0 && v <= (int)nnz && (i == 0 ? v == 0 : v >= row_ptr[i - 1]) &&
                        (i < rows || v == (int)nnz);
        if (!ok)
            atomic_min(&bad[0], (int)i);
    }
    if (i < nnz) {
        const int c = col_ind[i];
        if (c < 0 || c >= cols)
            atomic_min(&bad[1], (int)i);
        else if (i > 0 && col_ind[i - 1] >= c &&
                 (rows == 0 || (uint)row_ptr[row_in(row_ptr, 0, rows, i)] != i))
            atomic_min(&bad[2], (int)i);
    }
}

/* The sample of the column spread (host/plan/analyze.c, cmrs_analyze_spread_layout): sampled row j
 * is row j * row_step, whose length goes to lengths[j] and whose entries 0, step, 2 * step,
 * ... (step = ceil(len / entries), at least 1) go to slots out[j * entries...]. Runs beside
 * convert_check, before the row pointers are known to be valid, so it reads only inside
 * 0..nnz-1. */
__kernel void convert_sample(const uint sampled_rows, const uint row_step, const int entries,
                             const int nnz, __global const int *restrict row_ptr,
                             __global const int *restrict col_ind, __global int *restrict lengths,
                             __global int *restrict out)
{
    const uint j = get_global_id(0);
    if (j >= sampled_rows)
        return;
    const ulong i = (ulong)j * row_step;
    const int begin = row_ptr[i], len = row_ptr[i + 1] - begin;
    lengths[j] = len;
    if (begin < 0 || len < 0 || begin > nnz - len)
        return; /* bad row pointers: convert_check reports them */
    const int step = len > entries ? (len + entries - 1) / entries : 1;
    for (int k = 0, t = 0; k < len; k += step, ++t)
        out[j * entries + t] = col_ind[begin + k];
}

/* ---- the row statistics (host/plan/analyze.c, row_totals), summed on the device ----
 * Value v of a work-group's totals: 0 the entries, 1 the squared row lengths, 2 the empty
 * rows, 3 + k the longest strip of 2^k rows (k = 0: the longest row). Integers, so the sums
 * are exact in any order; meaningless (but harmless) when convert_check finds bad row
 * pointers. */
#define TOTALS (3 + STRIP_HEIGHT_LOGS)

/* Two partial values v combined: sums for v < 3, maxima after. */
INLINE ulong combine(uint v, ulong a, ulong b) { return v < 3 ? a + b : max(a, b); }

/* Reduces each work-item's v-th value over the work-group into out[v], one value at a time
 * through `scratch`. */
INLINE void group_totals(ulong *mine, __local ulong *scratch, __global ulong *out)
{
    const uint l = get_local_id(0);
    for (uint v = 0; v < TOTALS; ++v) {
        scratch[l] = mine[v];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint w = CONVERT_GROUP / 2; w > 0; w >>= 1) {
            if (l < w)
                scratch[l] = combine(v, scratch[l], scratch[l + w]);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (l == 0)
            out[v] = scratch[0];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* One work-item per row: group g's totals into partial[g * TOTALS...]. */
__kernel __attribute__((reqd_work_group_size(CONVERT_GROUP, 1, 1))) void
convert_row_stats(const uint rows, __global const int *restrict row_ptr,
                  __global ulong *restrict partial)
{
    __local ulong scratch[CONVERT_GROUP];
    const uint i = get_global_id(0);
    ulong mine[TOTALS] = {0};
    if (i < rows) {
        const ulong len = (ulong)(uint)(row_ptr[i + 1] - row_ptr[i]);
        mine[0] = len, mine[1] = len * len, mine[2] = len == 0;
        for (uint k = 0; k < STRIP_HEIGHT_LOGS; ++k)
            if ((i & ((1u << k) - 1u)) == 0)
                mine[3 + k] = (ulong)(uint)(row_ptr[min(i + (1u << k), rows)] - row_ptr[i]);
    }
    group_totals(mine, scratch, partial + (ulong)get_group_id(0) * TOTALS);
}

/* One work-group: the partial totals of `groups` groups into total[0..TOTALS-1]. */
__kernel __attribute__((reqd_work_group_size(CONVERT_GROUP, 1, 1))) void
convert_row_totals(const uint groups, __global const ulong *restrict partial,
                   __global ulong *restrict total)
{
    __local ulong scratch[CONVERT_GROUP];
    ulong mine[TOTALS] = {0};
    for (uint g = get_local_id(0); g < groups; g += CONVERT_GROUP)
        for (uint v = 0; v < TOTALS; ++v)
            mine[v] = combine(v, mine[v], partial[g * TOTALS + v]);
    group_totals(mine, scratch, total);
}

/* StripPtr: strip s starts where its first row does. */
__kernel void convert_strip_ptr(const uint rows, const uint strips, const uint height,
                                __global const int *restrict row_ptr,
                                __global index_t *restrict strip_ptr)
{
    const uint s = get_global_id(0);
    if (s > strips)
        return;
    const ulong first = (ulong)s * height;
    strip_ptr[s] = (uint)row_ptr[first < rows ? first : rows];
}

/* The long strips of the split path (host/plan/analyze.c, cmrs_split_build) carry LONG_STRIP. */
__kernel void convert_flag_long(const uint long_strips, __global const uint *restrict long_strip,
                                __global index_t *restrict strip_ptr)
{
    const uint k = get_global_id(0);
    if (k < long_strips)
        strip_ptr[long_strip[k]] |= LONG_STRIP;
}

/* The row of the first entry of each tile of `tile` entries, and rows - 1 after the last
 * tile: each entry then bisects only among the rows its tile spans (convert_entries), a
 * few probes instead of a search through all of RowPtr. */
__kernel void convert_tile_rows(const uint rows, const uint nnz, const uint tiles, const uint tile,
                                __global const int *restrict row_ptr,
                                __global uint *restrict tile_row)
{
    const uint t = get_global_id(0);
    if (t > tiles)
        return;
    const ulong e = (ulong)t * tile;
    tile_row[t] = e < nnz ? row_in(row_ptr, 0, rows, (uint)e) : rows - 1;
}

/* One work-item per CSR entry e (row r, column c), and per padding entry. Row order keeps
 * CSR positions (strips are runs of whole rows). Column order (host/format/cmrs.c: entries of a
 * strip sorted by column, ties in row order) puts e after the entries of its strip with a
 * smaller column, and after those with the same column in rows above: within each other
 * row of the strip, a binary search counts the columns below c (rows below r) or at most c
 * (rows above r); within its own row, the entries before e. Every entry finds its place
 * alone, in a fixed way: no atomics, no sort, the same result on any device. */
__kernel void convert_entries(const uint rows, const uint nnz, const uint height,
                              const uint row_bits, const uint packed, const uint column_order,
                              const uint tile, __global const uint *restrict tile_row,
                              __global const int *restrict row_ptr,
                              __global const int *restrict col_ind,
                              __global const source_t *restrict val,
                              __global uint *restrict out_col, __global uchar *restrict out_row,
                              __global real_t *restrict out_val)
{
    const uint e = get_global_id(0);
    if (e >= nnz) {
        if (e < nnz + CMRS_ENTRY_PAD) {
            out_col[e] = 0;
            out_val[e] = 0;
        }
        return;
    }
    const uint t = e / tile, r = row_in(row_ptr, tile_row[t], tile_row[t + 1] + 1, e);
    const uint first = r - r % height, last = min(first + height, rows);
    const int c = col_ind[e];
    uint k = e;
    if (column_order) {
        const uint own = e - (uint)row_ptr[r];
        k = (uint)row_ptr[first] + own;
        for (uint q = first; q < last; ++q)
            if (q != r)
                k += count_below(col_ind, (uint)row_ptr[q], (uint)row_ptr[q + 1], q < r ? c + 1 : c,
                                 own);
    }
    const uint in_strip = r - first;
    out_col[k] = packed ? (uint)c << row_bits | in_strip : (uint)c;
    if (!packed)
        out_row[k] = (uchar)in_strip;
    out_val[k] = (real_t)val[e];
}

/* The permutation of column-ordered strips whose rows had ascending columns, or of slices
 * (host/format/cmrs_slice.c): a row keeps its CSR order within its strip, so position k of row
 * r holds CSR entry
 *     strip's first CSR entry + (entries of the strip in rows above r) + (entries of row r
 *     before k),
 * the strip's first CSR entry being its first position where no holes lie between entries,
 * else strip_csr[s] (use_csr). A hole's permutation is all bits set; the work-item of
 * (strip, r) writes those at positions r, r + height, ... of its strip - a slice's row r.
 * One work-item per (strip, row in strip) walks the strip twice, counting and then placing;
 * the work-items of a strip read the same entries at the same time. Built once, on the
 * first update (host/exec/matrix_update.c says why). With narrow columns (col_ind holds the
 * strips' first columns, then 16-bit words, host/format/cmrs_narrow.c): a slice's steps
 * (narrow 1; 4 with jump words, which like holes stand for no entry: cmrs_abi.h) have their
 * holes among the words, and a position's row is its place in the slice; a strip's offsets
 * (narrow 2) keep the row in strip in their low bits; implied columns (narrow 3: strips of
 * one row, col_ind only their first columns) have no words. */
__kernel void convert_permutation(const uint strips, const uint height, const uint row_bits,
                                  const uint packed, const uint narrow,
                                  __global const index_t *restrict strip_ptr,
                                  __global const uint *restrict col_ind,
                                  __global const uchar *restrict row_in_strip, const uint use_csr,
                                  __global const index_t *restrict strip_csr,
                                  __global index_t *restrict perm)
{
    const ulong i = get_global_id(0);
    if (i >= (ulong)strips * height)
        return;
    const uint s = (uint)(i / height), r = (uint)(i % height);
    const index_t begin = strip_ptr[s] & ENTRY_MASK, end = strip_ptr[s + 1] & ENTRY_MASK;
    const uint mask = packed ? (1u << row_bits) - 1u : 0u;
    index_t e = use_csr ? strip_csr[s] : begin;
    __global const ushort *steps = (__global const ushort *)(col_ind + strips);
#define HOLE_AT(k)                                                                                 \
    (narrow == 4   ? (steps[k] & CMRS_NARROW_JUMP) != 0                                            \
     : narrow == 1 ? steps[k] == CMRS_NARROW_HOLE                                                  \
                   : !narrow && col_ind[k] == CMRS_HOLE)
#define ROW_AT(k)                                                                                  \
    (narrow == 3                 ? 0u                                                              \
     : narrow == 1 || narrow == 4 ? (uint)(((k)-begin) % height)                                   \
     : packed      ? (narrow ? steps[k] : col_ind[k]) & mask                                       \
                   : row_in_strip[k])
    for (index_t k = begin; k < end; ++k)
        e += !HOLE_AT(k) && ROW_AT(k) < r;
    for (index_t k = begin; k < end; ++k) {
        if (HOLE_AT(k)) {
            if ((k - begin) % height == r)
                perm[k] = ~(index_t)0;
        } else if (ROW_AT(k) == r) {
            perm[k] = e++;
        }
    }
#undef ROW_AT
#undef HOLE_AT
}

/* The column words of a dictionary-coded matrix without their dictionary index (bits
 * row_bits .. row_bits + dict_bits - 1), into a new array (the kernels' ColInd is
 * read-only): what its first values update stores plain (host/exec/matrix_update.c,
 * ensure_plain_values). A hole stays a hole. Narrow columns (narrow: the 16-bit words after
 * the strips' first columns, host/format/cmrs_narrow.c): the first columns copied
 * (work-items k < strips), then the n words likewise (a slice's steps: row_bits 0; narrow 4,
 * as convert_permutation's: with jump words, which carry no index and stay as they are). */
#define DROP_DICT(w) ((w) >> (row_bits + dict_bits) << row_bits | ((w) & ((1u << row_bits) - 1u)))
__kernel void convert_drop_dict(const index_t n, const uint narrow, const uint strips,
                                const uint row_bits, const uint dict_bits,
                                __global const uint *restrict coded, __global uint *restrict plain)
{
    const index_t k = get_global_id(0);
    if (narrow && k < strips)
        plain[k] = coded[k];
    if (k >= n)
        return;
    if (narrow) {
        const uint w = ((__global const ushort *)(coded + strips))[k];
        const bool kept = narrow == 4 ? (w & CMRS_NARROW_JUMP) != 0 : w == CMRS_NARROW_HOLE;
        ((__global ushort *)(plain + strips))[k] = kept ? w : (ushort)DROP_DICT(w);
    } else {
        const uint c = coded[k];
        plain[k] = c == CMRS_HOLE ? c : DROP_DICT(c);
    }
}
#undef DROP_DICT

/* A values-only update of CMRS positions first..first+count-1, a run of whole strips:
 * position k takes CSR value perm[k] (k itself without a permutation), which src holds
 * at src_offset + (perm[k] - first), converted to the matrix's precision. A MODULO hole
 * (perm[k] all bits set) stays 0 and reads nothing. */
__kernel void convert_values(const index_t first, const index_t count, const uint use_perm,
                             __global const index_t *restrict perm,
                             __global const source_t *restrict src, const index_t src_offset,
                             __global real_t *restrict dst)
{
    const index_t i = get_global_id(0);
    if (i >= count)
        return;
    const index_t k = first + i, e = use_perm ? perm[k] : k;
    dst[k] = e == (index_t)~(index_t)0 ? (real_t)0 : (real_t)src[src_offset + e - first];
}
