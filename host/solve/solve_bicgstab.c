/* solve_bicgstab.c - BiCGStab (van der Vorst 1992) as the textbook has it, r0* = r0
 * (cl/solve.cl): an iteration is bicg_p (the test, beta, p), v = A p, bicg_s (alpha, s),
 * t = A s, bicg_step (omega, x, r) - five launches, seven where the products' partial sums are
 * reduced first. The products leave the dot products the step needs: v = A p r0*.v (the
 * epilogue's w = r0*), t = A s t.s and t.t.
 * With a preconditioner object (AMG), preconditioned on the right - A M y = b, x = M y, the
 * residual still b - A x: p^ = M p before v = A p^, s^ = M s before t = A s^ (which leaves t.s
 * as its epilogue's w.y, w = s, and t.t), and x += alpha p^ + omega s^. */
#include "solve/solve.h"

#include <stdio.h>

enum { R, P, RS, V, S, T, PH, SH };                    /* the vectors: M p, M s preconditioned */
enum { P_FIRST, P_NEXT, CHECK, SHALF, STEP };          /* the kernels: kernel k's stop slot k + 1 */
enum { ARG_X = 1 };                                    /* bicg_step's x, bound per solve */
enum { CAUSE_RHO = 1, CAUSE_RV = 2, CAUSE_OMEGA = 3 }; /* CMRS_WS_CAUSE: what vanished */

static bool preconditioned(const cmrscl_solver s)
{
    return s->opt.preconditioner == CMRSCL_PRECONDITIONER_AMG;
}

static const char *bicg_products(const cmrscl_solver s, int i)
{
    /* r0*.v alone (w = r0*); t.s and t.t (preconditioned: x.y is t.M s, w.y with w = s) */
    return i == 0 ? "-DDOTS=1" : preconditioned(s) ? "-DDOTS=4" : "-DDOTS=2";
}

/* bicg_p: the first iteration's (p = r), the others', or the last test alone */
static cmrscl_status p_kernel(cmrscl_solver s, int which, cl_uint first, cl_uint check_only)
{
    cl_uint n = s->n, groups = (cl_uint)s->groups, slot = (cl_uint)which + 1;
    cl_kernel *k = &s->kernel[which];
    solve_arg args[] = {SOLVE_UINT(n),          SOLVE_MEM(s->vec[R]),      SOLVE_MEM(s->vec[P]),
                        SOLVE_MEM(s->vec[V]),   SOLVE_MEM(s->ws),          SOLVE_UINT(s->at.rr[0]),
                        SOLVE_UINT(groups),     SOLVE_UINT(s->at.history), SOLVE_UINT(first),
                        SOLVE_UINT(check_only), SOLVE_UINT(slot)};
    cmrscl_status st = cmrs_solve_kernel(s, false, "bicg_p", k);
    return st == CMRSCL_OK ? cmrs_solve_set_args(*k, 0, 11, args) : st;
}

static cmrscl_status bicg_prepare(cmrscl_solver s)
{
    bool m = preconditioned(s);
    cl_uint n = s->n, groups = (cl_uint)s->groups, sums, count, ts_w = m;
    cl_uint half_slot = SHALF + 1, step_slot = STEP + 1;
    cmrs_solve_product_region(s, &sums, &count);
    cmrscl_status st = m ? cmrs_solve_precond_check(s) : CMRSCL_OK;
    if (st == CMRSCL_OK)
        st = p_kernel(s, P_FIRST, 1, 0);
    if (st == CMRSCL_OK)
        st = p_kernel(s, P_NEXT, 0, 0);
    if (st == CMRSCL_OK)
        st = p_kernel(s, CHECK, 0, 1);
    solve_arg half[] = {SOLVE_UINT(n),        SOLVE_MEM(s->vec[R]),     SOLVE_MEM(s->vec[V]),
                        SOLVE_MEM(s->vec[S]), SOLVE_MEM(s->ws),         SOLVE_UINT(sums),
                        SOLVE_UINT(count),    SOLVE_UINT(s->at.second), SOLVE_UINT(half_slot)};
    if (st == CMRSCL_OK)
        st = cmrs_solve_kernel(s, false, "bicg_s", &s->kernel[SHALF]);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[SHALF], 0, 9, half);
    cl_mem none = NULL;
    solve_arg step[] = {SOLVE_UINT(n),
                        SOLVE_MEM(none),
                        SOLVE_MEM(s->vec[R]),
                        SOLVE_MEM(s->vec[m ? PH : P]),
                        SOLVE_MEM(s->vec[S]),
                        SOLVE_MEM(s->vec[T]),
                        SOLVE_MEM(s->vec[RS]),
                        SOLVE_MEM(s->ws),
                        SOLVE_UINT(sums),
                        SOLVE_UINT(count),
                        SOLVE_UINT(s->at.second),
                        SOLVE_UINT(groups),
                        SOLVE_UINT(s->at.rr[0]),
                        SOLVE_UINT(step_slot),
                        SOLVE_MEM(s->vec[m ? SH : S]),
                        SOLVE_UINT(ts_w)};
    if (st == CMRSCL_OK)
        st = cmrs_solve_kernel(s, false, "bicg_step", &s->kernel[STEP]);
    return st == CMRSCL_OK ? cmrs_solve_set_args(s->kernel[STEP], 0, 16, step) : st;
}

static cmrscl_status bicg_bind_products(cmrscl_solver s)
{
    bool m = preconditioned(s);
    /* v = A p (A M p), leaving r0*.v */
    cmrscl_status st =
        cmrs_product_kernels_bind(&s->product[0], s->precision, 1.0, s->vec[m ? PH : P], 0.0,
                                  s->vec[V], true, s->ws, s->at.product, s->vec[RS]);
    if (st == CMRSCL_OK) /* t = A s, leaving s.t and t.t (A M s: s.t as w.y, w = s) */
        st = cmrs_product_kernels_bind(&s->product[1], s->precision, 1.0, s->vec[m ? SH : S], 0.0,
                                       s->vec[T], true, s->ws, s->at.product, m ? s->vec[S] : NULL);
    return st;
}

static cmrscl_status bicg_start(cmrscl_solver s, cl_mem b, cl_mem x)
{
    solve_arg arg = SOLVE_MEM(x);
    cmrscl_status st = cmrs_solve_set_args(s->kernel[STEP], ARG_X, 1, &arg);
    if (st == CMRSCL_OK) /* r0* = r; r.r and r0*.r (= r.r) for bicg_p */
        st = cmrs_solve_start_common(s, b, x, NULL, s->vec[RS], NULL);
    return st;
}

static cmrscl_status bicg_iterate(cmrscl_solver s, int i, int max, unsigned parts)
{
    (void)max;
    cmrscl_status st = CMRSCL_OK;
    bool m = preconditioned(s);
    if (parts & ITER_AHEAD) { /* p, (M p,) v = A p, s = r - alpha v, (M s,) t = A s */
        st = cmrs_solve_launch(s, s->kernel[i == 0 ? P_FIRST : P_NEXT], 0);
        if (st == CMRSCL_OK && m)
            st = cmrs_solve_precondition(s, s->vec[P], s->vec[PH]);
        if (st == CMRSCL_OK)
            st = cmrs_solve_product(s, 0);
        if (st == CMRSCL_OK)
            st = cmrs_solve_product_sums(s);
        if (st == CMRSCL_OK)
            st = cmrs_solve_launch(s, s->kernel[SHALF], 0);
        if (st == CMRSCL_OK && m)
            st = cmrs_solve_precondition(s, s->vec[S], s->vec[SH]);
        if (st == CMRSCL_OK)
            st = cmrs_solve_product(s, 1);
        if (st == CMRSCL_OK)
            st = cmrs_solve_product_sums(s);
    }
    if (st == CMRSCL_OK && (parts & ITER_X))
        st = cmrs_solve_launch(s, s->kernel[STEP], 0);
    return st;
}

static cmrscl_status bicg_check_last(cmrscl_solver s, int max)
{
    (void)max;
    return cmrs_solve_launch(s, s->kernel[CHECK], 0);
}

static cmrscl_status bicg_finish(cmrscl_solver s, cl_mem x)
{
    (void)s, (void)x;
    return CMRSCL_OK;
}

static void bicg_breakdown(const cmrscl_solver s, double v, int cause, int it, char *why,
                           size_t size)
{
    (void)s;
    static const char *const what[] = {"a scalar", "rho = (r0*, r)", "(r0*, A p)", "omega"};
    snprintf(why, size,
             "bicgstab: %s = %g at iteration %d: the method cannot go on from here (restart from "
             "the x returned, or take GMRES)",
             what[cause >= CAUSE_RHO && cause <= CAUSE_OMEGA ? cause : 0], v, it + 1);
}

/* BiCGStab's method, with `count` vectors: six, or eight with a preconditioner object (M p,
 * M s); the functions tell the two apart by the solver's options. */
#define BICGSTAB_METHOD(count)                                                                     \
    {                                                                                              \
        .id = CMRSCL_METHOD_BICGSTAB, .name = "bicgstab", .vectors = (count), .products = 2,       \
        .product_options = bicg_products, .jacobi = false, .chain_sums = true,                     \
        .prepare = bicg_prepare, .bind_products = bicg_bind_products, .start = bicg_start,         \
        .iterate = bicg_iterate, .check_last = bicg_check_last, .finish = bicg_finish,             \
        .breakdown = bicg_breakdown,                                                               \
    }
const solve_method cmrs_solve_bicgstab = BICGSTAB_METHOD(6);
const solve_method cmrs_solve_pbicgstab = BICGSTAB_METHOD(8);
