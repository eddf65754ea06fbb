/* amg_spgemm.c - sparse matrix products for the AMG setup (issue 57): A T for the smoothed
 * prolongator and R A P for the coarse operator. Gustavson's row-by-row product in two
 * passes: the first counts each row's distinct columns with a marker array, so the second
 * writes into arrays of the exact size; a dense accumulator sums each row's products, and
 * the row's columns are sorted, so the result is canonical CSR and the same on every run. */
#include "precond/precond.h"

#include <stdlib.h>

static int compare_int32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Entries of each row of a * b into row_ptr (rows + 1). marker[cols] starts at -1. */
static void count_rows(const cmrscl_csr *a, const cmrscl_csr *b, int32_t *marker, int64_t *row_ptr)
{
    row_ptr[0] = 0;
    for (int32_t i = 0; i < a->rows; ++i) {
        int64_t n = 0;
        for (int64_t ka = a->row_ptr[i]; ka < a->row_ptr[i + 1]; ++ka) {
            int32_t r = a->col_ind[ka];
            for (int64_t kb = b->row_ptr[r]; kb < b->row_ptr[r + 1]; ++kb)
                if (marker[b->col_ind[kb]] != i) {
                    marker[b->col_ind[kb]] = i;
                    ++n;
                }
        }
        row_ptr[i + 1] = row_ptr[i] + n;
    }
}

/* Columns and values of each row; marker starts at -1 again, sum[cols] at 0. */
static void fill_rows(const cmrscl_csr *a, const cmrscl_csr *b, int32_t *marker, double *sum,
                      cmrscl_csr *c)
{
    for (int32_t i = 0; i < a->rows; ++i) {
        int64_t begin = c->row_ptr[i], n = begin;
        for (int64_t ka = a->row_ptr[i]; ka < a->row_ptr[i + 1]; ++ka) {
            int32_t r = a->col_ind[ka];
            double v = a->values[ka];
            for (int64_t kb = b->row_ptr[r]; kb < b->row_ptr[r + 1]; ++kb) {
                int32_t j = b->col_ind[kb];
                if (marker[j] != i) {
                    marker[j] = i;
                    c->col_ind[n++] = j;
                }
                sum[j] += v * b->values[kb];
            }
        }
        qsort(c->col_ind + begin, (size_t)(n - begin), sizeof(int32_t), compare_int32);
        for (int64_t k = begin; k < n; ++k) {
            c->values[k] = sum[c->col_ind[k]];
            sum[c->col_ind[k]] = 0;
        }
    }
}

cmrscl_status cmrs_amg_spgemm(const cmrscl_csr *a, const cmrscl_csr *b, cmrscl_csr *c)
{
    *c = (cmrscl_csr){0};
    if (a->cols != b->rows)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "sparse product: %d x %d times %d x %d (inner sizes differ)",
                           (int)a->rows, (int)a->cols, (int)b->rows, (int)b->cols);
    int32_t *marker = cmrscl_alloc((size_t)b->cols, sizeof(int32_t));
    double *sum = cmrscl_alloc((size_t)b->cols, sizeof(double));
    c->row_ptr = cmrscl_alloc((size_t)a->rows + 1, sizeof(int64_t));
    if (!marker || !sum || !c->row_ptr)
        goto oom;
    for (int32_t j = 0; j < b->cols; ++j) {
        marker[j] = -1;
        sum[j] = 0;
    }
    count_rows(a, b, marker, c->row_ptr);
    c->rows = a->rows;
    c->cols = b->cols;
    c->nnz = c->row_ptr[a->rows];
    c->col_ind = cmrscl_alloc((size_t)c->nnz, sizeof(int32_t));
    c->values = cmrscl_alloc((size_t)c->nnz, sizeof(double));
    if (!c->col_ind || !c->values)
        goto oom;
    for (int32_t j = 0; j < b->cols; ++j)
        marker[j] = -1;
    fill_rows(a, b, marker, sum, c);
    free(marker);
    free(sum);
    return CMRSCL_OK;
oom:
    free(marker);
    free(sum);
    cmrscl_csr_free(c);
    return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "sparse product of %d x %d and %d x %d",
                       (int)a->rows, (int)a->cols, (int)b->rows, (int)b->cols);
}

cmrscl_status cmrs_amg_galerkin(const cmrscl_csr *r, const cmrscl_csr *a, const cmrscl_csr *p,
                                cmrscl_csr *c)
{
    cmrscl_csr ap = {0};
    cmrscl_status st = cmrs_amg_spgemm(a, p, &ap);
    if (st == CMRSCL_OK)
        st = cmrs_amg_spgemm(r, &ap, c);
    cmrscl_csr_free(&ap);
    return st;
}
