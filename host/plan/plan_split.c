/* plan_split.c - the split path's plan: which strips are split into tiles, how long the
 * tiles are, and where the tiles' sums are added up.
 *
 * A strip far longer than the rest keeps one warp busy while the device idles (the dense
 * matrix, the hubs of power-law graphs). Every strip of more than 2 tiles (and, for the
 * automatic tile, PLAN_SPLIT_FROM entries) is cut into tiles, one warp each, and each row
 * adds its tiles' sums in tile order, so results are the same bits run after run:
 *   KERNEL  cmrs_combine, a second kernel, adds them: any number of tiles per strip.
 *   GROUP   the work-group that summed the tiles adds them after a barrier: cmrs_split_build
 *           keeps all tiles of a long strip in one group, so a tile holds at least
 *           longest strip / warps per group entries, and the plan doubles the work-group
 *           (up to GROUP_MAX_WG, within the device's and local memory's limits) until that
 *           is GROUP_TILE.
 *   LAST    the work-group that finishes a strip's last tile adds them (cl/combine.cl): any
 *           number of tiles per strip, one kernel - a launch less a product, a CG iteration
 *           three instead of four - where the device makes one group's stores seen by
 *           another's loads within a launch (NVIDIA, CPUs); asked for, never chosen (below).
 * On NVIDIA's OpenCL a launch costs the host about 5 us (measured on an H100,
 * docs/dev/PERFORMANCE.md), as long as a small matrix's whole product, and back-to-back products
 * are host-bound at one launch each: few-row matrices whose longest strip fits one group
 * (tiles of at most MIN_TILE entries) take GROUP. So do matrices of long rows (mu >=
 * PLAN_LONG_ROWS, the dense class) whose longest strip fits one group in tiles of at most
 * 2 x MIN_TILE: there the tiles are the work rather than a critical path, and the group is
 * sized for tiles of at least MIN_TILE (measured on an H200, docs/dev/PERFORMANCE.md, long rows).
 * Other matrices, where a strip may need thousands of tiles, take KERNEL. */
#include "plan/plan.h"

#include <stdio.h>
#include <string.h>

#define MIN_TILE 1024 /* shortest automatic tile of the split path ... */
#define MIN_TILE_FEW                                                                               \
    256 /* ... and for few-row matrices, where a tile's chain of loads is the time (both           \
           measured, docs/dev/PERFORMANCE.md "The plan") */
#define GROUP_TILE 256 /* the in-group combine grows the work-group until tiles are this short */
#define GROUP_MAX_WG                                                                               \
    256 /* ... up to this size: any NVIDIA kernel runs it (at most 255 registers a work-item of    \
           64K); at 512 and 1024 NVIDIA refuses the kernels (H100, docs/dev/PERFORMANCE.md) */

/* Tile size of the split path: short enough that the device has about four tiles' worth
 * of work per resident warp, so no single strip outlasts the rest; at least MIN_TILE
 * entries, so the partial sums stay few, or MIN_TILE_FEW when the matrix has few rows and
 * one tile's chain of loads is the time. */
static int32_t auto_tile(const cmrscl_device_info *dev, const plan_matrix *a)
{
    double floor = cmrs_plan_few_rows(dev, a->rows) ? MIN_TILE_FEW : MIN_TILE;
    double t = (double)a->nnz / (4.0 * cmrs_plan_resident_warps(dev));
    t = t < floor ? floor : t > (1 << 20) ? (1 << 20) : t;
    return ((int32_t)t + 63) / 64 * 64;
}

/* The shortest tile (a multiple of the warp) that cuts the longest strip into at most one
 * work-group's warps. */
static int64_t group_tile(const cmrscl_params *p, int64_t longest)
{
    int64_t wpg = p->work_group_size / p->warp;
    int64_t t = (longest + wpg - 1) / wpg;
    return (t + p->warp - 1) / p->warp * p->warp;
}

/* Whether the group should take twice its warps. Few rows: the longest strip's tiles are
 * the critical path, so shorter tiles, down to GROUP_TILE. Long rows: every strip splits, so
 * the tiles are the work, and fewer, longer tiles measured faster (H200, dense 6000 x 6000:
 * 4 tiles of 1504 entries a row 3-6% faster than 8 of 768, and than the second kernel's
 * tiles of 1088; docs/dev/PERFORMANCE.md): more warps only while tiles keep at least MIN_TILE
 * entries. */
static bool wants_more_warps(const cmrscl_params *p, int64_t longest, bool long_rows)
{
    if (long_rows)
        return longest / (2 * p->work_group_size / p->warp) >= MIN_TILE;
    return group_tile(p, longest) > GROUP_TILE;
}

/* Sizes a work-group of several warps that the plan chose (not the user, not one warp fixed
 * by the reduction): doubled, from the plan's size (from one warp for long rows), while
 * wants_more_warps and the device and local memory allow. */
static void grow_group(const cmrscl_device_info *dev, const cmrscl_options *opt, cmrscl_params *p,
                       int64_t longest, bool long_rows)
{
    if (opt->work_group_size || p->work_group_size <= p->warp)
        return;
    int wg = long_rows ? p->warp : p->work_group_size;
    p->work_group_size = wg;
    while (wants_more_warps(p, longest, long_rows) && 2 * wg <= GROUP_MAX_WG &&
           2 * wg <= (int)dev->max_work_group_size) {
        p->work_group_size = 2 * wg;
        if (cmrs_variant_local_bytes(p) > dev->local_mem_bytes)
            break;
        wg = p->work_group_size;
    }
    p->work_group_size = wg;
}

bool cmrs_plan_tiles_fence(const cmrscl_device_info *dev)
{
    /* a device that calls itself a CPU and nothing else: a simulator that claims every type
     * (Oclgrind) reports the tiles' sums read across work-groups as races */
    bool cpu =
        (dev->type & (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) ==
        CL_DEVICE_TYPE_CPU;
    return dev->warp_shuffle || cpu;
}

int cmrs_plan_group_tiles(const cmrscl_params *p)
{
    return p->combine == CMRSCL_COMBINE_GROUP && p->tile > 0 ? p->work_group_size / p->warp : 0;
}

/* Fits the split (p->tile > 0, longest known) to the in-group combine: the work-group is
 * sized and the tile raised to group_tile; where a group holds fewer than three tiles
 * nothing is long any more and nothing splits. */
static void fit_in_group(const cmrscl_device_info *dev, const cmrscl_options *opt, cmrscl_params *p,
                         int64_t longest, bool long_rows)
{
    grow_group(dev, opt, p, longest, long_rows);
    int64_t need = group_tile(p, longest);
    if (p->tile < need)
        p->tile = (int32_t)need;
    if (longest <= 2 * (int64_t)p->tile)
        p->tile = 0, p->combine = CMRSCL_COMBINE_AUTO;
}

cmrscl_status cmrs_plan_split(const cmrscl_device_info *dev, const plan_matrix *a,
                              const cmrscl_options *opt, cmrscl_params *p)
{
    if (opt->tile < -1)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "tile %d: expected entries per tile, 0 (automatic) or -1 (never split)",
                           opt->tile);
    /* refused whatever the matrix, so that whether it runs never depends on which strips are
     * long (A^T, a values update) */
    if (opt->combine == CMRSCL_COMBINE_LAST && !cmrs_plan_tiles_fence(dev))
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "combine last needs one work-group's stores seen by another's loads "
                           "within a launch, which device \"%s\" does not promise (NVIDIA's "
                           "OpenCL and CPUs do): take kernel or group",
                           dev->device_name);
    if (plan_has_holes(p->kernel)) { /* its layout is per whole strip */
        if (opt->tile > 0)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "the %s kernel does not split long strips (tile %d)",
                               cmrs_variant_family_name(p->kernel), opt->tile);
        p->tile = 0;
        return CMRSCL_OK;
    }
    if (!opt->tile && p->tile == -1) { /* the matrix rule's "never split" */
        p->tile = 0;
        return CMRSCL_OK;
    }
    p->tile = opt->tile == -1 ? 0 : opt->tile ? opt->tile : auto_tile(dev, a);
    int64_t long_from = 2 * (int64_t)p->tile;
    if (!opt->tile && long_from < PLAN_SPLIT_FROM)
        long_from = PLAN_SPLIT_FROM;
    int64_t longest = p->tile > 0 ? cmrs_plan_longest_strip(a, p->height) : -1;
    if (longest >= 0 && longest <= long_from)
        p->tile = 0; /* no strip is long: one kernel, no combine */
    if (p->tile == 0)
        return CMRSCL_OK;
    /* Unknown longest strip (no RowPtr to read it from): a combine that takes any split - the
     * second kernel unless the last tile's was asked for. The plan never chooses the last
     * tile's: it saves a launch but measured no faster for it - its products as fast as the two
     * kernels' on NVIDIA, a CG iteration faster on some matrices and slower on others, its
     * products slower on PoCL (docs/dev/PERFORMANCE.md, COMBINE_LAST). */
    p->combine =
        longest < 0 && opt->combine != CMRSCL_COMBINE_LAST ? CMRSCL_COMBINE_KERNEL : opt->combine;
    bool long_rows = a->stats.mu >= PLAN_LONG_ROWS;
    if (p->combine == CMRSCL_COMBINE_AUTO) {
        cmrscl_params group = *p;
        group.combine = CMRSCL_COMBINE_GROUP;
        fit_in_group(dev, opt, &group, longest, long_rows);
        /* the user's tile is kept: the group must take it as it is */
        int32_t longest_tile = long_rows ? 2 * MIN_TILE : MIN_TILE;
        bool fits =
            group.tile > 0 && group.tile <= longest_tile && (!opt->tile || group.tile == p->tile);
        p->combine = CMRSCL_COMBINE_KERNEL;
        if ((long_rows || cmrs_plan_few_rows(dev, a->rows)) && fits) {
            *p = group;
            size_t n = strlen(p->plan_reason);
            snprintf(p->plan_reason + n, sizeof p->plan_reason - n,
                     "; long strips in tiles of %d, summed in their work-group of %d", p->tile,
                     p->work_group_size);
        }
    } else if (p->combine == CMRSCL_COMBINE_GROUP) {
        fit_in_group(dev, opt, p, longest, long_rows);
    }
    return CMRSCL_OK;
}
