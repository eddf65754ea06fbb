/* cg.c - conjugate gradients on one device: the first program to read when using libcmrscl.
 * The matrix (symmetric positive definite) comes from a Matrix Market file or a generator
 * spec; libcmrscl plans it for the device, converts it to CMRS and runs every product A p
 * there; the vector updates stay on the host, in double, so the example needs no OpenCL
 * code of its own. (A solver that keeps its vectors on the device passes cl_mem buffers to
 * cmrscl_spmv instead: examples/cg_poisson.c does that, over MPI.) At the end the residual
 * ||b - A x|| / ||b|| is computed again on the CPU in double, independently of the device.
 *
 *   cg [FILE.mtx | SPEC] [-p float|double] [-d SELECTOR] [-t TOL] [-m MAX_ITER]
 *
 * Default: stencil7:32 (the 7-point Laplacian on a 32^3 grid), b = 1, x0 = 0.
 * Exit status: 0 when the final residual is within 10 x TOL, 1 when it is not or on an
 * error, 2 for a bad argument. */
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
} settings;

static bool parse(int argc, char **argv, settings *s)
{
    *s = (settings){"stencil7:32", NULL, CMRSCL_DOUBLE, 0.0, 10000};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            s->matrix = a;
            continue;
        }
        if (!v || a[1] == '\0' || a[2] != '\0')
            return false;
        ++i;
        if (a[1] == 'p' && (!strcmp(v, "float") || !strcmp(v, "double")))
            s->precision = !strcmp(v, "float") ? CMRSCL_FLOAT : CMRSCL_DOUBLE;
        else if (a[1] == 'd')
            s->device = v;
        else if (a[1] == 't' && (s->tol = atof(v)) > 0.0)
            continue;
        else if (a[1] == 'm' && (s->max_iter = atoi(v)) > 0)
            continue;
        else
            return false;
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

/* q = A p on the device: p converted to the matrix's precision, q back to double. */
static cmrscl_status product(cmrscl_matrix m, cmrscl_precision precision, const double *p,
                             double *q, int n, void *pv, void *qv)
{
    if (precision == CMRSCL_DOUBLE)
        return cmrscl_spmv_host(m, 1.0, p, 0.0, q);
    for (int i = 0; i < n; ++i)
        ((float *)pv)[i] = (float)p[i];
    cmrscl_status st = cmrscl_spmv_host(m, 1.0, pv, 0.0, qv);
    for (int i = 0; i < n; ++i)
        q[i] = ((float *)qv)[i];
    return st;
}

static double dot(const double *x, const double *y, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i)
        s += x[i] * y[i];
    return s;
}

int main(int argc, char **argv)
{
    settings s;
    if (!parse(argc, argv, &s)) {
        fputs("usage: cg [FILE.mtx | SPEC] [-p float|double] [-d SELECTOR] [-t TOL] "
              "[-m MAX_ITER]\n",
              stderr);
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
    double *x = calloc((size_t)n + 1, sizeof *x), *b = malloc(((size_t)n + 1) * sizeof *b);
    double *r = malloc(((size_t)n + 1) * sizeof *r), *p = malloc(((size_t)n + 1) * sizeof *p);
    double *q = malloc(((size_t)n + 1) * sizeof *q);
    void *pv = malloc(((size_t)n + 1) * sizeof(float)),
         *qv = malloc(((size_t)n + 1) * sizeof(float));
    if (st == CMRSCL_OK && !(x && b && r && p && q && pv && qv))
        st = cmrscl_set_error(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the vectors");

    int it = 0;
    double bnorm = 1.0, rr = 0.0, rel = 1.0, residual = INFINITY;
    if (st == CMRSCL_OK) {
        for (int i = 0; i < n; ++i)
            b[i] = r[i] = p[i] = 1.0; /* x0 = 0, so r0 = p0 = b */
        bnorm = sqrt(dot(b, b, n));
        rr = dot(r, r, n);
    }
    while (st == CMRSCL_OK && it < s.max_iter && rel > s.tol) {
        if ((st = product(m, s.precision, p, q, n, pv, qv)) != CMRSCL_OK)
            break;
        double pq = dot(p, q, n);
        if (!(pq > 0.0)) { /* CG's breakdown: no SPD matrix gives p . A p <= 0 */
            char why[96];
            snprintf(why, sizeof why, "p . A p = %g at iteration %d: A is not positive definite",
                     pq, it + 1);
            st = cmrscl_set_error(CMRSCL_ERROR_INVALID_ARGUMENT, why);
            break;
        }
        double alpha = rr / pq;
        for (int i = 0; i < n; ++i)
            x[i] += alpha * p[i], r[i] -= alpha * q[i];
        double rr_next = dot(r, r, n);
        for (int i = 0; i < n; ++i)
            p[i] = r[i] + rr_next / rr * p[i];
        rr = rr_next;
        rel = sqrt(rr) / bnorm;
        ++it;
    }
    if (st == CMRSCL_OK && (st = cmrscl_csr_spmv(&a, -1.0, x, 1.0, b)) == CMRSCL_OK)
        residual = sqrt(dot(b, b, n)) / bnorm; /* b - A x, on the CPU in double */
    bool converged = residual <= 10.0 * s.tol;
    if (st == CMRSCL_OK) {
        cmrscl_params plan;
        cmrscl_matrix_params(m, &plan);
        printf("cg: %s: %d unknowns, %lld nonzeros, %s; plan: HEIGHT %d, %s\n", s.matrix, n,
               (long long)a.nnz, s.precision == CMRSCL_DOUBLE ? "double" : "float", plan.height,
               plan.plan_reason);
        printf("cg: %d iterations; ||b - A x|| / ||b|| = %.3e (recurrence %.3e, tolerance "
               "%.1e): %s\n",
               it, residual, rel, s.tol, converged ? "converged" : "NOT converged");
    } else {
        fprintf(stderr, "cg: %s: %s\n", cmrscl_status_name(st), cmrscl_last_error());
    }
    free(x), free(b), free(r), free(p), free(q), free(pv), free(qv);
    cmrscl_matrix_free(m);
    cmrscl_context_free(ctx);
    cmrscl_csr_free(&a);
    return st == CMRSCL_OK && converged ? 0 : 1;
}
