/* dist_solve.h - what the distributed solver's files share (mpi/solve.c: the kernels, the
 * work vectors, the partial sums and their collective, the checks, the public calls;
 * solve_cg.c, solve_bicgstab.c and solve_gmres.c: each method's start and iterations). */
#ifndef CMRSCL_DIST_SOLVE_H
#define CMRSCL_DIST_SOLVE_H

#include "dist_internal.h"

/* The kernels' work-group (a power of two) and grid: at most DIST_CG_GROUPS_PER_UNIT
 * work-groups a compute unit - the single-device solver's grid (half of a GPU's resident
 * work-items), enough to stream the vectors, few enough that the partial sums read back
 * each iteration stay a few KB (docs/dev/PERFORMANCE.md, DIST_CG_WG). */
#define DIST_CG_WG 256
#define DIST_CG_GROUPS_PER_UNIT 4

/* A restart from the true residual goes on while each pass cuts it to this share or less:
 * the single-device solver's rule (host/solve/solve_run.c, REPLACE_PROGRESS). */
#define REPLACE_PROGRESS 0.9
/* and ROUNDING_ROOM, host/solve/solve_run.c's */
#define ROUNDING_ROOM 0.5

/* The five sums a collective carries, each rank's added in rank order: the first kernel's
 * (the start's or an update's) three, then the dot-product kernel's two. */
enum { SUMS = 5 };
enum { SUM_FIRST0 = 0, SUM_FIRST1 = 1, SUM_DOTS0 = 2, SUM_DOTS1 = 3, SUM_FIRST2 = 4 };

/* The work vectors: CG's r, p, q; BiCGStab's r, p, v (in q's place), r0*, s, t. */
enum { V_R, V_P, V_Q, V_RHAT, V_S, V_T, VECTORS };

struct dist_solver {
    cl_program program;
    cl_kernel start, update, dots, bicg_p, bicg_s, bicg_step, gm_dots, gm_orth, gm_scale, rounding,
        pcg_step;
    cl_uint n;
    size_t groups, wg;
    cl_mem vec[VECTORS]; /* made as the methods need them */
    cl_mem dinv;         /* Jacobi's inverse diagonal, made by the first Jacobi solve */
    /* AMG of this rank's diagonal block (block Jacobi across the ranks, AMG inside), made by
     * the first AMG solve that brings none of its own (solve.c, make_amg) */
    cmrscl_precond amg;
    cl_mem sums;   /* 2 x groups real4s: the first kernel's, then the dots' */
    cl_mem pinned; /* their host copy */
    void *sums_host;
    double *all; /* every rank's sums */
};

/* A scalar in the precision, as a kernel argument. */
typedef union real_arg {
    double d;
    float f;
} real_arg;

DIST_HIDDEN cmrscl_status cmrs_dsolve_fail_cl(cl_int err, const char *what);
DIST_HIDDEN real_arg cmrs_dsolve_real(cmrscl_dist_matrix m, double v);
/* Arguments from index `at` on: each a size and a pointer to its value. */
DIST_HIDDEN cl_int cmrs_dsolve_args(cl_kernel k, cl_uint at, int n, const size_t *size,
                                    const void *const *value);
/* A kernel of solve.cl on the solver's grid. */
DIST_HIDDEN cmrscl_status cmrs_dsolve_launch(cmrscl_dist_matrix m, cl_kernel k);
/* The dot-product kernel (dcg_dots) on a and b (q.q-like sums: dinv NULL), into the second
 * region of the sums. */
DIST_HIDDEN cmrscl_status cmrs_dsolve_dots(cmrscl_dist_matrix m, cl_mem a, cl_mem b);
/* Reads bytes of buf into host, waiting as the layer waits (cmrs_dist_wait); an OpenCL error
 * code (the queue finished first, so host is free again). */
DIST_HIDDEN cl_int cmrs_dsolve_read(cmrscl_dist_matrix m, cl_mem buf, size_t bytes, void *host);
/* The whole problem's sums after a collective (out[SUMS]); a failed rank sends NaN, and
 * every rank returns the first failure it saw. */
DIST_HIDDEN cmrscl_status cmrs_dsolve_sums(cmrscl_dist_matrix m, cmrscl_status st, double *out);
/* The test of r before iteration it (of at most max): its norm into the history and
 * out->residual, the monitor called; true, with out->reason set, when the solve stops here
 * (NaN or Inf, converged, max reached). */
DIST_HIDDEN bool cmrs_dsolve_test(const cmrscl_solve_options *o, cmrscl_solve_result *out, int it,
                                  int max, double rr);
/* to = from, the rank's n values, after st (a failure of the copy named by `what`). */
DIST_HIDDEN cmrscl_status cmrs_dsolve_copy(cmrscl_dist_matrix m, cmrscl_status st, cl_mem from,
                                           cl_mem to, const char *what);
/* After the start's collective (r.r at SUM_FIRST0, b.b at SUM_FIRST2): ||b||, the threshold,
 * and BAD_INPUT where either is NaN or Inf. */
DIST_HIDDEN void cmrs_dsolve_begin(const cmrscl_solve_options *o, cmrscl_status st, const double *s,
                                   cmrscl_solve_result *out);
/* r = b - A x (the first kernel, then the product; vec[V_R]) */
DIST_HIDDEN cmrscl_status cmrs_dsolve_residual(cmrscl_dist_matrix m, cl_mem b, cl_mem x);
/* The same, then r.r over the whole problem (the dots' collective) into *rr; st: this rank's
 * status so far (the product and the collective run whatever it is). With `rounding`, also
 * ||r||'s rounding as the single-device solver measures it (host/solve/solve_run.c): b - A x
 * again from 3 x rounded anew (vec[V_P], vec[V_Q]), ||(3 b - A (3 x)) - 3 r|| / 3. */
DIST_HIDDEN cmrscl_status cmrs_dsolve_residual_rr(cmrscl_dist_matrix m, cl_mem b, cl_mem x,
                                                  cmrscl_status st, double *rr, double *rounding);
/* The kernels one distributed product enqueues on this rank (for launches_per_iteration). */
DIST_HIDDEN int cmrs_dsolve_product_launches(cmrscl_dist_matrix m);

/* A method's solve after the common checks: history allocated for max + 1 residuals,
 * threshold rules in o. Fills *out (reason, iterations, residuals, times but the whole
 * call's) and, for a breakdown, NaN or bad input, the message in why. */
typedef cmrscl_status (*dist_method_run)(cmrscl_dist_matrix m, const cmrscl_solve_options *o,
                                         cl_mem b, cl_mem x, int max, cmrscl_solve_result *out,
                                         char *why, size_t why_size);
DIST_HIDDEN cmrscl_status cmrs_dsolve_cg(cmrscl_dist_matrix m, const cmrscl_solve_options *o,
                                         cl_mem b, cl_mem x, int max, cmrscl_solve_result *out,
                                         char *why, size_t why_size);
DIST_HIDDEN cmrscl_status cmrs_dsolve_bicgstab(cmrscl_dist_matrix m, const cmrscl_solve_options *o,
                                               cl_mem b, cl_mem x, int max,
                                               cmrscl_solve_result *out, char *why,
                                               size_t why_size);
DIST_HIDDEN cmrscl_status cmrs_dsolve_pcg(cmrscl_dist_matrix m, const cmrscl_solve_options *o,
                                          cl_mem b, cl_mem x, int max, cmrscl_solve_result *out,
                                          char *why, size_t why_size);
DIST_HIDDEN cmrscl_status cmrs_dsolve_gmres(cmrscl_dist_matrix m, const cmrscl_solve_options *o,
                                            cl_mem b, cl_mem x, int max, cmrscl_solve_result *out,
                                            char *why, size_t why_size);

#endif
