/* block_power.c - the k eigenvalues of largest magnitude of a symmetric matrix (for a positive
 * definite one, such as the Laplacian, the k largest) by subspace iteration with
 * Rayleigh-Ritz: the block product's job. A block Q of k orthonormal vectors (n x k,
 * row-major) goes to the device and comes back as W = A Q from ONE cmrscl_spmm call, which
 * reads the matrix once for all k vectors; the rest stays on the host, in double: the small
 * matrix H = Q^T W, its eigenpairs (theta, S) by the cyclic Jacobi method, the Ritz vectors
 * X = Q S and, for free, A X = W S, which gives every residual ||A x - theta x|| and the
 * next block Q = orth(A X) (modified Gram-Schmidt, twice). So one product per iteration.
 * The iteration stops when every residual / |theta| is below TOL; convergence goes as
 * |lambda_{k+1} / lambda_k| per iteration, so k should end a group of equal eigenvalues.
 * At the end A x is computed again on the CPU in double for each Ritz vector,
 * independently of the device; for stencil7:N the exact eigenvalues are known (a sum of
 * three 2 - 2 cos(pi j / (N + 1))) and printed beside the Ritz values.
 *
 *   block_power [FILE.mtx | SPEC] [-p float|double] [-d SELECTOR] [-k VECTORS] [-t TOL]
 *               [-m MAX_ITER]
 *
 * Default: stencil7:8 (the 7-point Laplacian on an 8^3 grid), k = 4 (the largest eigenvalue
 * and the next one, three times: about 500 iterations at TOL 1e-8, where stencil7:16's
 * narrower gap takes 1700), a fixed pseudo-random start. Exit status: 0 when the
 * iteration reached TOL within MAX_ITER and the largest residual on the CPU (and, for
 * stencil7, the largest error of a Ritz value) is within 10 x TOL, 1 when not, for a matrix
 * that is not square and symmetric or on an error, 2 for a bad argument. */
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
    double tol;
    int k, max_iter;
} settings;

static bool parse(int argc, char **argv, settings *s)
{
    *s = (settings){"stencil7:8", NULL, CMRSCL_DOUBLE, 0.0, 4, 5000};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            s->matrix = a;
            continue;
        }
        if (a[1] == '\0' || a[2] != '\0' || !strchr("pdktm", a[1])) {
            fprintf(stderr, "block_power: %s: unknown option (options: -p -d -k -t -m)\n", a);
            return false;
        }
        if (!v) {
            fprintf(stderr, "block_power: %s: missing value\n", a);
            return false;
        }
        ++i;
        char *end = NULL;
        if (a[1] == 'p' && (!strcmp(v, "float") || !strcmp(v, "double")))
            s->precision = !strcmp(v, "float") ? CMRSCL_FLOAT : CMRSCL_DOUBLE;
        else if (a[1] == 'd')
            s->device = v;
        else if (a[1] == 'k' && (s->k = (int)strtol(v, &end, 10)) >= 1 && s->k <= 64 && !*end)
            continue; /* one block of spmm */
        else if (a[1] == 't' && (s->tol = strtod(v, &end)) > 0.0 && !*end)
            continue;
        else if (a[1] == 'm' && (s->max_iter = (int)strtol(v, &end, 10)) > 0 && !*end)
            continue;
        else {
            fprintf(stderr, "block_power: %s %s: expected %s\n", a, v,
                    a[1] == 'p'   ? "float or double"
                    : a[1] == 'k' ? "1 to 64 vectors (one block of the block product)"
                    : a[1] == 't' ? "a tolerance > 0"
                    : a[1] == 'm' ? "a number of iterations > 0"
                                  : "a known option");
            return false;
        }
    }
    /* What the precision's products can reach: a residual is ||A x - theta x|| with A x
     * rounded in the product, so its floor is a few unit roundoffs times ||A|| / |theta|. */
    if (s->tol == 0.0)
        s->tol = s->precision == CMRSCL_DOUBLE ? 1e-8 : 1e-4;
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

/* a_ij == a_ji for every stored entry: the CSR is canonical (columns ascending, as the
 * reader and the generator make it), so a_ji is a binary search in row j. */
static bool symmetric(const cmrscl_csr *a)
{
    for (int32_t i = 0; i < a->rows; ++i)
        for (int64_t e = a->row_ptr[i]; e < a->row_ptr[i + 1]; ++e) {
            int32_t j = a->col_ind[e];
            int64_t lo = a->row_ptr[j], hi = a->row_ptr[j + 1];
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (a->col_ind[mid] < i)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == a->row_ptr[j + 1] || a->col_ind[lo] != i || a->values[lo] != a->values[e])
                return false;
        }
    return true;
}

static cmrscl_status cl_check(cl_int err, const char *what)
{
    char why[96];
    snprintf(why, sizeof why, "%s: OpenCL error %d", what, (int)err);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_set_error(CMRSCL_ERROR_OPENCL, why);
}

/* W = A Q on the device: Q written to the buffer x (converted to float through `stage` for a
 * float matrix), one block product into y, y read back to double. Blocking writes and
 * reads on the context's in-order queue order everything with the product. */
static cmrscl_status product(cmrscl_matrix m, cmrscl_precision precision, cl_command_queue queue,
                             cl_mem x, cl_mem y, const double *q, double *w, size_t nk, int k,
                             float *stage)
{
    bool dbl = precision == CMRSCL_DOUBLE;
    size_t bytes = nk * (dbl ? sizeof(double) : sizeof(float));
    for (size_t i = 0; !dbl && i < nk; ++i)
        stage[i] = (float)q[i];
    cmrscl_status st = cl_check(clEnqueueWriteBuffer(queue, x, CL_TRUE, 0, bytes,
                                                     dbl ? (const void *)q : stage, 0, NULL, NULL),
                                "writing the block");
    if (st == CMRSCL_OK) /* beta 0: y is only written */
        st = cmrscl_spmm(m, CMRSCL_ROW_MAJOR, k, 1.0, x, 0, 0.0, y, 0, queue, 0, NULL, NULL);
    if (st == CMRSCL_OK)
        st = cl_check(clEnqueueReadBuffer(queue, y, CL_TRUE, 0, bytes, dbl ? (void *)w : stage, 0,
                                          NULL, NULL),
                      "reading the block");
    for (size_t i = 0; st == CMRSCL_OK && !dbl && i < nk; ++i)
        w[i] = stage[i];
    return st;
}

/* The columns of q (n x k, row-major) made orthonormal, modified Gram-Schmidt twice: a
 * second pass restores the orthogonality one pass loses when the columns are close. */
static void orthonormalise(double *q, int n, int k)
{
    for (int pass = 0; pass < 2; ++pass)
        for (int j = 0; j < k; ++j) {
            for (int l = 0; l < j; ++l) {
                double d = 0.0;
                for (int i = 0; i < n; ++i)
                    d += q[(size_t)i * k + j] * q[(size_t)i * k + l];
                for (int i = 0; i < n; ++i)
                    q[(size_t)i * k + j] -= d * q[(size_t)i * k + l];
            }
            double norm = 0.0;
            for (int i = 0; i < n; ++i)
                norm += q[(size_t)i * k + j] * q[(size_t)i * k + j];
            norm = norm > 0.0 ? 1.0 / sqrt(norm) : 0.0; /* a lost column stays zero */
            for (int i = 0; i < n; ++i)
                q[(size_t)i * k + j] *= norm;
        }
}

/* Columns (step k) or rows (step 1) a and b of a k x k matrix turned by the rotation (c, s). */
static void rotate(double *a, double *b, int k, int step, double c, double s)
{
    for (int r = 0; r < k * step; r += step) {
        double x = a[r], y = b[r];
        a[r] = c * x - s * y, b[r] = s * x + c * y;
    }
}

/* The eigenpairs of the symmetric k x k matrix h by cyclic Jacobi rotations (Golub and Van
 * Loan 8.5): h ends diagonal, v (k x k) holds the eigenvectors as columns. Exact to a few
 * roundoffs, and k <= 64 makes its k^3 per sweep nothing beside the product. */
static void jacobi(double *h, double *v, int k)
{
    for (int i = 0; i < k * k; ++i)
        v[i] = i % (k + 1) == 0;
    for (int sweep = 0; sweep < 100; ++sweep) {
        double off = 0.0, all = 0.0;
        for (int i = 0; i < k * k; ++i)
            all += h[i] * h[i], off += i % (k + 1) ? h[i] * h[i] : 0.0;
        if (off <= 1e-32 * all)
            return;
        for (int p = 0; p < k; ++p)
            for (int q = p + 1; q < k; ++q) {
                if (h[p * k + q] == 0.0)
                    continue;
                double tau = (h[q * k + q] - h[p * k + p]) / (2.0 * h[p * k + q]);
                double t = (tau >= 0.0 ? 1.0 : -1.0) / (fabs(tau) + sqrt(1.0 + tau * tau));
                double c = 1.0 / sqrt(1.0 + t * t), s = t * c;
                rotate(h + p, h + q, k, k, c, s); /* h J, then J^T h, and v J */
                rotate(h + p * k, h + q * k, k, 1, c, s);
                rotate(v + p, v + q, k, k, c, s);
            }
    }
}

/* One Rayleigh-Ritz step: from Q and W = A Q, the Ritz values theta (largest magnitude
 * first), the Ritz vectors X = Q S and A X = W S; returns the largest residual / |theta|. */
static double rayleigh_ritz(const double *q, const double *w, int n, int k, double *h, double *v,
                            double *theta, double *x, double *ax)
{
    for (int a = 0; a < k; ++a)
        for (int b = 0; b < k; ++b) {
            double d = 0.0;
            for (int i = 0; i < n; ++i)
                d += q[(size_t)i * k + a] * w[(size_t)i * k + b];
            h[a * k + b] = d;
        }
    for (int a = 0; a < k; ++a) /* Q^T A Q is symmetric but for rounding: make it exactly so */
        for (int b = 0; b < a; ++b)
            h[a * k + b] = h[b * k + a] = 0.5 * (h[a * k + b] + h[b * k + a]);
    jacobi(h, v, k);
    int order[64];
    for (int j = 0; j < k; ++j) { /* insertion sort by |theta|, descending */
        int l = j;
        for (; l > 0 && fabs(h[order[l - 1] * (k + 1)]) < fabs(h[j * (k + 1)]); --l)
            order[l] = order[l - 1];
        order[l] = j;
    }
    double worst = 0.0;
    for (int j = 0; j < k; ++j) {
        theta[j] = h[order[j] * (k + 1)];
        double r2 = 0.0;
        for (int i = 0; i < n; ++i) {
            double xs = 0.0, as = 0.0;
            for (int l = 0; l < k; ++l)
                xs += q[(size_t)i * k + l] * v[l * k + order[j]],
                    as += w[(size_t)i * k + l] * v[l * k + order[j]];
            x[(size_t)i * k + j] = xs, ax[(size_t)i * k + j] = as;
            r2 += (as - theta[j] * xs) * (as - theta[j] * xs);
        }
        double r = sqrt(r2) / fabs(theta[j]); /* ||x|| = 1: Q and S are orthonormal */
        worst = r > worst || isnan(r) ? r : worst;
    }
    return worst;
}

/* The largest ||A x - theta x|| / (|theta| ||x||) over the Ritz pairs, on the CPU in double. */
static cmrscl_status cpu_residual(const cmrscl_csr *a, const double *x, const double *theta, int k,
                                  double *out)
{
    int n = a->rows;
    double *v = malloc(((size_t)n + 1) * sizeof *v), *av = malloc(((size_t)n + 1) * sizeof *av);
    cmrscl_status st =
        v && av ? CMRSCL_OK
                : cmrscl_set_error(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the check");
    *out = 0.0;
    for (int j = 0; st == CMRSCL_OK && j < k; ++j) {
        for (int i = 0; i < n; ++i)
            v[i] = x[(size_t)i * k + j];
        if ((st = cmrscl_csr_spmv(a, 1.0, v, 0.0, av)) != CMRSCL_OK)
            break;
        double r2 = 0.0, v2 = 0.0;
        for (int i = 0; i < n; ++i)
            r2 += (av[i] - theta[j] * v[i]) * (av[i] - theta[j] * v[i]), v2 += v[i] * v[i];
        double r = sqrt(r2 / v2) / fabs(theta[j]);
        *out = r > *out || isnan(r) ? r : *out;
    }
    free(v), free(av);
    return st;
}

static int descending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The k largest eigenvalues of stencil7:N, the 3-D Dirichlet Laplacian: sums of three of
 * mu_j = 2 - 2 cos(pi j / (N + 1)), each from the largest min(N, k) (a sum with a smaller
 * one has k sums at least as large above it). Returns false for any other matrix. */
static bool stencil_eigenvalues(const char *spec, int k, double *exact)
{
    int n, used = 0;
    if (sscanf(spec, "stencil7:%d%n", &n, &used) != 1 || spec[used] != '\0' || n < 1)
        return false;
    int top = n < k ? n : k, count = top * top * top;
    double mu[64], *sums = malloc((size_t)count * sizeof *sums);
    if (!sums || count < k) {
        free(sums);
        return false;
    }
    for (int j = 0; j < top; ++j)
        mu[j] = 2.0 - 2.0 * cos(acos(-1.0) * (n - j) / (n + 1.0));
    for (int i = 0; i < count; ++i)
        sums[i] = mu[i % top] + mu[i / top % top] + mu[i / (top * top)];
    qsort(sums, (size_t)count, sizeof *sums, descending);
    memcpy(exact, sums, (size_t)k * sizeof *exact);
    free(sums);
    return true;
}

int main(int argc, char **argv)
{
    settings s;
    if (!parse(argc, argv, &s)) {
        fputs("usage: block_power [FILE.mtx | SPEC] [-p float|double] [-d SELECTOR] [-k VECTORS] "
              "[-t TOL] [-m MAX_ITER]\n"
              "  defaults: stencil7:8, double, VECTORS 4, TOL 1e-8 (float: 1e-4), MAX_ITER 5000\n",
              stderr);
        return 2;
    }
    cmrscl_csr a = {0};
    cmrscl_context ctx = NULL;
    cmrscl_matrix m = NULL;
    cl_mem xb = NULL, yb = NULL;
    cl_context cl = NULL;
    cl_command_queue queue = NULL;
    int n = 0, k = s.k;
    cmrscl_status st = load(s.matrix, &a);
    if (st == CMRSCL_OK && (a.rows != a.cols || a.rows < k))
        st = cmrscl_set_error(CMRSCL_ERROR_INVALID_ARGUMENT,
                              "subspace iteration needs a square matrix of at least k rows");
    if (st == CMRSCL_OK && !symmetric(&a)) /* else Rayleigh-Ritz finds no eigenvectors */
        st = cmrscl_set_error(CMRSCL_ERROR_INVALID_ARGUMENT, "the matrix is not symmetric");
    if (st == CMRSCL_OK)
        st = cmrscl_context_create(s.device, &ctx);
    cmrscl_options blocks = {.vectors = k}; /* planned for its block (cmrscl_options.vectors) */
    if (st == CMRSCL_OK)
        st = cmrscl_matrix_create_from_csr(ctx, s.precision, &a, &blocks, &m);
    if (st == CMRSCL_OK)
        st = cmrscl_context_cl(ctx, &cl, &queue);
    n = st == CMRSCL_OK ? a.rows : 0;
    size_t nk = (size_t)n * k, elem = s.precision == CMRSCL_DOUBLE ? sizeof(double) : sizeof(float);
    cl_int err = CL_SUCCESS;
    if (st == CMRSCL_OK && (xb = clCreateBuffer(cl, CL_MEM_READ_ONLY, nk * elem, NULL, &err)))
        yb = clCreateBuffer(cl, CL_MEM_WRITE_ONLY, nk * elem, NULL, &err);
    if (st == CMRSCL_OK)
        st = cl_check(err, "clCreateBuffer (the blocks)");
    double *q = malloc((nk + 1) * sizeof *q), *w = malloc((nk + 1) * sizeof *w);
    double *x = malloc((nk + 1) * sizeof *x), *ax = malloc((nk + 1) * sizeof *ax);
    float *stage = malloc(((s.precision == CMRSCL_FLOAT ? nk : 0) + 1) * sizeof *stage);
    double h[64 * 64], v[64 * 64], theta[64], exact[64];
    if (st == CMRSCL_OK && !(q && w && x && ax && stage))
        st = cmrscl_set_error(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the blocks");

    /* A fixed start, the same on every host: a 64-bit LCG's top bits in [-1, 1). */
    unsigned long long seed = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; st == CMRSCL_OK && i < nk; ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        ax[i] = (double)(seed >> 11) * 0x1p-52 - 1.0; /* orthonormalised below, as A X is */
    }
    int it = 0;
    double estimate = INFINITY, residual = INFINITY, error = 0.0;
    progress bar = progress_begin();
    const double t0 = progress_now();
    while (st == CMRSCL_OK && it < s.max_iter && !(estimate < s.tol)) {
        memcpy(q, ax, nk * sizeof *q);
        orthonormalise(q, n, k);
        if ((st = product(m, s.precision, queue, xb, yb, q, w, nk, k, stage)) != CMRSCL_OK)
            break;
        estimate = rayleigh_ritz(q, w, n, k, h, v, theta, x, ax);
        ++it;
        progress_show(&bar, "block_power", it, s.max_iter, "residual / |theta|", estimate);
    }
    progress_end(&bar);
    const double seconds = progress_now() - t0; /* the products and the host's Rayleigh-Ritz */
    if (st == CMRSCL_OK)
        st = cpu_residual(&a, x, theta, k, &residual);
    bool known = st == CMRSCL_OK && stencil_eigenvalues(s.matrix, k, exact);
    for (int j = 0; known && j < k; ++j)
        error = fmax(error, fabs(theta[j] - exact[j]) / exact[j]);
    /* The iteration's own residuals come from the device's rounded A Q: trusted only as far
     * as the CPU's agree. */
    bool converged = estimate < s.tol && residual <= 10.0 * s.tol && error <= 10.0 * s.tol;
    if (st == CMRSCL_OK) {
        cmrscl_params plan = CMRSCL_PARAMS_INIT;
        cmrscl_matrix_params(m, &plan);
        printf("block_power: %s: %d unknowns, %lld nonzeros, %s, %d vectors; plan: HEIGHT %d, "
               "%s\n",
               s.matrix, n, (long long)a.nnz, s.precision == CMRSCL_DOUBLE ? "double" : "float", k,
               plan.height, plan.plan_reason);
        printf("block_power: Ritz values:");
        for (int j = 0; j < k; ++j)
            printf(" %.10g", theta[j]);
        printf("\n");
        if (known) {
            printf("block_power: exact eigenvalues:");
            for (int j = 0; j < k; ++j)
                printf(" %.10g", exact[j]);
            printf("; largest relative error %.3e\n", error);
        }
        printf("block_power: %d iterations in %.3f ms (%.1f us an iteration); largest "
               "||A x - theta x|| / |theta| = %.3e on the CPU (iteration's %.3e, tolerance "
               "%.1e): %s\n",
               it, seconds * 1e3, it ? seconds * 1e6 / it : 0.0, residual, estimate, s.tol,
               converged ? "converged" : "NOT converged");
    } else {
        fprintf(stderr, "block_power: %s: %s\n", cmrscl_status_name(st), cmrscl_last_error());
    }
    free(q), free(w), free(x), free(ax), free(stage);
    if (xb)
        clReleaseMemObject(xb);
    if (yb)
        clReleaseMemObject(yb);
    cmrscl_matrix_free(m);
    cmrscl_context_free(ctx);
    cmrscl_csr_free(&a);
    return st == CMRSCL_OK && converged ? 0 : 1;
}
