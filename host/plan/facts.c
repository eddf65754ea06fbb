/* facts.c - what the plan's rules read off a device and a matrix: the warps it keeps
 * resident, whether a matrix has few rows for it, RowPtr (fetched from the device on the
 * device path's first need) and the longest strip of a height (from the device path's table
 * of power-of-two heights, or RowPtr). */
#include "plan/plan.h"

double cmrs_plan_resident_warps(const cmrscl_device_info *dev)
{
    unsigned hw_warp = dev->warp_width ? dev->warp_width : 32;
    return (double)(dev->compute_units ? dev->compute_units : 1) *
           (dev->resident_items_per_cu ? dev->resident_items_per_cu : 2048) / hw_warp;
}

const int64_t *cmrs_plan_row_ptr(const plan_matrix *a)
{
    return a->row_ptr ? a->row_ptr : a->fetch_row_ptr ? a->fetch_row_ptr(a->source) : NULL;
}

int64_t cmrs_plan_longest_strip(const plan_matrix *a, int height)
{
    int k = 0;
    while (k + 1 < STRIP_HEIGHT_LOGS && (1 << k) < height)
        ++k;
    if (!a->row_ptr && a->longest_strip && (1 << k) == height)
        return a->longest_strip[k]; /* the device path's table of power-of-two heights */
    const int64_t *row_ptr = cmrs_plan_row_ptr(a);
    return row_ptr ? cmrs_analyze_longest_strip(a->rows, row_ptr, height) : -1;
}

bool cmrs_plan_few_rows(const cmrscl_device_info *dev, int32_t rows)
{
    return rows < PLAN_SEGMENT_ROWS * cmrs_plan_resident_warps(dev);
}
