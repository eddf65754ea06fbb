/* csr.c - compressed sparse rows on the host: validation, COO -> canonical CSR (two
 * stable counting sorts, duplicates summed), and the CPU reference SpMV in double that
 * every check compares against. */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

cmrscl_status csr_validate_structure(int32_t rows, int32_t cols, const int32_t *row_ptr,
                                     const int32_t *col_ind)
{
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
        for (int32_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
            if (col_ind[k] < 0 || col_ind[k] >= cols)
                return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                                   "col_ind[%d] = %d (row %d) is outside 0..%d", k, col_ind[k], i,
                                   cols - 1);
    return CMRSCL_OK;
}

cmrscl_status cmrscl_csr_validate(const cmrscl_csr *csr)
{
    if (!csr)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "csr is NULL");
    cmrscl_status st = csr_validate_structure(csr->rows, csr->cols, csr->row_ptr, csr->col_ind);
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

void counting_sort(const int32_t *key, int32_t nkeys, const int32_t *in, int32_t *out, int32_t n,
                   int32_t *starts)
{
    memset(starts, 0, sizeof(int32_t) * ((size_t)nkeys + 1));
    for (int32_t k = 0; k < n; ++k)
        starts[key[in[k]] + 1]++;
    for (int32_t b = 0; b < nkeys; ++b)
        starts[b + 1] += starts[b];
    /* Placing advances starts[b] to the end of bucket b; shift back afterwards. */
    for (int32_t k = 0; k < n; ++k)
        out[starts[key[in[k]]]++] = in[k];
    memmove(starts + 1, starts, sizeof(int32_t) * (size_t)nkeys);
    starts[0] = 0;
}

cmrscl_status cmrscl_csr_from_coo(int32_t rows, int32_t cols, int64_t nnz, const int32_t *row_idx,
                                  const int32_t *col_idx, const double *values, cmrscl_csr *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    if (rows < 0 || cols < 0 || nnz < 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "negative size %d x %d, nnz %lld", rows,
                           cols, (long long)nnz);
    if (nnz > INT32_MAX)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE, "%lld entries exceed the limit of %d",
                           (long long)nnz, INT32_MAX);
    if (nnz > 0 && (!row_idx || !col_idx))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "row or column index array is NULL");
    for (int64_t k = 0; k < nnz; ++k)
        if (row_idx[k] < 0 || row_idx[k] >= rows || col_idx[k] < 0 || col_idx[k] >= cols)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                               "entry %lld at (%d, %d) is outside the %d x %d matrix", (long long)k,
                               row_idx[k], col_idx[k], rows, cols);

    int32_t n = (int32_t)nnz;
    int32_t *order = cmrscl_alloc((size_t)n, sizeof(int32_t));
    int32_t *tmp = cmrscl_alloc((size_t)n, sizeof(int32_t));
    int32_t *col_start = cmrscl_alloc((size_t)cols + 1, sizeof(int32_t));
    int32_t *row_ptr = cmrscl_alloc((size_t)rows + 1, sizeof(int32_t));
    if (!order || !tmp || !col_start || !row_ptr) {
        free(order), free(tmp), free(col_start), free(row_ptr);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to sort %d entries", n);
    }
    /* Sort by column, then stably by row: row-major with ascending columns. */
    for (int32_t k = 0; k < n; ++k)
        tmp[k] = k;
    counting_sort(col_idx, cols, tmp, order, n, col_start);
    counting_sort(row_idx, rows, order, tmp, n, row_ptr);
    free(order);
    free(col_start);

    /* Merge duplicates in place: entries of one (row, col) are now adjacent. */
    int32_t *col_ind = cmrscl_alloc((size_t)n, sizeof(int32_t));
    double *val = cmrscl_alloc((size_t)n, sizeof(double));
    if (!col_ind || !val) {
        free(tmp), free(row_ptr), free(col_ind), free(val);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d entries", n);
    }
    int32_t w = 0;
    for (int32_t i = 0; i < rows; ++i) {
        int32_t begin = row_ptr[i], end = row_ptr[i + 1];
        row_ptr[i] = w;
        for (int32_t k = begin; k < end; ++k) {
            int32_t e = tmp[k];
            double v = values ? values[e] : 1.0;
            if (w > row_ptr[i] && col_ind[w - 1] == col_idx[e]) {
                val[w - 1] += v;
            } else {
                col_ind[w] = col_idx[e];
                val[w++] = v;
            }
        }
    }
    row_ptr[rows] = w;
    free(tmp);
    out->rows = rows;
    out->cols = cols;
    out->nnz = w;
    out->row_ptr = row_ptr;
    out->col_ind = col_ind;
    out->values = val;
    return CMRSCL_OK;
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
