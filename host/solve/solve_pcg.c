/* solve_pcg.c - conjugate gradients preconditioned by an operator of launches of its own (the
 * AMG V-cycle, host/precond/): the textbook's PCG (cl/solve.cl, pcg_p .. pcg_rz). Rupp's
 * pipelined form, which CG and Jacobi-CG take (solve_cg.c), folds the preconditioner into its
 * scalars through q.Dq - a diagonal's privilege - so a general M takes the textbook's order:
 * pcg_p, q = A p (leaving p.q), pcg_x, z = M r, pcg_rz - four launches and the cycle's. The
 * cycle is a fixed symmetric operator (the same sweeps every time), so CG's beta stays the
 * textbook's (no flexible variant needed). */
#include "precond/precond.h"
#include "solve/solve.h"

#include <stdio.h>

enum { R, P, Q, Z };                     /* the vectors */
enum { P_FIRST, P_NEXT, CHECK, X, RZ };  /* the kernels */
enum { SLOT_P = 1, SLOT_X, SLOT_CHECK }; /* their stop slots (cmrs_abi.h) */
enum { ARG_X = 1 };                      /* pcg_x's x, bound per solve */
enum { CAUSE_RZ = 1, CAUSE_PQ = 2 };     /* CMRS_WS_CAUSE */

static const char *pcg_products(const cmrscl_solver s, int i)
{
    (void)s, (void)i;
    return "-DDOTS=2"; /* p.q (and q.q, unread) */
}

/* The method's region: the partial sums of r.z, a real4 a work-group of the vector kernels. */
static cl_uint pcg_workspace(const cmrscl_solver s) { return (cl_uint)(4 * s->groups); }

static cmrscl_status p_kernel(cmrscl_solver s, int which, cl_uint first, cl_uint check_only,
                              cl_uint slot)
{
    cl_uint n = s->n, groups = (cl_uint)s->groups;
    solve_arg args[] = {SOLVE_UINT(n),          SOLVE_MEM(s->vec[Z]),      SOLVE_MEM(s->vec[P]),
                        SOLVE_MEM(s->ws),       SOLVE_UINT(s->at.rr[0]),   SOLVE_UINT(s->at.method),
                        SOLVE_UINT(groups),     SOLVE_UINT(s->at.history), SOLVE_UINT(first),
                        SOLVE_UINT(check_only), SOLVE_UINT(slot)};
    cmrscl_status st = cmrs_solve_kernel(s, false, "pcg_p", &s->kernel[which]);
    return st == CMRSCL_OK ? cmrs_solve_set_args(s->kernel[which], 0, 11, args) : st;
}

cmrscl_status cmrs_solve_precond_check(const cmrscl_solver s)
{
    cmrscl_status st = cmrscl_precond_check(s->opt.precond, s->ctx, s->precision, (int32_t)s->n);
    if (st == CMRSCL_OK)
        return st;
    char why[512]; /* the message, copied: cmrscl_fail writes where it lies */
    snprintf(why, sizeof why, "%s", cmrscl_last_error());
    return cmrscl_fail(st, "%s: %s", s->method->name, why);
}

cmrscl_status cmrs_solve_precondition(cmrscl_solver s, cl_mem r, cl_mem z)
{
    if (s->queue != s->ctx->queue)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "%s with a preconditioner object runs on the context's queue (its "
                           "cycle does): pass NULL as the queue",
                           s->method->name);
    s->launches += cmrs_amg_device_commands(&s->opt.precond->device);
    if (!s->m->renumbering)
        return cmrs_amg_device_apply(&s->opt.precond->device, r, z);
    /* the preconditioner is the caller's numbering's: z = P M (P^T r) */
    cl_mem caller_r = s->ordered[2], caller_z = s->ordered[3];
    cmrscl_status st = cmrs_solve_renumber(s, false, r, caller_r);
    if (st == CMRSCL_OK)
        st = cmrs_amg_device_apply(&s->opt.precond->device, caller_r, caller_z);
    return st == CMRSCL_OK ? cmrs_solve_renumber(s, true, caller_z, z) : st;
}

static cmrscl_status pcg_prepare(cmrscl_solver s)
{
    cmrscl_status st = cmrs_solve_precond_check(s);
    if (st != CMRSCL_OK)
        return st;
    cl_uint n = s->n, pq_at, pq_n, slot_x = SLOT_X;
    cmrs_solve_product_region(s, &pq_at, &pq_n);
    st = p_kernel(s, P_FIRST, 1, 0, SLOT_P);
    if (st == CMRSCL_OK)
        st = p_kernel(s, P_NEXT, 0, 0, SLOT_P);
    if (st == CMRSCL_OK)
        st = p_kernel(s, CHECK, 0, 1, SLOT_CHECK);
    cl_mem none = NULL;
    solve_arg x[] = {SOLVE_UINT(n),        SOLVE_MEM(none),      SOLVE_MEM(s->vec[R]),
                     SOLVE_MEM(s->vec[P]), SOLVE_MEM(s->vec[Q]), SOLVE_MEM(s->ws),
                     SOLVE_UINT(pq_at),    SOLVE_UINT(pq_n),     SOLVE_UINT(s->at.rr[0]),
                     SOLVE_UINT(slot_x)};
    if (st == CMRSCL_OK)
        st = cmrs_solve_kernel(s, false, "pcg_x", &s->kernel[X]);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[X], 0, 10, x);
    solve_arg rz[] = {SOLVE_UINT(n), SOLVE_MEM(s->vec[R]), SOLVE_MEM(s->vec[Z]), SOLVE_MEM(s->ws),
                      SOLVE_UINT(s->at.method)};
    if (st == CMRSCL_OK)
        st = cmrs_solve_kernel(s, false, "pcg_rz", &s->kernel[RZ]);
    return st == CMRSCL_OK ? cmrs_solve_set_args(s->kernel[RZ], 0, 5, rz) : st;
}

static cmrscl_status pcg_bind_products(cmrscl_solver s)
{
    /* q = A p, leaving p.q */
    return cmrs_product_kernels_bind(&s->product[0], s->precision, 1.0, s->vec[P], 0.0, s->vec[Q],
                                     true, s->ws, s->at.product, NULL);
}

/* z = M r on the solver's queue, then the partial sums of r.z. */
static cmrscl_status precondition(cmrscl_solver s)
{
    cmrscl_status st = cmrs_solve_precondition(s, s->vec[R], s->vec[Z]);
    return st == CMRSCL_OK ? cmrs_solve_launch(s, s->kernel[RZ], 0) : st;
}

static cmrscl_status pcg_start(cmrscl_solver s, cl_mem b, cl_mem x)
{
    solve_arg arg = SOLVE_MEM(x);
    cmrscl_status st = cmrs_solve_set_args(s->kernel[X], ARG_X, 1, &arg);
    if (st == CMRSCL_OK) /* r.r, b.b, the threshold */
        st = cmrs_solve_start_common(s, b, x, NULL, NULL, NULL);
    return st == CMRSCL_OK ? precondition(s) : st;
}

static cmrscl_status pcg_iterate(cmrscl_solver s, int i, int max, unsigned parts)
{
    cmrscl_status st = CMRSCL_OK;
    if (parts & ITER_AHEAD) { /* p, q = A p and its sums */
        st = cmrs_solve_launch(s, s->kernel[i == 0 ? P_FIRST : P_NEXT], 0);
        if (st == CMRSCL_OK)
            st = cmrs_solve_product(s, 0);
        if (st == CMRSCL_OK)
            st = cmrs_solve_product_sums(s);
    }
    if (st == CMRSCL_OK && (parts & ITER_X))
        st = cmrs_solve_launch(s, s->kernel[X], 0);
    /* the cycle runs on whatever the stop: its kernels are the library's products and
     * cl/amg.cl's, which read no stop slot - at most the batch past convergence, wasted */
    if (st == CMRSCL_OK && (parts & ITER_BEHIND) && i < max - 1)
        st = precondition(s);
    return st;
}

static cmrscl_status pcg_check_last(cmrscl_solver s, int max)
{
    (void)max;
    return cmrs_solve_launch(s, s->kernel[CHECK], 0);
}

static cmrscl_status pcg_finish(cmrscl_solver s, cl_mem x)
{
    (void)s, (void)x;
    return CMRSCL_OK;
}

static void pcg_breakdown(const cmrscl_solver s, double v, int cause, int it, char *why,
                          size_t size)
{
    (void)s;
    snprintf(why, size,
             cause == CAUSE_RZ ? "cg: r.Mr = %g <= 0 at iteration %d: the preconditioner is not "
                                 "positive definite"
                               : "cg: p.Ap = %g <= 0 at iteration %d: the matrix is not positive "
                                 "definite",
             v, it + 1);
}

const solve_method cmrs_solve_pcg = {
    .id = CMRSCL_METHOD_CG,
    .name = "cg",
    .vectors = 4,
    .products = 1,
    .product_options = pcg_products,
    .jacobi = false,
    .workspace = pcg_workspace,
    .prepare = pcg_prepare,
    .bind_products = pcg_bind_products,
    .start = pcg_start,
    .iterate = pcg_iterate,
    .check_last = pcg_check_last,
    .finish = pcg_finish,
    .breakdown = pcg_breakdown,
};
