/* plan.c - the plan: from device facts, the matrix's row statistics (analyze.c) and user
 * options to a kernel variant (variants.c), its parameters, the exact -D string it is compiled
 * with, and the reason in words. Every field falls back user -> tuning database -> matrix
 * rule -> device rule; cmrscl_params records where the plan came from.
 *
 * The matrix rule for GPUs whose lanes can talk - NVIDIA's shuffles, or sub-groups with
 * shuffles - from the device's facts (resident warps, last-level cache, warp or sub-group
 * width); measured on an H200 (docs/dev/PERFORMANCE.md "The plan"):
 *   long rows (mu >= PLAN_LONG_ROWS) -> strip family, HEIGHT 1: CSR-vector, one warp per
 *                                      row; the matrix streamed past L2 when it does not
 *                                      fit there (cache_bytes);
 *   medium rows (mu >= MEDIUM_ROWS, -> strip family, Algorithm 1 with column-ordered strips,
 *   or SCATTERED_FLOAT_ROWS for        HEIGHT 16 (float) or 8 (double); the matrix
 *   scattered rows in float)           streamed past L2 in float, and in double when the
 *                                      columns are scattered (x gathered from L2);
 *   short rows                      -> segment family, streamed as the medium rows;
 *                                      banded (column spread < LOCAL_SPREAD): 128 rows per
 *                                      strip, 4 entries per lane; scattered: 64 rows, 1 -
 *                                      but for blocks (cmrscl_options.vectors from
 *                                      CMRSCL_BLOCK_PLAN_VECTORS) scattered short rows
 *                                      take Algorithm 1, HEIGHT 8.
 *   few rows for the device (fewer than SEGMENT_ROWS x resident warps; mu >= 2, below
 *   PLAN_LONG_ROWS)                 -> strip family, HEIGHT 8: short strips, short chains
 *                                      of loads, the matrix left in L2 when it fits there,
 *                                      else streamed past it;
 *                                      but HEIGHT 1 without a split when HEIGHT 8 would
 *                                      split, all rows fit VECTOR_WAVES waves of warps and
 *                                      no row is longer than VECTOR_CHAIN.
 *   Any strip longer than 2 tiles and PLAN_SPLIT_FROM entries is split (plan_split.c).
 * Before all of them, on any GPU: rows of about equal length (few holes in slices of 32 rows)
 * and enough strips for the device -> slice family (slice_rule).
 *   rows of about equal length      -> slice family, HEIGHT 32: a lane per row, the matrix
 *                                      streamed past L2 (NVIDIA) but for blocks in float.
 * The streaming hint is NVIDIA's (inline PTX); other GPUs take the same families and HEIGHTs
 * (not yet measured there). GPUs whose lanes cannot talk keep the strip family: CSR-vector for
 * long rows, else the device rule's HEIGHT; CPUs walk each strip with one work-item (the
 * segment family without lanes: measured fastest on Intel's and PoCL's CPU runtimes,
 * docs/PORTABILITY.md).
 * The variant - the family's backend of the warp layer - is the first of the family's rows in
 * the variant table that the device runs (NVIDIA shuffles, then sub-groups, then local
 * memory), unless the user names one.
 *
 * The device rule for HEIGHT (paper, section 6.3): each work-item of the strip kernel keeps
 * HEIGHT partial sums in local memory, so HEIGHT limits how many work-items fit on a
 * compute unit, and the paper found the best HEIGHT where that limit meets the occupancy
 * the device needs to saturate memory (Kepler: 100%, giving 6 floats / 4 doubles; Fermi:
 * 2/3, giving 12 / 8). The rule aims at full occupancy:
 *     HEIGHT = local memory per compute unit / (resident work-items * value size),
 * clamped to 1..16. On Kepler's 48 KiB and 2048 threads it gives 6 for float.
 *
 * The width of the entry indices (choose_index_bits): 32 bits below 2^31 stored entries and
 * 2^31 partial sums of the split path, 64 from there on (an H200's memory holds about 1e10
 * float entries); 64 costs every product 8-byte StripPtr loads and 64-bit loop counters, so
 * ordinary matrices keep 32. */
#include "plan/plan.h"
#include "format/format.h"

#include <stdio.h>
#include <string.h>

#define DEFAULT_WORK_GROUP 128         /* paper, section 6.3: smallest size that saturates memory */
#define MEDIUM_ROWS 8.0                /* mu from which Algorithm 1 wins over the segmented scan */
#define SCATTERED_FLOAT_ROWS 3.5       /* ... and from which it wins on scattered rows in float */
#define SEGMENT_ROWS PLAN_SEGMENT_ROWS /* rows per strip of the segment family (scattered rows) */
#define SHORT_STRIP_MU 2.0 /* mu from which few-row matrices fill HEIGHT 8 strips enough */
#define VECTOR_WAVES 4 /* few-row matrices whose rows all get a warp within this many waves... */
#define VECTOR_CHAIN                                                                               \
    2048 /* ... and whose longest row is at most this long: CSR-vector beats HEIGHT 8 strips       \
            split (4096 against the second kernel; 2048 against the in-group combine: rajat01's    \
            1442 still wins, rmat's 3600-3900 lose by 1.3-1.7x; docs/dev/PERFORMANCE.md) */

int cmrs_plan_rule_height(const cmrscl_device_info *dev, cmrscl_precision precision)
{
    uint64_t value = cmrscl_precision_size(precision);
    uint64_t resident = dev->resident_items_per_cu ? dev->resident_items_per_cu : 2048;
    uint64_t h = dev->local_mem_per_cu_bytes / (resident * value);
    /* A work-group of the default size must still fit its local memory. */
    uint64_t per_group = dev->local_mem_bytes / (DEFAULT_WORK_GROUP * value);
    if (h > per_group)
        h = per_group;
    if (h > 16)
        h = 16;
    return h < 1 ? 1 : (int)h;
}

/* Slices (the slice family: a lane per row, every load coalesced, no lanes to combine) where
 * a strip's rows are about equally long: measured on an H100 (docs/dev/PERFORMANCE.md, slices),
 * against the plans below in the same lease - stencils (holes 0-6% of the
 * entries) 1.4-1.6x in float and double, FEM-like blocks (1-2%) 0.97-1.22x, a permutation
 * (none) 1.01-1.16x. Tall strips leave too few warps: 2844 strips of 32 rows (a third of
 * the H100's resident warps; stencil7:45) still won 1.27-1.36x, 432 (stencil27:24) lost
 * 0.86x and 125 (fem:10:4) 0.61-0.67x. HEIGHT 64 measured the same, 16 3-10% slower; the
 * streaming hint (NVIDIA) 0-8% faster on all but two, 1% slower there.
 * How many holes, and how long a row: on an H200 (docs/dev/PERFORMANCE.md, SLICE_HOLES and
 * SLICE_LONGEST) slices beat the other families' plans up to 1.78 stored positions an entry
 * (mesh-like graph Laplacians, rows of 5-17: 1.06-1.48x), tied at 1.98 (uniform random rows)
 * and lost at 2.49 (0.53-0.65x: rows of a Kronecker factor of very unequal lengths); the
 * holes are skipped - a column word read, no gather - so they cost less than entries. A lane
 * walks its whole row, one dependent load after another, so the longest row sets the
 * product's shortest time: rows of 8.4 x mu (324 entries, holes 18%) still won 1.07-1.16x
 * (on an H100 an earlier kernel had lost 2x there); longer ones were not measured. Rows as
 * long as the long-rows class keep their warp per row. */
#define SLICE_HEIGHT 32
#define SLICE_HOLES 1.8   /* stored positions per entry up to which slices are taken */
#define SLICE_WARPS 0.25  /* ... strips per resident warp from which */
#define SLICE_LONGEST 9.0 /* ... and the longest row, in mu, up to which */
static bool slice_rule(const cmrscl_device_info *dev, cmrscl_precision precision,
                       const plan_matrix *a, const cmrscl_options *opt, cmrscl_params *p)
{
    const cmrscl_matrix_stats *st = &a->stats;
    double strips = ((double)a->rows + SLICE_HEIGHT - 1) / SLICE_HEIGHT;
    if (!a->host_layout || !a->row_ptr || a->nnz == 0 || st->mu >= PLAN_LONG_ROWS ||
        st->max_row > SLICE_LONGEST * st->mu ||
        strips < SLICE_WARPS * cmrs_plan_resident_warps(dev))
        return false;
    double holes = cmrs_slice_holes(a->rows, a->cols, a->row_ptr, SLICE_HEIGHT);
    if (holes > SLICE_HOLES)
        return false;
    p->kernel = CMRSCL_KERNEL_SLICE;
    p->height = SLICE_HEIGHT;
    /* Blocks wait on their gathers of X, not on the matrix: without the streaming hint an
     * H200 (float, k = 32) ran stencil7:160 1.11x faster, stencil5:2000 1.12x, stencil5:3000
     * 1.13x, stencil7:200 1.03x (their single products 1.05x slower without it, 0.98-1.02x
     * on the larger two), as an H100 did for blocks of scattered rows (docs/dev/PERFORMANCE.md).
     * Double blocks of slices keep the hint: not measured without it. */
    bool blocks = precision == CMRSCL_FLOAT && plan_for_blocks(opt);
    bool stream = dev->warp_shuffle && !blocks;
    p->cache_hint = stream ? CMRSCL_CACHE_HINT_STREAM : 0;
    char why[64] = "";
    if (stream)
        snprintf(why, sizeof why, ", matrix streamed past L2");
    else if (dev->warp_shuffle)
        snprintf(why, sizeof why, ", not streamed (blocks of %d vectors)", opt->vectors);
    snprintf(p->plan_reason, sizeof p->plan_reason,
             "rows of about equal length (mu %.1f; %.2f stored positions per entry with the "
             "holes of slices of %d rows): slices, a lane per row%s",
             st->mu, holes, SLICE_HEIGHT, why);
    return true;
}

/* The family and its parameters from the matrix (the rule in the header), with the reason.
 * The thresholds and HEIGHTs are measured: docs/dev/PERFORMANCE.md, "The plan". */
static void matrix_rule(const cmrscl_device_info *dev, cmrscl_precision precision,
                        const plan_matrix *a, const cmrscl_options *opt, cmrscl_params *p)
{
    const cmrscl_matrix_stats *st = &a->stats;
    if (!dev->warp_shuffle && (dev->type & CL_DEVICE_TYPE_CPU)) {
        cmrs_plan_cpu_rule(dev, a, p);
        return;
    }
    p->height_source = "matrix rule";
    if (slice_rule(dev, precision, a, opt, p))
        return;
    if (!dev->warp_shuffle && !(dev->subgroup_width && dev->subgroup_shuffle)) {
        /* Lanes that cannot talk but through group barriers: the strip family, whose local
         * tree pays one barrier per halving; a warp per row for long rows. */
        p->kernel = CMRSCL_KERNEL_STRIP;
        bool long_rows = st->mu >= PLAN_LONG_ROWS;
        p->height = long_rows ? 1 : cmrs_plan_rule_height(dev, precision);
        if (!long_rows)
            p->height_source = "device rule";
        snprintf(p->plan_reason, sizeof p->plan_reason,
                 "no warp shuffles or sub-groups on this device: strip kernel, %s",
                 long_rows ? "long rows: one warp per row (CSR-vector)"
                           : "HEIGHT from the device's occupancy rule");
        return;
    }
    /* The matrix arrays are streamed past the cache with NVIDIA's evict-first loads (PTX). */
    bool ptx = dev->warp_shuffle;
    bool beyond_l2 =
        (double)a->nnz * (double)(4 + cmrscl_precision_size(precision)) > (double)dev->cache_bytes;
    bool scattered = st->col_spread >= LOCAL_SPREAD;
    /* Medium and short rows: streaming the matrix past L2 keeps x there. It pays in float,
     * and in double where x is gathered from all over (R-MAT 1.5-2.5% faster on an H200), not
     * from a band (27-point stencil 2% slower, 7- and 5-point 2.5-5% slower;
     * docs/dev/PERFORMANCE.md). */
    bool stream = ptx && (precision == CMRSCL_FLOAT || scattered);
    beyond_l2 = ptx && beyond_l2;
    /* Few rows: short strips make short chains of loads. */
    bool few_rows = cmrs_plan_few_rows(dev, a->rows);
    bool short_chain = a->rows <= VECTOR_WAVES * cmrs_plan_resident_warps(dev) &&
                       st->max_row <= VECTOR_CHAIN &&
                       cmrs_plan_longest_strip(a, 8) > PLAN_SPLIT_FROM;
    if (few_rows && st->mu >= SHORT_STRIP_MU && st->mu < PLAN_LONG_ROWS && short_chain) {
        /* HEIGHT 8 would split a long strip; a warp per row (all rows resident within a few
         * waves) has a chain of at most VECTOR_CHAIN / 128 rounds of four loads per lane and
         * none of the split's overheads. */
        p->kernel = CMRSCL_KERNEL_STRIP;
        p->height = 1;
        p->tile = -1; /* never split: choose_split reads it */
        snprintf(p->plan_reason, sizeof p->plan_reason,
                 "few rows (%d <= %d x %.0f resident warps), longest %d <= %d: one warp per row "
                 "(CSR-vector), no split",
                 a->rows, VECTOR_WAVES, cmrs_plan_resident_warps(dev), st->max_row, VECTOR_CHAIN);
    } else if (few_rows && st->mu >= SHORT_STRIP_MU && st->mu < PLAN_LONG_ROWS) {
        /* Left in L2 when it fits there; a larger one (long rows: fem, Kronecker products of
         * real matrices) is streamed past it like the medium rows, to keep x there. */
        p->kernel = CMRSCL_KERNEL_STRIP;
        p->height = 8;
        p->cache_hint = beyond_l2 ? CMRSCL_CACHE_HINT_STREAM : 0;
        snprintf(p->plan_reason, sizeof p->plan_reason,
                 "few rows for the device (%d < %d x %.0f resident warps; mu %.1f): Algorithm 1, "
                 "HEIGHT 8, column-ordered strips%s",
                 a->rows, SEGMENT_ROWS, cmrs_plan_resident_warps(dev), st->mu,
                 beyond_l2 ? ", matrix streamed past L2" : "");
    } else if (st->mu >= PLAN_LONG_ROWS) {
        /* Streamed past L2 when it does not fit there: dense 6000 x 6000 1-3% faster on an
         * H200 (docs/dev/PERFORMANCE.md). */
        p->kernel = CMRSCL_KERNEL_STRIP;
        p->height = 1;
        p->cache_hint = beyond_l2 ? CMRSCL_CACHE_HINT_STREAM : 0;
        snprintf(p->plan_reason, sizeof p->plan_reason,
                 "long rows (mu %.1f >= %.0f): one warp per row (CSR-vector), long rows split%s",
                 st->mu, PLAN_LONG_ROWS, beyond_l2 ? ", matrix streamed past L2" : "");
    } else if (st->mu >= MEDIUM_ROWS ||
               (precision == CMRSCL_FLOAT && scattered && st->mu >= SCATTERED_FLOAT_ROWS)) {
        /* Rows that fill a good part of a warp: Algorithm 1. Doubles take half the slots
         * (the same local memory per lane), which measured faster on every such matrix. */
        p->kernel = CMRSCL_KERNEL_STRIP;
        p->height = precision == CMRSCL_DOUBLE ? 8 : 16;
        p->cache_hint = stream ? CMRSCL_CACHE_HINT_STREAM : 0;
        snprintf(p->plan_reason, sizeof p->plan_reason,
                 "medium rows (mu %.1f): Algorithm 1, HEIGHT %d, column-ordered strips%s", st->mu,
                 p->height, stream ? ", matrix streamed past L2" : "");
    } else if (scattered && plan_for_blocks(opt)) {
        /* Blocks: the segmented scan keeps a slot per row, lane and vector in local memory
         * and scans each vector alone (more local memory for its slots was slower still);
         * strips of 8 rows sum a run of vectors per entry in few slots. Measured on an H100
         * (docs/dev/PERFORMANCE.md; double, k = 8 / 16 / 32): random:2000000:8 1.50 / 1.75 /
         * 1.57x faster, random:4000000:4 1.34 / 1.62 / 1.51x, skewed:4000000:2:40:100000
         * 1.27 / 1.58 / 1.60x; their single products 1.00x, 1.10x and 1.25x slower. In float
         * skewed 1.30 / 1.30 / 1.67x, random:8000000:2 1.11 / 1.11 / 1.40x (with the
         * streaming hint, which the rule leaves off: 1.04-1.09x faster without it, same
         * lease, double on four matrices, float on skewed - a block waits on its gathers of
         * X, not the matrix). */
        p->kernel = CMRSCL_KERNEL_STRIP;
        p->height = 8;
        snprintf(p->plan_reason, sizeof p->plan_reason,
                 "short scattered rows (mu %.1f) for blocks of %d vectors: Algorithm 1, HEIGHT "
                 "8, column-ordered strips (the segmented scan's slots grow with the block)",
                 st->mu, opt->vectors);
    } else {
        p->kernel = CMRSCL_KERNEL_SEGMENT;
        /* Banded rows gather x from a window that stays in L1/L2: long chunks of four
         * entries per lane, 128 rows per strip. Scattered rows wait on x at random: one
         * entry per lane (fewer registers, more warps in flight to hide the gathers). */
        bool banded = !scattered;
        int h = banded ? 2 * SEGMENT_ROWS : SEGMENT_ROWS;
        while (h > 32 && !cmrs_packing_fits(a->cols, h)) /* stay packed if a height can */
            h /= 2;
        p->height = h;
        p->lane_entries = banded ? 4 : 1;
        p->cache_hint = stream ? CMRSCL_CACHE_HINT_STREAM : 0;
        snprintf(p->plan_reason, sizeof p->plan_reason,
                 "short rows (mu %.1f), %s (column spread %.3f): segmented warp scan, %d rows "
                 "per strip, %d entries per lane%s",
                 st->mu, banded ? "banded" : "scattered", st->col_spread, h, p->lane_entries,
                 stream ? ", matrix streamed past L2" : "");
    }
}

/* MODULO's slot sets: the user's, else 8 (the paper's), or the warp when narrower; a power
 * of two dividing the warp, so that lane % MODULO classes split every step evenly. */
static cmrscl_status choose_modulo(const cmrscl_options *opt, cmrscl_params *p)
{
    if (p->warp < 2)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "the MODULO kernel needs at least 2 lanes per strip (warp %d)", p->warp);
    p->modulo = opt->modulo ? opt->modulo : p->warp < 8 ? p->warp : 8;
    if (p->modulo > p->warp)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "modulo %d must divide the warp of %d lanes per strip", p->modulo,
                           p->warp);
    return CMRSCL_OK;
}

/* Lanes per strip and the work-group of variant v: the user's, else the variant's. A variant
 * whose warps part ways where the device's cannot (cmrs_variant_one_warp: emulated shuffles and
 * MODULO's steps on the LOCAL backend; sub-groups tied together) runs one warp per group. */
static cmrscl_status choose_geometry(const cmrscl_device_info *dev, const cmrscl_options *opt,
                                     const kernel_variant *v, cmrscl_params *p)
{
    /* the matrix rule may have asked for lanes the variant takes (CPUs: sub-groups of 8) */
    if (v->family->lane_per_row) { /* a work-item per row of its strip, or per several rows */
        if (!plan_power_of_two(p->height))
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "the slice kernel's height %d must be a power of two", p->height);
        if (opt->warp && (opt->warp > p->height || p->height % opt->warp))
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "the slice kernel runs a work-item per row or per several rows: "
                               "warp %d must divide its height %d (or be 0)",
                               opt->warp, p->height);
        p->warp = opt->warp ? opt->warp : cmrs_plan_slice_warp(dev, p->height);
    } else if (opt->warp)
        p->warp = opt->warp;
    else if (!p->warp || cmrs_variant_lanes_refused(dev, v, p->warp))
        p->warp = cmrs_variant_default_warp(dev, v);
    if (!plan_power_of_two(p->warp) || p->warp > 1024)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "warp %d is not a power of two in 1..1024", p->warp);
    bool one_warp = cmrs_variant_one_warp(dev, v, p->warp);
    if (opt->work_group_size) {
        p->work_group_size = opt->work_group_size;
        if (p->work_group_size < p->warp || p->work_group_size % p->warp)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "work-group size %d is not a multiple of the warp width %d",
                               p->work_group_size, p->warp);
        if (one_warp && p->work_group_size != p->warp)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "the %s variant with %d lanes per strip runs one warp per "
                               "work-group (work-group %d)",
                               v->pub.name, p->warp, p->work_group_size);
    } else if (one_warp) {
        p->work_group_size = p->warp;
    } else if (v->family->lane_per_row && p->warp < p->height) {
        /* several rows a work-item: a group of DEFAULT_WORK_GROUP rows, as a row a work-item
         * has (a group of 128 strips left a small matrix one group, one CPU core) */
        int items = DEFAULT_WORK_GROUP * p->warp / p->height;
        p->work_group_size = items > p->warp ? items : p->warp;
    } else {
        p->work_group_size = p->warp > DEFAULT_WORK_GROUP ? p->warp : DEFAULT_WORK_GROUP;
        while (p->work_group_size > (int)dev->max_work_group_size && p->work_group_size > p->warp)
            p->work_group_size -= p->warp;
    }
    if (p->work_group_size > (int)dev->max_work_group_size)
        return cmrscl_fail(CMRSCL_ERROR_DEVICE_LIMIT,
                           "work-group size %d exceeds the device's maximum of %u",
                           p->work_group_size, dev->max_work_group_size);
    return v->family->slot_sets ? choose_modulo(opt, p) : CMRSCL_OK;
}

/* Whether variant v runs on the device with the user's lanes per strip and work-group; why
 * not in *why. */
static bool variant_fits(const cmrscl_device_info *dev, const kernel_variant *v,
                         const cmrscl_options *opt, bool check_group, const char **why)
{
    int warp = opt->warp ? opt->warp : cmrs_variant_default_warp(dev, v);
    int group = check_group ? opt->work_group_size : 0;
    *why = cmrs_variant_missing(dev, v);
    if (!*why)
        *why = cmrs_variant_lanes_refused(dev, v, warp);
    if (!*why && group && warp > 0 &&
        (group % warp || (cmrs_variant_one_warp(dev, v, warp) && group != warp)))
        *why = "the work-group asked for is not made of its warps";
    return *why == NULL;
}

/* A reduction the family has no variant of: the message names the families that have one
 * (from the variant table), and whether the family was the user's or the rule's. */
static cmrscl_status no_reduction(cmrscl_kernel family, const cmrscl_options *opt)
{
    char others[160] = "";
    size_t used = 0;
    for (size_t i = 0; i < cmrs_variant_count(); ++i) {
        const kernel_variant *v = cmrs_variant_at(i);
        const char *name = cmrs_variant_family_name(v->pub.kernel);
        if (v->pub.reduce != opt->reduce || strstr(others, name))
            continue;
        int n = snprintf(others + used, sizeof others - used, "%s%s", used ? ", " : "", name);
        used += n > 0 && (size_t)n < sizeof others - used ? (size_t)n : 0;
    }
    return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                       "the %s family (%s) has no %s reduction - it has a lane per row and "
                       "none to reduce, or another warp layer; the families that have one: %s "
                       "(ask one of them as the kernel)",
                       cmrs_variant_family_name(family),
                       opt->kernel ? "asked" : "the plan's rule chose it",
                       cmrs_variant_reduce_name(opt->reduce), used ? others : "none");
}

/* The variant of the family (variant table): the user's reduction, else the matrix rule's
 * where the device runs it, else the first of the family's rows the device runs - with the
 * user's work-group where one does, else the first that runs (choose_geometry then says what
 * is wrong with the work-group). */
static cmrscl_status choose_variant(const cmrscl_device_info *dev, const cmrscl_options *opt,
                                    cmrscl_params *p, const kernel_variant **out)
{
    const char *why = NULL;
    if (opt->reduce) {
        const kernel_variant *v = cmrs_variant_find(p->kernel, opt->reduce);
        if (!v)
            return no_reduction(p->kernel, opt);
        if (!variant_fits(dev, v, opt, false, &why))
            return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                               "the %s/%s variant on device \"%s\" (%d lanes per strip asked): %s",
                               cmrs_variant_family_name(p->kernel),
                               cmrs_variant_reduce_name(opt->reduce), dev->device_name, opt->warp,
                               v ? why : "no such variant");
        *out = v;
        return CMRSCL_OK;
    }
    const kernel_variant *preferred = p->reduce ? cmrs_variant_find(p->kernel, p->reduce) : NULL;
    for (int check_group = 1; check_group >= 0; --check_group) {
        if (preferred && variant_fits(dev, preferred, opt, check_group, &why)) {
            *out = preferred;
            return CMRSCL_OK;
        }
        for (size_t i = 0; i < cmrs_variant_count(); ++i) {
            const kernel_variant *v = cmrs_variant_at(i);
            if (v->pub.kernel == p->kernel && variant_fits(dev, v, opt, check_group, &why)) {
                *out = v;
                return CMRSCL_OK;
            }
        }
    }
    return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                       "no variant of the %s family runs on device \"%s\" with %d lanes per strip "
                       "(the last refused: %s)",
                       cmrs_variant_family_name(p->kernel), dev->device_name, opt->warp, why);
}

static cmrscl_status choose_layout(const cmrscl_device_info *dev, const plan_matrix *a,
                                   const cmrscl_options *opt, cmrscl_params *p)
{
    bool fits = cmrs_packing_fits(a->cols, p->height);
    /* Holes have every col_ind bit set: a real packed entry must never look like one, so
     * its column bits may not all be set either. */
    if (plan_has_holes(p->kernel))
        fits = fits && (int64_t)a->cols < (1ll << (32 - cmrscl_cmrs_row_bits(p->height)));
    if (opt->layout == CMRSCL_LAYOUT_PACKED && !fits)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "the packed layout of height %d needs at most 2^%d columns (%d "
                           "columns)",
                           p->height, 32 - cmrscl_cmrs_row_bits(p->height), a->cols);
    p->layout = opt->layout == CMRSCL_LAYOUT_UNPACKED || !fits ? CMRSCL_LAYOUT_UNPACKED
                                                               : CMRSCL_LAYOUT_PACKED;
    p->row_bits = p->layout == CMRSCL_LAYOUT_PACKED ? cmrscl_cmrs_row_bits(p->height) : 0;
    if (plan_family(p)->rows_together) {
        /* The segmented scan needs each row's entries contiguous within the strip; the
         * slices are laid from row-ordered strips. */
        if (opt->order == CMRSCL_ORDER_COLUMNS)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "the %s kernel needs row-ordered strips (--order rows)",
                               cmrs_variant_family_name(p->kernel));
        p->order = CMRSCL_ORDER_ROWS;
    } else {
        /* Paper, section 6.3: "the data should be sorted" - column order within strips. */
        p->order = opt->order == CMRSCL_ORDER_ROWS ? CMRSCL_ORDER_ROWS : CMRSCL_ORDER_COLUMNS;
    }
    if (opt->cache_hint == CMRSCL_CACHE_HINT_STREAM && !dev->warp_shuffle)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "the streaming cache hint is NVIDIA inline PTX (device \"%s\")",
                           dev->device_name);
    /* The user's hint, else the matrix rule's (it asks for it on NVIDIA only). */
    if (opt->cache_hint != CMRSCL_CACHE_HINT_AUTO)
        p->cache_hint = opt->cache_hint;
    else if (p->cache_hint != CMRSCL_CACHE_HINT_STREAM)
        p->cache_hint = CMRSCL_CACHE_HINT_OFF;
    return CMRSCL_OK;
}

/* The width of the device's entry indices. 32 bits hold every entry index while the matrix
 * stores fewer than 2^31 entries (StripPtr keeps its top bit for the long-strip flag; the
 * kernels' counters run a few warps past the end, far below 2^32) and the split path fewer
 * than 2^31 partial sums; 64 bits otherwise, or when the user asks (tests force it on small
 * matrices). Column indices, rows, strips and tiles stay 32-bit either way. */
static cmrscl_status choose_index_bits(const plan_matrix *a, const cmrscl_options *opt,
                                       cmrscl_params *p)
{
    int64_t tiles = 0, longs = 0;
    const int64_t *row_ptr = p->tile > 0 ? cmrs_plan_row_ptr(a) : NULL;
    if (row_ptr)
        cmrs_split_count(a->rows, row_ptr, p->height, p->tile, cmrs_plan_group_tiles(p), &tiles,
                         &longs);
    if (tiles > INT32_MAX)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                           "the split makes %lld tiles of %d entries, more than %d: take longer "
                           "tiles (cmrscl_options.tile)",
                           (long long)tiles, p->tile, INT32_MAX);
    int64_t partial_sums = tiles * p->height;
    /* MODULO stores holes too, decided only by the layout: bound them. Each step of WARP
     * positions places at least MODULO entries (or the strip's last ones). */
    int64_t stored = a->nnz;
    if (plan_family(p)->holes == HOLES_BETWEEN)
        stored = a->nnz * (p->warp / p->modulo) +
                 ((int64_t)a->rows + p->height - 1) / p->height * p->warp;
    if (plan_family(p)->holes == HOLES_AFTER_ROWS) /* row_ptr is there: laid out on the host */
        stored = p->stored_entries =
            cmrs_slice_stored(a->rows, a->row_ptr, NULL, p->height, 0, NULL);
    bool wide = stored > INT32_MAX || partial_sums > INT32_MAX;
    if (opt->index_bits == 32 && wide)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                           "32-bit indices hold at most %d entries and partial sums; the matrix "
                           "needs 64 (%lld entries%s, %lld partial sums)",
                           INT32_MAX, (long long)stored,
                           stored > a->nnz ? " at most, with the layout's holes" : "",
                           (long long)partial_sums);
    p->index_bits = opt->index_bits ? opt->index_bits : wide ? 64 : 32;
    return CMRSCL_OK;
}

cmrscl_status cmrs_plan_choose(const cmrscl_device_info *dev, cmrscl_precision precision,
                               const plan_matrix *a, const cmrscl_options *opt, cmrscl_params *p)
{
    static const cmrscl_options defaults;
    if (!opt)
        opt = &defaults;
    memset(p, 0, sizeof *p);
    cmrscl_status st = cmrs_plan_check_options(dev, precision, opt);
    if (st != CMRSCL_OK)
        return st;
    p->precision = precision;
    p->stats = a->stats;
    if (opt->kernel == CMRSCL_KERNEL_AUTO && !opt->height) {
        matrix_rule(dev, precision, a, opt, p);
    } else {
        p->kernel = opt->kernel ? opt->kernel : CMRSCL_KERNEL_STRIP;
        const variant_family *f = cmrs_variant_family_of(p->kernel);
        p->height = f->height ? f->height : cmrs_plan_rule_height(dev, precision);
        p->height_source = f->height_source ? f->height_source
                           : f->height      ? "family default"
                                            : "device rule";
        snprintf(p->plan_reason, sizeof p->plan_reason, "%s kernel chosen by the user", f->name);
    }
    if (opt->height) {
        p->height = opt->height;
        p->height_source = "user";
    }
    const kernel_variant *v = NULL;
    st = choose_variant(dev, opt, p, &v);
    if (st == CMRSCL_OK) {
        if (p->reduce != v->pub.reduce) /* lanes the rule chose for another variant */
            p->warp = 0;
        p->reduce = v->pub.reduce;
        st = choose_geometry(dev, opt, v, p);
    }
    if (st == CMRSCL_OK && plan_has_holes(p->kernel) && (!a->host_layout || !a->row_ptr))
        st = cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                         "the %s kernel's layout is built on the host: create the matrix from host "
                         "arrays (cmrscl_matrix_create, _i64 or _from_csr), not from OpenCL "
                         "buffers",
                         cmrs_variant_family_name(p->kernel));
    if (st == CMRSCL_OK)
        st = choose_layout(dev, a, opt, p);
    if (st == CMRSCL_OK)
        st = cmrs_plan_choose_values(a, opt, p);
    if (st == CMRSCL_OK)
        st = cmrs_plan_split(dev, a, opt, p);
    if (st == CMRSCL_OK)
        st = choose_index_bits(a, opt, p);
    if (st == CMRSCL_OK)
        st = cmrs_plan_choose_columns(dev, a, opt, p);
    if (st != CMRSCL_OK)
        return st;
    if (plan_family(p)->lane_entries)
        p->lane_entries = opt->lane_entries ? opt->lane_entries
                          : p->lane_entries ? p->lane_entries
                                            : 4;
    uint64_t local = cmrs_variant_local_bytes(p);
    if (local > dev->local_mem_bytes)
        return cmrscl_fail(CMRSCL_ERROR_DEVICE_LIMIT,
                           "height %d x work-group %d x %zu-byte values need %llu bytes of local "
                           "memory; the device offers %llu",
                           p->height, p->work_group_size, cmrscl_precision_size(precision),
                           (unsigned long long)local, (unsigned long long)dev->local_mem_bytes);
    return cmrs_plan_build_options(dev, p);
}
