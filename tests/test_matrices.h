/* test_matrices.h - the awkward matrices every kernel variant must get right: empty
 * shapes, nnz = 0, empty rows and strips, rows not a multiple of HEIGHT, one dense row,
 * rectangular shapes, matrices much larger than a warp. */
#ifndef CMRSCL_TEST_MATRICES_H
#define CMRSCL_TEST_MATRICES_H

#include "cmrscl.h"

/* Number of matrices in the catalogue. */
int test_matrix_count(void);
/* Builds matrix i (deterministic); returns its name. */
const char *test_matrix_build(int i, cmrscl_csr *out);
/* A copy of `a` with values rounded to float (the reference for float runs). */
cmrscl_csr test_csr_rounded(const cmrscl_csr *a, cmrscl_precision precision);
/* Every row's entries in the opposite order, in place (CSR allows any order). */
void test_csr_reverse_rows(cmrscl_csr *a);

#endif
