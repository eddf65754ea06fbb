/* solve_bicgstab.c - distributed BiCGStab (van der Vorst, r0* = r0), the single-device
 * solver's iteration (host/solve/solve_bicgstab.c, cl/solve.cl) with three collectives an
 * iteration, one after each of its reductions - no more can be merged without the
 * recurrence for rho' that the single-device solver measured to part the residual from
 * b - A x (cl/solve.cl):
 *
 *   the test of r.r; beta = (rho / rho') (alpha / omega), p = r + beta (p - omega v)  (dbicg_p)
 *   v = A p; r0*.v                          -> alpha = rho / r0*.v      (collective 1, dcg_dots)
 *   s = r - alpha v, s.s                                                 (dbicg_s)
 *   t = A s; t.s, t.t                       -> omega = t.s / t.t        (collective 2, dcg_dots)
 *   x += alpha p + omega s, r = s - omega t; r.r, r0*.r = rho'          (collective 3, dbicg_step)
 *
 * When s is small enough already the step is the textbook's half step (omega 0: x += alpha p,
 * r = s) and the next test finds the solve converged. */
#include "dist_solve.h"

#include <math.h>
#include <stdio.h>

#define MEM sizeof(cl_mem)
#define UINT sizeof(cl_uint)

static cmrscl_status set_real(cmrscl_dist_matrix m, cl_kernel k, cl_uint at, double v)
{
    real_arg a = cmrs_dsolve_real(m, v);
    cl_int err = clSetKernelArg(k, at, cmrs_dist_value_size(m->plan.precision), &a);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrs_dsolve_fail_cl(err, "clSetKernelArg (bicgstab)");
}

/* The kernels' fixed arguments for a solve of x. */
static cmrscl_status bind(cmrscl_dist_matrix m, cl_mem b, cl_mem x)
{
    struct dist_solver *sv = m->solver;
    cl_mem none = NULL, *v = sv->vec;
    cl_uint first = 0;
    const size_t a0[] = {UINT, MEM, MEM, MEM, MEM, MEM, UINT};
    const void *v0[] = {&sv->n, &b, &v[V_R], &v[V_P], &none, &sv->sums, &first};
    cl_int err = cmrs_dsolve_args(sv->start, 0, 7, a0, v0);
    const size_t a1[] = {UINT, MEM, MEM, MEM};
    const void *v1[] = {&sv->n, &v[V_R], &v[V_P], &v[V_Q]};
    if (err == CL_SUCCESS)
        err = cmrs_dsolve_args(sv->bicg_p, 0, 4, a1, v1);
    const size_t a2[] = {UINT, MEM, MEM, MEM};
    const void *v2[] = {&sv->n, &v[V_R], &v[V_Q], &v[V_S]};
    const size_t a2b[] = {MEM, UINT};
    const void *v2b[] = {&sv->sums, &first};
    if (err == CL_SUCCESS)
        err = cmrs_dsolve_args(sv->bicg_s, 0, 4, a2, v2);
    if (err == CL_SUCCESS)
        err = cmrs_dsolve_args(sv->bicg_s, 5, 2, a2b, v2b);
    const size_t a3[] = {UINT, MEM, MEM, MEM, MEM, MEM, MEM};
    const void *v3[] = {&sv->n, &x, &v[V_R], &v[V_P], &v[V_S], &v[V_T], &v[V_RHAT]};
    if (err == CL_SUCCESS)
        err = cmrs_dsolve_args(sv->bicg_step, 0, 7, a3, v3);
    if (err == CL_SUCCESS)
        err = cmrs_dsolve_args(sv->bicg_step, 9, 2, a2b, v2b);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrs_dsolve_fail_cl(err, "clSetKernelArg (bicgstab)");
}

/* A stop for value v: BREAKDOWN where it is 0, NONFINITE where it is NaN or Inf. */
static bool stops(cmrscl_solve_result *out, double v, bool bad)
{
    if (!bad)
        return false;
    out->reason = isfinite(v) ? CMRSCL_SOLVE_BREAKDOWN : CMRSCL_SOLVE_NONFINITE;
    out->breakdown = v;
    return true;
}

cmrscl_status cmrs_dsolve_bicgstab(cmrscl_dist_matrix m, const cmrscl_solve_options *o, cl_mem b,
                                   cl_mem x, int max, cmrscl_solve_result *out, char *why,
                                   size_t why_size)
{
    struct dist_solver *sv = m->solver;
    cl_mem *v = sv->vec;
    cmrscl_status st = cmrs_dist_agree(m->comm, bind(m, b, x));
    if (st != CMRSCL_OK)
        return st;
    /* r = b - A x0; p = r, r.r and b.b (dcg_start); r0* = r */
    st = cmrs_dsolve_residual(m, b, x);
    if (st == CMRSCL_OK)
        st = cmrs_dsolve_launch(m, sv->start);
    st = cmrs_dsolve_copy(m, st, v[V_R], v[V_RHAT], "copying r0*");
    double s[SUMS];
    st = cmrs_dsolve_sums(m, st, s);
    cmrs_dsolve_begin(o, st, s, out);
    double rho_prev = 1, alpha = 1, omega = 1, t0 = cmrs_dist_seconds();
    int it = 0, cause = 0;
    while (st == CMRSCL_OK && out->reason != CMRSCL_SOLVE_BAD_INPUT) {
        /* the test of r: r.r and rho = r0*.r from the start or the step */
        double rr = s[SUM_FIRST0], rho = s[SUM_FIRST1];
        cause = 0; /* r.r */
        if (cmrs_dsolve_test(o, out, it, max, rr))
            break;
        if ((cause = 1, stops(out, rho, rho == 0 || !isfinite(rho))))
            break;
        if (it > 0) { /* p = r + beta (p - omega v); the start made p = r */
            double beta = rho / rho_prev * (alpha / omega);
            if ((cause = 1, stops(out, beta, !isfinite(beta))))
                break;
            st = set_real(m, sv->bicg_p, 4, beta);
            if (st == CMRSCL_OK)
                st = set_real(m, sv->bicg_p, 5, omega);
            if (st == CMRSCL_OK)
                st = cmrs_dsolve_launch(m, sv->bicg_p);
        }
        /* v = A p; alpha = rho / r0*.v */
        st = cmrs_dist_product(m, st, 1.0, v[V_P], 0.0, v[V_Q], true, NULL);
        if (st == CMRSCL_OK)
            st = cmrs_dsolve_dots(m, v[V_RHAT], v[V_Q]);
        if ((st = cmrs_dsolve_sums(m, st, s)) != CMRSCL_OK)
            break;
        double rv = s[SUM_DOTS0];
        alpha = rho / rv;
        if ((cause = 2, stops(out, rv, rv == 0 || !isfinite(alpha))))
            break;
        /* s = r - alpha v; t = A s; omega = t.s / t.t */
        st = set_real(m, sv->bicg_s, 4, alpha);
        if (st == CMRSCL_OK)
            st = cmrs_dsolve_launch(m, sv->bicg_s);
        st = cmrs_dist_product(m, st, 1.0, v[V_S], 0.0, v[V_T], true, NULL);
        if (st == CMRSCL_OK)
            st = cmrs_dsolve_dots(m, v[V_S], v[V_T]);
        if ((st = cmrs_dsolve_sums(m, st, s)) != CMRSCL_OK)
            break;
        bool early = sqrt(s[SUM_FIRST0]) <= out->threshold;
        omega = early ? 0 : s[SUM_DOTS0] / s[SUM_DOTS1];
        if ((cause = 3, stops(out, omega, !early && (omega == 0 || !isfinite(omega)))))
            break;
        /* x += alpha p + omega s, r = s - omega t; r.r and rho' */
        st = set_real(m, sv->bicg_step, 7, alpha);
        if (st == CMRSCL_OK)
            st = set_real(m, sv->bicg_step, 8, omega);
        if (st == CMRSCL_OK)
            st = cmrs_dsolve_launch(m, sv->bicg_step);
        st = cmrs_dsolve_sums(m, st, s);
        rho_prev = rho;
        ++it;
    }
    out->iterate_seconds = cmrs_dist_seconds() - t0;
    out->iterations = it;
    out->launches_per_iteration = 2 * cmrs_dsolve_product_launches(m) + 5;
    static const char *const quantity[] = {"r.r", "rho = r0*.r", "r0*.v", "omega = t.s / t.t"};
    if (out->reason == CMRSCL_SOLVE_BAD_INPUT)
        snprintf(why, why_size, "bicgstab: NaN or Inf in b or x0");
    else if (out->reason == CMRSCL_SOLVE_BREAKDOWN || out->reason == CMRSCL_SOLVE_NONFINITE)
        snprintf(why, why_size, "bicgstab: %s = %g at iteration %d%s", quantity[cause],
                 out->breakdown, it + 1,
                 out->reason == CMRSCL_SOLVE_BREAKDOWN ? ": the method broke down" : "");
    return st;
}
