/* cmrs_slice.cl - the slice family, for short regular rows (after spmv_common.cl and the warp
 * layer, whose shuffles it does not use).
 *
 * The segment family reads a strip's entries in row order and pays a segmented warp scan to
 * find where rows end: on short rows that scan, not memory, bounds it (a 7-point stencil in
 * float moved its 4-byte entries at half the H100's bandwidth, docs/PERFORMANCE.md session
 * 12). Here the host (src/format/cmrs_slice.c) lays each strip out as a slice: entry i of row
 * r of the strip at StripPtr[s] + i x HEIGHT + r, every row padded with holes (col_ind
 * CMRS_HOLE, value 0) to the strip's longest row. One work-item takes one row: lane r of the
 * strip walks positions r, r + HEIGHT, ..., so a step of the strip's lanes reads HEIGHT
 * consecutive column words - every load coalesced - and no lane waits for another: no scan,
 * no shuffles, no local memory. The row-in-strip bits of the column word are not read (the
 * position says the row); they stay so that the arrays read back as CMRS.
 * A hole is skipped (no x load, no add), so an Inf or NaN in x never meets a padding zero,
 * and each row is summed in its entries' order: the same bits every run.
 * The plan takes it where strips' rows are about equally long (the padding is what it costs)
 * and never splits its strips; WARP is HEIGHT (src/plan/plan.c).
 * Narrow columns (COLUMN_BITS 16, src/format/cmrs_narrow.c): col_ind holds the strips' first
 * columns, then a 16-bit word per position - the step from the column before in the row, the
 * dictionary index in its low bits - so a banded matrix moves 2 bytes of column an entry;
 * the lane adds the steps as it walks its row.
 */
#if WARP != HEIGHT
#error "the slice kernel takes one work-item per row of its strip: WARP == HEIGHT"
#endif
#if WG_SIZE % HEIGHT != 0
#error "a work-group of the slice kernel holds whole strips"
#endif

__kernel CMRS_KERNEL_ATTRIBUTES void cmrs_spmv(CMRS_SPMV_PARAMS)
{
    const uint r = get_local_id(0) % HEIGHT;
    const uint strip = get_group_id(0) * WARPS_PER_GROUP + get_local_id(0) / HEIGHT;
    if (strip >= strips)
        return;
    const index_t end = strip_ptr[strip + 1];
    real_t sum = 0;
    /* AHEAD words loaded before any is used (past the row's end: holes). With narrow columns
     * each column depends on the words before it, and a loop that tests each word before
     * the next load walks the row one load latency an entry (session 14, H100, run 1:
     * fem:50:3 float 0.084 ms against 0.052 with 32-bit words; four ahead, run 2: 0.035;
     * two 0.052, eight 0.037, run 3). 32-bit words gain too: stencil7:160 float 0.066 ms
     * one ahead, 0.061 four ahead (run 4). */
#define AHEAD 4
#if COLUMN_BITS == 16
    __global const ushort *steps = (__global const ushort *)(col_ind + strips);
    uint column = col_ind[strip];
#define LOAD_WORD(j) load_step(steps + (j))
#define HOLE_WORD CMRS_NARROW_HOLE
#define NEXT_COLUMN(w) (column += (w) >> DICT_BITS)
#else
#define LOAD_WORD(j) load_index(col_ind + (j))
#define HOLE_WORD CMRS_HOLE
#define NEXT_COLUMN(w) COLUMN_OF(w)
#endif
    for (index_t j = strip_ptr[strip] + r; j < end; j += AHEAD * HEIGHT) {
        uint w[AHEAD];
#pragma unroll
        for (int k = 0; k < AHEAD; ++k)
            w[k] = j + k * HEIGHT < end ? LOAD_WORD(j + k * HEIGHT) : HOLE_WORD;
#pragma unroll
        for (int k = 0; k < AHEAD; ++k)
            if (w[k] != HOLE_WORD)
                sum += VALUE_AT(j + k * HEIGHT, w[k]) * x[NEXT_COLUMN(w[k])];
    }
    const uint row = strip * HEIGHT + r;
    if (row < rows)
        store_row(y, row, sum, alpha, beta);
}
