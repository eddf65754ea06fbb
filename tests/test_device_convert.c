/* test_device_convert.c - cmrscl_matrix_create_from_cl and the values-only updates against
 * the host path, on the device chosen by CMRSCL_DEVICE, for the awkward-matrix catalogue and
 * plans that force each family, layout, order and the split of long strips:
 *   same      create_from_cl gives the host create's plan and bit-identical CMRS arrays,
 *   product   its products match the CPU double reference (y poisoned for beta = 0),
 *   update    update_values (host) and update_values_cl, in either precision, on matrices of
 *             either path give the arrays of a fresh host create with the new values, and
 *             right products; also host CSR with unsorted rows and with duplicates, the
 *             order of an update between two products on the queue, and an out-of-order
 *             queue,
 *   errors    bad device CSR and bad buffers: the status, a message naming the problem.
 * Some plans force 64-bit entry indices: the conversion kernels write a 64-bit StripPtr, the
 * updates build and read a 64-bit permutation, on both paths.
 * Usage: test_device_convert float|double | errors */
#include "exec/exec.h"
#include "io/io.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

typedef struct env {
    cmrscl_context ctx;
    cl_context cl;
    cl_command_queue queue;
    cmrscl_device_info dev;
    cmrscl_precision prec;
} env;

/* A plan forced through the options; kernel AUTO: no options at all (the rule's plan). */
static const struct plan_case {
    const char *name;
    cmrscl_kernel kernel;
    int height;
    cmrscl_layout layout;
    cmrscl_order order;
    int tile; /* -1: never split */
    bool one_warp_groups;
    int index_bits; /* 0: automatic (32 here) */
} plans[] = {
    {"automatic", CMRSCL_KERNEL_AUTO, 0, 0, 0, 0, false, 0},
    {"strip h4 packed columns", CMRSCL_KERNEL_STRIP, 4, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_COLUMNS,
     -1, false, 0},
    {"strip h3 packed rows", CMRSCL_KERNEL_STRIP, 3, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_ROWS, -1,
     false, 0},
    {"strip h16 unpacked columns", CMRSCL_KERNEL_STRIP, 16, CMRSCL_LAYOUT_UNPACKED,
     CMRSCL_ORDER_COLUMNS, -1, false, 0},
    {"strip h1 columns", CMRSCL_KERNEL_STRIP, 1, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_COLUMNS, -1,
     false, 0},
    {"strip h64 packed columns", CMRSCL_KERNEL_STRIP, 64, CMRSCL_LAYOUT_PACKED,
     CMRSCL_ORDER_COLUMNS, -1, true, 0},
    {"strip h33 unpacked columns", CMRSCL_KERNEL_STRIP, 33, CMRSCL_LAYOUT_UNPACKED,
     CMRSCL_ORDER_COLUMNS, -1, true, 0},
    {"segment h32 packed", CMRSCL_KERNEL_SEGMENT, 32, CMRSCL_LAYOUT_PACKED, CMRSCL_ORDER_ROWS, -1,
     false, 0},
    {"segment h100 unpacked", CMRSCL_KERNEL_SEGMENT, 100, CMRSCL_LAYOUT_UNPACKED, CMRSCL_ORDER_ROWS,
     -1, false, 0},
    {"split strip h3 tiles of 7 columns", CMRSCL_KERNEL_STRIP, 3, CMRSCL_LAYOUT_PACKED,
     CMRSCL_ORDER_COLUMNS, 7, false, 0},
    {"split segment h8 tiles of 7", CMRSCL_KERNEL_SEGMENT, 8, CMRSCL_LAYOUT_PACKED,
     CMRSCL_ORDER_ROWS, 7, false, 0},
    /* a height the device's table of longest strips lacks, the split left to the plan: the
     * device path fetches RowPtr for it and plans as the host does */
    {"strip h3 packed rows, automatic split", CMRSCL_KERNEL_STRIP, 3, CMRSCL_LAYOUT_PACKED,
     CMRSCL_ORDER_ROWS, 0, false, 0},
    {"strip h4 packed columns, 64-bit", CMRSCL_KERNEL_STRIP, 4, CMRSCL_LAYOUT_PACKED,
     CMRSCL_ORDER_COLUMNS, -1, false, 64},
    {"segment h32 unpacked, 64-bit", CMRSCL_KERNEL_SEGMENT, 32, CMRSCL_LAYOUT_UNPACKED,
     CMRSCL_ORDER_ROWS, -1, false, 64},
    {"split strip h3 tiles of 7 columns, 64-bit", CMRSCL_KERNEL_STRIP, 3, CMRSCL_LAYOUT_PACKED,
     CMRSCL_ORDER_COLUMNS, 7, false, 64},
};
#define PLAN_COUNT ((int)(sizeof plans / sizeof plans[0]))

static const cmrscl_options *plan_options(const env *e, const struct plan_case *c,
                                          cmrscl_options *o)
{
    if (c->kernel == CMRSCL_KERNEL_AUTO)
        return NULL;
    memset(o, 0, sizeof *o);
    o->kernel = c->kernel;
    o->height = c->height;
    o->layout = c->layout;
    o->order = c->order;
    o->tile = c->tile;
    o->index_bits = c->index_bits;
    if (c->one_warp_groups) /* tall strips stay inside local memory */
        o->work_group_size = (int)e->dev.warp_width;
    return o;
}

/* ---- small helpers ---- */

static cl_mem upload(const env *e, const void *data, size_t bytes)
{
    if (bytes == 0)
        return NULL;
    cl_int err = CL_SUCCESS;
    cl_mem b =
        clCreateBuffer(e->cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, (void *)data, &err);
    CHECK_MSG(b != NULL, "clCreateBuffer of %zu bytes failed (%d)", bytes, (int)err);
    return b;
}

static void release(cl_mem b)
{
    if (b)
        clReleaseMemObject(b);
}

/* A copy of a with values a*scale + shift. */
static cmrscl_csr with_values(const cmrscl_csr *a, double scale, double shift)
{
    cmrscl_csr b = test_csr_rounded(a, CMRSCL_DOUBLE);
    for (int64_t k = 0; k < a->nnz; ++k)
        b.values[k] = a->values[k] * scale + shift;
    return b;
}

/* The CSR a in device buffers (values in precision p). */
typedef struct device_csr {
    cl_mem row_ptr, col_ind, values;
} device_csr;

static device_csr to_device(const env *e, const cmrscl_csr *a, cmrscl_precision p)
{
    void *v = test_values_in(a->values, a->nnz, p);
    int32_t *rp = test_row_ptr32(a); /* the device path takes int32 row pointers */
    device_csr d = {upload(e, rp, sizeof(int32_t) * ((size_t)a->rows + 1)),
                    upload(e, a->col_ind, sizeof(int32_t) * (size_t)a->nnz),
                    upload(e, v, cmrscl_precision_size(p) * (size_t)a->nnz)};
    free(v), free(rp);
    return d;
}

static void device_csr_free(device_csr *d)
{
    release(d->row_ptr), release(d->col_ind), release(d->values);
    memset(d, 0, sizeof *d);
}

/* ---- checks ---- */

/* One product against the CPU double reference of `a` (values rounded to the precision). */
static void check_product(const env *e, cmrscl_matrix m, const cmrscl_csr *a, double alpha,
                          double beta, const char *what)
{
    cmrscl_csr ref = test_csr_rounded(a, e->prec);
    size_t rows = (size_t)a->rows, cols = (size_t)a->cols;
    double *x = malloc(8 * (cols + 1)), *y0 = malloc(8 * (rows + 1)), *y = malloc(8 * (rows + 1));
    for (size_t j = 0; j < cols; ++j)
        x[j] = test_uniform(-1, 1);
    for (size_t i = 0; i < rows; ++i)
        y0[i] = beta == 0.0 ? NAN : test_uniform(-1, 1);
    /* x and y0 as the device sees them: rounded to the precision */
    void *xd = test_values_in(x, (int32_t)cols, e->prec),
         *yd = test_values_in(y0, (int32_t)rows, e->prec);
    for (size_t j = 0; j < cols; ++j)
        x[j] = e->prec == CMRSCL_FLOAT ? (double)((float *)xd)[j] : x[j];
    for (size_t i = 0; i < rows; ++i)
        y0[i] = e->prec == CMRSCL_FLOAT ? (double)((float *)yd)[i] : y0[i];
    CHECK_OK(cmrscl_spmv_host(m, alpha, xd, beta, yd));
    for (size_t i = 0; i < rows; ++i)
        y[i] = e->prec == CMRSCL_FLOAT ? (double)((float *)yd)[i] : ((double *)yd)[i];
    double ratio = INFINITY;
    CHECK_OK(cmrscl_csr_spmv_check(&ref, alpha, x, beta, y0, y,
                                   e->prec == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, NULL, &ratio));
    CHECK_MSG(ratio <= 1.0, "%s: alpha %g beta %g: error %.3g x the rounding bound", what, alpha,
              beta, ratio);
    free(x), free(y0), free(y), free(xd), free(yd);
    cmrscl_csr_free(&ref);
}

static void check_products(const env *e, cmrscl_matrix m, const cmrscl_csr *a, const char *what)
{
    check_product(e, m, a, 1.0, 0.0, what);
    check_product(e, m, a, -1.5, 0.5, what);
}

/* The host path's matrix of a with these options (values rounded from double), its values
 * plain and columns 32-bit: the device path examines neither (cmrscl_values, column_bits). */
static cmrscl_matrix host_matrix(const env *e, const cmrscl_csr *a, const cmrscl_options *o)
{
    cmrscl_matrix m = NULL;
    cmrscl_options plain = o ? *o : (cmrscl_options){0};
    plain.values = CMRSCL_VALUES_PLAIN;
    plain.column_bits = o && o->column_bits ? o->column_bits : 32;
    CHECK_OK(cmrscl_matrix_create_from_csr(e->ctx, e->prec, a, &plain, &m));
    return m;
}

/* ---- same / product / update ---- */

/* Updates m to the values of b (a's pattern), from the host (in `p`) or from a device buffer
 * (in `p`), and checks the arrays against a fresh host create and the products. */
static void check_update(const env *e, cmrscl_matrix m, const cmrscl_csr *b,
                         const cmrscl_options *o, bool from_device, cmrscl_precision p,
                         const char *what)
{
    char label[256];
    snprintf(label, sizeof label, "%s, update_values%s from %s", what, from_device ? "_cl" : "",
             p == CMRSCL_FLOAT ? "float" : "double");
    cmrscl_csr bp = test_csr_rounded(b, p); /* the values as sent */
    b = &bp;
    void *v = test_values_in(b->values, b->nnz, p);
    if (from_device) {
        cl_mem buf = upload(e, v, cmrscl_precision_size(p) * (size_t)b->nnz);
        CHECK_OK(cmrscl_matrix_update_values_cl(m, buf, p));
        release(buf); /* the runtime keeps it until the gather ran */
    } else {
        CHECK_OK(cmrscl_matrix_update_values(m, v, p));
        memset(v, 0xff, cmrscl_precision_size(p) * (size_t)b->nnz); /* reusable at return */
    }
    free(v);
    cmrscl_matrix ref = host_matrix(e, b, o);
    if (ref)
        check_same_cmrs(ref, m, label);
    check_products(e, m, b, label);
    cmrscl_matrix_free(ref);
    cmrscl_csr_free(&bp);
}

static cmrscl_precision other(const env *e)
{
    return !e->dev.fp64 || e->prec == CMRSCL_DOUBLE ? CMRSCL_FLOAT : CMRSCL_DOUBLE;
}

/* One matrix with one plan: both paths, then updates of each. */
static void run_case(const env *e, const cmrscl_csr *a, const struct plan_case *c, const char *name)
{
    char what[256];
    snprintf(what, sizeof what, "%s, %s, %s", name, c->name, cmrscl_precision_name(e->prec));
    cmrscl_options storage;
    const cmrscl_options *o = plan_options(e, c, &storage);
    cmrscl_matrix host = host_matrix(e, a, o), dev = NULL;
    device_csr d = to_device(e, a, e->prec);
    CHECK_OK(cmrscl_matrix_create_from_cl(e->ctx, e->prec, a->rows, a->cols, a->nnz, d.row_ptr,
                                          d.col_ind, d.values, o, &dev));
    device_csr_free(&d); /* the matrix keeps nothing of the caller's buffers */
    bool alike = true;
    cmrscl_options twin;
    if (host && dev && !o && plan_has_holes(host->params.kernel)) {
        /* The automatic plan took a layout the host alone builds (slices on a CPU): the
         * device path, without the host's arrays, takes the rule's plan without it - never
         * a layout with holes - and its host twin is made with that plan, given by hand. */
        const cmrscl_params *p = &dev->params;
        CHECK_MSG(!plan_has_holes(p->kernel), "%s: the device path took %s", what,
                  p->build_options);
        twin = test_options_of_plan(p);
        cmrscl_matrix_free(host);
        host = host_matrix(e, a, &twin);
        alike = false, o = &twin; /* the updates' fresh twins too */
    }
    if (host && dev) {
        test_check_same_plan(host, dev, alike, what);
        check_same_cmrs(host, dev, what);
        check_products(e, dev, a, what);
        cmrscl_csr b = with_values(a, 2.0, 1.0), b3 = with_values(a, -3.0, 0.5);
        check_update(e, dev, &b, o, false, e->prec, what);
        check_update(e, dev, &b3, o, true, other(e), what);
        cmrs_matrix_update_chunk = 3; /* many chunks, most of them one strip longer than that */
        check_update(e, host, &b, o, false, other(e), what);
        cmrs_matrix_update_chunk = (size_t)4 << 20;
        check_update(e, host, &b3, o, true, e->prec, what);
        check_update(e, host, a, o, true, e->prec, what); /* and back */
        cmrscl_csr_free(&b), cmrscl_csr_free(&b3);
    }
    cmrscl_matrix_free(host);
    cmrscl_matrix_free(dev);
}

/* Host CSR that is not canonical (unsorted rows; duplicates), column-ordered: the update
 * must follow the CSR order the create call saw. */
static void run_noncanonical(const env *e)
{
    cmrscl_csr a;
    test_matrix_build(9, &a);               /* 1500 x 1500 random */
    for (int32_t i = 0; i < a.rows; i += 2) /* every other row backwards */
        for (int32_t lo = a.row_ptr[i], hi = a.row_ptr[i + 1] - 1; lo < hi; ++lo, --hi) {
            int32_t c = a.col_ind[lo];
            a.col_ind[lo] = a.col_ind[hi], a.col_ind[hi] = c;
        }
    cmrscl_csr dup;
    test_matrix_build(9, &dup);
    for (int32_t i = 0; i < dup.rows; i += 3) /* repeated columns: the sum counts */
        if (dup.row_ptr[i + 1] - dup.row_ptr[i] >= 2)
            dup.col_ind[dup.row_ptr[i] + 1] = dup.col_ind[dup.row_ptr[i]];
    const cmrscl_csr *mats[] = {&a, &dup};
    const char *names[] = {"1500x1500 unsorted rows", "1500x1500 repeated columns"};
    for (int k = 0; k < 2; ++k)
        for (int h = 1; h <= 64; h *= 8) { /* h 64: 64-bit indices, the uploaded permutation */
            cmrscl_options o = {0};
            o.kernel = CMRSCL_KERNEL_STRIP, o.height = h > 8 ? 8 : h;
            o.order = CMRSCL_ORDER_COLUMNS, o.index_bits = h > 8 ? 64 : 0;
            char what[128];
            snprintf(what, sizeof what, "%s, strip h%d columns, index bits %d", names[k], o.height,
                     o.index_bits);
            cmrscl_matrix m = host_matrix(e, mats[k], &o);
            cmrscl_csr b = with_values(mats[k], 2.0, 1.0);
            if (m) {
                check_products(e, m, mats[k], what);
                check_update(e, m, &b, &o, false, e->prec, what);
                check_update(e, m, mats[k], &o, true, other(e), what);
            }
            cmrscl_csr_free(&b);
            cmrscl_matrix_free(m);
        }
    cmrscl_csr_free(&a);
    cmrscl_csr_free(&dup);
}

/* product, update, product enqueued back to back on the context's queue: the first sees
 * the old values, the second the new ones. */
static void run_ordering(const env *e)
{
    cmrscl_csr a, b;
    test_matrix_build(10, &a); /* 1001 x 1001 band */
    b = with_values(&a, 2.0, 1.0);
    cmrscl_matrix m = host_matrix(e, &a, NULL);
    size_t vs = cmrscl_precision_size(e->prec), n = (size_t)a.rows;
    double *ones = malloc(8 * n), *ya = malloc(8 * n), *yb = malloc(8 * n);
    for (size_t j = 0; j < n; ++j)
        ones[j] = 1.0;
    void *x = test_values_in(ones, (int32_t)n, e->prec),
         *nv = test_values_in(b.values, b.nnz, e->prec);
    cl_mem xb = upload(e, x, vs * n), y1 = upload(e, x, vs * n), y2 = upload(e, x, vs * n);
    cl_mem vb = upload(e, nv, vs * (size_t)b.nnz);
    if (m) {
        CHECK_OK(cmrscl_spmv(m, 1.0, xb, 0.0, y1, NULL, 0, NULL, NULL));
        CHECK_OK(cmrscl_matrix_update_values_cl(m, vb, e->prec));
        CHECK_OK(cmrscl_spmv(m, 1.0, xb, 0.0, y2, NULL, 0, NULL, NULL));
        void *h1 = malloc(vs * n), *h2 = malloc(vs * n);
        clEnqueueReadBuffer(e->queue, y1, CL_TRUE, 0, vs * n, h1, 0, NULL, NULL);
        clEnqueueReadBuffer(e->queue, y2, CL_TRUE, 0, vs * n, h2, 0, NULL, NULL);
        cmrscl_csr ra = test_csr_rounded(&a, e->prec), rb = test_csr_rounded(&b, e->prec);
        cmrscl_csr_spmv(&ra, 1.0, ones, 0.0, ya);
        cmrscl_csr_spmv(&rb, 1.0, ones, 0.0, yb);
        int wrong = 0;
        for (size_t i = 0; i < n; ++i) {
            double g1 = e->prec == CMRSCL_FLOAT ? ((float *)h1)[i] : ((double *)h1)[i];
            double g2 = e->prec == CMRSCL_FLOAT ? ((float *)h2)[i] : ((double *)h2)[i];
            wrong += fabs(g1 - ya[i]) > 1e-4 * (1 + fabs(ya[i])) ||
                     fabs(g2 - yb[i]) > 1e-4 * (1 + fabs(yb[i]));
        }
        CHECK_MSG(wrong == 0, "ordering: %d rows of the products around an update are wrong",
                  wrong);
        free(h1), free(h2);
        cmrscl_csr_free(&ra), cmrscl_csr_free(&rb);
    }
    release(xb), release(y1), release(y2), release(vb);
    free(ones), free(ya), free(yb), free(x), free(nv);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a), cmrscl_csr_free(&b);
}

/* The same through a context on an out-of-order queue: the conversion's steps and the
 * update's copy and gather must still run in order. */
static void run_out_of_order(const env *e)
{
    cl_context context = NULL;
    cl_device_id device = test_cl_device(e->ctx, &context);
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(
        context, device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE, &err);
    if (!q) {
        printf("no out-of-order queue on this device (%d): that case is not run\n", (int)err);
        return;
    }
    env o = *e;
    CHECK_OK(cmrscl_context_create_from_cl(context, q, &o.ctx));
    clReleaseCommandQueue(q); /* the context retains it */
    if (!o.ctx)
        return;
    o.queue = q;
    cmrscl_csr a;
    test_matrix_build(9, &a); /* 1500 x 1500 random */
    cmrscl_options opt = {0};
    opt.kernel = CMRSCL_KERNEL_STRIP, opt.height = 4, opt.order = CMRSCL_ORDER_COLUMNS;
    cmrscl_matrix host = host_matrix(&o, &a, &opt), dev = NULL;
    device_csr d = to_device(&o, &a, o.prec);
    CHECK_OK(cmrscl_matrix_create_from_cl(o.ctx, o.prec, a.rows, a.cols, a.nnz, d.row_ptr,
                                          d.col_ind, d.values, &opt, &dev));
    device_csr_free(&d);
    if (host && dev) {
        check_same_cmrs(host, dev, "out-of-order queue");
        cmrscl_csr b = with_values(&a, 2.0, 1.0);
        void *v = test_values_in(b.values, b.nnz, o.prec);
        cl_mem vb = upload(&o, v, cmrscl_precision_size(o.prec) * (size_t)b.nnz);
        CHECK_OK(cmrscl_matrix_update_values(dev, v, o.prec));
        CHECK_OK(cmrscl_matrix_update_values_cl(host, vb, o.prec));
        clFinish(q); /* cmrscl_matrix_read_cmrs does not wait on an out-of-order queue */
        cmrscl_matrix fresh = host_matrix(&o, &b, &opt);
        if (fresh) {
            check_same_cmrs(fresh, dev, "out-of-order queue, update_values");
            check_same_cmrs(fresh, host, "out-of-order queue, update_values_cl");
        }
        check_products(&o, dev, &b, "out-of-order queue, after the update");
        cmrscl_matrix_free(fresh), release(vb), free(v), cmrscl_csr_free(&b);
    }
    cmrscl_matrix_free(host), cmrscl_matrix_free(dev);
    cmrscl_csr_free(&a);
    cmrscl_context_free(o.ctx);
}

static int run_precision(const env *e)
{
    int cases = 0;
    for (int i = 0; i < test_matrix_count(); ++i) {
        cmrscl_csr a;
        const char *name = test_matrix_build(i, &a);
        for (int k = 0; k < PLAN_COUNT; ++k, ++cases)
            run_case(e, &a, &plans[k], name);
        cmrscl_csr_free(&a);
    }
    run_noncanonical(e);
    run_ordering(e);
    run_out_of_order(e);
    printf("%s: %d matrix x plan cases, both paths, five updates each\n",
           cmrscl_precision_name(e->prec), cases);
    return test_finish("device_convert");
}

/* ---- errors ---- */

/* create_from_cl of (rows, cols, nnz) with the buffers of a: expects `want` and a message
 * holding `needle`, and no matrix. */
static void expect_error(const env *e, int32_t rows, int32_t cols, int32_t nnz, cl_mem rp,
                         cl_mem ci, cl_mem v, cmrscl_status want, const char *needle,
                         const char *what)
{
    cmrscl_matrix m = (cmrscl_matrix)1;
    cmrscl_status st =
        cmrscl_matrix_create_from_cl(e->ctx, CMRSCL_FLOAT, rows, cols, nnz, rp, ci, v, NULL, &m);
    CHECK_MSG(st == want && test_contains(cmrscl_last_error(), needle) && m == NULL,
              "%s: got %s \"%s\", expected %s with \"%s\"", what, cmrscl_status_name(st),
              cmrscl_last_error(), cmrscl_status_name(want), needle);
    if (st == want)
        printf("%s: %s\n", what, cmrscl_last_error());
    if (st == CMRSCL_OK)
        cmrscl_matrix_free(m);
}

/* a with one change to row_ptr or col_ind, on the device; expects `needle`. */
static void expect_bad_csr(const env *e, const cmrscl_csr *a, int32_t rp_at, int32_t rp_value,
                           int32_t ci_at, int32_t ci_value, const char *needle, const char *what)
{
    cmrscl_csr b = test_csr_rounded(a, CMRSCL_DOUBLE);
    if (rp_at >= 0)
        b.row_ptr[rp_at] = rp_value;
    if (ci_at >= 0)
        b.col_ind[ci_at] = ci_value;
    device_csr d = to_device(e, &b, CMRSCL_FLOAT);
    expect_error(e, b.rows, b.cols, b.nnz, d.row_ptr, d.col_ind, d.values,
                 CMRSCL_ERROR_INVALID_MATRIX, needle, what);
    device_csr_free(&d);
    cmrscl_csr_free(&b);
}

static void run_bad_csr(const env *e, const cmrscl_csr *a)
{
    int32_t r = 40; /* a row with at least two entries */
    while (a->row_ptr[r + 1] - a->row_ptr[r] < 2)
        ++r;
    int32_t k = a->row_ptr[r];
    char needle[96];
    expect_bad_csr(e, a, 0, 1, -1, 0, "row_ptr[0] = 1", "row_ptr[0] != 0");
    snprintf(needle, sizeof needle, "row_ptr decreases: row_ptr[%d]", r + 1);
    expect_bad_csr(e, a, r + 1, a->row_ptr[r] - 1, -1, 0, needle, "row_ptr decreases");
    snprintf(needle, sizeof needle, "row_ptr[%d] = -5 is outside", r + 1);
    expect_bad_csr(e, a, r + 1, -5, -1, 0, needle, "negative row_ptr");
    snprintf(needle, sizeof needle, "col_ind[%d] = %d (row %d) is outside 0..%d", k + 1, a->cols, r,
             a->cols - 1);
    expect_bad_csr(e, a, -1, 0, k + 1, a->cols, needle, "column = cols");
    snprintf(needle, sizeof needle, "col_ind[%d] = -1 (row %d)", k, r);
    expect_bad_csr(e, a, -1, 0, k, -1, needle, "negative column");
    snprintf(needle, sizeof needle, "columns of row %d are not strictly ascending", r);
    expect_bad_csr(e, a, -1, 0, k + 1, a->col_ind[k], needle, "repeated column");
    expect_bad_csr(e, a, -1, 0, k, a->col_ind[k + 1] + (a->col_ind[k + 1] + 1 < a->cols), needle,
                   "descending columns");
}

static void run_bad_buffers(const env *e, const cmrscl_csr *a)
{
    device_csr d = to_device(e, a, CMRSCL_FLOAT);
    int32_t rows = a->rows, cols = a->cols, nnz = a->nnz;
    /* the last row pointer must say nnz */
    expect_error(e, rows, cols, nnz - 1, d.row_ptr, d.col_ind, d.values,
                 CMRSCL_ERROR_INVALID_MATRIX, "is outside 0..nnz", "nnz below row_ptr[rows]");
    cl_mem big_ci = upload(e, a->col_ind, 4 * (size_t)nnz + 4);
    cl_mem big_v = clCreateBuffer(e->cl, CL_MEM_READ_WRITE, 4 * (size_t)nnz + 4, NULL, NULL);
    expect_error(e, rows, cols, nnz + 1, d.row_ptr, big_ci, big_v, CMRSCL_ERROR_INVALID_MATRIX,
                 "but nnz", "nnz above row_ptr[rows]");
    /* sizes */
    expect_error(e, rows + 1, cols, nnz, d.row_ptr, d.col_ind, d.values,
                 CMRSCL_ERROR_INVALID_ARGUMENT, "row_ptr holds", "row_ptr too small");
    expect_error(e, rows, cols, nnz + 1, d.row_ptr, d.col_ind, big_v, CMRSCL_ERROR_INVALID_ARGUMENT,
                 "col_ind holds", "col_ind too small");
    expect_error(e, rows, cols, nnz + 1, d.row_ptr, big_ci, d.values, CMRSCL_ERROR_INVALID_ARGUMENT,
                 "values holds", "values too small");
    expect_error(e, rows, cols, nnz, d.row_ptr, NULL, d.values, CMRSCL_ERROR_INVALID_ARGUMENT,
                 "col_ind is NULL", "col_ind NULL");
    expect_error(e, -1, cols, nnz, d.row_ptr, d.col_ind, d.values, CMRSCL_ERROR_INVALID_MATRIX,
                 "negative size", "negative rows");
    /* a buffer of another cl_context */
    cl_context context = NULL;
    cl_device_id device = test_cl_device(e->ctx, &context);
    cl_context other_cl = clCreateContext(NULL, 1, &device, NULL, NULL, NULL);
    cl_mem foreign =
        other_cl ? clCreateBuffer(other_cl, CL_MEM_READ_WRITE, 4 * (size_t)nnz, NULL, NULL) : NULL;
    if (foreign)
        expect_error(e, rows, cols, nnz, d.row_ptr, foreign, d.values,
                     CMRSCL_ERROR_CONTEXT_MISMATCH, "another OpenCL context", "foreign col_ind");
    /* updates */
    cmrscl_matrix m = host_matrix(e, a, NULL);
    if (m) {
        CHECK_STATUS(cmrscl_matrix_update_values_cl(m, big_v, CMRSCL_DOUBLE),
                     e->dev.fp64 ? CMRSCL_ERROR_INVALID_ARGUMENT : CMRSCL_ERROR_UNSUPPORTED);
        CHECK_STATUS(cmrscl_matrix_update_values_cl(m, foreign ? foreign : NULL, CMRSCL_FLOAT),
                     foreign ? CMRSCL_ERROR_CONTEXT_MISMATCH : CMRSCL_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(cmrscl_matrix_update_values(m, NULL, CMRSCL_FLOAT),
                     CMRSCL_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(cmrscl_matrix_update_values(m, a->values, (cmrscl_precision)7),
                     CMRSCL_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(cmrscl_matrix_update_values(NULL, a->values, CMRSCL_DOUBLE),
                     CMRSCL_ERROR_INVALID_ARGUMENT);
        check_products(e, m, a, "after failed updates");
    }
    cmrscl_matrix_free(m);
    release(foreign);
    if (other_cl)
        clReleaseContext(other_cl);
    release(big_ci), release(big_v);
    device_csr_free(&d);
}

static int run_errors(env *e)
{
    e->prec = CMRSCL_FLOAT;
    cmrscl_csr a;
    test_matrix_build(9, &a); /* 1500 x 1500 random */
    run_bad_csr(e, &a);
    run_bad_buffers(e, &a);
    /* the context is still fine */
    cmrscl_matrix m = NULL;
    device_csr d = to_device(e, &a, CMRSCL_FLOAT);
    CHECK_OK(cmrscl_matrix_create_from_cl(e->ctx, CMRSCL_FLOAT, a.rows, a.cols, a.nnz, d.row_ptr,
                                          d.col_ind, d.values, NULL, &m));
    if (m)
        check_products(e, m, &a, "after the errors");
    cmrscl_matrix_free(m), device_csr_free(&d), cmrscl_csr_free(&a);
    return test_finish("device_convert errors");
}

int main(int argc, char **argv)
{
    if (argc != 2 ||
        (strcmp(argv[1], "float") && strcmp(argv[1], "double") && strcmp(argv[1], "errors"))) {
        fprintf(stderr, "usage: %s float|double|errors\n", argv[0]);
        return 2;
    }
    env e = {0};
    CHECK_OK(cmrscl_context_create(NULL, &e.ctx));
    if (!e.ctx)
        return test_finish("device_convert");
    CHECK_OK(cmrscl_context_device_info(e.ctx, &e.dev));
    CHECK_OK(cmrscl_context_cl(e.ctx, &e.cl, &e.queue));
    printf("device %u:%u %s (%s)\n", e.dev.platform_index, e.dev.device_index, e.dev.device_name,
           e.dev.platform_name);
    int status;
    if (!strcmp(argv[1], "errors")) {
        status = run_errors(&e);
    } else {
        e.prec = !strcmp(argv[1], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
        if (e.prec == CMRSCL_DOUBLE && !e.dev.fp64) {
            printf("skipped: the device has no fp64\n");
            status = SKIP;
        } else {
            status = run_precision(&e);
        }
    }
    cmrscl_context_free(e.ctx);
    return status;
}
