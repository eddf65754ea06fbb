/* params.c - from device facts, precision and user options to kernel parameters and the
 * exact -D string they are compiled with. HEIGHT falls back user -> tuned -> device rule.
 *
 * The HEIGHT rule (paper, section 6.3): each work-item of the basic kernel keeps HEIGHT
 * partial sums in local memory, so HEIGHT limits how many work-items fit on a compute
 * unit, and the paper found the best HEIGHT where that limit meets the occupancy the
 * device needs to saturate memory (Kepler: 100%, giving 6 floats / 4 doubles; Fermi:
 * 2/3, giving 12 / 8). The rule aims at full occupancy:
 *     HEIGHT = local memory per compute unit / (resident work-items * value size),
 * clamped to 1..16 (the paper's upper bound, section 5, and the packed layout's limit).
 * On Kepler's 48 KiB and 2048 threads it gives 6 for float, the paper's optimum. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define DEFAULT_WORK_GROUP 128 /* paper, section 6.3: smallest size that saturates memory */

/* Measured optima, searched by `cmrscl-run tune`; first match of the device name wins.
 * Each entry says where it was measured (see docs/PERFORMANCE.md). */
static const struct {
    const char *device_name;
    cmrscl_precision precision;
    int height;
} tuned[] = {
    /* NVIDIA H200, OpenCL 3.0 CUDA 13.0, stencil27:100 and random:1000000:4, 2026-11-21:
     * the rule's 14 for double ran 12% slower than 16; 16 for float is the rule's too. */
    {"H200", CMRSCL_FLOAT, 16},
    {"H200", CMRSCL_DOUBLE, 16},
    {NULL, CMRSCL_FLOAT, 0}, /* terminator */
};

int params_rule_height(const cmrscl_device_info *dev, cmrscl_precision precision)
{
    uint64_t value = cmrscl_precision_size(precision);
    uint64_t resident = dev->resident_items_per_cu ? dev->resident_items_per_cu : 2048;
    uint64_t h = dev->local_mem_per_cu_bytes / (resident * value);
    /* A work-group of the default size must still fit its local memory. */
    uint64_t per_group = dev->local_mem_bytes / (DEFAULT_WORK_GROUP * value);
    if (h > per_group)
        h = per_group;
    if (h > CMRSCL_MAX_PACKED_HEIGHT)
        h = CMRSCL_MAX_PACKED_HEIGHT;
    return h < 1 ? 1 : (int)h;
}

int params_default_height(const cmrscl_device_info *dev, cmrscl_precision precision,
                          const char **source)
{
    for (size_t i = 0; tuned[i].device_name; ++i)
        if (tuned[i].precision == precision && strstr(dev->device_name, tuned[i].device_name)) {
            *source = "tuned";
            return tuned[i].height;
        }
    *source = "device rule";
    return params_rule_height(dev, precision);
}

static bool power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }

static cmrscl_status choose_geometry(const cmrscl_device_info *dev, const cmrscl_options *opt,
                                     cmrscl_params *p)
{
    p->warp = opt->warp ? opt->warp : (int)dev->warp_width;
    if (!power_of_two(p->warp) || p->warp > 1024)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "warp %d is not a power of two in 1..1024", p->warp);
    if (opt->work_group_size) {
        p->work_group_size = opt->work_group_size;
        if (p->work_group_size < p->warp || p->work_group_size % p->warp)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "work-group size %d is not a multiple of the warp width %d",
                               p->work_group_size, p->warp);
    } else {
        p->work_group_size = p->warp > DEFAULT_WORK_GROUP ? p->warp : DEFAULT_WORK_GROUP;
        while (p->work_group_size > (int)dev->max_work_group_size && p->work_group_size > p->warp)
            p->work_group_size -= p->warp;
    }
    if (p->work_group_size > (int)dev->max_work_group_size)
        return cmrscl_fail(CMRSCL_ERROR_DEVICE_LIMIT,
                           "work-group size %d exceeds the device's maximum of %u",
                           p->work_group_size, dev->max_work_group_size);
    return CMRSCL_OK;
}

static cmrscl_status choose_variant(const cmrscl_device_info *dev, int32_t cols,
                                    const cmrscl_options *opt, cmrscl_params *p)
{
    bool fits = cmrs_packing_fits(cols, p->height);
    if (opt->layout == CMRSCL_LAYOUT_PACKED && !fits)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "the packed layout needs height <= %d and at most 2^28 columns "
                           "(height %d, %d columns)",
                           CMRSCL_MAX_PACKED_HEIGHT, p->height, cols);
    p->layout = opt->layout == CMRSCL_LAYOUT_UNPACKED || !fits ? CMRSCL_LAYOUT_UNPACKED
                                                               : CMRSCL_LAYOUT_PACKED;
    /* Paper, section 6.3: "the data should be sorted" - column order within strips. */
    p->order = opt->order == CMRSCL_ORDER_ROWS ? CMRSCL_ORDER_ROWS : CMRSCL_ORDER_COLUMNS;
    bool shuffle_ok = dev->warp_shuffle && p->warp == 32 && p->height <= 32;
    if (opt->reduce == CMRSCL_REDUCE_SHUFFLE && !shuffle_ok)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "the shuffle reduction needs an NVIDIA device (sm_30+), warp 32 and "
                           "height <= 32 (device \"%s\", warp %d, height %d)",
                           dev->device_name, p->warp, p->height);
    p->reduce = opt->reduce == CMRSCL_REDUCE_LOCAL || !shuffle_ok ? CMRSCL_REDUCE_LOCAL
                                                                  : CMRSCL_REDUCE_SHUFFLE;
    return CMRSCL_OK;
}

cmrscl_status params_choose(const cmrscl_device_info *dev, cmrscl_precision precision, int32_t cols,
                            const cmrscl_options *opt, cmrscl_params *p)
{
    static const cmrscl_options defaults;
    if (!opt)
        opt = &defaults;
    memset(p, 0, sizeof *p);
    if (precision != CMRSCL_FLOAT && precision != CMRSCL_DOUBLE)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "precision %d is neither CMRSCL_FLOAT "
                           "nor CMRSCL_DOUBLE",
                           (int)precision);
    if (precision == CMRSCL_DOUBLE && !dev->fp64)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "double precision needs cl_khr_fp64, which device \"%s\" lacks",
                           dev->device_name);
    p->precision = precision;
    if ((unsigned)opt->layout > CMRSCL_LAYOUT_UNPACKED ||
        (unsigned)opt->order > CMRSCL_ORDER_COLUMNS ||
        (unsigned)opt->reduce > CMRSCL_REDUCE_SHUFFLE)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "options: layout %d, order %d or reduce %d is not a known value",
                           (int)opt->layout, (int)opt->order, (int)opt->reduce);
    if (opt->height < 0 || opt->height > CMRSCL_MAX_HEIGHT)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "height %d is outside 1..%d", opt->height,
                           CMRSCL_MAX_HEIGHT);
    p->height = params_default_height(dev, precision, &p->height_source);
    if (opt->height) {
        p->height = opt->height;
        p->height_source = "user";
    }
    cmrscl_status st = choose_geometry(dev, opt, p);
    if (st == CMRSCL_OK)
        st = choose_variant(dev, cols, opt, p);
    if (st != CMRSCL_OK)
        return st;
    uint64_t local =
        (uint64_t)p->work_group_size * (uint64_t)p->height * cmrscl_precision_size(precision);
    if (local > dev->local_mem_bytes)
        return cmrscl_fail(CMRSCL_ERROR_DEVICE_LIMIT,
                           "height %d x work-group %d x %zu-byte values need %llu bytes of local "
                           "memory; the device offers %llu",
                           p->height, p->work_group_size, cmrscl_precision_size(precision),
                           (unsigned long long)local, (unsigned long long)dev->local_mem_bytes);
    snprintf(p->build_options, sizeof p->build_options,
             "-cl-std=CL1.2 -DHEIGHT=%d -DWARP=%d -DWG_SIZE=%d -DVALUE_DOUBLE=%d -DPACKED=%d "
             "-DREDUCE=%d",
             p->height, p->warp, p->work_group_size, precision == CMRSCL_DOUBLE,
             p->layout == CMRSCL_LAYOUT_PACKED, p->reduce == CMRSCL_REDUCE_SHUFFLE ? 2 : 1);
    return CMRSCL_OK;
}
