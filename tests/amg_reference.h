/* amg_reference.h - BiCGStab and GMRES preconditioned on the right by the host's AMG cycle, in
 * double: the ground truth of the device's (test_solve_amg.c). */
#ifndef CMRSCL_AMG_REFERENCE_H
#define CMRSCL_AMG_REFERENCE_H

#include "precond/precond.h"

/* x after `iterations` of BiCGStab from x = 0 (the first p = r), M = the cycle of h. */
void ref_amg_bicgstab(const cmrscl_csr *a, const cmrs_amg_hierarchy *h, const double *b, double *x,
                      int iterations);
/* x after k (at most 8) Arnoldi steps of GMRES from x = 0, M = the cycle of h. */
void ref_amg_gmres(const cmrscl_csr *a, const cmrs_amg_hierarchy *h, const double *b, double *x,
                   int k);

#endif
