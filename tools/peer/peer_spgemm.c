/* peer_spgemm.c - --multiply: C = A A (A A^T where A is not square) by cusparseSpGEMM in double,
 * as CUDA's sample writes it (CUSPARSE_SPGEMM_DEFAULT): the work estimation and the compute,
 * each asked for its buffer first, C's arrays allocated from the size it reports, the copy; the
 * descriptors, buffers and C freed after each. Timed on the host clock after a synchronisation,
 * as `cmrscl-run multiply` times cmrscl_csr_multiply: with A and B already on the GPU, and with
 * their upload from the host counted too (what cmrscl_csr_multiply takes: host CSR); median of
 * -r after --warmup. C is checked against the host's (cmrscl_csr_multiply without a context):
 * its pattern exactly, its values to 1e-12 of each row's magnitude. */
#include "peer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* C = A B once on the GPU (A, B there); C left in c (the caller frees it) when keep. */
static int spgemm_once(cusparseHandle_t h, const cmrscl_csr *a, const device_csr *da,
                       const cmrscl_csr *b, const device_csr *db, device_csr *c, int64_t *c_nnz)
{
    const double alpha = 1.0, beta = 0.0;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    cusparseSpMatDescr_t ma, mb, mc;
    cusparseSpGEMMDescr_t g;
    memset(c, 0, sizeof *c);
    CUDA(cudaMalloc((void **)&c->row_ptr, sizeof(int32_t) * ((size_t)a->rows + 1)));
    CUSPARSE(cusparseCreateCsr(&ma, a->rows, a->cols, a->nnz, da->row_ptr, da->col_ind, da->values,
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                               CUDA_R_64F));
    CUSPARSE(cusparseCreateCsr(&mb, b->rows, b->cols, b->nnz, db->row_ptr, db->col_ind, db->values,
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                               CUDA_R_64F));
    CUSPARSE(cusparseCreateCsr(&mc, a->rows, b->cols, 0, c->row_ptr, NULL, NULL, CUSPARSE_INDEX_32I,
                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    CUSPARSE(cusparseSpGEMM_createDescr(&g));
    size_t size1 = 0, size2 = 0;
    void *buf1 = NULL, *buf2 = NULL;
    CUSPARSE(cusparseSpGEMM_workEstimation(h, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_64F,
                                           CUSPARSE_SPGEMM_DEFAULT, g, &size1, NULL));
    CUDA(cudaMalloc(&buf1, size1 ? size1 : 1));
    CUSPARSE(cusparseSpGEMM_workEstimation(h, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_64F,
                                           CUSPARSE_SPGEMM_DEFAULT, g, &size1, buf1));
    CUSPARSE(cusparseSpGEMM_compute(h, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_64F,
                                    CUSPARSE_SPGEMM_DEFAULT, g, &size2, NULL));
    CUDA(cudaMalloc(&buf2, size2 ? size2 : 1));
    CUSPARSE(cusparseSpGEMM_compute(h, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_64F,
                                    CUSPARSE_SPGEMM_DEFAULT, g, &size2, buf2));
    int64_t rows, cols;
    CUSPARSE(cusparseSpMatGetSize(mc, &rows, &cols, c_nnz));
    CUDA(cudaMalloc((void **)&c->col_ind, sizeof(int32_t) * ((size_t)*c_nnz + 1)));
    CUDA(cudaMalloc(&c->values, sizeof(double) * ((size_t)*c_nnz + 1)));
    CUSPARSE(cusparseCsrSetPointers(mc, c->row_ptr, c->col_ind, c->values));
    CUSPARSE(cusparseSpGEMM_copy(h, op, op, &alpha, ma, mb, &beta, mc, CUDA_R_64F,
                                 CUSPARSE_SPGEMM_DEFAULT, g));
    CUDA(cudaDeviceSynchronize());
    cusparseSpGEMM_destroyDescr(g);
    cusparseDestroySpMat(ma), cusparseDestroySpMat(mb), cusparseDestroySpMat(mc);
    cudaFree(buf1), cudaFree(buf2);
    return 0;
}

/* C read back against the host's: the same pattern, values to 1e-12 of each row's largest. */
static int check_c(const char *name, const device_csr *c, int64_t nnz, const cmrscl_csr *want)
{
    if (nnz != want->nnz)
        return peer_failed(name, "C has another number of entries than the host's");
    int32_t *ptr = malloc(sizeof(int32_t) * ((size_t)want->rows + 1));
    int32_t *col = malloc(sizeof(int32_t) * ((size_t)nnz + 1));
    double *val = malloc(sizeof(double) * ((size_t)nnz + 1));
    int rc = !ptr || !col || !val;
    rc = rc || cudaMemcpy(ptr, c->row_ptr, sizeof(int32_t) * ((size_t)want->rows + 1),
                          cudaMemcpyDeviceToHost) != cudaSuccess;
    rc = rc || cudaMemcpy(col, c->col_ind, sizeof(int32_t) * (size_t)nnz, cudaMemcpyDeviceToHost) !=
                   cudaSuccess;
    rc = rc || cudaMemcpy(val, c->values, sizeof(double) * (size_t)nnz, cudaMemcpyDeviceToHost) !=
                   cudaSuccess;
    for (int32_t i = 0; !rc && i < want->rows; ++i) {
        double most = 0;
        for (int64_t k = want->row_ptr[i]; k < want->row_ptr[i + 1]; ++k)
            most = fmax(most, fabs(want->values[k]));
        rc = ptr[i + 1] != want->row_ptr[i + 1];
        for (int64_t k = want->row_ptr[i]; !rc && k < want->row_ptr[i + 1]; ++k)
            rc = col[k] != want->col_ind[k] || fabs(val[k] - want->values[k]) > 1e-12 * most;
    }
    free(ptr), free(col), free(val);
    return rc ? peer_failed(name, "C differs from the host's") : 0;
}

int peer_run_spgemm(cusparseHandle_t h, const char *name, const cmrscl_csr *a, const options *o,
                    FILE *csv)
{
    cmrscl_csr t = {0}, want = {0};
    const cmrscl_csr *b = a;
    if (a->rows != a->cols) {
        if (cmrscl_csr_transpose(a, &t) != CMRSCL_OK)
            return peer_failed(name, cmrscl_last_error());
        b = &t;
    }
    if (cmrscl_csr_multiply(NULL, a, b, CMRSCL_DOUBLE, NULL, &want, NULL) != CMRSCL_OK)
        return peer_failed(name, cmrscl_last_error());
    int reps = o->repetitions, rc = 0;
    double *alone = malloc(sizeof(double) * (size_t)reps),
           *with = malloc(sizeof(double) * (size_t)reps);
    int64_t nnz = 0;
    for (int r = -o->warmup - 1; !rc && r < reps; ++r) {
        device_csr da = {0}, db = {0}, c = {0};
        CUDA(cudaDeviceSynchronize());
        double t0 = peer_seconds();
        rc = peer_upload_csr(name, a, 8, &da) || (b != a && peer_upload_csr(name, b, 8, &db));
        CUDA(cudaDeviceSynchronize());
        double t1 = peer_seconds();
        rc = rc || spgemm_once(h, a, &da, b, b != a ? &db : &da, &c, &nnz);
        double t2 = peer_seconds();
        if (!rc && r >= 0)
            alone[r] = 1e3 * (t2 - t1), with[r] = 1e3 * (t2 - t0);
        if (!rc && r == -o->warmup - 1)
            rc = check_c(name, &c, nnz, &want);
        peer_device_free(&da), peer_device_free(&c);
        if (b != a)
            peer_device_free(&db);
    }
    if (!rc) {
        double alone_ms = peer_median(alone, reps), with_ms = peer_median(with, reps);
        fprintf(stderr,
                "%s  double C = %s  cusparseSpGEMM: %lld entries, %.3f ms (%.3f with A and B "
                "up), C checked against the host's\n",
                name, b == a ? "A A" : "A A^T", (long long)nnz, alone_ms, with_ms);
        fprintf(csv, "cusparse,%s,double,%s,%d,%lld,%lld,%.6f,%.6f\n", name, b == a ? "AA" : "AAt",
                a->rows, (long long)a->nnz, (long long)nnz, alone_ms, with_ms);
    }
    free(alone), free(with);
    cmrscl_csr_free(&t), cmrscl_csr_free(&want);
    return rc;
}
