/* test_util.h - a minimal harness: CHECK macros that report and count failures (tests
 * go on after a failure so one run shows all of them), data paths, and helpers for
 * comparing device results with the CPU double reference. */
#ifndef CMRSCL_TEST_UTIL_H
#define CMRSCL_TEST_UTIL_H

#include "cmrscl.h"

#include <stdbool.h>
#include <stddef.h>

extern int test_failures;
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            test_fail(__FILE__, __LINE__, "CHECK(%s) failed", #cond);                              \
    } while (0)
#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond))                                                                               \
            test_fail(__FILE__, __LINE__, __VA_ARGS__);                                            \
    } while (0)
/* Expects `expr` to return `expected`; on a mismatch prints both names and the detail. */
#define CHECK_STATUS(expr, expected)                                                               \
    do {                                                                                           \
        cmrscl_status got_ = (expr);                                                               \
        if (got_ != (expected))                                                                    \
            test_fail(__FILE__, __LINE__, "%s returned %s, expected %s (%s)", #expr,               \
                      cmrscl_status_name(got_), cmrscl_status_name(expected),                      \
                      cmrscl_last_error());                                                        \
    } while (0)
#define CHECK_OK(expr) CHECK_STATUS(expr, CMRSCL_OK)

/* Returns the exit status: 0 when no CHECK failed. Prints a summary. */
int test_finish(const char *name);

/* Paths: $CMRSCL_TEST_DATA/rel and $CMRSCL_SHARED_MATRICES/name (static buffer). */
const char *test_data(const char *rel);
const char *test_shared_matrix(const char *name);
bool test_contains(const char *haystack, const char *needle);
/* The precision a test takes as its only argument, "float" or "double": false (the usage
 * printed) for anything else. */
bool test_precision_arg(int argc, char **argv, cmrscl_precision *out);

/* The OpenCL context and device behind a cmrscl context (borrowed). */
cl_device_id test_cl_device(cmrscl_context ctx, cl_context *context);
/* A new out-of-order queue on the context's device (NULL where the device refuses one: *err
 * says why); the caller releases it. */
cl_command_queue test_queue_out_of_order(cmrscl_context ctx, cl_int *err);

/* Two host CSR matrices the same, bit for bit: shape, row pointers, columns and values. */
bool test_same_csr(const cmrscl_csr *a, const cmrscl_csr *b);

/* a's row pointers as int32 (what cmrscl_matrix_create and the device path take); malloc'ed. */
int32_t *test_row_ptr32(const cmrscl_csr *a);

/* Two device matrices' CMRS arrays (cmrscl_matrix_read_cmrs), bit for bit; a failed CHECK
 * names the array that differs. */
void check_same_cmrs(cmrscl_matrix want, cmrscl_matrix got, const char *what);
/* A device matrix's arrays read back are exactly the host conversion of a
 * (cmrscl_cmrs_from_csr) with the matrix's height, layout and order. */
void check_device_arrays(cmrscl_matrix m, const cmrscl_csr *a, const char *what);
/* The arrays of a layout with holes (MODULO, slice) read back, holes dropped, give the CSR
 * matrix a exactly; a slice stores each strip's longest row times its height. */
void check_holed_arrays(cmrscl_matrix m, const cmrscl_csr *a, const char *what);

/* v[0..n-1] converted to precision p (malloc'ed, room for at least one element), and
 * element i of such an array as a double. */
void *test_values_in(const double *v, int64_t n, cmrscl_precision p);
double test_value_at(const void *a, cmrscl_precision p, int64_t i);
/* cmrscl_solve_host on arrays of doubles, converted to the precision p and back (x: x0 in, the
 * solution out). */
cmrscl_status test_solve_host(cmrscl_matrix m, const cmrscl_solve_options *o, cmrscl_precision p,
                              const double *b, double *x, int n, cmrscl_solve_result *res);

/* A block product Y = alpha*A*X + beta*Y0 checked vector by vector against the CPU double
 * reference on a (cmrscl_csr_spmv_check): X, Y0 and Y in p's type, element (i, j) at
 * i*ld + j row-major, j*ld + i column-major. Returns the worst vector's error over its
 * rounding bound (NaN when some vector's is). */
double test_block_ratio(const cmrscl_csr *a, cmrscl_precision p, double alpha, double beta,
                        cmrscl_dense_order o, int k, const void *x, size_t ldx, const void *y0,
                        const void *y, size_t ldy);

/* The (alpha, beta) pairs every product test runs, each against the CPU double reference with
 * y0 random (beta = 0: y0 NaN, never read): the plain product, a general pair, a solver's
 * y += alpha A x, y kept as it is (alpha = 0), and y0 - A x. */
#define TEST_ALPHA_BETA_COUNT 5
extern const double test_alpha_beta[TEST_ALPHA_BETA_COUNT][2];

/* The worst error over its rounding bound (cmrscl_csr_spmv_check; NaN or infinity when some
 * row is wrong) of op(A) x by m's host product for each (alpha, beta) pair above, x and y0
 * random in p (seeded: the same for every call), against the CPU double reference on `a`
 * (its values already rounded to p). The transposed product checks against a's transpose. */
double test_op_ratio(cmrscl_matrix m, cmrscl_operation op, const cmrscl_csr *a, cmrscl_precision p);

/* Two matrices' plans alike in everything but the timings, where the program came from, and
 * the reason's clause on why the values are plain; with chosen_alike false (one made with
 * the other's plan given by hand, test_options_of_plan) not where the plan came from or why
 * either. The options that give a plan's family, shape and split by hand. */
void test_check_same_plan(cmrscl_matrix host, cmrscl_matrix dev, bool chosen_alike,
                          const char *what);
cmrscl_options test_options_of_plan(const cmrscl_params *p);

/* Deterministic pseudo-random numbers (xorshift), seeded per test. */
void test_seed(unsigned long long seed);
double test_uniform(double lo, double hi);

#endif
