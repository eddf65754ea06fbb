/* kernel_twins.h - the checks test_kernel.c runs on each plan: a product against the CPU
 * double reference and, bit for bit, against a twin matrix (64-bit indices, 32-bit columns);
 * the value codecs against plain twins; narrow columns against 32-bit ones. */
#ifndef CMRSCL_KERNEL_TWINS_H
#define CMRSCL_KERNEL_TWINS_H

#include "exec/exec.h"

/* What one test process runs: a precision, a test case of a family, the variant's
 * reduction, and the lanes per strip where the variant fixes them (sub-groups; else 0). */
typedef struct variant {
    cmrscl_precision precision;
    const char *name; /* the test case */
    cmrscl_reduce reduce;
    int width;
} variant;

/* Products checked against the reference: a case that checks none fails. */
extern long products_checked;

/* Runs one product on the device and checks it against the CPU double reference; the same
 * product of wide (the matrix with 64-bit indices; may be NULL) must match it bit for bit. */
void check_product(cmrscl_matrix m, cmrscl_matrix wide, const cmrscl_csr *ref_a,
                   cmrscl_precision prec, double alpha, double beta, const char *what);
/* check_product for each (alpha, beta) of test_alpha_beta. */
void check_products(cmrscl_matrix m, cmrscl_matrix wide, const cmrscl_csr *ref_a,
                    cmrscl_precision prec, const char *what);
/* Matrix a's values as DICT and (double) FLOAT codecs take them, each against plain twins,
 * read back (read_back) and updated. */
void check_codecs(cmrscl_context ctx, const variant *v, const cmrscl_options *opt,
                  const cmrscl_csr *a, bool read_back, const char *what);
/* A slice m made with automatic column bits: where narrow, against its twin of 32-bit
 * columns (bit for bit, the bytes saved); else the reason says why. Returns whether m is
 * narrow. */
bool check_narrow(cmrscl_context ctx, const variant *v, const cmrscl_options *opt,
                  const cmrscl_csr *a, const cmrscl_csr *ref_a, cmrscl_matrix m, const char *what);

#endif /* CMRSCL_KERNEL_TWINS_H */
