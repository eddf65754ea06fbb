/* cg.c - conjugate gradients on one device: the first program to read when using libcmrscl.
 * The matrix (symmetric positive definite) comes from a Matrix Market file or a generator
 * spec; libcmrscl plans it for the device, converts it to CMRS, and its solver
 * (include/cmrscl_solve.h) runs the whole of CG there - the products, the vector updates and
 * the dot products fused into two kernels an iteration, the convergence test on the device.
 * At the end the residual ||b - A x|| / ||b|| is computed again on the CPU in double,
 * independently of the device.
 *
 *   cg [FILE.mtx | SPEC] [-p float|double] [-d SELECTOR] [-t TOL] [-m MAX_ITER] [-j]
 *
 * -j: the Jacobi preconditioner. Default: stencil7:32 (the 7-point Laplacian on a 32^3
 * grid), b = 1, x0 = 0, TOL 1e-8 in double and 1e-5 in float (what float's products can
 * reach on well-conditioned matrices), MAX_ITER 10000.
 * Exit status: 0 when the final residual is within 10 x TOL, 1 when it is not or on an
 * error, 2 for a bad argument (with the reason). */
#include <cmrscl.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct settings {
    const char *matrix, *device;
    cmrscl_precision precision;
    double tol;
    int max_iter;
    bool jacobi;
} settings;

static const char *const usage = "usage: cg [FILE.mtx | SPEC] [-p float|double] [-d SELECTOR] "
                                 "[-t TOL] [-m MAX_ITER] [-j]\n"
                                 "  defaults: stencil7:32, double, TOL 1e-8 (float: 1e-5), "
                                 "MAX_ITER 10000, no preconditioner (-j: Jacobi)\n";

/* false, having said why, for a bad argument */
static bool parse(int argc, char **argv, settings *s)
{
    *s = (settings){"stencil7:32", NULL, CMRSCL_DOUBLE, 0.0, 10000, false};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (a[0] != '-') {
            s->matrix = a;
            continue;
        }
        if (!strcmp(a, "-j")) {
            s->jacobi = true;
            continue;
        }
        if (strlen(a) != 2 || !strchr("pdtm", a[1])) {
            fprintf(stderr, "cg: %s: unknown option (options: -p -d -t -m -j)\n", a);
            return false;
        }
        const char *v = i + 1 < argc ? argv[++i] : NULL;
        char *end = NULL;
        if (!v) {
            fprintf(stderr, "cg: %s: missing value\n", a);
            return false;
        }
        if (a[1] == 'p' && (!strcmp(v, "float") || !strcmp(v, "double")))
            s->precision = !strcmp(v, "float") ? CMRSCL_FLOAT : CMRSCL_DOUBLE;
        else if (a[1] == 'd')
            s->device = v;
        else if (a[1] == 't' && (s->tol = strtod(v, &end)) > 0.0 && !*end)
            continue;
        else if (a[1] == 'm' && (s->max_iter = (int)strtol(v, &end, 10)) > 0 && !*end)
            continue;
        else {
            fprintf(stderr, "cg: %s %s: expected %s\n", a, v,
                    a[1] == 'p'   ? "float or double"
                    : a[1] == 't' ? "a tolerance > 0"
                    : a[1] == 'm' ? "a number of iterations > 0"
                                  : "a known option");
            return false;
        }
    }
    if (s->tol == 0.0) /* what the precision's products can reach */
        s->tol = s->precision == CMRSCL_DOUBLE ? 1e-8 : 1e-5;
    return true;
}

/* A file when the name ends in .mtx or .mtx.gz, else a generator spec. */
static cmrscl_status load(const char *name, cmrscl_csr *a)
{
    size_t n = strlen(name);
    bool file =
        (n > 4 && !strcmp(name + n - 4, ".mtx")) || (n > 7 && !strcmp(name + n - 7, ".mtx.gz"));
    return file ? cmrscl_mtx_read(name, NULL, a) : cmrscl_csr_generate(name, a);
}

int main(int argc, char **argv)
{
    settings s;
    if (!parse(argc, argv, &s)) {
        fputs(usage, stderr);
        return 2;
    }
    cmrscl_csr a = {0};
    cmrscl_context ctx = NULL;
    cmrscl_matrix m = NULL;
    cmrscl_status st = load(s.matrix, &a);
    if (st == CMRSCL_OK && a.rows != a.cols)
        st = cmrscl_set_error(CMRSCL_ERROR_INVALID_ARGUMENT, "CG needs a square matrix");
    if (st == CMRSCL_OK)
        st = cmrscl_context_create(s.device, &ctx);
    if (st == CMRSCL_OK)
        st = cmrscl_matrix_create_from_csr(ctx, s.precision, &a, NULL, &m);
    int n = a.rows;
    size_t vs = s.precision == CMRSCL_DOUBLE ? sizeof(double) : sizeof(float);
    void *b = calloc((size_t)n + 1, vs), *x = calloc((size_t)n + 1, vs); /* x0 = 0 */
    double *xd = malloc(((size_t)n + 1) * sizeof *xd), *bd = malloc(((size_t)n + 1) * sizeof *bd);
    if (st == CMRSCL_OK && !(b && x && xd && bd))
        st = cmrscl_set_error(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the vectors");
    for (int i = 0; st == CMRSCL_OK && i < n; ++i) {
        bd[i] = 1.0;
        if (s.precision == CMRSCL_DOUBLE)
            ((double *)b)[i] = 1.0;
        else
            ((float *)b)[i] = 1.0f;
    }
    /* the solve, on the device */
    cmrscl_solve_options opt = {
        .method = CMRSCL_METHOD_CG, .rtol = s.tol, .max_iterations = s.max_iter};
    if (s.jacobi)
        opt.preconditioner = CMRSCL_PRECONDITIONER_JACOBI;
    cmrscl_solve_result r = {0};
    cmrscl_status solved = st == CMRSCL_OK ? cmrscl_solve_host(m, &opt, b, x, &r) : st;
    double residual = INFINITY, bnorm = sqrt((double)n);
    /* b - A x on the CPU, in double, from the x the device returned */
    for (int i = 0; r.iterations >= 0 && st == CMRSCL_OK && i < n; ++i)
        xd[i] = s.precision == CMRSCL_DOUBLE ? ((double *)x)[i] : ((float *)x)[i];
    if (st == CMRSCL_OK && cmrscl_csr_spmv(&a, -1.0, xd, 1.0, bd) == CMRSCL_OK) {
        residual = 0;
        for (int i = 0; i < n; ++i)
            residual += bd[i] * bd[i];
        residual = sqrt(residual) / bnorm;
    }
    bool converged = solved == CMRSCL_OK && r.converged && residual <= 10.0 * s.tol;
    if (st == CMRSCL_OK) {
        cmrscl_params plan = CMRSCL_PARAMS_INIT;
        cmrscl_matrix_params(m, &plan);
        printf("cg: %s: %d unknowns, %lld nonzeros, %s%s; plan: HEIGHT %d, %s\n", s.matrix, n,
               (long long)a.nnz, s.precision == CMRSCL_DOUBLE ? "double" : "float",
               s.jacobi ? ", Jacobi" : "", plan.height, plan.plan_reason);
        printf("cg: %d iterations in %.3f ms (%.1f us an iteration, %d launches); "
               "||b - A x|| / ||b|| = %.3e (recurrence %.3e, tolerance %.1e): %s\n",
               r.iterations, r.seconds * 1e3,
               r.iterations ? r.iterate_seconds * 1e6 / r.iterations : 0.0,
               r.launches_per_iteration, residual, r.b_norm > 0 ? r.residual / r.b_norm : 0.0,
               s.tol, converged ? "converged" : "NOT converged");
        if (solved != CMRSCL_OK)
            fprintf(stderr, "cg: %s: %s\n", cmrscl_status_name(solved), cmrscl_last_error());
        else if (!converged && s.precision == CMRSCL_FLOAT)
            fprintf(stderr, "cg: float reaches about 1e-6 relative at best, ill-conditioned "
                            "matrices less: try -p double or a larger -t\n");
    } else {
        fprintf(stderr, "cg: %s: %s\n", cmrscl_status_name(st), cmrscl_last_error());
    }
    cmrscl_solve_result_free(&r);
    free(x), free(b), free(xd), free(bd);
    cmrscl_matrix_free(m);
    cmrscl_context_free(ctx);
    cmrscl_csr_free(&a);
    return converged ? 0 : 1;
}
