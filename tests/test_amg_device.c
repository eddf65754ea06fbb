/* test_amg_device.c - the AMG cycle on the device, V and W (issue 57), against the host cycle it
 * copies: every level's b, x and r after one cycle, and the result, within a bound for the
 * precision; and CG on the host with the device cycle as its preconditioner taking the
 * iterations the host's PCG takes; the device's matrices made beside the host's set-up
 * (amg_builder.c) the same as those made after it, and a failure there named.
 *     test_amg_device float|double */
#include "precond/precond.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static cmrscl_precision prec;
/* max |got - want| / max |want| a cycle may show in the precision: the products round
 * differently on the device (another order of the sums), float rounds every value */
static double bound;
/* the same for z, the cycle's result, against cmrs_amg_cycle's; a level's r (b - A x) may
 * differ by more relative to its own size, x being most of b there */
static double z_bound;

static double relative_difference(const double *got, const double *want, int32_t n)
{
    double diff = 0, size = 0;
    for (int32_t i = 0; i < n; ++i) {
        diff = fmax(diff, fabs(got[i] - want[i]));
        size = fmax(size, fabs(want[i]));
    }
    return size > 0 ? diff / size : diff;
}

static cl_mem device_vector(cmrscl_context ctx, int32_t n)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE,
                              (size_t)n * cmrscl_precision_size(prec), NULL, &err);
    CHECK_MSG(m != NULL, "clCreateBuffer: %d", err);
    return m;
}

static void write_vector(cmrscl_context ctx, cl_mem to, const double *v, int32_t n)
{
    void *host = test_values_in(v, n, prec);
    CHECK(clEnqueueWriteBuffer(ctx->queue, to, CL_TRUE, 0, (size_t)n * cmrscl_precision_size(prec),
                               host, 0, NULL, NULL) == CL_SUCCESS);
    free(host);
}

/* A matrix, its host hierarchy with the smoother of `degree` (1 Jacobi, 2.. Chebyshev) and
 * `visits` coarse corrections a level (1 a V-cycle; 2 a W-cycle, on a hierarchy of three levels
 * or more, so that some level is corrected twice), and that hierarchy on the device. */
typedef struct amg_case {
    cmrscl_csr a;
    cmrs_amg_hierarchy h;
    cmrs_amg_device d;
} amg_case;

static bool open_case(cmrscl_context ctx, const char *spec, int degree, int visits, amg_case *c)
{
    *c = (amg_case){0};
    cmrs_amg_options o;
    cmrs_amg_options_default(&o);
    o.degree = degree;
    o.visits = visits;
    CHECK_OK(cmrscl_csr_generate(spec, &c->a));
    CHECK_OK(cmrs_amg_setup(&c->a, &o, &c->h));
    CHECK_MSG(visits == 1 || c->h.levels >= 3, "%s: a W-cycle of %d levels corrects none twice",
              spec, c->h.levels);
    CHECK_OK(cmrs_amg_device_setup(ctx, prec, prec, &c->h, NULL, NULL, &c->d));
    return !test_failures;
}

static void close_case(amg_case *c)
{
    cmrs_amg_device_free(&c->d);
    cmrs_amg_free(&c->h);
    cmrscl_csr_free(&c->a);
}

/* One cycle on a right-hand side of random values, level by level against the host's. */
static void check_cycle(cmrscl_context ctx, const char *spec, int degree, int visits)
{
    amg_case t;
    if (!open_case(ctx, spec, degree, visits, &t))
        return;
    int n = t.h.levels;
    double **b = calloc((size_t)n, sizeof *b), **x = calloc((size_t)n, sizeof *x),
           **r = calloc((size_t)n, sizeof *r);
    for (int l = 0; l < n; ++l) {
        b[l] = calloc((size_t)t.h.level[l].A.rows, sizeof(double));
        x[l] = calloc((size_t)t.h.level[l].A.rows, sizeof(double));
        r[l] = calloc((size_t)t.h.level[l].A.rows, sizeof(double));
    }
    test_seed(57);
    for (int32_t i = 0; i < t.a.rows; ++i) /* representable in float: the same b on both sides */
        b[0][i] = (float)test_uniform(-1, 1);
    CHECK_OK(cmrs_amg_cycle_levels(&t.h, b, x, r));
    double *z = calloc((size_t)t.a.rows, sizeof(double));
    CHECK_OK(cmrs_amg_cycle(&t.h, b[0], z));
    CHECK_MSG(!memcmp(z, x[0], (size_t)t.a.rows * sizeof(double)),
              "%s: cmrs_amg_cycle differs from cmrs_amg_cycle_levels", spec);

    cl_mem rd = device_vector(ctx, t.a.rows), zd = device_vector(ctx, t.a.rows);
    write_vector(ctx, rd, b[0], t.a.rows);
    CHECK_OK(cmrs_amg_device_apply(&t.d, rd, zd));
    double *got = calloc((size_t)t.a.rows, sizeof(double));
    printf("%s (%s, %s, %c-cycle, %d levels, coarse %d rows, %s):", spec,
           prec == CMRSCL_DOUBLE ? "double" : "float", degree > 1 ? "Chebyshev" : "Jacobi",
           visits > 1 ? 'W' : 'V', n, (int)t.h.coarse_rows, t.h.coarse_lu ? "LU" : "Cholesky");
    /* a W-cycle's coarse levels hold, at its end, their second visit's vectors, made from the
     * residual the first correction left: its cancellation costs float a few more digits
     * (the result, z, keeps its bound) */
    const double level_bound = visits > 1 && prec == CMRSCL_FLOAT ? 4 * bound : bound;
    for (int l = 0; l < n; ++l) {
        const char *names = l + 1 < n ? "bxr" : "bx";
        double worst = 0;
        for (const char *c = names; *c; ++c) {
            const double *want = *c == 'b' ? b[l] : *c == 'x' ? x[l] : r[l];
            CHECK_OK(cmrs_amg_device_read(&t.d, l, *c, got));
            double diff = relative_difference(got, want, t.h.level[l].A.rows);
            worst = fmax(worst, diff);
            CHECK_MSG(diff <= level_bound,
                      "%s level %d: %c differs from the host's by %.3g (bound %.3g)", spec, l, *c,
                      diff, level_bound);
        }
        printf(" L%d %.2g", l, worst);
    }
    CHECK_OK(cmrs_amg_device_read(&t.d, 0, 'x', got));
    double final = relative_difference(got, z, t.a.rows);
    printf("; z %.2g\n", final);
    CHECK_MSG(final <= z_bound, "%s: z differs from cmrs_amg_cycle's by %.3g", spec, final);

    free(got);
    free(z);
    for (int l = 0; l < n; ++l) {
        free(b[l]);
        free(x[l]);
        free(r[l]);
    }
    free(b);
    free(x);
    free(r);
    clReleaseMemObject(rd);
    clReleaseMemObject(zd);
    close_case(&t);
}

static double dot(const double *x, const double *y, int32_t n)
{
    double s = 0;
    for (int32_t i = 0; i < n; ++i)
        s += x[i] * y[i];
    return s;
}

/* cmrs_amg_pcg's loop with z = M r by the device cycle (r written, z read back). */
static int device_pcg(cmrscl_context ctx, cmrs_amg_device *d, const cmrscl_csr *a, const double *b,
                      double rtol, int max_iterations)
{
    int32_t n = a->rows;
    double *x = calloc((size_t)n, sizeof(double)), *r = malloc((size_t)n * sizeof(double));
    double *z = malloc((size_t)n * sizeof(double)), *p = malloc((size_t)n * sizeof(double));
    double *q = malloc((size_t)n * sizeof(double));
    cl_mem rd = device_vector(ctx, n), zd = device_vector(ctx, n);
    memcpy(r, b, (size_t)n * sizeof(double));
    double bnorm = sqrt(dot(b, b, n)), rnorm = bnorm;
    write_vector(ctx, rd, r, n);
    CHECK_OK(cmrs_amg_device_apply(d, rd, zd));
    CHECK_OK(cmrs_amg_device_read(d, 0, 'x', z));
    memcpy(p, z, (size_t)n * sizeof(double));
    double rz = dot(r, z, n);
    int it = 0;
    while (!test_failures && rnorm > rtol * bnorm && it < max_iterations) {
        cmrscl_csr_spmv(a, 1.0, p, 0.0, q);
        double alpha = rz / dot(p, q, n);
        for (int32_t i = 0; i < n; ++i) {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        ++it;
        rnorm = sqrt(dot(r, r, n));
        write_vector(ctx, rd, r, n);
        CHECK_OK(cmrs_amg_device_apply(d, rd, zd));
        CHECK_OK(cmrs_amg_device_read(d, 0, 'x', z));
        double rz_next = dot(r, z, n);
        for (int32_t i = 0; i < n; ++i)
            p[i] = z[i] + rz_next / rz * p[i];
        rz = rz_next;
    }
    clReleaseMemObject(rd);
    clReleaseMemObject(zd);
    free(x);
    free(r);
    free(z);
    free(p);
    free(q);
    return it;
}

static void check_pcg(cmrscl_context ctx, const char *spec, int degree, int visits)
{
    amg_case t;
    if (!open_case(ctx, spec, degree, visits, &t))
        return;
    double *b = malloc((size_t)t.a.rows * sizeof(double)), *x = calloc((size_t)t.a.rows, 8);
    for (int32_t i = 0; i < t.a.rows; ++i)
        b[i] = 1;
    int host = 0;
    CHECK_OK(cmrs_amg_pcg(&t.a, &t.h, b, x, 1e-8, 100, &host, NULL));
    int device = device_pcg(ctx, &t.d, &t.a, b, 1e-8, 100);
    printf("%s (degree %d, %c-cycle): PCG to 1e-8, host cycle %d iterations, device cycle %d\n",
           spec, degree, visits > 1 ? 'W' : 'V', host, device);
    /* float's cycle is another preconditioner by its rounding: CG still converges, a little
     * later at most */
    int slack = prec == CMRSCL_DOUBLE ? 1 : 3;
    CHECK_MSG(abs(device - host) <= slack, "%s: PCG %d iterations with the device cycle, %d host",
              spec, device, host);
    free(b);
    free(x);
    close_case(&t);
}

/* The device's matrices made beside the host's set-up (amg_builder.c) are those the device
 * set-up makes after it, array for array, and the device set-up takes every one of them (none
 * is left to take) - with the Galerkin products on the host, as on this test's matrices (R and
 * the next level's A made from a GPU's own copies have the device conversion's plan instead:
 * test_amg_galerkin checks those). A matrix the builder cannot make (a memory cap below level 0's
 * A) fails the device set-up with the level and operator named, as without the builder; a host
 * set-up that fails after operators were told (max_levels 2 leaves too many rows to invert) waits
 * for the builder before it frees them (ThreadSanitizer reports the free racing the builder's reads
 * otherwise: a race the builder usually wins, so only that build sees it). */
static void check_builder(cmrscl_context ctx, const char *spec)
{
    amg_case want;
    if (!open_case(ctx, spec, 1, 1, &want))
        return;
    cmrs_amg_builder *b = NULL;
    CHECK_OK(cmrs_amg_builder_create(ctx, prec, false, want.a.rows, &b));
    cmrs_amg_sink sink = cmrs_amg_builder_sink(b);
    cmrs_amg_hierarchy h = {0};
    cmrs_amg_device d = {0};
    CHECK_OK(cmrs_amg_setup_to(&want.a, NULL, &sink, &h));
    cmrs_amg_builder_finish(b);
    CHECK_OK(cmrs_amg_device_setup(ctx, prec, prec, &h, NULL, b, &d));
    for (int l = 0; l + 1 < d.levels && !test_failures; ++l) {
        cmrs_amg_device_level *got = &d.level[l], *made = &want.d.level[l];
        char what[64];
        snprintf(what, sizeof what, "%s level %d's A", spec, l);
        check_same_cmrs(made->A, got->A, what);
        snprintf(what, sizeof what, "%s level %d's P", spec, l);
        check_same_cmrs(made->P, got->P, what);
        snprintf(what, sizeof what, "%s level %d's R", spec, l);
        check_same_cmrs(made->R, got->R, what);
        for (int which = AMG_OPERATOR_A; which <= AMG_OPERATOR_R; ++which) {
            cmrscl_matrix left = cmrs_amg_builder_take(b, l, (cmrs_amg_operator)which);
            CHECK_MSG(!left, "%s: level %d's %c was made beside the set-up and made again", spec, l,
                      "APR"[which]);
            cmrscl_matrix_free(left);
        }
    }
    CHECK_MSG(d.levels == want.d.levels && d.levels > 2, "%s: %d levels made beside, %d after",
              spec, d.levels, want.d.levels);
    cmrs_amg_device_free(&d);
    cmrs_amg_builder_free(b);
    cmrs_amg_free(&h);
    /* level 0's A cannot be made, with the builder or without */
    CHECK_OK(cmrscl_context_set_memory_limit(ctx, 1024));
    for (int with = 0; with < 2; ++with) {
        b = NULL;
        if (with)
            CHECK_OK(cmrs_amg_builder_create(ctx, prec, false, want.a.rows, &b));
        sink = cmrs_amg_builder_sink(b);
        CHECK_OK(cmrs_amg_setup_to(&want.a, NULL, b ? &sink : NULL, &h));
        cmrs_amg_builder_finish(b);
        cmrscl_status st = cmrs_amg_device_setup(ctx, prec, prec, &h, NULL, b, &d);
        CHECK_MSG(st == CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY &&
                      test_contains(cmrscl_last_error(), "AMG level 0's A on the device: ") &&
                      test_contains(cmrscl_last_error(), "memory limit"),
                  "%s under a 1 KiB cap, %s the builder: %s (%s)", spec, with ? "with" : "without",
                  cmrscl_status_name(st), cmrscl_last_error());
        cmrs_amg_builder_free(b);
        cmrs_amg_free(&h);
    }
    CHECK_OK(cmrscl_context_set_memory_limit(ctx, 0));
    /* the host set-up fails after level 0's A, P and R were told (stencil7:40's level 1 has
     * about 8,000 rows) */
    cmrscl_csr big;
    CHECK_OK(cmrscl_csr_generate("stencil7:40", &big));
    CHECK_OK(cmrs_amg_builder_create(ctx, prec, false, want.a.rows, &b));
    sink = cmrs_amg_builder_sink(b);
    cmrs_amg_options o;
    cmrs_amg_options_default(&o);
    o.max_levels = 2;
    cmrscl_status st = cmrs_amg_setup_to(&big, &o, &sink, &h);
    CHECK_MSG(
        st == CMRSCL_ERROR_INVALID_ARGUMENT && test_contains(cmrscl_last_error(), "max_levels"),
        "stencil7:40 with max_levels 2: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
    cmrs_amg_builder_free(b);
    cmrscl_csr_free(&big);
    close_case(&want);
}

int main(int argc, char **argv)
{
    if (!test_precision_arg(argc, argv, &prec))
        return 2;
    bound = prec == CMRSCL_DOUBLE ? 1e-12 : 3e-5;
    z_bound = prec == CMRSCL_DOUBLE ? 1e-12 : 1e-5;
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("amg_device");
    if (prec == CMRSCL_DOUBLE && !ctx->info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    /* convdiff is not symmetric: its coarsest level takes LU with pivots (and CG does not
     * apply) */
    const char *specs[] = {"stencil5:64", "stencil7:16", "stencil27:12", "convdiff:48"};
    for (int degree = 1; degree <= 3; ++degree) { /* Jacobi, Chebyshev of degrees 2 and 3 */
        for (int i = 0; i < 4; ++i)
            check_cycle(ctx, specs[i], degree, 1);
        for (int i = 0; i < 3; ++i)
            check_pcg(ctx, specs[i], degree, 1);
    }
    for (int degree = 1; degree <= 2; ++degree) { /* W-cycles */
        check_cycle(ctx, "stencil7:16", degree, 2);
        check_cycle(ctx, "convdiff:48", degree, 2);
        check_pcg(ctx, "stencil5:64", degree, 2);
    }
    check_builder(ctx, "stencil7:16");
    check_builder(ctx, "convdiff:48");
    cmrscl_context_free(ctx);
    return test_finish("amg_device");
}
