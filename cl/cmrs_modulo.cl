/* cmrs_modulo.cl - the MODULO family: the paper's modified CMRS kernel (section 7), made
 * correct for any matrix without implicit warp synchrony (after spmv_common.cl and the warp
 * layer, warp.cl).
 *
 * One warp of WARP work-items takes one strip of HEIGHT rows, and its lanes share a buffer of
 * MODULO x HEIGHT sums in local memory instead of owning HEIGHT slots each: lane l adds into
 * slot [row][l % MODULO]. The warp walks the strip in steps of WARP consecutive stored
 * entries (lane l takes entry begin + t*WARP + l in step t), and the host
 * (host/format/cmrs_modulo.c) lays each strip out so that within a step, lanes of one class (l %
 * MODULO) never hold the same row: no two lanes of a step touch the same slot. Where no entry fits
 * it puts a hole (col_ind CMRS_HOLE, value 0), for which the lane loads nothing and adds nothing,
 * so an Inf or NaN in x never meets a padding zero. Between steps the strip's lanes synchronise
 * (warp_sync of the warp layer), so one step's read-modify-writes are done and visible before
 * the next step's: on the LOCAL backend that is a group barrier, and the plan makes the
 * work-group exactly one warp, every lane of which runs the same number of steps (the strip's
 * stored length rounded up to WARP), so the barrier is uniform; NVIDIA's bar.warp.sync and
 * sub-group barriers order the strip's lanes alone.
 * The paper's CUDA relied on the warp running in lock step instead, which OpenCL does not
 * promise and current NVIDIA GPUs do not give. Then each of the first HEIGHT lanes sums its
 * row's MODULO slots in slot order (the same order every run) and the row leaves through
 * emit_row, as in the strip family. MODULO plans do not split long strips (host/plan/plan.c).
 *
 * Build options besides spmv_common.cl's:
 *   MODULO        slot sets per strip, a power of two dividing WARP            (required)
 */
#if DOTS_WARP_SUMS
#error "this family's solver product sums by work-group (host/exec/spmv_dots.c)"
#endif
#if VALUES != CMRS_VALUES_PLAIN
#error "the MODULO kernel's holes store zeros: its values are plain"
#endif
#ifndef MODULO
#error "MODULO (slot sets per strip) must be defined"
#endif
#if MODULO < 1 || (MODULO & (MODULO - 1)) != 0 || WARP % MODULO != 0
#error "MODULO must be a power of two dividing WARP"
#endif
#if REDUCE == CMRS_REDUCE_LOCAL && WG_SIZE != WARP
#error "the MODULO kernel with local barriers runs one warp per work-group"
#endif

__kernel CMRS_KERNEL_ATTRIBUTES void cmrs_spmv(CMRS_SPMV_PARAMS DOTS_PARAMS)
{
    DOTS_SCRATCH
    DOTS_RETURN_IF_STOPPED();
    const uint lane = warp_lane();
    const uint warp = warp_index();
    __local real_t slots[WARPS_PER_GROUP * MODULO * HEIGHT];
    __local real_t *base = slots + warp * (MODULO * HEIGHT);
    __local real_t *mine = base + lane % MODULO; /* slot of row r: mine[r * MODULO] */
    DOTS_GROUP_BEGIN();
    FOR_GROUPS(group)
    {
        work w;
        find_work(&w, group, warp, strips, first_tile_group, tiles, tile_entries, strip_ptr,
                  tile_start, tile_strip);
        for (uint k = lane; k < MODULO * HEIGHT; k += WARP)
            base[k] = (real_t)0;
        warp_sync();
        /* inactive warps (past the last strip) have begin == end: no steps */
        const index_t steps = (w.end - w.begin + (WARP - 1)) / WARP;
        index_t j = w.begin + lane;
        for (index_t t = 0; t < steps; ++t, j += WARP) {
            if (j < w.end) {
                const uint c = load_index(col_ind + j);
                if (c != CMRS_HOLE) {
#if PACKED
                    const uint r = c & ROW_MASK, col = c >> ROW_BITS;
#else
                    const uint r = row_in_strip[j], col = c;
#endif
                    mine[r * MODULO] += VALUE_AT(j, c, col) * GATHER(col, w.strip * HEIGHT + r);
                }
            }
            warp_sync(); /* this step's sums land before the next step reads its slots */
        }
        /* Lane r sums row r's MODULO slots in slot order. */
        for (uint r = lane; w.active && r < HEIGHT; r += WARP) {
            real_t sum = base[r * MODULO];
            for (uint m = 1; m < MODULO; ++m)
                sum += base[r * MODULO + m];
            emit_row(&w, r, sum, rows, y, partial, alpha, beta);
        }
        DOTS_OF_GROUP(&w);
    }
    DOTS_GROUP_END();
}
