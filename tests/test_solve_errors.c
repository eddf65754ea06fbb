/* test_solve_errors.c - what the solvers (host/solve/) must refuse or report, on the device
 * chosen by CMRSCL_DEVICE, each with its status and a message naming the problem:
 *   - a non-square matrix, bad options (method, preconditioner, tolerances, iterations,
 *     check interval, restart; Jacobi with BiCGStab), NULL arguments;
 *   - buffers too small, b and x the same buffer, a queue of another context;
 *   - NaN or Inf in b or in x0 (the result's reason says which, nothing iterates);
 *   - breakdowns: CG on an indefinite matrix (p.Ap <= 0: "not positive definite"), BiCGStab
 *     whose (r0*, A p) vanishes, GMRES on a singular matrix; Jacobi on a zero diagonal;
 * and what users rely on besides: a monitor called at each check with the iterations done, a
 * values update seen by the next solve (Jacobi's diagonal taken again), an out-of-order queue
 * giving the in-order queue's bits, and the free functions taking NULL.
 * Usage: test_solve_errors float|double. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static cmrscl_precision prec;

/* An n x n matrix from diagonal d (and, with off, d_i on the diagonal and off_i at (i, n-1-i)). */
static void diagonal(int n, const double *d, const double *off, cmrscl_csr *out)
{
    int32_t *ri = malloc(sizeof(int32_t) * 2 * (size_t)n),
            *ci = malloc(sizeof(int32_t) * 2 * (size_t)n);
    double *v = malloc(sizeof(double) * 2 * (size_t)n);
    int k = 0;
    for (int i = 0; i < n; ++i) {
        if (d && d[i] != 0)
            ri[k] = i, ci[k] = i, v[k++] = d[i];
        if (off && off[i] != 0)
            ri[k] = i, ci[k] = n - 1 - i, v[k++] = off[i];
    }
    CHECK_OK(cmrscl_csr_from_coo(n, n, k, ri, ci, v, out));
    free(ri), free(ci), free(v);
}

static cmrscl_matrix make(cmrscl_context ctx, const cmrscl_csr *a)
{
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, a, NULL, &m));
    return m;
}

/* One solve on host arrays of doubles, in the test's precision. */
static cmrscl_status solve(cmrscl_matrix m, const cmrscl_solve_options *o, const double *b,
                           double *x, int n, cmrscl_solve_result *res)
{
    return test_solve_host(m, o, prec, b, x, n, res);
}

static void check_options(cmrscl_context ctx)
{
    cmrscl_csr a, wide;
    CHECK_OK(cmrscl_csr_generate("stencil5:6", &a));
    double cols[] = {1, 2, 3};
    int32_t ri[] = {0, 0, 1}, ci[] = {0, 2, 1};
    CHECK_OK(cmrscl_csr_from_coo(2, 3, 3, ri, ci, cols, &wide));
    cmrscl_matrix m = make(ctx, &a), mw = make(ctx, &wide);
    cmrscl_solver s = NULL;
    CHECK_STATUS(cmrscl_solver_create(mw, NULL, &s), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "square") &&
          test_contains(cmrscl_last_error(), "2 x 3"));
    CHECK_STATUS(cmrscl_solver_create(NULL, NULL, &s), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_solver_create(m, NULL, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    static const struct {
        cmrscl_solve_options o;
        cmrscl_status st;
        const char *says;
    } bad[] = {
        {{.method = 7}, CMRSCL_ERROR_INVALID_ARGUMENT, "method 7"},
        {{.preconditioner = 5}, CMRSCL_ERROR_INVALID_ARGUMENT, "preconditioner 5"},
        {{.rtol = -1}, CMRSCL_ERROR_INVALID_ARGUMENT, "rtol -1"},
        {{.atol = NAN}, CMRSCL_ERROR_INVALID_ARGUMENT, "atol nan"},
        {{.rtol = INFINITY}, CMRSCL_ERROR_INVALID_ARGUMENT, "rtol inf"},
        {{.max_iterations = -1}, CMRSCL_ERROR_INVALID_ARGUMENT, "max_iterations -1"},
        {{.max_iterations = (1 << 24) + 1}, CMRSCL_ERROR_INVALID_ARGUMENT, "max_iterations"},
        {{.check_interval = -2}, CMRSCL_ERROR_INVALID_ARGUMENT, "check_interval -2"},
        {{.method = CMRSCL_METHOD_GMRES, .restart = 300},
         CMRSCL_ERROR_INVALID_ARGUMENT,
         "restart 300"},
        {{.method = CMRSCL_METHOD_BICGSTAB, .preconditioner = CMRSCL_PRECONDITIONER_JACOBI},
         CMRSCL_ERROR_UNSUPPORTED,
         "Jacobi"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        cmrscl_status st = cmrscl_solver_create(m, &bad[i].o, &s);
        CHECK_MSG(st == bad[i].st && !s && test_contains(cmrscl_last_error(), bad[i].says),
                  "options %zu: %s (%s), expected %s naming '%s'", i, cmrscl_status_name(st),
                  cmrscl_last_error(), cmrscl_status_name(bad[i].st), bad[i].says);
    }
    cmrscl_solver_free(NULL);
    cmrscl_solve_result_free(NULL);
    cmrscl_solve_result zeroed = {0};
    cmrscl_solve_result_free(&zeroed);
    cmrscl_matrix_free(m), cmrscl_matrix_free(mw);
    cmrscl_csr_free(&a), cmrscl_csr_free(&wide);
}

static void check_buffers(cmrscl_context ctx)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil5:6", &a));
    cmrscl_matrix m = make(ctx, &a);
    cmrscl_solver s = NULL;
    CHECK_OK(cmrscl_solver_create(m, NULL, &s));
    cl_context c;
    cl_command_queue q;
    CHECK_OK(cmrscl_context_cl(ctx, &c, &q));
    size_t vs = prec == CMRSCL_DOUBLE ? sizeof(double) : sizeof(float), n = (size_t)a.rows;
    cl_int err;
    cl_mem small = clCreateBuffer(c, CL_MEM_READ_WRITE, vs * (n - 1), NULL, &err);
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, vs * n, NULL, &err);
    cl_mem x = clCreateBuffer(c, CL_MEM_READ_WRITE, vs * n, NULL, &err);
    cmrscl_solve_result r;
    CHECK_STATUS(cmrscl_solver_solve(s, small, x, NULL, 0, NULL, &r),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "b"));
    CHECK_STATUS(cmrscl_solver_solve(s, b, small, NULL, 0, NULL, &r),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "x"));
    CHECK_STATUS(cmrscl_solver_solve(s, b, b, NULL, 0, NULL, &r), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "different buffers"));
    CHECK_STATUS(cmrscl_solver_solve(s, b, x, NULL, 1, NULL, &r), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_solver_solve(NULL, b, x, NULL, 0, NULL, &r), CMRSCL_ERROR_INVALID_ARGUMENT);
    /* a queue of another context */
    cmrscl_context other = NULL;
    CHECK_OK(cmrscl_context_create(NULL, &other));
    cl_context oc;
    cl_command_queue oq;
    if (other && cmrscl_context_cl(other, &oc, &oq) == CMRSCL_OK)
        CHECK_STATUS(cmrscl_solver_solve(s, b, x, oq, 0, NULL, &r), CMRSCL_ERROR_CONTEXT_MISMATCH);
    cmrscl_context_free(other);
    clReleaseMemObject(small), clReleaseMemObject(b), clReleaseMemObject(x);
    cmrscl_solver_free(s);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

/* NaN or Inf in b or x0: refused with the reason, before any iteration. */
static void check_bad_input(cmrscl_context ctx)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil5:6", &a));
    int n = a.rows;
    cmrscl_matrix m = make(ctx, &a);
    double *b = malloc(sizeof(double) * (size_t)n), *x = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; ++i)
        b[i] = 1;
    b[5] = NAN, b[7] = INFINITY;
    cmrscl_solve_result r;
    CHECK_STATUS(solve(m, NULL, b, x, n, &r), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(r.reason == CMRSCL_SOLVE_BAD_INPUT && r.iterations == 0 &&
                  test_contains(cmrscl_last_error(), "b holds 2 values that are NaN or Inf"),
              "NaN in b: reason %s, %d iterations (%s)", cmrscl_solve_reason_name(r.reason),
              r.iterations, cmrscl_last_error());
    cmrscl_solve_result_free(&r);
    b[5] = b[7] = 1;
    x[3] = -INFINITY;
    CHECK_STATUS(solve(m, NULL, b, x, n, &r), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(r.reason == CMRSCL_SOLVE_BAD_INPUT && test_contains(cmrscl_last_error(), "x0"),
              "Inf in x0: reason %s (%s)", cmrscl_solve_reason_name(r.reason), cmrscl_last_error());
    cmrscl_solve_result_free(&r);
    free(b), free(x);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

static void check_breakdowns(cmrscl_context ctx)
{
    int n = 100;
    double *d = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    double *x = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; ++i)
        d[i] = i % 2 ? -1 : 2, b[i] = 1;
    cmrscl_csr a;
    diagonal(n, d, NULL, &a); /* indefinite: CG's p.Ap turns negative in its second iteration */
    cmrscl_matrix m = make(ctx, &a);
    cmrscl_solve_result r;
    CHECK_STATUS(solve(m, NULL, b, x, n, &r), CMRSCL_ERROR_BREAKDOWN);
    CHECK_MSG(r.reason == CMRSCL_SOLVE_BREAKDOWN && r.iterations == 1 && r.breakdown < 0 &&
                  test_contains(cmrscl_last_error(), "not positive definite") &&
                  test_contains(cmrscl_last_error(), "iteration 2"),
              "CG, indefinite: reason %s after %d iterations, value %g (%s)",
              cmrscl_solve_reason_name(r.reason), r.iterations, r.breakdown, cmrscl_last_error());
    cmrscl_solve_result_free(&r);
    cmrscl_matrix_free(m), cmrscl_csr_free(&a);
    /* BiCGStab, A = the exchange of rows 0 and 1, b = e0: (r0*, A p) = (e0, e1) = 0 */
    double ex[2] = {1, 1}, b2[2] = {1, 0}, x2[2] = {0, 0};
    diagonal(2, NULL, ex, &a);
    m = make(ctx, &a);
    cmrscl_solve_options o = {.method = CMRSCL_METHOD_BICGSTAB};
    CHECK_STATUS(solve(m, &o, b2, x2, 2, &r), CMRSCL_ERROR_BREAKDOWN);
    CHECK_MSG(r.reason == CMRSCL_SOLVE_BREAKDOWN && r.iterations == 0 &&
                  test_contains(cmrscl_last_error(), "(r0*, A p) = 0"),
              "BiCGStab: reason %s after %d iterations (%s)", cmrscl_solve_reason_name(r.reason),
              r.iterations, cmrscl_last_error());
    cmrscl_solve_result_free(&r);
    cmrscl_matrix_free(m), cmrscl_csr_free(&a);
    /* GMRES on the zero matrix: the Arnoldi process stops at once */
    diagonal(n, NULL, NULL, &a);
    m = make(ctx, &a);
    o.method = CMRSCL_METHOD_GMRES;
    memset(x, 0, sizeof(double) * (size_t)n);
    CHECK_STATUS(solve(m, &o, b, x, n, &r), CMRSCL_ERROR_BREAKDOWN);
    CHECK_MSG(r.reason == CMRSCL_SOLVE_BREAKDOWN && test_contains(cmrscl_last_error(), "singular"),
              "GMRES, singular: reason %s (%s)", cmrscl_solve_reason_name(r.reason),
              cmrscl_last_error());
    cmrscl_solve_result_free(&r);
    cmrscl_matrix_free(m), cmrscl_csr_free(&a);
    /* GMRES on a diagonal with a NaN: stopped as NaN, never reported converged */
    for (int i = 0; i < n; ++i)
        d[i] = 2 + i % 3;
    d[7] = NAN;
    diagonal(n, d, NULL, &a);
    m = make(ctx, &a);
    memset(x, 0, sizeof(double) * (size_t)n);
    CHECK_STATUS(solve(m, &o, b, x, n, &r), CMRSCL_ERROR_BREAKDOWN);
    CHECK_MSG(r.reason == CMRSCL_SOLVE_NONFINITE && !r.converged, "GMRES, NaN in A: reason %s (%s)",
              cmrscl_solve_reason_name(r.reason), cmrscl_last_error());
    cmrscl_solve_result_free(&r);
    cmrscl_matrix_free(m), cmrscl_csr_free(&a);
    diagonal(n, NULL, NULL, &a);
    m = make(ctx, &a);
    /* Jacobi on a zero diagonal: refused when the solver is made */
    o = (cmrscl_solve_options){.preconditioner = CMRSCL_PRECONDITIONER_JACOBI};
    cmrscl_solver s = NULL;
    CHECK_STATUS(cmrscl_solver_create(m, &o, &s), CMRSCL_ERROR_INVALID_MATRIX);
    CHECK(!s && test_contains(cmrscl_last_error(), "100 of the 100 rows"));
    cmrscl_matrix_free(m), cmrscl_csr_free(&a);
    free(d), free(b), free(x);
}

/* The monitor: called at every check, the iterations done growing to the result's. */
static int monitor_calls, monitor_last;
static bool monitor_grows = true;
static void monitor(void *data, int iterations, double residual)
{
    (void)data;
    monitor_grows = monitor_grows && iterations >= monitor_last && residual >= 0;
    monitor_last = iterations;
    ++monitor_calls;
}

static void check_use(cmrscl_context ctx)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil7:8", &a));
    int n = a.rows;
    cmrscl_matrix m = make(ctx, &a);
    double *b = malloc(sizeof(double) * (size_t)n), *x = calloc((size_t)n, sizeof(double));
    double *x2 = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; ++i)
        b[i] = 1;
    cmrscl_solve_options o = {
        .check_interval = 1, .monitor = monitor, .preconditioner = CMRSCL_PRECONDITIONER_JACOBI};
    o.rtol = prec == CMRSCL_DOUBLE ? 1e-8 : 1e-4;
    cmrscl_solver s = NULL;
    CHECK_OK(cmrscl_solver_create(m, &o, &s));
    cmrscl_solve_result r, r2;
    void *bd = test_values_in(b, n, prec), *xd = test_values_in(x, n, prec);
    if (s)
        CHECK_OK(cmrscl_solver_solve_host(s, bd, xd, &r));
    CHECK_MSG(s && r.converged && monitor_grows && monitor_calls == r.iterations + 1 &&
                  monitor_last == r.iterations,
              "monitor: %d calls, last %d, %d iterations", monitor_calls, monitor_last,
              s ? r.iterations : -1);
    /* the values doubled: the next solve sees them (the solution halves), Jacobi's diagonal
     * taken again (the same iterations) */
    double *twice = malloc(sizeof(double) * (size_t)a.nnz);
    for (int64_t k = 0; k < a.nnz; ++k)
        twice[k] = 2 * a.values[k];
    CHECK_OK(cmrscl_matrix_update_values(m, twice, CMRSCL_DOUBLE));
    void *xd2 = test_values_in(x2, n, prec);
    if (s)
        CHECK_OK(cmrscl_solver_solve_host(s, bd, xd2, &r2));
    double worst = 0;
    for (int i = 0; i < n; ++i) {
        double one = test_value_at(xd, prec, i), two = test_value_at(xd2, prec, i);
        worst = fmax(worst, fabs(2 * two - one) / fabs(one));
    }
    CHECK_MSG(s && r2.converged && r2.iterations == r.iterations &&
                  worst < (prec == CMRSCL_DOUBLE ? 1e-6 : 1e-2),
              "after a values update: %d iterations (before %d), x off from x/2 by %g",
              s ? r2.iterations : -1, s ? r.iterations : -1, worst);
    /* an out-of-order queue: the in-order queue's bits */
    cl_context c;
    cl_command_queue q;
    CHECK_OK(cmrscl_context_cl(ctx, &c, &q));
    cl_int err;
    cl_command_queue ooo = test_queue_out_of_order(ctx, &err);
    if (ooo && s) {
        size_t bytes = (prec == CMRSCL_DOUBLE ? sizeof(double) : sizeof(float)) * (size_t)n;
        cl_mem bm = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, bd, &err);
        cl_mem xm = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, x2, &err);
        void *got = malloc(bytes);
        cmrscl_solve_result r3;
        memset(x2, 0, sizeof(double) * (size_t)n);
        void *zero = test_values_in(x2, n, prec);
        clEnqueueWriteBuffer(q, xm, CL_TRUE, 0, bytes, zero, 0, NULL, NULL);
        CHECK_OK(cmrscl_solver_solve(s, bm, xm, ooo, 0, NULL, &r3));
        clEnqueueReadBuffer(q, xm, CL_TRUE, 0, bytes, got, 0, NULL, NULL);
        CHECK_MSG(r3.iterations == r2.iterations && !memcmp(got, xd2, bytes),
                  "out-of-order queue: %d iterations (in order %d), x %s", r3.iterations,
                  r2.iterations, memcmp(got, xd2, bytes) ? "differs" : "the same");
        cmrscl_solve_result_free(&r3);
        clReleaseMemObject(bm), clReleaseMemObject(xm);
        clReleaseCommandQueue(ooo);
        free(got), free(zero);
    } else {
        printf("out-of-order queue: not checked - the device refused one (%d)\n", (int)err);
    }
    if (s)
        cmrscl_solve_result_free(&r), cmrscl_solve_result_free(&r2);
    cmrscl_solver_free(s);
    free(bd), free(xd), free(xd2), free(b), free(x), free(x2), free(twice);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

int main(int argc, char **argv)
{
    if (!test_precision_arg(argc, argv, &prec))
        return 2;
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("solve_errors");
    cmrscl_device_info info;
    cmrscl_context_device_info(ctx, &info);
    if (prec == CMRSCL_DOUBLE && !info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    check_options(ctx);
    check_buffers(ctx);
    check_bad_input(ctx);
    check_breakdowns(ctx);
    check_use(ctx);
    cmrscl_context_free(ctx);
    return test_finish("solve_errors");
}
