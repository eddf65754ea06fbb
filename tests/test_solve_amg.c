/* test_solve_amg.c - CG preconditioned by AMG on the device (include/cmrscl_precond.h,
 * host/solve/solve_pcg.c), on the device chosen by CMRSCL_DEVICE:
 *   - on 2-D and 3-D Poisson matrices and a 27-point stencil: converged with ||b - A x|| (the
 *     CPU's, in double) at the threshold, in the iterations of the host's PCG with the same
 *     hierarchy (tests/ ground truth, host/precond/amg_cycle.c: within 1 in double), in far
 *     fewer than CG's; the hierarchy's facts (levels, rows, complexity, set-up times); the same
 *     bits from a second solve, and from level 0 on the solver's matrix (options.matrix);
 *   - a Chebyshev smoother of degree 3 to the same threshold in no more iterations;
 *   - an update to new values of the same pattern solving as a preconditioner made anew;
 *   - BiCGStab and GMRES(4) with AMG on the right: x after three iterations the host
 *     reference's, converged in fewer than half the method's iterations alone;
 *   - in double, the cycle in float (mixed precision) to the same threshold;
 *   - what must fail, named: the object without the preconditioner asked
 *     and the other way round, an object of another size, a non-square matrix, a zero
 *     diagonal entry.
 * Usage: test_solve_amg float|double. */
#include "precond/precond.h"
#include "amg_reference.h"
#include "solve_reference.h"
#include "test_util.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static cmrscl_precision prec;

/* One solve on host arrays of doubles, in the test's precision. */
static cmrscl_status solve(cmrscl_matrix m, const cmrscl_solve_options *o, const double *b,
                           double *x, int n, cmrscl_solve_result *res)
{
    return test_solve_host(m, o, prec, b, x, n, res);
}

/* The matrix of spec on the host and the device, its AMG (default options) and b_i = 1 +
 * (i mod 7) / 7 (malloc'ed). */
static double *problem(cmrscl_context ctx, const char *spec, cmrscl_csr *a, cmrscl_matrix *m,
                       cmrscl_precond *amg)
{
    *m = NULL, *amg = NULL;
    CHECK_OK(cmrscl_csr_generate(spec, a));
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, a, NULL, m));
    CHECK_OK(cmrscl_precond_create_amg(ctx, prec, a, NULL, amg));
    double *b = malloc(sizeof(double) * ((size_t)a->rows + 1));
    for (int i = 0; b && i < a->rows; ++i)
        b[i] = 1.0 + (i % 7) / 7.0;
    return b;
}

static void check_amg_cg(cmrscl_context ctx, const char *spec, double rtol)
{
    cmrscl_csr a;
    cmrscl_matrix m;
    cmrscl_precond amg;
    double *b = problem(ctx, spec, &a, &m, &amg);
    int n = a.rows;
    double *x = calloc((size_t)n, sizeof(double)), *x2 = calloc((size_t)n, sizeof(double)),
           *xh = calloc((size_t)n, sizeof(double));
    cmrscl_amg_info info;
    CHECK_OK(cmrscl_precond_amg_info(amg, &info));
    int64_t entries = 0;
    for (int l = 0; l < info.levels; ++l)
        entries += info.entries[l];
    CHECK_MSG(info.levels >= 2 && info.rows[0] == n && info.entries[0] == a.nnz &&
                  info.rows[info.levels - 1] < n &&
                  fabs(info.operator_complexity - (double)entries / (double)a.nnz) <= 1e-12 &&
                  info.seconds_total > 0 && info.seconds_rap >= 0,
              "%s: AMG of %d levels, rows %d .. %d, operator complexity %g", spec, info.levels,
              info.rows[0], info.rows[info.levels - 1], info.operator_complexity);
    cmrscl_solve_options o = {
        .rtol = rtol, .preconditioner = CMRSCL_PRECONDITIONER_AMG, .precond = amg};
    cmrscl_solve_result res = {0}, again = {0}, plain = {0};
    if (m && amg) {
        CHECK_OK(solve(m, &o, b, x, n, &res));
        CHECK_OK(solve(m, &o, b, x2, n, &again));
    }
    cmrscl_solve_options none = {.rtol = rtol};
    double *xp = calloc((size_t)n, sizeof(double));
    if (m)
        CHECK_OK(solve(m, &none, b, xp, n, &plain));
    /* the host's PCG with the same hierarchy: the ground truth of the iterations */
    cmrs_amg_hierarchy h = {0};
    int host_iterations = -1;
    double host_relres = 0;
    CHECK_OK(cmrs_amg_setup(&a, NULL, &h));
    CHECK_OK(cmrs_amg_pcg(&a, &h, b, xh, rtol, 1000, &host_iterations, &host_relres));
    cmrs_amg_free(&h);
    double cpu = ref_residual(&a, b, x);
    printf("%-14s %s: AMG %d levels (%d -> %d rows, operator complexity %.3f, set-up %.3f s): "
           "%d iterations (host PCG %d, CG %d), ||b - A x|| %.2e, threshold %.2e, %d launches\n",
           spec, prec == CMRSCL_DOUBLE ? "double" : "float", info.levels, info.rows[0],
           info.rows[info.levels - 1], info.operator_complexity, info.seconds_total, res.iterations,
           host_iterations, plain.iterations, cpu, res.threshold, res.launches_per_iteration);
    CHECK_MSG(res.converged && cpu <= res.threshold * (prec == CMRSCL_DOUBLE ? 1.0001 : 1.01),
              "%s: %s after %d iterations, ||b - A x|| %g (CPU) against %g", spec,
              cmrscl_solve_reason_name(res.reason), res.iterations, cpu, res.threshold);
    CHECK_MSG(prec != CMRSCL_DOUBLE || abs(res.iterations - host_iterations) <= 1,
              "%s: %d iterations, the host's PCG with the same hierarchy %d", spec, res.iterations,
              host_iterations);
    CHECK_MSG(res.iterations * 2 < plain.iterations, "%s: AMG-CG %d iterations, CG %d", spec,
              res.iterations, plain.iterations);
    CHECK_MSG(again.iterations == res.iterations && !memcmp(x, x2, sizeof(double) * (size_t)n),
              "%s: a second solve gave %d iterations (the first %d) and another x", spec,
              again.iterations, res.iterations);
    /* level 0 on the solver's own matrix (options.matrix): the same plan, so the same bits,
     * with fewer bytes of its own */
    cmrscl_amg_options shared = CMRSCL_AMG_OPTIONS_INIT;
    shared.matrix = m;
    cmrscl_precond borrowing = NULL;
    cmrscl_solve_result third = {0};
    if (m)
        CHECK_OK(cmrscl_precond_create_amg(ctx, prec, &a, &shared, &borrowing));
    if (borrowing) {
        cmrscl_amg_info bi;
        CHECK_OK(cmrscl_precond_amg_info(borrowing, &bi));
        o.precond = borrowing;
        memset(x2, 0, sizeof(double) * (size_t)n);
        CHECK_OK(solve(m, &o, b, x2, n, &third));
        CHECK_MSG(third.iterations == res.iterations &&
                      !memcmp(x, x2, sizeof(double) * (size_t)n) &&
                      bi.device_bytes < info.device_bytes,
                  "%s: level 0 on the solver's matrix: %d iterations (%d), x %s, %llu bytes "
                  "(%llu)",
                  spec, third.iterations, res.iterations,
                  memcmp(x, x2, sizeof(double) * (size_t)n) ? "differs" : "the same",
                  (unsigned long long)bi.device_bytes, (unsigned long long)info.device_bytes);
    }
    cmrscl_solve_result_free(&third);
    cmrscl_precond_free(borrowing);
    /* level 0's aggregates: each row's in [-1, rows of level 1), every aggregate met */
    int32_t *agg = malloc(sizeof(int32_t) * (size_t)n);
    int32_t coarse = info.rows[1], bad = 0, met = 0;
    char *seen = calloc((size_t)coarse + 1, 1);
    if (amg && agg && seen) {
        CHECK_OK(cmrscl_precond_amg_aggregates(amg, 0, agg));
        for (int i = 0; i < n; ++i) {
            bad += agg[i] < -1 || agg[i] >= coarse;
            if (agg[i] >= 0 && agg[i] < coarse && !seen[agg[i]])
                seen[agg[i]] = 1, ++met;
        }
        CHECK_MSG(!bad && met == coarse, "%s: aggregates: %d out of range, %d of %d met", spec,
                  (int)bad, (int)met, (int)coarse);
        cmrscl_status no = cmrscl_precond_amg_aggregates(amg, info.levels - 1, agg);
        CHECK_MSG(no == CMRSCL_ERROR_INVALID_ARGUMENT &&
                      test_contains(cmrscl_last_error(), "have aggregates"),
                  "the last level's aggregates: %s (%s)", cmrscl_status_name(no),
                  cmrscl_last_error());
    }
    free(agg), free(seen);
    /* a Chebyshev smoother of degree 3: the threshold on the CPU's ||b - A x||, in no more
     * iterations than Jacobi's */
    cmrscl_amg_options cheb = CMRSCL_AMG_OPTIONS_INIT;
    cheb.chebyshev = 3;
    cmrscl_precond chebyshev = NULL;
    cmrscl_solve_result fourth = {0};
    if (m)
        CHECK_OK(cmrscl_precond_create_amg(ctx, prec, &a, &cheb, &chebyshev));
    if (chebyshev) {
        o.precond = chebyshev;
        memset(x2, 0, sizeof(double) * (size_t)n);
        CHECK_OK(solve(m, &o, b, x2, n, &fourth));
        double cheb_cpu = ref_residual(&a, b, x2);
        printf("%-14s %s: Chebyshev(3) smoother %d iterations (Jacobi %d), ||b - A x|| %.2e\n",
               spec, prec == CMRSCL_DOUBLE ? "double" : "float", fourth.iterations, res.iterations,
               cheb_cpu);
        CHECK_MSG(fourth.converged &&
                      cheb_cpu <= fourth.threshold * (prec == CMRSCL_DOUBLE ? 1.0001 : 1.01) &&
                      fourth.iterations <= res.iterations,
                  "%s: Chebyshev(3) %s after %d iterations (Jacobi %d), ||b - A x|| %g against %g",
                  spec, cmrscl_solve_reason_name(fourth.reason), fourth.iterations, res.iterations,
                  cheb_cpu, fourth.threshold);
    }
    cmrscl_solve_result_free(&fourth);
    cmrscl_precond_free(chebyshev);
    cmrscl_solve_result_free(&res), cmrscl_solve_result_free(&again);
    cmrscl_solve_result_free(&plain);
    free(b), free(x), free(x2), free(xh), free(xp);
    cmrscl_precond_free(amg);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

/* Mixed precision (double, only): the cycle in float under CG in double reaches the same
 * threshold on ||b - A x|| (the CPU's), in at most two iterations more than the double
 * cycle, with a hierarchy of fewer bytes - fewer still with the solver's matrix given, whose
 * level 0 is that matrix rounded on the device (its index arrays shared); a float_cycle other
 * than 0 or 1 is refused. */
static void check_float_cycle(cmrscl_context ctx, const char *spec)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate(spec, &a));
    int n = a.rows;
    cmrscl_matrix m = NULL;
    cmrscl_precond full = NULL, mixed = NULL, bad = NULL, twin = NULL;
    cmrscl_amg_options opt = CMRSCL_AMG_OPTIONS_INIT;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_DOUBLE, &a, NULL, &m));
    CHECK_OK(cmrscl_precond_create_amg(ctx, CMRSCL_DOUBLE, &a, &opt, &full));
    opt.float_cycle = 1;
    CHECK_OK(cmrscl_precond_create_amg(ctx, CMRSCL_DOUBLE, &a, &opt, &mixed));
    opt.matrix = m;
    CHECK_OK(cmrscl_precond_create_amg(ctx, CMRSCL_DOUBLE, &a, &opt, &twin));
    opt.matrix = NULL;
    opt.float_cycle = 2;
    cmrscl_status st = cmrscl_precond_create_amg(ctx, CMRSCL_DOUBLE, &a, &opt, &bad);
    CHECK_MSG(st == CMRSCL_ERROR_INVALID_ARGUMENT && !bad &&
                  test_contains(cmrscl_last_error(), "float_cycle 2"),
              "float_cycle 2: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
    if (!m || !full || !mixed || !twin) {
        cmrscl_precond_free(full), cmrscl_precond_free(mixed), cmrscl_precond_free(twin);
        cmrscl_matrix_free(m);
        cmrscl_csr_free(&a);
        return;
    }
    cmrscl_amg_info fi, mi, ti;
    CHECK_OK(cmrscl_precond_amg_info(full, &fi));
    CHECK_OK(cmrscl_precond_amg_info(mixed, &mi));
    CHECK_OK(cmrscl_precond_amg_info(twin, &ti));
    double *b = malloc(sizeof(double) * (size_t)n), *x = calloc((size_t)n, sizeof(double)),
           *xm = calloc((size_t)n, sizeof(double)), *xt = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; ++i)
        b[i] = 1.0 + (i % 7) / 7.0;
    cmrscl_solve_options o = {
        .rtol = 1e-8, .preconditioner = CMRSCL_PRECONDITIONER_AMG, .precond = full};
    cmrscl_solve_result res = {0}, mres = {0}, tres = {0};
    CHECK_OK(test_solve_host(m, &o, CMRSCL_DOUBLE, b, x, n, &res));
    o.precond = mixed;
    CHECK_OK(test_solve_host(m, &o, CMRSCL_DOUBLE, b, xm, n, &mres));
    o.precond = twin;
    CHECK_OK(test_solve_host(m, &o, CMRSCL_DOUBLE, b, xt, n, &tres));
    double cpu = ref_residual(&a, b, xm), tcpu = ref_residual(&a, b, xt);
    printf("%s, float cycle on the solver's matrix rounded: %d iterations, ||b - A x|| %.2e; "
           "hierarchy %.2f MB\n",
           spec, tres.iterations, tcpu, ti.device_bytes / 1e6);
    CHECK_MSG(tres.converged && tcpu <= tres.threshold * 1.0001 &&
                  tres.iterations <= res.iterations + 2 && ti.cycle_precision == CMRSCL_FLOAT &&
                  ti.device_bytes < mi.device_bytes,
              "%s: the float cycle on the solver's matrix: %s after %d iterations (double cycle "
              "%d), ||b - A x|| %g against %g, %llu bytes against a copy's %llu",
              spec, cmrscl_solve_reason_name(tres.reason), tres.iterations, res.iterations, tcpu,
              tres.threshold, (unsigned long long)ti.device_bytes,
              (unsigned long long)mi.device_bytes);
    printf("%s, float cycle in double CG: %d iterations (double cycle %d), ||b - A x|| %.2e, "
           "threshold %.2e; hierarchy %.2f MB (double cycle %.2f MB)\n",
           spec, mres.iterations, res.iterations, cpu, mres.threshold, mi.device_bytes / 1e6,
           fi.device_bytes / 1e6);
    CHECK_MSG(mres.converged && cpu <= mres.threshold * 1.0001 &&
                  mres.iterations <= res.iterations + 2,
              "%s: the float cycle: %s after %d iterations (double cycle %d), ||b - A x|| %g "
              "against %g",
              spec, cmrscl_solve_reason_name(mres.reason), mres.iterations, res.iterations, cpu,
              mres.threshold);
    CHECK_MSG(mi.cycle_precision == CMRSCL_FLOAT && fi.cycle_precision == CMRSCL_DOUBLE &&
                  mi.device_bytes < 0.75 * (double)fi.device_bytes && mi.device_bytes > 0,
              "%s: cycle precision %d / %d, %llu bytes against %llu", spec, (int)mi.cycle_precision,
              (int)fi.cycle_precision, (unsigned long long)mi.device_bytes,
              (unsigned long long)fi.device_bytes);
    cmrscl_solve_result_free(&res), cmrscl_solve_result_free(&mres);
    cmrscl_solve_result_free(&tres);
    free(b), free(x), free(xm), free(xt);
    cmrscl_precond_free(full), cmrscl_precond_free(mixed), cmrscl_precond_free(twin);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

/* New values of the same pattern (cmrscl_precond_amg_update): the updated preconditioner
 * solves as one made anew from those values does - the same iterations and x bit for bit
 * (theta 0: the aggregates hang on the pattern alone) - level 0 borrowed from the solver's
 * matrix, which is updated first (a float cycle: that matrix rounded, rounded again by the
 * update); a matrix of another pattern is refused by name. */
static void check_update(cmrscl_context ctx, const char *spec, bool float_cycle)
{
    cmrscl_csr a, other;
    CHECK_OK(cmrscl_csr_generate(spec, &a));
    CHECK_OK(cmrscl_csr_generate("stencil5:9", &other));
    int n = a.rows;
    cmrscl_matrix m = NULL;
    cmrscl_precond updated = NULL, fresh = NULL;
    cmrscl_amg_options ao = CMRSCL_AMG_OPTIONS_INIT;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, NULL, &m));
    ao.matrix = m;
    ao.float_cycle = float_cycle;
    CHECK_OK(cmrscl_precond_create_amg(ctx, prec, &a, &ao, &updated));
    /* twice the values, the diagonal 0.5 more: SPD still, another spectrum */
    for (int32_t i = 0; i < a.rows; ++i)
        for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
            a.values[k] = 2 * a.values[k] + (a.col_ind[k] == i ? 0.5 : 0.0);
    if (m && updated) {
        CHECK_OK(cmrscl_matrix_update_values(m, a.values, CMRSCL_DOUBLE));
        CHECK_OK(cmrscl_precond_amg_update(updated, &a));
        CHECK_OK(cmrscl_precond_create_amg(ctx, prec, &a, &ao, &fresh));
    }
    double *b = malloc(sizeof(double) * (size_t)n), *x = calloc((size_t)n, sizeof(double)),
           *x2 = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; ++i)
        b[i] = 1.0 + (i % 5) / 5.0;
    cmrscl_solve_options o = {.rtol = prec == CMRSCL_DOUBLE ? 1e-8 : 1e-4,
                              .preconditioner = CMRSCL_PRECONDITIONER_AMG,
                              .precond = updated};
    cmrscl_solve_result ru = {0}, rf = {0};
    if (fresh) {
        CHECK_OK(solve(m, &o, b, x, n, &ru));
        o.precond = fresh;
        CHECK_OK(solve(m, &o, b, x2, n, &rf));
        printf("%-14s %s%s: updated AMG %d iterations, made anew %d\n", spec,
               prec == CMRSCL_DOUBLE ? "double" : "float", float_cycle ? ", float cycle" : "",
               ru.iterations, rf.iterations);
        CHECK_MSG(ru.converged && ru.iterations == rf.iterations &&
                      !memcmp(x, x2, sizeof(double) * (size_t)n),
                  "%s: updated %d iterations, made anew %d; x %s", spec, ru.iterations,
                  rf.iterations, memcmp(x, x2, sizeof(double) * (size_t)n) ? "differs" : "same");
    }
    cmrscl_status st = updated ? cmrscl_precond_amg_update(updated, &other) : CMRSCL_OK;
    CHECK_MSG(st == CMRSCL_ERROR_INVALID_MATRIX &&
                  test_contains(cmrscl_last_error(), "is not the set-up's"),
              "another pattern: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
    cmrscl_solve_result_free(&ru), cmrscl_solve_result_free(&rf);
    free(b), free(x), free(x2);
    cmrscl_precond_free(updated), cmrscl_precond_free(fresh);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a), cmrscl_csr_free(&other);
}

/* A method with AMG on the right (BiCGStab, GMRES of a short cycle, so that cycles end and
 * restart), on a nonsymmetric matrix: x after three iterations the host reference's (double),
 * and the solve converged on the CPU's ||b - A x|| in fewer iterations than the method alone. */
static void check_right(cmrscl_context ctx, const char *spec, cmrscl_method method)
{
    cmrscl_csr a;
    cmrscl_matrix m;
    cmrscl_precond amg;
    double *b = problem(ctx, spec, &a, &m, &amg);
    int n = a.rows;
    double *x = calloc((size_t)n, sizeof(double)), *xh = calloc((size_t)n, sizeof(double)),
           *xp = calloc((size_t)n, sizeof(double));
    bool dbl = prec == CMRSCL_DOUBLE;
    const char *name = method == CMRSCL_METHOD_GMRES ? "GMRES(4)" : "BiCGStab";
    cmrscl_solve_options o = {.method = method,
                              .rtol = dbl ? 1e-8 : 1e-4,
                              .restart = 4,
                              .preconditioner = CMRSCL_PRECONDITIONER_AMG,
                              .precond = amg},
                         plain = {.method = method, .rtol = o.rtol, .restart = o.restart};
    cmrscl_solve_result res = {0}, few = {0}, alone = {0};
    if (m && amg) {
        CHECK_OK(solve(m, &o, b, x, n, &res));
        CHECK_OK(solve(m, &plain, b, xp, n, &alone));
    }
    double cpu = ref_residual(&a, b, x);
    printf("%-14s %s: %s with AMG %d iterations (alone %d), ||b - A x|| %.2e, threshold %.2e\n",
           spec, dbl ? "double" : "float", name, res.iterations, alone.iterations, cpu,
           res.threshold);
    CHECK_MSG(res.converged && cpu <= res.threshold * (dbl ? 1.0001 : 1.01) &&
                  res.iterations * 2 < alone.iterations,
              "%s: %s with AMG %s after %d iterations (alone %d), ||b - A x|| %g against %g", spec,
              name, cmrscl_solve_reason_name(res.reason), res.iterations, alone.iterations, cpu,
              res.threshold);
    if (dbl && m && amg) { /* three iterations against the host's */
        cmrs_amg_hierarchy h = {0};
        CHECK_OK(cmrs_amg_setup(&a, NULL, &h));
        if (method == CMRSCL_METHOD_GMRES)
            ref_amg_gmres(&a, &h, b, xh, 3);
        else
            ref_amg_bicgstab(&a, &h, b, xh, 3);
        o.max_iterations = 3, o.rtol = 1e-300;
        memset(x, 0, sizeof(double) * (size_t)n);
        CHECK_OK(solve(m, &o, b, x, n, &few));
        double diff = 0, size = 0;
        for (int i = 0; i < n; ++i)
            diff = fmax(diff, fabs(x[i] - xh[i])), size = fmax(size, fabs(xh[i]));
        CHECK_MSG(few.iterations == 3 && diff <= 1e-10 * size,
                  "%s: %s %d iterations, x differs from the host's by %.3g", spec, name,
                  few.iterations, diff / size);
        cmrs_amg_free(&h);
    }
    cmrscl_solve_result_free(&res), cmrscl_solve_result_free(&few);
    cmrscl_solve_result_free(&alone);
    free(b), free(x), free(xh), free(xp);
    cmrscl_precond_free(amg);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

/* What must fail, each with a message naming it. */
static void check_refusals(cmrscl_context ctx)
{
    cmrscl_csr a, small;
    CHECK_OK(cmrscl_csr_generate("stencil5:16", &a));
    CHECK_OK(cmrscl_csr_generate("stencil5:8", &small));
    cmrscl_matrix m = NULL;
    cmrscl_precond amg = NULL, other = NULL;
    cmrscl_solver s = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, NULL, &m));
    CHECK_OK(cmrscl_precond_create_amg(ctx, prec, &a, NULL, &amg));
    CHECK_OK(cmrscl_precond_create_amg(ctx, prec, &small, NULL, &other));
    struct {
        cmrscl_solve_options o;
        cmrscl_status want;
        const char *says;
    } cases[] = {
        {{.preconditioner = CMRSCL_PRECONDITIONER_AMG},
         CMRSCL_ERROR_INVALID_ARGUMENT,
         "needs its object"},
        {{.precond = amg}, CMRSCL_ERROR_INVALID_ARGUMENT, "is not CMRSCL_PRECONDITIONER_AMG"},
        {{.preconditioner = CMRSCL_PRECONDITIONER_AMG, .precond = other},
         CMRSCL_ERROR_INVALID_ARGUMENT,
         "made for 64 rows"},
    };
    for (size_t c = 0; m && c < sizeof cases / sizeof cases[0]; ++c) {
        cmrscl_status st = cmrscl_solver_create(m, &cases[c].o, &s);
        CHECK_MSG(st == cases[c].want && !s && test_contains(cmrscl_last_error(), cases[c].says),
                  "case %zu: %s (%s), want %s naming \"%s\"", c, cmrscl_status_name(st),
                  cmrscl_last_error(), cmrscl_status_name(cases[c].want), cases[c].says);
        cmrscl_solver_free(s), s = NULL;
    }
    /* an AMG of the right size in the other precision, or on another context */
    cmrscl_precision flip = prec == CMRSCL_DOUBLE ? CMRSCL_FLOAT : CMRSCL_DOUBLE;
    cmrscl_precond flipped = NULL, foreign = NULL;
    cmrscl_context other_ctx = NULL;
    if (flip == CMRSCL_FLOAT || ctx->info.fp64)
        CHECK_OK(cmrscl_precond_create_amg(ctx, flip, &a, NULL, &flipped));
    CHECK_OK(cmrscl_context_create(NULL, &other_ctx));
    if (other_ctx)
        CHECK_OK(cmrscl_precond_create_amg(other_ctx, prec, &a, NULL, &foreign));
    char flip_says[128];
    snprintf(flip_says, sizeof flip_says, "made for %d rows in %s; the matrix has %d rows in %s",
             (int)a.rows, cmrscl_precision_name(flip), (int)a.rows, cmrscl_precision_name(prec));
    struct {
        cmrscl_precond p;
        cmrscl_status want;
        const char *says;
    } misfits[] = {{flipped, CMRSCL_ERROR_INVALID_ARGUMENT, flip_says},
                   {foreign, CMRSCL_ERROR_CONTEXT_MISMATCH, "another context"}};
    for (size_t c = 0; m && c < 2; ++c) {
        if (!misfits[c].p)
            continue;
        cmrscl_solve_options o = {.preconditioner = CMRSCL_PRECONDITIONER_AMG,
                                  .precond = misfits[c].p};
        cmrscl_status st = cmrscl_solver_create(m, &o, &s);
        CHECK_MSG(st == misfits[c].want && !s &&
                      test_contains(cmrscl_last_error(), misfits[c].says),
                  "misfit %zu: %s (%s), want %s naming \"%s\"", c, cmrscl_status_name(st),
                  cmrscl_last_error(), cmrscl_status_name(misfits[c].want), misfits[c].says);
        cmrscl_solver_free(s), s = NULL;
        st = cmrscl_precond_check(misfits[c].p, ctx, prec, a.rows);
        CHECK_MSG(st == misfits[c].want, "cmrscl_precond_check, misfit %zu: %s", c,
                  cmrscl_status_name(st));
    }
    CHECK_OK(cmrscl_precond_check(amg, ctx, prec, a.rows));
    cmrscl_precond_free(flipped), cmrscl_precond_free(foreign);
    cmrscl_context_free(other_ctx);
    /* a zero diagonal entry and a matrix that is not square, named */
    a.values[0] = 0;
    cmrscl_precond bad = NULL;
    cmrscl_status st = cmrscl_precond_create_amg(ctx, prec, &a, NULL, &bad);
    CHECK_MSG(st == CMRSCL_ERROR_INVALID_MATRIX && !bad, "a zero diagonal: %s (%s)",
              cmrscl_status_name(st), cmrscl_last_error());
    a.cols = a.rows + 1;
    st = cmrscl_precond_create_amg(ctx, prec, &a, NULL, &bad);
    CHECK_MSG(st == CMRSCL_ERROR_INVALID_MATRIX && !bad &&
                  test_contains(cmrscl_last_error(), "square"),
              "not square: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
    a.cols = a.rows;
    /* options.matrix of another size */
    cmrscl_matrix small_m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &small, NULL, &small_m));
    cmrscl_amg_options shared = CMRSCL_AMG_OPTIONS_INIT;
    shared.matrix = small_m;
    st = cmrscl_precond_create_amg(ctx, prec, &a, &shared, &bad);
    CHECK_MSG(st == CMRSCL_ERROR_INVALID_ARGUMENT && !bad &&
                  test_contains(cmrscl_last_error(), "AMG options: matrix is 64 x 64"),
              "options.matrix of another size: %s (%s)", cmrscl_status_name(st),
              cmrscl_last_error());
    cmrscl_matrix_free(small_m);
    /* a Chebyshev degree of 1 (Jacobi is 0) */
    cmrscl_amg_options cheb = CMRSCL_AMG_OPTIONS_INIT;
    cheb.chebyshev = 1;
    st = cmrscl_precond_create_amg(ctx, prec, &a, &cheb, &bad);
    CHECK_MSG(st == CMRSCL_ERROR_INVALID_ARGUMENT && !bad &&
                  test_contains(cmrscl_last_error(), "chebyshev 1"),
              "chebyshev 1: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
    /* a cycle neither V nor W */
    cmrscl_amg_options cycle = CMRSCL_AMG_OPTIONS_INIT;
    cycle.cycle = 2;
    st = cmrscl_precond_create_amg(ctx, prec, &small, &cycle, &bad);
    CHECK_MSG(st == CMRSCL_ERROR_INVALID_ARGUMENT && !bad &&
                  test_contains(cmrscl_last_error(), "cycle 2"),
              "cycle 2: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
    cmrscl_precond_free(amg), cmrscl_precond_free(other);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a), cmrscl_csr_free(&small);
}

/* The W-cycle takes fewer iterations than the V-cycle on a hierarchy of three levels; a caller
 * of the first version of the options (struct_size CMRSCL_AMG_OPTIONS_SIZE_V1, which knew no
 * cycle) gets the V-cycle whatever lies past it. */
static void check_cycles(cmrscl_context ctx, const char *spec)
{
    typedef struct amg_options_v1 { /* the first version, as its callers were built with it */
        size_t struct_size;
        double theta;
        int unsmoothed, max_coarse, max_levels, float_cycle;
        cmrscl_matrix matrix;
        int chebyshev, near_null_count;
        const double *near_null;
        int block_size;
    } amg_options_v1;
    CHECK_MSG(sizeof(amg_options_v1) == CMRSCL_AMG_OPTIONS_SIZE_V1,
              "the first version's options took %zu bytes; CMRSCL_AMG_OPTIONS_SIZE_V1 is %zu",
              sizeof(amg_options_v1), (size_t)CMRSCL_AMG_OPTIONS_SIZE_V1);
    cmrscl_csr a;
    cmrscl_matrix m = NULL;
    cmrscl_precond amg[3] = {NULL, NULL, NULL};
    double *b = problem(ctx, spec, &a, &m, &amg[0]);
    cmrscl_amg_options o = CMRSCL_AMG_OPTIONS_INIT;
    o.cycle = CMRSCL_AMG_CYCLE_W;
    CHECK_OK(cmrscl_precond_create_amg(ctx, prec, &a, &o, &amg[1]));
    o.struct_size = CMRSCL_AMG_OPTIONS_SIZE_V1;
    CHECK_OK(cmrscl_precond_create_amg(ctx, prec, &a, &o, &amg[2]));
    int its[3] = {0, 0, 0};
    double *x = calloc((size_t)a.rows, sizeof(double));
    for (int k = 0; k < 3 && amg[0] && amg[1] && amg[2]; ++k) {
        cmrscl_solve_options so = {.rtol = prec == CMRSCL_DOUBLE ? 1e-8 : 1e-4,
                                   .preconditioner = CMRSCL_PRECONDITIONER_AMG,
                                   .precond = amg[k]};
        cmrscl_solve_result r = {0};
        memset(x, 0, sizeof(double) * (size_t)a.rows);
        CHECK_OK(solve(m, &so, b, x, a.rows, &r));
        CHECK_MSG(r.converged, "%s: cycle %d did not converge", spec, k);
        its[k] = r.iterations;
        cmrscl_solve_result_free(&r);
    }
    cmrscl_amg_info info = {0};
    if (amg[0])
        CHECK_OK(cmrscl_precond_amg_info(amg[0], &info));
    printf("%-14s %s: V-cycle %d iterations, W-cycle %d, the first version's options %d\n", spec,
           prec == CMRSCL_DOUBLE ? "double" : "float", its[0], its[1], its[2]);
    CHECK_MSG(info.levels >= 3 && its[1] < its[0] && its[2] == its[0],
              "%s: %d levels; V %d, W %d, first version %d iterations", spec, info.levels, its[0],
              its[1], its[2]);
    for (int k = 0; k < 3; ++k)
        cmrscl_precond_free(amg[k]);
    free(x), free(b);
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
        return test_finish("solve_amg");
    if (prec == CMRSCL_DOUBLE && !ctx->info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    bool dbl = prec == CMRSCL_DOUBLE;
    check_amg_cg(ctx, "stencil5:64", dbl ? 1e-8 : 1e-4);
    check_amg_cg(ctx, "stencil7:16", dbl ? 1e-8 : 1e-4);
    check_amg_cg(ctx, "stencil27:12", dbl ? 1e-8 : 1e-4);
    check_right(ctx, "convdiff:24", CMRSCL_METHOD_BICGSTAB);
    check_right(ctx, "stencil5:64", CMRSCL_METHOD_BICGSTAB);
    check_right(ctx, "convdiff:24", CMRSCL_METHOD_GMRES);
    check_right(ctx, "stencil5:64", CMRSCL_METHOD_GMRES);
    check_update(ctx, "stencil5:64", false);
    check_update(ctx, "stencil27:12", false);
    if (dbl) {
        check_update(ctx, "stencil5:64", true);
        check_float_cycle(ctx, "stencil5:64");
        check_float_cycle(ctx, "stencil7:16");
    }
    check_cycles(ctx, "stencil5:64");
    check_refusals(ctx);
    cmrscl_context_free(ctx);
    return test_finish("solve_amg");
}
