/* facts.c - what the plan's rules read off a device and a matrix: the warps it keeps
 * resident, whether a matrix has few rows for it, and the longest strip of a height (from
 * RowPtr, or the device path's table of power-of-two heights). */
#include "plan/plan.h"

double cmrs_plan_resident_warps(const cmrscl_device_info *dev)
{
    unsigned hw_warp = dev->warp_width ? dev->warp_width : 32;
    return (double)(dev->compute_units ? dev->compute_units : 1) *
           (dev->resident_items_per_cu ? dev->resident_items_per_cu : 2048) / hw_warp;
}

int64_t cmrs_plan_longest_strip(const plan_matrix *a, int height)
{
    if (a->row_ptr)
        return cmrs_analyze_longest_strip(a->rows, a->row_ptr, height);
    int k = 0;
    while (k + 1 < STRIP_HEIGHT_LOGS && (1 << k) < height)
        ++k;
    return a->longest_strip && (1 << k) == height ? a->longest_strip[k] : -1;
}

bool cmrs_plan_few_rows(const cmrscl_device_info *dev, int32_t rows)
{
    return rows < PLAN_SEGMENT_ROWS * cmrs_plan_resident_warps(dev);
}
