/* test_kernel.c - every kernel variant of the variant table (host/plan/variants.def) against the
 * CPU double reference on the device chosen by CMRSCL_DEVICE, on the awkward-matrix catalogue
 * (values stored plain), for each (alpha, beta) of test_alpha_beta (test_util.h; beta = 0 with y
 * poisoned by NaN: every row must be written, none read), each product run twice (the same y,
 * bit for bit); in every family a spread of its
 * plans also with 64-bit entry indices forced, whose products must equal the 32-bit ones bit for
 * bit (the same plan sums in the same order) and whose arrays must read back the same (a subset:
 * each width is a program to compile, and CI compiles cold); and in each process the first such
 * plan also with the values coded (cmrscl_values): a copy of five catalogue matrices whose
 * values are 1 to 16 distinct numbers, by test case (DICT) and, in double, one whose values are all
 * floats (FLOAT) against its twin with plain values, bit for bit, read back as the plain arrays,
 * and stored plain after a values update. The test cases of each family:
 *   strip_packed, strip_unpacked  Algorithm 1, HEIGHT 1..16 and taller, both orders; narrow
 *                                 columns (16-bit offsets) where they fit on the heights
 *                                 with 64-bit twins, against 32-bit twins
 *   strip_narrow                  several strips per warp (1..16 lanes each), CSR-scalar
 *   segment_packed, _unpacked     the segmented scan, HEIGHT 1..256
 *   split_strip, split_segment    long strips cut into tiles of 1, 7 and 64 entries, summed
 *                                 by a second kernel or in their work-group
 *   modulo                        the MODULO kernel, 2..32 slot sets, warps of 8 to 32
 *   slice                         slices of HEIGHT 1..64, a work-item per row, and several
 *                                 rows a work-item against those twins, bit for bit; narrow
 *                                 columns (16-bit steps) where they fit, against 32-bit twins
 * tests/CMakeLists.txt makes one test per variant row, case of its family and precision, and
 * for the sub-group variants one per sub-group width (8, 16, 32, 64): lanes per strip are
 * then that width in every case.
 * Usage: test_kernel float|double CASE local|shuffle|subgroup [WIDTH]
 * Exits 77 (CTest: skipped) when the device cannot run the variant, saying why, and fails when
 * a case ran no product at all. */
#include "exec/exec.h"
#include "kernel_twins.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

/* Every catalogue matrix with these options and plain values, both products checked; with
 * wide, also with 64-bit indices forced, and the first time also with coded values
 * (check_codecs). */
static int narrow_plans = 0; /* slices and strips that took narrow columns (check_narrow) */

/* Whether this variant sweeps every parameter of its test case. The sub-group variants are one
 * test per width, and of the parameters only the warp layer (the sub-group operations over
 * WIDTH lanes) changes with the width: the layouts' decode (entry_at, narrow columns), the
 * strips' and tiles' bookkeeping, 64-bit indices and the values' codecs do not. So one width
 * (16) sweeps everything, in float (double's sub-group sums differ from float's only in the
 * type: its diagonal checks them), the others (8, 32, 64) a diagonal of it, without the 64-bit
 * twins and codecs, that still puts strips shorter and taller than the sub-group, every lane
 * width, tile size and combine through their warp layer. Each plan is a program to compile,
 * and CI compiles cold: on Intel's OpenCL CPU runtime a segment program at width 64 took 5-15
 * s, and the full sweep at widths 32 and 64 was 45% of CI's time (session 21); width 16 in
 * both precisions 539 s of its test time (session 21). */
static bool full_sweep(const variant *v)
{
    return v->reduce != CMRSCL_REDUCE_SUBGROUP || (v->width == 16 && v->precision == CMRSCL_FLOAT);
}

static void run_options(cmrscl_context ctx, const variant *v, const cmrscl_options *opt,
                        const char *label, bool wide)
{
    cmrscl_device_info info;
    CHECK_OK(cmrscl_context_device_info(ctx, &info));
    const cmrscl_device_info *dev = &info;
    /* 64-bit indices and coded values are addressing and decode, apart from the warp layer:
     * the full sweep checks them */
    wide = wide && full_sweep(v);
    /* the codecs on the first, and on the first slice of several rows a work-item: each codec
     * is a program to compile */
    static int wide_sets = 0, rows_sets = 0;
    bool several_rows = opt->kernel == CMRSCL_KERNEL_SLICE && opt->warp < opt->height;
    bool codecs = wide && (several_rows ? rows_sets++ : wide_sets++) == 0;
    for (int i = 0; i < test_matrix_count(); ++i) {
        cmrscl_csr a;
        const char *name = test_matrix_build(i, &a);
        cmrscl_csr ref_a = test_csr_rounded(&a, v->precision);
        char what[200];
        snprintf(what, sizeof what, "%s, %s", name, label);
        cmrscl_matrix m = NULL, m64 = NULL;
        cmrscl_options plain = *opt, opt64 = *opt; /* the codecs: check_codecs */
        plain.values = opt64.values = CMRSCL_VALUES_PLAIN;
        opt64.index_bits = 64;
        /* Strips: implied columns (one row a strip, its columns one run: the band, the single
         * row) or else narrow offsets wherever they fit and save bytes, on the heights with
         * twins (the plan takes them by itself only beyond the device's cache, which no
         * catalogue matrix is), 32-bit columns elsewhere (each is a program more). */
        if (opt->kernel == CMRSCL_KERNEL_STRIP && !opt->column_bits) {
            cmrscl_params pn = CMRSCL_PARAMS_INIT, p32 = CMRSCL_PARAMS_INIT;
            cmrscl_options on = plain;
            on.column_bits = CMRSCL_COLUMNS_IMPLIED, plain.column_bits = 32;
            if (wide && cmrscl_plan(dev, v->precision, &a, &on, &pn) != CMRSCL_OK)
                on.column_bits = 16;
            if (wide && full_sweep(v) &&
                cmrscl_plan(dev, v->precision, &a, &on, &pn) == CMRSCL_OK &&
                cmrscl_plan(dev, v->precision, &a, &plain, &p32) == CMRSCL_OK &&
                pn.bytes_per_entry_matrix < p32.bytes_per_entry_matrix)
                plain.column_bits = on.column_bits;
            opt64.column_bits = plain.column_bits;
        }
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, v->precision, &a, &plain, &m));
        if (wide)
            CHECK_OK(cmrscl_matrix_create_from_csr(ctx, v->precision, &a, &opt64, &m64));
        if (m && (m64 || !wide)) {
            cmrscl_params p = CMRSCL_PARAMS_INIT;
            CHECK_OK(cmrscl_matrix_params(m, &p));
            CHECK_MSG(p.height == opt->height && p.kernel == opt->kernel &&
                          (!opt->layout || p.layout == opt->layout) &&
                          (!opt->warp || p.warp == opt->warp) && p.reduce == v->reduce &&
                          p.index_bits == 32 &&
                          p.modulo == (opt->kernel == CMRSCL_KERNEL_MODULO ? opt->modulo : 0),
                      "%s: parameters not as asked (%s)", what, p.build_options);
            if (m64) {
                /* 64-bit indices widen StripPtr, the tiles' starts and MODULO's permutation */
                cmrscl_params p64 = CMRSCL_PARAMS_INIT;
                CHECK_OK(cmrscl_matrix_params(m64, &p64));
                uint64_t widened = 4 * ((uint64_t)p.strips + 1) + 4 * (uint64_t)p.tiles +
                                   (p.modulo && p.nnz ? 4 * (uint64_t)p.stored_entries : 0);
                CHECK_MSG(p64.index_bits == 64 && test_contains(p64.build_options, "-DINDEX64=1") &&
                              p64.device_bytes == p.device_bytes + widened &&
                              p64.stored_entries == p.stored_entries,
                          "%s: 64-bit twin: index bits %d, %llu device bytes against %llu + %llu "
                          "(%s)",
                          what, p64.index_bits, (unsigned long long)p64.device_bytes,
                          (unsigned long long)p.device_bytes, (unsigned long long)widened,
                          p64.build_options);
            }
            /* A tile of 1 entry splits every strip of 3 or more entries - unless its tiles are
             * to be summed in a work-group of one warp, which holds one tile: then nothing
             * may split (one-warp groups: PoCL 5's sub-groups, tied together in a group). */
            bool can_split = !(opt->combine == CMRSCL_COMBINE_GROUP && p.work_group_size == p.warp);
            CHECK_MSG(opt->tile != 1 || i != 6 || (p.long_strips > 0) == can_split,
                      "%s: %d long strips in work-groups of %d, warps of %d", what, p.long_strips,
                      p.work_group_size, p.warp);
            check_products(m, m64, &ref_a, v->precision, what);
            if (several_rows) { /* the same sums as a work-item per row, bit for bit */
                cmrscl_options one = plain;
                one.warp = opt->height;
                cmrscl_matrix twin = NULL;
                CHECK_OK(cmrscl_matrix_create_from_csr(ctx, v->precision, &a, &one, &twin));
                if (twin)
                    check_products(m, twin, &ref_a, v->precision, what);
                cmrscl_matrix_free(twin);
            }
            /* narrow columns against 32-bit twins */
            if (p.kernel == CMRSCL_KERNEL_SLICE || p.kernel == CMRSCL_KERNEL_STRIP)
                narrow_plans += check_narrow(ctx, v, opt, &a, &ref_a, m, what);
            if (plan_has_holes(p.kernel))
                check_holed_arrays(m, &ref_a, what);
            else if (i == 5 || i == 6)
                check_device_arrays(m, &ref_a, what);
            if ((i == 5 || i == 6) && m64)
                check_same_cmrs(m, m64, what); /* StripPtr read back widened, flags dropped */
            /* the codecs on the matrices that reach their paths (no entries, the paper's,
             * empty strips, a split row, many strips): each plan a program to compile */
            if (codecs && (i == 3 || i == 4 || i == 5 || i == 6 || i == 9)) {
                cmrscl_options columns = *opt; /* strips: narrow where the test took them */
                columns.column_bits = opt->kernel == CMRSCL_KERNEL_STRIP ? p.column_bits : 0;
                check_codecs(ctx, v, &columns, &a, i == 5 || i == 6, what);
            }
        }
        cmrscl_matrix_free(m);
        cmrscl_matrix_free(m64);
        cmrscl_csr_free(&ref_a);
        cmrscl_csr_free(&a);
    }
}

static cmrscl_options base_options(const variant *v, cmrscl_kernel kernel, int height)
{
    cmrscl_options o = {0};
    o.kernel = kernel;
    o.height = height;
    o.reduce = v->reduce;
    o.warp = v->width; /* sub-groups: the width under test; else the variant's */
    o.tile = -1;       /* only the split variants split */
    return o;
}

/* strip_packed / strip_unpacked: Algorithm 1 at every HEIGHT 1..16 (HEIGHT 1 is
 * CSR-vector), both strip orders, and taller strips; 64-bit indices at HEIGHT 1, 3, 16, 17
 * and 64. Without the full sweep, HEIGHT 1, 2, 3, 5, 8, 15, 16, 17, 32 and 64 (powers of two
 * and their neighbours, where the warp layer's row groups change), one order a height in
 * turn. */
static void run_strip(cmrscl_context ctx, const variant *v, cmrscl_layout layout, int warp)
{
    static const int tall[] = {17, 24, 32, 64};
    for (int k = 0; k < 16 + 4; ++k) {
        int h = k < 16 ? k + 1 : tall[k - 16];
        if (!full_sweep(v) &&
            !(h <= 3 || h == 5 || h == 8 || h == 15 || h == 16 || h == 17 || h == 32 || h == 64))
            continue;
        for (int order = CMRSCL_ORDER_ROWS; order <= CMRSCL_ORDER_COLUMNS; ++order) {
            if (!full_sweep(v) && order != CMRSCL_ORDER_ROWS + k % 2)
                continue;
            cmrscl_options o = base_options(v, CMRSCL_KERNEL_STRIP, h);
            o.layout = layout;
            o.order = (cmrscl_order)order;
            if (h > 16) /* one warp per group keeps tall strips inside local memory */
                o.work_group_size = o.warp ? o.warp : warp;
            char label[96];
            snprintf(label, sizeof label, "strip, height %d, %s order", h,
                     order == CMRSCL_ORDER_ROWS ? "row" : "column");
            run_options(ctx, v, &o, label, h == 1 || h == 3 || h == 16 || h == 17 || h == 64);
        }
    }
}

/* strip_narrow: several strips per hardware warp (WARP lanes each), and CSR-scalar; 64-bit
 * indices for CSR-scalar and 8 lanes of HEIGHT 3. */
static void run_strip_narrow(cmrscl_context ctx, const variant *v)
{
    for (int warp = 1; warp <= 16; warp *= 2)
        for (int h = 1; h <= warp && h <= 4; ++h) {
            cmrscl_options o = base_options(v, CMRSCL_KERNEL_STRIP, h);
            o.warp = warp;
            char label[96];
            snprintf(label, sizeof label, "strip, height %d, %d lanes per strip", h, warp);
            run_options(ctx, v, &o, label, warp == 1 || (warp == 8 && h == 3));
        }
}

/* segment_packed / segment_unpacked: short to very tall strips, each with 1, 2 and 4 entries
 * per lane (without the full sweep, five heights with one lane width each); 64-bit indices at
 * HEIGHT 1 and 33 with each lane width, and 256 with 4 entries per lane (or the one it has). */
static void run_segment(cmrscl_context ctx, const variant *v, cmrscl_layout layout)
{
    static const int heights[] = {1, 2, 5, 16, 32, 33, 100, 256};
    bool full = full_sweep(v);
    for (size_t k = 0; k < sizeof heights / sizeof heights[0]; ++k)
        for (int entries = 1; entries <= 4; entries *= 2) {
            /* the diagonal: HEIGHT 1, 5, 16, 33, 256 (shorter and taller than each width),
             * with 1, 4, 1, 4, 2 entries per lane */
            if (!full && (entries != 1 << (k % 3) || k == 1 || k == 4 || k == 6))
                continue;
            cmrscl_options o = base_options(v, CMRSCL_KERNEL_SEGMENT, heights[k]);
            o.layout = layout;
            o.lane_entries = entries;
            char label[96];
            snprintf(label, sizeof label, "segment, height %d, %d entries per lane", heights[k],
                     entries);
            run_options(ctx, v, &o, label,
                        heights[k] == 1 || heights[k] == 33 ||
                            (heights[k] == 256 && (entries == 4 || !full)));
        }
}

/* The in-group combine against the second kernel on every catalogue matrix: with the tiles
 * the group plan chose, both add each strip's tiles in tile order, so the same bits. */
static void run_group_twins(cmrscl_context ctx, const variant *v, const cmrscl_options *group,
                            const char *label)
{
    for (int i = 0; i < test_matrix_count(); ++i) {
        cmrscl_csr a;
        const char *name = test_matrix_build(i, &a);
        cmrscl_csr ref_a = test_csr_rounded(&a, v->precision);
        char what[200];
        snprintf(what, sizeof what, "%s, %s, in-group combine vs second kernel", name, label);
        cmrscl_matrix mg = NULL, mk = NULL;
        cmrscl_params pg = CMRSCL_PARAMS_INIT, pk = CMRSCL_PARAMS_INIT;
        cmrscl_options go = *group; /* values plain, as in run_options */
        go.values = CMRSCL_VALUES_PLAIN;
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, v->precision, &a, &go, &mg));
        if (mg) {
            CHECK_OK(cmrscl_matrix_params(mg, &pg));
            cmrscl_options ko = go;
            ko.combine = CMRSCL_COMBINE_KERNEL;
            ko.tile = pg.tile > 0 ? pg.tile : -1; /* nothing long for the group: no split */
            CHECK_OK(cmrscl_matrix_create_from_csr(ctx, v->precision, &a, &ko, &mk));
        }
        if (mk) {
            CHECK_OK(cmrscl_matrix_params(mk, &pk));
            CHECK_MSG(
                pk.long_strips == pg.long_strips && pk.tile == pg.tile &&
                    pg.combine == (pg.long_strips ? CMRSCL_COMBINE_GROUP : CMRSCL_COMBINE_AUTO) &&
                    (!pk.long_strips || pk.combine == CMRSCL_COMBINE_KERNEL),
                "%s: %d / %d long strips, tiles of %d / %d, combine %d / %d", what, pg.long_strips,
                pk.long_strips, pg.tile, pk.tile, (int)pg.combine, (int)pk.combine);
            check_products(mk, mg, &ref_a, v->precision, what);
        }
        cmrscl_matrix_free(mg);
        cmrscl_matrix_free(mk);
        cmrscl_csr_free(&ref_a);
        cmrscl_csr_free(&a);
    }
}

/* Whether the device takes the last tile's combine (NVIDIA's OpenCL and CPUs); where it does
 * not, says so once. */
static bool last_combine_runs(cmrscl_context ctx, const variant *v, cmrscl_options o)
{
    static int said = 0;
    cmrscl_device_info dev;
    CHECK_OK(cmrscl_context_device_info(ctx, &dev));
    cmrscl_csr a;
    test_matrix_build(6, &a); /* a long row: the plan splits it */
    o.combine = CMRSCL_COMBINE_LAST;
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    cmrscl_status st = cmrscl_plan(&dev, v->precision, &a, &o, &p);
    cmrscl_csr_free(&a);
    CHECK_MSG(st == CMRSCL_OK || st == CMRSCL_ERROR_UNSUPPORTED, "combine last: status %d", st);
    if (st != CMRSCL_OK && !said++)
        printf("the last tile's combine not checked: this device does not take it (%s)\n",
               cmrscl_last_error());
    return st == CMRSCL_OK && p.long_strips > 0 && p.combine == CMRSCL_COMBINE_LAST;
}

/* split_strip / split_segment: long strips cut into tiles of 1, 7 and 64 entries, each also
 * with 64-bit indices (the tiles' first entries and partial sums' slots widen), and each
 * combined by the last tile's work-group too where the device takes it (tiles of 1: more
 * tiles a strip than work-items share them); then the in-group combine (tiles of at least 1
 * and 64: the plan grows them until a long strip fits a group) against the second kernel,
 * and once with 64-bit indices. Without the full sweep, one tile size a height, in turn
 * (still tiles of 1, 7 and 64), and the in-group combine at the second height alone. */
static void run_split(cmrscl_context ctx, const variant *v, cmrscl_kernel kernel)
{
    static const int strip_heights[] = {1, 3, 16}, segment_heights[] = {1, 8, 32, 100};
    static const int tiles[] = {1, 7, 64};
    bool strip = kernel == CMRSCL_KERNEL_STRIP;
    size_t nh = strip ? 3 : 4;
    for (size_t k = 0; k < nh; ++k)
        for (size_t t = 0; t < 3; ++t) {
            if (!full_sweep(v) && t != (k + 2) % 3)
                continue;
            int h = strip ? strip_heights[k] : segment_heights[k];
            cmrscl_options o = base_options(v, kernel, h);
            o.tile = tiles[t];
            o.lane_entries = strip ? 0 : 1 << (int)((k + t) % 3); /* 1, 2, 4 in turn */
            char label[96];
            snprintf(label, sizeof label, "%s, height %d, tiles of %d, %d entries per lane",
                     strip ? "strip" : "segment", h, tiles[t], o.lane_entries);
            run_options(ctx, v, &o, label, true);
            cmrscl_options last = o;
            last.combine = CMRSCL_COMBINE_LAST;
            if (last_combine_runs(ctx, v, o)) {
                snprintf(label, sizeof label, "%s, height %d, tiles of %d, the last tile's combine",
                         strip ? "strip" : "segment", h, tiles[t]);
                run_options(ctx, v, &last, label, t == 0);
            }
            if (t == 1 || (!full_sweep(v) && k != 1))
                continue;
            o.combine = CMRSCL_COMBINE_GROUP;
            snprintf(label, sizeof label, "%s, height %d, tiles of %d or more, %d entries per lane",
                     strip ? "strip" : "segment", h, tiles[t], o.lane_entries);
            run_group_twins(ctx, v, &o, label);
            if (k == 1 && t == 0)
                run_options(ctx, v, &o, label, true);
        }
}

/* modulo: the MODULO kernel with 2, 4, 8 and 32 slot sets, warps of 8, 16 and 32 lanes, HEIGHT
 * 1 (every step's class holds one entry: the most holes), 3, 5, 16 and 33, both layouts and
 * orders; 64-bit indices on two. Sub-groups fix the warp to the width under test, and the slot
 * sets to at most that many. */
static void run_modulo(cmrscl_context ctx, const variant *v)
{
    static const struct {
        int modulo, warp, height;
        cmrscl_layout layout;
        cmrscl_order order;
        bool wide;
    } cases[] = {
        {2, 8, 16, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_COLUMNS, true},
        {8, 8, 5, CMRSCL_LAYOUT_UNPACKED, CMRSCL_ORDER_ROWS, false},
        {4, 16, 3, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_COLUMNS, false},
        {2, 32, 16, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_ROWS, false},
        {8, 32, 16, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_COLUMNS, true},
        {8, 32, 1, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_COLUMNS, false},
        {32, 32, 33, CMRSCL_LAYOUT_UNPACKED, CMRSCL_ORDER_COLUMNS, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        cmrscl_options o = base_options(v, CMRSCL_KERNEL_MODULO, cases[k].height);
        o.warp = v->width ? v->width : cases[k].warp;
        o.modulo = cases[k].modulo < o.warp ? cases[k].modulo : o.warp;
        o.layout = cases[k].layout;
        o.order = cases[k].order;
        o.tile = 0; /* automatic: MODULO never splits */
        char label[96];
        snprintf(label, sizeof label, "modulo %d, warp %d, height %d, %s order", o.modulo, o.warp,
                 o.height, o.order == CMRSCL_ORDER_ROWS ? "row" : "column");
        run_options(ctx, v, &o, label, cases[k].wide);
    }
}

/* slice: a work-item per row, HEIGHT 1 (a row per strip, no holes), 4, 32 (a hardware warp)
 * and 64, both layouts; and several rows a work-item (warp below the height: the whole strip,
 * or 4 rows each), whose products must equal a row a work-item's bit for bit; 64-bit indices
 * on three (the first of each kind also takes the codecs). */
static void run_slice(cmrscl_context ctx, const variant *v)
{
    static const struct {
        int height, warp;
        cmrscl_layout layout;
        bool wide;
    } cases[] = {{1, 1, CMRSCL_LAYOUT_PACKED, false},    {4, 4, CMRSCL_LAYOUT_UNPACKED, true},
                 {4, 1, CMRSCL_LAYOUT_PACKED, true},     {16, 4, CMRSCL_LAYOUT_UNPACKED, false},
                 {32, 32, CMRSCL_LAYOUT_PACKED, true},   {32, 1, CMRSCL_LAYOUT_UNPACKED, false},
                 {64, 64, CMRSCL_LAYOUT_UNPACKED, false}};
    cmrscl_device_info dev = {0};
    cmrscl_context_device_info(ctx, &dev);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        if ((unsigned)cases[k].warp > dev.max_work_group_size) {
            printf("%s: slice, height %d not run (not checked): its work-group of %d lanes "
                   "exceeds the %u this device's kernels run\n",
                   v->name, cases[k].height, cases[k].warp, dev.max_work_group_size);
            continue;
        }
        cmrscl_options o = base_options(v, CMRSCL_KERNEL_SLICE, cases[k].height);
        o.layout = cases[k].layout;
        o.warp = cases[k].warp;
        o.tile = 0; /* automatic: slices never split */
        char label[96];
        snprintf(label, sizeof label, "slice, height %d, warp %d, %s", o.height, o.warp,
                 o.layout == CMRSCL_LAYOUT_PACKED ? "packed" : "unpacked");
        run_options(ctx, v, &o, label, cases[k].wide);
    }
}

/* The test cases (see the header) and their families. */
static const struct {
    const char *name;
    cmrscl_kernel kernel;
} cases[] = {{"strip_packed", CMRSCL_KERNEL_STRIP},
             {"strip_unpacked", CMRSCL_KERNEL_STRIP},
             {"strip_narrow", CMRSCL_KERNEL_STRIP},
             {"split_strip", CMRSCL_KERNEL_STRIP},
             {"segment_packed", CMRSCL_KERNEL_SEGMENT},
             {"segment_unpacked", CMRSCL_KERNEL_SEGMENT},
             {"split_segment", CMRSCL_KERNEL_SEGMENT},
             {"modulo", CMRSCL_KERNEL_MODULO},
             {"slice", CMRSCL_KERNEL_SLICE}};

static bool parse_args(int argc, char **argv, variant *v, cmrscl_kernel *kernel)
{
    if (argc < 4 || argc > 5)
        return false;
    v->precision = !strcmp(argv[1], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
    v->name = NULL;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        if (!strcmp(argv[2], cases[i].name))
            v->name = cases[i].name, *kernel = cases[i].kernel;
    v->reduce = CMRSCL_REDUCE_AUTO;
    for (size_t i = 0; i < cmrscl_variant_count(); ++i) {
        const cmrscl_variant *t = cmrscl_variant_get(i);
        if (v->name && t->kernel == *kernel &&
            !strcmp(cmrs_variant_reduce_name(t->reduce), argv[3]))
            v->reduce = t->reduce;
    }
    v->width = argc > 4 ? atoi(argv[4]) : 0;
    return v->name && v->reduce && (v->width > 0) == (v->reduce == CMRSCL_REDUCE_SUBGROUP);
}

/* Why this device cannot run the test, or NULL. */
static const char *skip_reason(const variant *v, cmrscl_kernel kernel,
                               const cmrscl_device_info *dev, char *buf, size_t size)
{
    if (v->precision == CMRSCL_DOUBLE && !dev->fp64)
        return "the device has no fp64";
    const kernel_variant *t = cmrs_variant_find(kernel, v->reduce);
    const char *missing = cmrs_variant_missing(dev, t);
    if (missing) {
        snprintf(buf, size, "%s needs %s", t->pub.name, missing);
        return buf;
    }
    if (v->width && cmrs_variant_lanes_refused(dev, t, v->width)) {
        snprintf(buf, size,
                 "the device's sub-groups cannot be %d lanes wide (it uses %u; widths "
                 "kernels can be fixed to, OR-ed: %u)",
                 v->width, dev->subgroup_width, dev->subgroup_widths);
        return buf;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    variant v;
    cmrscl_kernel kernel = CMRSCL_KERNEL_AUTO;
    if (!parse_args(argc, argv, &v, &kernel)) {
        fprintf(stderr,
                "usage: %s float|double CASE local|shuffle|subgroup [WIDTH]\n"
                "  (WIDTH: lanes per sub-group, for subgroup alone)\n",
                argv[0]);
        return 2;
    }
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("kernel");
    cmrscl_device_info dev;
    CHECK_OK(cmrscl_context_device_info(ctx, &dev));
    printf("device %u:%u %s (%s), warp %u, sub-group width %u\n", dev.platform_index,
           dev.device_index, dev.device_name, dev.platform_name, dev.warp_width,
           dev.subgroup_width);
    char why[256];
    const char *skip = skip_reason(&v, kernel, &dev, why, sizeof why);
    if (skip) {
        printf("skipped: %s\n", skip);
        cmrscl_context_free(ctx);
        return SKIP;
    }
    int warp = v.width ? v.width : (int)dev.warp_width;
    if (!strcmp(v.name, "strip_packed"))
        run_strip(ctx, &v, CMRSCL_LAYOUT_PACKED, warp);
    else if (!strcmp(v.name, "strip_unpacked"))
        run_strip(ctx, &v, CMRSCL_LAYOUT_UNPACKED, warp);
    else if (!strcmp(v.name, "strip_narrow"))
        run_strip_narrow(ctx, &v);
    else if (!strcmp(v.name, "segment_packed"))
        run_segment(ctx, &v, CMRSCL_LAYOUT_PACKED);
    else if (!strcmp(v.name, "segment_unpacked"))
        run_segment(ctx, &v, CMRSCL_LAYOUT_UNPACKED);
    else if (!strcmp(v.name, "modulo"))
        run_modulo(ctx, &v);
    else if (!strcmp(v.name, "slice"))
        run_slice(ctx, &v);
    else
        run_split(ctx, &v, kernel);
    cmrscl_context_free(ctx);
    if (!strcmp(v.name, "slice") || (strstr(v.name, "strip") && full_sweep(&v))) {
        CHECK_MSG(narrow_plans > 0, "no plan of the catalogue took narrow columns");
        printf("%s: %d plans with narrow columns, each against its twin of 32-bit columns\n",
               v.name, narrow_plans);
    }
    CHECK_MSG(products_checked > 0, "%s: no product was checked", v.name);
    printf("%s %s %s%s%s: %ld products checked against the CPU reference\n", v.name,
           cmrscl_precision_name(v.precision), cmrs_variant_reduce_name(v.reduce),
           v.width ? ", sub-groups of " : "", v.width ? argv[4] : "", products_checked);
    return test_finish("kernel");
}
