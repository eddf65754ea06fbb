/* test_solve_trust.c - what a solve reports can be trusted (issue 56), on the device chosen by
 * CMRSCL_DEVICE:
 *   - CONVERGED only where ||b - A x|| meets the threshold: every method on matrices whose
 *     recurrence drifts from the true residual (a Poisson matrix in float below the
 *     precision's reach, 1138_bus in double at 1e-10); a converged x's true residual, on the
 *     device with its measured rounding, on the CPU in double and exactly, within the
 *     threshold; a drifted one above it, give or take the rounding; the float Poisson case must
 * drift (x's own rounding is above 1e-6 relative there, on any device), with restarts from the true
 * residual counted;
 *   - each tolerance decides the stop where it is the larger: atol alone, rtol alone, both
 *     either way - the threshold is max(rtol ||b||, atol), the last residual of the history
 *     meets it and the one before does not;
 *   - x after a fixed number of iterations equals the CPU's of the same algorithm in double, on
 *     an odd size with a diagonal that varies from row to row (the vector kernels' odd row,
 *     Jacobi's diagonal there), every method, CG's iteration fused and not - GMRES's
 *     orthogonalisation in the working precision among what it sees;
 *   - b = 0 from x0 != 0: x = 0, residual 0.
 * Usage: test_solve_trust float|double. */
#include "solve/solve.h"
#include "solve_reference.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static cmrscl_precision prec;
static double unit;

static const char *label(const cmrscl_solve_options *o)
{
    return o->preconditioner ? "cg+jacobi" : cmrscl_method_name(o->method);
}

/* One solve on host arrays of doubles, in the test's precision. */
static cmrscl_status solve(cmrscl_matrix m, const cmrscl_solve_options *o, const double *b,
                           double *x, int n, cmrscl_solve_result *res)
{
    return test_solve_host(m, o, prec, b, x, n, res);
}

/* The rounding of b - A x in the precision, a bound on the norm of its error: row i's at most
 * (len + 2) u (|b_i| + sum_j |a_ij x_j|). */
static double residual_rounding(const cmrscl_csr *a, const double *b, const double *x)
{
    double bound = 0;
    for (int i = 0; i < a->rows; ++i) {
        double e = fabs(b[i]);
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            e += fabs(a->values[k] * x[a->col_ind[k]]);
        e *= (double)(a->row_ptr[i + 1] - a->row_ptr[i] + 2) * unit;
        bound += e * e;
    }
    return 2 * sqrt(bound);
}

/* ||b - A x|| with the library's reference, whose rows carry their rounding (exact but for
 * the last bits): what the rounding of b - A x in double cannot blur. */
static double exact_residual(const cmrscl_csr *a, const double *b, const double *x)
{
    int n = a->rows;
    double *r = malloc(sizeof(double) * ((size_t)n + 1)), norm = 0;
    memcpy(r, b, sizeof(double) * (size_t)n);
    CHECK_OK(cmrscl_csr_spmv(a, -1.0, x, 1.0, r));
    for (int i = 0; i < n; ++i)
        norm += r[i] * r[i];
    free(r);
    return sqrt(norm);
}

/* A solve from x0 = 0 whose answer is checked for honesty; returns its reason. */
static cmrscl_solve_reason check_honest(cmrscl_context ctx, const char *name, const cmrscl_csr *a,
                                        const cmrscl_solve_options *o)
{
    cmrscl_csr ra = test_csr_rounded(a, prec);
    int n = a->rows;
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, a, NULL, &m));
    double *b = malloc(sizeof(double) * (size_t)n), *x = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; ++i)
        b[i] = 1.0;
    cmrscl_solve_result res = {0};
    /* A breakdown is an honest answer too: BiCGStab's rho = (r0*, r) falls to 1e-21 of |r0*|
     * |r| on this matrix before 1e-10 is met, and where it rounds to exactly 0 depends on the
     * order of the sums - the plan's work-groups (1138_bus in double, in numpy too) */
    cmrscl_status st = m ? solve(m, o, b, x, n, &res) : CMRSCL_OK;
    CHECK_MSG(st == CMRSCL_OK ||
                  (st == CMRSCL_ERROR_BREAKDOWN && res.reason == CMRSCL_SOLVE_BREAKDOWN &&
                   o->method == CMRSCL_METHOD_BICGSTAB),
              "%s: solve returned %s (%s)", name, cmrscl_status_name(st), cmrscl_last_error());
    double cpu = ref_residual(&ra, b, x), exact = exact_residual(&ra, b, x);
    double slack = residual_rounding(&ra, b, x);
    char what[128];
    snprintf(what, sizeof what, "%s, %s, %s, rtol %g", name, label(o),
             prec == CMRSCL_DOUBLE ? "double" : "float", o->rtol);
    printf("%-44s %-14s %5d iterations, %d restarts, ||b - A x|| %.3e +- %.1e (CPU %.3e, "
           "exact %.3e), threshold %.3e\n",
           what, cmrscl_solve_reason_name(res.reason), res.iterations, res.replacements,
           res.true_residual, res.true_residual_rounding, cpu, exact, res.threshold);
    CHECK_MSG(res.converged == (res.reason == CMRSCL_SOLVE_CONVERGED),
              "%s: converged %d with reason %s", what, res.converged,
              cmrscl_solve_reason_name(res.reason));
    /* converged: met with room for the rounding, so that the CPU's sums in another order
     * and the exact residual meet it too */
    if (res.converged)
        CHECK_MSG(res.true_residual + res.true_residual_rounding <= res.threshold &&
                      cpu <= res.threshold && exact <= res.threshold,
                  "%s: converged with ||b - A x|| %g +- %g (CPU %g, exact %g) above the "
                  "threshold %g",
                  what, res.true_residual, res.true_residual_rounding, cpu, exact, res.threshold);
    /* the rounding measured is that of an evaluation: within the bound of any */
    CHECK_MSG(res.true_residual_rounding >= 0 && res.true_residual_rounding <= slack,
              "%s: the rounding of ||b - A x|| given as %g, the bound %g", what,
              res.true_residual_rounding, slack);
    if (res.reason == CMRSCL_SOLVE_DRIFTED)
        CHECK_MSG(res.true_residual + res.true_residual_rounding > res.threshold &&
                      res.residual <= res.threshold && res.iterations < o->max_iterations,
                  "%s: drifted with ||r|| %g, ||b - A x|| %g, threshold %g after %d of %d "
                  "iterations",
                  what, res.residual, res.true_residual, res.threshold, res.iterations,
                  o->max_iterations);
    CHECK_MSG(res.history_length == res.iterations + 1 &&
                  res.history[res.history_length - 1] == res.residual,
              "%s: %d history entries for %d iterations", what, res.history_length, res.iterations);
    cmrscl_solve_reason reason = res.reason;
    cmrscl_solve_result_free(&res);
    free(b), free(x);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&ra);
    return reason;
}

static void honest_cases(cmrscl_context ctx)
{
    static const cmrscl_solve_options methods[] = {
        {.method = CMRSCL_METHOD_CG},
        {.method = CMRSCL_METHOD_CG, .preconditioner = CMRSCL_PRECONDITIONER_JACOBI},
        {.method = CMRSCL_METHOD_BICGSTAB},
        {.method = CMRSCL_METHOD_GMRES},
    };
    cmrscl_csr a;
    bool dbl = prec == CMRSCL_DOUBLE;
    const char *name = dbl ? "1138_bus.mtx" : "stencil5:50";
    CHECK_OK(dbl ? cmrscl_mtx_read(test_shared_matrix(name), NULL, &a)
                 : cmrscl_csr_generate(name, &a));
    int drifted = 0;
    for (size_t k = 0; k < sizeof methods / sizeof methods[0]; ++k) {
        cmrscl_solve_options o = methods[k];
        o.rtol = dbl ? 1e-10 : 1e-6;
        o.max_iterations = 6000;
        drifted += check_honest(ctx, name, &a, &o) == CMRSCL_SOLVE_DRIFTED;
    }
    /* below float's reach: the recurrence claims 1e-6 where x's rounding alone leaves more */
    if (!dbl)
        CHECK_MSG(drifted >= 2, "stencil5:50 in float at 1e-6: %d of 4 methods drifted", drifted);
    cmrscl_csr_free(&a);
}

/* The rounding band, by construction: a solve to rtol 1e-6 gives ||b - A x|| = T, evaluated
 * with rounding E; the same solve again (the same bits to the same iteration) with atol
 * T + E / 2 alone meets the threshold by T but not with room for E, so it must not say
 * converged - whatever plan the device's sums took, which the trajectories of the cases above
 * depend on. */
static void band_cases(cmrscl_context ctx)
{
    static const cmrscl_method methods[] = {CMRSCL_METHOD_CG, CMRSCL_METHOD_BICGSTAB,
                                            CMRSCL_METHOD_GMRES};
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil7:12", &a));
    int n = a.rows;
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, NULL, &m));
    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; ++i)
        b[i] = 1.0;
    for (size_t k = 0; m && k < sizeof methods / sizeof methods[0]; ++k) {
        cmrscl_solve_options o = {.method = methods[k],
                                  .rtol = prec == CMRSCL_DOUBLE ? 1e-6 : 1e-3};
        cmrscl_solve_result first = {0}, again = {0};
        memset(x, 0, sizeof(double) * (size_t)n);
        CHECK_OK(solve(m, &o, b, x, n, &first));
        const char *name = cmrscl_method_name(methods[k]);
        CHECK_MSG(first.converged && first.true_residual_rounding > 0,
                  "band, %s: the first solve %s with rounding %g", name,
                  cmrscl_solve_reason_name(first.reason), first.true_residual_rounding);
        o.rtol = 0;
        o.atol = first.true_residual + first.true_residual_rounding / 2;
        o.max_iterations = first.iterations;
        memset(x, 0, sizeof(double) * (size_t)n);
        cmrscl_status st = solve(m, &o, b, x, n, &again);
        printf("band, %-9s first: %s after %d iterations, ||b - A x|| %.6e +- %.1e; again with "
               "atol %.6e: %s after %d, ||b - A x|| %.6e\n",
               name, cmrscl_solve_reason_name(first.reason), first.iterations, first.true_residual,
               first.true_residual_rounding, o.atol, cmrscl_solve_reason_name(again.reason),
               again.iterations, again.true_residual);
        CHECK_MSG(st == CMRSCL_OK, "band, %s: solve returned %s (%s)", name, cmrscl_status_name(st),
                  cmrscl_last_error());
        CHECK_MSG(again.iterations == first.iterations && again.true_residual <= o.atol &&
                      again.true_residual + first.true_residual_rounding > o.atol,
                  "band, %s: not in the band (%d iterations, ||b - A x|| %g against %g)", name,
                  again.iterations, again.true_residual, o.atol);
        CHECK_MSG(!again.converged ||
                      again.true_residual + again.true_residual_rounding <= again.threshold,
                  "band, %s: converged with ||b - A x|| %g +- %g against the threshold %g", name,
                  again.true_residual, again.true_residual_rounding, again.threshold);
        cmrscl_solve_result_free(&first);
        cmrscl_solve_result_free(&again);
    }
    free(b), free(x);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

/* rtol and atol, alone and together: the larger decides. */
static void tolerance_cases(cmrscl_context ctx)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil7:10", &a));
    int n = a.rows;
    double bnorm = sqrt((double)n); /* b = 1 */
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, NULL, &m));
    static const struct {
        const char *what;
        double rtol, atol_scale; /* atol = atol_scale ||b|| */
        bool atol_decides;
    } cases[] = {
        {"atol alone", 0, 1e-3, true},
        {"rtol alone", 1e-3, 0, false},
        {"both, atol the larger", 1e-5, 2e-3, true},
        {"both, rtol the larger", 2e-3, 1e-5, false},
        {"atol above ||b||", 0, 2, true},
    };
    for (size_t c = 0; m && c < sizeof cases / sizeof cases[0]; ++c) {
        cmrscl_solve_options o = {.rtol = cases[c].rtol, .atol = cases[c].atol_scale * bnorm};
        double want = fmax(o.rtol * bnorm, o.atol);
        double *b = malloc(sizeof(double) * (size_t)n), *x = calloc((size_t)n, sizeof(double));
        for (int i = 0; i < n; ++i)
            b[i] = 1.0;
        cmrscl_solve_result res = {0};
        CHECK_OK(solve(m, &o, b, x, n, &res));
        int k = res.history_length - 1;
        bool first_meets = k >= 1 ? res.history[k - 1] > want : res.history[0] <= want;
        CHECK_MSG(res.converged && fabs(res.threshold - want) <= 1e-6 * want &&
                      res.history[k] <= want * (1 + 1e-6) && first_meets &&
                      res.true_residual <= want,
                  "%s: %s after %d iterations, threshold %g (want %g), ||r|| %g, the one before "
                  "%g, ||b - A x|| %g",
                  cases[c].what, cmrscl_solve_reason_name(res.reason), res.iterations,
                  res.threshold, want, k >= 0 ? res.history[k] : -1,
                  k >= 1 ? res.history[k - 1] : -1, res.true_residual);
        printf("%-24s threshold %.3e (%s decides): %d iterations, ||r|| %.3e\n", cases[c].what,
               res.threshold, cases[c].atol_decides ? "atol" : "rtol", res.iterations,
               res.residual);
        cmrscl_solve_result_free(&res);
        free(b), free(x);
    }
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

/* The leading rows x rows block of a (a principal submatrix: SPD where a is). */
static cmrscl_csr leading_block(const cmrscl_csr *a, int rows)
{
    cmrscl_csr out = {0};
    int64_t nnz = 0;
    for (int64_t k = 0; k < a->row_ptr[rows]; ++k)
        nnz += a->col_ind[k] < rows;
    out.rows = out.cols = rows, out.nnz = nnz;
    out.row_ptr = malloc(sizeof(int64_t) * ((size_t)rows + 1));
    out.col_ind = malloc(sizeof(int32_t) * (size_t)(nnz ? nnz : 1));
    out.values = malloc(sizeof(double) * (size_t)(nnz ? nnz : 1));
    nnz = 0;
    for (int i = 0; i < rows; ++i) {
        out.row_ptr[i] = nnz;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            if (a->col_ind[k] < rows)
                out.col_ind[nnz] = a->col_ind[k], out.values[nnz++] = a->values[k];
    }
    out.row_ptr[rows] = nnz;
    return out;
}

/* x after `steps` iterations against the CPU's same algorithm in double, on an odd size. */
static void check_steps(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_solve_options *o,
                        int steps, const char *fused)
{
    int n = a->rows;
    cmrscl_csr ra = test_csr_rounded(a, prec);
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, a, NULL, &m));
    double *b = malloc(sizeof(double) * (size_t)n), *x = calloc((size_t)n, sizeof(double)),
           *xr = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; ++i)
        b[i] = 1.0 + (i % 7) / 7.0;
    cmrscl_solve_options s = *o;
    s.rtol = 1e-300, s.max_iterations = steps;
    cmrscl_solve_result res = {0};
    if (fused)
        setenv("CMRSCL_SOLVE_FUSED", fused, 1);
    if (m)
        CHECK_OK(solve(m, &s, b, x, n, &res));
    unsetenv("CMRSCL_SOLVE_FUSED");
    switch (o->method) {
    case CMRSCL_METHOD_CG: ref_cg(&ra, b, xr, 0, steps, o->preconditioner != 0, REF_DEVICE); break;
    case CMRSCL_METHOD_BICGSTAB: ref_bicgstab(&ra, b, xr, 0, steps, REF_DEVICE); break;
    default: ref_gmres(&ra, b, xr, 0, steps, o->restart); break;
    }
    double diff = 0, norm = 0;
    for (int i = 0; i < n; ++i)
        diff += (x[i] - xr[i]) * (x[i] - xr[i]), norm += xr[i] * xr[i];
    double rel = sqrt(diff / norm), bound = prec == CMRSCL_DOUBLE ? 1e-9 : 1e-3;
    printf("odd size %d, %-10s %s: x after %d iterations %.2e from the CPU's\n", n, label(o),
           fused ? (atoi(fused) ? "fused" : "unfused") : "", steps, rel);
    CHECK_MSG(res.iterations == steps && rel <= bound,
              "odd size %d, %s%s: %d iterations; x after %d differs from the CPU's same "
              "algorithm by %.3e (at most %g)",
              n, label(o), fused ? (atoi(fused) ? ", fused" : ", unfused") : "", res.iterations,
              steps, rel, bound);
    cmrscl_solve_result_free(&res);
    free(b), free(x), free(xr);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&ra);
}

static void step_cases(cmrscl_context ctx)
{
    cmrscl_csr whole, a;
    CHECK_OK(cmrscl_mtx_read(test_shared_matrix("Trefethen_2000.mtx"), NULL, &whole));
    a = leading_block(&whole, 1999); /* odd; its diagonal the primes */
    cmrscl_solve_options cg = {.method = CMRSCL_METHOD_CG},
                         pcg = {.method = CMRSCL_METHOD_CG,
                                .preconditioner = CMRSCL_PRECONDITIONER_JACOBI},
                         bicg = {.method = CMRSCL_METHOD_BICGSTAB},
                         gmres = {.method = CMRSCL_METHOD_GMRES, .restart = 7};
    check_steps(ctx, &a, &cg, 6, "0");
    check_steps(ctx, &a, &pcg, 6, "0");
    check_steps(ctx, &a, &pcg, 6, "1");
    check_steps(ctx, &a, &bicg, 6, NULL);
    check_steps(ctx, &a, &gmres, 16, NULL);
    cmrscl_csr_free(&a);
    cmrscl_csr_free(&whole);
}

/* b = 0 from x0 != 0: x = 0 at once, and its residual 0. */
static void zero_rhs(cmrscl_context ctx)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil7:5", &a));
    int n = a.rows;
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, NULL, &m));
    double *b = calloc((size_t)n, sizeof(double)), *x = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; ++i)
        x[i] = 1.0 + i % 3;
    cmrscl_solve_options o = {0};
    cmrscl_solve_result res = {0};
    if (m)
        CHECK_OK(solve(m, &o, b, x, n, &res));
    bool zero = true;
    for (int i = 0; i < n; ++i)
        zero = zero && x[i] == 0;
    CHECK_MSG(res.converged && res.iterations == 0 && zero && res.residual == 0 &&
                  res.true_residual == 0,
              "b = 0, x0 != 0: %s, %d iterations, x %szero, residual %g, true %g",
              cmrscl_solve_reason_name(res.reason), res.iterations, zero ? "" : "not ",
              res.residual, res.true_residual);
    cmrscl_solve_result_free(&res);
    free(b), free(x);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

int main(int argc, char **argv)
{
    if (!test_precision_arg(argc, argv, &prec))
        return 2;
    unit = prec == CMRSCL_DOUBLE ? 0x1p-53 : 0x1p-24;
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("solve_trust");
    if (prec == CMRSCL_DOUBLE && !ctx->info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    honest_cases(ctx);
    band_cases(ctx);
    tolerance_cases(ctx);
    step_cases(ctx);
    zero_rhs(ctx);
    cmrscl_context_free(ctx);
    return test_finish("solve_trust");
}
