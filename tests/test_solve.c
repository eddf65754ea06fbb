/* test_solve.c - the solvers (host/solve/) on the device chosen by CMRSCL_DEVICE, against the
 * CPU double reference of the same algorithm (tests/solve_reference.c) and of the textbook's:
 *   - CG, CG with Jacobi, BiCGStab and GMRES(m) (short cycles, so that it restarts) on SPD and
 *     nonsymmetric generated and real matrices: converged, the iteration count within 3% of
 *     the reference's (at least 1) in double, the true residual within 10x the threshold and
 *     equal to the one the CPU computes from the x returned, the history (||r_0|| = ||b||
 *     from x0 = 0, the last entry the residual), the same bits from a second solve; each
 *     solve again with its products' partial sums added up another way - by the next kernel,
 *     solve_reduce or the products' own last units (the chain), in turn from case to case;
 *     float on half the cases where the device has double;
 *   - a nonzero x0, b = 0, max_iterations reached, cl_mem vectors.
 * What must fail is test_solve_errors.c's. Usage: test_solve float|double. */
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
static double unit; /* the precision's unit roundoff */

static const char *method_label(const cmrscl_solve_options *o)
{
    return o->preconditioner ? "cg+jacobi" : cmrscl_method_name(o->method);
}

/* b = 1 (b[i] = 1 + (i % 7) / 7 for nonsymmetric matrices: not an eigenvector by chance). */
static double *make_b(int n, bool varied)
{
    double *b = malloc(sizeof(double) * ((size_t)n + 1));
    for (int i = 0; i < n; ++i)
        b[i] = varied ? 1.0 + (i % 7) / 7.0 : 1.0;
    return b;
}

/* One solve on host arrays of the precision; x (double) gets the result. */
static cmrscl_status solve_host(cmrscl_solver s, const double *b, double *x,
                                cmrscl_solve_result *res)
{
    int n = s->n;
    void *bd = test_values_in(b, n, prec), *xd = test_values_in(x, n, prec);
    cmrscl_status st = cmrscl_solver_solve_host(s, bd, xd, res);
    for (int i = 0; i < n; ++i)
        x[i] = test_value_at(xd, prec, i);
    free(bd), free(xd);
    return st;
}

static ref_outcome reference(const cmrscl_csr *a, const cmrscl_solve_options *o, const double *b,
                             double *x, double threshold, ref_form form)
{
    switch (o->method) {
    case CMRSCL_METHOD_CG:
        return ref_cg(a, b, x, threshold, o->max_iterations, o->preconditioner != 0, form);
    case CMRSCL_METHOD_BICGSTAB: return ref_bicgstab(a, b, x, threshold, o->max_iterations, form);
    default: return ref_gmres(a, b, x, threshold, o->max_iterations, o->restart);
    }
}

/* within 3% (and 1) */
static bool near_count(int got, int want)
{
    int slack = (int)ceil(0.03 * want);
    return abs(got - want) <= (slack > 1 ? slack : 1);
}

/* The same solve another way: its products' partial sums added up by each work-group of
 * the next kernel (CMRSCL_SOLVE_SUMS=fold), by solve_reduce first ("reduce", the path of large
 * matrices) or by the product's own last units ("chain", cl/dots.cl, where the device lets
 * them); or CG's iteration fused into the product, or not (CMRSCL_SOLVE_FUSED=1|0, where the
 * default is the other; not where strips are split into tiles, which the fused iteration
 * never takes). Converged to the
 * threshold from the first way's iterations (within 3% in double: the sums are added in
 * another order), and solved again, the same bits - the chain's counters left at 0 for the
 * next product, its order of additions fixed. */
static void check_other_way(cmrscl_matrix m, const cmrscl_solve_options *o, const double *b,
                            const cmrscl_solve_result *first, const cmrscl_csr *ra,
                            const char *what, const char *env, const char *value)
{
    int n = ra->rows;
    cmrscl_solver s = NULL;
    setenv(env, value, 1);
    CHECK_OK(cmrscl_solver_create(m, o, &s));
    unsetenv(env);
    if (!s)
        return;
    char via[64];
    bool fused = !strcmp(env, "CMRSCL_SOLVE_FUSED");
    if (!strcmp(env, "CMRSCL_GMRES_BLOCKS")) {
        snprintf(via, sizeof via, "%s GMRES vector kernels", atoi(value) ? "block" : "strided");
        CHECK_MSG(s->gmres_blocks == (unsigned)(atoi(value) != 0),
                  "%s: the solver did not take the %s when told to", what, via);
    } else if (!strcmp(env, "CMRSCL_SOLVE_FOLD_LIMIT")) {
        /* a grid of more work-groups than the limit walks group after group on as many as
         * it allows, and the next kernel adds their sums (spmv_dots.c) */
        size_t local, global, cl_local, cl_global;
        cmrs_spmv_sizes(m, &local, &global, &cl_local, &cl_global);
        snprintf(via, sizeof via, "grid capped at a fold limit of %s", value);
        CHECK_MSG(s->product_groups <= (size_t)atoi(value) && s->sums == SUMS_FOLD,
                  "%s: %zu work-groups past a fold limit of %s, its sums by path %d", what,
                  s->product_groups, value, (int)s->sums);
        CHECK_MSG(global / local > (size_t)atoi(value),
                  "%s: the plan's grid is %zu work-groups - the fold limit's cap not exercised",
                  what, global / local);
    } else if (fused) {
        snprintf(via, sizeof via, "%s CG iteration", atoi(value) ? "fused" : "unfused");
        CHECK_MSG((s->fused[0].kernel != NULL) == (atoi(value) != 0),
                  "%s: the solver did not take the %s when told to", what, via);
    } else {
        static const char *const names[] = {"fold", "reduce", "chain"};
        snprintf(via, sizeof via, "%s path", names[s->sums]);
        if (strcmp(names[s->sums], value)) {
            CHECK_MSG(!strcmp(value, "chain"),
                      "%s: the solver did not take the %s path when told to", what, value);
            printf("%s: the chain not checked - the device's product cannot take it "
                   "(solve_reduce instead)\n",
                   what);
        }
    }
    double *x = calloc((size_t)n + 1, 8), *x2 = calloc((size_t)n + 1, 8);
    cmrscl_solve_result res, again;
    CHECK_OK(solve_host(s, b, x, &res));
    CHECK_OK(solve_host(s, b, x2, &again));
    double true_residual = ref_residual(ra, b, x);
    CHECK_MSG(res.converged && true_residual <= 10 * res.threshold &&
                  (prec != CMRSCL_DOUBLE || near_count(res.iterations, first->iterations)),
              "%s through the %s: %s after %d iterations (the default's %d), ||b - A x|| %g "
              "(threshold %g)",
              what, via, cmrscl_solve_reason_name(res.reason), res.iterations, first->iterations,
              true_residual, res.threshold);
    CHECK_MSG(again.iterations == res.iterations && !memcmp(x, x2, sizeof(double) * (size_t)n),
              "%s through the %s: a second solve gave %d iterations (the first %d) and "
              "another x",
              what, via, again.iterations, res.iterations);
    if (fused)
        CHECK_MSG(res.launches_per_iteration == (atoi(value) ? 1 : 2) ||
                      (!atoi(value) && res.launches_per_iteration == 3),
                  "%s through the %s: %d launches an iteration", what, via,
                  res.launches_per_iteration);
    cmrscl_solve_result_free(&res);
    cmrscl_solve_result_free(&again);
    free(x), free(x2);
    cmrscl_solver_free(s);
}

/* A solve of a x = b checked against the references, and against itself run again. */
static void check_solve(cmrscl_context ctx, const char *name, const cmrscl_csr *a,
                        const cmrscl_solve_options *o, const cmrscl_options *plan, solve_sums path)
{
    char what[160];
    snprintf(what, sizeof what, "%s, %s, %s", name, method_label(o),
             prec == CMRSCL_DOUBLE ? "double" : "float");
    cmrscl_csr ra = test_csr_rounded(a, prec); /* the matrix the device holds */
    int n = a->rows;
    cmrscl_matrix m = NULL;
    cmrscl_solver s = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, a, plan, &m));
    if (m)
        CHECK_OK(cmrscl_solver_create(m, o, &s));
    if (!s) {
        cmrscl_matrix_free(m);
        cmrscl_csr_free(&ra);
        return;
    }
    double *b = make_b(n, o->method != CMRSCL_METHOD_CG), *x = calloc((size_t)n + 1, 8);
    cmrscl_solve_result res, again;
    CHECK_OK(solve_host(s, b, x, &res));
    double threshold = res.threshold, bnorm = 0;
    for (int i = 0; i < n; ++i)
        bnorm += b[i] * b[i];
    bnorm = sqrt(bnorm);
    CHECK_MSG(res.converged && res.reason == CMRSCL_SOLVE_CONVERGED,
              "%s: not converged (%s) after %d iterations, residual %g", what,
              cmrscl_solve_reason_name(res.reason), res.iterations, res.residual);
    CHECK_MSG(fabs(res.b_norm - bnorm) <= 1e-5 * bnorm, "%s: ||b|| %g, the CPU's %g", what,
              res.b_norm, bnorm);
    CHECK_MSG(fabs(threshold - o->rtol * bnorm) <= 1e-5 * threshold,
              "%s: threshold %g, expected rtol ||b|| = %g", what, threshold, o->rtol * bnorm);
    /* the x returned: its true residual on the CPU, and the device's own figure for it */
    double cpu_true = ref_residual(&ra, b, x);
    CHECK_MSG(cpu_true <= 10 * threshold, "%s: ||b - A x|| = %g > 10 x the threshold %g", what,
              cpu_true, threshold);
    /* the device's figure holds the rounding of b - A x in the precision: row i's at most
     * (len + 2) u (|b_i| + sum_j |a_ij x_j|) */
    double bound = 0;
    for (int i = 0; i < n; ++i) {
        double e = fabs(b[i]);
        for (int64_t k = ra.row_ptr[i]; k < ra.row_ptr[i + 1]; ++k)
            e += fabs(ra.values[k] * x[ra.col_ind[k]]);
        e *= (double)(ra.row_ptr[i + 1] - ra.row_ptr[i] + 2) * unit;
        bound += e * e;
    }
    bound = 2 * sqrt(bound) + 1e-3 * cpu_true;
    CHECK_MSG(fabs(res.true_residual - cpu_true) <= bound,
              "%s: the true residual %g, the CPU's %g (bound %g)", what, res.true_residual,
              cpu_true, bound);
    /* the history: ||r_0|| = ||b|| from x0 = 0, one entry an iteration, the last the residual */
    CHECK_MSG(res.history_length == res.iterations + 1 && res.history &&
                  fabs(res.history[0] - bnorm) <= 1e-4 * bnorm &&
                  res.history[res.history_length - 1] == res.residual,
              "%s: history of %d entries for %d iterations (first %g, last %g, residual %g)", what,
              res.history_length, res.iterations, res.history ? res.history[0] : -1,
              res.history ? res.history[res.history_length - 1] : -1, res.residual);
    CHECK_MSG(res.launches_per_iteration >= (s->fused[0].kernel ? 1 : 2) &&
                  res.iterate_seconds > 0 && res.checks >= 1,
              "%s: %d launches an iteration, %g s, %d checks", what, res.launches_per_iteration,
              res.iterate_seconds, res.checks);
    /* the same algorithm on the CPU in double: the same iterations, within 3% */
    double *xr = calloc((size_t)n + 1, 8), *xt = calloc((size_t)n + 1, 8);
    ref_outcome same = reference(&ra, o, b, xr, threshold, REF_DEVICE);
    ref_outcome book = reference(&ra, o, b, xt, threshold, REF_TEXTBOOK);
    CHECK_MSG(same.converged && book.converged, "%s: the CPU references did not converge", what);
    if (prec == CMRSCL_DOUBLE)
        CHECK_MSG(near_count(res.iterations, same.iterations) &&
                      near_count(res.iterations, book.iterations),
                  "%s: %d iterations, the CPU's %d (textbook form %d)", what, res.iterations,
                  same.iterations, book.iterations);
    printf("%-40s %5d iterations (CPU %d, textbook %d), residual %.2e, true %.2e (CPU %.2e), "
           "%d launches\n",
           what, res.iterations, same.iterations, book.iterations, res.residual, res.true_residual,
           ref_residual(&ra, b, xr), res.launches_per_iteration);
    /* run after run the same bits */
    double *x2 = calloc((size_t)n + 1, 8);
    CHECK_OK(solve_host(s, b, x2, &again));
    CHECK_MSG(again.iterations == res.iterations && !memcmp(x, x2, sizeof(double) * (size_t)n),
              "%s: a second solve gave %d iterations and another x", what, again.iterations);
    static const char *const sums[] = {"fold", "reduce", "chain"};
    check_other_way(m, o, b, &res, &ra, what, "CMRSCL_SOLVE_SUMS", sums[path]);
    if (o->method == CMRSCL_METHOD_GMRES) /* the vector kernels' other form: rows in blocks */
        check_other_way(m, o, b, &res, &ra, what, "CMRSCL_GMRES_BLOCKS",
                        s->gmres_blocks ? "0" : "1");
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    cmrscl_matrix_params(m, &p);
    /* CG's product of the segment family past the fold limit (solve.h: BiCGStab's keeps its
     * full grid) */
    if (p.kernel == CMRSCL_KERNEL_SEGMENT && p.long_strips == 0 && o->method == CMRSCL_METHOD_CG)
        check_other_way(m, o, b, &res, &ra, what, "CMRSCL_SOLVE_FOLD_LIMIT", "2");
    /* (the fused iteration's families: not split, not the segment family's: solve_cg.c) */
    if (o->method == CMRSCL_METHOD_CG && p.long_strips == 0 && p.kernel != CMRSCL_KERNEL_SEGMENT)
        check_other_way(m, o, b, &res, &ra, what, "CMRSCL_SOLVE_FUSED",
                        s->fused[0].kernel ? "0" : "1");
    cmrscl_solve_result_free(&res);
    cmrscl_solve_result_free(&again);
    free(b), free(x), free(x2), free(xr), free(xt);
    cmrscl_solver_free(s);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&ra);
}

static void solve_cases(cmrscl_context ctx)
{
    static const struct {
        const char *matrix;
        cmrscl_method method;
        int jacobi, restart;
        double rtol; /* in double; float: 1e-4 */
        cmrscl_kernel kernel;
    } cases[] = {
        /* the even cases: float's half */
        {"stencil7:12", CMRSCL_METHOD_CG, 0, 0, 1e-8, 0},
        {"Trefethen_2000.mtx", CMRSCL_METHOD_CG, 1, 0, 1e-10, 0},
        {"fem:6:3", CMRSCL_METHOD_CG, 1, 0, 1e-8, CMRSCL_KERNEL_STRIP},
        {"stencil5:40", CMRSCL_METHOD_CG, 0, 0, 1e-8, CMRSCL_KERNEL_SLICE},
        {"cage8.mtx", CMRSCL_METHOD_BICGSTAB, 0, 0, 1e-10, 0},
        /* cond(A) near 1e7: in float the recurrence's residual parts from the true one far
         * above 1e-4, whatever the solver (double only) */
        {"1138_bus.mtx", CMRSCL_METHOD_CG, 1, 0, 1e-6, 0},
        /* (not Trefethen_2000: 380 iterations of BiCGStab there turn on the last bits of
         * every sum - the CPU's own forms differ by 3%) */
        {"convdiff:14", CMRSCL_METHOD_BICGSTAB, 0, 0, 1e-10, CMRSCL_KERNEL_STRIP},
        {"stencil7:10", CMRSCL_METHOD_BICGSTAB, 0, 0, 1e-8, CMRSCL_KERNEL_SEGMENT},
        {"cage8.mtx", CMRSCL_METHOD_GMRES, 0, 5, 1e-10, 0},
        {"convdiff:14", CMRSCL_METHOD_GMRES, 0, 10, 1e-10, CMRSCL_KERNEL_STRIP},
        /* a segment grid of several work-groups on every device (past a fold limit of 2) */
        {"stencil7:24", CMRSCL_METHOD_CG, 0, 0, 1e-8, CMRSCL_KERNEL_SEGMENT},
    };
    /* Double takes every case; float, where the device has double too, the even ones (every
     * method, the iteration counts checked in double only): the kernels' builds are most of
     * the test's time on a CPU's OpenCL. */
    bool half = prec == CMRSCL_FLOAT && ctx->info.fp64;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c += half ? 2 : 1) {
        cmrscl_csr a;
        const char *name = cases[c].matrix;
        bool file = strstr(name, ".mtx") != NULL;
        cmrscl_status st = file ? cmrscl_mtx_read(test_shared_matrix(name), NULL, &a)
                                : cmrscl_csr_generate(name, &a);
        CHECK_MSG(st == CMRSCL_OK, "%s: %s", name, cmrscl_last_error());
        if (st != CMRSCL_OK)
            continue;
        if (prec == CMRSCL_FLOAT && !strcmp(name, "1138_bus.mtx")) {
            printf("%s in float: not run - cond(A) near 1e7 is beyond float's reach\n", name);
            cmrscl_csr_free(&a);
            continue;
        }
        cmrscl_solve_options o = {0};
        o.method = cases[c].method;
        o.preconditioner = cases[c].jacobi ? CMRSCL_PRECONDITIONER_JACOBI : 0;
        o.restart = cases[c].restart;
        o.rtol = prec == CMRSCL_DOUBLE ? cases[c].rtol : 1e-4;
        o.max_iterations = 20000;
        cmrscl_options plan = {0};
        plan.kernel = cases[c].kernel;
        /* each path on every method but GMRES (fold, reduce, chain: the cases in turn) */
        check_solve(ctx, name, &a, &o, &plan, (solve_sums)(c % 3));
        cmrscl_csr_free(&a);
    }
    /* Strips split into tiles of 32 entries, summed by the last tile's work-group where the
     * device takes it: BiCGStab through the chain, whose last unit adds the strips' terms too,
     * and CG through the fold. */
    static const char *const split[] = {"convdiff:14, the last tile's combine",
                                        "stencil27:10, the last tile's combine"};
    for (int i = 0; i < 2; ++i) {
        cmrscl_csr a;
        CHECK_OK(cmrscl_csr_generate(i ? "stencil27:10" : "convdiff:14", &a));
        cmrscl_solve_options o = {.method = i ? CMRSCL_METHOD_CG : CMRSCL_METHOD_BICGSTAB,
                                  .rtol = prec == CMRSCL_DOUBLE ? 1e-8 : 1e-4,
                                  .max_iterations = 20000};
        cmrscl_options plan = {.kernel = i ? CMRSCL_KERNEL_STRIP : CMRSCL_KERNEL_SEGMENT,
                               .tile = 32,
                               .combine = CMRSCL_COMBINE_LAST};
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        cmrscl_status st = cmrscl_plan(&ctx->info, prec, &a, &plan, &p);
        if (st != CMRSCL_OK)
            printf("%s: not on this device (%s)\n", split[i], cmrscl_last_error());
        CHECK_MSG(st != CMRSCL_OK || (p.long_strips > 0 && p.combine == CMRSCL_COMBINE_LAST),
                  "%s: %d long strips", split[i], p.long_strips);
        if (st == CMRSCL_OK)
            check_solve(ctx, split[i], &a, &o, &plan, i ? SUMS_FOLD : SUMS_CHAIN);
        cmrscl_csr_free(&a);
    }
}

/* A split plan whose combine kernel adds up the product's sums (cl/combine.cl, COMBINE_FOLDS):
 * a few long rows among many short ones, so the combine takes more work-groups for the product's
 * sums than for its rows: Jacobi-CG, its sums folded by the step, and again through solve_reduce.
 */
static void check_combine_folds(cmrscl_context ctx)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("lap:skewed:50000:4:4:2000", &a));
    cmrscl_options plan = {
        .kernel = CMRSCL_KERNEL_STRIP, .height = 1, .tile = 64, .combine = CMRSCL_COMBINE_KERNEL};
    cmrscl_matrix m = NULL;
    cmrscl_solver s = NULL;
    cmrscl_solve_options o = {.rtol = prec == CMRSCL_DOUBLE ? 1e-10 : 1e-4,
                              .max_iterations = 20000};
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, &plan, &m));
    if (m)
        CHECK_OK(cmrscl_solver_create(m, &o, &s));
    if (s) {
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        cmrscl_matrix_params(m, &p);
        size_t row_groups = ((size_t)p.long_strips * (size_t)p.height + 63) / 64;
        CHECK_MSG(p.long_strips > 0 && p.combine == CMRSCL_COMBINE_KERNEL &&
                      s->product_groups > row_groups && s->product_space > s->product_groups,
                  "the combine's fold: %d long strips, combine %d, %zu work-groups for %zu of rows "
                  "(%zu real4s in all)",
                  p.long_strips, (int)p.combine, s->product_groups, row_groups, s->product_space);
    }
    cmrscl_solver_free(s);
    cmrscl_matrix_free(m);
    /* (Jacobi: b = 1 is an eigenvector of the shifted Laplacian, D^-1 b is not. In double only:
     * float's recurrence drifts from b - A x on this Laplacian whatever the sums' path, and the
     * fold's order is the same code in either precision) */
    o.method = CMRSCL_METHOD_CG, o.preconditioner = CMRSCL_PRECONDITIONER_JACOBI;
    if (prec == CMRSCL_DOUBLE)
        check_solve(ctx, "lap:skewed:50000:4:4:2000, the combine's fold", &a, &o, &plan,
                    SUMS_REDUCE);
    else
        printf("lap:skewed:50000:4:4:2000, the combine's fold: its solve checked in double only "
               "(float's recurrence drifts on this Laplacian)\n");
    cmrscl_csr_free(&a);
}

/* A nonzero x0 (the solution's neighbour: fewer iterations), b = 0 (x = 0 at once), max
 * iterations reached (not converged, OK), and cl_mem vectors on the caller's own queue. */
static void check_starts(cmrscl_context ctx)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil7:8", &a));
    int n = a.rows;
    cmrscl_matrix m = NULL;
    cmrscl_solver s = NULL;
    cmrscl_solve_options o = {0};
    o.rtol = prec == CMRSCL_DOUBLE ? 1e-8 : 1e-4;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, NULL, &m));
    CHECK_OK(cmrscl_solver_create(m, &o, &s));
    if (!s) {
        cmrscl_matrix_free(m), cmrscl_csr_free(&a);
        return;
    }
    double *b = make_b(n, false), *x = calloc((size_t)n + 1, 8);
    cmrscl_solve_result cold, warm, zero, capped;
    CHECK_OK(solve_host(s, b, x, &cold));
    for (int i = 0; i < n; ++i) /* x0 near the solution */
        x[i] *= 1 + 1e-3 * ((i % 5) - 2);
    double r0 = ref_residual(&a, b, x);
    CHECK_OK(solve_host(s, b, x, &warm));
    CHECK_MSG(warm.converged && warm.iterations < cold.iterations && warm.history &&
                  fabs(warm.history[0] - r0) <= 1e-3 * r0,
              "nonzero x0: %d iterations against %d from 0, ||r_0|| %g against the CPU's %g",
              warm.iterations, cold.iterations, warm.history ? warm.history[0] : -1, r0);
    double *zb = calloc((size_t)n + 1, 8);
    for (int i = 0; i < n; ++i)
        x[i] = 1;
    CHECK_OK(solve_host(s, zb, x, &zero));
    bool all_zero = true;
    for (int i = 0; i < n; ++i)
        all_zero = all_zero && x[i] == 0;
    CHECK_MSG(zero.converged && zero.iterations == 0 && all_zero, "b = 0: %d iterations, x %s zero",
              zero.iterations, all_zero ? "" : "not");
    cmrscl_solver_free(s), s = NULL;
    o.max_iterations = 3;
    o.check_interval = 2;
    CHECK_OK(cmrscl_solver_create(m, &o, &s));
    memset(x, 0, sizeof(double) * (size_t)n);
    if (s)
        CHECK_OK(solve_host(s, b, x, &capped));
    CHECK_MSG(s && !capped.converged && capped.reason == CMRSCL_SOLVE_MAX_ITERATIONS &&
                  capped.iterations == 3 && capped.history_length == 4 && capped.checks == 2,
              "max_iterations 3: reason %s, %d iterations, %d history entries, %d checks",
              cmrscl_solve_reason_name(capped.reason), capped.iterations, capped.history_length,
              capped.checks);
    /* cl_mem vectors: the one-shot call on the context's queue gives the solver's bits */
    cl_context clctx;
    cl_command_queue q;
    CHECK_OK(cmrscl_context_cl(ctx, &clctx, &q));
    size_t bytes = (size_t)n * cmrscl_precision_size(prec);
    void *bd = test_values_in(b, n, prec), *xd = calloc(1, bytes), *xh = calloc(1, bytes);
    cl_int err;
    cl_mem bm = clCreateBuffer(clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, bd, &err);
    cl_mem xm = clCreateBuffer(clctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, xd, &err);
    cmrscl_solve_result onmem;
    o.max_iterations = 0, o.check_interval = 0;
    CHECK_OK(cmrscl_solve(m, &o, bm, xm, &onmem));
    clEnqueueReadBuffer(q, xm, CL_TRUE, 0, bytes, xh, 0, NULL, NULL);
    CHECK_OK(cmrscl_solve_host(m, &o, bd, xd, &warm));
    CHECK_MSG(onmem.iterations == cold.iterations && !memcmp(xh, xd, bytes),
              "cl_mem solve: %d iterations (host arrays %d) and another x", onmem.iterations,
              cold.iterations);
    clReleaseMemObject(bm), clReleaseMemObject(xm);
    free(bd), free(xd), free(xh), free(b), free(x), free(zb);
    cmrscl_solve_result *all[] = {&cold, &warm, &zero, &capped, &onmem};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        cmrscl_solve_result_free(all[i]);
    cmrscl_solver_free(s);
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
        return test_finish("solve");
    if (prec == CMRSCL_DOUBLE && !ctx->info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    solve_cases(ctx);
    check_starts(ctx);
    check_combine_folds(ctx);
    cmrscl_context_free(ctx);
    return test_finish("solve");
}
