/* plan_options.c - the plan's options in and out: the user's options checked before any
 * device fact is read (cmrs_plan_check_options, cmrs_plan_check_precision), and the exact -D string
 * the plan's kernel is compiled with (cmrs_plan_build_options). */
#include "plan/plan.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

cmrscl_status cmrs_plan_check_precision(const cmrscl_device_info *dev, cmrscl_precision precision)
{
    if (precision != CMRSCL_FLOAT && precision != CMRSCL_DOUBLE)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "precision %d is neither CMRSCL_FLOAT nor CMRSCL_DOUBLE",
                           (int)precision);
    if (precision == CMRSCL_DOUBLE && !dev->fp64)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "double precision needs cl_khr_fp64, which device \"%s\" lacks: "
                           "ask for float",
                           dev->device_name);
    return CMRSCL_OK;
}

/* Validates the options that need no device facts. */
cmrscl_status cmrs_plan_check_options(const cmrscl_device_info *dev, cmrscl_precision precision,
                                      const cmrscl_options *opt)
{
    cmrscl_status st = cmrs_plan_check_precision(dev, precision);
    if (st != CMRSCL_OK)
        return st;
    if ((unsigned)opt->layout > CMRSCL_LAYOUT_UNPACKED ||
        (unsigned)opt->order > CMRSCL_ORDER_COLUMNS ||
        (unsigned)opt->reduce > CMRSCL_REDUCE_SUBGROUP ||
        (opt->kernel != CMRSCL_KERNEL_AUTO && !cmrs_variant_family_of(opt->kernel)) ||
        (unsigned)opt->cache_hint > CMRSCL_CACHE_HINT_STREAM ||
        (unsigned)opt->values > CMRSCL_VALUES_DIAGONAL)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "options: layout %d, order %d, reduce %d, kernel %d, cache hint %d or "
                           "values %d is not a known value",
                           (int)opt->layout, (int)opt->order, (int)opt->reduce, (int)opt->kernel,
                           (int)opt->cache_hint, (int)opt->values);
    if ((unsigned)opt->combine > CMRSCL_COMBINE_LAST)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "options: combine %d is not a known value", (int)opt->combine);
    if (opt->lane_entries != 0 && opt->lane_entries != 1 && opt->lane_entries != 2 &&
        opt->lane_entries != 4)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "lane_entries %d: expected 1, 2 or 4 (0: automatic)", opt->lane_entries);
    if (opt->modulo != 0 &&
        (opt->modulo < 2 || opt->modulo > 32 || !plan_power_of_two(opt->modulo)))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "modulo %d: expected 2, 4, 8, 16 or 32 (0: automatic)", opt->modulo);
    const variant_family *f = cmrs_variant_family_of(opt->kernel);
    if (opt->modulo != 0 && !(f && f->slot_sets))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "modulo %d is an option of the MODULO kernel (kernel %d)", opt->modulo,
                           (int)opt->kernel);
    if (opt->height < 0 || opt->height > CMRSCL_MAX_HEIGHT)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "height %d is outside 1..%d", opt->height,
                           CMRSCL_MAX_HEIGHT);
    if (opt->column_bits != 0 && opt->column_bits != 16 && opt->column_bits != 32 &&
        opt->column_bits != CMRSCL_COLUMNS_IMPLIED)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "column_bits %d: expected 16, 32, %d (CMRSCL_COLUMNS_IMPLIED) or 0 "
                           "(automatic)",
                           opt->column_bits, CMRSCL_COLUMNS_IMPLIED);
    if (opt->vectors < 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "vectors %d: expected the block width the matrix will mostly be "
                           "multiplied by, or 0 (single products)",
                           opt->vectors);
    if (opt->index_bits != 0 && opt->index_bits != 32 && opt->index_bits != 64)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "index_bits %d: expected 32, 64 or 0 (automatic)", opt->index_bits);
    if (opt->renumber < CMRSCL_RENUMBER_AUTO || opt->renumber > CMRSCL_RENUMBER_HUBS)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "renumber %d: expected CMRSCL_RENUMBER_NONE, _HUBS or _AUTO (0)",
                           (int)opt->renumber);
    return CMRSCL_OK;
}

/* Appends to the plan's -D string; false once it no longer fits. */
static bool append(cmrscl_params *p, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool append(cmrscl_params *p, size_t *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = *n < sizeof p->build_options
                ? vsnprintf(p->build_options + *n, sizeof p->build_options - *n, fmt, ap)
                : -1;
    va_end(ap);
    if (k < 0 || *n + (size_t)k >= sizeof p->build_options)
        return false;
    *n += (size_t)k;
    return true;
}

cmrscl_status cmrs_plan_build_options(const cmrscl_device_info *dev, cmrscl_params *p)
{
    bool sub = p->reduce == CMRSCL_REDUCE_SUBGROUP;
    size_t n = 0;
    bool whole = append(
        p, &n,
        "-cl-std=CL%s -DKERNEL=%d -DHEIGHT=%d -DWARP=%d -DWG_SIZE=%d -DVALUE_DOUBLE=%d "
        "-DPACKED=%d -DROW_BITS=%d -DREDUCE=%d -DCACHE_HINT=%d -DLANE_ENTRIES=%d -DINDEX64=%d "
        "-DGROUP_COMBINE=%d -DLAST_COMBINE=%d -DVALUES=%d -DDICT_BITS=%d",
        !sub                       ? "1.2"
        : dev->subgroup_cl_c == 30 ? "3.0"
        : dev->subgroup_cl_c == 20 ? "2.0"
                                   : "1.2",
        (int)p->kernel, p->height, p->warp, p->work_group_size, p->precision == CMRSCL_DOUBLE,
        p->layout == CMRSCL_LAYOUT_PACKED, p->row_bits ? p->row_bits : CMRSCL_CMRS_BITS,
        (int)p->reduce, p->cache_hint == CMRSCL_CACHE_HINT_STREAM,
        p->lane_entries ? p->lane_entries : 1, p->index_bits == 64,
        p->combine == CMRSCL_COMBINE_GROUP, p->combine == CMRSCL_COMBINE_LAST, (int)p->values,
        p->dict_bits);
    /* the last tile's combine: PTX's device-wide fence where the device has NVIDIA's PTX */
    if (p->combine == CMRSCL_COMBINE_LAST && dev->warp_shuffle)
        whole = whole && append(p, &n, " -DFENCE_PTX=1");
    /* Sub-groups: fixed to the plan's width where the device lets a kernel ask for one (else
     * the built kernel's own width is checked, subgroups.c), and the shuffles it has. */
    if (sub)
        whole = whole && append(p, &n, " -DREQD_SUBGROUP=%d -DSG_RELATIVE=%d",
                                dev->subgroup_widths & (unsigned)p->warp ? p->warp : 0,
                                dev->subgroup_relative);
    if (p->column_bits == 16)
        whole = whole &&
                append(p, &n, " -DCOLUMN_BITS=16 -DNARROW_ROW_BITS=%d", plan_narrow_row_bits(p));
    if (p->column_bits == 16 && p->column_jumps)
        whole = whole && append(p, &n, " -DNARROW_JUMPS=1");
    /* a slice's narrow words loaded a batch ahead: 9-22% faster on an H200, 2-4x slower on
     * PoCL 3.1 (docs/dev/PERFORMANCE.md, "narrow words early"); elsewhere not measured */
    bool slice = plan_family(p)->lane_per_row, several_rows = slice && p->warp < p->height;
    if (p->column_bits == 16 && slice && !several_rows && dev->warp_shuffle)
        whole = whole && append(p, &n, " -DSLICE_WORDS_EARLY=1");
    if (several_rows) /* several rows a work-item (cl/cmrs_slice.cl) */
        whole = whole && append(p, &n, " -DSLICE_ROWS=%d", p->height / p->warp);
    if (p->column_bits == 0)
        whole = whole && append(p, &n, " -DCOLUMN_BITS=0");
    if (p->modulo)
        whole = whole && append(p, &n, " -DMODULO=%d", p->modulo);
    return whole ? CMRSCL_OK
                 : cmrscl_fail(CMRSCL_ERROR_BUILD,
                               "the kernel's build options exceed %zu characters: \"%s\"",
                               sizeof p->build_options - 1, p->build_options);
}

/* Each launch of the block product reads the matrix once, so wide launches pay where the
 * matrix's bytes count and X's rows come from DRAM: the strip and segment layouts keep up to
 * 64 vectors (NVIDIA H100, docs/dev/PERFORMANCE.md; k = 32 in double: launches of 32 faster than
 * two of 16 on random:2000000:8 1.17x, R-MAT 1.11x, dense:6000 1.20x, a Kronecker product
 * 1.13x; slower on random:500000:32 1.21x, the evidence against). In the slice layout
 * (stencils, FEM: 2 bytes an entry, X's rows from L2) launches whose row of X is at most 128
 * bytes run faster instead: k = 32 in double as two launches of 16 and k = 64 in float as
 * two of 32 alike - stencil27:100 1.48x / 1.49x, fem:50:3 1.25x, stencil7:200 1.20x / 1.22x,
 * stencil27:120 1.15x, fem:40:4 1.05x; stencil5:2000, stencil7:160 and fem:64:2 3-4%
 * slower. Narrower still loses: k = 32 in float as two launches of 16, stencil27:100 1.19x
 * slower. */
int cmrs_plan_block_vectors(const cmrscl_params *p)
{
    int row_bytes = plan_family(p)->block_row_bytes;
    if (row_bytes)
        return row_bytes / (int)cmrscl_precision_size(p->precision);
    return PLAN_BLOCK_VECTORS_MAX;
}

int cmrs_plan_spmm_options(const cmrscl_params *p, int reduce, int warp, int work_group_size,
                           int vec_lanes, int vec_per_lane, int vec_width, char *out, size_t size)
{
    /* The matrix's layout and values as its plan stores them; the warp layer's backend and
     * the launch's shape are the block product's own. */
    return snprintf(out, size,
                    "-cl-std=CL1.2 -DKERNEL=%d -DHEIGHT=%d -DWARP=%d -DWG_SIZE=%d "
                    "-DVALUE_DOUBLE=%d -DPACKED=%d -DROW_BITS=%d -DREDUCE=%d -DCACHE_HINT=%d "
                    "-DINDEX64=%d -DVALUES=%d -DDICT_BITS=%d -DCOLUMN_BITS=%d -DVEC_LANES=%d "
                    "-DVEC_PER_LANE=%d -DVEC_WIDTH=%d -DNARROW_ROW_BITS=%d -DNARROW_JUMPS=%d",
                    (int)p->kernel, p->height, warp, work_group_size, p->precision == CMRSCL_DOUBLE,
                    p->layout == CMRSCL_LAYOUT_PACKED, p->row_bits ? p->row_bits : CMRSCL_CMRS_BITS,
                    reduce, p->cache_hint == CMRSCL_CACHE_HINT_STREAM, p->index_bits == 64,
                    (int)p->values, p->dict_bits, p->column_bits, vec_lanes, vec_per_lane,
                    vec_width, plan_narrow_row_bits(p), p->column_jumps > 0);
}
