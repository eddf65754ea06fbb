/* test_kernel.c - the SpMV kernel against the CPU double reference on the device chosen by
 * CMRSCL_DEVICE: every HEIGHT 1..16 (and larger ones in the unpacked layout), both strip
 * orders, the awkward-matrix catalogue, beta = 0 with y poisoned by NaN (every row must be
 * written, none read) and beta != 0.
 * Usage: test_kernel float|double packed|unpacked [local|shuffle|auto]
 * Exits 77 (CTest: skipped) when the device cannot run the variant, saying why. */
#include "internal.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

typedef struct variant {
    cmrscl_precision precision;
    cmrscl_layout layout;
    cmrscl_reduce reduce;
} variant;

/* Runs one product on the device and checks it against the CPU double reference. */
static void check_product(cmrscl_matrix m, const cmrscl_csr *ref_a, cmrscl_precision prec,
                          double alpha, double beta, const char *what)
{
    int32_t rows = ref_a->rows, cols = ref_a->cols;
    size_t vs = cmrscl_precision_size(prec);
    double *x = malloc(sizeof(double) * ((size_t)cols + 1));
    double *y0 = malloc(sizeof(double) * ((size_t)rows + 1));
    double *y = malloc(sizeof(double) * ((size_t)rows + 1));
    void *xd = malloc(vs * ((size_t)cols + 1)), *yd = malloc(vs * ((size_t)rows + 1));
    for (int32_t j = 0; j < cols; ++j) {
        double v = test_uniform(-1, 1);
        x[j] = prec == CMRSCL_FLOAT ? (double)(float)v : v;
        if (prec == CMRSCL_FLOAT)
            ((float *)xd)[j] = (float)v;
        else
            ((double *)xd)[j] = v;
    }
    for (int32_t i = 0; i < rows; ++i) {
        /* beta == 0: poison y so an unwritten row, or a row read despite beta == 0, shows. */
        double v = beta == 0.0 ? NAN : test_uniform(-1, 1);
        y0[i] = prec == CMRSCL_FLOAT ? (double)(float)v : v;
        if (prec == CMRSCL_FLOAT)
            ((float *)yd)[i] = (float)v;
        else
            ((double *)yd)[i] = v;
    }
    CHECK_OK(cmrscl_spmv_host(m, alpha, xd, beta, yd));
    for (int32_t i = 0; i < rows; ++i)
        y[i] = prec == CMRSCL_FLOAT ? (double)((float *)yd)[i] : ((double *)yd)[i];
    double ratio = INFINITY;
    CHECK_OK(cmrscl_csr_spmv_check(ref_a, alpha, x, beta, y0, y,
                                   prec == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, NULL, &ratio));
    CHECK_MSG(ratio <= 1.0, "%s alpha %g beta %g: error %.3g x the rounding bound", what, alpha,
              beta, ratio);
    free(x), free(y0), free(y), free(xd), free(yd);
}

/* The device copy must be exactly the host conversion with the same parameters. */
static void check_device_arrays(cmrscl_matrix m, const cmrscl_csr *a, const char *what)
{
    cmrscl_params p;
    CHECK_OK(cmrscl_matrix_params(m, &p));
    cmrscl_cmrs dev, host;
    unsigned flags = (p.order == CMRSCL_ORDER_COLUMNS ? CMRSCL_CMRS_ORDER_COLUMNS : 0) |
                     (p.layout == CMRSCL_LAYOUT_UNPACKED ? CMRSCL_CMRS_UNPACKED : 0);
    CHECK_OK(cmrscl_matrix_read_cmrs(m, &dev));
    CHECK_OK(cmrscl_cmrs_from_csr(a, p.height, flags, &host));
    bool same = dev.strips == host.strips && dev.nnz == host.nnz && dev.packed == host.packed &&
                !memcmp(dev.strip_ptr, host.strip_ptr, 4 * ((size_t)host.strips + 1)) &&
                !memcmp(dev.col_ind, host.col_ind, 4 * (size_t)host.nnz) &&
                (host.packed || !memcmp(dev.row_in_strip, host.row_in_strip, (size_t)host.nnz)) &&
                !memcmp(dev.values, host.values, 8 * (size_t)host.nnz);
    CHECK_MSG(same, "%s: device CMRS arrays differ from the host conversion", what);
    cmrscl_cmrs_free(&dev);
    cmrscl_cmrs_free(&host);
}

static void run_height(cmrscl_context ctx, const variant *v, int height, int warp)
{
    for (int order = CMRSCL_ORDER_ROWS; order <= CMRSCL_ORDER_COLUMNS; ++order) {
        cmrscl_options opt = {0};
        opt.height = height;
        opt.layout = v->layout;
        opt.order = (cmrscl_order)order;
        opt.reduce = v->reduce;
        if (height > 16) /* one warp per group keeps large heights inside local memory */
            opt.work_group_size = warp;
        for (int i = 0; i < test_matrix_count(); ++i) {
            cmrscl_csr a;
            const char *name = test_matrix_build(i, &a);
            cmrscl_csr ref_a = test_csr_rounded(&a, v->precision);
            char what[160];
            snprintf(what, sizeof what, "%s, height %d, %s order", name, height,
                     order == CMRSCL_ORDER_ROWS ? "row" : "column");
            cmrscl_matrix m = NULL;
            CHECK_OK(cmrscl_matrix_create_from_csr(ctx, v->precision, &a, &opt, &m));
            if (m) {
                cmrscl_params p;
                CHECK_OK(cmrscl_matrix_params(m, &p));
                CHECK_MSG(p.height == height && p.layout == v->layout &&
                              (v->reduce == CMRSCL_REDUCE_AUTO || p.reduce == v->reduce),
                          "%s: parameters not as asked (%s)", what, p.build_options);
                check_product(m, &ref_a, v->precision, 1.0, 0.0, what);
                check_product(m, &ref_a, v->precision, -1.5, 0.5, what);
                if (i == 5 || i == 6)
                    check_device_arrays(m, &ref_a, what);
            }
            cmrscl_matrix_free(m);
            cmrscl_csr_free(&ref_a);
            cmrscl_csr_free(&a);
        }
    }
}

static bool parse_args(int argc, char **argv, variant *v)
{
    if (argc < 3)
        return false;
    v->precision = !strcmp(argv[1], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
    v->layout = !strcmp(argv[2], "unpacked") ? CMRSCL_LAYOUT_UNPACKED : CMRSCL_LAYOUT_PACKED;
    v->reduce = CMRSCL_REDUCE_AUTO;
    if (argc > 3)
        v->reduce = !strcmp(argv[3], "local")     ? CMRSCL_REDUCE_LOCAL
                    : !strcmp(argv[3], "shuffle") ? CMRSCL_REDUCE_SHUFFLE
                                                  : CMRSCL_REDUCE_AUTO;
    return true;
}

int main(int argc, char **argv)
{
    variant v;
    if (!parse_args(argc, argv, &v)) {
        fprintf(stderr, "usage: %s float|double packed|unpacked [local|shuffle|auto]\n", argv[0]);
        return 2;
    }
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("kernel");
    cmrscl_device_info dev;
    CHECK_OK(cmrscl_context_device_info(ctx, &dev));
    printf("device %u:%u %s (%s), warp %u\n", dev.platform_index, dev.device_index, dev.device_name,
           dev.platform_name, dev.warp_width);
    const char *skip = NULL;
    if (v.precision == CMRSCL_DOUBLE && !dev.fp64)
        skip = "the device has no fp64";
    if (v.reduce == CMRSCL_REDUCE_SHUFFLE && !dev.warp_shuffle)
        skip = "the device has no warp shuffle (NVIDIA inline PTX)";
    if (skip) {
        printf("skipped: %s\n", skip);
        cmrscl_context_free(ctx);
        return SKIP;
    }
    static const int unpacked_extra[] = {17, 24, 32, 64};
    for (int h = 1; h <= 16; ++h)
        run_height(ctx, &v, h, (int)dev.warp_width);
    for (size_t k = 0; v.layout == CMRSCL_LAYOUT_UNPACKED && k < 4; ++k)
        if (v.reduce != CMRSCL_REDUCE_SHUFFLE || unpacked_extra[k] <= 32)
            run_height(ctx, &v, unpacked_extra[k], (int)dev.warp_width);
    cmrscl_context_free(ctx);
    return test_finish("kernel");
}
