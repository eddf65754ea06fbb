/* mpi_solve.c - cmrscl-run-mpi solve: conjugate gradients (cg, or pcg: with Jacobi; --precond amg:
 * each rank's block by AMG), BiCGStab or GMRES on
 * a distributed matrix (cmrscl_dist_solve), b all ones or random (a function of the global index),
 * x0 = 0; prints, on rank 0, the iterations, the recurrence's and the true residual, the time per
 * iteration (the slowest rank's) and a CPU check: b - A x in double from each rank's rows read back
 * and x gathered whole on every rank. */
#include "bench.h"
#include "mpi_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* b's entry of global row i: 1, or random in [-1, 1) rounded to the precision. */
static double rhs_at(const cli_options *opt, int64_t i, cmrscl_precision p)
{
    if (!opt->rhs || !strcmp(opt->rhs, "ones"))
        return 1.0;
    return mpi_value_at(i, 3, p);
}

/* ||b - A x||^2 over this rank's rows, in double on the CPU: its rows as the device holds them
 * and x gathered from every rank (halo columns looked up by their global index). */
static cmrscl_status cpu_residual(cmrscl_dist_matrix dm, const double *b, const double *x_local,
                                  double *out)
{
    cmrscl_dist_plan p;
    cmrscl_dist_matrix_plan(dm, &p);
    int ranks = p.ranks;
    int *counts = malloc(sizeof *counts * (size_t)ranks), *at = malloc(sizeof *at * (size_t)ranks);
    double *x = malloc(sizeof *x * ((size_t)p.cols + 1));
    int32_t *halo = malloc(sizeof *halo * ((size_t)p.halo + 1));
    cmrscl_csr rows = {0};
    cmrscl_status st = counts && at && x && halo ? cmrscl_dist_read_rows(dm, &rows)
                                                 : cmrscl_set_error(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                                                    "no memory for the check");
    int mine = p.local_cols;
    MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < ranks; ++r)
        at[r] = r ? at[r - 1] + counts[r - 1] : 0;
    MPI_Allgatherv(x_local, mine, MPI_DOUBLE, x, counts, at, MPI_DOUBLE, MPI_COMM_WORLD);
    if (st == CMRSCL_OK)
        st = cmrscl_dist_halo_columns(dm, halo);
    double sum = 0;
    for (int32_t i = 0; st == CMRSCL_OK && i < rows.rows; ++i) {
        double ax = 0;
        for (int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k) {
            int32_t c = rows.col_ind[k];
            ax += rows.values[k] * x[c < p.local_cols ? p.first_col + c : halo[c - p.local_cols]];
        }
        sum += (b[i] - ax) * (b[i] - ax);
    }
    *out = sum;
    cmrscl_csr_free(&rows);
    free(counts), free(at), free(x), free(halo);
    return st;
}

/* The slowest rank's value (every rank gets it). */
static double slowest(double v)
{
    double out = v;
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

int mpi_solve(cmrscl_context ctx, const cli_options *opt)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (opt->rhs && strcmp(opt->rhs, "ones") && strcmp(opt->rhs, "random")) {
        if (rank == 0)
            fprintf(stderr, "%s: --rhs %s: expected ones or random (a file is cmrscl-run's)\n",
                    cli_name, opt->rhs);
        return EXIT_USAGE;
    }
    bool is_gen = !opt->file;
    const char *input = opt->file ? opt->file : opt->gen ? opt->gen : DEFAULT_MATRIX;
    cmrscl_precision prec = opt->precision;
    cmrscl_dist_matrix dm = NULL;
    double t0 = cli_seconds();
    cmrscl_status st =
        is_gen ? cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, prec, input, &opt->matrix, &dm)
               : cmrscl_dist_create_from_mtx(MPI_COMM_WORLD, ctx, prec, input, &opt->matrix, &dm);
    double setup = slowest(cli_seconds() - t0);
    if (st != CMRSCL_OK)
        return mpi_fail("creating the distributed matrix", st);
    cmrscl_dist_plan p;
    cmrscl_dist_matrix_plan(dm, &p);
    int32_t n = p.local_rows;
    double *b = malloc(sizeof *b * ((size_t)n + 1)), *x = calloc((size_t)n + 1, sizeof *x);
    void *bh = malloc(sizeof(double) * ((size_t)n + 1)), *xh = calloc((size_t)n + 1, 8);
    cmrscl_solve_result r = {0};
    if (!b || !x || !bh || !xh)
        st = cmrscl_set_error(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for b and x");
    for (int32_t i = 0; st == CMRSCL_OK && i < n; ++i) {
        b[i] = rhs_at(opt, p.first_row + i, prec);
        if (prec == CMRSCL_DOUBLE)
            ((double *)bh)[i] = b[i];
        else
            ((float *)bh)[i] = (float)b[i];
    }
    /* Repetitions: each a whole solve from x0 = 0; the last one's numbers are printed, its
     * time per iteration the median's (the first builds the solver's kernels). */
    int reps = opt->repetitions > 0 ? opt->repetitions : 1;
    double *per = calloc((size_t)reps, sizeof *per), *total = calloc((size_t)reps, sizeof *total);
    for (int k = 0; k < reps && per && total; ++k) {
        memset(xh, 0, sizeof(double) * ((size_t)n + 1));
        cmrscl_solve_result_free(&r);
        cmrscl_status one = cmrscl_dist_solve_host(dm, &opt->solve, bh, xh, &r);
        if (one != CMRSCL_OK && one != CMRSCL_ERROR_BREAKDOWN) {
            st = one;
            break;
        }
        st = one;
        per[k] = slowest(r.iterations ? r.iterate_seconds / r.iterations * 1e3 : 0);
        total[k] = slowest(r.seconds * 1e3);
    }
    bool broke = st == CMRSCL_ERROR_BREAKDOWN;
    if (st != CMRSCL_OK && !broke) {
        int rc = mpi_fail("solving", st);
        cmrscl_solve_result_free(&r);
        free(b), free(x), free(bh), free(xh), free(per), free(total);
        cmrscl_dist_free(dm);
        return rc;
    }
    const char *why = broke ? cmrscl_last_error() : "";
    for (int32_t i = 0; i < n; ++i)
        x[i] = prec == CMRSCL_DOUBLE ? ((double *)xh)[i] : (double)((float *)xh)[i];
    double cpu = NAN, mine = 0, all = 0;
    if (opt->verify) {
        /* a rank whose check could not run fails the check (NaN), never passes it unseen */
        int failed = cpu_residual(dm, b, x, &mine) != CMRSCL_OK, any = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        cpu = any ? NAN : sqrt(all);
        if (failed)
            fprintf(stderr, "cmrscl-run-mpi: rank %d: the CPU check of x could not run: %s\n", rank,
                    cmrscl_last_error());
    }
    bool passed = !broke && (opt->fixed_iterations ||
                             (r.converged && (!opt->verify || cpu <= 10 * r.threshold)));
    if (rank == 0) {
        printf("matrix     %s%s: %lld x %lld, nnz %lld, %s\n", input,
               is_gen ? " (rows generated per rank)" : "", (long long)p.rows, (long long)p.cols,
               (long long)p.nnz, prec == CMRSCL_DOUBLE ? "double" : "float");
        printf("ranks      %d; exchange %s; set-up %.3f s (slowest rank)\n", p.ranks,
               mpi_exchange_name(p.exchange), setup);
        const cmrscl_solve_options *so = &opt->solve;
        printf("solver     %s, rtol %g, atol %g, at most %d iterations, b %s, x0 = 0\n",
               so->preconditioner == CMRSCL_PRECONDITIONER_AMG ? "cg + amg (each rank's block)"
               : so->preconditioner                            ? "cg + jacobi"
                                                               : cmrscl_method_name(so->method),
               so->rtol ? so->rtol : (so->atol ? 0 : 1e-5), so->atol,
               so->max_iterations ? so->max_iterations : (int)fmin(10.0 * (double)p.rows, 1 << 24),
               opt->rhs ? opt->rhs : "ones");
        printf("result     %s after %d iterations: ||r|| %.3e (recurrence), ||b - A x|| %.3e "
               "(device), %.3e (CPU, double); ||b|| %.3e, threshold %.3e\n",
               cmrscl_solve_reason_name(r.reason), r.iterations, r.residual, r.true_residual, cpu,
               r.b_norm, r.threshold);
        printf("time       %.4f ms per iteration (slowest rank; %d launches%s), solve %.3f ms "
               "(median of %d)\n",
               cli_median(per, reps), r.launches_per_iteration,
               p.ranks == 1 ? " an iteration: one rank runs the single-device solver"
               : opt->solve.method == CMRSCL_METHOD_BICGSTAB
                   ? " and three MPI_Allgather an iteration"
               : opt->solve.method == CMRSCL_METHOD_GMRES ||
                       opt->solve.preconditioner == CMRSCL_PRECONDITIONER_AMG
                   ? " and two MPI_Allgather an iteration"
                   : " and one MPI_Allgather an iteration",
               cli_median(total, reps), reps);
        if (broke)
            printf("check      FAIL: %s\n", why);
        else
            printf("check      %s\n",
                   opt->fixed_iterations ? "fixed iterations: not a convergence test"
                   : passed              ? "PASS (converged; ||b - A x|| within 10x the threshold)"
                   : !r.converged        ? "FAIL: not converged"
                                         : "FAIL: ||b - A x|| on the CPU beyond 10x the threshold");
    }
    cmrscl_solve_result_free(&r);
    free(b), free(x), free(bh), free(xh), free(per), free(total);
    cmrscl_dist_free(dm);
    return passed ? 0 : EXIT_RUN_FAILED;
}
