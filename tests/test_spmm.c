/* test_spmm.c - the block product Y = alpha*A*X + beta*Y (host/exec/spmm.c, cl/cmrs_spmm.cl), on
 * the device chosen by CMRSCL_DEVICE:
 *   catalogue    every awkward matrix, planned ten ways (automatic, strip unpacked and
 *                column-ordered, segment, slice, slice with narrow columns, MODULO, values
 *                as a dictionary in strips with narrow columns, long strips split into
 *                tiles combined by the second kernel and in their work-group, one-row
 *                strips with implied columns; values plain but in the automatic plan and
 *                the dictionary's), blocks of 3,
 *                8 and 33 vectors row-major (vectors loaded one, two and four at a time;
 *                33 in two launches, or three, where slices take 32 or 16 a launch)
 *                and column-major with padded leading dimensions: each vector against the
 *                CPU double reference for each (alpha, beta) of the grid (test_util.h), the
 *                padding untouched, the same bits run after run;
 *   wide         70 vectors (two launches: 64, then 6) and one vector (against the
 *                reference, and the SpMV's bits);
 *   blocks       (test_spmm blocks: a test of its own, skipped where the device's rule
 *                plans it as for single products, CPUs) a matrix planned for blocks of 32
 *                (cmrscl_options.vectors);
 *   updates      a values update, then the block product uses the new values;
 *   buffers      cl_mem blocks and the event, the same bits as the host form; timing;
 *   misuse       k < 1, a bad order, leading dimensions too small, X as Y, buffers too
 *                small, a NULL matrix.
 * Usage: test_spmm float|double|blocks */
#include "exec/exec.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77
#define PAD_VALUE 1234.5 /* in the padding of X and Y: must come back as it went */

/* A block of k vectors of n elements (element (i, j) at i*ld + j, or j*ld + i column-major),
 * random values representable in p, padding PAD_VALUE; in p's type. */
static void *random_block(int32_t n, int k, cmrscl_dense_order o, size_t ld, size_t *elements,
                          cmrscl_precision p)
{
    size_t count = o == CMRSCL_ROW_MAJOR ? (size_t)n * ld : (size_t)k * ld;
    count = count ? count : 1;
    double *d = malloc(sizeof(double) * count);
    for (size_t e = 0; e < count; ++e)
        d[e] = PAD_VALUE;
    for (int32_t i = 0; i < n; ++i)
        for (int j = 0; j < k; ++j) {
            double v = test_uniform(-1, 1);
            d[o == CMRSCL_ROW_MAJOR ? (size_t)i * ld + j : (size_t)j * ld + i] =
                p == CMRSCL_FLOAT ? (double)(float)v : v;
        }
    void *out = test_values_in(d, (int64_t)count, p);
    free(d);
    *elements = count;
    return out;
}

/* Y = alpha*A*X + beta*Y0 by the block product for each (alpha, beta) of the grid
 * (test_util.h; beta = 0: Y0 NaN, never to be read), each vector checked against the CPU
 * reference on `a` (rounded to p), and the padding of Y unchanged; returns the last Y. */
static void *checked_block(cmrscl_matrix m, const cmrscl_csr *a, cmrscl_precision p, int k,
                           cmrscl_dense_order o, size_t ldx, size_t ldy, const char *what)
{
    void *y = NULL;
    for (int g = 0; g < TEST_ALPHA_BETA_COUNT; ++g) {
        double alpha = test_alpha_beta[g][0], beta = test_alpha_beta[g][1];
        size_t xn, yn, vs = cmrscl_precision_size(p);
        void *x = random_block(a->cols, k, o, ldx, &xn, p);
        free(y);
        y = random_block(a->rows, k, o, ldy, &yn, p);
        size_t lines = o == CMRSCL_ROW_MAJOR ? (size_t)a->rows : (size_t)k;
        size_t used = o == CMRSCL_ROW_MAJOR ? (size_t)k : (size_t)a->rows;
        for (size_t l = 0; beta == 0 && l < lines; ++l)
            for (size_t e = 0; e < used; ++e) {
                if (p == CMRSCL_FLOAT)
                    ((float *)y)[l * ldy + e] = NAN;
                else
                    ((double *)y)[l * ldy + e] = NAN;
            }
        void *y0 = malloc(vs * yn);
        memcpy(y0, y, vs * yn);
        CHECK_OK(cmrscl_spmm_host(m, o, k, alpha, x, ldx, beta, y, ldy));
        double worst = test_block_ratio(a, p, alpha, beta, o, k, x, ldx, y0, y, ldy);
        CHECK_MSG(worst <= 1.0, "%s: k %d %s, alpha %g beta %g: off by %g of the rounding bound",
                  what, k, o == CMRSCL_ROW_MAJOR ? "row-major" : "column-major", alpha, beta,
                  worst);
        size_t padding_changed = 0;
        for (size_t l = 0; l < lines; ++l)
            for (size_t e = used; e < ldy; ++e)
                padding_changed += test_value_at(y, p, (int64_t)(l * ldy + e)) != PAD_VALUE;
        CHECK_MSG(padding_changed == 0, "%s: k %d: %zu elements of Y's padding changed", what, k,
                  padding_changed);
        free(x), free(y0);
    }
    return y;
}

/* The block product twice on the same seed: the same bits. */
static bool runs_equal(cmrscl_matrix m, const cmrscl_csr *a, cmrscl_precision p, int k,
                       cmrscl_dense_order o)
{
    void *y[2];
    size_t xn, yn;
    for (int r = 0; r < 2; ++r) {
        test_seed(42);
        void *x = random_block(a->cols, k, o, o == CMRSCL_ROW_MAJOR ? k : a->cols, &xn, p);
        y[r] = random_block(a->rows, k, o, o == CMRSCL_ROW_MAJOR ? k : a->rows, &yn, p);
        CHECK_OK(cmrscl_spmm_host(m, o, k, 0.75, x, 0, 0.25, y[r], 0));
        free(x);
    }
    bool same = !memcmp(y[0], y[1], cmrscl_precision_size(p) * yn);
    free(y[0]), free(y[1]);
    return same;
}

static void test_catalogue(cmrscl_context ctx, cmrscl_precision p)
{
    enum { PLANS = 10 };
    cmrscl_options plans[PLANS] = {{0}};
    plans[1].kernel = CMRSCL_KERNEL_STRIP, plans[1].height = 4;
    plans[1].layout = CMRSCL_LAYOUT_UNPACKED, plans[1].order = CMRSCL_ORDER_COLUMNS;
    plans[2].kernel = CMRSCL_KERNEL_SEGMENT;
    plans[3].kernel = CMRSCL_KERNEL_SLICE, plans[3].height = 8, plans[3].column_bits = 32;
    plans[4].kernel = CMRSCL_KERNEL_SLICE, plans[4].height = 4;
    plans[5].kernel = CMRSCL_KERNEL_MODULO, plans[5].modulo = 8, plans[5].height = 16;
    plans[5].reduce = CMRSCL_REDUCE_LOCAL;
    plans[6].kernel = CMRSCL_KERNEL_STRIP, plans[6].height = 8;
    plans[6].values = CMRSCL_VALUES_DICT, plans[6].column_bits = 16; /* strips' offsets */
    plans[7].kernel = CMRSCL_KERNEL_STRIP, plans[7].height = 2, plans[7].tile = 16;
    plans[7].combine = CMRSCL_COMBINE_KERNEL;
    plans[8].kernel = CMRSCL_KERNEL_STRIP, plans[8].height = 4, plans[8].tile = 32;
    plans[8].combine = CMRSCL_COMBINE_GROUP;
    plans[9].kernel = CMRSCL_KERNEL_STRIP, plans[9].height = 1, plans[9].tile = 64;
    plans[9].column_bits = CMRSCL_COLUMNS_IMPLIED; /* the band's and the single row's */
    /* The values stored plain but in the automatic plan and the dictionary's: the kernels'
     * value decode is the products' shared VALUE_AT (test_kernel checks every codec), and a
     * codec per matrix doubled the programs this test builds - its time on CPU devices. */
    for (int k = 1; k < PLANS; ++k)
        if (k != 6)
            plans[k].values = CMRSCL_VALUES_PLAIN;
    const int ks[] = {3, 8, 33};
    int implied = 0;      /* matrices plan 9 took: the empty ones, the band, the single row */
    int ran[PLANS] = {0}; /* matrices with entries each plan took: none may be dropped unseen */
    for (int i = 0; i < test_matrix_count(); ++i) {
        cmrscl_csr a0;
        const char *name = test_matrix_build(i, &a0);
        cmrscl_csr a = test_csr_rounded(&a0, p), few = test_csr_rounded(&a0, CMRSCL_DOUBLE);
        /* the dictionary's plan on the same pattern with three values, which it can code */
        static const double three[] = {-1, 0.5, 2};
        for (int64_t e = 0; e < few.nnz; ++e)
            few.values[e] = three[e % 3];
        for (int k = 0; k < PLANS; ++k) {
            char what[128];
            snprintf(what, sizeof what, "%s, plan %d", name, k);
            const cmrscl_csr *src = k == 6 ? &few : &a0, *ref = k == 6 ? &few : &a;
            cmrscl_matrix m = NULL;
            cmrscl_status st = cmrscl_matrix_create_from_csr(ctx, p, src, &plans[k], &m);
            if (st != CMRSCL_OK) { /* narrow or implied columns refused */
                CHECK_MSG(k == 4 || k == 6 || k == 9, "%s: %s", what, cmrscl_last_error());
                continue;
            }
            cmrscl_params mp = CMRSCL_PARAMS_INIT;
            CHECK_OK(cmrscl_matrix_params(m, &mp)); /* slices: 33 vectors in 2 or 3 launches */
            implied += k == 9 && mp.column_bits == 0 && mp.nnz > 0;
            ran[k] += mp.nnz > 0;
            CHECK_MSG(k != 6 || mp.values == CMRSCL_VALUES_DICT, "%s: values not a dictionary",
                      what);
            CHECK(mp.kernel != CMRSCL_KERNEL_SLICE || mp.block_vectors < 33);
            for (size_t q = 0; q < sizeof ks / sizeof *ks; ++q) {
                int kk = ks[q];
                /* padded leading dimensions, multiples of 4: runs of 2 and 4 vectors load
                 * as one where the block has enough of them (k 8, 33) */
                size_t ld = ((size_t)kk + 4) / 4 * 4;
                free(checked_block(m, ref, p, kk, CMRSCL_ROW_MAJOR, ld, ld + 4, what));
                free(checked_block(m, ref, p, kk, CMRSCL_COLUMN_MAJOR, (size_t)a.cols + 2,
                                   (size_t)a.rows + 1, what));
            }
            CHECK_MSG(runs_equal(m, ref, p, 8, CMRSCL_ROW_MAJOR), "%s: two runs differ", what);
            cmrscl_matrix_free(m);
        }
        cmrscl_csr_free(&a0), cmrscl_csr_free(&a), cmrscl_csr_free(&few);
    }
    CHECK_MSG(implied == 2, "implied columns on %d matrices with entries, not 2", implied);
    for (int k = 0; k < PLANS; ++k) /* narrow columns (4, 6) fit the narrower matrices only */
        CHECK_MSG(ran[k] >= (k == 9 ? 2 : 4), "plan %d ran on %d matrices with entries", k, ran[k]);
    printf("spmm: catalogue, matrices with entries a plan took: %d %d %d %d %d %d %d %d %d %d\n",
           ran[0], ran[1], ran[2], ran[3], ran[4], ran[5], ran[6], ran[7], ran[8], ran[9]);
}

/* 70 vectors: a launch of 64, then one of 6; one vector: exactly cmrscl_spmv's bits. */
static void test_wide_and_single(cmrscl_context ctx, cmrscl_precision p)
{
    cmrscl_csr a0;
    test_matrix_build(9, &a0); /* 1500 x 1500 random */
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, &a0, NULL, &m));
    if (!m)
        return;
    cmrscl_csr a = test_csr_rounded(&a0, p);
    free(checked_block(m, &a, p, 70, CMRSCL_ROW_MAJOR, 70, 70, "70 vectors"));
    free(checked_block(m, &a, p, 70, CMRSCL_COLUMN_MAJOR, a.cols, a.rows, "70 vectors"));
    size_t xn, yn, vs = cmrscl_precision_size(p);
    void *x = random_block(a.cols, 1, CMRSCL_COLUMN_MAJOR, a.cols, &xn, p);
    void *y = random_block(a.rows, 1, CMRSCL_COLUMN_MAJOR, a.rows, &yn, p);
    void *ys = malloc(vs * yn);
    memcpy(ys, y, vs * yn);
    CHECK_OK(cmrscl_spmm_host(m, CMRSCL_ROW_MAJOR, 1, 2.0, x, 1, 0.5, y, 1));
    double worst = test_block_ratio(&a, p, 2.0, 0.5, CMRSCL_ROW_MAJOR, 1, x, 1, ys, y, 1);
    CHECK_MSG(worst <= 1.0, "one vector: off by %g of the rounding bound", worst);
    CHECK_OK(cmrscl_spmv_host(m, 2.0, x, 0.5, ys));
    CHECK_MSG(!memcmp(y, ys, vs * yn), "one vector: not the bits of cmrscl_spmv");
    free(x), free(y), free(ys);
    /* a values update: the next block product multiplies by the new values */
    for (int64_t e = 0; e < a0.nnz; ++e)
        a0.values[e] = test_uniform(-2, 2);
    CHECK_OK(cmrscl_matrix_update_values(m, a0.values, CMRSCL_DOUBLE));
    cmrscl_csr_free(&a);
    a = test_csr_rounded(&a0, p);
    free(checked_block(m, &a, p, 5, CMRSCL_ROW_MAJOR, 5, 5, "after an update"));
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a0), cmrscl_csr_free(&a);
}

static void test_buffers_and_misuse(cmrscl_context ctx, cmrscl_precision p)
{
    cmrscl_csr a0;
    test_matrix_build(6, &a0); /* 70 x 600 with a dense row */
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, &a0, NULL, &m));
    if (!m)
        return;
    const int k = 6;
    size_t xn, yn, vs = cmrscl_precision_size(p);
    void *x = random_block(a0.cols, k, CMRSCL_ROW_MAJOR, k, &xn, p);
    void *y = calloc(yn = (size_t)a0.rows * k, vs), *yh = calloc(yn, vs);
    cl_context context;
    test_cl_device(ctx, &context);
    cl_int err;
    cl_mem xb = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, vs * xn, x, &err);
    cl_mem yb = clCreateBuffer(context, CL_MEM_READ_WRITE, vs * yn, NULL, &err);
    cl_mem small = clCreateBuffer(context, CL_MEM_READ_WRITE, vs * (yn - 1), NULL, &err);
    cl_event done = NULL;
    CHECK_OK(cmrscl_spmm(m, CMRSCL_ROW_MAJOR, k, 2.0, xb, 0, 0.0, yb, 0, NULL, 0, NULL, &done));
    CHECK(done != NULL);
    cl_command_queue q;
    CHECK_OK(cmrscl_context_cl(ctx, NULL, &q));
    CHECK(clEnqueueReadBuffer(q, yb, CL_TRUE, 0, vs * yn, y, 1, &done, NULL) == CL_SUCCESS);
    CHECK_OK(cmrscl_spmm_host(m, CMRSCL_ROW_MAJOR, k, 2.0, x, 0, 0.0, yh, 0));
    CHECK_MSG(!memcmp(y, yh, vs * yn), "buffers and host arrays give different bits");
    cmrscl_timing tm;
    CHECK_OK(cmrscl_spmm_time(m, CMRSCL_ROW_MAJOR, k, 1.0, xb, 0, 0.0, yb, 0, 1, 3, &tm));
    CHECK(tm.repetitions == 3 && tm.median_ms > 0 && tm.loop_ms > 0);
    /* misuse: each refused with a message, nothing enqueued */
    CHECK_STATUS(cmrscl_spmm(m, CMRSCL_ROW_MAJOR, 0, 1, xb, 0, 0, yb, 0, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "vectors"));
    CHECK_STATUS(cmrscl_spmm(m, (cmrscl_dense_order)5, k, 1, xb, 0, 0, yb, 0, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmm(m, CMRSCL_ROW_MAJOR, k, 1, xb, k - 1, 0, yb, 0, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "leading dimension"));
    CHECK_STATUS(cmrscl_spmm(m, CMRSCL_COLUMN_MAJOR, k, 1, xb, 10, 0, yb, 0, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmm(m, CMRSCL_ROW_MAJOR, k, 1, xb, 0, 0, small, 0, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "Y holds"));
    CHECK_STATUS(cmrscl_spmm(m, CMRSCL_ROW_MAJOR, 1, 1, yb, 0, 0, yb, 0, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmm(m, CMRSCL_ROW_MAJOR, k, 1, xb, 0, 0, yb, 0, NULL, 1, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmm_host(NULL, CMRSCL_ROW_MAJOR, k, 1, x, 0, 0, y, 0),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmm_host(m, CMRSCL_ROW_MAJOR, k, 1, NULL, 0, 0, y, 0),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmm_time(m, CMRSCL_ROW_MAJOR, k, 1, xb, 0, 0, yb, 0, 1, 0, &tm),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    if (done)
        clReleaseEvent(done);
    clReleaseMemObject(xb), clReleaseMemObject(yb), clReleaseMemObject(small);
    free(x), free(y), free(yh);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a0);
}

/* A matrix planned for blocks (cmrscl_options.vectors): where the device's rule lays its short
 * scattered rows out for them (a GPU with more rows than its resident warps x 64: strips of 8
 * rows), a block of 32 against the CPU double reference; elsewhere the plan stays the single
 * product's, which the catalogue checks: false, said, and the test skips. */
static bool test_planned_for_blocks(cmrscl_context ctx, cmrscl_precision p)
{
    cmrscl_csr a0;
    CHECK_OK(cmrscl_csr_generate("random:600000:3", &a0));
    cmrscl_options o = {.vectors = 32};
    cmrscl_params plan = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_plan(&ctx->info, p, &a0, &o, &plan));
    if (!test_contains(plan.plan_reason, "for blocks of 32 vectors")) {
        printf("skipped: no plan for blocks on this device (%.120s)\n", plan.plan_reason);
        cmrscl_csr_free(&a0);
        return false;
    }
    CHECK(plan.kernel == CMRSCL_KERNEL_STRIP && plan.height == 8);
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, &a0, &o, &m));
    cmrscl_csr a = test_csr_rounded(&a0, p);
    if (m) {
        free(checked_block(m, &a, p, 32, CMRSCL_ROW_MAJOR, 32, 32, "planned for blocks"));
        free(checked_block(m, &a, p, 3, CMRSCL_COLUMN_MAJOR, a.cols, a.rows,
                           "planned for blocks, 3 vectors"));
        CHECK_MSG(runs_equal(m, &a, p, 8, CMRSCL_ROW_MAJOR), "planned for blocks: runs differ");
        printf("spmm: planned for blocks: %s\n", plan.plan_reason);
    }
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a0), cmrscl_csr_free(&a);
    return true;
}

int main(int argc, char **argv)
{
    cmrscl_precision prec = CMRSCL_FLOAT;
    bool blocks = argc == 2 && !strcmp(argv[1], "blocks"); /* the plan for blocks alone */
    if (!blocks && !test_precision_arg(argc, argv, &prec))
        return 2;
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("spmm");
    if (blocks) { /* in double where the device has it; a skip where it plans otherwise */
        bool checked = test_planned_for_blocks(ctx, ctx->info.fp64 ? CMRSCL_DOUBLE : prec);
        cmrscl_context_free(ctx);
        return checked || test_failures ? test_finish("spmm") : SKIP;
    }
    if (prec == CMRSCL_DOUBLE && !ctx->info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    test_catalogue(ctx, prec);
    test_wide_and_single(ctx, prec);
    test_buffers_and_misuse(ctx, prec);
    cmrscl_context_free(ctx);
    return test_finish("spmm");
}
