/* cmrscl_products.h - the products of a device matrix beyond a single y = alpha*A*x + beta*y:
 * a product recorded once and enqueued many times, the transposed product y = alpha*A^T*x +
 * beta*y, and the block product of many vectors at once (SpMM). Included by cmrscl.h, after
 * the types these calls take; include cmrscl.h, not this file. */
#ifndef CMRSCL_PRODUCTS_H
#define CMRSCL_PRODUCTS_H

#include "cmrscl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Recorded products: a loop's product without its set-up ---------------------------- */

/* A product y = alpha*A*x + beta*y recorded once - matrix, buffers, alpha and beta - to be
 * enqueued many times, as a solver's loop does. cmrscl_spmv_record checks what cmrscl_spmv
 * checks, once, and each cmrscl_recording_enqueue enqueues the product's kernels with the
 * recorded arguments. With CMRSCL_COMMAND_BUFFER=on, where the device offers
 * cl_khr_command_buffer 1.0 (Intel's OpenCL CPU runtime; not the provisional 0.9 versions,
 * PoCL's; NVIDIA's driver 580 has none), the launches are recorded in a command buffer and
 * a replay is one clEnqueueCommandBufferKHR - not by default: on Intel's CPU runtime it was
 * no faster (docs/dev/PERFORMANCE.md, command buffers).
 * Either way y gets the bits cmrscl_spmv gives with those arguments. Replays run on the
 * context's queue, after the wait list, with an event for the caller (may be NULL); like
 * any product of the matrix, one at a time. Products of the matrix with other arguments in
 * between change nothing recorded; a values update that stores the values differently
 * (cmrscl_values) makes the next replay record again. Free recordings before their matrix;
 * the buffers must live as long as the recording. */
typedef struct cmrscl_recording_s *cmrscl_recording;
CMRSCL_API cmrscl_status cmrscl_spmv_record(cmrscl_matrix m, double alpha, cl_mem x, double beta,
                                            cl_mem y, cmrscl_recording *out);
CMRSCL_API cmrscl_status cmrscl_recording_enqueue(cmrscl_recording r, cl_uint num_wait,
                                                  const cl_event *wait_list, cl_event *event);
/* 1 when replays are a command buffer, else 0; *reason (may be NULL) says why, in words. */
CMRSCL_API int cmrscl_recording_is_command_buffer(cmrscl_recording r, const char **reason);
CMRSCL_API void cmrscl_recording_free(cmrscl_recording r);

/* ---- The transposed product ----------------------------------------------------------- */

/* Which product: y = alpha*A*x + beta*y, or y = alpha*A^T*x + beta*y (x of rows elements,
 * y of cols). */
typedef enum cmrscl_operation { CMRSCL_NON_TRANSPOSE = 0, CMRSCL_TRANSPOSE = 1 } cmrscl_operation;

/* A^T is kept as a CMRS matrix of its own, planned for its rows like any matrix: a
 * transposed product is an ordinary product on it - the same kernels, the same
 * bits run after run - and costs as much device memory again as A^T takes
 * (cmrscl_params.transpose_device_bytes), until cmrscl_matrix_release_transpose or
 * cmrscl_matrix_free. It is built from A's arrays read back and transposed on the host
 * (whatever way A was created): by cmrscl_matrix_prepare_transpose, with opt for its plan
 * (NULL: automatic; the options are kept for later rebuilds; options that fail leave the
 * transpose as it was) and its parameters in *out (may be NULL); else by the first
 * transposed product, which then blocks while it is built. A values update of A frees it:
 * the next transposed product builds it again from the new values. */
CMRSCL_API cmrscl_status cmrscl_matrix_prepare_transpose(cmrscl_matrix m, const cmrscl_options *opt,
                                                         cmrscl_params *out);
CMRSCL_API cmrscl_status cmrscl_matrix_release_transpose(cmrscl_matrix m);
/* cmrscl_spmv, cmrscl_spmv_host and cmrscl_spmv_time with an operation; with
 * CMRSCL_NON_TRANSPOSE they are those calls. With CMRSCL_TRANSPOSE, x has rows elements and
 * y cols, and the transposed calls, prepare, release and the updates of one matrix run one
 * at a time (cmrscl_spmv_op only while it enqueues; the host and timing forms until they
 * return). */
CMRSCL_API cmrscl_status cmrscl_spmv_op(cmrscl_matrix m, cmrscl_operation op, double alpha,
                                        cl_mem x, double beta, cl_mem y, cl_command_queue queue,
                                        cl_uint num_wait, const cl_event *wait_list,
                                        cl_event *event);
CMRSCL_API cmrscl_status cmrscl_spmv_host_op(cmrscl_matrix m, cmrscl_operation op, double alpha,
                                             const void *x, double beta, void *y);
CMRSCL_API cmrscl_status cmrscl_spmv_time_op(cmrscl_matrix m, cmrscl_operation op, double alpha,
                                             cl_mem x, double beta, cl_mem y, int warmup,
                                             int repetitions, cmrscl_timing *out);

/* ---- Many vectors at once: Y = alpha*A*X + beta*Y (SpMM) ------------------------------ */

/* How a block of k vectors lies in memory. Row-major: element (i, j) - row i of the block,
 * vector j - at i*ld + j, so each row's k values lie together (numpy's C order of an (n, k)
 * array): a matrix entry's k products read one contiguous piece of X, which is what the
 * kernel reads best. Column-major: at j*ld + i, each vector contiguous (Fortran order). */
typedef enum cmrscl_dense_order {
    CMRSCL_ROW_MAJOR = 0,
    CMRSCL_COLUMN_MAJOR = 1
} cmrscl_dense_order;

/* Y = alpha*A*X + beta*Y for k >= 1 vectors at once: X holds cols x k elements, Y rows x k,
 * both in `order` with leading dimensions ldx and ldy in elements (0: packed - k row-major,
 * cols or rows column-major; else at least that), on device buffers of the matrix's
 * precision large enough for the last element. The matrix is read once per launch of up to
 * cmrscl_params.block_vectors vectors (cmrs_spmm, cl/cmrs_spmm.cl), not once per vector; k = 1 with
 * a contiguous vector is cmrscl_spmv, the same bits. Each element of Y is summed in an order fixed
 * by the matrix and k: the same bits run after run (not always the bits of k single products). When
 * beta == 0, Y is not read. X and Y must be different buffers. Queue, wait list and event as
 * cmrscl_spmv; products of one matrix must not run at the same time. */
CMRSCL_API cmrscl_status cmrscl_spmm(cmrscl_matrix m, cmrscl_dense_order order, int k, double alpha,
                                     cl_mem x, size_t ldx, double beta, cl_mem y, size_t ldy,
                                     cl_command_queue queue, cl_uint num_wait,
                                     const cl_event *wait_list, cl_event *event);
/* The same on host arrays; blocks until Y is written. */
CMRSCL_API cmrscl_status cmrscl_spmm_host(cmrscl_matrix m, cmrscl_dense_order order, int k,
                                          double alpha, const void *x, size_t ldx, double beta,
                                          void *y, size_t ldy);
/* cmrscl_spmv_time for the block product: per-product device time and loop time of one
 * whole block of k vectors. */
CMRSCL_API cmrscl_status cmrscl_spmm_time(cmrscl_matrix m, cmrscl_dense_order order, int k,
                                          double alpha, cl_mem x, size_t ldx, double beta, cl_mem y,
                                          size_t ldy, int warmup, int repetitions,
                                          cmrscl_timing *out);

#ifdef __cplusplus
}
#endif
#endif /* CMRSCL_PRODUCTS_H */
