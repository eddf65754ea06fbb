/* csr.c - compressed sparse rows on the host: validation and the CPU reference SpMV in
 * double that every check compares against (COO -> CSR is in coo_to_csr.c). */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

cmrscl_status csr_validate_structure(int32_t rows, int32_t cols, const int32_t *row_ptr,
                                     const int32_t *col_ind, bool *rows_sorted)
{
    bool sorted = true;
    if (rows < 0 || cols < 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "negative size %d x %d", rows, cols);
    if (!row_ptr)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "row_ptr is NULL");
    if (row_ptr[0] != 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "row_ptr[0] = %d, expected 0", row_ptr[0]);
    for (int32_t i = 0; i < rows; ++i)
        if (row_ptr[i + 1] < row_ptr[i])
            return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                               "row_ptr decreases: row_ptr[%d] = %d < row_ptr[%d] = %d", i + 1,
                               row_ptr[i + 1], i, row_ptr[i]);
    int32_t nnz = row_ptr[rows];
    if (nnz > 0 && !col_ind)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "col_ind is NULL but nnz = %d", nnz);
    for (int32_t i = 0; i < rows; ++i)
        for (int32_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
            if (col_ind[k] < 0 || col_ind[k] >= cols)
                return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                                   "col_ind[%d] = %d (row %d) is outside 0..%d", k, col_ind[k], i,
                                   cols - 1);
            sorted &= k == row_ptr[i] || col_ind[k] >= col_ind[k - 1];
        }
    if (rows_sorted)
        *rows_sorted = sorted;
    return CMRSCL_OK;
}

int64_t csr_row_at(const int32_t *row_ptr, int32_t rows, int64_t e)
{
    int64_t a = 0, z = rows;
    while (a < z) {
        int64_t m = (a + z) / 2;
        if (row_ptr[m] < e)
            a = m + 1;
        else
            z = m;
    }
    return a;
}

cmrscl_status cmrscl_csr_validate(const cmrscl_csr *csr) { return csr_validate(csr, NULL); }

cmrscl_status csr_validate(const cmrscl_csr *csr, bool *rows_sorted)
{
    if (!csr)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "csr is NULL");
    cmrscl_status st =
        csr_validate_structure(csr->rows, csr->cols, csr->row_ptr, csr->col_ind, rows_sorted);
    if (st != CMRSCL_OK)
        return st;
    if (csr->row_ptr[csr->rows] != csr->nnz)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "row_ptr[rows] = %d but nnz = %d",
                           csr->row_ptr[csr->rows], csr->nnz);
    if (csr->nnz > 0 && !csr->values)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "values is NULL but nnz = %d", csr->nnz);
    return CMRSCL_OK;
}

void cmrscl_csr_free(cmrscl_csr *csr)
{
    if (!csr)
        return;
    free(csr->row_ptr);
    free(csr->col_ind);
    free(csr->values);
    memset(csr, 0, sizeof *csr);
}

/* One row of alpha*A*x + beta*y0 in double, the ground truth, and the magnitude term of its
 * rounding bound (used by the check). y0 is read only when beta != 0. */
static double row_reference(const cmrscl_csr *a, int32_t i, double alpha, const double *x,
                            double beta, const double *y0, double *magnitude)
{
    double sum = 0.0, mag = 0.0;
    for (int32_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
        sum += a->values[k] * x[a->col_ind[k]];
        mag += fabs(a->values[k] * x[a->col_ind[k]]);
    }
    *magnitude = fabs(alpha) * mag + (beta != 0.0 ? fabs(beta * y0[i]) : 0.0);
    return beta != 0.0 ? alpha * sum + beta * y0[i] : alpha * sum;
}

cmrscl_status cmrscl_csr_spmv(const cmrscl_csr *csr, double alpha, const double *x, double beta,
                              double *y)
{
    cmrscl_status st = cmrscl_csr_validate(csr);
    if (st != CMRSCL_OK)
        return st;
    if ((csr->cols > 0 && !x) || (csr->rows > 0 && !y))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "x or y is NULL");
    for (int32_t i = 0; i < csr->rows; ++i) {
        double magnitude;
        y[i] = row_reference(csr, i, alpha, x, beta, y, &magnitude);
    }
    return CMRSCL_OK;
}

cmrscl_status cmrscl_csr_spmv_check(const cmrscl_csr *a, double alpha, const double *x, double beta,
                                    const double *y0, const double *y, double unit_roundoff,
                                    double *relative_error, double *bound_ratio)
{
    if (relative_error)
        *relative_error = INFINITY;
    if (bound_ratio) /* a failed check must never read as a pass */
        *bound_ratio = INFINITY;
    cmrscl_status st = cmrscl_csr_validate(a);
    if (st != CMRSCL_OK)
        return st;
    if ((a->cols > 0 && !x) || (a->rows > 0 && (!y || (beta != 0.0 && !y0))))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "x, y or y0 is NULL");
    double diff2 = 0.0, ref2 = 0.0, worst = 0.0;
    for (int32_t i = 0; i < a->rows; ++i) {
        double mag;
        double ref = row_reference(a, i, alpha, x, beta, y0, &mag);
        if (!isfinite(ref) != !isfinite(y[i]) || (!isfinite(ref) && !(ref == y[i]))) {
            if (!(isnan(ref) && isnan(y[i]))) /* NaN matches NaN; inf must match exactly */
                worst = INFINITY;
            continue;
        }
        if (!isfinite(ref))
            continue;
        double d = y[i] - ref;
        diff2 += d * d;
        ref2 += ref * ref;
        double r =
            fabs(d) / ((a->row_ptr[i + 1] - a->row_ptr[i] + 10) * unit_roundoff * mag + DBL_MIN);
        if (r > worst)
            worst = r;
    }
    if (relative_error)
        *relative_error = ref2 > 0.0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    if (bound_ratio)
        *bound_ratio = worst;
    return CMRSCL_OK;
}
