/* amg_coarse.c - the coarsest level of the AMG hierarchy (issue 57), at most max_coarse rows,
 * factored densely once at setup: Cholesky for the SPD operators smoothed aggregation makes
 * of SPD matrices, LU with partial pivoting for any other, so each cycle ends with two
 * triangular solves. */
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

cmrscl_status cmrs_amg_coarse_factor(const cmrscl_csr *a, double **factor, int32_t **pivot)
{
    int32_t n = a->rows;
    *factor = cmrscl_alloc((size_t)n * (size_t)n, sizeof(double));
    *pivot = NULL;
    if (!*factor)
        goto oom;
    densify(a, *factor);
    if (cholesky(*factor, n))
        return CMRSCL_OK;
    /* Not SPD: start again from A with LU. */
    *pivot = cmrscl_alloc((size_t)n, sizeof(int32_t));
    if (!*pivot)
        goto oom;
    densify(a, *factor);
    int32_t zero = lu(*factor, n, *pivot);
    if (zero < 0)
        return CMRSCL_OK;
    free(*factor);
    free(*pivot);
    *factor = NULL;
    *pivot = NULL;
    return cmrscl_fail(CMRSCL_ERROR_BREAKDOWN,
                       "AMG coarsest level (%d rows) is singular: not SPD, and LU meets a zero "
                       "pivot in column %d",
                       (int)n, (int)zero);
oom:
    free(*factor);
    *factor = NULL;
    return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                       "AMG coarsest level: a dense %d x %d factor", (int)n, (int)n);
}

void cmrs_amg_coarse_solve(const double *f, const int32_t *pivot, int32_t n, const double *b,
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
