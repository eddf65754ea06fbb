/* amg_coarse.c - the coarsest level of the AMG hierarchy, at most max_coarse rows, inverted
 * densely once at setup (PyAMG's default coarse solver is the same: a dense pseudo-inverse):
 * factored by Cholesky for the SPD operators smoothed aggregation makes of SPD matrices, LU
 * with partial pivoting for any other, then solved for each column of the identity. A cycle
 * ends with one dense product, which a device spreads over a work-item a row; two triangular
 * solves are a chain of n dependent steps, each a barrier, in one work-group. */
#include "precond/precond.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* In place: L in the lower triangle of f (n x n, row-major); false when a pivot is not
 * positive (not SPD). */
static bool cholesky(double *f, int32_t n)
{
    for (int32_t j = 0; j < n; ++j) {
        double d = f[(size_t)j * n + j];
        for (int32_t k = 0; k < j; ++k)
            d -= f[(size_t)j * n + k] * f[(size_t)j * n + k];
        if (!(d > 0))
            return false;
        d = sqrt(d);
        f[(size_t)j * n + j] = d;
        for (int32_t i = j + 1; i < n; ++i) {
            double s = f[(size_t)i * n + j];
            for (int32_t k = 0; k < j; ++k)
                s -= f[(size_t)i * n + k] * f[(size_t)j * n + k];
            f[(size_t)i * n + j] = s / d;
        }
    }
    return true;
}

/* In place: unit L below the diagonal, U on and above; pivot[k] the row swapped with k.
 * Returns the first zero pivot's column, or -1. */
static int32_t lu(double *f, int32_t n, int32_t *pivot)
{
    for (int32_t k = 0; k < n; ++k) {
        int32_t p = k;
        for (int32_t i = k + 1; i < n; ++i)
            if (fabs(f[(size_t)i * n + k]) > fabs(f[(size_t)p * n + k]))
                p = i;
        pivot[k] = p;
        if (f[(size_t)p * n + k] == 0)
            return k;
        if (p != k)
            for (int32_t j = 0; j < n; ++j) {
                double t = f[(size_t)k * n + j];
                f[(size_t)k * n + j] = f[(size_t)p * n + j];
                f[(size_t)p * n + j] = t;
            }
        for (int32_t i = k + 1; i < n; ++i) {
            double m = f[(size_t)i * n + k] /= f[(size_t)k * n + k];
            for (int32_t j = k + 1; j < n; ++j)
                f[(size_t)i * n + j] -= m * f[(size_t)k * n + j];
        }
    }
    return -1;
}

static void densify(const cmrscl_csr *a, double *f)
{
    memset(f, 0, (size_t)a->rows * (size_t)a->rows * sizeof(double));
    for (int32_t i = 0; i < a->rows; ++i)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            f[(size_t)i * a->rows + a->col_ind[k]] += a->values[k];
}

/* x = A^-1 b with the factor (x may be b). */
static void factor_solve(const double *f, const int32_t *pivot, int32_t n, const double *b,
                         double *x)
{
    if (x != b)
        memcpy(x, b, (size_t)n * sizeof(double));
    if (pivot)
        for (int32_t k = 0; k < n; ++k) {
            double t = x[k];
            x[k] = x[pivot[k]];
            x[pivot[k]] = t;
        }
    /* Forward: L y = b (unit diagonal for LU). */
    for (int32_t i = 0; i < n; ++i) {
        double s = x[i];
        for (int32_t k = 0; k < i; ++k)
            s -= f[(size_t)i * n + k] * x[k];
        x[i] = pivot ? s : s / f[(size_t)i * n + i];
    }
    /* Backward: U x = y, or L^T x = y for Cholesky. */
    for (int32_t i = n - 1; i >= 0; --i) {
        double s = x[i];
        for (int32_t k = i + 1; k < n; ++k)
            s -= (pivot ? f[(size_t)i * n + k] : f[(size_t)k * n + i]) * x[k];
        x[i] = s / f[(size_t)i * n + i];
    }
}

/* Column j of the inverse: A^-1 e_j, into the row-major inverse (threads a column each). */
typedef struct inverse_job {
    const double *factor;
    const int32_t *pivot;
    int32_t n;
    double *inverse;
    bool failed;
} inverse_job;

static void inverse_column(void *ctx, int64_t j)
{
    inverse_job *job = ctx;
    int32_t n = job->n;
    double *col = calloc((size_t)n, sizeof(double));
    if (!col) {
        job->failed = true; /* read after every thread is done */
        return;
    }
    col[j] = 1.0;
    factor_solve(job->factor, job->pivot, n, col, col);
    for (int32_t i = 0; i < n; ++i)
        job->inverse[(size_t)i * n + j] = col[i];
    free(col);
}

/* Factors a densely into f: Cholesky, else LU with *pivot (malloc'ed). */
static cmrscl_status factor(const cmrscl_csr *a, double *f, int32_t **pivot)
{
    int32_t n = a->rows;
    densify(a, f);
    if (cholesky(f, n))
        return CMRSCL_OK;
    /* Not SPD: start again from A with LU. */
    *pivot = cmrscl_alloc((size_t)n, sizeof(int32_t));
    if (!*pivot)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG coarsest level: %d pivots",
                           (int)n);
    densify(a, f);
    int32_t zero = lu(f, n, *pivot);
    return zero < 0 ? CMRSCL_OK
                    : cmrscl_fail(CMRSCL_ERROR_BREAKDOWN,
                                  "AMG coarsest level (%d rows) is singular: not SPD, and LU "
                                  "meets a zero pivot in column %d",
                                  (int)n, (int)zero);
}

cmrscl_status cmrs_amg_coarse_inverse(const cmrscl_csr *a, double **inverse, bool *lu_used)
{
    int32_t n = a->rows, *pivot = NULL;
    double *f = cmrscl_alloc((size_t)n * (size_t)n, sizeof(double));
    *inverse = cmrscl_alloc((size_t)n * (size_t)n, sizeof(double));
    cmrscl_status st =
        f && *inverse ? factor(a, f, &pivot)
                      : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                    "AMG coarsest level: a dense %d x %d inverse", (int)n, (int)n);
    *lu_used = pivot != NULL;
    inverse_job job = {f, pivot, n, *inverse, false};
    if (st == CMRSCL_OK)
        cmrs_parallel_pieces(cmrs_parallel_threads(), n, inverse_column, &job);
    if (st == CMRSCL_OK && job.failed)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG coarsest level: a column of %d",
                         (int)n);
    free(f);
    free(pivot);
    if (st != CMRSCL_OK) {
        free(*inverse);
        *inverse = NULL;
    }
    return st;
}

void cmrs_amg_coarse_solve(const double *inverse, int32_t n, const double *b, double *x)
{
    for (int32_t i = 0; i < n; ++i) {
        double s = 0;
        for (int32_t k = 0; k < n; ++k)
            s += inverse[(size_t)i * n + k] * b[k];
        x[i] = s;
    }
}
