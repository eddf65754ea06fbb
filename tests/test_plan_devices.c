/* test_plan_devices.c - the plan on other kinds of device than NVIDIA's, without a device:
 * GPUs with sub-groups (the matrix rule on the sub-group variants, widths fixed or not,
 * sub-groups that part ways or not), GPUs with neither shuffles nor sub-groups, CPUs (the walk,
 * or Algorithm 1 on sub-groups where it measured faster), the cache a device reports, the
 * narrow columns that depend on it, and the block product's vectors a launch. */
#include "plan/plan.h"
#include "plan_fixtures.h"
#include "test_util.h"

#include <stdio.h>
#include <string.h>

/* A GPU with sub-groups and, at first, nothing else. */
static void test_subgroup_gpu(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    cmrscl_options o;
    /* Sub-groups the probe confirmed, with shuffles: the matrix rule as with NVIDIA's
     * shuffles (no PTX streaming hint), on the sub-group variants, several sub-groups a
     * work-group. Without shuffles, the strip family on local memory. */
    d.subgroup_width = 16, d.subgroup_shuffle = 1;
    CHECK_OK(choose_stats(&d, 8, 0, 0.0, 1000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 16 && p.reduce == CMRSCL_REDUCE_SUBGROUP &&
          p.warp == 16 && p.work_group_size == 128 && p.cache_hint == CMRSCL_CACHE_HINT_OFF &&
          test_contains(p.build_options, "-DREDUCE=3") &&
          test_contains(p.build_options, "-DREQD_SUBGROUP=0"));
    CHECK_OK(choose_stats(&d, 3, 0.6, 0.33, 1000, &p)); /* short scattered rows */
    CHECK(p.kernel == CMRSCL_KERNEL_SEGMENT && p.reduce == CMRSCL_REDUCE_SUBGROUP && p.warp == 16 &&
          p.lane_entries == 1 && p.cache_hint == CMRSCL_CACHE_HINT_OFF);
    /* The segment family's warps part ways: where sub-groups cannot (tied together, PoCL
     * 5), one sub-group a work-group; where they can, several. */
    CHECK(p.work_group_size == 16);
    d.subgroup_apart = 1;
    CHECK_OK(choose_stats(&d, 3, 0.6, 0.33, 1000, &p));
    CHECK(p.reduce == CMRSCL_REDUCE_SUBGROUP && p.warp == 16 && p.work_group_size == 128);
    d.subgroup_widths = 8 | 16 | 64; /* kernels can be fixed to these */
    o = (cmrscl_options){0};
    o.warp = 64;
    CHECK_OK(choose_stats(&d, 3, 0.6, 0.33, 1000, &p));
    CHECK(p.warp == 16 && test_contains(p.build_options, "-DREQD_SUBGROUP=16"));
    CHECK_OK(choose(&d, CMRSCL_FLOAT, 10, &o, &p));
    CHECK(p.reduce == CMRSCL_REDUCE_SUBGROUP && p.warp == 64 &&
          test_contains(p.build_options, "-DREQD_SUBGROUP=64"));
    o.warp = 32; /* not a width of this device: the local variant */
    CHECK_OK(choose(&d, CMRSCL_FLOAT, 10, &o, &p));
    CHECK(p.reduce == CMRSCL_REDUCE_LOCAL && p.warp == 32);
    o.reduce = CMRSCL_REDUCE_SUBGROUP;
    CHECK_STATUS(choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_UNSUPPORTED);
    CHECK(test_contains(cmrscl_last_error(), "sub-group width"));
    d.subgroup_widths = 0;
    d.subgroup_shuffle = 0;
    CHECK_OK(choose_stats(&d, 8, 0, 0.0, 1000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.reduce == CMRSCL_REDUCE_LOCAL &&
          test_contains(p.plan_reason, "no warp shuffles or sub-groups"));
    CHECK_OK(choose_stats(&d, 300, 0, 0.0, 1000, &p)); /* long rows: a warp per row */
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 1 && p.reduce == CMRSCL_REDUCE_LOCAL);
    /* A work-group the user sized otherwise: not sub-groups, no error (PoCL 5: sub-groups of
     * 64 lanes, a group of 8 given). */
    d.subgroup_width = 64, d.subgroup_shuffle = 1;
    cmrscl_options wg = {.kernel = CMRSCL_KERNEL_STRIP, .height = 4, .work_group_size = 8};
    d.warp_width = 8;
    CHECK_OK(choose(&d, CMRSCL_FLOAT, 10, &wg, &p));
    CHECK(p.reduce == CMRSCL_REDUCE_LOCAL && p.warp == 8 && p.work_group_size == 8);
}

/* CPUs: the walk, or Algorithm 1 on sub-groups. */
static void test_cpu(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    d.type = CL_DEVICE_TYPE_CPU; /* without sub-groups the walk: test_plan.c */
    /* A CPU with sub-groups that part ways (Intel's): rows of 6 entries and more take
     * Algorithm 1 on sub-groups of 8 on matrices up to 2^23 entries or with irregular rows
     * (long rows: CSR-vector on sub-groups of 4); shorter rows, and larger regular matrices,
     * the walk. */
    d.subgroup_width = 16, d.subgroup_widths = 4 | 8 | 16 | 32 | 64, d.subgroup_shuffle = 1;
    d.subgroup_apart = 1;
    CHECK_OK(choose_stats(&d, 7, 0.1, 0.0, 1000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 8 && p.warp == 8 &&
          p.reduce == CMRSCL_REDUCE_SUBGROUP &&
          test_contains(p.build_options, "-DREQD_SUBGROUP=8"));
    CHECK_OK(choose_rows(&d, 10000, 300, 0.1, 0.0, 1000, &p)); /* long rows: CPU_VECTOR_LANES */
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 1 && p.warp == 4);
    CHECK_OK(choose_stats(&d, 4, 0.1, 0.0, 1000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_SEGMENT && p.warp == 1 && p.reduce == CMRSCL_REDUCE_LOCAL);
    CHECK_OK(choose_rows(&d, 2 << 20, 8, 0.3, 0.3, 1000, &p)); /* 16M regular entries */
    CHECK(p.kernel == CMRSCL_KERNEL_SEGMENT && test_contains(p.plan_reason, "many regular"));
    CHECK_OK(choose_rows(&d, 2 << 20, 8, 1.5, 0.3, 1000, &p)); /* ... irregular: R-MAT */
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.reduce == CMRSCL_REDUCE_SUBGROUP &&
          test_contains(p.plan_reason, "irregular"));
    cmrscl_options local = {.reduce = CMRSCL_REDUCE_LOCAL}; /* the rule's lanes are not kept */
    plan_matrix rows7 = {1 << 20, 1000, 7 << 20, NULL, {7, 0.1, 14, 0, 0.0}, NULL, NULL,
                         false,   NULL, NULL,    NULL};
    CHECK_OK(cmrs_plan_choose(&d, CMRSCL_FLOAT, &rows7, &local, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.reduce == CMRSCL_REDUCE_LOCAL && p.warp == 32);
    d.subgroup_apart = 0; /* tied together (PoCL 5): from mu 15 */
    CHECK_OK(choose_stats(&d, 7, 0.1, 0.0, 1000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_SEGMENT && p.warp == 1 && p.reduce == CMRSCL_REDUCE_LOCAL);
    CHECK_OK(choose_rows(&d, 100000, 26.5, 0.1, 0.0, 100000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 8 && p.reduce == CMRSCL_REDUCE_SUBGROUP);
    d.subgroup_width = 0, d.subgroup_widths = 0, d.subgroup_shuffle = 0;
}

/* The cache the device reports (or NVIDIA's table gives) decides what stays in it: few rows
 * of 1.6M entries (13 MB in float) fit 50 MB, not 8 MB. */
static void test_cache_from_device(void)
{
    cmrscl_device_info d = fake_gpu();
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(choose_rows(&d, 400000, 4, 0.2, 0.01, 400000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 8 &&
          p.cache_hint == CMRSCL_CACHE_HINT_OFF);
    d.cache_bytes = 8u << 20;
    CHECK_OK(choose_rows(&d, 400000, 4, 0.2, 0.01, 400000, &p));
    CHECK(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 8 &&
          p.cache_hint == CMRSCL_CACHE_HINT_STREAM);
}

/* Narrow columns (host/format/cmrs_narrow.c): slices take 16-bit steps, strips offsets beyond
 * the cache, where they fit beside row and dictionary bits (stencil7:40: 11), segments none;
 * slices' longer steps take jump words where these save enough bytes, and wherever asked. */
static void test_narrow_columns(void)
{
    static const int kernels[3] = {CMRSCL_KERNEL_SLICE, CMRSCL_KERNEL_STRIP, CMRSCL_KERNEL_SEGMENT};
    static const struct {
        const char *spec;
        int bits[2]; /* slices, strips; segments 32 */
        const char *why[2];
    } cases[] = {
        {"stencil7:40", {16, 32}, {"steps (the largest 1600)", "3215 columns, above 2046"}},
        {"stencil7:20", {16, 16}, {"steps (the largest 400)", "offsets (the largest 815)"}},
        {"fem:12:3", {16, 16}, {"columns: 16-bit steps", "columns: 16-bit offsets"}},
        {"dense:300", {16, 16}, {"16-bit steps", "16-bit offsets (the largest 299)"}},
        /* steps past 16 bits: jump words only where they are few beside the entries
         * (test_holes.c takes them), always asked for */
        {"random:100000:4", {32, 32}, {"an entry, above 0.125", "an offset of"}},
        {"perm:200000", {32, 32}, {"an entry, above 0.125", "above"}}};
    cmrscl_device_info d = fake_gpu();
    d.cache_bytes = 1 << 16;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cmrscl_csr a;
        CHECK_OK(cmrscl_csr_generate(cases[i].spec, &a));
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        for (int k = 0; k < 3; ++k) {
            cmrscl_options o = {.kernel = (cmrscl_kernel)kernels[k]};
            int bits = k < 2 ? cases[i].bits[k] : 32;
            CHECK_OK(cmrscl_plan(&d, CMRSCL_FLOAT, &a, &o, &p));
            CHECK_MSG(p.column_bits == bits &&
                          (k == 2 || test_contains(p.plan_reason, cases[i].why[k])) &&
                          test_contains(p.build_options, "-DCOLUMN_BITS=16") == (bits == 16),
                      "%s, kernel %d: column bits %d (%s)", cases[i].spec, (int)o.kernel,
                      p.column_bits, p.plan_reason);
            o.column_bits = 16; /* asked for, slices take jump words wherever they reach */
            CHECK_STATUS(cmrscl_plan(&d, CMRSCL_FLOAT, &a, &o, &p),
                         bits == 16 || k == 0 ? CMRSCL_OK : CMRSCL_ERROR_INVALID_ARGUMENT);
            CHECK_MSG(k != 0 || p.column_bits == 16, "%s: slices asked for 16-bit columns: %d",
                      cases[i].spec, p.column_bits);
        }
        cmrscl_options o = {.kernel = CMRSCL_KERNEL_STRIP};
        for (int unknown = 0; unknown < 2; ++unknown) { /* an H100's L2 holds them; no size */
            d.cache_bytes = unknown ? 0 : 50u << 20;
            CHECK_OK(cmrscl_plan(&d, CMRSCL_FLOAT, &a, &o, &p));
            CHECK(p.column_bits == 32 &&
                  test_contains(p.plan_reason, unknown ? "reports no cache size" : "fits the"));
        }
        d.cache_bytes = 1 << 16;
        cmrscl_csr_free(&a);
    }
}

/* Implied columns (cmrs_narrow.c): strips of one row whose columns are one run store no column
 * word - taken by the automatic plan under the narrow offsets' rule (beyond the cache), refused
 * with the reason where they do not fit. */
static void test_implied_columns(void)
{
    cmrscl_device_info d = fake_gpu();
    d.cache_bytes = 1 << 16;
    cmrscl_csr a, s;
    CHECK_OK(cmrscl_csr_generate("dense:300", &a));
    CHECK_OK(cmrscl_csr_generate("stencil7:20", &s));
    cmrscl_options o = {.kernel = CMRSCL_KERNEL_STRIP, .height = 1};
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_plan(&d, CMRSCL_FLOAT, &a, &o, &p));
    CHECK_MSG(p.column_bits == 0 && test_contains(p.plan_reason, "columns implied") &&
                  test_contains(p.build_options, "-DCOLUMN_BITS=0") &&
                  p.bytes_per_entry_matrix < 4.1,
              "dense:300 HEIGHT 1: column bits %d, %.2f bytes an entry (%s)", p.column_bits,
              p.bytes_per_entry_matrix, p.plan_reason);
    d.cache_bytes = 50u << 20; /* cache-resident: 32-bit words, as narrow offsets */
    CHECK_OK(cmrscl_plan(&d, CMRSCL_FLOAT, &a, &o, &p));
    CHECK(p.column_bits == 32);
    o.column_bits = CMRSCL_COLUMNS_IMPLIED; /* asked for: taken wherever they fit */
    CHECK_OK(cmrscl_plan(&d, CMRSCL_FLOAT, &a, &o, &p));
    CHECK(p.column_bits == 0);
    /* one value: a dictionary of one, no index bits - no array an entry at all */
    for (int64_t k = 0; k < a.nnz; ++k)
        a.values[k] = 0.5;
    CHECK_OK(cmrscl_plan(&d, CMRSCL_DOUBLE, &a, &o, &p));
    CHECK_MSG(p.column_bits == 0 && p.values == CMRSCL_VALUES_DICT && p.dict_bits == 0 &&
                  p.bytes_per_entry_matrix < 0.1,
              "one value: %.2f bytes an entry (%s)", p.bytes_per_entry_matrix, p.plan_reason);
    static const struct {
        const char *why;
        int height, kernel, values;
        bool stencil;
    } refused[] = {{"strips of one row", 2, CMRSCL_KERNEL_STRIP, 0, false},
                   {"slice and strip kernels", 1, CMRSCL_KERNEL_SEGMENT, 0, false},
                   {"one ascending run", 1, CMRSCL_KERNEL_STRIP, 2, true},
                   {"without a dictionary index", 1, CMRSCL_KERNEL_STRIP, 1, false}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        for (int64_t k = 0; k < a.nnz; ++k) /* two values for the dictionary's case */
            a.values[k] = refused[i].values == 1 ? (double)(k % 2) : 1.0 + (double)k;
        o.height = refused[i].height, o.kernel = (cmrscl_kernel)refused[i].kernel;
        o.values = refused[i].values == 1   ? CMRSCL_VALUES_DICT /* 2: the stencil's plain */
                   : refused[i].values == 2 ? CMRSCL_VALUES_PLAIN
                                            : CMRSCL_VALUES_AUTO;
        CHECK_STATUS(cmrscl_plan(&d, CMRSCL_FLOAT, refused[i].stencil ? &s : &a, &o, &p),
                     CMRSCL_ERROR_INVALID_ARGUMENT);
        CHECK_MSG(test_contains(cmrscl_last_error(), refused[i].why), "\"%s\" lacks \"%s\"",
                  cmrscl_last_error(), refused[i].why);
    }
    o = (cmrscl_options){.column_bits = -2};
    CHECK_STATUS(cmrscl_plan(&d, CMRSCL_FLOAT, &a, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o = (cmrscl_options){.vectors = -1};
    CHECK_STATUS(cmrscl_plan(&d, CMRSCL_FLOAT, &a, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "vectors -1"));
    cmrscl_csr_free(&a), cmrscl_csr_free(&s);
}

/* The block product's launches: 128 bytes of X a row in the slice layout (16 doubles, 32
 * floats), 64 vectors in the others (cmrs_plan_block_vectors); a plan for blocks on a GPU. */
static void test_block_vectors(void)
{
    cmrscl_device_info d = fake_gpu();
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil7:12", &a));
    static const int kernels[3] = {CMRSCL_KERNEL_SLICE, CMRSCL_KERNEL_STRIP, CMRSCL_KERNEL_SEGMENT};
    for (int k = 0; k < 3; ++k)
        for (int dbl = 0; dbl < 2; ++dbl) {
            cmrscl_options o = {.kernel = (cmrscl_kernel)kernels[k]};
            cmrscl_params p = CMRSCL_PARAMS_INIT;
            CHECK_OK(cmrscl_plan(&d, dbl ? CMRSCL_DOUBLE : CMRSCL_FLOAT, &a, &o, &p));
            int want = k > 0 ? 64 : dbl ? 16 : 32;
            CHECK_MSG(p.block_vectors == want, "kernel %d, %s: %d vectors a launch, not %d",
                      (int)p.kernel, dbl ? "double" : "float", p.block_vectors, want);
        }
    cmrscl_csr_free(&a);
    /* test_spmm's matrix planned for blocks has rows enough for an H100 to take the rule */
    CHECK_OK(cmrscl_csr_generate("random:600000:3", &a));
    cmrscl_options blocks = {.vectors = 32};
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_plan(&d, CMRSCL_DOUBLE, &a, &blocks, &p));
    CHECK_MSG(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 8 &&
                  test_contains(p.plan_reason, "for blocks of 32 vectors"),
              "%s", p.plan_reason);
    cmrscl_csr_free(&a);
    /* a stencil's slices are streamed past L2 but for blocks in float (double: not
     * measured without the hint, kept) */
    CHECK_OK(cmrscl_csr_generate("stencil7:50", &a));
    for (int v = 0; v < 4; ++v) {
        cmrscl_options o = {.vectors = v / 2 ? 32 : 0};
        bool dbl = v % 2, off = o.vectors && !dbl;
        CHECK_OK(cmrscl_plan(&d, dbl ? CMRSCL_DOUBLE : CMRSCL_FLOAT, &a, &o, &p));
        CHECK_MSG(
            p.kernel == CMRSCL_KERNEL_SLICE &&
                p.cache_hint == (off ? CMRSCL_CACHE_HINT_OFF : CMRSCL_CACHE_HINT_STREAM) &&
                test_contains(p.plan_reason, off ? "not streamed (blocks of 32" : "streamed past"),
            "%s, %d vectors: %s", dbl ? "double" : "float", o.vectors, p.plan_reason);
    }
    cmrscl_csr_free(&a);
}

/* The longest -D string a plan makes - OpenCL C 3.0 sub-groups of a fixed width, narrow
 * strips with their row bits, a dictionary, 64-bit indices, double - is whole, its last
 * definition included, with room to spare: a cut string built kernels without
 * -DNARROW_ROW_BITS on Intel's runtime (session 19). */
/* The last tile's combine (CMRSCL_COMBINE_LAST) where a device makes one work-group's stores
 * seen by another's within a launch: taken when asked on NVIDIA (with PTX's fence) and on CPUs,
 * never chosen by the plan (the second kernel measured as fast), refused on other GPUs and on
 * a simulator that calls itself every type (Oclgrind) - whether a strip is split or not. Strips of
 * 6000 entries a million rows long, in tiles of 256. */
static void test_last_combine(void)
{
    int64_t longest[STRIP_HEIGHT_LOGS];
    for (int k = 0; k < STRIP_HEIGHT_LOGS; ++k)
        longest[k] = 6000 + ((int64_t)6 << k);
    plan_matrix many = {.rows = 1 << 20, .cols = 1 << 20, .nnz = 6 << 20, .longest_strip = longest};
    cmrs_analyze_rows(0, 0, NULL, NULL, &many.stats); /* no rows read: the rule's defaults */
    many.stats.mu = 6;
    cmrscl_options o = {.tile = 256};
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    cmrscl_device_info nvidia = fake_gpu(), cpu = fake_device(1024 * 1024, 64, 32 * 1024);
    cpu.type = CL_DEVICE_TYPE_CPU;
    cmrscl_device_info other = nvidia, sim = cpu;
    other.warp_shuffle = 0;
    sim.type = CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR;
    const cmrscl_device_info *takes[] = {&nvidia, &cpu}, *refuse[] = {&other, &sim};
    for (int i = 0; i < 2; ++i) {
        o.combine = CMRSCL_COMBINE_AUTO;
        CHECK_OK(cmrs_plan_choose(takes[i], CMRSCL_FLOAT, &many, &o, &p));
        CHECK(p.tile > 0 && p.combine == CMRSCL_COMBINE_KERNEL &&
              test_contains(p.build_options, "-DLAST_COMBINE=0"));
        o.combine = CMRSCL_COMBINE_LAST;
        CHECK_OK(cmrs_plan_choose(takes[i], CMRSCL_FLOAT, &many, &o, &p));
        CHECK(p.tile > 0 && p.combine == CMRSCL_COMBINE_LAST &&
              test_contains(p.build_options, "-DLAST_COMBINE=1") &&
              test_contains(p.build_options, "-DFENCE_PTX=1") == (i == 0));
        CHECK(cmrs_plan_choose(refuse[i], CMRSCL_FLOAT, &many, &o, &p) ==
                  CMRSCL_ERROR_UNSUPPORTED &&
              test_contains(cmrscl_last_error(), "combine last"));
        cmrscl_options whole = o; /* refused whatever the matrix: nothing split either */
        whole.tile = -1;
        CHECK(cmrs_plan_choose(refuse[i], CMRSCL_FLOAT, &many, &whole, &p) ==
              CMRSCL_ERROR_UNSUPPORTED);
    }
}

static void test_longest_options(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    d.subgroup_width = 64, d.subgroup_shuffle = 1, d.subgroup_widths = 8 | 16 | 32 | 64;
    d.subgroup_cl_c = 30, d.subgroup_relative = 1, d.compute_units = 132;
    d.cache_bytes = 1 << 16;
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil7:20", &a));
    cmrscl_options o = {.kernel = CMRSCL_KERNEL_STRIP,
                        .height = 32,
                        .warp = 64,
                        .work_group_size = 128,
                        .reduce = CMRSCL_REDUCE_SUBGROUP,
                        .column_bits = 16,
                        .index_bits = 64};
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_plan(&d, CMRSCL_DOUBLE, &a, &o, &p));
    char last[64];
    snprintf(last, sizeof last, "-DNARROW_ROW_BITS=%d", plan_narrow_row_bits(&p));
    size_t n = strlen(p.build_options);
    CHECK_MSG(p.values == CMRSCL_VALUES_DICT && p.index_bits == 64 &&
                  test_contains(p.build_options, "-cl-std=CL3.0") &&
                  test_contains(p.build_options, "-DREQD_SUBGROUP=64") && n >= strlen(last) &&
                  !strcmp(p.build_options + n - strlen(last), last) &&
                  n + 64 < sizeof p.build_options,
              "%zu characters of %zu: %s", n, sizeof p.build_options, p.build_options);
    cmrscl_csr_free(&a);
}

/* CPUs take slices where the host's arrays are there (cmrscl_plan: they are) - but not where
 * rows hold one entry each, a permutation's (CPU_SLICE_MIN_ROW): the walk. */
static void test_cpu_slices(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    d.type = CL_DEVICE_TYPE_CPU;
    static const struct {
        const char *spec;
        bool slices;
    } cases[] = {{"random:2000:2", true}, {"stencil7:10", true}, {"perm:2000", false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cmrscl_csr a;
        CHECK_OK(cmrscl_csr_generate(cases[i].spec, &a));
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        CHECK_OK(cmrscl_plan(&d, CMRSCL_FLOAT, &a, NULL, &p));
        CHECK_MSG((p.kernel == CMRSCL_KERNEL_SLICE) == cases[i].slices, "%s on a CPU: %s",
                  cases[i].spec, p.plan_reason);
        cmrscl_csr_free(&a);
    }
}

/* A sub-group plan comes with the options of the plan to take where the compiler gives its
 * kernel another width (exec/matrix.c confirms it once built): the same plan on local memory,
 * saying why - none where the user asked for sub-groups, and none where the plan takes no
 * sub-groups. */
static void test_subgroup_fallback(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    d.subgroup_width = 16, d.subgroup_shuffle = 1;
    plan_matrix rows8 = {1 << 16, 1 << 16, 8 << 16, NULL, {8, 0.1, 16, 0, 0.0}, NULL, NULL,
                         false,   NULL,    NULL,    NULL};
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    cmrscl_options fallback;
    CHECK_OK(cmrs_plan_for_matrix(&d, CMRSCL_FLOAT, &rows8, NULL, &p, &fallback));
    CHECK(p.reduce == CMRSCL_REDUCE_SUBGROUP && fallback.reduce == CMRSCL_REDUCE_LOCAL);
    cmrscl_kernel kernel = p.kernel;
    int height = p.height;
    CHECK_OK(cmrs_plan_fallback(&d, CMRSCL_FLOAT, &rows8, &fallback, "16 lanes, not 8", &p));
    CHECK(p.reduce == CMRSCL_REDUCE_LOCAL && p.kernel == kernel && p.height == height &&
          test_contains(p.build_options, "-DREDUCE=1") &&
          test_contains(p.plan_reason, "; local reduction: 16 lanes, not 8") &&
          !strcmp(p.height_source, "matrix rule") && p.struct_size == sizeof p);
    cmrscl_options bad = fallback; /* a fallback that fails: the planner's error */
    bad.height = CMRSCL_MAX_HEIGHT + 1;
    CHECK_STATUS(cmrs_plan_fallback(&d, CMRSCL_FLOAT, &rows8, &bad, "why", &p),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "height"));
    cmrscl_options asked = {.reduce = CMRSCL_REDUCE_SUBGROUP};
    CHECK_OK(cmrs_plan_for_matrix(&d, CMRSCL_FLOAT, &rows8, &asked, &p, &fallback));
    CHECK(p.reduce == CMRSCL_REDUCE_SUBGROUP && fallback.reduce == CMRSCL_REDUCE_AUTO);
    d.subgroup_width = 0, d.subgroup_shuffle = 0;
    CHECK_OK(cmrs_plan_for_matrix(&d, CMRSCL_FLOAT, &rows8, NULL, &p, &fallback));
    CHECK(p.reduce != CMRSCL_REDUCE_SUBGROUP && fallback.reduce == CMRSCL_REDUCE_AUTO);
}

/* A CPU whose sub-groups part ways (Intel's) takes CSR-vector on sub-groups of 4 for long rows
 * (CPU_VECTOR_ROWS: from 128 entries a row, or from 36 where a slice's rows differ so much in
 * length that it stores 1.5 positions an entry), slices for rows of about equal length. */
static void test_cpu_long_rows(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    d.type = CL_DEVICE_TYPE_CPU;
    d.subgroup_width = 16, d.subgroup_widths = 4 | 8 | 16 | 32 | 64, d.subgroup_shuffle = 1;
    d.subgroup_apart = 1;
    static const struct {
        const char *spec;
        bool vector;
    } cases[] = {{"dense:300", true}, {"random:3000:40", true}, {"random:3000:32", false},
                 {"fem:6:4", false},  {"stencil27:12", false},  {"random:3000:8", false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cmrscl_csr a;
        CHECK_OK(cmrscl_csr_generate(cases[i].spec, &a));
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        CHECK_OK(cmrscl_plan(&d, CMRSCL_FLOAT, &a, NULL, &p));
        bool vector = p.kernel == CMRSCL_KERNEL_STRIP && p.height == 1 &&
                      p.reduce == CMRSCL_REDUCE_SUBGROUP && p.warp == 4;
        CHECK_MSG(vector == cases[i].vector && (vector || p.kernel == CMRSCL_KERNEL_SLICE),
                  "%s on a CPU with sub-groups apart: %s", cases[i].spec, p.plan_reason);
        d.subgroup_apart = 0; /* tied together (PoCL 5): slices, as measured nowhere else */
        CHECK_OK(cmrscl_plan(&d, CMRSCL_FLOAT, &a, NULL, &p));
        CHECK_MSG(p.kernel == CMRSCL_KERNEL_SLICE, "%s on a CPU with tied sub-groups: %s",
                  cases[i].spec, p.plan_reason);
        d.subgroup_apart = 1;
        cmrscl_csr_free(&a);
    }
}

/* Where Algorithm 1 on sub-groups that part ways pays, slices only up to
 * CPU_SLICE_HOLES_APART positions an entry: skewed rows whose slices store about 3 take
 * HEIGHT 8 on sub-groups of 8 there, and slices on a CPU without sub-groups. */
static void test_cpu_slice_holes_apart(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    d.type = CL_DEVICE_TYPE_CPU;
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("skewed:4000:8:40:60", &a));
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_plan(&d, CMRSCL_FLOAT, &a, NULL, &p));
    CHECK_MSG(p.kernel == CMRSCL_KERNEL_SLICE && p.stored_entries > 2.5 * (double)p.nnz &&
                  p.stored_entries < 3.0 * (double)p.nnz,
              "skewed:4000:8:40:60 without sub-groups: %s", p.plan_reason);
    d.subgroup_width = 16, d.subgroup_widths = 4 | 8 | 16 | 32 | 64, d.subgroup_shuffle = 1;
    d.subgroup_apart = 1;
    CHECK_OK(cmrscl_plan(&d, CMRSCL_FLOAT, &a, NULL, &p));
    CHECK_MSG(p.kernel == CMRSCL_KERNEL_STRIP && p.height == 8 && p.warp == 8 &&
                  p.reduce == CMRSCL_REDUCE_SUBGROUP,
              "skewed:4000:8:40:60 on sub-groups apart: %s", p.plan_reason);
    cmrscl_csr_free(&a);
}

int main(void)
{
    test_cpu_long_rows();
    test_cpu_slice_holes_apart();
    test_subgroup_fallback();
    test_subgroup_gpu();
    test_cpu();
    test_cpu_slices();
    test_cache_from_device();
    test_narrow_columns();
    test_implied_columns();
    test_block_vectors();
    test_last_combine();
    test_longest_options();
    return test_finish("plan_devices");
}
