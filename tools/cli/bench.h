/* bench.h - one verified, timed SpMV configuration: what `spmv` reports, `tune` sweeps and
 * `bench` runs for every matrix x plan x precision. */
#ifndef CMRSCL_BENCH_H
#define CMRSCL_BENCH_H

#include "cli.h"

typedef struct bench_result {
    cmrscl_params params;
    cmrscl_timing timing;         /* per-product device time and back-to-back loop time */
    bool verified;                /* false with --no-verify */
    double relative_error;        /* ||y - ref|| / ||ref|| */
    double bound_ratio;           /* <= 1: within the rounding bound (cmrscl_csr_spmv_check) */
    int64_t nonfinite_y;          /* entries of the verified y that are NaN or Inf (the check
                                     passes them where the CPU's are the same) */
    double gflops;                /* 2 nnz / median device time */
    double beta_minus_gbs;        /* paper eq. (6.1): x not cached, per nonzero */
    double beta_plus_gbs;         /* x fully cached: matrix + x + y once */
    double first_product_seconds; /* the verified product, the first after create */
    double transpose_seconds;     /* --transpose: building A^T (read back, host transpose,
                                     create), cmrscl_matrix_prepare_transpose */
} bench_result;

/* The test vectors of a run: x and y0 drawn once, stored in double after rounding to the
 * precision, so the CPU reference sees exactly what the device sees. With --vectors, blocks
 * of k of them in the run's order, packed. */
typedef struct bench_vectors {
    double *x, *y0;
    int k; /* 1 for the single product */
    bool column_major;
} bench_vectors;
/* Where element i of vector j lies in a block of vectors of n elements. */
size_t bench_at(const bench_vectors *v, size_t n, size_t i, int j);
bool bench_vectors_make(const cmrscl_csr *a, const cli_options *opt, bench_vectors *v);
void bench_vectors_free(bench_vectors *v);

/* A device buffer holding `n` doubles converted to the precision (at least one element). */
cl_mem bench_upload(cl_context context, const double *src, size_t n, cmrscl_precision p,
                    cl_int *err);

/* Rounds the matrix values to the precision in place (a no-op for double). */
void bench_round_values(cmrscl_csr *a, cmrscl_precision precision);

/* The matrix whose product a run computes: A, or with --transpose its transpose, made on the
 * host into *t (for the reference, the vectors' sizes and the report; free it with
 * cmrscl_csr_free). NULL, having printed why, when it cannot be made. */
const cmrscl_csr *bench_product_matrix(const cmrscl_csr *a, const cli_options *opt, cmrscl_csr *t);

/* Builds the device matrix of A with `options`, verifies one product (unless --no-verify),
 * then times products both ways (cmrscl_spmv_time; the block product's with --vectors). With
 * --transpose the product is the library's transposed one: A with the automatic plan, `options` for
 * A^T's (cmrscl_matrix_prepare_transpose), checked against `product` (bench_product_matrix), whose
 * plan and sizes out->params then holds. Returns 0 or an exit status, having printed the
 * reason. */
int bench_run(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_csr *product,
              const bench_vectors *v, const cli_options *opt, const cmrscl_options *options,
              bench_result *out);

#endif
