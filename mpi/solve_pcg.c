/* solve_pcg.c - distributed conjugate gradients preconditioned by AMG on each rank: block
 * Jacobi across the ranks, each rank's block (its rows and columns, the couplings to other
 * ranks dropped) preconditioned by a smoothed-aggregation V-cycle of its own (cmrscl_precond,
 * on the rank's device, no communication). The V-cycle is symmetric, so M is a fixed SPD
 * operator and the textbook PCG applies:
 *
 *   q = A p; p.q                                   (the product, dcg_dots; a collective)
 *   alpha = r.z / p.q; x += alpha p, r -= alpha q  (dpcg_step, leaving r.r)
 *   z = M r; r.z                                   (the rank's cycle, dcg_dots; a collective)
 *   beta = r.z / r.z before; p = z + beta p        (dbicg_p with omega 0)
 *
 * Two collectives an iteration, where Jacobi-CG's pipelined form has one: z = M r cannot be
 * folded into the update as D r is. What the blocks cost in iterations - the couplings between
 * ranks left to the outer CG - is measured in docs/dev/MPI.md. */
#include "dist_solve.h"

#include <math.h>
#include <stdio.h>

#define MEM sizeof(cl_mem)

/* A launch of kernel k after its arguments (n, then the rest) are set. */
static cmrscl_status launch(cmrscl_dist_matrix m, cmrscl_status st, cl_kernel k, int count,
                            const size_t *size, const void *const *value, const char *name)
{
    if (st != CMRSCL_OK)
        return st;
    cl_int err = cmrs_dsolve_args(k, 0, count, size, value);
    if (err != CL_SUCCESS)
        return cmrs_dsolve_fail_cl(err, name);
    return cmrs_dsolve_launch(m, k);
}

/* z = M r on this rank, then r.z into the second region of the sums (dcg_dots). */
static cmrscl_status precondition(cmrscl_dist_matrix m, cmrscl_status st, cmrscl_precond amg)
{
    struct dist_solver *sv = m->solver;
    if (st == CMRSCL_OK && sv->n) /* a rank of no rows: z is empty */
        st = cmrscl_precond_apply(amg, sv->vec[V_R], sv->vec[V_S]);
    if (st == CMRSCL_OK)
        st = cmrs_dsolve_dots(m, sv->vec[V_R], sv->vec[V_S]);
    return st;
}

/* p = z + beta p */
static cmrscl_status next_direction(cmrscl_dist_matrix m, cmrscl_status st, double beta)
{
    struct dist_solver *sv = m->solver;
    real_arg bt = cmrs_dsolve_real(m, beta), zero = cmrs_dsolve_real(m, 0.0);
    size_t rs = cmrs_dist_value_size(m->plan.precision);
    const size_t size[] = {sizeof(cl_uint), MEM, MEM, MEM, rs, rs};
    const void *value[] = {&sv->n, &sv->vec[V_S], &sv->vec[V_P], &sv->vec[V_P], &bt, &zero};
    return launch(m, st, sv->bicg_p, 6, size, value, "dbicg_p's arguments");
}

cmrscl_status cmrs_dsolve_pcg(cmrscl_dist_matrix m, const cmrscl_solve_options *o, cl_mem b,
                              cl_mem x, int max, cmrscl_solve_result *out, char *why,
                              size_t why_size)
{
    struct dist_solver *sv = m->solver;
    cmrscl_precond amg = o->precond ? o->precond : sv->amg;
    cl_mem none = NULL;
    cl_uint first = 0;
    /* r = b - A x0 (with r.r and b.b: dcg_start, its p = r unused); z = M r, p = z */
    cmrscl_status st = cmrs_dsolve_residual(m, b, x);
    const size_t ss[] = {sizeof(cl_uint), MEM, MEM, MEM, MEM, MEM, sizeof(cl_uint)};
    const void *sa[] = {&sv->n, &b, &sv->vec[V_R], &sv->vec[V_P], &none, &sv->sums, &first};
    st = launch(m, st, sv->start, 7, ss, sa, "dcg_start's arguments");
    st = precondition(m, st, amg);
    st = cmrs_dsolve_copy(m, st, sv->vec[V_S], sv->vec[V_P], "p = z");
    double s[SUMS];
    st = cmrs_dsolve_sums(m, st, s);
    cmrs_dsolve_begin(o, st, s, out);
    double rr = s[SUM_FIRST0], rz = s[SUM_DOTS0];
    const char *broke = NULL;
    double t_iter = cmrs_dist_seconds();
    int it = 0;
    size_t rs = cmrs_dist_value_size(m->plan.precision);
    while (st == CMRSCL_OK && out->reason != CMRSCL_SOLVE_BAD_INPUT) {
        if (cmrs_dsolve_test(o, out, it, max, rr))
            break;
        if (!(rz > 0)) { /* z = M r with r.z <= 0: M is not positive definite */
            out->reason = isfinite(rz) ? CMRSCL_SOLVE_BREAKDOWN : CMRSCL_SOLVE_NONFINITE;
            out->breakdown = rz, broke = "r.z";
            break;
        }
        st = cmrs_dist_product(m, st, 1.0, sv->vec[V_P], 0.0, sv->vec[V_Q], true, NULL);
        if (st == CMRSCL_OK)
            st = cmrs_dsolve_dots(m, sv->vec[V_P], sv->vec[V_Q]);
        st = cmrs_dsolve_sums(m, st, s);
        double pq = s[SUM_DOTS0];
        if (st != CMRSCL_OK)
            break;
        if (!(pq > 0)) {
            out->reason = isfinite(pq) ? CMRSCL_SOLVE_BREAKDOWN : CMRSCL_SOLVE_NONFINITE;
            out->breakdown = pq, broke = "p.Ap";
            break;
        }
        real_arg alpha = cmrs_dsolve_real(m, rz / pq);
        const size_t us[] = {sizeof(cl_uint), MEM, MEM, MEM, MEM, rs, MEM, sizeof(cl_uint)};
        const void *uv[] = {&sv->n,        &x,     &sv->vec[V_R], &sv->vec[V_P],
                            &sv->vec[V_Q], &alpha, &sv->sums,     &first};
        st = launch(m, st, sv->pcg_step, 8, us, uv, "dpcg_step's arguments");
        st = precondition(m, st, amg);
        st = cmrs_dsolve_sums(m, st, s);
        double rz_next = s[SUM_DOTS0];
        rr = s[SUM_FIRST0];
        st = next_direction(m, st, rz_next / rz);
        rz = rz_next;
        ++it;
    }
    out->iterate_seconds = cmrs_dist_seconds() - t_iter;
    out->iterations = it;
    /* the product, dcg_dots twice, dpcg_step, dbicg_p; the V-cycle's not counted */
    out->launches_per_iteration = 4 + cmrs_dsolve_product_launches(m);
    if (out->reason == CMRSCL_SOLVE_BAD_INPUT)
        snprintf(why, why_size, "cg + amg: NaN or Inf in b or x0");
    else if (out->reason == CMRSCL_SOLVE_BREAKDOWN)
        snprintf(why, why_size, "cg + amg: %s = %g <= 0 at iteration %d: %s", broke, out->breakdown,
                 it + 1,
                 *broke == 'p' ? "the matrix is not positive definite"
                               : "a rank's AMG is not positive definite (nor is its block)");
    else if (out->reason == CMRSCL_SOLVE_NONFINITE)
        snprintf(why, why_size, "cg + amg: %s became %g at iteration %d", broke ? broke : "r.r",
                 out->breakdown, it + 1);
    return st;
}
