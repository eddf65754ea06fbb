/* solve_reference.h - the solvers of host/solve/ on the CPU in double, step for step (the same
 * tests in the same places, the same iteration counts in exact arithmetic), and the textbook
 * forms they rearrange: what the device's iteration counts are checked against. */
#ifndef CMRSCL_SOLVE_REFERENCE_H
#define CMRSCL_SOLVE_REFERENCE_H

#include "cmrscl.h"

#include <stdbool.h>

typedef struct ref_outcome {
    int iterations;
    bool converged, broke_down;
    double residual; /* ||r|| of the recurrence at the end */
} ref_outcome;

/* Which form: the device's (CG: Rupp's pipelined scalars) or the textbook's (CG: beta =
 * r'.z' / r.z); BiCGStab's are the same (the textbook's). */
typedef enum ref_form { REF_DEVICE, REF_TEXTBOOK } ref_form;

/* Each solves a x = b from x (x0 on entry), stopping once ||r|| <= threshold or after max
 * iterations, as the device's solvers do. */
ref_outcome ref_cg(const cmrscl_csr *a, const double *b, double *x, double threshold, int max,
                   bool jacobi, ref_form form);
ref_outcome ref_bicgstab(const cmrscl_csr *a, const double *b, double *x, double threshold, int max,
                         ref_form form);
ref_outcome ref_gmres(const cmrscl_csr *a, const double *b, double *x, double threshold, int max,
                      int restart);

/* ||b - A x|| in double. */
double ref_residual(const cmrscl_csr *a, const double *b, const double *x);

#endif
