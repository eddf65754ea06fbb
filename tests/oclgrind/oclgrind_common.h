/* oclgrind_common.h - what test_oclgrind's checks share (oclgrind_common.c): the Oclgrind
 * device, the small awkward matrices, exact-size buffers; the block product's checks
 * (oclgrind_spmm.c). */
#ifndef OCLGRIND_COMMON_H
#define OCLGRIND_COMMON_H

#include "exec/exec.h"
#include "test_matrices.h"
#include "test_util.h"

#define SKIP 77

typedef struct env {
    cmrscl_context ctx;
    cl_context cl;
    cl_command_queue queue;
    cmrscl_device_info dev;
} env;

/* cmrscl_options.index_bits of every matrix: 0 (the plan's: 32 here), or 64 (index64). */
extern int index_bits;

/* The awkward matrices, kept small because Oclgrind simulates every work-item: six from the
 * shared catalogue (test_matrices.c) and four shapes built from random rows. Matrix i
 * (0 <= i < MATRIX_COUNT) into *out; returns its name. */
#define MATRIX_COUNT 10
const char *build_matrix(int i, cmrscl_csr *out);
/* Stores v in element i of a float or double array; returns the value as stored. */
double put(void *a, cmrscl_precision p, size_t i, double v);
/* A device buffer holding exactly `bytes` copied from `host`; NULL when bytes is 0. */
cl_mem exact_buffer(const env *e, cl_mem_flags flags, size_t bytes, void *host);
/* Opens the Oclgrind device; fails unless the program really runs under Oclgrind. */
bool open_env(env *e);

/* The block product's checks (test_oclgrind spmm float|double); test_finish's status. */
int run_spmm(const env *e, cmrscl_precision prec);
/* The solvers' products and kernels (test_oclgrind solve float|double, oclgrind_solve.c). */
int run_solve(const env *e, cmrscl_precision prec);
int run_chain(const env *e, cmrscl_precision prec);
/* The AMG V-cycle's kernels in one cycle (test_oclgrind amg float|double, oclgrind_amg.c). */
int run_amg(const env *e, cmrscl_precision prec);
/* the products' kernels run_galerkin checks: a work-item a row, a work-group a row, or both */
typedef enum { GALERKIN_ITEMS, GALERKIN_GROUPS, GALERKIN_BOTH } galerkin_kernels;
int run_galerkin(const env *e, bool prolongator_only, galerkin_kernels kernels);

#endif
