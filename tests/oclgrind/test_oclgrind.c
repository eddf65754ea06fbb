/* test_oclgrind.c - every kernel variant the library builds for a non-NVIDIA device, meant to
 * run under Oclgrind (tests/oclgrind/CMakeLists.txt adds the checking flags and turns any
 * Oclgrind diagnostic into a failure): both strip orders, HEIGHT 1..16 (and larger ones in
 * the unpacked layout), work-groups of one warp and of several, on small awkward matrices.
 * Each product is checked against the CPU double reference, with y poisoned by NaN for
 * beta = 0 and a beta != 0 case. Vectors are device buffers of exactly cols and rows
 * elements, so Oclgrind sees any access past either end. Oclgrind's device reports a preferred
 * work-group multiple of 1, so the library's probe finds warp 1; warps 8 and 32 are forced
 * through cmrscl_options.warp. The packed strip family with warps of 8 asks for narrow
 * columns (16-bit offsets) wherever they fit; elsewhere 32-bit words (Oclgrind reports no
 * cache size, so the plan takes no narrow strips by itself).
 * Usage: test_oclgrind float|double packed|unpacked WARP rows|columns|both [MIN-MAX]
 *          (MIN-MAX: only the heights in that range, so a variant can be split in parts)
 *        test_oclgrind segment|split|group float|double [WARP [TILE [MIN-MAX]]]
 *          (the segment family, its warp primitives emulated with barriers, whole or split
 *           into tiles; the strip family's split path, tiles of 3 entries by default, summed
 *           by the second kernel, or by their work-group: group)
 *        test_oclgrind refused   (the shuffle and sub-group variants are refused on Oclgrind,
 *          with a message naming what is missing)
 *        test_oclgrind convert float|double   (cmrscl_matrix_create_from_cl and the values
 *          updates: cl/convert.cl under the checks, the results against the host path)
 *        test_oclgrind index64 ARGS...   (any of the above with 64-bit entry indices forced:
 *          StripPtr, the tiles' first entries, the loops, the permutation of updates)
 *        test_oclgrind modulo float|double WARP MODULO   (the MODULO kernel: its steps
 *          between barriers race-free, holes never read x; HEIGHT 1, 3 and 16, both orders,
 *          the unpacked layout at HEIGHT 3)
 *        test_oclgrind slice float|double   (the slice kernel: holes never read x; HEIGHT 1,
 *          4 and 32)
 *        test_oclgrind solve float|double   (the solvers: the products with the epilogue of dot
 *          products and the diagonal on every family, CG with Jacobi, BiCGStab, GMRES;
 *          oclgrind_solve.c)
 *        test_oclgrind spmm float|double   (the block product, cl/cmrs_spmm.cl: the slice
 *          row walk, the strip and segment families' positions walk with their slots, long
 *          strips in tiles with cmrs_spmm_combine; blocks of 3 vectors column-major and of 8
 *          and 24 row-major - one, two and four vectors a load, two runs a lane in slices,
 *          in float with a second run partly past the block: 6 runs on 4 lanes) */
#include "oclgrind_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int narrow_plans = 0; /* strips with narrow columns (run_matrices) */

typedef struct variant {
    cmrscl_kernel kernel; /* strip, or segment (its warp primitives emulated with barriers) */
    int tile;             /* -1: no split; > 0: long strips cut into tiles of this many */
    cmrscl_precision precision;
    cmrscl_layout layout;
    int warp;
    int orders;                 /* bit 0: row order, bit 1: column order */
    int min_height, max_height; /* the heights to run, within 1..16 and the unpacked extras */
    cmrscl_combine combine;     /* split: where the tiles are summed */
} variant;

/* One product y = alpha*A*x + beta*y on exact-size device buffers, checked against the
 * CPU double reference. */
static void check_product(const env *e, cmrscl_matrix m, const cmrscl_csr *ref_a,
                          cmrscl_precision prec, double alpha, double beta, const char *what)
{
    size_t rows = (size_t)ref_a->rows, cols = (size_t)ref_a->cols;
    size_t vs = cmrscl_precision_size(prec);
    double *x = malloc(sizeof(double) * (cols + 1)), *y0 = malloc(sizeof(double) * (rows + 1));
    double *y = malloc(sizeof(double) * (rows + 1));
    void *xd = malloc(vs * (cols + 1)), *yd = malloc(vs * (rows + 1));
    for (size_t j = 0; j < cols; ++j)
        x[j] = put(xd, prec, j, test_uniform(-1, 1));
    /* beta == 0: NaN in y shows a row left unwritten, or one read despite beta == 0. */
    for (size_t i = 0; i < rows; ++i)
        y0[i] = put(yd, prec, i, beta == 0.0 ? NAN : test_uniform(-1, 1));
    cl_mem xb = exact_buffer(e, CL_MEM_READ_ONLY, vs * cols, xd);
    cl_mem yb = exact_buffer(e, CL_MEM_READ_WRITE, vs * rows, yd);
    CHECK_OK(cmrscl_spmv(m, alpha, xb, beta, yb, NULL, 0, NULL, NULL));
    if (yb) {
        cl_int err = clEnqueueReadBuffer(e->queue, yb, CL_TRUE, 0, vs * rows, yd, 0, NULL, NULL);
        CHECK_MSG(err == CL_SUCCESS, "%s: clEnqueueReadBuffer failed (%d)", what, (int)err);
    }
    for (size_t i = 0; i < rows; ++i)
        y[i] = test_value_at(yd, prec, (int64_t)i);
    double ratio = INFINITY;
    CHECK_OK(cmrscl_csr_spmv_check(ref_a, alpha, x, beta, y0, y,
                                   prec == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, NULL, &ratio));
    CHECK_MSG(ratio <= 1.0, "%s alpha %g beta %g: error %.3g x the rounding bound", what, alpha,
              beta, ratio);
    if (xb)
        clReleaseMemObject(xb);
    if (yb)
        clReleaseMemObject(yb);
    free(x), free(y0), free(y), free(xd), free(yd);
}

/* Every matrix with one set of parameters; returns the number of products run. */
static int run_matrices(const env *e, const variant *v, const cmrscl_options *opt)
{
    int products = 0;
    for (int i = 0; i < MATRIX_COUNT; ++i) {
        cmrscl_csr a;
        const char *name = build_matrix(i, &a);
        cmrscl_csr ref_a = test_csr_rounded(&a, v->precision);
        char what[200];
        snprintf(what, sizeof what, "%s, %s, height %d, warp %d, work-group %d, %s order, tile %d",
                 name,
                 opt->kernel == CMRSCL_KERNEL_SEGMENT  ? "segment"
                 : opt->kernel == CMRSCL_KERNEL_MODULO ? "modulo"
                 : opt->kernel == CMRSCL_KERNEL_SLICE  ? "slice"
                                                       : "strip",
                 opt->height, opt->warp, opt->work_group_size,
                 opt->order == CMRSCL_ORDER_ROWS ? "row" : "column", opt->tile);
        /* packed strips with warps of 8: implied columns (one row a strip, its columns one
         * run) or else narrow columns (16-bit offsets) wherever they fit */
        cmrscl_options o = *opt;
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        if (o.kernel == CMRSCL_KERNEL_STRIP && o.warp == 8 && o.layout == CMRSCL_LAYOUT_PACKED &&
            !o.column_bits) {
            o.column_bits = CMRSCL_COLUMNS_IMPLIED;
            if (cmrscl_plan(&e->dev, v->precision, &a, &o, &p) != CMRSCL_OK)
                o.column_bits = 16;
            bool fits = cmrscl_plan(&e->dev, v->precision, &a, &o, &p) == CMRSCL_OK;
            o.column_bits = fits ? o.column_bits : 32;
            narrow_plans += fits;
        }
        cmrscl_matrix m = NULL;
        CHECK_OK(cmrscl_matrix_create_from_csr(e->ctx, v->precision, &a, &o, &m));
        if (m) {
            CHECK_OK(cmrscl_matrix_params(m, &p));
            CHECK_MSG(p.height == opt->height && p.warp == opt->warp && p.kernel == opt->kernel &&
                          p.work_group_size == opt->work_group_size && p.layout == opt->layout &&
                          p.order == opt->order && p.reduce == CMRSCL_REDUCE_LOCAL &&
                          p.index_bits == (opt->index_bits ? opt->index_bits : 32) &&
                          (!o.column_bits || p.column_bits == o.column_bits ||
                           (o.column_bits == CMRSCL_COLUMNS_IMPLIED && !p.column_bits)),
                      "%s: parameters not as asked (%s)", what, p.build_options);
            check_product(e, m, &ref_a, v->precision, 1.0, 0.0, what);
            check_product(e, m, &ref_a, v->precision, -1.5, 0.5, what);
            products += 2;
        }
        cmrscl_matrix_free(m);
        cmrscl_csr_free(&ref_a);
        cmrscl_csr_free(&a);
    }
    return products;
}

/* The device conversion (cl/convert.cl) and the values-only updates, from exact-size
 * buffers: cmrscl_matrix_create_from_cl must give the host path's arrays and right
 * products; new values from the host and from a device buffer (through the permutation
 * built on the first update) must give the arrays of a fresh host create. */
static int run_convert(const env *e, cmrscl_precision prec)
{
    static const struct {
        cmrscl_kernel kernel;
        int height;
        cmrscl_layout layout;
        cmrscl_order order;
        int tile;
    } plans[] = {
        {CMRSCL_KERNEL_STRIP, 4, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_COLUMNS, -1},
        {CMRSCL_KERNEL_STRIP, 3, CMRSCL_LAYOUT_UNPACKED, CMRSCL_ORDER_COLUMNS, 3},
        {CMRSCL_KERNEL_SEGMENT, 8, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_ROWS, -1},
    };
    size_t vs = cmrscl_precision_size(prec);
    int cases = 0;
    for (int i = 0; i < MATRIX_COUNT; ++i) {
        cmrscl_csr a, b;
        const char *name = build_matrix(i, &a);
        b = test_csr_rounded(&a, CMRSCL_DOUBLE);
        for (int64_t k = 0; k < a.nnz; ++k)
            b.values[k] = 2.0 * a.values[k] + 1.0;
        cmrscl_csr ref_a = test_csr_rounded(&a, prec), ref_b = test_csr_rounded(&b, prec);
        void *va = malloc(vs * ((size_t)a.nnz + 1)), *vb = malloc(vs * ((size_t)a.nnz + 1));
        for (int64_t k = 0; k < a.nnz; ++k)
            put(va, prec, (size_t)k, a.values[k]), put(vb, prec, (size_t)k, b.values[k]);
        int32_t *rp32 = test_row_ptr32(&a); /* the device path takes int32 row pointers */
        for (size_t c = 0; c < sizeof plans / sizeof plans[0]; ++c, ++cases) {
            cmrscl_options opt = {0};
            opt.kernel = plans[c].kernel, opt.height = plans[c].height;
            opt.layout = plans[c].layout, opt.order = plans[c].order, opt.tile = plans[c].tile;
            opt.reduce = CMRSCL_REDUCE_LOCAL;
            opt.index_bits = index_bits;
            char what[160];
            snprintf(what, sizeof what, "%s, convert, %s height %d, plan %zu, index bits %d", name,
                     cmrscl_precision_name(prec), opt.height, c, index_bits);
            cl_mem rp = exact_buffer(e, CL_MEM_READ_ONLY, 4 * ((size_t)a.rows + 1), rp32);
            cl_mem ci = exact_buffer(e, CL_MEM_READ_ONLY, 4 * (size_t)a.nnz, a.col_ind);
            cl_mem v = exact_buffer(e, CL_MEM_READ_ONLY, vs * (size_t)a.nnz, va);
            cl_mem nv = exact_buffer(e, CL_MEM_READ_ONLY, vs * (size_t)a.nnz, vb);
            cmrscl_matrix host = NULL, dev = NULL, fresh = NULL;
            CHECK_OK(cmrscl_matrix_create_from_csr(e->ctx, prec, &a, &opt, &host));
            CHECK_OK(cmrscl_matrix_create_from_cl(e->ctx, prec, a.rows, a.cols, (int32_t)a.nnz, rp,
                                                  ci, v, &opt, &dev));
            CHECK_OK(cmrscl_matrix_create_from_csr(e->ctx, prec, &b, &opt, &fresh));
            if (host && dev && fresh) {
                check_same_cmrs(host, dev, what);
                check_product(e, dev, &ref_a, prec, 1.0, 0.0, what);
                CHECK_OK(cmrscl_matrix_update_values(dev, vb, prec));
                CHECK_OK(cmrscl_matrix_update_values_cl(host, nv, prec));
                check_same_cmrs(fresh, dev, what);
                check_same_cmrs(fresh, host, what);
                check_product(e, host, &ref_b, prec, -1.5, 0.5, what);
            }
            cmrscl_matrix_free(host), cmrscl_matrix_free(dev), cmrscl_matrix_free(fresh);
            for (cl_mem *bufs[] = {&rp, &ci, &v, &nv}, **p = bufs; p < bufs + 4; ++p)
                if (**p)
                    clReleaseMemObject(**p);
        }
        free(va), free(vb), free(rp32);
        cmrscl_csr_free(&ref_a), cmrscl_csr_free(&ref_b);
        cmrscl_csr_free(&a), cmrscl_csr_free(&b);
    }
    printf("convert %s: %d matrix x plan cases (create_from_cl, both updates)\n",
           cmrscl_precision_name(prec), cases);
    return test_finish("oclgrind convert");
}

/* Several warps: 4, or fewer where that would pass 64 work-items (Oclgrind simulates each
 * one) or the device's limits; 0 when not even 2 fit. */
static int several_warps(const env *e, const variant *v, int height)
{
    uint64_t vs = cmrscl_precision_size(v->precision);
    for (int k = 4; k >= 2; k /= 2) {
        uint64_t wg = (uint64_t)k * (uint64_t)v->warp;
        if ((wg <= 64 || k == 2) && wg <= e->dev.max_work_group_size &&
            wg * (uint64_t)height * vs <= e->dev.local_mem_bytes)
            return (int)wg;
    }
    return 0;
}

/* The chosen strip orders and both work-group shapes at one height. */
static int run_height(const env *e, const variant *v, int height)
{
    /* the segment family without shuffles runs one warp per group */
    bool segment = v->kernel == CMRSCL_KERNEL_SEGMENT;
    int groups[2] = {v->warp, segment ? 0 : several_warps(e, v, height)}, products = 0;
    if (!groups[1] && !segment)
        printf("height %d: no work-group of several warps of %d fits the device's %llu bytes of "
               "local memory; one-warp groups only\n",
               height, v->warp, (unsigned long long)e->dev.local_mem_bytes);
    for (int g = 0; g < 2 && groups[g]; ++g)
        for (int k = 0; k < 2; ++k) {
            if (!(v->orders & (1 << k)))
                continue;
            cmrscl_options opt = {0};
            opt.kernel = v->kernel;
            opt.tile = v->tile;
            opt.combine = v->combine;
            /* the segment family: 1, 2 and 4 entries per lane in turn over the heights */
            opt.lane_entries = segment ? 1 << (height % 3) : 0;
            opt.height = height;
            opt.warp = v->warp;
            opt.work_group_size = groups[g];
            opt.layout = v->layout;
            opt.order = k == 0 ? CMRSCL_ORDER_ROWS : CMRSCL_ORDER_COLUMNS;
            opt.reduce = CMRSCL_REDUCE_LOCAL;
            opt.index_bits = index_bits;
            products += run_matrices(e, v, &opt);
        }
    return products;
}

/* The slice kernel (cl/cmrs_slice.cl): a lane per row, HEIGHT 1, 4 (unpacked) and 32, groups
 * of 128 work-items, with 32-bit column words and (HEIGHT 4 and 32 again) with narrow columns
 * where they fit; holes must never load x (a hole's column is far past x). */
static int run_slice(const env *e, cmrscl_precision prec)
{
    static const int heights[] = {1, 4, 32, 4, 32};
    variant v = {CMRSCL_KERNEL_SLICE, -1, prec, CMRSCL_LAYOUT_PACKED, 32, 1, 1, 32, 0};
    int products = 0;
    for (int k = 0; k < 5; ++k) {
        cmrscl_options opt = {0};
        opt.kernel = CMRSCL_KERNEL_SLICE;
        opt.height = opt.warp = heights[k];
        opt.work_group_size = 128;
        opt.layout = heights[k] == 4 ? CMRSCL_LAYOUT_UNPACKED : CMRSCL_LAYOUT_PACKED;
        opt.order = CMRSCL_ORDER_ROWS;
        opt.reduce = CMRSCL_REDUCE_LOCAL;
        opt.index_bits = index_bits;
        opt.column_bits = k < 3 ? 32 : 0; /* 0: narrow where the steps fit */
        products += run_matrices(e, &v, &opt);
    }
    printf("slice %s: %d products checked (HEIGHT 1, 4, 32; 4, 32 narrow; %d matrices)\n",
           cmrscl_precision_name(prec), products, MATRIX_COUNT);
    return test_finish("oclgrind slice");
}

/* The MODULO kernel (cl/cmrs_modulo.cl) with `modulo` slot sets, one warp per group. */
static int run_modulo(const env *e, cmrscl_precision prec, int warp, int modulo)
{
    static const int heights[] = {1, 3, 16};
    variant v = {CMRSCL_KERNEL_MODULO, -1, prec, CMRSCL_LAYOUT_PACKED, warp, 3, 1, 16, 0};
    int products = 0;
    for (int k = 0; k < 3; ++k)
        for (int order = CMRSCL_ORDER_ROWS; order <= CMRSCL_ORDER_COLUMNS; ++order) {
            cmrscl_options opt = {0};
            opt.kernel = CMRSCL_KERNEL_MODULO;
            opt.modulo = modulo;
            opt.height = heights[k];
            opt.warp = opt.work_group_size = warp;
            opt.layout = heights[k] == 3 && order == CMRSCL_ORDER_COLUMNS ? CMRSCL_LAYOUT_UNPACKED
                                                                          : CMRSCL_LAYOUT_PACKED;
            opt.order = (cmrscl_order)order;
            opt.reduce = CMRSCL_REDUCE_LOCAL;
            opt.tile = -1;
            opt.index_bits = index_bits;
            products += run_matrices(e, &v, &opt);
        }
    printf("modulo %s, warp %d, MODULO %d: %d products checked (HEIGHT 1, 3, 16, both orders, %d "
           "matrices)\n",
           cmrscl_precision_name(prec), warp, modulo, products, MATRIX_COUNT);
    return test_finish("oclgrind modulo");
}

/* The shuffle reduction needs NVIDIA's shfl.sync and the sub-group one sub-groups, which
 * Oclgrind lacks: the library must refuse both here, naming what is missing. */
static int report_refused(const env *e)
{
    cmrscl_csr a;
    test_matrix_build(4, &a); /* the paper's 5x5 */
    CHECK_MSG(!e->dev.warp_shuffle && !e->dev.subgroup_width,
              "device \"%s\" claims warp shuffles or sub-groups", e->dev.device_name);
    static const struct {
        cmrscl_reduce reduce;
        const char *missing;
    } refused[] = {{CMRSCL_REDUCE_SHUFFLE, "inline PTX"}, {CMRSCL_REDUCE_SUBGROUP, "sub-groups"}};
    for (size_t i = 0; i < 2; ++i) {
        cmrscl_options opt = {0};
        opt.reduce = refused[i].reduce;
        cmrscl_matrix m = NULL;
        CHECK_STATUS(cmrscl_matrix_create_from_csr(e->ctx, CMRSCL_FLOAT, &a, &opt, &m),
                     CMRSCL_ERROR_UNSUPPORTED);
        CHECK_MSG(test_contains(cmrscl_last_error(), refused[i].missing),
                  "the refusal does not name %s: %s", refused[i].missing, cmrscl_last_error());
        printf("library: %s\n", cmrscl_last_error());
        cmrscl_matrix_free(m);
    }
    cmrscl_csr_free(&a);
    return test_finish("oclgrind refused");
}

static bool parse_args(int argc, char **argv, variant *v)
{
    static const char *const orders[] = {"", "rows", "columns", "both"};
    v->kernel = CMRSCL_KERNEL_STRIP;
    v->tile = -1;
    v->combine = argc > 1 && !strcmp(argv[1], "group") ? CMRSCL_COMBINE_GROUP : CMRSCL_COMBINE_AUTO;
    if (argc > 1 && (!strcmp(argv[1], "segment") || !strcmp(argv[1], "split") || v->combine)) {
        if (argc < 3 || argc > 6)
            return false;
        bool segment = !strcmp(argv[1], "segment");
        v->kernel = segment ? CMRSCL_KERNEL_SEGMENT : CMRSCL_KERNEL_STRIP;
        v->tile = argc > 4 ? atoi(argv[4]) : segment ? -1 : 3;
        v->precision = !strcmp(argv[2], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
        v->layout = CMRSCL_LAYOUT_PACKED;
        v->warp = argc > 3 ? atoi(argv[3]) : 8;
        v->orders = segment ? 1 : 3;
        v->min_height = 1, v->max_height = CMRSCL_MAX_HEIGHT;
        if (argc > 5 && sscanf(argv[5], "%d-%d", &v->min_height, &v->max_height) != 2)
            return false;
        return v->warp > 0 && (v->warp & (v->warp - 1)) == 0 && v->tile != 0 &&
               v->min_height <= v->max_height;
    }
    if (argc < 5 || argc > 6 || (strcmp(argv[1], "float") && strcmp(argv[1], "double")) ||
        (strcmp(argv[2], "packed") && strcmp(argv[2], "unpacked")))
        return false;
    v->precision = !strcmp(argv[1], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
    v->layout = !strcmp(argv[2], "unpacked") ? CMRSCL_LAYOUT_UNPACKED : CMRSCL_LAYOUT_PACKED;
    v->warp = atoi(argv[3]);
    v->orders = 0;
    for (int k = 1; k <= 3; ++k)
        if (!strcmp(argv[4], orders[k]))
            v->orders = k;
    v->min_height = 1, v->max_height = CMRSCL_MAX_HEIGHT;
    if (argc > 5 && sscanf(argv[5], "%d-%d", &v->min_height, &v->max_height) != 2)
        return false;
    return v->warp > 0 && (v->warp & (v->warp - 1)) == 0 && v->orders != 0 &&
           v->min_height <= v->max_height;
}

/* HEIGHT 1..16 in both layouts and larger ones where only the unpacked layout goes, as far
 * as they lie in the range asked for. */
static int run_variant(const env *e, const variant *v)
{
    static const int heights[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 32};
    static const int few[] = {1, 2, 5, 16, 33, 256}; /* segment family, and the split path */
    bool all = v->kernel == CMRSCL_KERNEL_STRIP && v->tile < 0;
    size_t n = all ? sizeof heights / sizeof heights[0] : sizeof few / sizeof few[0];
    int products = 0, count = 0, first = 0, last = 0;
    for (size_t k = 0; k < n; ++k) {
        int h = all ? heights[k] : few[k];
        if (v->kernel == CMRSCL_KERNEL_STRIP && !all && h > 16)
            continue; /* the split path of the strip family: its own heights don't matter */
        if (h < v->min_height || h > v->max_height ||
            (h > 32 && v->layout == CMRSCL_LAYOUT_PACKED && all))
            continue;
        products += run_height(e, v, h);
        first = count++ ? first : h;
        last = h;
    }
    CHECK_MSG(count > 0, "no height lies in %d..%d", v->min_height, v->max_height);
    CHECK_MSG(v->kernel != CMRSCL_KERNEL_STRIP || v->warp != 8 ||
                  v->layout != CMRSCL_LAYOUT_PACKED || narrow_plans > 0,
              "no plan took narrow columns");
    printf("%s %s %s, warp %d, tile %d, %s order, %d-bit indices: %d products checked (%d "
           "heights from %d to %d, work-groups of one warp and of several, %d matrices, beta = 0 "
           "and beta != 0; %d plans with narrow columns)\n",
           v->kernel == CMRSCL_KERNEL_SEGMENT ? "segment" : "strip",
           cmrscl_precision_name(v->precision),
           v->layout == CMRSCL_LAYOUT_PACKED ? "packed" : "unpacked", v->warp, v->tile,
           v->orders == 3   ? "row and column"
           : v->orders == 1 ? "row"
                            : "column",
           index_bits ? index_bits : 32, products, count, first, last, MATRIX_COUNT, narrow_plans);
    return test_finish("oclgrind");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "index64")) /* the rest as usual, 64-bit indices */
        index_bits = 64, --argc, ++argv;
    variant v;
    bool refused = argc == 2 && !strcmp(argv[1], "refused");
    bool convert = argc == 3 && !strcmp(argv[1], "convert");
    bool modulo = argc == 5 && !strcmp(argv[1], "modulo");
    bool slice = argc == 3 && !strcmp(argv[1], "slice");
    bool spmm = argc == 3 && !strcmp(argv[1], "spmm");
    bool solve = argc == 3 && !strcmp(argv[1], "solve");
    bool chain = argc == 3 && !strcmp(argv[1], "chain");
    bool amg = argc == 3 && !strcmp(argv[1], "amg");
    bool groups = argc == 4 && !strcmp(argv[3], "groups");
    bool galerkin = (argc == 2 || ((argc == 3 || groups) && !strcmp(argv[2], "prolongator"))) &&
                    !strcmp(argv[1], "galerkin");
    if (!refused && !convert && !modulo && !slice && !spmm && !solve && !chain && !amg &&
        !galerkin && !parse_args(argc, argv, &v)) {
        fprintf(stderr,
                "usage: %s float|double packed|unpacked WARP rows|columns|both [MIN-MAX]\n"
                "       %s segment|split|group float|double [WARP [TILE [MIN-MAX]]]\n"
                "       %s refused\n"
                "       %s convert float|double\n"
                "       %s modulo float|double WARP MODULO\n"
                "       %s slice|spmm|solve|chain|amg float|double\n"
                "       %s galerkin [prolongator [groups]]\n",
                argv[0], argv[0], argv[0], argv[0], argv[0], argv[0], argv[0]);
        return 2;
    }
    env e;
    int status = SKIP;
    if (!open_env(&e))
        status = test_finish("oclgrind");
    else if (refused)
        status = report_refused(&e);
    else if (galerkin && !e.dev.fp64)
        printf("skipped: the device has no fp64 (the set-up's kernels are in double)\n");
    else if (galerkin)
        status = run_galerkin(&e, argc >= 3,
                              argc == 2 ? GALERKIN_BOTH
                              : groups  ? GALERKIN_GROUPS
                                        : GALERKIN_ITEMS);
    else if ((convert || modulo || slice || spmm || solve || chain || amg) &&
             !strcmp(argv[2], "double") && !e.dev.fp64)
        printf("skipped: the device has no fp64\n");
    else if (convert)
        status = run_convert(&e, !strcmp(argv[2], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT);
    else if (slice)
        status = run_slice(&e, !strcmp(argv[2], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT);
    else if (spmm)
        status = run_spmm(&e, !strcmp(argv[2], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT);
    else if (solve)
        status = run_solve(&e, !strcmp(argv[2], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT);
    else if (chain)
        status = run_chain(&e, !strcmp(argv[2], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT);
    else if (amg)
        status = run_amg(&e, !strcmp(argv[2], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT);
    else if (modulo)
        status = run_modulo(&e, !strcmp(argv[2], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT,
                            atoi(argv[3]), atoi(argv[4]));
    else if (v.precision == CMRSCL_DOUBLE && !e.dev.fp64)
        printf("skipped: the device has no fp64\n");
    else
        status = run_variant(&e, &v);
    cmrscl_context_free(e.ctx);
    return status;
}
