/* test_transpose.c - the transposed product y = alpha*A^T*x + beta*y (host/exec/transpose.c,
 * product.c),
 * on the device chosen by CMRSCL_DEVICE:
 *   host         cmrscl_csr_transpose: shapes, each entry at its mirrored place, the
 *                transpose of the transpose is the matrix; on 2, 3 and 7 threads, by rows
 *                and by columns, the one-thread result bit for bit;
 *   catalogue    every awkward matrix, A planned five ways (automatic, strip unpacked and
 *                column-ordered, segment, slice, MODULO): the transposed product against the
 *                CPU double reference on A^T for each (alpha, beta) of the grid, bit for
 *                bit the product of a matrix created from A^T directly, the same bits run
 *                after run, and A^T made on A's plan (prepare_transpose) against the
 *                reference again;
 *   unsorted     rows in any order with a repeated entry;
 *   updates      a values update drops the kept transpose and the next product uses the new
 *                values;
 *   prepare      options for the transpose's plan, its device bytes reported and released;
 *   buffers      cl_mem vectors and the event, the same bits as the host form;
 *   misuse       a bad operation, a NULL matrix, an x too small for A^T.
 * Usage: test_transpose float|double */
#include "exec/exec.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static void test_host_transpose(void)
{
    for (int i = 0; i < test_matrix_count(); ++i) {
        cmrscl_csr a, t, tt;
        const char *name = test_matrix_build(i, &a);
        CHECK_OK(cmrscl_csr_transpose(&a, &t));
        CHECK_MSG(t.rows == a.cols && t.cols == a.rows && t.nnz == a.nnz, "%s: shape", name);
        CHECK_OK(cmrscl_csr_validate(&t));
        for (int32_t r = 0; r < a.rows; ++r) /* entry (r, c) of A is entry (c, r) of A^T */
            for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k) {
                int32_t c = a.col_ind[k];
                int64_t hit = -1;
                for (int64_t q = t.row_ptr[c]; q < t.row_ptr[c + 1]; ++q)
                    hit = t.col_ind[q] == r ? q : hit;
                CHECK_MSG(hit >= 0 && t.values[hit] == a.values[k], "%s: entry (%d, %d)", name,
                          (int)r, (int)c);
            }
        CHECK_OK(cmrscl_csr_transpose(&t, &tt)); /* canonical A: (A^T)^T is A exactly */
        bool same = tt.rows == a.rows && tt.nnz == a.nnz &&
                    !memcmp(tt.row_ptr, a.row_ptr, sizeof(int64_t) * ((size_t)a.rows + 1)) &&
                    !memcmp(tt.col_ind, a.col_ind, sizeof(int32_t) * (size_t)a.nnz) &&
                    !memcmp(tt.values, a.values, sizeof(double) * (size_t)a.nnz);
        CHECK_MSG(same, "%s: the transpose of the transpose differs", name);
        cmrscl_csr_free(&a), cmrscl_csr_free(&t), cmrscl_csr_free(&tt);
    }
    cmrscl_csr out;
    CHECK_STATUS(cmrscl_csr_transpose(NULL, &out), CMRSCL_ERROR_INVALID_ARGUMENT);
}

/* A rows x cols matrix of `per_row` random entries a row, columns in no order and some
 * repeated (the transpose keeps repeats in A's row order). */
static cmrscl_csr scattered(int32_t rows, int32_t cols, int per_row)
{
    cmrscl_csr a = {rows,
                    cols,
                    (int64_t)rows * per_row,
                    malloc(sizeof(int64_t) * ((size_t)rows + 1)),
                    malloc(sizeof(int32_t) * (size_t)rows * per_row),
                    malloc(sizeof(double) * (size_t)rows * per_row)};
    for (int32_t i = 0; i <= rows; ++i)
        a.row_ptr[i] = (int64_t)i * per_row;
    for (int64_t k = 0; k < a.nnz; ++k) {
        a.col_ind[k] = k % 5 == 4 ? a.col_ind[k - 1] : (int32_t)(test_uniform(0, 1) * cols) % cols;
        a.values[k] = test_uniform(-1, 1);
    }
    return a;
}

/* The host's threads share the transpose out by A's rows (tall matrices; as many as their
 * histograms have room for: 4 of the 7 asked on the second case) or by columns (wide ones of
 * few entries a column); at any count, either way gives the one-thread sort's result
 * bit for bit - on matrices large enough to be shared out at all. */
static void test_host_transpose_threads(void)
{
    const char *saved = getenv("CMRSCL_THREADS");
    char *keep = saved ? strdup(saved) : NULL;
    struct {
        const char *name;
        cmrscl_csr a;
    } cases[] = {{"tall (by rows)", scattered(40000, 30000, 5)},
                 {"fewer histograms than threads", scattered(70000, 34999, 1)},
                 {"wide (by columns)", scattered(70001, 5000000, 1)}};
    for (size_t c = 0; c < 3; ++c) {
        cmrscl_csr one, many;
        setenv("CMRSCL_THREADS", "1", 1);
        CHECK_OK(cmrscl_csr_transpose(&cases[c].a, &one));
        const char *counts[] = {"2", "3", "7"};
        for (int n = 0; n < 3; ++n) {
            setenv("CMRSCL_THREADS", counts[n], 1);
            CHECK_OK(cmrscl_csr_transpose(&cases[c].a, &many));
            bool same =
                many.nnz == one.nnz && many.rows == one.rows &&
                !memcmp(many.row_ptr, one.row_ptr, sizeof(int64_t) * ((size_t)one.rows + 1)) &&
                !memcmp(many.col_ind, one.col_ind, sizeof(int32_t) * (size_t)one.nnz) &&
                !memcmp(many.values, one.values, sizeof(double) * (size_t)one.nnz);
            CHECK_MSG(same, "%s: the transpose on %s threads differs from one thread's",
                      cases[c].name, counts[n]);
            cmrscl_csr_free(&many);
        }
        cmrscl_csr_free(&one);
        cmrscl_csr_free(&cases[c].a);
    }
    if (keep)
        setenv("CMRSCL_THREADS", keep, 1);
    else
        unsetenv("CMRSCL_THREADS");
    free(keep);
}

/* A random vector of n elements, representable in p (so the reference sees what the device
 * does): as doubles in *d, in p's type returned. */
static void *random_vector(int32_t n, cmrscl_precision p, double **d)
{
    *d = malloc(sizeof(double) * ((size_t)n + 1));
    for (int32_t i = 0; i < n; ++i) {
        double v = test_uniform(-1, 1);
        (*d)[i] = p == CMRSCL_FLOAT ? (double)(float)v : v;
    }
    return test_values_in(*d, n, p);
}

/* y = alpha*A^T*x + beta*y0 by m's transposed product for each (alpha, beta) of the grid
 * (test_util.h; beta = 0: y0 NaN, never to be read), checked against the CPU reference on the
 * transpose of `a` (already rounded to the precision). */
static void checked_product(cmrscl_matrix m, const cmrscl_csr *a, cmrscl_precision p,
                            const char *what)
{
    cmrscl_csr t;
    CHECK_OK(cmrscl_csr_transpose(a, &t));
    for (int g = 0; g < TEST_ALPHA_BETA_COUNT; ++g) {
        double alpha = test_alpha_beta[g][0], beta = test_alpha_beta[g][1];
        double *xd, *y0d;
        void *x = random_vector(a->rows, p, &xd), *y = random_vector(a->cols, p, &y0d);
        for (int32_t i = 0; beta == 0 && i < a->cols; ++i)
            y0d[i] = NAN;
        if (beta == 0) {
            free(y);
            y = test_values_in(y0d, a->cols, p);
        }
        CHECK_OK(cmrscl_spmv_host_op(m, CMRSCL_TRANSPOSE, alpha, x, beta, y));
        double *yd = malloc(sizeof(double) * ((size_t)a->cols + 1)), rel = 0, ratio = 0;
        for (int32_t i = 0; i < a->cols; ++i)
            yd[i] = test_value_at(y, p, i);
        CHECK_OK(cmrscl_csr_spmv_check(&t, alpha, xd, beta, y0d, yd,
                                       p == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, &rel, &ratio));
        CHECK_MSG(ratio <= 1.0,
                  "%s, alpha %g beta %g: A^T x off by %g of the rounding bound (relative %g)", what,
                  alpha, beta, ratio, rel);
        free(xd), free(y0d), free(yd), free(x), free(y);
    }
    cmrscl_csr_free(&t);
}

/* The same product twice, on fresh copies of the same x and y0 (the seed): bit for bit. */
static bool products_equal(cmrscl_matrix m1, cmrscl_operation op1, cmrscl_matrix m2,
                           cmrscl_operation op2, int32_t xn, int32_t yn, cmrscl_precision p)
{
    void *y[2];
    cmrscl_matrix ms[2] = {m1, m2};
    cmrscl_operation ops[2] = {op1, op2};
    for (int k = 0; k < 2; ++k) {
        double *xd, *yd;
        test_seed(99);
        void *x = random_vector(xn, p, &xd);
        y[k] = random_vector(yn, p, &yd);
        CHECK_OK(cmrscl_spmv_host_op(ms[k], ops[k], 0.75, x, 0.25, y[k]));
        free(x), free(xd), free(yd);
    }
    bool same = !memcmp(y[0], y[1], cmrscl_precision_size(p) * (size_t)yn);
    free(y[0]), free(y[1]);
    return same;
}

static void test_catalogue(cmrscl_context ctx, cmrscl_precision p)
{
    cmrscl_options plans[5] = {{0}};
    plans[1].kernel = CMRSCL_KERNEL_STRIP, plans[1].height = 4;
    plans[1].layout = CMRSCL_LAYOUT_UNPACKED, plans[1].order = CMRSCL_ORDER_COLUMNS;
    plans[2].kernel = CMRSCL_KERNEL_SEGMENT;
    plans[3].kernel = CMRSCL_KERNEL_SLICE, plans[3].height = 8;
    plans[4].kernel = CMRSCL_KERNEL_MODULO, plans[4].modulo = 8, plans[4].height = 16;
    plans[4].reduce = CMRSCL_REDUCE_LOCAL;
    int own_plans = 0; /* A^T made on A's plan and checked: the path must run */
    for (int i = 0; i < test_matrix_count(); ++i) {
        cmrscl_csr a0;
        const char *name = test_matrix_build(i, &a0);
        cmrscl_csr a = test_csr_rounded(&a0, p), t;
        CHECK_OK(cmrscl_csr_transpose(&a, &t));
        cmrscl_matrix direct = NULL;
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, &t, NULL, &direct));
        for (int k = 0; k < 5 && direct; ++k) {
            char what[128];
            snprintf(what, sizeof what, "%s, A's plan %d", name, k);
            cmrscl_matrix m = NULL;
            CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, &a0, &plans[k], &m));
            if (!m)
                continue;
            checked_product(m, &a, p, what);
            CHECK_MSG(products_equal(m, CMRSCL_TRANSPOSE, direct, CMRSCL_NON_TRANSPOSE, a.rows,
                                     a.cols, p),
                      "%s: not the product of A^T created directly", what);
            CHECK_MSG(products_equal(m, CMRSCL_TRANSPOSE, m, CMRSCL_TRANSPOSE, a.rows, a.cols, p),
                      "%s: two runs differ", what);
            /* A^T on the plan's family too (where A^T can take it), against the reference */
            cmrscl_params tp = CMRSCL_PARAMS_INIT;
            if (k > 0 && cmrscl_matrix_prepare_transpose(m, &plans[k], &tp) == CMRSCL_OK) {
                char own[160];
                snprintf(own, sizeof own, "%s, A^T on it too", what);
                CHECK_MSG(tp.kernel == plans[k].kernel, "%s: A^T's kernel %d", own, (int)tp.kernel);
                checked_product(m, &a, p, own);
                ++own_plans;
            }
            cmrscl_matrix_free(m);
        }
        cmrscl_matrix_free(direct);
        cmrscl_csr_free(&a0), cmrscl_csr_free(&a), cmrscl_csr_free(&t);
    }
    printf("catalogue: A^T on A's own plan %d times\n", own_plans);
    CHECK_MSG(own_plans >= test_matrix_count(), "A^T took A's plan only %d times", own_plans);
}

/* Rows with columns out of order and one entry twice: A^T sums the pair, like A does. */
static void test_unsorted(cmrscl_context ctx, cmrscl_precision p)
{
    int64_t rp[] = {0, 3, 3, 6, 8};
    int32_t ci[] = {5, 1, 3, 2, 2, 0, 4, 1};
    double v[] = {1, 2, 3, 4, 5, 6, 7, 8};
    cmrscl_csr a = {.rows = 4, .cols = 6, .nnz = 8, .row_ptr = rp, .col_ind = ci, .values = v};
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, &a, NULL, &m));
    if (m)
        checked_product(m, &a, p, "unsorted rows");
    cmrscl_matrix_free(m);
}

static void test_updates(cmrscl_context ctx, cmrscl_precision p)
{
    cmrscl_csr a0;
    test_matrix_build(9, &a0); /* 1500 x 1500 random */
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, &a0, NULL, &m));
    if (!m)
        return;
    cmrscl_csr a = test_csr_rounded(&a0, p);
    checked_product(m, &a, p, "before the update");
    cmrscl_params params = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_params(m, &params));
    CHECK(params.transpose_device_bytes > 0);
    for (int64_t k = 0; k < a0.nnz; ++k)
        a0.values[k] = test_uniform(-2, 2);
    CHECK_OK(cmrscl_matrix_update_values(m, a0.values, CMRSCL_DOUBLE));
    CHECK_OK(cmrscl_matrix_params(m, &params));
    CHECK_MSG(params.transpose_device_bytes == 0, "the update kept a stale transpose");
    cmrscl_csr_free(&a);
    a = test_csr_rounded(&a0, p);
    checked_product(m, &a, p, "after the update");
    /* the same from a buffer */
    for (int64_t k = 0; k < a0.nnz; ++k)
        a0.values[k] = test_uniform(-3, 3);
    cl_context context;
    test_cl_device(ctx, &context);
    cl_int err;
    cl_mem vb = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, sizeof(double) * (size_t)a0.nnz,
                               a0.values, &err);
    if (ctx->info.fp64) {
        CHECK_OK(cmrscl_matrix_update_values_cl(m, vb, CMRSCL_DOUBLE));
        CHECK_OK(cmrscl_matrix_params(m, &params));
        CHECK_MSG(params.transpose_device_bytes == 0, "update_values_cl kept a stale transpose");
        cmrscl_csr_free(&a);
        a = test_csr_rounded(&a0, p);
        checked_product(m, &a, p, "after the update from a buffer");
    }
    clReleaseMemObject(vb);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a0), cmrscl_csr_free(&a);
}

static void test_prepare(cmrscl_context ctx, cmrscl_precision p)
{
    cmrscl_csr a0;
    test_matrix_build(7, &a0); /* 20 x 333: A^T has 333 short rows */
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, &a0, NULL, &m));
    if (!m)
        return;
    cmrscl_options o = {0};
    o.kernel = CMRSCL_KERNEL_STRIP, o.height = 4;
    cmrscl_params t = CMRSCL_PARAMS_INIT, params = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_prepare_transpose(m, &o, &t));
    CHECK(t.kernel == CMRSCL_KERNEL_STRIP && t.height == 4 && t.rows == 333 && t.cols == 20);
    CHECK_OK(cmrscl_matrix_params(m, &params));
    CHECK(params.transpose_device_bytes == t.device_bytes && t.device_bytes > 0);
    cmrscl_csr a = test_csr_rounded(&a0, p);
    checked_product(m, &a, p, "prepared with options");
    CHECK_OK(cmrscl_matrix_update_values(m, a0.values, CMRSCL_DOUBLE));
    CHECK_OK(cmrscl_matrix_params(m, &params));
    CHECK(params.transpose_device_bytes == 0);
    checked_product(m, &a, p, "rebuilt after an update"); /* with the kept options */
    CHECK_OK(cmrscl_matrix_params(m, &params));
    CHECK(params.transpose_device_bytes == t.device_bytes);
    CHECK_OK(cmrscl_matrix_prepare_transpose(m, &o, &t)); /* the same options: kept as it is */
    CHECK(t.kernel == CMRSCL_KERNEL_STRIP && t.height == 4);
    cmrscl_options bad = {0}; /* MODULO's slot sets without the MODULO kernel */
    bad.modulo = 3;
    CHECK_STATUS(cmrscl_matrix_prepare_transpose(m, &bad, &t), CMRSCL_ERROR_INVALID_ARGUMENT);
    checked_product(m, &a, p, "after options that failed"); /* the old A^T still serves */
    CHECK_OK(cmrscl_matrix_prepare_transpose(m, &o, &t));
    CHECK(t.kernel == CMRSCL_KERNEL_STRIP && t.height == 4);
    CHECK_OK(cmrscl_matrix_release_transpose(m));
    CHECK_OK(cmrscl_matrix_params(m, &params));
    CHECK(params.transpose_device_bytes == 0);
    CHECK_OK(cmrscl_matrix_prepare_transpose(m, NULL, &t)); /* automatic again */
    CHECK(strcmp(t.height_source, "user") != 0);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a0), cmrscl_csr_free(&a);
}

static void test_buffers_and_misuse(cmrscl_context ctx, cmrscl_precision p)
{
    cmrscl_csr a0;
    test_matrix_build(6, &a0); /* 70 x 600 with a dense row: A^T has a dense column */
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, &a0, NULL, &m));
    if (!m)
        return;
    size_t vs = cmrscl_precision_size(p);
    double *xd;
    test_seed(5);
    void *x = random_vector(a0.rows, p, &xd), *y = calloc(a0.cols, vs), *yh = calloc(a0.cols, vs);
    cl_context context;
    test_cl_device(ctx, &context);
    cl_int err;
    cl_mem xb = clCreateBuffer(context, CL_MEM_COPY_HOST_PTR, vs * a0.rows, x, &err);
    cl_mem yb = clCreateBuffer(context, CL_MEM_READ_WRITE, vs * a0.cols, NULL, &err);
    cl_mem small = clCreateBuffer(context, CL_MEM_READ_WRITE, vs * (a0.rows - 1), NULL, &err);
    cl_event done = NULL;
    CHECK_OK(cmrscl_spmv_op(m, CMRSCL_TRANSPOSE, 2.0, xb, 0.0, yb, NULL, 0, NULL, &done));
    CHECK(done != NULL);
    cl_command_queue q;
    CHECK_OK(cmrscl_context_cl(ctx, NULL, &q));
    CHECK(clEnqueueReadBuffer(q, yb, CL_TRUE, 0, vs * a0.cols, y, 1, &done, NULL) == CL_SUCCESS);
    CHECK_OK(cmrscl_spmv_host_op(m, CMRSCL_TRANSPOSE, 2.0, x, 0.0, yh));
    CHECK_MSG(!memcmp(y, yh, vs * a0.cols), "buffers and host arrays give different bits");
    cmrscl_timing tm;
    CHECK_OK(cmrscl_spmv_time_op(m, CMRSCL_TRANSPOSE, 1.0, xb, 0.0, yb, 1, 3, &tm));
    CHECK(tm.repetitions == 3 && tm.median_ms > 0);
    /* misuse */
    CHECK_STATUS(cmrscl_spmv_op(m, (cmrscl_operation)7, 1, xb, 0, yb, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmv_host_op(NULL, CMRSCL_TRANSPOSE, 1, x, 0, y),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmv_op(m, CMRSCL_TRANSPOSE, 1, small, 0, yb, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "x holds"));
    /* y sized for A's product (rows elements) is too small for A^T's (cols) */
    cmrscl_matrix_release_transpose(m);
    CHECK_STATUS(cmrscl_spmv_op(m, CMRSCL_TRANSPOSE, 1, xb, 0, small, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "y holds"));
    cmrscl_params params = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_params(m, &params));
    CHECK_MSG(params.transpose_device_bytes == 0, "a refused call built the transpose");
    CHECK_STATUS(cmrscl_matrix_prepare_transpose(NULL, NULL, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_matrix_release_transpose(NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    if (done)
        clReleaseEvent(done);
    clReleaseMemObject(xb), clReleaseMemObject(yb), clReleaseMemObject(small);
    free(x), free(xd), free(y), free(yh);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a0);
}

int main(int argc, char **argv)
{
    cmrscl_precision prec;
    if (!test_precision_arg(argc, argv, &prec))
        return 2;
    if (prec == CMRSCL_FLOAT)
        test_host_transpose();
    test_host_transpose_threads();
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("transpose");
    if (prec == CMRSCL_DOUBLE && !ctx->info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    test_catalogue(ctx, prec);
    test_unsorted(ctx, prec);
    test_updates(ctx, prec);
    test_prepare(ctx, prec);
    test_buffers_and_misuse(ctx, prec);
    cmrscl_context_free(ctx);
    return test_finish("transpose");
}
