/* solve_cg.c - conjugate gradients, with or without the Jacobi preconditioner: Rupp et al.'s
 * pipelined form (cl/solve.cl, cg_step), the textbook's iterates in exact arithmetic. An
 * iteration is cg_step then the product q = A p, which leaves p.q and q.q (with Jacobi
 * q.Dq: the epilogue's w = D) - two launches, three where the product's partial sums are
 * reduced first. cg_step reads the r.r its previous launch wrote and writes the next, so two
 * kernel objects alternate between two regions of the workspace. */
#include "solve/solve.h"

#include <stdio.h>

enum { R, P, Q };                             /* the vectors */
enum { STEP_EVEN, STEP_ODD, CHECK };          /* the kernels */
enum { ARG_X = 1 };                           /* cg_step's x, bound per solve */
enum { SLOT_EVEN = 1, SLOT_ODD, SLOT_CHECK }; /* their stop slots (cmrs_abi.h) */

static const char *cg_products(const cmrscl_solver s, int i)
{
    (void)i;
    return s->opt.preconditioner == CMRSCL_PRECONDITIONER_JACOBI ? "-DDOTS=4" : "-DDOTS=2";
}

/* cg_step reading r.r at rr_at and writing it at out_at; check_only: the test alone. */
static cmrscl_status step_kernel(cmrscl_solver s, cl_kernel *k, cl_uint rr_at, cl_uint out_at,
                                 cl_uint check_only, cl_uint stop_slot)
{
    cmrscl_status st = cmrs_solve_kernel(s, false, "cg_step", k);
    cl_uint n = s->n, groups = (cl_uint)s->groups, pq_at, pq_n;
    cmrs_solve_product_region(s, &pq_at, &pq_n);
    cl_mem none = NULL;
    solve_arg args[] = {SOLVE_UINT(n),
                        SOLVE_MEM(none),
                        SOLVE_MEM(s->vec[R]),
                        SOLVE_MEM(s->vec[P]),
                        SOLVE_MEM(s->vec[Q]),
                        SOLVE_MEM(s->dinv),
                        SOLVE_MEM(s->ws),
                        SOLVE_UINT(rr_at),
                        SOLVE_UINT(groups),
                        SOLVE_UINT(pq_at),
                        SOLVE_UINT(pq_n),
                        SOLVE_UINT(out_at),
                        SOLVE_UINT(s->at.history),
                        SOLVE_UINT(check_only),
                        SOLVE_UINT(stop_slot)};
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(*k, 0, 15, args);
    return st;
}

static cmrscl_status cg_prepare(cmrscl_solver s)
{
    /* the Jacobi diagonal's buffer first: the kernels take it as an argument */
    cmrscl_status st =
        s->opt.preconditioner == CMRSCL_PRECONDITIONER_JACOBI ? cmrs_solve_jacobi(s) : CMRSCL_OK;
    const solve_layout *a = &s->at;
    if (st == CMRSCL_OK)
        st = step_kernel(s, &s->kernel[STEP_EVEN], a->rr[0], a->rr[1], 0, SLOT_EVEN);
    if (st == CMRSCL_OK)
        st = step_kernel(s, &s->kernel[STEP_ODD], a->rr[1], a->rr[0], 0, SLOT_ODD);
    /* the test after the last iteration: max - 1 wrote r.r at rr[max % 2] */
    if (st == CMRSCL_OK)
        st = step_kernel(s, &s->kernel[CHECK], a->rr[s->opt.max_iterations % 2], a->rr[0], 1,
                         SLOT_CHECK);
    return st;
}

/* q = A p, leaving p.q and q.q (q.Dq with Jacobi: w = D) */
static cmrscl_status cg_bind_products(cmrscl_solver s)
{
    return cmrs_product_kernels_bind(&s->product[0], s->precision, 1.0, s->vec[P], 0.0, s->vec[Q],
                                     true, s->ws, s->at.product, s->dinv);
}

static cmrscl_status cg_start(cmrscl_solver s, cl_mem b, cl_mem x)
{
    solve_arg arg = SOLVE_MEM(x);
    cmrscl_status st = CMRSCL_OK;
    for (int k = STEP_EVEN; k <= CHECK && st == CMRSCL_OK; ++k)
        st = cmrs_solve_set_args(s->kernel[k], ARG_X, 1, &arg);
    if (st == CMRSCL_OK) /* p = D r, r.r and r.Dr */
        st = cmrs_solve_start_common(s, b, x, s->vec[P], NULL, s->dinv);
    if (st == CMRSCL_OK) /* q = A p, p.q and q.q (q.Dq) */
        st = cmrs_solve_product(s, 0);
    return st;
}

static cmrscl_status cg_iterate(cmrscl_solver s, int i, int max)
{
    cmrscl_status st = cmrs_solve_product_sums(s);
    if (st == CMRSCL_OK)
        st = cmrs_solve_launch(s, s->kernel[i % 2 ? STEP_ODD : STEP_EVEN], 0);
    if (st == CMRSCL_OK && i < max - 1)
        st = cmrs_solve_product(s, 0);
    return st;
}

static cmrscl_status cg_check_last(cmrscl_solver s, int max)
{
    (void)max;
    return cmrs_solve_launch(s, s->kernel[CHECK], 0);
}

static cmrscl_status cg_finish(cmrscl_solver s, cl_mem x)
{
    (void)s, (void)x;
    return CMRSCL_OK;
}

static void cg_breakdown(const cmrscl_solver s, double v, int cause, int it, char *why, size_t size)
{
    (void)cause;
    bool jacobi = s->opt.preconditioner == CMRSCL_PRECONDITIONER_JACOBI;
    snprintf(why, size, "cg: p.Ap = %g <= 0 at iteration %d: the matrix is not positive definite%s",
             v, it + 1, jacobi ? " (or its diagonal is not: Jacobi needs a positive one)" : "");
}

const solve_method cmrs_solve_cg = {
    .id = CMRSCL_METHOD_CG,
    .name = "cg",
    .vectors = 3,
    .products = 1,
    .product_options = cg_products,
    .jacobi = true,
    .prepare = cg_prepare,
    .bind_products = cg_bind_products,
    .start = cg_start,
    .iterate = cg_iterate,
    .check_last = cg_check_last,
    .finish = cg_finish,
    .breakdown = cg_breakdown,
};
