/* cmd_multiply.c - `cmrscl-run multiply`: the sparse product C = A A (A A^T where A is not
 * square) by cmrscl_csr_multiply - the machinery of AMG's Galerkin products - timed and
 * verified: the product alone (A and B up, C made on the device), the whole call with C made a
 * matrix of the device, and the host's threads making the same C; C read back against the
 * host's, bit for bit (--no-verify skips it). The cuSPARSE peer times cusparseSpGEMM on the same
 * matrices (`cmrscl-peer --multiply`). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static bool same_csr(const cmrscl_csr *x, const cmrscl_csr *y)
{
    return x->rows == y->rows && x->cols == y->cols && x->nnz == y->nnz &&
           !memcmp(x->row_ptr, y->row_ptr, sizeof(int64_t) * ((size_t)x->rows + 1)) &&
           !memcmp(x->col_ind, y->col_ind, sizeof(int32_t) * (size_t)x->nnz) &&
           !memcmp(x->values, y->values, sizeof(double) * (size_t)x->nnz);
}

/* The scalar products of A B: for each entry (i, k) of A, the entries of B's row k. */
static double products(const cmrscl_csr *a, const cmrscl_csr *b)
{
    double n = 0;
    for (int64_t e = 0; e < a->nnz; ++e) {
        int32_t k = a->col_ind[e];
        n += (double)(b->row_ptr[k + 1] - b->row_ptr[k]);
    }
    return n;
}

typedef struct multiply_times {
    double product_ms, upload_ms, call_ms, host_ms; /* medians */
    int on_device;
    char reason[160];
    int64_t c_nnz;
} multiply_times;

/* reps calls making C a matrix of the device (after one untimed: the kernels built), and reps
 * on the host's threads; C read back once for the check. */
static cmrscl_status time_calls(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_csr *b,
                                const cli_options *opt, multiply_times *t, cmrscl_csr *c_dev,
                                cmrscl_csr *c_host)
{
    int reps = opt->repetitions;
    double *product = malloc(sizeof(double) * (size_t)reps),
           *call = malloc(sizeof(double) * (size_t)reps),
           *host = malloc(sizeof(double) * (size_t)reps),
           *upload = malloc(sizeof(double) * (size_t)reps);
    cmrscl_status st =
        product && call && host && upload ? CMRSCL_OK : CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    cmrscl_multiply_info info = {0};
    for (int r = -1; st == CMRSCL_OK && r < reps; ++r) {
        cmrscl_matrix m = NULL;
        st = cmrscl_csr_multiply(ctx, a, b, opt->precision, &m, NULL, &info);
        cmrscl_matrix_free(m);
        if (st == CMRSCL_OK && r >= 0)
            product[r] = 1e3 * info.product_seconds, call[r] = 1e3 * info.seconds,
            upload[r] = 1e3 * info.upload_seconds;
    }
    t->on_device = info.on_device;
    snprintf(t->reason, sizeof t->reason, "%s", info.reason);
    for (int r = 0; st == CMRSCL_OK && r < reps; ++r) {
        cmrscl_csr_free(c_host);
        st = cmrscl_csr_multiply(NULL, a, b, opt->precision, NULL, c_host, &info);
        host[r] = 1e3 * info.seconds;
    }
    if (st == CMRSCL_OK && opt->verify)
        st = cmrscl_csr_multiply(ctx, a, b, opt->precision, NULL, c_dev, NULL);
    if (st == CMRSCL_OK) {
        t->product_ms = cli_median(product, reps), t->call_ms = cli_median(call, reps);
        t->host_ms = cli_median(host, reps), t->c_nnz = c_host->nnz;
        t->upload_ms = cli_median(upload, reps);
    }
    free(product), free(call), free(host), free(upload);
    return st;
}

static void report(const cli_options *opt, const loaded_matrix *lm, const cmrscl_device_info *dev,
                   const cmrscl_csr *b, double flops, const multiply_times *t, int verified)
{
    const cmrscl_csr *a = &lm->csr;
    const char *what = b == a ? "A A" : "A A^T";
    if (opt->json) {
        json_open(NULL, '{');
        json_string("matrix", lm->name);
        json_string("product", what);
        json_string("device", dev->device_name);
        json_int("rows", a->rows), json_int("nnz", a->nnz), json_int("c_nnz", t->c_nnz);
        json_number("products", flops);
        json_bool("on_device", t->on_device);
        json_number("product_ms", t->product_ms), json_number("upload_ms", t->upload_ms);
        json_number("call_ms", t->call_ms);
        json_number("host_ms", t->host_ms);
        json_number("verified", verified);
        json_close('}');
        json_end();
        return;
    }
    printf("matrix     %s: %d x %d, %lld entries; C = %s: %lld entries, %.0f products\n", lm->name,
           a->rows, a->cols, (long long)a->nnz, what, (long long)t->c_nnz, flops);
    printf("device     %s: %s\n", dev->device_name,
           t->on_device ? "C made there" : "C made on the host's threads");
    if (!t->on_device)
        printf("           (%s)\n", t->reason);
    printf("time       product %.3f ms (A and B up %.3f ms, then %.2f G products/s), with C made a "
           "matrix %.3f ms; the host's threads %.3f ms (medians of %d)\n",
           t->product_ms, t->upload_ms, flops / ((t->product_ms - t->upload_ms) * 1e6), t->call_ms,
           t->host_ms, opt->repetitions);
    printf("verified   %s\n",
           verified < 0   ? "skipped (--no-verify)"
           : !verified    ? "FAILED: C read back differs from the host's C"
           : t->on_device ? "C read back = the host's C, bit for bit"
                          : "C = the host's C, bit for bit (both the host's: no device product to "
                            "check)");
}

int cmd_multiply(const cli_options *opt)
{
    cmrscl_context ctx = NULL;
    cmrscl_device_info dev;
    loaded_matrix lm;
    int rc = open_with_matrix(opt, &ctx, &dev, &lm);
    if (rc)
        return rc;
    cmrscl_csr at = {0}, c_dev = {0}, c_host = {0};
    const cmrscl_csr *b = &lm.csr;
    cmrscl_status st = CMRSCL_OK;
    if (lm.csr.rows != lm.csr.cols && (st = cmrscl_csr_transpose(&lm.csr, &at)) == CMRSCL_OK)
        b = &at;
    multiply_times t = {0};
    if (st == CMRSCL_OK)
        st = time_calls(ctx, &lm.csr, b, opt, &t, &c_dev, &c_host);
    if (st != CMRSCL_OK)
        rc = cli_fail("C = A B", st);
    int verified = !rc && opt->verify ? same_csr(&c_dev, &c_host) : -1;
    if (!rc)
        report(opt, &lm, &dev, b, products(&lm.csr, b), &t, verified);
    if (!rc && !verified)
        rc = EXIT_RUN_FAILED;
    cmrscl_csr_free(&at), cmrscl_csr_free(&c_dev), cmrscl_csr_free(&c_host);
    cmrscl_csr_free(&lm.csr);
    cmrscl_context_free(ctx);
    return rc;
}
