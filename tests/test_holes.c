/* test_holes.c - the layouts with holes (the MODULO and slice kernels) beyond the variant
 * matrix of test_kernel.c, on the device chosen by CMRSCL_DEVICE:
 *   holes        x holds Inf and NaN in every column no entry uses (so in any column a hole
 *                could name): y stays finite and right, in both layouts (and orders);
 *   determinism  the same product run after run, and from a second matrix, bit for bit;
 *   updates      update_values (host, in many chunks) and update_values_cl, in either
 *                precision, also of CSR with unsorted rows: the arrays and products of a fresh
 *                create with the new values, and every hole still 0 on the device (a slice's
 *                permutation is built by the first update, MODULO's at creation);
 *   jumps        narrow columns with jump words (steps past 16 bits): products with Inf and
 *                NaN where no entry is, and the updates, as above;
 *   options      bad MODULO and slice options fail with a message naming them;
 *                create_from_cl refuses both; the automatic plan never picks MODULO.
 * Usage: test_holes float|double */
#include "exec/exec.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static cmrscl_options modulo_options(int modulo, int warp, int height, cmrscl_layout layout,
                                     cmrscl_order order)
{
    cmrscl_options o = {0};
    o.kernel = CMRSCL_KERNEL_MODULO;
    o.modulo = modulo, o.warp = warp, o.height = height;
    o.layout = layout, o.order = order;
    o.reduce = CMRSCL_REDUCE_LOCAL; /* what runs on every device */
    return o;
}

static cmrscl_options slice_options(int height, cmrscl_layout layout)
{
    cmrscl_options o = {0};
    o.kernel = CMRSCL_KERNEL_SLICE;
    o.height = height, o.layout = layout;
    return o;
}

/* 45 x 40, entries only in odd columns, one dense row: with HEIGHT 16 and MODULO 2 of 8 lanes,
 * most steps need holes. */
static void holes_matrix(cmrscl_csr *out)
{
    int32_t ri[2000], ci[2000];
    double v[2000];
    int n = 0;
    test_seed(77);
    for (int32_t r = 0; r < 45; ++r) {
        int len = r == 20 ? 20 : (int)test_uniform(0, 9);
        for (int k = 0; k < len; ++k, ++n) {
            ri[n] = r;
            ci[n] = r == 20 ? 2 * k + 1 : 2 * (int32_t)test_uniform(0, 19) + 1;
            v[n] = test_uniform(-1, 1);
        }
    }
    CHECK_OK(cmrscl_csr_from_coo(45, 40, n, ri, ci, v, out));
}

static void test_holes(cmrscl_context ctx, cmrscl_precision prec)
{
    cmrscl_csr a;
    holes_matrix(&a);
    cmrscl_csr ref = test_csr_rounded(&a, prec);
    double x[40], y0[45], y[45];
    for (int j = 0; j < 40; ++j) /* unused columns: Inf, -Inf and NaN in turn */
        x[j] = j % 2        ? (prec == CMRSCL_FLOAT ? (double)(float)test_uniform(-1, 1)
                                                    : test_uniform(-1, 1))
               : j % 6 == 0 ? INFINITY
               : j % 6 == 2 ? -INFINITY
                            : NAN;
    memset(y0, 0, sizeof y0);
    void *xd = test_values_in(x, 40, prec), *yd = test_values_in(y0, 45, prec);
    for (int k = 0; k < 6; ++k) {
        cmrscl_layout layout = k % 2 ? CMRSCL_LAYOUT_UNPACKED : CMRSCL_LAYOUT_PACKED;
        cmrscl_options o = k < 4 ? modulo_options(2, 8, 16, layout,
                                                  k / 2 ? CMRSCL_ORDER_ROWS : CMRSCL_ORDER_COLUMNS)
                                 : slice_options(k == 4 ? 32 : 4, layout);
        cmrscl_matrix m = NULL;
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, &o, &m));
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        CHECK_OK(cmrscl_matrix_params(m, &p));
        CHECK_MSG(p.stored_entries > p.nnz, "case %d: no holes (%lld stored, %lld nonzeros)", k,
                  (long long)p.stored_entries, (long long)p.nnz);
        CHECK_OK(cmrscl_spmv_host(m, 1.0, xd, 0.0, yd));
        bool finite = true;
        for (int i = 0; i < 45; ++i) {
            y[i] = test_value_at(yd, prec, i);
            finite = finite && isfinite(y[i]);
        }
        CHECK_MSG(finite, "case %d: a hole met an Inf or NaN of x", k);
        double ratio = INFINITY;
        CHECK_OK(cmrscl_csr_spmv_check(&ref, 1.0, x, 0.0, y0, y,
                                       prec == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, NULL, &ratio));
        CHECK_MSG(ratio <= 1.0, "case %d: error %.3g x the rounding bound", k, ratio);
        cmrscl_matrix_free(m);
    }
    free(xd), free(yd);
    cmrscl_csr_free(&ref), cmrscl_csr_free(&a);
}

/* y of one product with random x (fixed seed) into y (rows elements of prec). */
static void product(cmrscl_matrix m, const cmrscl_csr *a, cmrscl_precision prec, void *y)
{
    double *x = malloc(sizeof(double) * ((size_t)a->cols + 1));
    test_seed(5);
    for (int32_t j = 0; j < a->cols; ++j)
        x[j] = test_uniform(-1, 1);
    void *xd = test_values_in(x, a->cols, prec);
    CHECK_OK(cmrscl_spmv_host(m, 1.0, xd, 0.0, y));
    free(x), free(xd);
}

static void test_determinism(cmrscl_context ctx, cmrscl_precision prec)
{
    cmrscl_csr a;
    test_matrix_build(9, &a); /* 1500 x 1500 random */
    for (int k = 0; k < 2; ++k) {
        cmrscl_options o =
            k ? slice_options(32, CMRSCL_LAYOUT_PACKED)
              : modulo_options(8, 32, 16, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_COLUMNS);
        cmrscl_matrix m = NULL, again = NULL;
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, &o, &m));
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, &o, &again));
        size_t bytes = cmrscl_precision_size(prec) * (size_t)a.rows;
        void *first = malloc(bytes), *y = malloc(bytes);
        product(m, &a, prec, first);
        for (int run = 0; run < 4; ++run) {
            product(run == 3 ? again : m, &a, prec, y);
            CHECK_MSG(!memcmp(first, y, bytes), "%s, run %d: y differs from the first run",
                      k ? "slice" : "modulo", run);
        }
        free(first), free(y);
        cmrscl_matrix_free(m), cmrscl_matrix_free(again);
    }
    cmrscl_csr_free(&a);
}

/* Every hole of the device arrays still holds 0, and the holes are all there: stored
 * entries less the nonzeros (a check of holes that found none would check nothing). */
static size_t holes_seen; /* over the run: the updates must meet some */

static void check_holes_zero(cmrscl_matrix m, const char *what)
{
    const cmrscl_params *p = &m->params;
    size_t n = (size_t)p->stored_entries, vs = cmrscl_precision_size(p->precision);
    size_t col_bytes = cmrs_matrix_column_bytes(p, n);
    uint32_t *col = malloc(col_bytes);
    char *val = malloc(vs * (n + 1));
    cl_command_queue q = m->ctx->queue;
    cl_int err =
        n ? clEnqueueReadBuffer(q, m->buf[BUF_COL_IND], CL_TRUE, 0, col_bytes, col, 0, NULL, NULL) |
                clEnqueueReadBuffer(q, m->buf[BUF_VALUES], CL_TRUE, 0, vs * n, val, 0, NULL, NULL)
          : CL_SUCCESS;
    CHECK(err == CL_SUCCESS);
    /* narrow columns: the strips' first columns, then a 16-bit word a position */
    const uint16_t *narrow = (const uint16_t *)(col + p->strips);
    size_t holes = 0, nonzero = 0;
    for (size_t k = 0; err == CL_SUCCESS && k < n; ++k)
        if (p->column_bits == 16 ? narrow[k] == CMRS_NARROW_HOLE ||
                                       (p->column_jumps && (narrow[k] & CMRS_NARROW_JUMP))
                                 : col[k] == CMRS_HOLE)
            ++holes, nonzero += test_value_at(val, p->precision, k) != 0.0;
    CHECK_MSG(nonzero == 0, "%s: %zu of %zu holes hold a value", what, nonzero, holes);
    CHECK_MSG(err != CL_SUCCESS || holes == (size_t)(p->stored_entries - p->nnz),
              "%s: %zu holes found, %lld stored entries for %lld nonzeros", what, holes,
              (long long)p->stored_entries, (long long)p->nnz);
    holes_seen += holes;
    free(col), free(val);
}

/* New values through both update calls against a fresh create; `unsorted` reverses the
 * columns of every row of the CSR given to the create (a permutation built on the host). */
static void check_update(cmrscl_context ctx, cmrscl_precision prec, const cmrscl_csr *a,
                         const cmrscl_options *o, bool unsorted, const char *what)
{
    cmrscl_csr b = test_csr_rounded(a, CMRSCL_DOUBLE); /* a copy */
    if (unsorted)
        test_csr_reverse_rows(&b);
    double *fresh_values = malloc(sizeof(double) * ((size_t)b.nnz + 1));
    for (int64_t k = 0; k < b.nnz; ++k)
        fresh_values[k] = test_uniform(-2, 2);
    int32_t *rp = test_row_ptr32(&b);
    void *old_v = test_values_in(b.values, b.nnz, prec);
    void *new_v = test_values_in(fresh_values, b.nnz, prec);
    cmrscl_matrix m = NULL, cl_m = NULL, fresh = NULL;
    CHECK_OK(cmrscl_matrix_create(ctx, prec, b.rows, b.cols, rp, b.col_ind, old_v, o, &m));
    CHECK_OK(cmrscl_matrix_create(ctx, prec, b.rows, b.cols, rp, b.col_ind, old_v, o, &cl_m));
    CHECK_OK(cmrscl_matrix_create(ctx, prec, b.rows, b.cols, rp, b.col_ind, new_v, o, &fresh));
    if (m && cl_m && fresh) {
        /* host: the values in double (converted on the device), in chunks of a few strips */
        CHECK_OK(cmrscl_matrix_update_values(m, fresh_values, CMRSCL_DOUBLE));
        cl_int err;
        size_t bytes = cmrscl_precision_size(prec) * ((size_t)b.nnz + 1);
        cl_mem buf = clCreateBuffer(ctx->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                                    new_v, &err);
        CHECK_OK(cmrscl_matrix_update_values_cl(cl_m, buf, prec));
        clFinish(ctx->queue);
        clReleaseMemObject(buf);
        check_same_cmrs(fresh, m, what);
        check_same_cmrs(fresh, cl_m, what);
        check_holes_zero(m, what);
        check_holes_zero(cl_m, what);
        size_t ybytes = cmrscl_precision_size(prec) * ((size_t)b.rows + 1);
        void *y_fresh = malloc(ybytes), *y_m = malloc(ybytes), *y_cl = malloc(ybytes);
        product(fresh, &b, prec, y_fresh);
        product(m, &b, prec, y_m);
        product(cl_m, &b, prec, y_cl);
        CHECK_MSG(!memcmp(y_fresh, y_m, ybytes - cmrscl_precision_size(prec)) &&
                      !memcmp(y_fresh, y_cl, ybytes - cmrscl_precision_size(prec)),
                  "%s: products after the updates differ from a fresh create's", what);
        free(y_fresh), free(y_m), free(y_cl);
    }
    cmrscl_matrix_free(m), cmrscl_matrix_free(cl_m), cmrscl_matrix_free(fresh);
    free(rp), free(old_v), free(new_v), free(fresh_values);
    cmrscl_csr_free(&b);
}

static void test_updates(cmrscl_context ctx, cmrscl_precision prec)
{
    cmrs_matrix_update_chunk = 100; /* many chunks, each of whole strips */
    static const int matrices[] = {5, 6, 9, 3};
    for (int i = 0; i < 4; ++i) {
        cmrscl_csr a;
        const char *name = test_matrix_build(matrices[i], &a);
        for (int k = 0; k < 5; ++k) {
            cmrscl_options o =
                k == 0   ? modulo_options(8, 32, 16, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_COLUMNS)
                : k == 1 ? modulo_options(2, 8, 5, CMRSCL_LAYOUT_UNPACKED, CMRSCL_ORDER_ROWS)
                : k == 2 ? modulo_options(4, 16, 3, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_COLUMNS)
                : k == 3 ? slice_options(32, CMRSCL_LAYOUT_PACKED)
                         : slice_options(4, CMRSCL_LAYOUT_UNPACKED);
            bool unsorted = k == 2 || k == 4;
            o.index_bits = unsorted ? 64 : 0;
            o.values = CMRSCL_VALUES_PLAIN; /* coded values' updates: test_kernel.c */
            char what[160];
            snprintf(what, sizeof what, "%s, %s %d, warp %d, height %d%s", name,
                     k < 3 ? "modulo" : "slice", o.modulo, o.warp, o.height,
                     unsorted ? ", unsorted rows, 64-bit" : "");
            check_update(ctx, prec, &a, &o, unsorted, what);
        }
        cmrscl_csr_free(&a);
    }
}

/* 300 x 150000, three far bands: row r's columns r .. r + 13 (not r + 1 in every fifth
 * row), 70000 + r, 70003 + r and 140000 + r % 7 (not in every eleventh row); values from
 * three. Steps of about 70000 - past the 16-bit words - and of at most 3: narrow columns
 * with a jump word before each long step, with a dictionary (2 bits) or without; about 2
 * jumps in 17 entries, few enough for the plan to take them itself. */
static void far_bands(cmrscl_csr *out)
{
    enum { N = 300 * 17 };
    int32_t *ri = malloc(sizeof(int32_t) * N), *ci = malloc(sizeof(int32_t) * N);
    double *v = malloc(sizeof(double) * N);
    static const double three[] = {1.5, -0.25, 2};
    int n = 0;
    for (int32_t r = 0; r < 300; ++r)
        for (int k = 0; k < 17; ++k) {
            if ((k == 1 && r % 5 == 0) || (k == 16 && r % 11 == 0))
                continue;
            ri[n] = r, v[n] = three[(r + k) % 3];
            ci[n++] = k < 14 ? r + k : k == 14 ? 70000 + r : k == 15 ? 70003 + r : 140000 + r % 7;
        }
    CHECK_OK(cmrscl_csr_from_coo(300, 150000, n, ri, ci, v, out));
    free(ri), free(ci), free(v);
}

/* Jump words (host/format/cmrs_narrow.c) on the far bands: taken by the plan itself in slices
 * (packed and unpacked, plain values and a dictionary), y and the block product against the
 * CPU reference with Inf and NaN in every column no entry uses - a jump loads no x - and the
 * values updates (the permutation built on the device through the jump words; the
 * dictionary dropped around them) against a fresh create. */
static void test_jumps(cmrscl_context ctx, cmrscl_precision prec)
{
    cmrscl_csr a;
    far_bands(&a);
    cmrscl_csr ref = test_csr_rounded(&a, prec);
    char *used = calloc((size_t)a.cols, 1);
    for (int64_t k = 0; k < a.nnz; ++k)
        used[a.col_ind[k]] = 1;
    double *x = malloc(sizeof(double) * (size_t)a.cols), y0[300] = {0}, y[300];
    test_seed(11);
    for (int32_t j = 0; j < a.cols; ++j)
        x[j] = used[j] ? test_uniform(-1, 1) : j % 3 == 0 ? INFINITY : j % 3 == 1 ? -INFINITY : NAN;
    for (int32_t j = 0; prec == CMRSCL_FLOAT && j < a.cols; ++j)
        x[j] = (double)(float)x[j];
    void *xd = test_values_in(x, a.cols, prec), *yd = test_values_in(y0, 300, prec);
    for (int k = 0; k < 4; ++k) {
        cmrscl_options o = slice_options(k % 2 ? 8 : 32, k % 2 ? CMRSCL_LAYOUT_UNPACKED : 0);
        o.values = k < 2 ? CMRSCL_VALUES_PLAIN : CMRSCL_VALUES_AUTO;
        char what[96];
        snprintf(what, sizeof what, "far bands, slices of %d%s, %s values", o.height,
                 k % 2 ? " unpacked" : "", k < 2 ? "plain" : "coded");
        cmrscl_matrix m = NULL;
        cmrscl_params p = {0};
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, &o, &m));
        CHECK_OK(cmrscl_matrix_params(m, &p));
        CHECK_MSG(p.column_bits == 16 && p.column_jumps > 0 &&
                      test_contains(p.build_options, "-DNARROW_JUMPS=1") &&
                      (k < 2) == (p.values == CMRSCL_VALUES_PLAIN),
                  "%s: column bits %d, %lld jumps, values %d (%s)", what, p.column_bits,
                  (long long)p.column_jumps, (int)p.values, p.plan_reason);
        CHECK_OK(cmrscl_spmv_host(m, 1.0, xd, 0.0, yd));
        for (int i = 0; i < 300; ++i)
            y[i] = test_value_at(yd, prec, i);
        double ratio = INFINITY;
        CHECK_OK(cmrscl_csr_spmv_check(&ref, 1.0, x, 0.0, y0, y,
                                       prec == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, NULL, &ratio));
        CHECK_MSG(ratio <= 1.0, "%s: error %.3g x the rounding bound", what, ratio);
        /* the block product's walk: three vectors, x three times over, column-major */
        size_t vs = cmrscl_precision_size(prec);
        char *xs = malloc(3 * vs * (size_t)a.cols), *ys = malloc(3 * vs * 300);
        for (int q = 0; q < 3; ++q)
            memcpy(xs + (size_t)q * vs * (size_t)a.cols, xd, vs * (size_t)a.cols);
        CHECK_OK(cmrscl_spmm_host(m, CMRSCL_COLUMN_MAJOR, 3, 1.0, xs, 0, 0.0, ys, 0));
        for (int q = 0; q < 3; ++q) {
            for (int i = 0; i < 300; ++i)
                y[i] = test_value_at(ys + (size_t)q * vs * 300, prec, i);
            ratio = INFINITY;
            CHECK_OK(cmrscl_csr_spmv_check(&ref, 1.0, x, 0.0, y0, y,
                                           prec == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, NULL, &ratio));
            CHECK_MSG(ratio <= 1.0, "%s, block product, vector %d: error %.3g x the bound", what, q,
                      ratio);
        }
        free(xs), free(ys);
        if (p.values == CMRSCL_VALUES_PLAIN) /* a dictionary has no value a position */
            check_holes_zero(m, what);
        cmrscl_matrix_free(m);
        check_update(ctx, prec, &a, &o, false, what);
    }
    free(xd), free(yd), free(x), free(used);
    cmrscl_csr_free(&ref), cmrscl_csr_free(&a);
}

static void expect_error(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_options *o,
                         cmrscl_status status, const char *words)
{
    cmrscl_matrix m = NULL;
    CHECK_STATUS(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, a, o, &m), status);
    CHECK_MSG(test_contains(cmrscl_last_error(), words), "message \"%s\" lacks \"%s\"",
              cmrscl_last_error(), words);
    cmrscl_matrix_free(m);
}

static void test_options(cmrscl_context ctx)
{
    cmrscl_csr a;
    test_matrix_build(9, &a);
    cmrscl_options o = modulo_options(3, 8, 16, 0, 0);
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "modulo 3");
    o.modulo = 64;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "modulo 64");
    o.modulo = 16; /* wider than the warp of 8 */
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "must divide the warp");
    o.modulo = 0, o.warp = 1;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "at least 2 lanes");
    o.warp = 8, o.work_group_size = 16;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "one warp per work-group");
    o.work_group_size = 0, o.tile = 64;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "does not split");
    o = modulo_options(8, 8, 16, 0, 0);
    o.kernel = CMRSCL_KERNEL_STRIP;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "option of the MODULO kernel");
    o.kernel = (cmrscl_kernel)5;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "kernel 5");
    /* the slice kernel: a work-item per row or per several rows, from row-ordered strips,
     * never split */
    o = slice_options(24, 0);
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "height 24 must be a power of two");
    o = slice_options(32, 0), o.warp = 64;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "warp 64 must divide its height 32");
    o = slice_options(32, 0), o.warp = 3;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "warp 3 must divide its height 32");
    o = slice_options(32, 0), o.order = CMRSCL_ORDER_COLUMNS;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "slice kernel needs row-ordered");
    o = slice_options(32, 0), o.tile = 64;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "slice kernel does not split");
    /* narrow columns: 16 or 32 bits, the slice kernel's, steps that fit */
    o = slice_options(32, 0), o.column_bits = 8;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "column_bits 8: expected 16, 32");
    o = modulo_options(8, 8, 16, 0, 0), o.column_bits = 16;
    expect_error(ctx, &a, &o, CMRSCL_ERROR_INVALID_ARGUMENT,
                 "narrow and implied columns are the slice");
    cmrscl_matrix m = NULL;
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    cmrscl_csr far = {
        2, 70000, 4, (int64_t[]){0, 2, 4}, (int32_t[]){0, 65534, 1, 2}, (double[]){1, 2, 3, 4}};
    o = slice_options(32, 0), o.column_bits = 16, o.values = CMRSCL_VALUES_PLAIN;
    /* the largest step 16 bits hold beside no dictionary index, then one past it: a jump */
    for (int32_t last = 65534; last <= 65536; last += 2) {
        far.col_ind[1] = last;
        cmrscl_matrix narrow = NULL;
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &far, &o, &narrow));
        CHECK_OK(cmrscl_matrix_params(narrow, &p));
        CHECK_MSG(p.column_bits == 16 && p.column_jumps == (last > 65534),
                  "a step of %d: column bits %d, %lld jumps", last, p.column_bits,
                  (long long)p.column_jumps);
        if (narrow) {
            float x[70000] = {0}, y[2];
            x[1] = 1.0f, x[2] = 10.0f, x[last] = 100.0f;
            CHECK_OK(cmrscl_spmv_host(narrow, 1.0, x, 0.0, y));
            CHECK_MSG(y[0] == 200.0f && y[1] == 43.0f, "a step of %d: y = (%g, %g)", last, y[0],
                      y[1]);
        }
        cmrscl_matrix_free(narrow);
    }
    /* past what a jump and its entry reach: refused when asked for, 32-bit otherwise */
    far.cols = 100000000, far.col_ind[1] = 99999999;
    expect_error(ctx, &far, &o, CMRSCL_ERROR_INVALID_ARGUMENT, "beyond a jump's");
    o.column_bits = 0;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &far, &o, &m));
    CHECK_OK(cmrscl_matrix_params(m, &p));
    CHECK_MSG(p.column_bits == 32 && p.column_jumps == 0 && test_contains(p.plan_reason, "beyond"),
              "a step beyond a jump's reach: column bits %d (%s)", p.column_bits, p.plan_reason);
    cmrscl_matrix_free(m);
    /* the default MODULO: 8 slot sets, or the warp when narrower */
    o = modulo_options(0, 4, 16, 0, 0);
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &a, &o, &m));
    CHECK_OK(cmrscl_matrix_params(m, &p));
    CHECK_MSG(p.modulo == 4 && test_contains(p.build_options, "-DMODULO=4"), "default modulo %d",
              p.modulo);
    cmrscl_matrix_free(m);
    /* the device conversion has no MODULO layout */
    cl_context cl;
    test_cl_device(ctx, &cl);
    int32_t *rp = test_row_ptr32(&a);
    float *v = test_values_in(a.values, a.nnz, CMRSCL_FLOAT);
    cl_int err;
    cl_mem brp = clCreateBuffer(cl, CL_MEM_COPY_HOST_PTR, 4 * ((size_t)a.rows + 1), rp, &err);
    cl_mem bci = clCreateBuffer(cl, CL_MEM_COPY_HOST_PTR, 4 * (size_t)a.nnz, a.col_ind, &err);
    cl_mem bv = clCreateBuffer(cl, CL_MEM_COPY_HOST_PTR, 4 * (size_t)a.nnz, v, &err);
    for (int k = 0; k < 2; ++k) {
        o = k ? slice_options(32, 0) : modulo_options(8, 8, 16, 0, 0);
        CHECK_STATUS(cmrscl_matrix_create_from_cl(ctx, CMRSCL_FLOAT, a.rows, a.cols, (int32_t)a.nnz,
                                                  brp, bci, bv, &o, &m),
                     CMRSCL_ERROR_UNSUPPORTED);
        CHECK(m == NULL &&
              test_contains(cmrscl_last_error(), k ? "slice kernel's layout is built"
                                                   : "modulo kernel's layout is built"));
    }
    clReleaseMemObject(brp), clReleaseMemObject(bci), clReleaseMemObject(bv);
    free(rp), free(v);
    cmrscl_csr_free(&a);
    /* the automatic plan (nothing measured on a GPU yet) never picks MODULO */
    for (int i = 0; i < test_matrix_count(); ++i) {
        test_matrix_build(i, &a);
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &a, NULL, &m));
        CHECK_OK(cmrscl_matrix_params(m, &p));
        CHECK_MSG(p.kernel != CMRSCL_KERNEL_MODULO && p.modulo == 0 &&
                      (p.kernel == CMRSCL_KERNEL_SLICE || p.stored_entries == p.nnz),
                  "matrix %d: the automatic plan chose MODULO (%s)", i, p.build_options);
        cmrscl_matrix_free(m);
        cmrscl_csr_free(&a);
    }
}

int main(int argc, char **argv)
{
    cmrscl_precision prec;
    if (!test_precision_arg(argc, argv, &prec))
        return 2;
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("holes");
    if (prec == CMRSCL_DOUBLE && !ctx->info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    test_holes(ctx, prec);
    test_determinism(ctx, prec);
    test_updates(ctx, prec);
    test_jumps(ctx, prec);
    CHECK_MSG(holes_seen > 0, "the values updates met no hole: their check checked nothing");
    if (prec == CMRSCL_FLOAT)
        test_options(ctx);
    cmrscl_context_free(ctx);
    return test_finish("holes");
}
