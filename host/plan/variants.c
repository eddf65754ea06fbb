/* variants.c - the table of kernel variants (variants.def): each family with its kernel
 * file, defaults, tunable HEIGHTs and local memory, and each variant - a family on a backend
 * of the warp layer - with what it needs of the device and the lanes per strip it takes.
 * The plan picks from it (plan.c), the tuner times it (tune.c), the tuning database and the
 * CLI accept its names, and the tests run every row a device can run. */
#include "plan/plan.h"

#include "cmrs_abi.h" /* the kernels' option codes, which the public enums equal */

#include <stdio.h>
#include <string.h>

_Static_assert(CMRSCL_KERNEL_STRIP == CMRS_KERNEL_STRIP &&
                   CMRSCL_KERNEL_SEGMENT == CMRS_KERNEL_SEGMENT &&
                   CMRSCL_KERNEL_MODULO == CMRS_KERNEL_MODULO &&
                   CMRSCL_KERNEL_SLICE == CMRS_KERNEL_SLICE,
               "cmrscl_kernel is the kernels' -DKERNEL code (cl/cmrs_abi.h)");
_Static_assert(CMRSCL_REDUCE_LOCAL == CMRS_REDUCE_LOCAL &&
                   CMRSCL_REDUCE_SHUFFLE == CMRS_REDUCE_SHUFFLE &&
                   CMRSCL_REDUCE_SUBGROUP == CMRS_REDUCE_SUBGROUP,
               "cmrscl_reduce is the kernels' -DREDUCE code (cl/cmrs_abi.h)");

/* Local memory of a work-group, per family. */
static uint64_t strip_local(const cmrscl_params *p, uint64_t value_size)
{
    /* each lane's HEIGHT slots; HEIGHT 1 keeps its sum in a register where shuffles reduce */
    if (p->height == 1 && p->reduce != CMRSCL_REDUCE_LOCAL)
        return 0;
    return (uint64_t)p->work_group_size * (uint64_t)p->height * value_size;
}
static uint64_t segment_local(const cmrscl_params *p, uint64_t value_size)
{
    /* the warp layer's scratch where it emulates shuffles: a value and an index a lane */
    bool emulated = p->reduce == CMRSCL_REDUCE_LOCAL && p->warp > 1;
    return emulated ? (uint64_t)p->work_group_size * (value_size + 4) : 0;
}
static uint64_t modulo_local(const cmrscl_params *p, uint64_t value_size)
{
    /* MODULO x HEIGHT slots per warp */
    return (uint64_t)(p->work_group_size / p->warp) * (uint64_t)p->modulo * (uint64_t)p->height *
           value_size;
}

static uint64_t no_local(const cmrscl_params *p, uint64_t value_size)
{
    (void)p, (void)value_size; /* slice: a row's sum stays in its work-item's register */
    return 0;
}

static const int strip_heights[] = {1, 2, 4, 8, 12, 16, 0};
static const int segment_heights[] = {16, 32, 64, 128, 256, 0};
static const int slice_heights[] = {16, 32, 64, 0};
static const int no_heights[] = {0};

/* The families by the names variants.def uses. */
#define KERNEL_strip CMRSCL_KERNEL_STRIP
#define KERNEL_segment CMRSCL_KERNEL_SEGMENT
#define KERNEL_modulo CMRSCL_KERNEL_MODULO
#define KERNEL_slice CMRSCL_KERNEL_SLICE
#define FILE_strip "cmrs_strip.cl"
#define FILE_segment "cmrs_segment.cl"
#define FILE_modulo "cmrs_modulo.cl"
#define FILE_slice "cmrs_slice.cl"
#define REDUCE_local CMRSCL_REDUCE_LOCAL
#define REDUCE_shuffle CMRSCL_REDUCE_SHUFFLE
#define REDUCE_subgroup CMRSCL_REDUCE_SUBGROUP

/* The families' records: what each is asked (plan.h, variant_family). */
static const variant_family families[] = {
    {
        .kernel = KERNEL_strip,
        .name = "strip",
        .group_rounds = true,
        .rounds_pay = true,
        .file = FILE_strip,
        .height = 0, /* the device's occupancy rule (plan.c) */
        .local_warp = 0,
        .tune_heights = strip_heights,
        .tunes_warps = true,
        .local_bytes = strip_local,
        .holes = HOLES_NONE,
        .narrow_columns = true,
        .implied_columns = true,
        .fuses_cg = true,
    },
    {
        .kernel = KERNEL_segment,
        .name = "segment",
        .group_rounds = true,
        .file = FILE_segment,
        .height = 32,
        .local_warp = 1, /* without shuffles one work-item walks each strip */
        .tune_heights = segment_heights,
        .local_bytes = segment_local,
        .holes = HOLES_NONE,
        .rows_together = true, /* the segmented scan finds a row's end in its run */
        .lane_entries = true,
        .fuses_cg = false, /* it gathers in a helper the fused iteration's vectors do not reach */
    },
    {
        .kernel = KERNEL_modulo,
        .name = "modulo",
        .group_rounds = true,
        .file = FILE_modulo,
        .height = 16,
        .height_source = "paper", /* section 7 */
        .local_warp = 0,
        .tune_heights = no_heights, /* only on request: nothing to tune */
        .local_bytes = modulo_local,
        .holes = HOLES_BETWEEN,
        .slot_sets = true,
        .fuses_cg = true,
    },
    {
        .kernel = KERNEL_slice,
        .name = "slice",
        .file = FILE_slice,
        .height = 32,
        .local_warp = 0,
        .tune_heights = slice_heights,
        .local_bytes = no_local,
        .holes = HOLES_AFTER_ROWS,
        .lane_per_row = true,
        .strip_loop = true,
        .rows_together = true, /* slices are laid from row-ordered strips */
        .narrow_columns = true,
        .fuses_cg = true,
        /* X's rows from L2 (docs/dev/PERFORMANCE.md; plan_options.c, cmrs_plan_block_vectors) */
        .block_row_bytes = 128,
    },
};
#define FAMILY_strip (&families[0])
#define FAMILY_segment (&families[1])
#define FAMILY_modulo (&families[2])
#define FAMILY_slice (&families[3])

static const kernel_variant variants[] = {
#define VARIANT(family, reduce, needs, lanes, in_loops)                                            \
    {{#family "/" #reduce, #family, #reduce, KERNEL_##family, REDUCE_##reduce, FILE_##family},     \
     FAMILY_##family,                                                                              \
     needs,                                                                                        \
     lanes,                                                                                        \
     in_loops},
#include "variants.def"
#undef VARIANT
};

size_t cmrs_variant_count(void) { return sizeof variants / sizeof variants[0]; }

const kernel_variant *cmrs_variant_at(size_t i)
{
    return i < cmrs_variant_count() ? &variants[i] : NULL;
}

const kernel_variant *cmrs_variant_find(cmrscl_kernel kernel, cmrscl_reduce reduce)
{
    for (size_t i = 0; i < cmrs_variant_count(); ++i)
        if (variants[i].pub.kernel == kernel && variants[i].pub.reduce == reduce)
            return &variants[i];
    return NULL;
}

const variant_family *cmrs_variant_family_of(cmrscl_kernel kernel)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; ++i)
        if (families[i].kernel == kernel)
            return &families[i];
    return NULL;
}

const char *cmrs_variant_family_name(cmrscl_kernel kernel)
{
    const variant_family *f = cmrs_variant_family_of(kernel);
    return f ? f->name : "unknown";
}

const char *cmrs_variant_reduce_name(cmrscl_reduce reduce)
{
    for (size_t i = 0; i < cmrs_variant_count(); ++i)
        if (variants[i].pub.reduce == reduce)
            return variants[i].pub.reduction;
    return "auto";
}

const char *cmrs_variant_missing(const cmrscl_device_info *dev, const kernel_variant *v)
{
    if ((v->needs & NEEDS_PTX) && !dev->warp_shuffle)
        return "NVIDIA's warp shuffles (inline PTX: sm_30 or newer, warps of 32)";
    if ((v->needs & NEEDS_SUBGROUPS) && !dev->subgroup_width)
        return "sub-groups (cl_khr_subgroups, or OpenCL C 3.0's __opencl_c_subgroups) whose "
               "width and layout a probe kernel confirms";
    if ((v->needs & NEEDS_SG_SHUFFLE) && !dev->subgroup_shuffle)
        return "sub-group shuffles (cl_khr_subgroup_shuffle) that a probe kernel confirms";
    return NULL;
}

int cmrs_variant_default_warp(const cmrscl_device_info *dev, const kernel_variant *v)
{
    switch (v->lanes) {
    case LANES_SUBGROUP: return (int)dev->subgroup_width;
    case LANES_32: return 32;
    case LANES_HW_WARP: return dev->warp_width < 32 ? (int)dev->warp_width : 32;
    default: return v->family->local_warp ? v->family->local_warp : (int)dev->warp_width;
    }
}

const char *cmrs_variant_lanes_refused(const cmrscl_device_info *dev, const kernel_variant *v,
                                       int warp)
{
    switch (v->lanes) {
    case LANES_SUBGROUP:
        if (warp == (int)dev->subgroup_width ||
            (warp > 1 && (dev->subgroup_widths & (unsigned)warp)))
            return NULL;
        return "lanes per strip must be the sub-group width the device uses, or one kernels can "
               "be fixed to (cmrscl_device_info.subgroup_width, subgroup_widths)";
    case LANES_32: return warp == 32 ? NULL : "its NVIDIA shuffles need exactly 32 lanes per strip";
    case LANES_HW_WARP:
        return warp <= 32 ? NULL : "its NVIDIA shuffles need at most 32 lanes per strip";
    default: return NULL;
    }
}

bool cmrs_variant_one_warp(const cmrscl_device_info *dev, const kernel_variant *v, int warp)
{
    bool apart = v->pub.reduce == CMRSCL_REDUCE_SHUFFLE ||
                 (v->pub.reduce == CMRSCL_REDUCE_SUBGROUP && dev->subgroup_apart);
    return v->in_loops && warp > 1 && !apart;
}

uint64_t cmrs_variant_local_bytes(const cmrscl_params *p)
{
    const variant_family *f = cmrs_variant_family_of(p->kernel);
    uint64_t value_size = cmrscl_precision_size(p->precision);
    /* the last tile's combine: a share a work-item, the strips a group completes (combine.cl) */
    uint64_t last = p->combine == CMRSCL_COMBINE_LAST
                        ? (uint64_t)p->work_group_size * value_size +
                              4 * (uint64_t)(p->work_group_size / p->warp + 1)
                        : 0;
    return f ? f->local_bytes(p, value_size) + last : 0;
}

size_t cmrscl_variant_count(void) { return cmrs_variant_count(); }

const cmrscl_variant *cmrscl_variant_get(size_t index)
{
    const kernel_variant *v = cmrs_variant_at(index);
    return v ? &v->pub : NULL;
}

cmrscl_status cmrscl_variant_check(const cmrscl_device_info *dev, const cmrscl_variant *variant)
{
    if (!dev || !variant)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "device or variant is NULL");
    const kernel_variant *v = cmrs_variant_find(variant->kernel, variant->reduce);
    if (!v)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "no variant of kernel %d and reduce %d",
                           (int)variant->kernel, (int)variant->reduce);
    const char *missing = cmrs_variant_missing(dev, v);
    if (missing)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED, "%s needs %s, which device \"%s\" lacks",
                           v->pub.name, missing, dev->device_name);
    return CMRSCL_OK;
}
