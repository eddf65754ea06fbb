/* cmrs_slice.cl - the slice family, for short regular rows (after spmv_common.cl and the warp
 * layer, whose shuffles it does not use).
 *
 * The segment family reads a strip's entries in row order and pays a segmented warp scan to
 * find where rows end: on short rows that scan, not memory, bounds it (a 7-point stencil in
 * float moved its 4-byte entries at half the H100's bandwidth, docs/dev/PERFORMANCE.md session
 * 12). Here the host (host/format/cmrs_slice.c) lays each strip out as a slice: entry i of row
 * r of the strip at StripPtr[s] + i x HEIGHT + r, every row padded with holes (col_ind
 * CMRS_HOLE, value 0) to the strip's longest row. One work-item takes one row: lane r of the
 * strip walks positions r, r + HEIGHT, ..., so a step of the strip's lanes reads HEIGHT
 * consecutive column words - every load coalesced - and no lane waits for another: no scan,
 * no shuffles, no local memory (but a solver's sums: cl/dots.cl, DOTS_LOCAL_SUMS). The
 * row-in-strip bits of the column word are not read (the position says the row); they stay so
 * that the arrays read back as CMRS.
 * A hole is skipped (no x load, no add), so an Inf or NaN in x never meets a padding zero,
 * and each row is summed in its entries' order: the same bits every run.
 * The plan takes it where strips' rows are about equally long (the padding is what it costs)
 * and never splits its strips (host/plan/plan.c).
 * Several rows a work-item (-DSLICE_ROWS=R, WARP = HEIGHT / R): work-item t walks rows tR ..
 * tR + R - 1 side by side, a step of their R consecutive positions at a time, a loop that the
 * compiler's vectoriser takes (clang's loop pragma: SIMD gathers of x where the CPU has them).
 * On GPUs one row a work-item: the warp's lanes are the rows side by side. On CPUs a
 * work-item takes the whole strip (R = HEIGHT), whose step is then one SIMD operation - where
 * the device runs each work-item as scalar code in a loop (PoCL) the only one there is
 * (docs/dev/PERFORMANCE.md, CPU_SLICE_ITEM). Each row is summed in the same order either way:
 * the same bits.
 * Narrow columns (COLUMN_BITS 16, host/format/cmrs_narrow.c): col_ind holds the strips' first
 * columns, then a 16-bit word per position - the step from the column before in the row, the
 * dictionary index in its low bits - so a banded matrix moves 2 bytes of column an entry;
 * the lane adds the steps as it walks its row. A step too long for its word takes a jump word
 * before it (-DNARROW_JUMPS=1, cmrs_abi.h): a position with no entry, as a hole.
 */
#ifndef SLICE_ROWS
#define SLICE_ROWS 1
#endif
#if WARP * SLICE_ROWS != HEIGHT
#error "the slice kernel takes SLICE_ROWS rows a work-item: WARP x SLICE_ROWS == HEIGHT"
#endif
#if WG_SIZE % WARP != 0
#error "a work-group of the slice kernel holds whole strips"
#endif

__kernel CMRS_KERNEL_ATTRIBUTES void cmrs_spmv(CMRS_SPMV_PARAMS DOTS_PARAMS)
{
    DOTS_SCRATCH
    PRODUCT_BEGIN(); /* the solvers' (dots.cl, cg_fused.cl): `stopped`, and their sums' acc */
    /* A warp takes strip after strip, the grid's warps apart: one each on the plan's grid, and
     * several on a solver's product, whose grid the device's resident warps cap so that its
     * partial sums stay few enough for the next kernel to add up (host/exec/spmv_dots.c) */
    const uint stride = get_num_groups(0) * WARPS_PER_GROUP;
#if SLICE_ROWS > 1
    const uint r0 = get_local_id(0) % WARP * SLICE_ROWS; /* the work-item's first row */
    for (uint strip = get_group_id(0) * WARPS_PER_GROUP + get_local_id(0) / WARP; strip < strips;
         strip += stride) {
        const index_t end = strip_ptr[strip + 1];
        uint columns[SLICE_ROWS]; /* each row's walk (narrow columns' running column) */
        real_t sums[SLICE_ROWS];
#pragma unroll
        for (int i = 0; i < SLICE_ROWS; ++i) {
            columns[i] = FIRST_COLUMN(strip);
            sums[i] = 0;
        }
        for (index_t j = strip_ptr[strip] + r0; j < end; j += HEIGHT) {
            /* the step's SLICE_ROWS positions, one a row: independent, consecutive words - a
             * loop for the compiler's vectoriser (gathers of x where the CPU has them) */
#ifdef __clang__
#pragma clang loop unroll(disable) vectorize(enable) vectorize_width(SLICE_ROWS)
#else
#pragma unroll
#endif
            for (int i = 0; i < SLICE_ROWS; ++i) {
                uint column = columns[i];
                (void)column;
                const uint w = LOAD_WORD(j + i);
                if (NO_ENTRY(w)) {
                    SKIP(w);
                } else {
                    const uint c = NEXT_COLUMN(w);
                    sums[i] += VALUE_AT(j + i, w, c) * GATHER(c, strip * HEIGHT + r0 + i);
                }
                columns[i] = column;
            }
        }
#pragma unroll
        for (int i = 0; i < SLICE_ROWS; ++i) {
            const uint row = strip * HEIGHT + r0 + i;
            if (!stopped && row < rows)
                PRODUCT_ROW(row, sums[i]);
        }
    }
#else
    const uint r = get_local_id(0) % HEIGHT;
    for (uint strip = get_group_id(0) * WARPS_PER_GROUP + get_local_id(0) / HEIGHT; strip < strips;
         strip += stride) {
        const uint row = strip * HEIGHT + r;
        const index_t end = strip_ptr[strip + 1];
        /* the row's words, SLICE_AHEAD at a time (spmv_common.cl); with SLICE_WORDS_EARLY the
         * next batch's loads go out before this batch's gathers */
        uint column = FIRST_COLUMN(strip);
        (void)column;
        uint w[SLICE_AHEAD], early[SLICE_AHEAD];
        real_t sum = 0;
        index_t j = strip_ptr[strip] + r;
        if (SLICE_WORDS_EARLY)
            LOAD_WORDS(early, j, end);
        for (; j < end; j += SLICE_AHEAD * HEIGHT) {
#pragma unroll
            for (int k = 0; k < SLICE_AHEAD; ++k)
                w[k] = SLICE_WORDS_EARLY      ? early[k]
                       : j + k * HEIGHT < end ? LOAD_WORD(j + k * HEIGHT)
                                              : HOLE_WORD;
            if (SLICE_WORDS_EARLY)
                LOAD_WORDS(early, j + SLICE_AHEAD * HEIGHT, end);
#pragma unroll
            for (int k = 0; k < SLICE_AHEAD; ++k) {
                if (NO_ENTRY(w[k])) {
                    SKIP(w[k]);
                } else {
                    const uint c = NEXT_COLUMN(w[k]);
                    sum += VALUE_AT(j + k * HEIGHT, w[k], c) * GATHER(c, row);
                }
            }
        }
        /* with DOTS: the row's terms, from the value it wrote. `stopped` first: without DOTS
         * it is the constant false, which clang warns of on the right of && (PoCL printed "1
         * warning generated." on every first build of the plain product) */
        if (!stopped && row < rows)
            PRODUCT_ROW(row, sum);
    }
#endif
    PRODUCT_END(); /* every work-item reaches it: no return above */
}
