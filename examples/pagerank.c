/* pagerank.c - PageRank by power iteration on one device, through the transposed product.
 * The graph is a Matrix Market file or a generator spec read as an adjacency matrix: entry
 * (i, j) is a link from page i to page j (its value is ignored). Each row is scaled to sum 1
 * (P = D^-1 A, row-stochastic), so a page shares its rank among its links, and
 *     r <- d P^T r + (d * (rank of pages without links) + 1 - d) / n
 * until the rank moves less than TOL (1-norm). P^T r is cmrscl's transposed product: the
 * library keeps P^T on the device beside P (cmrscl_matrix_prepare_transpose), built once.
 * At the end the residual ||r - (d P^T r + ...)||_1 is computed again on the CPU in double
 * from the host's transpose of P, independently of the device.
 *
 *   pagerank [FILE.mtx | SPEC] [-p float|double] [-d SELECTOR] [-t TOL] [-m MAX_ITER]
 *            [-a DAMPING]
 *
 * Default: rmat:14:8 (an R-MAT power-law graph of 16,384 pages), damping 0.85, TOL 1e-10 in
 * double and 1e-6 in float, MAX_ITER 1000. Exit status: 0 when the final residual is within
 * 10 x TOL, 1 when it is not or on an error, 2 for a bad argument (with the reason). */
#include "progress.h"

#include <cmrscl.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct settings {
    const char *matrix, *device;
    cmrscl_precision precision;
    double tol, damping;
    int max_iter;
} settings;

static const char *const usage = "usage: pagerank [FILE.mtx | SPEC] [-p float|double] "
                                 "[-d SELECTOR] [-t TOL] [-m MAX_ITER] [-a DAMPING]\n"
                                 "  defaults: rmat:14:8, double, TOL 1e-10 (float: 1e-6), "
                                 "MAX_ITER 1000, DAMPING 0.85\n";

/* false, having said why, for a bad argument */
static bool parse(int argc, char **argv, settings *s)
{
    *s = (settings){"rmat:14:8", NULL, CMRSCL_DOUBLE, 0.0, 0.85, 1000};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            s->matrix = a;
            continue;
        }
        if (a[1] == '\0' || a[2] != '\0' || !strchr("pdtma", a[1])) {
            fprintf(stderr, "pagerank: %s: unknown option (options: -p -d -t -m -a)\n", a);
            return false;
        }
        if (!v) {
            fprintf(stderr, "pagerank: %s: missing value\n", a);
            return false;
        }
        ++i;
        char *end = NULL;
        if (a[1] == 'p' && (!strcmp(v, "float") || !strcmp(v, "double")))
            s->precision = !strcmp(v, "float") ? CMRSCL_FLOAT : CMRSCL_DOUBLE;
        else if (a[1] == 'd')
            s->device = v;
        else if (a[1] == 't' && (s->tol = strtod(v, &end)) > 0.0 && !*end)
            continue;
        else if (a[1] == 'm' && (s->max_iter = (int)strtol(v, &end, 10)) > 0 && !*end)
            continue;
        else if (a[1] == 'a' && (s->damping = strtod(v, &end)) > 0.0 && s->damping < 1.0 && !*end)
            continue;
        else {
            fprintf(stderr, "pagerank: %s %s: expected %s\n", a, v,
                    a[1] == 'p'   ? "float or double"
                    : a[1] == 't' ? "a tolerance > 0"
                    : a[1] == 'm' ? "a number of iterations > 0"
                    : a[1] == 'a' ? "a damping factor between 0 and 1"
                                  : "a known option");
            return false;
        }
    }
    if (s->tol == 0.0) /* what the precision's products can reach */
        s->tol = s->precision == CMRSCL_DOUBLE ? 1e-10 : 1e-6;
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

/* The adjacency matrix made row-stochastic: each link of page i weighs 1 / (its links). */
static void make_stochastic(cmrscl_csr *a)
{
    for (int32_t i = 0; i < a->rows; ++i) {
        int64_t links = a->row_ptr[i + 1] - a->row_ptr[i];
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            a->values[k] = 1.0 / (double)links;
    }
}

/* The rank that pages without links spread over every page, with the teleport term. */
static double uniform_term(const cmrscl_csr *a, const double *r, double d)
{
    double dangling = 0.0;
    for (int32_t i = 0; i < a->rows; ++i)
        if (a->row_ptr[i + 1] == a->row_ptr[i])
            dangling += r[i];
    return (d * dangling + 1.0 - d) / a->rows;
}

/* next = P^T r on the device: r converted to the matrix's precision, next back to double. */
static cmrscl_status product(cmrscl_matrix m, cmrscl_precision precision, const double *r,
                             double *next, int n, float *rv, float *nv)
{
    if (precision == CMRSCL_DOUBLE)
        return cmrscl_spmv_host_op(m, CMRSCL_TRANSPOSE, 1.0, r, 0.0, next);
    for (int i = 0; i < n; ++i)
        rv[i] = (float)r[i];
    cmrscl_status st = cmrscl_spmv_host_op(m, CMRSCL_TRANSPOSE, 1.0, rv, 0.0, nv);
    for (int i = 0; i < n; ++i)
        next[i] = nv[i];
    return st;
}

/* ||r - (d P^T r + u)||_1 on the CPU in double, with the host's transpose of P. */
static cmrscl_status cpu_residual(const cmrscl_csr *p, const double *r, double d, double *out)
{
    cmrscl_csr pt;
    cmrscl_status st = cmrscl_csr_transpose(p, &pt);
    double *next = malloc(((size_t)p->rows + 1) * sizeof *next);
    if (st == CMRSCL_OK && !next)
        st = cmrscl_set_error(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the check");
    if (st == CMRSCL_OK)
        st = cmrscl_csr_spmv(&pt, d, r, 0.0, next);
    double u = uniform_term(p, r, d), sum = 0.0;
    for (int32_t i = 0; st == CMRSCL_OK && i < p->rows; ++i)
        sum += fabs(r[i] - (next[i] + u));
    *out = sum;
    free(next);
    cmrscl_csr_free(&pt);
    return st;
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
    cmrscl_params plan = CMRSCL_PARAMS_INIT;
    cmrscl_status st = load(s.matrix, &a);
    if (st == CMRSCL_OK && (a.rows != a.cols || a.rows == 0))
        st = cmrscl_set_error(CMRSCL_ERROR_INVALID_ARGUMENT,
                              "PageRank needs a square adjacency matrix with pages");
    if (st == CMRSCL_OK) {
        make_stochastic(&a);
        st = cmrscl_context_create(s.device, &ctx);
    }
    if (st == CMRSCL_OK)
        st = cmrscl_matrix_create_from_csr(ctx, s.precision, &a, NULL, &m);
    if (st == CMRSCL_OK) /* P^T now, so the loop below only runs products */
        st = cmrscl_matrix_prepare_transpose(m, NULL, &plan);
    int n = a.rows;
    double *r = malloc(((size_t)n + 1) * sizeof *r), *next = malloc(((size_t)n + 1) * sizeof *next);
    float *rv = malloc(((size_t)n + 1) * sizeof *rv), *nv = malloc(((size_t)n + 1) * sizeof *nv);
    if (st == CMRSCL_OK && !(r && next && rv && nv))
        st = cmrscl_set_error(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the vectors");

    int it = 0;
    double change = INFINITY, residual = INFINITY;
    for (int i = 0; st == CMRSCL_OK && i < n; ++i)
        r[i] = 1.0 / n;
    progress bar = progress_begin();
    const double t0 = progress_now();
    while (st == CMRSCL_OK && it < s.max_iter && change > s.tol) {
        if ((st = product(m, s.precision, r, next, n, rv, nv)) != CMRSCL_OK)
            break;
        double u = uniform_term(&a, r, s.damping);
        change = 0.0;
        for (int i = 0; i < n; ++i) {
            double v = s.damping * next[i] + u;
            change += fabs(v - r[i]);
            r[i] = v;
        }
        ++it;
        progress_show(&bar, "pagerank", it, s.max_iter, "change", change);
    }
    progress_end(&bar);
    const double seconds = progress_now() - t0; /* the products and the host's updates */
    if (st == CMRSCL_OK)
        st = cpu_residual(&a, r, s.damping, &residual);
    bool converged = residual <= 10.0 * s.tol;
    if (st == CMRSCL_OK) {
        printf("pagerank: %s: %d pages, %lld links, %s, damping %.2f; P^T kept on the device: "
               "%.2f MB, HEIGHT %d\n",
               s.matrix, n, (long long)a.nnz, s.precision == CMRSCL_DOUBLE ? "double" : "float",
               s.damping, plan.device_bytes / 1e6, plan.height);
        int top = 0; /* the highest rank */
        for (int i = 1; i < n; ++i)
            top = r[i] > r[top] ? i : top;
        printf("pagerank: highest rank %.6e (page %d)\n", r[top], top);
        printf("pagerank: %d iterations in %.3f ms (%.1f us an iteration); "
               "||r - (d P^T r + u)||_1 = %.3e (last change %.3e, tolerance %.1e): %s\n",
               it, seconds * 1e3, it ? seconds * 1e6 / it : 0.0, residual, change, s.tol,
               converged ? "converged" : "NOT converged");
    } else {
        fprintf(stderr, "pagerank: %s: %s\n", cmrscl_status_name(st), cmrscl_last_error());
    }
    free(r), free(next), free(rv), free(nv);
    cmrscl_matrix_free(m);
    cmrscl_context_free(ctx);
    cmrscl_csr_free(&a);
    return st == CMRSCL_OK && converged ? 0 : 1;
}
