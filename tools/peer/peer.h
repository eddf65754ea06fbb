/* peer.h - what the files of cmrscl-peer share: the options, a result and how it is timed and
 * written, the CUDA checks, the x of `cmrscl-run bench`, the matrix on the GPU. cmrscl_peer.c
 * runs SpMV (and main), peer_spmm.c the block product (--vectors), peer_common.c the rest. */
#ifndef CMRSCL_PEER_H
#define CMRSCL_PEER_H

#include <cmrscl.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_INPUTS 256
enum { PEER_MAX_VECTOR_COUNTS = 16, PEER_MAX_VECTORS = 4096 }; /* cmrscl-run's --vectors limits */

typedef struct options {
    const char *inputs[MAX_INPUTS];
    int is_gen[MAX_INPUTS], n;
    const char *suites[8], *csv;
    int nsuites;
    unsigned precisions;   /* bit 0 float, bit 1 double */
    bool precisions_given; /* -p on the command line */
    int repetitions, warmup, device;
    bool transpose;
    int vectors[PEER_MAX_VECTOR_COUNTS], nvectors; /* --vectors: the block product's k values */
    bool column_major;                             /* --column-major: X and Y column-major */
    const char *solve;                             /* --solve cg|pcg|bicgstab */
    int iterations;                                /* --iterations: the timed solver run */
    double tol;                                    /* --tol: the time to solution */
    bool multiply;                                 /* --multiply: C = A A by cusparseSpGEMM */
} options;

typedef struct result {
    double median_ms, min_ms, loop_ms, relative_error, bound_ratio;
} result;

/* The host clock in seconds (CLOCK_MONOTONIC). */
double peer_seconds(void);
/* The middle of n > 0 values (sorts them). */
double peer_median(double *v, int n);
/* Prints "cmrscl-peer: what: detail"; returns 1. */
int peer_failed(const char *what, const char *detail);
#define CUDA(call)                                                                                 \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return peer_failed(#call, cudaGetErrorString(e_));                                     \
    } while (0)
#define CUSPARSE(call)                                                                             \
    do {                                                                                           \
        cusparseStatus_t s_ = (call);                                                              \
        if (s_ != CUSPARSE_STATUS_SUCCESS)                                                         \
            return peer_failed(#call, cusparseGetErrorString(s_));                                 \
    } while (0)

/* n values of the LCG stream `cmrscl-run bench` draws its x from, rounded to the precision. */
void peer_make_x(double *x, int64_t n, int is_float);
/* Copies n doubles to a new device array in the precision (vs = 4 or 8 bytes); 0 or 1. */
int peer_upload_values(void **dst, const double *src, size_t n, size_t vs);

/* A CSR matrix (32-bit indices) and the product's arrays on the GPU. */
typedef struct device_csr {
    int32_t *row_ptr, *col_ind;
    void *values, *x, *y, *buffer;
    size_t buffer_size;
} device_csr;
/* Puts a's row_ptr, col_ind and values on the GPU (d zeroed first); 0 or 1. */
int peer_upload_csr(const char *name, const cmrscl_csr *a, size_t vs, device_csr *d);
void peer_device_free(device_csr *d);
/* Grows d's work buffer to `need` bytes; 0 or 1. */
int peer_reserve_buffer(device_csr *d, size_t need);

/* One product: a cuSPARSE call on the arguments it is given. */
typedef cusparseStatus_t (*peer_product)(const void *args);
/* The two timings of every product: o->warmup products, then o->repetitions each between
 * two CUDA events (median and minimum), then as many back to back on the host clock. */
int peer_time(peer_product product, const void *args, const options *o, result *r);

/* The log line and (rc == 0) the CSV line of one algorithm's result; 1 when it failed. */
int peer_report(FILE *csv, const char *name, const cmrscl_csr *a, int is_float, const char *alg,
                int rc, const result *r);

/* --vectors LIST: the k values into o; 0, or 2 after a message. */
int peer_parse_vectors(const char *list, options *o);
/* The block product Y = A X on a's CSR for each k of o->vectors, each CSR algorithm of
 * cusparseSpMM that cuSPARSE accepts; rows "NAME[k=K]". a's values are in the precision. */
int peer_run_spmm(cusparseHandle_t h, const char *name, const cmrscl_csr *a, int is_float,
                  const options *o, FILE *csv);

/* Sliced ELL, as a user builds it from CSR: slices of SELL_SLICE rows, each as wide as its
 * longest row, stored column-major (a warp's loads are contiguous), padding with column -1.
 * Not built when the padding would hold more than SELL_MAX_PADDING times the entries (a few
 * long rows: no user would pick SELL there) or overflow 32-bit offsets. */
enum { SELL_SLICE = 32, SELL_MAX_PADDING = 8 };
typedef struct host_sell {
    int32_t *offsets, *cols;
    double *values;
    int64_t size; /* stored entries, padding included */
} host_sell;
/* 0 and *s built; 1 and a reason when SELL is not worth building; -1 out of memory. */
int sell_build(const cmrscl_csr *a, host_sell *s, char *why, size_t why_size);
void sell_free(host_sell *s);

/* --solve cg|pcg|bicgstab: the solvers a user writes with cuSPARSE and cuBLAS (peer_solve.c) on
 * a's CSR and SELL; rows "NAME" with the method, format and mode. */
int peer_run_solve(cusparseHandle_t h, const char *name, const cmrscl_csr *a, int is_float,
                   const options *o, FILE *csv);

/* --multiply: C = A A (A A^T where A is not square) by cusparseSpGEMM in double, timed with A
 * and B on the GPU and with their upload (peer_spgemm.c); C checked against the host's. */
int peer_run_spgemm(cusparseHandle_t h, const char *name, const cmrscl_csr *a, const options *o,
                    FILE *csv);

#endif
