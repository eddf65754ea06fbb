/* test_dots.c - the product the solvers build (exec/spmv_dots.c, cl/dots.cl) on every kernel
 * family of one backend of the warp layer, on the device chosen by CMRSCL_DEVICE (float on
 * every other plan, double on the rest, where the device has double):
 *   - with the epilogue (-DDOTS=2 and 4, and 1 on one matrix a plan), the split plans on a
 *     matrix with one long row, the others on a share of the catalogue (a third on local
 *     memory, a sixth on the sub-group backends; the plans taking the shares in turn), whose
 *     matrix 6 has a row far longer than a warp: y bit for bit the plain product's, and
 *     the work-groups' partial sums of x.y, y.y, w.y and y.(w y) (DOTS 1: w.y alone) adding
 *     up to the CPU's sums of that y (within their rounding), the sums not asked for 0, each
 *     row counted once - the strip, segment, MODULO and slice families, HEIGHT 1 to 100,
 *     packed and unpacked, long strips split into tiles summed by a second kernel, in their
 *     work-group and by the last tile's, the values plain and coded (on NVIDIA the strip family's
 *     full grids sum by the lanes that write the rows and by warps, its capped ones by
 *     work-group: exec/spmv_dots.c, strip_lanes), the slice family's grid also
 *     capped at two work-groups (each warp walking strip after strip, as a large matrix's product
 *     does under a solver on a GPU: exec/spmv_dots.c), there with its sums kept in local memory
 *     too (DOTS_LOCAL_SUMS: the same bits as in registers); for each (alpha, beta) of the grid
 *     (test_util.h), y against the CPU double reference too;
 *   - once the workspace says the solve has stopped, nothing written at all;
 *   - built with -DDIAGONAL=1: y = diag(A), exactly, from every layout.
 * Usage: test_dots float|double local|shuffle|subgroup. Exits 77 (skipped) when the device
 * runs no variant of that backend, saying why. */
#include "exec/exec.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static cmrscl_precision prec;
static size_t vs;
static int products_checked, local_sums_checked;

/* A buffer of n values of the precision from doubles (at least one element). */
static cl_mem upload(cl_context c, const double *v, size_t n)
{
    void *h = test_values_in(v, (int64_t)n, prec);
    cl_int err;
    cl_mem m =
        clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, vs * (n ? n : 1), h, &err);
    free(h);
    CHECK(m != NULL);
    return m;
}

static void read_values(cl_command_queue q, cl_mem m, size_t n, double *out)
{
    void *h = malloc(vs * (n ? n : 1));
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, vs * n, h, 0, NULL, NULL) == CL_SUCCESS);
    for (size_t i = 0; i < n; ++i)
        out[i] = test_value_at(h, prec, (int64_t)i);
    free(h);
}

/* A product that keeps its sums in local memory (cl/dots.cl, DOTS_LOCAL_SUMS) against the same
 * product keeping them in registers, on the same x, w and y0: the same bits in every real4
 * (ws: the first's, `reals` of them). */
static void check_same_sums(cmrscl_matrix m, const char *opt, const product_kernels *k,
                            double alpha, cl_mem xb, double beta, const double *y0, cl_mem wb,
                            const double *ws, size_t reals, const char *what)
{
    cl_context c;
    cl_command_queue q;
    CHECK_OK(cmrscl_context_cl(m->ctx, &c, &q));
    product_kernels r;
    setenv("CMRSCL_SOLVE_LOCAL_SUMS", "0", 1);
    CHECK_OK(cmrs_product_kernels_make(m, opt, 0, &r));
    setenv("CMRSCL_SOLVE_LOCAL_SUMS", "1", 1); /* the plan's, for its next products */
    CHECK_MSG(!r.local_sums && r.global == k->global,
              "%s: the product without local sums took another grid", what);
    double *again = malloc(sizeof(double) * reals);
    for (size_t i = 0; i < reals; ++i)
        again[i] = i < CMRS_WS_HEADER ? 0 : NAN;
    int n = m->params.rows;
    cl_mem yb = upload(c, y0, (size_t)n), wsb = upload(c, again, reals);
    CHECK_OK(cmrs_product_kernels_bind(&r, prec, alpha, xb, beta, yb, true, wsb,
                                       (cl_uint)CMRS_WS_HEADER, wb));
    CHECK_OK(cmrs_product_kernels_enqueue(&r, q, false));
    read_values(q, wsb, reals, again);
    CHECK_MSG(!memcmp(again, ws, sizeof(double) * reals),
              "%s: the sums kept in local memory differ from those kept in registers", what);
    ++local_sums_checked;
    clReleaseMemObject(yb), clReleaseMemObject(wsb);
    free(again);
    cmrs_product_kernels_release(&r);
}

/* The epilogue's sums for one product kernels k of DOTS 1, 2 or 4 on matrix m. */
static void check_epilogue(cmrscl_context ctx, cmrscl_matrix m, const cmrscl_csr *ra, int dots,
                           const char *what)
{
    cl_context c;
    cl_command_queue q;
    CHECK_OK(cmrscl_context_cl(ctx, &c, &q));
    int n = ra->rows;
    product_kernels k;
    char opt[16];
    snprintf(opt, sizeof opt, "-DDOTS=%d", dots);
    CHECK_OK(cmrs_product_kernels_make(m, opt, 0, &k));
    if (!k.kernel)
        return;
    const char *capped = getenv("CMRSCL_SOLVE_PRODUCT_GROUPS"),
               *local = getenv("CMRSCL_SOLVE_LOCAL_SUMS");
    /* (split strips keep their grid: their tiles' roles go by the group's number) */
    size_t full_local, full_global, cl_local, cl_global;
    cmrs_spmv_sizes(m, &full_local, &full_global, &cl_local, &cl_global);
    bool keeps_grid = m->params.long_strips > 0;
    CHECK_MSG(!capped || keeps_grid || k.global / k.local <= (size_t)atoi(capped),
              "%s: the product runs %zu work-groups, not at most %s", what, k.global / k.local,
              capped);
    CHECK_MSG(!capped || !keeps_grid || k.global == full_global,
              "%s: split strips, and the product runs %zu work-groups of the plan's %zu", what,
              k.global / k.local, full_global / full_local);
    /* (a grid the cap leaves whole has its warps' sums, not a work-group's) */
    size_t strips_per_group = k.local / (size_t)m->params.warp,
           whole = ((size_t)m->params.strips + strips_per_group - 1) / strips_per_group;
    CHECK_MSG(!local || k.local_sums || k.global / k.local == whole,
              "%s: the product did not keep its sums in local memory when told to", what);
    double *x = malloc(sizeof(double) * ((size_t)n + 1)),
           *w = malloc(sizeof(double) * ((size_t)n + 1));
    double *y = malloc(sizeof(double) * ((size_t)n + 1)),
           *yp = malloc(sizeof(double) * ((size_t)n + 1));
    for (int i = 0; i < n; ++i) {
        x[i] = test_uniform(-1, 1), w[i] = test_uniform(0.5, 2);
        if (prec == CMRSCL_FLOAT)
            x[i] = (float)x[i], w[i] = (float)w[i];
    }
    size_t at = CMRS_WS_HEADER, reals = at + 4 * (k.space ? k.space : 1);
    double *ws = calloc(reals, sizeof(double)), *y0 = malloc(sizeof(double) * ((size_t)n + 1));
    cl_mem xb = upload(c, x, (size_t)n), wb = upload(c, w, (size_t)n), yb = NULL, pb = NULL;
    cl_mem wsb = NULL;
    double u = prec == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53;
    for (int g = 0; g < TEST_ALPHA_BETA_COUNT; ++g) {
        double alpha = test_alpha_beta[g][0], beta = test_alpha_beta[g][1];
        for (int i = 0; i < n; ++i) /* beta = 0: y0 NaN, never to be read */
            y0[i] = beta == 0              ? NAN
                    : prec == CMRSCL_FLOAT ? (float)test_uniform(-1, 1)
                                           : test_uniform(-1, 1);
        for (size_t i = 0; i < reals; ++i)
            ws[i] = i < at ? 0 : NAN; /* every work-group must write its real4 */
        yb = upload(c, y0, (size_t)n), pb = upload(c, y0, (size_t)n), wsb = upload(c, ws, reals);
        CHECK_OK(cmrscl_spmv(m, alpha, xb, beta, pb, NULL, 0, NULL, NULL));
        CHECK_OK(cmrs_product_kernels_bind(&k, prec, alpha, xb, beta, yb, true, wsb, (cl_uint)at,
                                           dots != 2 ? wb : NULL));
        CHECK_OK(cmrs_product_kernels_enqueue(&k, q, false));
        read_values(q, yb, (size_t)n, y);
        read_values(q, pb, (size_t)n, yp);
        read_values(q, wsb, reals, ws);
        if (k.local_sums)
            check_same_sums(m, opt, &k, alpha, xb, beta, y0, dots != 2 ? wb : NULL, ws, reals,
                            what);
        CHECK_MSG(!memcmp(y, yp, sizeof(double) * (size_t)n),
                  "%s, DOTS %d, alpha %g beta %g: y differs from the plain product's", what, dots,
                  alpha, beta);
        double ratio = INFINITY;
        CHECK_OK(cmrscl_csr_spmv_check(ra, alpha, x, beta, y0, y, u, NULL, &ratio));
        CHECK_MSG(ratio <= 1.0,
                  "%s, DOTS %d, alpha %g beta %g: y %g x the rounding bound from "
                  "the CPU's",
                  what, dots, alpha, beta, ratio);
        /* the sums of the device's y, in double, and the bound on their rounding */
        double ref[4] = {0}, mag[4] = {0}, got[4] = {0};
        for (int i = 0; i < n; ++i) {
            double t[4] = {x[i] * y[i], y[i] * y[i], w[i] * y[i], w[i] * y[i] * y[i]};
            for (int d = 0; d < 4; ++d)
                ref[d] += t[d], mag[d] += fabs(t[d]);
        }
        for (size_t gr = 0; gr < k.groups; ++gr)
            for (int d = 0; d < 4; ++d)
                got[d] += ws[at + 4 * gr + d];
        for (int d = 0; d < 4; ++d) {
            bool made = dots == 4 || (dots == 2 && d < 2) || (dots == 1 && d == 2);
            if (made)
                CHECK_MSG(fabs(got[d] - ref[d]) <= 4 * (n + 64) * u * mag[d] + 1e-300,
                          "%s, DOTS %d: sum %d is %.17g, the CPU's %.17g (%zu work-groups)", what,
                          dots, d, got[d], ref[d], k.groups);
            else
                CHECK_MSG(got[d] == 0, "%s, DOTS %d: sum %d not zero (%g)", what, dots, d, got[d]);
        }
        if (g + 1 < TEST_ALPHA_BETA_COUNT)
            clReleaseMemObject(yb), clReleaseMemObject(pb), clReleaseMemObject(wsb);
    }
    free(y0);
    /* stopped: neither y nor the sums are touched */
    ws[CMRS_WS_STOP + CMRS_WS_STOP_SLOTS - 1] = 1; /* any slot stops it: the last one */
    for (size_t i = at; i < reals; ++i)
        ws[i] = 7;
    clReleaseMemObject(wsb);
    wsb = upload(c, ws, reals);
    double *poison = malloc(sizeof(double) * ((size_t)n + 1));
    for (int i = 0; i < n; ++i)
        poison[i] = NAN;
    clReleaseMemObject(yb);
    yb = upload(c, poison, (size_t)n);
    CHECK_OK(cmrs_product_kernels_bind(&k, prec, 1.0, xb, 0.0, yb, true, wsb, (cl_uint)at,
                                       dots != 2 ? wb : NULL));
    CHECK_OK(cmrs_product_kernels_enqueue(&k, q, false));
    read_values(q, yb, (size_t)n, y);
    read_values(q, wsb, reals, ws);
    bool untouched = true;
    for (int i = 0; i < n; ++i)
        untouched = untouched && isnan(y[i]);
    for (size_t i = at; i < reals; ++i)
        untouched = untouched && ws[i] == 7;
    CHECK_MSG(untouched, "%s, DOTS %d: a stopped solve's product wrote", what, dots);
    ++products_checked;
    clReleaseMemObject(xb), clReleaseMemObject(wb), clReleaseMemObject(yb);
    clReleaseMemObject(pb), clReleaseMemObject(wsb);
    free(x), free(w), free(y), free(yp), free(ws), free(poison);
    cmrs_product_kernels_release(&k);
}

/* -DDIAGONAL=1: y = diag(A) exactly. */
static void check_diagonal(cmrscl_context ctx, cmrscl_matrix m, const cmrscl_csr *ra,
                           const char *what)
{
    cl_context c;
    cl_command_queue q;
    CHECK_OK(cmrscl_context_cl(ctx, &c, &q));
    int n = ra->rows;
    product_kernels k;
    CHECK_OK(cmrs_product_kernels_make(m, "-DDIAGONAL=1", 0, &k));
    if (!k.kernel)
        return;
    double *y = malloc(sizeof(double) * ((size_t)n + 1)), *d = calloc((size_t)n + 1, 8);
    for (int i = 0; i < n; ++i)
        for (int64_t e = ra->row_ptr[i]; e < ra->row_ptr[i + 1]; ++e)
            if (ra->col_ind[e] == i)
                d[i] = ra->values[e];
    cl_mem yb = upload(c, d, (size_t)n);
    CHECK_OK(cmrs_product_kernels_bind(&k, prec, 1.0, NULL, 0.0, yb, false, NULL, 0, NULL));
    CHECK_OK(cmrs_product_kernels_enqueue(&k, q, false));
    read_values(q, yb, (size_t)n, y);
    int wrong = 0, first = -1;
    for (int i = 0; i < n; ++i)
        if (y[i] != d[i] && !wrong++)
            first = i;
    CHECK_MSG(!wrong, "%s: diag(A) wrong in %d rows (first %d: %g, not %g)", what, wrong, first,
              first >= 0 ? y[first] : 0, first >= 0 ? d[first] : 0);
    clReleaseMemObject(yb);
    free(y), free(d);
    cmrs_product_kernels_release(&k);
}

/* A square matrix with a row far longer than the others: long strips to split, whatever the
 * sub-group width (a tile of 32 warps of 64 lanes still takes less than the row). */
static void long_row_matrix(cmrscl_csr *out)
{
    int n = 3000, cap = n * 6 + n;
    int32_t *ri = malloc(sizeof(int32_t) * (size_t)cap),
            *ci = malloc(sizeof(int32_t) * (size_t)cap);
    double *v = malloc(sizeof(double) * (size_t)cap);
    int k = 0;
    for (int i = 0; i < n; ++i) {
        ri[k] = i, ci[k] = i, v[k++] = 4 + test_uniform(0, 1);
        for (int j = 0; j < 4; ++j)
            ri[k] = i, ci[k] = (int32_t)test_uniform(0, n), v[k++] = test_uniform(-1, 1);
    }
    for (int j = 0; j < n; ++j)
        if (j != 7)
            ri[k] = 7, ci[k] = j, v[k++] = test_uniform(-1, 1);
    CHECK_OK(cmrscl_csr_from_coo(n, n, k, ri, ci, v, out));
    free(ri), free(ci), free(v);
}

/* Plan number `which`: a split plan on the long-row matrix, the others on a share of the
 * catalogue, 1 in `stride`, the plans taking the shares in turn (every matrix meets 1 in
 * `stride` of the plans; CI's time is the kernels' builds). */
static void run_plan(cmrscl_context ctx, const cmrscl_options *o, const char *label, int which,
                     int stride)
{
    bool first = true;
    for (int i = o->tile > 0 ? -1 : 0; i < (o->tile > 0 ? 0 : test_matrix_count()); ++i) {
        if (i >= 0 && (i + which) % stride)
            continue;
        cmrscl_csr a;
        const char *name = "3000x3000 one long row";
        if (i < 0)
            long_row_matrix(&a);
        else
            name = test_matrix_build(i, &a);
        if (a.rows != a.cols) { /* solvers' matrices are square */
            cmrscl_csr_free(&a);
            continue;
        }
        cmrscl_csr ra = test_csr_rounded(&a, prec);
        char what[200];
        snprintf(what, sizeof what, "%s, %s", name, label);
        cmrscl_matrix m = NULL;
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, o, &m));
        if (m) {
            cmrscl_params p = CMRSCL_PARAMS_INIT;
            cmrscl_matrix_params(m, &p);
            /* the in-group combine splits a strip only across a group's warps, into three
             * tiles at least (plan_split.c): where the device's groups hold fewer warps
             * (PoCL 5's sub-groups) nothing is split */
            bool few_warps = o->combine == CMRSCL_COMBINE_GROUP && p.work_group_size < 3 * p.warp;
            if (o->tile > 0 && p.long_strips == 0 && few_warps)
                printf("%s: work-groups of %d warps here, nothing split (the split path is not "
                       "checked on this plan)\n",
                       what, p.work_group_size / p.warp);
            else
                CHECK_MSG(o->tile <= 0 || p.long_strips > 0, "%s: nothing was split", what);
            check_epilogue(ctx, m, &ra, 2, what);
            check_epilogue(ctx, m, &ra, 4, what);
            if (first && ra.nnz > 0) { /* the same code but which sums: one matrix a plan */
                check_epilogue(ctx, m, &ra, 1, what);
                first = false;
            }
            check_diagonal(ctx, m, &ra, what);
        }
        cmrscl_matrix_free(m);
        cmrscl_csr_free(&ra);
        cmrscl_csr_free(&a);
    }
}

int main(int argc, char **argv)
{
    cmrscl_reduce reduce = 0;
    if (argc == 3)
        reduce = !strcmp(argv[2], "local")      ? CMRSCL_REDUCE_LOCAL
                 : !strcmp(argv[2], "shuffle")  ? CMRSCL_REDUCE_SHUFFLE
                 : !strcmp(argv[2], "subgroup") ? CMRSCL_REDUCE_SUBGROUP
                                                : 0;
    if (argc != 3 || (strcmp(argv[1], "float") && strcmp(argv[1], "double")) || !reduce) {
        fprintf(stderr, "usage: %s float|double local|shuffle|subgroup\n", argv[0]);
        return 2;
    }
    prec = !strcmp(argv[1], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
    vs = cmrscl_precision_size(prec);
    test_seed(77);
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("dots");
    if (prec == CMRSCL_DOUBLE && !ctx->info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    /* the plans: each family of the backend, HEIGHTs short and tall, both layouts, the split
     * path both ways */
    static const struct {
        cmrscl_kernel kernel;
        int height, tile;
        cmrscl_layout layout;
        cmrscl_combine combine;
        const char *label;
        const char *groups;     /* CMRSCL_SOLVE_PRODUCT_GROUPS: the product's grid capped */
        const char *local_sums; /* CMRSCL_SOLVE_LOCAL_SUMS: its sums in local memory */
    } plans[] = {
        {CMRSCL_KERNEL_STRIP, 1, -1, 0, 0, "strip, HEIGHT 1", NULL, NULL},
        {CMRSCL_KERNEL_STRIP, 3, -1, CMRSCL_LAYOUT_UNPACKED, 0, "strip, HEIGHT 3, unpacked", NULL,
         NULL},
        {CMRSCL_KERNEL_STRIP, 16, -1, 0, 0, "strip, HEIGHT 16", NULL, NULL},
        {CMRSCL_KERNEL_SEGMENT, 1, -1, 0, 0, "segment, HEIGHT 1", NULL, NULL},
        {CMRSCL_KERNEL_SEGMENT, 100, -1, 0, 0, "segment, HEIGHT 100", NULL, NULL},
        {CMRSCL_KERNEL_MODULO, 8, -1, 0, 0, "modulo, HEIGHT 8", NULL, NULL},
        {CMRSCL_KERNEL_SLICE, 32, -1, 0, 0, "slice, HEIGHT 32", NULL, NULL},
        {CMRSCL_KERNEL_STRIP, 4, 7, 0, CMRSCL_COMBINE_KERNEL, "strip split, combine kernel", NULL,
         NULL},
        {CMRSCL_KERNEL_STRIP, 4, 16, 0, CMRSCL_COMBINE_GROUP, "strip split, in-group combine", NULL,
         NULL},
        {CMRSCL_KERNEL_SEGMENT, 16, 32, 0, CMRSCL_COMBINE_KERNEL, "segment split, kernel", NULL,
         NULL},
        {CMRSCL_KERNEL_SEGMENT, 16, 32, 0, CMRSCL_COMBINE_GROUP, "segment split, in-group", NULL,
         NULL},
        {CMRSCL_KERNEL_SLICE, 16, -1, 0, 0, "slice, HEIGHT 16, 2 work-groups", "2", NULL},
        {CMRSCL_KERNEL_SLICE, 32, -1, 0, 0, "slice, HEIGHT 32, 2 work-groups, sums in local memory",
         "2", "1"},
        {CMRSCL_KERNEL_SLICE, 8, -1, 0, 0, "slice, HEIGHT 8, 2 work-groups, sums in local memory",
         "2", "1"},
        /* group after group on a capped grid (dots.cl, FOR_GROUPS); split strips stay uncapped */
        {CMRSCL_KERNEL_STRIP, 4, -1, 0, 0, "strip, HEIGHT 4, 2 work-groups", "2", NULL},
        {CMRSCL_KERNEL_STRIP, 1, -1, 0, 0, "strip, HEIGHT 1, 3 work-groups", "3", NULL},
        {CMRSCL_KERNEL_SEGMENT, 16, -1, 0, 0, "segment, HEIGHT 16, 2 work-groups", "2", NULL},
        {CMRSCL_KERNEL_SEGMENT, 1, -1, 0, 0, "segment, HEIGHT 1, 3 work-groups", "3", NULL},
        {CMRSCL_KERNEL_MODULO, 8, -1, 0, 0, "modulo, HEIGHT 8, 2 work-groups", "2", NULL},
        {CMRSCL_KERNEL_MODULO, 4, -1, 0, 0, "modulo, HEIGHT 4, 2 work-groups", "2", NULL},
        {CMRSCL_KERNEL_STRIP, 4, 7, 0, CMRSCL_COMBINE_KERNEL, "strip split, 2 work-groups asked",
         "2", NULL},
        {CMRSCL_KERNEL_STRIP, 4, 16, 0, CMRSCL_COMBINE_GROUP, "strip split in-group, 2 asked", "2",
         NULL},
        /* the last tile's combine (NVIDIA and CPUs): its strips' terms a real4 a tile */
        {CMRSCL_KERNEL_STRIP, 4, 7, 0, CMRSCL_COMBINE_LAST, "strip split, last tile's combine",
         NULL, NULL},
        {CMRSCL_KERNEL_SEGMENT, 16, 32, 0, CMRSCL_COMBINE_LAST, "segment split, last tile's", NULL,
         NULL},
        {CMRSCL_KERNEL_STRIP, 4, 7, 0, CMRSCL_COMBINE_LAST, "strip split, last tile's, 2 asked",
         "2", NULL},
    };
    /* Float takes the even plans and double the odd ones, where the device has double: the
     * precision changes the value type, not the epilogue's indexing or its sums' order. */
    bool alternate = ctx->info.fp64;
    int ran = 0, ran_local = 0;
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; ++i) {
        if (alternate && (int)(i % 2) != (prec == CMRSCL_DOUBLE))
            continue;
        cmrscl_options o = {0};
        o.kernel = plans[i].kernel, o.height = plans[i].height, o.tile = plans[i].tile;
        o.layout = plans[i].layout, o.combine = plans[i].combine, o.reduce = reduce;
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        cmrscl_csr probe;
        CHECK_OK(cmrscl_csr_generate("stencil5:4", &probe));
        bool runs = cmrscl_plan(&ctx->info, prec, &probe, &o, &p) == CMRSCL_OK;
        cmrscl_csr_free(&probe);
        if (!runs) {
            printf("%s: not on this device's %s backend: %s\n", plans[i].label, argv[2],
                   cmrscl_last_error());
            continue;
        }
        /* local memory: a third of the catalogue a plan; the sub-group backends differ from
         * it only in the warp's sums, a sixth */
        if (plans[i].groups)
            setenv("CMRSCL_SOLVE_PRODUCT_GROUPS", plans[i].groups, 1);
        if (plans[i].local_sums)
            setenv("CMRSCL_SOLVE_LOCAL_SUMS", plans[i].local_sums, 1);
        /* (the sums in local memory on every matrix: few of the catalogue's are large enough
         * for a capped grid) */
        run_plan(ctx, &o, plans[i].label, (int)i,
                 plans[i].local_sums             ? 1
                 : reduce == CMRSCL_REDUCE_LOCAL ? 3
                                                 : 6);
        ran_local += plans[i].local_sums != NULL;
        unsetenv("CMRSCL_SOLVE_PRODUCT_GROUPS");
        unsetenv("CMRSCL_SOLVE_LOCAL_SUMS");
        ++ran;
    }
    cmrscl_context_free(ctx);
    CHECK_MSG(!ran_local || local_sums_checked > 0,
              "no product kept its sums in local memory on the plans that ask for it");
    printf("%d plans, %d products with the epilogue checked (%d with the sums in local memory, "
           "against registers)\n",
           ran, products_checked, local_sums_checked);
    if (ran == 0 && !test_failures) {
        printf("skipped: the device runs no variant of the %s backend\n", argv[2]);
        return SKIP;
    }
    CHECK_MSG(products_checked > 0, "no product was checked");
    return test_finish("dots");
}
