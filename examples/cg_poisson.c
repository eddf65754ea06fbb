/* cg_poisson.c - conjugate gradients on the 3-D Poisson problem, distributed with
 * libcmrscl_mpi: the 7-point Laplacian on an N^3 grid (Dirichlet boundaries, N^3 unknowns),
 * right-hand side b = 1. Each rank generates only its own rows (cmrscl_dist_create_generated)
 * and runs on its own device; the library's distributed solver (cmrscl_dist_solve) keeps every
 * vector on the device, overlaps each product's halo exchange with its local part and needs
 * one MPI collective an iteration. The solver reports the residual ||b - A x|| computed again
 * from a fresh product, beside its recurrence's.
 *
 *   mpirun -np 2 cg_poisson [N] [-p float|double] [-d SELECTOR] [-t TOL] [-m MAX_ITER] [-j]
 *
 * -j: with the Jacobi preconditioner (on this matrix, a constant diagonal: the same
 * iterations). Exit status: 0 when the final residual is within 10 x TOL, 1 otherwise or on
 * an error. */
#include <cmrscl_mpi.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct settings {
    int n, max_iter;
    double tol;
    cmrscl_precision precision;
    const char *device;
    bool jacobi;
} settings;

/* 0, having said why (rank 0), for a bad argument. */
static int parse(int argc, char **argv, settings *s, int rank)
{
    *s = (settings){32, 2000, 0.0, CMRSCL_DOUBLE, NULL, false};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        const char *expected = NULL;
        if (strcmp(a, "-j") == 0) {
            s->jacobi = true;
        } else if (a[0] >= '0' && a[0] <= '9') {
            s->n = (int)strtol(a, &end, 10);
            expected = s->n > 0 && !*end ? NULL : "a grid size N > 0";
        } else if (!v || strlen(a) != 2 || !strchr("pdtm", a[1])) {
            expected = v ? "a known option (-p, -d, -t, -m, -j)" : "an option with its value";
        } else if (++i, a[1] == 'p') {
            s->precision = strcmp(v, "float") == 0 ? CMRSCL_FLOAT : CMRSCL_DOUBLE;
            expected = strcmp(v, "float") && strcmp(v, "double") ? "float or double" : NULL;
        } else if (a[1] == 'd') {
            s->device = v;
        } else if (a[1] == 't') {
            s->tol = strtod(v, &end);
            expected = s->tol > 0 && !*end ? NULL : "a tolerance > 0";
        } else {
            s->max_iter = (int)strtol(v, &end, 10);
            expected = s->max_iter > 0 && !*end ? NULL : "a number of iterations > 0";
        }
        if (expected) {
            if (rank == 0)
                fprintf(stderr, "cg_poisson: %s%s%s: expected %s\n", a, a[0] == '-' && v ? " " : "",
                        a[0] == '-' && v ? v : "", expected);
            return 0;
        }
    }
    /* what the precision's products can reach and show: in float, ||b - A x|| on a Poisson
     * grid of a few dozen points a side rounds by about half of 1e-5 relative, and converged
     * asks the residual plus that rounding to meet the tolerance */
    if (s->tol == 0.0)
        s->tol = s->precision == CMRSCL_DOUBLE ? 1e-8 : 1e-4;
    return 1;
}

/* A failure on every rank (the library's calls agree on it), said once. */
static int fail(int rank, const char *what, cmrscl_status st)
{
    if (rank == 0)
        fprintf(stderr, "cg_poisson: %s: %s: %s\n", what, cmrscl_status_name(st),
                cmrscl_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1, rc = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    settings s;
    if (!parse(argc, argv, &s, rank)) {
        if (rank == 0)
            fputs("usage: cg_poisson [N] [-p float|double] [-d SELECTOR] [-t TOL] [-m MAX_ITER] "
                  "[-j]\n  defaults: N 32, double, TOL 1e-8 (float: 1e-4), MAX_ITER 2000, no "
                  "preconditioner (-j: Jacobi)\n",
                  stderr);
        MPI_Finalize();
        return 2;
    }
    cmrscl_context ctx = NULL;
    cmrscl_dist_matrix a = NULL;
    cmrscl_solve_result r = {0};
    void *b = NULL, *x = NULL;
    char spec[32];
    snprintf(spec, sizeof spec, "stencil7:%d", s.n);
    cmrscl_status st = cmrscl_dist_context_create(MPI_COMM_WORLD, s.device, &ctx);
    if (st != CMRSCL_OK)
        rc = fail(rank, "selecting the devices", st);
    else if ((st = cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, s.precision, spec, NULL, &a)))
        rc = fail(rank, "creating the matrix", st);
    if (!rc) {
        cmrscl_dist_plan plan;
        cmrscl_dist_matrix_plan(a, &plan);
        size_t value = s.precision == CMRSCL_DOUBLE ? sizeof(double) : sizeof(float);
        b = malloc(value * ((size_t)plan.local_rows + 1));
        x = calloc((size_t)plan.local_rows + 1, value); /* x0 = 0 */
        for (int32_t i = 0; b && i < plan.local_rows; ++i)
            if (s.precision == CMRSCL_DOUBLE)
                ((double *)b)[i] = 1.0;
            else
                ((float *)b)[i] = 1.0f;
        cmrscl_solve_options opt = {.method = CMRSCL_METHOD_CG,
                                    .preconditioner = s.jacobi ? CMRSCL_PRECONDITIONER_JACOBI
                                                               : CMRSCL_PRECONDITIONER_NONE,
                                    .rtol = s.tol,
                                    .max_iterations = s.max_iter};
        st = b && x ? cmrscl_dist_solve_host(a, &opt, b, x, &r) : CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
        if (st != CMRSCL_OK)
            rc = fail(rank, "solving", st);
        else if (rank == 0) {
            printf("cg_poisson: 7-point Poisson on a %d^3 grid: %lld unknowns, %lld nonzeros, "
                   "%d ranks, %s%s\n",
                   s.n, (long long)plan.rows, (long long)plan.nnz, ranks,
                   s.precision == CMRSCL_DOUBLE ? "double" : "float", s.jacobi ? ", Jacobi" : "");
            printf("%d iterations in %.3f s (%.3f ms each)\n", r.iterations, r.iterate_seconds,
                   r.iterations ? 1e3 * r.iterate_seconds / r.iterations : 0.0);
        }
    }
    if (!rc) {
        double residual = r.true_residual / r.b_norm;
        bool converged = r.converged && residual <= 10.0 * s.tol;
        if (rank == 0)
            printf("relative residual ||b - A x|| / ||b|| = %.3e (recurrence %.3e, tolerance "
                   "%.1e): %s\n",
                   residual, r.residual / r.b_norm, s.tol,
                   converged ? "converged" : "NOT converged");
        rc = converged ? 0 : 1;
    }
    cmrscl_solve_result_free(&r);
    free(b), free(x);
    cmrscl_dist_free(a);
    cmrscl_context_free(ctx);
    MPI_Finalize();
    return rc;
}
