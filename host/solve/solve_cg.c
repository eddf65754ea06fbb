/* solve_cg.c - conjugate gradients, with or without the Jacobi preconditioner: Rupp et al.'s
 * pipelined form (cl/solve.cl, cg_step), the textbook's iterates in exact arithmetic. An
 * iteration is cg_step then the product q = A p, which leaves p.q and q.q (with Jacobi
 * q.Dq: the epilogue's w = D) - two launches, three where the product's partial sums are
 * reduced first or a split plan's combine kernel adds its long strips up (and the sums with
 * them: cl/combine.cl, COMBINE_FOLDS). cg_step reads the r.r its previous launch wrote and writes
 * the next, so two kernel objects alternate between two regions of the workspace. On a small matrix
 * on a GPU an iteration is one launch: the product fused with the step (cl/cg_fused.cl), writing r,
 * p and q into a second set of vectors - the sets, and two pairs of regions for its sums,
 * alternating between an odd and an even kernel object - after the first iteration's, which reads
 * the start's sums. */
#include "solve/solve.h"

#include <stdio.h>
#include <stdlib.h>

enum { R, P, Q, R2, P2, Q2 };                 /* the vectors: the fused iteration's second set */
enum { STEP_EVEN, STEP_ODD, CHECK };          /* the kernels */
enum { FUSED_FIRST, FUSED_ODD, FUSED_EVEN };  /* the fused iterations' (s->fused) */
enum { ARG_X = 1 };                           /* cg_step's x, bound per solve */
enum { SLOT_EVEN = 1, SLOT_ODD, SLOT_CHECK }; /* their stop slots (cmrs_abi.h) */

static bool jacobi(const cmrscl_solver s)
{
    return s->opt.preconditioner == CMRSCL_PRECONDITIONER_JACOBI;
}

static const char *fused_options(const cmrscl_solver s)
{
    return jacobi(s) ? "-DCG_FUSED=2" : "-DCG_FUSED=1";
}

/* The fused iterations' work-groups: each leaves a real4 in each of its regions. */
static cl_uint fused_groups(const cmrscl_solver s)
{
    size_t units, space;
    bool can_chain, capped;
    cmrs_product_kernels_shape(s->m, fused_options(s), 0, &units, &space, &can_chain, &capped);
    return (cl_uint)(units ? units : 1);
}

/* The fused iteration (cl/cg_fused.cl) on a GPU, where it runs at most CG_FUSED_GROUPS
 * work-groups: each adds up every work-group's sums of the iteration before, a cost that grows
 * with their square, and the matrices that need more are those whose product outlasts a
 * launch - there its three loads a column cost more than the launch saved (docs/dev/PERFORMANCE.md,
 * CG_FUSED_GROUPS). The same holds on few rows of many entries (FEM's blocks), whose grid
 * is small but whose product is long: at most CG_FUSED_ENTRIES entries, the loads a column being
 * what fusing adds (docs/dev/PERFORMANCE.md, CG_FUSED_ENTRIES). Never where the plan splits
 * strips into tiles (their sums come from another work-group or kernel), nor on the segment
 * family (cl/cg_fused.cl). CMRSCL_SOLVE_FUSED=0|1 decides instead (the tests, on every device). */
#define CG_FUSED_GROUPS 1536
#define CG_FUSED_ENTRIES (INT64_C(1) << 22)
static bool cg_fuses(const cmrscl_solver s)
{
    const char *forced = getenv("CMRSCL_SOLVE_FUSED");
    bool can = s->m->params.long_strips == 0 && plan_family(&s->m->params)->fuses_cg;
    if (forced && *forced)
        return can && atoi(forced) != 0;
    return can && (s->ctx->info.type & CL_DEVICE_TYPE_GPU) &&
           s->m->params.nnz <= CG_FUSED_ENTRIES && fused_groups(s) <= CG_FUSED_GROUPS;
}

/* The method's region: with the fused iteration, its r.r and p.q regions, two of each
 * (rr: method + 0 and 1 x 4 groups; pq: 2 and 3 x). */
static cl_uint cg_workspace(const cmrscl_solver s)
{
    return cg_fuses(s) ? 16 * fused_groups(s) : 0;
}

static const char *cg_products(const cmrscl_solver s, int i)
{
    (void)i;
    return jacobi(s) ? "-DDOTS=4" : "-DDOTS=2";
}

/* cg_step reading r.r at rr_at and writing it at out_at; check_only: the test alone. */
static cmrscl_status step_kernel(cmrscl_solver s, cl_kernel *k, cl_uint rr_at, cl_uint rr_n,
                                 cl_uint out_at, cl_uint check_only, cl_uint stop_slot)
{
    cmrscl_status st = cmrs_solve_kernel(s, false, "cg_step", k);
    cl_uint n = s->n, pq_at, pq_n;
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
                        SOLVE_UINT(rr_n),
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

/* The fused iteration `which` made (again, when the matrix's kernels were) and bound: it
 * reads the vectors of set `from` and the sums at rr_at, pq_at, and writes the other set's and
 * the sums of region pair `to`. */
static cmrscl_status fused_kernel(cmrscl_solver s, int which, int from, cl_uint rr_at, cl_uint rr_n,
                                  cl_uint pq_at, cl_uint pq_n, int to, cl_uint stop_slot)
{
    product_kernels *k = &s->fused[which];
    cmrs_product_kernels_release(k);
    cmrscl_status st = cmrs_product_kernels_make(s->m, fused_options(s), 0, k);
    int in = from ? 3 : 0, out = from ? 0 : 3; /* R, P, Q or R2, P2, Q2 */
    cl_uint g = fused_groups(s), rr_out = s->at.method + 4 * g * (cl_uint)to,
            pq_out = s->at.method + 4 * g * (cl_uint)(2 + to), history = s->at.history;
    cl_mem none = NULL;
    solve_arg args[] = {
        SOLVE_MEM(s->ws),           SOLVE_UINT(rr_at),          SOLVE_UINT(rr_n),
        SOLVE_UINT(pq_at),          SOLVE_UINT(pq_n),           SOLVE_UINT(rr_out),
        SOLVE_UINT(pq_out),         SOLVE_MEM(s->vec[in + R]),  SOLVE_MEM(s->vec[in + Q]),
        SOLVE_MEM(s->vec[out + R]), SOLVE_MEM(s->vec[out + P]), SOLVE_MEM(none),
        SOLVE_MEM(s->dinv),         SOLVE_UINT(history),        SOLVE_UINT(stop_slot)};
    if (st == CMRSCL_OK)
        st = cmrs_product_kernels_bind(k, s->precision, 1.0, s->vec[in + P], 0.0, s->vec[out + Q],
                                       false, NULL, 0, NULL);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(k->kernel, CMRS_ARG_COUNT, CMRS_FUSED_COUNT, args);
    return st;
}

/* The three fused iterations: the first reads the start's sums (r.r from solve_start, p.q
 * from the product) and writes pair 0; then odd ones read pair 0 and write 1, even ones the
 * other way. */
static cmrscl_status fused_kernels(cmrscl_solver s)
{
    cl_uint g = fused_groups(s), pq_at, pq_n, m = s->at.method;
    cmrs_solve_product_region(s, &pq_at, &pq_n);
    cmrscl_status st =
        fused_kernel(s, FUSED_FIRST, 0, s->at.rr[0], (cl_uint)s->groups, pq_at, pq_n, 0, SLOT_EVEN);
    if (st == CMRSCL_OK)
        st = fused_kernel(s, FUSED_ODD, 1, m, g, m + 8 * g, g, 1, SLOT_ODD);
    if (st == CMRSCL_OK)
        st = fused_kernel(s, FUSED_EVEN, 0, m + 4 * g, g, m + 12 * g, g, 0, SLOT_EVEN);
    return st;
}

static cmrscl_status cg_prepare(cmrscl_solver s)
{
    /* the Jacobi diagonal's buffer first: the kernels take it as an argument */
    cmrscl_status st = jacobi(s) ? cmrs_solve_jacobi(s) : CMRSCL_OK;
    const solve_layout *a = &s->at;
    cl_uint groups = (cl_uint)s->groups;
    bool fuses = cg_fuses(s);
    if (st == CMRSCL_OK)
        st = step_kernel(s, &s->kernel[STEP_EVEN], a->rr[0], groups, a->rr[1], 0, SLOT_EVEN);
    if (st == CMRSCL_OK)
        st = step_kernel(s, &s->kernel[STEP_ODD], a->rr[1], groups, a->rr[0], 0, SLOT_ODD);
    /* the test after a pass's last iteration: where it reads r.r is bound then (cg_check_last) */
    if (st == CMRSCL_OK)
        st = step_kernel(s, &s->kernel[CHECK], a->rr[0], groups, a->rr[0], 1, SLOT_CHECK);
    cl_int err = CL_SUCCESS;
    for (int v = R2; fuses && v <= Q2 && st == CMRSCL_OK; ++v)
        if (!(s->vec[v] = clCreateBuffer(s->ctx->context, CL_MEM_READ_WRITE,
                                         (s->n ? s->n : 1) * s->value_size, NULL, &err)))
            st = cmrscl_fail_cl(err, "clCreateBuffer (the solver's vectors)");
    return st;
}

/* q = A p, leaving p.q and q.q (q.Dq with Jacobi: w = D); the fused iterations */
static cmrscl_status cg_bind_products(cmrscl_solver s)
{
    cmrscl_status st = cmrs_product_kernels_bind(&s->product[0], s->precision, 1.0, s->vec[P], 0.0,
                                                 s->vec[Q], true, s->ws, s->at.product, s->dinv);
    return st == CMRSCL_OK && s->vec[R2] ? fused_kernels(s) : st;
}

static cmrscl_status cg_start(cmrscl_solver s, cl_mem b, cl_mem x)
{
    solve_arg arg = SOLVE_MEM(x);
    cmrscl_status st = CMRSCL_OK;
    for (int k = STEP_EVEN; k <= CHECK && st == CMRSCL_OK; ++k)
        st = cmrs_solve_set_args(s->kernel[k], ARG_X, 1, &arg);
    for (int k = 0; k < 3 && s->fused[k].kernel && st == CMRSCL_OK; ++k)
        st = cmrs_solve_set_args(s->fused[k].kernel, CMRS_ARG_COUNT + CMRS_FUSED_SOLUTION, 1, &arg);
    if (st == CMRSCL_OK) /* p = D r, r.r and r.Dr */
        st = cmrs_solve_start_common(s, b, x, s->vec[P], NULL, s->dinv);
    if (st == CMRSCL_OK) /* q = A p, p.q and q.q (q.Dq) */
        st = cmrs_solve_product(s, 0);
    return st;
}

static cmrscl_status cg_iterate(cmrscl_solver s, int i, int max, unsigned parts)
{
    cmrscl_status st = CMRSCL_OK;
    if (s->fused[0].kernel) { /* the first after the start's product and its sums */
        if (i == 0 && (parts & ITER_AHEAD))
            st = cmrs_solve_product_sums(s);
        const product_kernels *k = &s->fused[i == 0 ? FUSED_FIRST : i % 2 ? FUSED_ODD : FUSED_EVEN];
        return st == CMRSCL_OK && (parts & ITER_X) ? cmrs_solve_product_kernels(s, k) : st;
    }
    if (parts & ITER_AHEAD)
        st = cmrs_solve_product_sums(s);
    if (st == CMRSCL_OK && (parts & ITER_X))
        st = cmrs_solve_launch(s, s->kernel[i % 2 ? STEP_ODD : STEP_EVEN], 0);
    if (st == CMRSCL_OK && (parts & ITER_BEHIND) && i < max - 1)
        st = cmrs_solve_product(s, 0);
    return st;
}

/* The test after the pass's last iteration: iteration max - 1 wrote r.r at rr[max % 2], or
 * with the fused iterations in pair (max - 1) % 2 of their regions. */
static cmrscl_status cg_check_last(cmrscl_solver s, int max)
{
    const solve_layout *a = &s->at;
    bool fused = s->fused[0].kernel != NULL;
    cl_uint g = fused ? fused_groups(s) : (cl_uint)s->groups,
            at = fused ? a->method + 4 * g * (cl_uint)((max - 1) % 2) : a->rr[max % 2];
    solve_arg args[] = {SOLVE_UINT(at), SOLVE_UINT(g)};
    cmrscl_status st = cmrs_solve_set_args(s->kernel[CHECK], 7, 2, args);
    return st == CMRSCL_OK ? cmrs_solve_launch(s, s->kernel[CHECK], 0) : st;
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
    .workspace = cg_workspace,
    .prepare = cg_prepare,
    .bind_products = cg_bind_products,
    .start = cg_start,
    .iterate = cg_iterate,
    .check_last = cg_check_last,
    .finish = cg_finish,
    .breakdown = cg_breakdown,
};
