/* test_dist_solve.c - the distributed solvers (cmrscl_dist_solve) under mpirun,
 * against the single-device solver and the CPU. For SPD matrices generated per rank and read
 * from files, in float and double, with and without Jacobi: the solve converges in the
 * single-device solver's iteration count (the same recurrences; +-3% and one for the other
 * order of the sums), b - A x computed on the CPU in double (the whole matrix, x gathered)
 * is within 10x the threshold, and a second solve gives the same bits and iterations; the same
 * for BiCGStab and GMRES (several cycles too) on nonsymmetric matrices; converged only with room
 * for the true residual's rounding (1138_bus at 1e-10); CG with AMG on each rank's block. Bad
 * input fails every
 * rank with one message: GMRES with a restart over the limit, BiCGStab and GMRES with Jacobi,
 * NaN in b on one rank (CG and GMRES), an
 * indefinite matrix, a zero diagonal under Jacobi on one rank's rows, a rectangular matrix,
 * b NULL on one rank. */
#include "dist_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;
static cmrscl_context ctx;
static bool fp64; /* the device's: without it the double cases are not run (main says so) */

static size_t value_size(cmrscl_precision p) { return p == CMRSCL_FLOAT ? 4 : 8; }

/* n ones in the precision; NaN at `nan` (-1: none). */
static void *ones(int64_t n, cmrscl_precision p, int64_t nan)
{
    double *v = malloc(sizeof *v * ((size_t)n + 1));
    for (int64_t i = 0; i < n; ++i)
        v[i] = i == nan ? NAN : 1.0;
    void *out = test_values_in(v, n, p);
    free(v);
    return out;
}

/* The whole x on every rank, in double, from each rank's slice in the precision. */
static double *gather_x(const cmrscl_dist_plan *plan, const void *x)
{
    int *counts = malloc(sizeof *counts * (size_t)ranks), *at = malloc(sizeof *at * (size_t)ranks);
    double *mine = malloc(sizeof *mine * ((size_t)plan->local_rows + 1));
    double *all = malloc(sizeof *all * ((size_t)plan->rows + 1));
    for (int32_t i = 0; i < plan->local_rows; ++i)
        mine[i] = test_value_at(x, plan->precision, i);
    int n = plan->local_rows;
    MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < ranks; ++r)
        at[r] = r ? at[r - 1] + counts[r - 1] : 0;
    MPI_Allgatherv(mine, n, MPI_DOUBLE, all, counts, at, MPI_DOUBLE, MPI_COMM_WORLD);
    free(counts), free(at), free(mine);
    return all;
}

/* ||b - A x|| on the CPU in double, b all ones; a's values rounded to the precision. */
static double cpu_residual(const cmrscl_csr *a, cmrscl_precision p, const double *x)
{
    double sum = 0;
    for (int32_t i = 0; i < a->rows; ++i) {
        double ax = 0;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
            double v = p == CMRSCL_FLOAT ? (double)(float)a->values[k] : a->values[k];
            ax += v * x[a->col_ind[k]];
        }
        sum += (1.0 - ax) * (1.0 - ax);
    }
    return sqrt(sum);
}

/* One SPD case: the serial solve's iterations, then the distributed solve twice. */
static void check_solve(const char *what, const cmrscl_csr *a, cmrscl_dist_matrix dm,
                        cmrscl_precision p, bool jacobi, cmrscl_method method, int restart)
{
    cmrscl_solve_options o = {.method = method,
                              .preconditioner = jacobi ? CMRSCL_PRECONDITIONER_JACOBI : 0,
                              .rtol = p == CMRSCL_DOUBLE ? 1e-8 : 1e-4,
                              .restart = restart};
    /* the single-device solver on the whole matrix, on this rank's device */
    cmrscl_matrix m = NULL;
    cmrscl_solve_result serial = {0};
    size_t vs = value_size(p);
    void *b = ones(a->rows, p, -1);
    void *x = calloc((size_t)a->rows + 1, vs);
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, a, NULL, &m));
    CHECK_OK(cmrscl_solve_host(m, &o, b, x, &serial));
    cmrscl_matrix_free(m);
    cmrscl_dist_plan plan;
    CHECK_OK(cmrscl_dist_matrix_plan(dm, &plan));
    void *xd[2] = {calloc((size_t)plan.local_rows + 1, vs),
                   calloc((size_t)plan.local_rows + 1, vs)};
    cmrscl_solve_result r[2] = {{0}, {0}};
    for (int k = 0; k < 2; ++k)
        CHECK_OK(cmrscl_dist_solve_host(dm, &o, b, xd[k], &r[k]));
    char pc[32];
    snprintf(pc, sizeof pc, "%s", jacobi ? "pcg" : cmrscl_method_name(method));
    if (restart)
        snprintf(pc, sizeof pc, "gmres(%d)", restart);
    const char *prec = p == CMRSCL_DOUBLE ? "double" : "float";
    int slack = 1 + serial.iterations * 3 / 100;
    CHECK_MSG(r[0].converged && serial.converged &&
                  abs(r[0].iterations - serial.iterations) <= slack,
              "%s %s %s on %d ranks: %d iterations (%s), the single device %d (%s)", what, pc, prec,
              ranks, r[0].iterations, cmrscl_solve_reason_name(r[0].reason), serial.iterations,
              cmrscl_solve_reason_name(serial.reason));
    CHECK_MSG(r[0].history_length == r[0].iterations + 1 &&
                  r[0].history[r[0].iterations] == r[0].residual &&
                  r[0].true_residual <= 10 * r[0].threshold,
              "%s %s %s: true residual %g, threshold %g", what, pc, prec, r[0].true_residual,
              r[0].threshold);
    double *xs = gather_x(&plan, xd[0]);
    double cpu = cpu_residual(a, p, xs);
    CHECK_MSG(cpu <= 10 * r[0].threshold, "%s %s %s: b - A x on the CPU %g, threshold %g", what, pc,
              prec, cpu, r[0].threshold);
    CHECK_MSG(r[1].iterations == r[0].iterations &&
                  memcmp(xd[0], xd[1], vs * (size_t)plan.local_rows) == 0,
              "%s %s %s: a second solve differs (%d iterations, %d before)", what, pc, prec,
              r[1].iterations, r[0].iterations);
    for (int k = 0; k < 2; ++k)
        cmrscl_solve_result_free(&r[k]), free(xd[k]);
    cmrscl_solve_result_free(&serial);
    free(xs), free(b), free(x);
}

/* A solve every rank must fail with `expected`, its message holding `text`. */
static void check_fails(const char *what, cmrscl_dist_matrix dm, const cmrscl_solve_options *o,
                        bool nan_on_last, bool null_b_on_last, cmrscl_status expected,
                        const char *text)
{
    cmrscl_dist_plan plan;
    CHECK_OK(cmrscl_dist_matrix_plan(dm, &plan));
    size_t vs = value_size(plan.precision);
    void *b = ones(plan.local_rows, plan.precision,
                   nan_on_last && rank == ranks - 1 ? plan.local_rows - 1 : -1);
    void *x = calloc((size_t)plan.local_rows + 1, vs);
    bool null_b = null_b_on_last && rank == ranks - 1;
    cmrscl_solve_result r = {0};
    cmrscl_status st = cmrscl_dist_solve_host(dm, o, null_b ? NULL : b, x, &r);
    CHECK_MSG(st == expected && strstr(cmrscl_last_error(), text),
              "%s: status %s, message '%s'; expected %s with '%s'", what, cmrscl_status_name(st),
              cmrscl_last_error(), cmrscl_status_name(expected), text);
    cmrscl_solve_result_free(&r);
    free(b), free(x);
}

static void spd_cases(void)
{
    const char *specs[] = {"stencil7:12", "stencil27:8", "fem:4:3"};
    const char *files[] = {"1138_bus.mtx"};
    for (size_t i = 0; i < 4; ++i) {
        cmrscl_csr a;
        bool file = i >= 3;
        const char *name = file ? test_shared_matrix(files[i - 3]) : specs[i];
        CHECK_OK(file ? cmrscl_mtx_read(name, NULL, &a) : cmrscl_csr_generate(name, &a));
        /* stencils in both precisions without Jacobi; fem and the file with it, in double */
        for (int pi = 0; pi < 2; ++pi) {
            cmrscl_precision p = pi ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
            if ((i >= 2 && p == CMRSCL_FLOAT) || (p == CMRSCL_DOUBLE && !fp64))
                continue;
            cmrscl_dist_matrix dm = NULL;
            CHECK_OK(file ? cmrscl_dist_create_from_mtx(MPI_COMM_WORLD, ctx, p, name, NULL, &dm)
                          : cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, p, name, NULL, &dm));
            if (dm)
                check_solve(name, &a, dm, p, i >= 2, CMRSCL_METHOD_CG, 0);
            cmrscl_dist_free(dm);
        }
        cmrscl_csr_free(&a);
    }
}

/* Converged only with room for the true residual's rounding: 1138_bus in double at 1e-10, where
 * b - A x rounds by most of the threshold - the recurrence converges, so the rounding is
 * measured; converged means ||b - A x|| plus it within the threshold, and the exact residual
 * (the CPU's reference, its sums carried) within it too; drifted, that it was not. */
static void honest_case(void)
{
    if (!fp64)
        return;
    cmrscl_csr a;
    const char *name = test_shared_matrix("1138_bus.mtx");
    CHECK_OK(cmrscl_mtx_read(name, NULL, &a));
    cmrscl_dist_matrix dm = NULL;
    CHECK_OK(cmrscl_dist_create_from_mtx(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, name, NULL, &dm));
    cmrscl_solve_options o = {.method = CMRSCL_METHOD_CG, .rtol = 1e-10, .max_iterations = 6000};
    cmrscl_dist_plan plan;
    cmrscl_solve_result r = {0};
    void *b = ones(a.rows, CMRSCL_DOUBLE, -1);
    if (dm) {
        CHECK_OK(cmrscl_dist_matrix_plan(dm, &plan));
        void *x = calloc((size_t)plan.local_rows + 1, sizeof(double));
        CHECK_OK(cmrscl_dist_solve_host(dm, &o, (const double *)b + plan.first_row, x, &r));
        double *xs = gather_x(&plan, x), *res = malloc(sizeof(double) * (size_t)a.rows), exact = 0;
        memcpy(res, b, sizeof(double) * (size_t)a.rows);
        CHECK_OK(cmrscl_csr_spmv(&a, -1.0, xs, 1.0, res));
        for (int32_t i = 0; i < a.rows; ++i)
            exact += res[i] * res[i];
        exact = sqrt(exact);
        if (rank == 0)
            printf("1138_bus cg double rtol 1e-10 on %d ranks: %s, ||b - A x|| %.3e +- %.1e "
                   "(exact %.3e), threshold %.3e\n",
                   ranks, cmrscl_solve_reason_name(r.reason), r.true_residual,
                   r.true_residual_rounding, exact, r.threshold);
        CHECK_MSG(r.true_residual_rounding > 0, "1138_bus: the rounding was not measured");
        if (r.converged)
            CHECK_MSG(r.true_residual + r.true_residual_rounding <= r.threshold &&
                          exact <= r.threshold,
                      "1138_bus: converged with ||b - A x|| %g +- %g (exact %g), threshold %g",
                      r.true_residual, r.true_residual_rounding, exact, r.threshold);
        else
            CHECK_MSG(r.reason == CMRSCL_SOLVE_DRIFTED &&
                          r.true_residual + r.true_residual_rounding > r.threshold,
                      "1138_bus: %s with ||b - A x|| %g +- %g, threshold %g",
                      cmrscl_solve_reason_name(r.reason), r.true_residual, r.true_residual_rounding,
                      r.threshold);
        free(xs), free(res), free(x);
    }
    cmrscl_solve_result_free(&r);
    free(b);
    cmrscl_dist_free(dm);
    cmrscl_csr_free(&a);
}

/* CG with AMG on each rank's block (block Jacobi across the ranks): converges, b - A x on the
 * CPU within the threshold, in fewer iterations than CG without it, the same bits twice; a
 * preconditioner of the wrong size is refused on every rank. */
static void amg_cases(void)
{
    static const char *specs[] = {"stencil7:12", "stencil5:48"};
    for (size_t i = 0; i < 2; ++i)
        for (int pi = 0; pi < 2; ++pi) {
            cmrscl_precision p = pi ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
            if (p == CMRSCL_DOUBLE && !fp64)
                continue;
            cmrscl_csr a;
            CHECK_OK(cmrscl_csr_generate(specs[i], &a));
            cmrscl_dist_matrix dm = NULL;
            CHECK_OK(cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, p, specs[i], NULL, &dm));
            cmrscl_dist_plan plan;
            if (!dm || cmrscl_dist_matrix_plan(dm, &plan) != CMRSCL_OK) {
                cmrscl_csr_free(&a);
                continue;
            }
            size_t vs = value_size(p);
            void *b = ones(plan.local_rows, p, -1);
            void *x[3] = {calloc((size_t)plan.local_rows + 1, vs),
                          calloc((size_t)plan.local_rows + 1, vs),
                          calloc((size_t)plan.local_rows + 1, vs)};
            cmrscl_solve_options o = {.method = CMRSCL_METHOD_CG,
                                      .preconditioner = CMRSCL_PRECONDITIONER_AMG,
                                      .rtol = p == CMRSCL_DOUBLE ? 1e-8 : 1e-4};
            cmrscl_solve_options plain = o;
            plain.preconditioner = CMRSCL_PRECONDITIONER_NONE;
            cmrscl_solve_result r[3] = {{0}, {0}, {0}};
            CHECK_OK(cmrscl_dist_solve_host(dm, &o, b, x[0], &r[0]));
            CHECK_OK(cmrscl_dist_solve_host(dm, &o, b, x[1], &r[1]));
            CHECK_OK(cmrscl_dist_solve_host(dm, &plain, b, x[2], &r[2]));
            double *xs = gather_x(&plan, x[0]);
            double cpu = cpu_residual(&a, p, xs);
            const char *prec = p == CMRSCL_DOUBLE ? "double" : "float";
            if (rank == 0)
                printf("%s %s on %d ranks: cg + amg %d iterations (cg %d), ||b - A x|| %.3e, "
                       "threshold %.3e\n",
                       specs[i], prec, ranks, r[0].iterations, r[2].iterations, cpu,
                       r[0].threshold);
            CHECK_MSG(r[0].converged && cpu <= r[0].threshold && r[0].iterations < r[2].iterations,
                      "%s %s cg + amg: %s after %d iterations (cg %d), ||b - A x|| %g, "
                      "threshold %g",
                      specs[i], prec, cmrscl_solve_reason_name(r[0].reason), r[0].iterations,
                      r[2].iterations, cpu, r[0].threshold);
            CHECK_MSG(r[1].iterations == r[0].iterations &&
                          memcmp(x[0], x[1], vs * (size_t)plan.local_rows) == 0,
                      "%s %s cg + amg: a second solve differs", specs[i], prec);
            for (int k = 0; k < 3; ++k)
                cmrscl_solve_result_free(&r[k]), free(x[k]);
            free(xs), free(b);
            cmrscl_dist_free(dm);
            cmrscl_csr_free(&a);
        }
    /* an AMG of another size than this rank's block */
    cmrscl_csr small;
    CHECK_OK(cmrscl_csr_generate("stencil7:3", &small));
    cmrscl_precond wrong = NULL;
    CHECK_OK(cmrscl_precond_create_amg(ctx, CMRSCL_FLOAT, &small, NULL, &wrong));
    cmrscl_dist_matrix dm = NULL;
    CHECK_OK(
        cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, CMRSCL_FLOAT, "stencil7:8", NULL, &dm));
    cmrscl_solve_options o = {
        .method = CMRSCL_METHOD_CG, .preconditioner = CMRSCL_PRECONDITIONER_AMG, .precond = wrong};
    if (dm && wrong)
        check_fails("an AMG of 27 rows", dm, &o, false, false, CMRSCL_ERROR_INVALID_ARGUMENT,
                    "made for 27 rows in float");
    /* one of the block's size, but in double for a float matrix */
    cmrscl_dist_plan plan;
    int can = dm && fp64 && cmrscl_dist_matrix_plan(dm, &plan) == CMRSCL_OK && plan.local_rows > 0;
    MPI_Allreduce(MPI_IN_PLACE, &can, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD); /* all or none */
    if (can) {
        int32_t n = plan.local_rows;
        cmrscl_csr diag = {n,
                           n,
                           n,
                           calloc((size_t)n + 1, sizeof(int64_t)),
                           calloc((size_t)n, sizeof(int32_t)),
                           calloc((size_t)n, sizeof(double))};
        for (int32_t i = 0; i < n; ++i)
            diag.row_ptr[i + 1] = i + 1, diag.col_ind[i] = i, diag.values[i] = 2;
        cmrscl_precond twice = NULL;
        CHECK_OK(cmrscl_precond_create_amg(ctx, CMRSCL_DOUBLE, &diag, NULL, &twice));
        o.precond = twice;
        int made = twice != NULL;
        MPI_Allreduce(MPI_IN_PLACE, &made, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (made)
            check_fails("an AMG in double", dm, &o, false, false, CMRSCL_ERROR_INVALID_ARGUMENT,
                        "rows in double; the matrix has");
        cmrscl_precond_free(twice);
        cmrscl_csr_free(&diag);
    }
    cmrscl_dist_free(dm);
    cmrscl_precond_free(wrong);
    cmrscl_csr_free(&small);
}

/* BiCGStab and GMRES (restarts of 20, the default, and of 5: several cycles) on a nonsymmetric
 * matrix (convection-diffusion), in float and double. */
static void nonsymmetric_cases(void)
{
    const char *specs[] = {"convdiff:8"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; ++i) {
        cmrscl_csr a;
        CHECK_OK(cmrscl_csr_generate(specs[i], &a));
        for (int pi = 0; pi < 2; ++pi) {
            cmrscl_precision p = pi ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
            if (p == CMRSCL_DOUBLE && !fp64)
                continue;
            cmrscl_dist_matrix dm = NULL;
            CHECK_OK(cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, p, specs[i], NULL, &dm));
            if (dm) {
                check_solve(specs[i], &a, dm, p, false, CMRSCL_METHOD_BICGSTAB, 0);
                check_solve(specs[i], &a, dm, p, false, CMRSCL_METHOD_GMRES, 0);
                check_solve(specs[i], &a, dm, p, false, CMRSCL_METHOD_GMRES, 5);
            }
            cmrscl_dist_free(dm);
        }
        cmrscl_csr_free(&a);
    }
}

static void failing_cases(void)
{
    cmrscl_precision prec = fp64 ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
    cmrscl_dist_matrix dm = NULL;
    cmrscl_solve_options cg = {.method = CMRSCL_METHOD_CG}, gmres = {.method = CMRSCL_METHOD_GMRES},
                         gmres_long = {.method = CMRSCL_METHOD_GMRES, .restart = 300},
                         bicg_jacobi = {.method = CMRSCL_METHOD_BICGSTAB,
                                        .preconditioner = CMRSCL_PRECONDITIONER_JACOBI},
                         gmres_jacobi = {.method = CMRSCL_METHOD_GMRES,
                                         .preconditioner = CMRSCL_PRECONDITIONER_JACOBI};
    CHECK_OK(cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, prec, "stencil7:8", NULL, &dm));
    check_fails("gmres(300)", dm, &gmres_long, false, false, CMRSCL_ERROR_INVALID_ARGUMENT,
                "gmres: restart 300: expected 1..256");
    check_fails("gmres with Jacobi", dm, &gmres_jacobi, false, false, CMRSCL_ERROR_UNSUPPORTED,
                "gmres: the preconditioners (Jacobi, AMG) are conjugate gradients' only");
    check_fails("NaN in b on the last rank, gmres", dm, &gmres, true, false,
                CMRSCL_ERROR_INVALID_ARGUMENT, "gmres: NaN or Inf in b or x0");
    check_fails("bicgstab with Jacobi", dm, &bicg_jacobi, false, false, CMRSCL_ERROR_UNSUPPORTED,
                "preconditioners (Jacobi, AMG) are conjugate gradients' only");
    check_fails("NaN in b on the last rank", dm, &cg, true, false, CMRSCL_ERROR_INVALID_ARGUMENT,
                "NaN or Inf in b or x0");
    check_fails("b NULL on the last rank", dm, &cg, false, true, CMRSCL_ERROR_INVALID_ARGUMENT,
                "b or x is NULL");
    cmrscl_dist_free(dm);
    CHECK_OK(cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, prec, "random:300:5", NULL, &dm));
    check_fails("nonsymmetric", dm, &cg, false, false, CMRSCL_ERROR_BREAKDOWN,
                "not positive definite");
    cmrscl_dist_free(dm);
    CHECK_OK(cmrscl_dist_create_from_mtx(MPI_COMM_WORLD, ctx, prec,
                                         test_shared_matrix("lp_ship04l.mtx"), NULL, &dm));
    check_fails("rectangular", dm, &cg, false, false, CMRSCL_ERROR_INVALID_ARGUMENT,
                "a solve needs a square one");
    cmrscl_dist_free(dm);
    /* 40 x 40 tridiagonal, diagonal 0 at row 30 (the last rank's at 2-4 ranks), each rank
     * giving its even share of rows: Jacobi fails */
    enum { N = 40 };
    int64_t rp[N + 1], nnz = 0;
    int32_t ci[3 * N];
    double v[3 * N];
    for (int32_t i = 0; i < N; ++i) {
        rp[i] = nnz;
        for (int32_t j = i - 1; j <= i + 1; ++j)
            if (j >= 0 && j < N)
                ci[nnz] = j, v[nnz++] = j == i ? (i == 30 ? 0.0 : 4.0) : -1.0;
    }
    rp[N] = nnz;
    int64_t first = N * (int64_t)rank / ranks, last = N * (int64_t)(rank + 1) / ranks;
    int64_t mine_rp[N + 1];
    for (int64_t i = first; i <= last; ++i)
        mine_rp[i - first] = rp[i] - rp[first];
    cmrscl_csr mine = {
        (int32_t)(last - first), N, rp[last] - rp[first], mine_rp, ci + rp[first], v + rp[first]};
    CHECK_OK(cmrscl_dist_create(MPI_COMM_WORLD, ctx, prec, &mine, NULL, &dm));
    cmrscl_solve_options pcg = {.method = CMRSCL_METHOD_CG,
                                .preconditioner = CMRSCL_PRECONDITIONER_JACOBI};
    check_fails("zero diagonal under Jacobi", dm, &pcg, false, false, CMRSCL_ERROR_INVALID_MATRIX,
                "row 30's diagonal is 0");
    cmrscl_dist_free(dm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    CHECK_OK(cmrscl_dist_context_create(MPI_COMM_WORLD, NULL, &ctx));
    cmrscl_device_info dev = {0};
    if (ctx && cmrscl_context_device_info(ctx, &dev) == CMRSCL_OK)
        fp64 = dev.fp64;
    if (ctx && !fp64 && rank == 0)
        printf("test_dist_solve: the double cases not run (not checked; the failures in float): "
               "the device has no fp64\n");
    if (ctx) {
        spd_cases();
        honest_case();
        amg_cases();
        nonsymmetric_cases();
        failing_cases();
    }
    cmrscl_context_free(ctx);
    return dist_test_finish("dist solve");
}
