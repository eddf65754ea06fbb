/* solve_cg.c - distributed conjugate gradients, with or without Jacobi, with one collective an
 * iteration: the single-device solver's recurrences (host/solve/solve_cg.c, Rupp et al.'s
 * pipelined form), so that an iteration needs r.r, r.z (left by the update of the vectors),
 * p.q and q.Dq (left after the product q = A p), all four known at once:
 *
 *   alpha = r.z / p.q,  beta = alpha^2 q.Dq / r.z - 1  (= r'.z' / r.z in exact arithmetic)
 *   x += alpha p, r -= alpha q, z = D r, p = z + beta p     (dcg_update, leaving r.r, r.z)
 *   q = A p                                                  (the distributed product)
 *   p.q, q.Dq                                                (dcg_dots)
 *
 * then the collective (solve.c, cmrs_dsolve_sums). The host does the scalar work between the
 * two halves of an iteration, as it must wait for the collective anyway. */
#include "dist_solve.h"

#include <math.h>
#include <stdio.h>

#define MEM sizeof(cl_mem)

/* The kernels' arguments for a solve of x (dinv NULL without Jacobi). */
static cmrscl_status bind(cmrscl_dist_matrix m, cl_mem b, cl_mem x, cl_mem dinv)
{
    struct dist_solver *sv = m->solver;
    cl_uint first = 0, second = (cl_uint)sv->groups; /* where each kernel's sums go */
    const size_t ss[] = {sizeof(cl_uint), MEM, MEM, MEM, MEM, MEM, sizeof(cl_uint)};
    const void *sa[] = {&sv->n, &b, &sv->vec[V_R], &sv->vec[V_P], &dinv, &sv->sums, &first};
    cl_int err = cmrs_dsolve_args(sv->start, 0, 7, ss, sa);
    if (err == CL_SUCCESS) { /* alpha and beta (6, 7) per iteration */
        const size_t us[] = {sizeof(cl_uint), MEM, MEM, MEM, MEM, MEM};
        const void *uv[] = {&sv->n, &x, &sv->vec[V_R], &sv->vec[V_P], &sv->vec[V_Q], &dinv};
        err = cmrs_dsolve_args(sv->update, 0, 6, us, uv);
        const size_t ts[] = {MEM, sizeof(cl_uint)};
        const void *tv[] = {&sv->sums, &first};
        if (err == CL_SUCCESS)
            err = cmrs_dsolve_args(sv->update, 8, 2, ts, tv);
    }
    if (err == CL_SUCCESS) {
        const size_t ds[] = {sizeof(cl_uint), MEM, MEM, MEM, MEM, sizeof(cl_uint)};
        const void *dv[] = {&sv->n, &sv->vec[V_P], &sv->vec[V_Q], &dinv, &sv->sums, &second};
        err = cmrs_dsolve_args(sv->dots, 0, 6, ds, dv);
    }
    return err == CL_SUCCESS ? CMRSCL_OK : cmrs_dsolve_fail_cl(err, "clSetKernelArg (solve.cl)");
}

cmrscl_status cmrs_dsolve_cg(cmrscl_dist_matrix m, const cmrscl_solve_options *o, cl_mem b,
                             cl_mem x, int max, cmrscl_solve_result *out, char *why,
                             size_t why_size)
{
    struct dist_solver *sv = m->solver;
    bool jacobi = o->preconditioner == CMRSCL_PRECONDITIONER_JACOBI;
    cmrscl_status st = cmrs_dist_agree(m->comm, bind(m, b, x, jacobi ? sv->dinv : NULL));
    if (st != CMRSCL_OK)
        return st;
    /* r = b - A x0; z = D r, p = z; q = A p */
    st = cmrs_dsolve_residual(m, b, x);
    if (st == CMRSCL_OK)
        st = cmrs_dsolve_launch(m, sv->start);
    st = cmrs_dist_product(m, st, 1.0, sv->vec[V_P], 0.0, sv->vec[V_Q], true, NULL);
    if (st == CMRSCL_OK)
        st = cmrs_dsolve_launch(m, sv->dots);
    double s[SUMS];
    cl_int err = CL_SUCCESS;
    st = cmrs_dsolve_sums(m, st, s);
    cmrs_dsolve_begin(o, st, s, out);
    /* the iterations: the test of r, then the step */
    double t_iter = cmrs_dist_seconds();
    int it = 0;
    while (st == CMRSCL_OK && out->reason != CMRSCL_SOLVE_BAD_INPUT) {
        double rr = s[0], rz = s[1], pq = s[2], qdq = s[3];
        if (cmrs_dsolve_test(o, out, it, max, rr))
            break;
        if (!(isfinite(pq) && isfinite(qdq))) {
            out->reason = CMRSCL_SOLVE_NONFINITE, out->breakdown = isfinite(pq) ? qdq : pq;
            break;
        }
        if (!(pq > 0)) {
            out->reason = CMRSCL_SOLVE_BREAKDOWN, out->breakdown = pq;
            break;
        }
        double alpha = rz / pq, beta = alpha * alpha * qdq / rz - 1;
        real_arg a = cmrs_dsolve_real(m, alpha), bt = cmrs_dsolve_real(m, beta);
        size_t rs = cmrs_dist_value_size(m->plan.precision);
        err = clSetKernelArg(sv->update, 6, rs, &a);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(sv->update, 7, rs, &bt);
        st = err == CL_SUCCESS ? cmrs_dsolve_launch(m, sv->update)
                               : cmrs_dsolve_fail_cl(err, "clSetKernelArg (alpha)");
        st = cmrs_dist_product(m, st, 1.0, sv->vec[V_P], 0.0, sv->vec[V_Q], true, NULL);
        if (st == CMRSCL_OK)
            st = cmrs_dsolve_launch(m, sv->dots);
        st = cmrs_dsolve_sums(m, st, s);
        ++it;
    }
    out->iterate_seconds = cmrs_dist_seconds() - t_iter;
    out->iterations = it;
    out->launches_per_iteration = 2 + cmrs_dsolve_product_launches(m);
    if (out->reason == CMRSCL_SOLVE_BAD_INPUT)
        snprintf(why, why_size, "cg: NaN or Inf in b or x0");
    else if (out->reason == CMRSCL_SOLVE_BREAKDOWN)
        snprintf(why, why_size,
                 "cg: p.Ap = %g <= 0 at iteration %d: the matrix is not positive definite%s",
                 out->breakdown, it + 1,
                 jacobi ? " (or its diagonal is not: Jacobi needs a positive one)" : "");
    else if (out->reason == CMRSCL_SOLVE_NONFINITE)
        snprintf(why, why_size, "cg: a scalar became %g at iteration %d", out->breakdown, it + 1);
    return st;
}
