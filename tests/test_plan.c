/* test_plan.c - the plan from device facts and matrix statistics, without a device: the
 * HEIGHT rule against the paper's numbers (section 6.3), the matrix rule's choice of kernel
 * family per class of rows, the split of long strips, user overrides, and every error a
 * user can provoke (no fp64, bad warp, local memory, packing, orders the kernel cannot run). */
#include "exec/exec.h" /* cmrs_matrix_check_device_memory */
#include "plan_fixtures.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_height_rule(void)
{
    /* Kepler K20M: 48 KiB, 2048 threads per SM -> 6 floats, the paper's optimum. */
    cmrscl_device_info kepler = fake_device(48 * 1024, 2048, 48 * 1024);
    CHECK(cmrs_plan_rule_height(&kepler, CMRSCL_FLOAT) == 6);
    CHECK(cmrs_plan_rule_height(&kepler, CMRSCL_DOUBLE) == 3);
    /* Hopper: 228 KiB, 2048 threads -> 28 floats (clamped to 16), 14 doubles. */
    cmrscl_device_info hopper = fake_device(228 * 1024, 2048, 48 * 1024);
    CHECK(cmrs_plan_rule_height(&hopper, CMRSCL_FLOAT) == 16);
    CHECK(cmrs_plan_rule_height(&hopper, CMRSCL_DOUBLE) == 14);
    /* A tiny local memory still gives a runnable HEIGHT of at least 1. */
    cmrscl_device_info tiny = fake_device(1024, 2048, 1024);
    CHECK(cmrs_plan_rule_height(&tiny, CMRSCL_DOUBLE) == 1);
    /* The per-work-group limit caps the rule: 4 KiB / (128 work-items * 4 bytes) = 8. */
    cmrscl_device_info small_group = fake_device(1 << 20, 64, 4096);
    CHECK(cmrs_plan_rule_height(&small_group, CMRSCL_FLOAT) == 8);
}

static void test_choices(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(choose(&d, CMRSCL_FLOAT, 1000, NULL, &p));
    CHECK(p.height == 16 && p.warp == 32 && p.work_group_size == 128);
    CHECK(p.layout == CMRSCL_LAYOUT_PACKED && p.order == CMRSCL_ORDER_COLUMNS);
    CHECK(p.reduce == CMRSCL_REDUCE_LOCAL); /* no warp shuffle on this device */
    CHECK(!strcmp(p.height_source, "device rule"));
    CHECK(test_contains(p.build_options, "-DHEIGHT=16 ") &&
          test_contains(p.build_options, "-DVALUE_DOUBLE=0") &&
          test_contains(p.build_options, "-DREDUCE=1"));
    d.warp_shuffle = 1;
    CHECK_OK(choose(&d, CMRSCL_DOUBLE, 1000, NULL, &p));
    CHECK(p.reduce == CMRSCL_REDUCE_SHUFFLE && test_contains(p.build_options, "-DREDUCE=2"));
    /* User overrides win and say so. */
    cmrscl_options o = {0};
    o.height = 5, o.order = CMRSCL_ORDER_ROWS, o.reduce = CMRSCL_REDUCE_LOCAL, o.warp = 8;
    CHECK_OK(choose(&d, CMRSCL_DOUBLE, 1000, &o, &p));
    CHECK(p.height == 5 && !strcmp(p.height_source, "user") && p.order == CMRSCL_ORDER_ROWS &&
          p.reduce == CMRSCL_REDUCE_LOCAL && p.warp == 8 && p.work_group_size == 128);
    /* Taller strips pack with more row bits; where the columns do not fit, the unpacked
     * layout is chosen, not an error. */
    o = (cmrscl_options){0};
    o.height = 17;
    CHECK_OK(choose(&d, CMRSCL_FLOAT, 1000, &o, &p));
    CHECK(p.layout == CMRSCL_LAYOUT_PACKED && p.row_bits == 5 &&
          test_contains(p.build_options, "-DROW_BITS=5"));
    CHECK_OK(choose(&d, CMRSCL_FLOAT, (1 << 27) + 1, &o, &p));
    CHECK(p.layout == CMRSCL_LAYOUT_UNPACKED && test_contains(p.build_options, "-DPACKED=0"));
    o.height = 4;
    CHECK_OK(choose(&d, CMRSCL_FLOAT, (1 << 28) + 1, &o, &p));
    CHECK(p.layout == CMRSCL_LAYOUT_UNPACKED);
    /* A device whose largest work-group is below 128: the group shrinks by warps. */
    d.max_work_group_size = 96;
    CHECK_OK(choose(&d, CMRSCL_FLOAT, 10, NULL, &p));
    CHECK(p.work_group_size == 96);
}

static void test_errors(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    cmrscl_options o = {0};
    CHECK_STATUS(choose(&d, (cmrscl_precision)7, 10, NULL, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    d.fp64 = 0;
    CHECK_STATUS(choose(&d, CMRSCL_DOUBLE, 10, NULL, &p), CMRSCL_ERROR_UNSUPPORTED);
    CHECK(test_contains(cmrscl_last_error(), "cl_khr_fp64"));
    d.fp64 = 1;
    o.warp = 24;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.warp = 32, o.work_group_size = 48;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.work_group_size = 2048;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_DEVICE_LIMIT);
    o = (cmrscl_options){0};
    o.height = CMRSCL_MAX_HEIGHT + 1;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.height = 0, o.reduce = (cmrscl_reduce)9;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.reduce = CMRSCL_REDUCE_AUTO, o.layout = (cmrscl_layout)-1;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.height = 20, o.layout = CMRSCL_LAYOUT_PACKED;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 1 << 28, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "packed layout"));
    o.layout = CMRSCL_LAYOUT_AUTO, o.reduce = CMRSCL_REDUCE_SHUFFLE;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_UNSUPPORTED);
    o.reduce = CMRSCL_REDUCE_SUBGROUP; /* no sub-groups probed on this device */
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_UNSUPPORTED);
    o = (cmrscl_options){0};
    o.kernel = CMRSCL_KERNEL_SEGMENT, o.order = CMRSCL_ORDER_COLUMNS;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "row-ordered"));
    o.order = CMRSCL_ORDER_AUTO, o.warp = 32, o.work_group_size = 64;
    /* emulated warp primitives: one warp per group */
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "one warp per work-group"));
    o.work_group_size = 0, o.reduce = CMRSCL_REDUCE_SHUFFLE; /* NVIDIA's: not here */
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_UNSUPPORTED);
    CHECK(test_contains(cmrscl_last_error(), "segment/shuffle") &&
          test_contains(cmrscl_last_error(), "inline PTX"));
    /* a reduction the family has none of: the families that have one named */
    o = (cmrscl_options){0};
    o.kernel = CMRSCL_KERNEL_SLICE, o.reduce = CMRSCL_REDUCE_SUBGROUP;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_UNSUPPORTED);
    CHECK(test_contains(cmrscl_last_error(), "slice family (asked) has no subgroup reduction") &&
          test_contains(cmrscl_last_error(), "strip, segment, modulo"));
    o = (cmrscl_options){0};
    o.cache_hint = CMRSCL_CACHE_HINT_STREAM; /* PTX: NVIDIA only */
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_UNSUPPORTED);
    o.cache_hint = CMRSCL_CACHE_HINT_AUTO, o.tile = -2;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.tile = 0, o.kernel = (cmrscl_kernel)7;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    /* 256 rows x 128 work-items x 8 bytes = 256 KiB of local memory: too much. */
    o = (cmrscl_options){0};
    o.height = 256;
    CHECK_STATUS(choose(&d, CMRSCL_DOUBLE, 10, &o, &p), CMRSCL_ERROR_DEVICE_LIMIT);
    CHECK(test_contains(cmrscl_last_error(), "local memory"));
}

/* The matrix rule on a device with warp shuffles: one family per class of rows. */
static void test_matrix_rule(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    d.warp_shuffle = 1;
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(choose_stats(&d, 6000, 0, 0.0, 6000, &p)); /* dense rows */
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 1 && p.warp == 32 &&
          p.reduce == CMRSCL_REDUCE_SHUFFLE && !strcmp(p.height_source, "matrix rule") &&
          test_contains(p.plan_reason, "CSR-vector"));
    CHECK_OK(choose_stats(&d, 26.5, 0.1, 0.0, 1000, &p)); /* 27-point stencil */
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 16 && p.order == CMRSCL_ORDER_COLUMNS &&
          p.cache_hint == CMRSCL_CACHE_HINT_STREAM);
    plan_matrix dbl = {1000,  1000, 26500, NULL, {26.5, 0.1, 27, 0, 0.0}, NULL, NULL,
                       false, NULL, NULL,  NULL};
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_DOUBLE, &dbl, NULL, &p)); /* doubles: half the slots */
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 8 &&
          p.cache_hint == CMRSCL_CACHE_HINT_OFF);
    CHECK_OK(choose_stats(&d, 15.5, 10.0, 0.0, 1000, &p)); /* power-law rows of mu 15 */
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 16);
    CHECK_OK(choose_stats(&d, 3, 0.6, 0.33, 1000, &p)); /* scattered short rows */
    CHECK(p.kernel == CMRSCL_KERNEL_SEGMENT && p.height == 64 && p.order == CMRSCL_ORDER_ROWS &&
          p.warp == 32 && p.reduce == CMRSCL_REDUCE_SHUFFLE && p.row_bits == 6 &&
          p.lane_entries == 1 && p.cache_hint == CMRSCL_CACHE_HINT_STREAM &&
          test_contains(p.build_options, "-DKERNEL=2") &&
          test_contains(p.build_options, "-DLANE_ENTRIES=1") &&
          test_contains(p.plan_reason, "scattered"));
    /* Scattered rows of mu 4 in float: Algorithm 1 already; in double still the scan. */
    CHECK_OK(choose_stats(&d, 4, 0.6, 0.33, 1000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 16 &&
          p.cache_hint == CMRSCL_CACHE_HINT_STREAM);
    plan_matrix scattered = {1 << 20, 1000, 4 << 20, NULL, {4, 0.6, 8, 0, 0.33}, NULL, NULL,
                             false,   NULL, NULL,    NULL};
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_DOUBLE, &scattered, NULL, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_SEGMENT && p.height == 64);
    /* ... but a matrix for blocks of 8 vectors or more takes strips of 8 rows (both
     * precisions); banded short rows, and fewer vectors, keep the scan. */
    cmrscl_options blocks = {.vectors = CMRSCL_BLOCK_PLAN_VECTORS};
    plan_matrix banded = scattered;
    banded.stats.col_spread = 0.01;
    for (int in_double = 0; in_double < 2; ++in_double) {
        scattered.stats.mu = in_double ? 4 : 3;
        cmrscl_precision prec = in_double ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
        blocks.vectors = CMRSCL_BLOCK_PLAN_VECTORS;
        CHECK_OK(cmrs_plan_choose(&d, prec, &scattered, &blocks, &p));
        CHECK_MSG(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 8 &&
                      p.order == CMRSCL_ORDER_COLUMNS && p.cache_hint == CMRSCL_CACHE_HINT_OFF &&
                      test_contains(p.plan_reason, "for blocks of 8 vectors"),
                  "%s: %s", in_double ? "double" : "float", p.plan_reason);
        CHECK_OK(cmrs_plan_choose(&d, prec, &banded, &blocks, &p));
        CHECK(p.kernel == CMRSCL_KERNEL_SEGMENT && p.height == 128);
        blocks.vectors = CMRSCL_BLOCK_PLAN_VECTORS - 1;
        CHECK_OK(cmrs_plan_choose(&d, prec, &scattered, &blocks, &p));
        CHECK(p.kernel == CMRSCL_KERNEL_SEGMENT && p.height == 64);
    }
    CHECK_OK(choose_stats(&d, 7, 0.1, 0.01, 1000, &p)); /* banded short rows: a stencil */
    CHECK(p.kernel == CMRSCL_KERNEL_SEGMENT && p.height == 128 && p.row_bits == 7 &&
          p.lane_entries == 4 && p.cache_hint == CMRSCL_CACHE_HINT_STREAM &&
          test_contains(p.plan_reason, "banded"));
    /* Few rows for the device (1000 < 64 rows x 64 resident warps): short strips, unless
     * the rows are too short to fill them. */
    CHECK_OK(choose_rows(&d, 1000, 4, 0.6, 0.33, 1000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 8 &&
          p.cache_hint == CMRSCL_CACHE_HINT_OFF && test_contains(p.plan_reason, "few rows"));
    CHECK_OK(choose_rows(&d, 1000, 1, 0, 0.33, 1000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_SEGMENT && p.height == 64);
    /* Few rows of an H200 (132 units) but beyond its L2 (24M entries: fem, Kronecker
     * products): the matrix streamed past L2 so x stays there. */
    d.compute_units = 132;
    CHECK_OK(choose_rows(&d, 400000, 60, 0.2, 0.01, 400000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 8 &&
          p.cache_hint == CMRSCL_CACHE_HINT_STREAM && test_contains(p.plan_reason, "few rows") &&
          test_contains(p.plan_reason, "streamed past L2"));
    CHECK_OK(choose_rows(&d, 400000, 4, 0.2, 0.01, 400000, &p)); /* 1.6M entries: in L2 */
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 8 &&
          p.cache_hint == CMRSCL_CACHE_HINT_OFF);
    d.compute_units = 0;
    CHECK_OK(choose_stats(&d, 1, 0, 0.0, (1 << 26) + 1, &p)); /* too many columns for 6 row bits */
    CHECK(p.height == 32 && p.layout == CMRSCL_LAYOUT_PACKED && p.row_bits == 5);
    /* Without shuffles the strip family stays, with the device rule's HEIGHT. */
    d.warp_shuffle = 0;
    CHECK_OK(choose_stats(&d, 1, 0, 0.0, 1000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 16 &&
          test_contains(p.plan_reason, "no warp shuffles"));
    /* A CPU walks each strip with one work-item (the segment family without lanes). */
    d.type = CL_DEVICE_TYPE_CPU;
    CHECK_OK(choose_stats(&d, 7, 0.1, 0.0, 1000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_SEGMENT && p.warp == 1 && p.height == 32 &&
          p.reduce == CMRSCL_REDUCE_LOCAL && test_contains(p.plan_reason, "CPU"));
    d.type = CL_DEVICE_TYPE_GPU;
    /* The segment family without shuffles: one work-item walks each strip; several lanes
     * (emulated warp primitives) only when asked, one warp a group. */
    cmrscl_options o = {0};
    o.kernel = CMRSCL_KERNEL_SEGMENT;
    d.warp_width = 8;
    CHECK_OK(choose(&d, CMRSCL_DOUBLE, 10, &o, &p));
    CHECK(p.reduce == CMRSCL_REDUCE_LOCAL && p.warp == 1 && p.work_group_size == 128);
    o.warp = 8;
    CHECK_OK(choose(&d, CMRSCL_DOUBLE, 10, &o, &p));
    CHECK(p.warp == 8 && p.work_group_size == 8);
}

/* The column spread tells banded matrices (stencils: x from a narrow window) from
 * scattered ones (random columns: about 1/3 of the columns away from the diagonal). */
static void test_column_spread(void)
{
    static const struct {
        const char *spec;
        double low, high;
    } cases[] = {{"stencil5:300", 0.0, 0.01},
                 {"stencil27:30", 0.0, 0.05},
                 {"random:100000:4", 0.25, 0.42},
                 {"perm:200000", 0.25, 0.42},
                 {"dense:300", 0.25, 0.42}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cmrscl_csr a;
        cmrscl_matrix_stats st;
        CHECK_OK(cmrscl_csr_generate(cases[i].spec, &a));
        CHECK_OK(cmrscl_csr_stats(&a, &st));
        CHECK_MSG(st.col_spread >= cases[i].low && st.col_spread <= cases[i].high,
                  "%s: column spread %.4f outside [%.2f, %.2f]", cases[i].spec, st.col_spread,
                  cases[i].low, cases[i].high);
        cmrscl_csr_free(&a);
    }
}

/* Long strips: the automatic tile from the device's resident warps, and only matrices
 * that have a strip longer than two tiles are split. */
static void test_split(void)
{
    cmrscl_device_info d = fake_gpu();
    enum { ROWS = 40 };
    int64_t row_ptr[ROWS + 1];
    row_ptr[0] = 0;
    for (int i = 0; i < ROWS; ++i) /* row 7 holds 100000 entries, the others 3 */
        row_ptr[i + 1] = row_ptr[i] + (i == 7 ? 100000 : 3);
    plan_matrix a = {.rows = ROWS, .cols = 1000, .nnz = row_ptr[ROWS], .row_ptr = row_ptr};
    cmrs_analyze_rows(ROWS, 1000, row_ptr, NULL, &a.stats);
    CHECK(a.stats.max_row == 100000 && a.stats.empty_rows == 0);
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, NULL, &p));
    CHECK(p.tile == 256); /* 100117 entries spread over 8448 warps: the floor */
    split_layout sp;
    CHECK_OK(cmrs_split_build(ROWS, row_ptr, p.height, p.tile, 0, &sp));
    CHECK(sp.long_strips == 1 && sp.tiles == (100000 + 3 * (p.height - 1) + 255) / 256);
    CHECK(sp.first_tile[0] == 0 && sp.first_tile[1] == (uint32_t)sp.tiles);
    CHECK(sp.longest_whole == 3 * p.height); /* the strips left whole: their chains */
    CHECK(sp.tile_start[1] == sp.tile_start[0] + 256 && sp.tile_strip[0] == 7u / p.height);
    cmrs_split_free(&sp);
    /* A strip of 1500 entries is longer than two tiles but not worth a second kernel. */
    for (int i = 0; i < ROWS; ++i)
        row_ptr[i + 1] = row_ptr[i] + (i == 7 ? 1500 : 3);
    plan_matrix b = {.rows = ROWS, .cols = 1000, .nnz = row_ptr[ROWS], .row_ptr = row_ptr};
    cmrs_analyze_rows(ROWS, 1000, row_ptr, NULL, &b.stats);
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &b, NULL, &p));
    CHECK(p.tile == 0);
    for (int i = 0; i < ROWS; ++i) /* back to the long row for what follows */
        row_ptr[i + 1] = row_ptr[i] + (i == 7 ? 100000 : 3);
    cmrscl_options o = {0};
    o.tile = -1; /* never split */
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, &o, &p));
    CHECK(p.tile == 0);
    for (int i = 0; i < ROWS; ++i) /* no long strip: nothing to split */
        row_ptr[i + 1] = row_ptr[i] + 3;
    a.nnz = row_ptr[ROWS];
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, NULL, &p));
    CHECK(p.tile == 0);
}

/* Few rows, one of them long: a warp per row in one kernel while every row gets a warp
 * within VECTOR_WAVES waves and the longest row is short enough, else HEIGHT 8 split. */
static void test_few_rows_long_row(void)
{
    cmrscl_device_info d = fake_gpu();
    const struct {
        int32_t rows, long_row;
        int height, split;
    } cases[] = {{2000, 2040, 1, 0}, {2000, 3000, 8, 1}, {2000, 5000, 8, 1}, {40000, 2040, 8, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        int32_t rows = cases[c].rows;
        int64_t *row_ptr = malloc(sizeof *row_ptr * ((size_t)rows + 1));
        row_ptr[0] = 0;
        for (int32_t i = 0; i < rows; ++i)
            row_ptr[i + 1] = row_ptr[i] + (i == 7 ? cases[c].long_row : 6);
        plan_matrix a = {.rows = rows, .cols = rows, .nnz = row_ptr[rows], .row_ptr = row_ptr};
        cmrs_analyze_rows(rows, rows, row_ptr, NULL, &a.stats);
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, NULL, &p));
        CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == cases[c].height &&
              (p.tile > 0) == cases[c].split && test_contains(p.plan_reason, "few rows"));
        cmrscl_options o = {0};
        o.tile = 512; /* the user's tile still splits the CSR-vector plan */
        CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, &o, &p));
        CHECK(p.tile == 512);
        free(row_ptr);
    }
}

/* The in-group combine: few-row matrices whose longest strip fits one work-group take it
 * (the work-group doubles up to 256 while its tiles would exceed 256 entries and local
 * memory allows); larger matrices, the user's KERNEL and a fixed work-group are respected; and
 * the layout pads groups so that no long strip's tiles cross one. */
static void test_group_combine(void)
{
    cmrscl_device_info d = fake_gpu();
    enum { ROWS = 40000 };
    int64_t *row_ptr = malloc(sizeof *row_ptr * (ROWS + 1));
    row_ptr[0] = 0;
    for (int32_t i = 0; i < ROWS; ++i) /* rows 8, 16 and 24 hold 6000 entries, the others 6 */
        row_ptr[i + 1] = row_ptr[i] + (i == 8 || i == 16 || i == 24 ? 6000 : 6);
    plan_matrix a = {.rows = ROWS, .cols = ROWS, .nnz = row_ptr[ROWS], .row_ptr = row_ptr};
    cmrs_analyze_rows(ROWS, ROWS, row_ptr, NULL, &a.stats);
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, NULL, &p));
    /* strips of 6042 entries: 4 warps would take tiles of 1536, 8 warps (the most) 768 */
    CHECK(p.height == 8 && p.combine == CMRSCL_COMBINE_GROUP && p.work_group_size == 256 &&
          p.tile == 768 && test_contains(p.build_options, "-DGROUP_COMBINE=1") &&
          test_contains(p.plan_reason, "work-group of 256"));
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_DOUBLE, &a, NULL, &p));
    CHECK(p.combine == CMRSCL_COMBINE_GROUP && p.work_group_size == 256 && p.tile == 768);
    /* 8 KiB of local memory: 256 x 8 doubles do not fit, 128 would need tiles of 1536 */
    cmrscl_device_info small = d;
    small.local_mem_bytes = 8 * 1024;
    CHECK_OK(cmrs_plan_choose(&small, CMRSCL_DOUBLE, &a, NULL, &p));
    CHECK(p.combine == CMRSCL_COMBINE_KERNEL && p.work_group_size == 128 && p.tile == 256);
    cmrscl_options o = {0};
    o.combine = CMRSCL_COMBINE_KERNEL;
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, &o, &p));
    CHECK(p.combine == CMRSCL_COMBINE_KERNEL && p.work_group_size == 128 && p.tile == 256 &&
          test_contains(p.build_options, "-DGROUP_COMBINE=0"));
    o.combine = CMRSCL_COMBINE_GROUP, o.work_group_size = 128; /* 4 warps: tiles of 1511 */
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, &o, &p));
    CHECK(p.combine == CMRSCL_COMBINE_GROUP && p.work_group_size == 128 && p.tile == 1536);
    o.combine = (cmrscl_combine)7;
    CHECK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, &o, &p) == CMRSCL_ERROR_INVALID_ARGUMENT);
    /* Many rows: a launch is noise, the second kernel takes any split. */
    plan_matrix many = a;
    many.rows = many.cols = 1 << 20, many.row_ptr = NULL;
    int64_t longest[STRIP_HEIGHT_LOGS];
    for (int k = 0; k < STRIP_HEIGHT_LOGS; ++k)
        longest[k] = 6000 + ((int64_t)6 << k);
    many.longest_strip = longest;
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &many, NULL, &p));
    CHECK(p.tile > 0 && p.combine == CMRSCL_COMBINE_KERNEL && p.work_group_size == 128 &&
          test_contains(p.build_options, "-DLAST_COMBINE=0"));
    /* Groups of 5 tiles, strips of 4 tiles of 2000: slots 0-3, then 5-8 and 10-13 (4 and 9
     * pad). */
    split_layout sp;
    int64_t tiles, longs;
    CHECK_OK(cmrs_split_build(ROWS, row_ptr, 8, 2000, 5, &sp));
    cmrs_split_count(ROWS, row_ptr, 8, 2000, 5, &tiles, &longs);
    CHECK(sp.tiles == 14 && tiles == 14 && sp.long_strips == 3 && longs == 3);
    for (int k = 0; k < sp.long_strips; ++k)
        CHECK(sp.first_tile[k] / 5 == (sp.first_tile[k] + 3) / 5 &&
              sp.tile_strip[sp.first_tile[k] + 3] == sp.long_strip[k]);
    CHECK(sp.tile_strip[4] == SPLIT_NO_STRIP && sp.tile_strip[9] == SPLIT_NO_STRIP &&
          sp.first_tile[1] == 5 && sp.first_tile[2] == 10);
    cmrs_split_free(&sp);
    free(row_ptr);
}

/* Long rows (the dense class): every strip splits, the work-group sized so the tiles keep
 * at least 1024 entries, one launch while they fit one group in tiles of at most 2048;
 * streamed past L2 beyond it. */
static void test_long_rows(void)
{
    cmrscl_device_info d = fake_gpu();
    static const struct {
        int32_t rows, cols;
        cmrscl_combine combine; /* expected; AUTO: no split */
        int wg, tile;           /* expected; tile -1: any split */
    } cases[] = {
        {6000, 6000, CMRSCL_COMBINE_GROUP, 128, 1504},
        {5000, 5000, CMRSCL_COMBINE_GROUP, 128, 1280},
        {3000, 3000, CMRSCL_COMBINE_KERNEL, 128, -1},  /* a group of 2 tiles is no split */
        {2000, 40000, CMRSCL_COMBINE_KERNEL, 128, -1}, /* 8 tiles of 5000: too long */
        {20000, 20000, CMRSCL_COMBINE_AUTO, 128, 0},   /* 20000 warps fill the device */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        int32_t n = cases[c].rows;
        int64_t *rp = malloc(sizeof *rp * ((size_t)n + 1));
        for (int32_t i = 0; i <= n; ++i)
            rp[i] = (int64_t)i * cases[c].cols;
        plan_matrix a = {.rows = n, .cols = cases[c].cols, .nnz = rp[n], .row_ptr = rp};
        cmrs_analyze_rows(n, cases[c].cols, rp, NULL, &a.stats);
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, NULL, &p));
        CHECK(p.height == 1 && p.cache_hint == CMRSCL_CACHE_HINT_STREAM);
        CHECK(p.combine == cases[c].combine && p.work_group_size == cases[c].wg);
        CHECK(cases[c].tile < 0 ? p.tile > 0 : p.tile == cases[c].tile);
        CHECK((p.combine == CMRSCL_COMBINE_GROUP) == test_contains(p.plan_reason, "summed in"));
        free(rp);
    }
}

/* The matrix streamed past L2 (medium and short rows): always in float, in double only when
 * x is gathered from all over (scattered columns), not from a band. */
static void test_stream_rule(void)
{
    cmrscl_device_info d = fake_gpu();
    static const struct {
        double mu, spread;
        cmrscl_precision precision;
        cmrscl_kernel kernel;
        bool stream;
    } cases[] = {
        {16.0, 0.3, CMRSCL_DOUBLE, CMRSCL_KERNEL_STRIP, true},
        {16.0, 0.001, CMRSCL_DOUBLE, CMRSCL_KERNEL_STRIP, false},
        {16.0, 0.001, CMRSCL_FLOAT, CMRSCL_KERNEL_STRIP, true},
        {5.0, 0.3, CMRSCL_DOUBLE, CMRSCL_KERNEL_SEGMENT, true},
        {5.0, 0.001, CMRSCL_DOUBLE, CMRSCL_KERNEL_SEGMENT, false},
        {5.0, 0.001, CMRSCL_FLOAT, CMRSCL_KERNEL_SEGMENT, true},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        double mu = cases[c].mu;
        plan_matrix m = {1 << 22,
                         1 << 22,
                         (int32_t)(mu * (1 << 22)),
                         NULL,
                         {mu, 0.2, (int32_t)(2 * mu), 0, cases[c].spread},
                         NULL,
                         NULL,
                         false,
                         NULL,
                         NULL,
                         NULL};
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        CHECK_OK(cmrs_plan_choose(&d, cases[c].precision, &m, NULL, &p));
        CHECK(p.kernel == cases[c].kernel);
        CHECK((p.cache_hint == CMRSCL_CACHE_HINT_STREAM) == cases[c].stream);
        CHECK(test_contains(p.plan_reason, "streamed past L2") == cases[c].stream);
    }
}

/* The slice rule: rows of about equal length, with enough strips of 32 rows for the device
 * (a quarter of its resident warps), laid out on the host; holes of at most 1.8 stored
 * positions an entry and no row longer than 9 x mu (each bound on both sides). */
static void test_slice_rule(void)
{
    cmrscl_device_info d = fake_gpu(); /* 8448 resident warps: slices from 2112 strips */
    static const struct {
        int32_t rows;
        int short_every; /* rows of 7 entries, every this many one of `other` */
        int other, longest;
        bool host, slice;
    } cases[] = {
        {1 << 20, 160, 6, 7, true, true},         /* a 7-point stencil's lines: 1.00 */
        {1 << 20, 160, 6, 7, false, false},       /* made on the device: no holes */
        {1 << 20, 2, 2, 7, true, true},           /* 7 and 2 in turn: 1.56 */
        {1 << 20, 2, 1, 7, true, true},           /* 7 and 1 in turn: 1.75 */
        {1 << 20, 2, 0, 7, true, false},          /* 7 and 0 in turn: 2.00 */
        {1 << 20, 4, 3, 7, true, true},           /* a short row in four: 1.17 */
        {1 << 20, 160, 6, 62, true, true},        /* the longest row 8.9 x mu (as told) */
        {1 << 20, 160, 6, 63, true, false},       /* ... 9.01 x mu */
        {2112 * 32 - 64, 160, 6, 7, true, false}, /* 2110 strips */
        {2112 * 32, 160, 6, 7, true, true},       /* 2112 strips */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        int32_t n = cases[c].rows;
        int64_t *rp = malloc(sizeof(int64_t) * ((size_t)n + 1));
        rp[0] = 0;
        for (int32_t i = 0; i < n; ++i)
            rp[i + 1] = rp[i] + (i % cases[c].short_every ? 7 : cases[c].other);
        plan_matrix m = {
            .rows = n, .cols = n, .nnz = rp[n], .row_ptr = rp, .host_layout = cases[c].host};
        m.stats.mu = (double)rp[n] / n, m.stats.max_row = cases[c].longest;
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &m, NULL, &p));
        bool slice = p.kernel == CMRSCL_KERNEL_SLICE;
        CHECK_MSG(slice == cases[c].slice, "case %zu: kernel %d (%s)", c, (int)p.kernel,
                  p.plan_reason);
        if (slice)
            CHECK_MSG(p.height == 32 && p.warp == 32 && p.order == CMRSCL_ORDER_ROWS &&
                          p.tile == 0 && p.cache_hint == CMRSCL_CACHE_HINT_STREAM &&
                          test_contains(p.plan_reason, "slices, a lane per row") &&
                          test_contains(p.build_options, "-DKERNEL=4"),
                      "case %zu: %s (%s)", c, p.build_options, p.plan_reason);
        free(rp);
    }
}

/* The width of the device's entry indices. No matrix of 2^31 entries fits CI's memory, but
 * the plan needs RowPtr alone: 32 bits up to INT32_MAX stored entries, 64 from there on or on
 * request; the split's partial sums count too; 32 forced on a matrix that needs 64 fails. */
static void test_index_width(void)
{
    cmrscl_device_info d = fake_gpu();
    int64_t rp[3] = {0, INT32_MAX / 2, INT32_MAX}; /* two rows of a billion entries */
    plan_matrix a = {.rows = 2, .cols = INT32_MAX, .nnz = INT32_MAX, .row_ptr = rp};
    cmrs_analyze_rows(a.rows, a.cols, rp, NULL, &a.stats);
    cmrscl_options o = {0};
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, NULL, &p));
    CHECK(p.index_bits == 32 && test_contains(p.build_options, "-DINDEX64=0"));
    o.index_bits = 64; /* forced, as the tests do on small matrices */
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, &o, &p));
    CHECK(p.index_bits == 64 && test_contains(p.build_options, "-DINDEX64=1"));
    rp[2] = a.nnz = (int64_t)INT32_MAX + 1; /* 2^31 entries */
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, NULL, &p));
    CHECK(p.index_bits == 64 && test_contains(p.build_options, "-DINDEX64=1"));
    o.index_bits = 32;
    CHECK_STATUS(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, &o, &p), CMRSCL_ERROR_TOO_LARGE);
    CHECK(test_contains(cmrscl_last_error(), "needs 64 (2147483648 entries"));
    o.index_bits = 48;
    CHECK_STATUS(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.index_bits = 0, o.tile = 1; /* a tile per entry: more tiles than 32-bit numbers */
    CHECK_STATUS(cmrs_plan_choose(&d, CMRSCL_FLOAT, &a, &o, &p), CMRSCL_ERROR_TOO_LARGE);
    CHECK(test_contains(cmrscl_last_error(), "take longer tiles"));
    /* 9 million entries in one strip of 256 rows, tiles of one entry: 2.3e9 partial sums */
    int64_t few[3] = {0, 9000000, 9000003};
    plan_matrix b = {.rows = 2, .cols = 1 << 24, .nnz = few[2], .row_ptr = few};
    cmrs_analyze_rows(b.rows, b.cols, few, NULL, &b.stats);
    o = (cmrscl_options){.kernel = CMRSCL_KERNEL_SEGMENT, .height = 256, .tile = 1};
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &b, &o, &p));
    CHECK(p.index_bits == 64);
    o.index_bits = 32;
    CHECK_STATUS(cmrs_plan_choose(&d, CMRSCL_FLOAT, &b, &o, &p), CMRSCL_ERROR_TOO_LARGE);
    CHECK(test_contains(cmrscl_last_error(), "2304000768 partial sums"));
}

/* The device-memory check on fake device facts: the device's own limits, which a real
 * test could only reach with a matrix of gigabytes, and the context's cap. */
static void test_device_memory_limits(void)
{
    struct cmrscl_context_s ctx;
    memset(&ctx, 0, sizeof ctx);
    pthread_mutex_init(&ctx.lock, NULL);
    ctx.info = fake_device(0, 0, 0);
    ctx.info.max_alloc_bytes = 1000;
    ctx.info.global_mem_bytes = 2500;
    size_t fits[BUF_COUNT] = {100, 1000, 0, 1000};
    CHECK_OK(cmrs_matrix_check_device_memory(&ctx, fits));
    size_t big_buffer[BUF_COUNT] = {100, 1001, 0, 500};
    CHECK_STATUS(cmrs_matrix_check_device_memory(&ctx, big_buffer),
                 CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY);
    CHECK(test_contains(cmrscl_last_error(), "1001-byte col_ind buffer") &&
          test_contains(cmrscl_last_error(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
    size_t too_much[BUF_COUNT] = {900, 900, 0, 900};
    CHECK_STATUS(cmrs_matrix_check_device_memory(&ctx, too_much),
                 CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY);
    CHECK(test_contains(cmrscl_last_error(), "2700 bytes") &&
          test_contains(cmrscl_last_error(), "CL_DEVICE_GLOBAL_MEM_SIZE"));
    ctx.memory_limit = 1500; /* the cap tightens both limits */
    CHECK_STATUS(cmrs_matrix_check_device_memory(&ctx, fits), CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY);
    CHECK(test_contains(cmrscl_last_error(), "memory limit"));
    pthread_mutex_destroy(&ctx.lock);
}

int main(void)
{
    test_height_rule();
    test_choices();
    test_errors();
    test_matrix_rule();
    test_column_spread();
    test_split();
    test_few_rows_long_row();
    test_group_combine();
    test_long_rows();
    test_stream_rule();
    test_slice_rule();
    test_index_width();
    test_device_memory_limits();
    return test_finish("plan");
}
