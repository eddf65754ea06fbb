/* solve_gmres.c - restarted GMRES(m) (Saad and Schultz 1986), classical Gram-Schmidt in one
 * pass (PETSc's default), the Hessenberg matrix's QR by Givens rotations on the device
 * (cl/solve_gmres.cl). An iteration is an Arnoldi step: the product w = A v_j, gmres_dots,
 * gmres_orth, gmres_norm - four launches; a cycle's end adds six (the cycle applied to x,
 * r = b - A x again and its norm, the next v0). The basis is one buffer of m + 1 vectors at a
 * stride the device's sub-buffers may start at, so a product takes v_j as a sub-buffer
 * while the other kernels index all of them.
 * With a preconditioner object (AMG), preconditioned on the right (Saad's Algorithm 9.5):
 * A M u = b, x = M u, so the residual GMRES minimises is still b - A x. A step takes
 * z = M v_j before w = A z; a cycle's end forms V y in w (free then), applies M to it and adds
 * that to x (gmres_add): one application of M a cycle more, not a second basis of z's
 * (flexible GMRES keeps one: M here is the same linear operator every step). */
#include "solve/solve.h"

#include <stdio.h>
#include <stdlib.h>

_Static_assert(CMRSCL_MAX_RESTART == CMRS_GMRES_MAX, "GMRES's longest cycle, host and kernels");

enum { R, W, Z, BASIS }; /* the vectors: Z = M v_j with M; BASIS made apart (make_basis) */
enum { BEGIN, DOTS, ORTH, NORM, SOLVE, UPDATE, RESTART_NORM, ADD }; /* the kernels */
enum {
    ARG_UPDATE_X = 1,
    ARG_DOTS_J = 8,
    ARG_ORTH_J = 8,
    ARG_NORM_J = 7,
    ARG_NORM_SLOT = 11
}; /* set per use */
/* stop slots (cmrs_abi.h): gmres_norm's alternate, steps j and j + 1 seeing each other's stop */
enum { SLOT_BEGIN = 1, SLOT_NORM_EVEN, SLOT_NORM_ODD };
#define MAX_CHUNKS 64 /* work-groups a dot product of gmres_dots takes at most */

static bool preconditioned(const cmrscl_solver s)
{
    return s->opt.preconditioner == CMRSCL_PRECONDITIONER_AMG;
}

static cl_uint chunks(const cmrscl_solver s)
{
    return (cl_uint)(s->groups < MAX_CHUNKS ? s->groups : MAX_CHUNKS);
}

/* The method's region: 4 slots, H, R, cs, sn, g, gr, y, the dots' partial sums (as the
 * kernels' G_ offsets). */
static cl_uint gmres_workspace(const cmrscl_solver s)
{
    cl_uint m = (cl_uint)s->opt.restart;
    return 4 + (m + 1) * m + m * m + m + m + (m + 1) + m + m + (m + 1) * chunks(s);
}

static const char *gmres_products(const cmrscl_solver s, int i)
{
    (void)s, (void)i;
    return ""; /* the plain product: GMRES's dots are against many vectors (gmres_dots) */
}

/* The basis buffer and a sub-buffer per vector, at a stride sub-buffers may start at. */
static cmrscl_status make_basis(cmrscl_solver s, cl_uint *stride)
{
    cl_uint align_bits = 0;
    clGetDeviceInfo(s->ctx->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits,
                    NULL);
    size_t unit = align_bits / 8 / s->value_size, n = s->n ? s->n : 1;
    unit = unit ? unit : 1;
    size_t step = (n + unit - 1) / unit * unit, count = (size_t)s->opt.restart + 1;
    if (step * count > UINT32_MAX)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                           "gmres: %zu basis vectors of %u values exceed 2^32 values", count, s->n);
    cl_int err;
    s->vec[BASIS] = clCreateBuffer(s->ctx->context, CL_MEM_READ_WRITE, step * count * s->value_size,
                                   NULL, &err);
    if (!s->vec[BASIS])
        return cmrscl_fail_cl(err, "clCreateBuffer (GMRES's basis)");
    s->views = calloc(count, sizeof *s->views);
    if (!s->views)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for GMRES's basis");
    s->view_count = count;
    for (size_t k = 0; k < count; ++k) {
        cl_buffer_region region = {k * step * s->value_size, n * s->value_size};
        s->views[k] = clCreateSubBuffer(s->vec[BASIS], CL_MEM_READ_WRITE,
                                        CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
        if (!s->views[k])
            return cmrscl_fail_cl(err, "clCreateSubBuffer (GMRES's basis)");
    }
    *stride = (cl_uint)step;
    return CMRSCL_OK;
}

static cmrscl_status gmres_prepare(cmrscl_solver s)
{
    cl_uint stride = 0, n = s->n, m = (cl_uint)s->opt.restart, ch = chunks(s);
    cl_uint groups = (cl_uint)s->groups, at = s->at.method, zero = 0, begin_slot = SLOT_BEGIN;
    cmrscl_status st = preconditioned(s) ? cmrs_solve_precond_check(s) : CMRSCL_OK;
    if (st == CMRSCL_OK)
        st = make_basis(s, &stride);
    static const char *const names[] = {"gmres_begin", "gmres_dots",  "gmres_orth",
                                        "gmres_norm",  "gmres_solve", "gmres_update"};
    for (int k = BEGIN; k <= UPDATE && st == CMRSCL_OK; ++k)
        st = cmrs_solve_kernel(s, true, names[k], &s->kernel[k]);
    if (st == CMRSCL_OK)
        st = cmrs_solve_kernel(s, false, "solve_norm", &s->kernel[RESTART_NORM]);
    cl_mem none = NULL, *v = s->vec;
    solve_arg begin[] = {SOLVE_UINT(n),         SOLVE_MEM(v[R]),         SOLVE_MEM(v[BASIS]),
                         SOLVE_MEM(s->ws),      SOLVE_UINT(s->at.rr[0]), SOLVE_UINT(groups),
                         SOLVE_UINT(at),        SOLVE_UINT(m),           SOLVE_UINT(s->at.history),
                         SOLVE_UINT(begin_slot)};
    solve_arg dots[] = {SOLVE_UINT(n),    SOLVE_MEM(v[BASIS]), SOLVE_UINT(stride), SOLVE_MEM(v[W]),
                        SOLVE_MEM(s->ws), SOLVE_UINT(at),      SOLVE_UINT(m),      SOLVE_UINT(ch)};
    solve_arg orth[] = {SOLVE_UINT(n),          SOLVE_MEM(v[BASIS]), SOLVE_UINT(stride),
                        SOLVE_MEM(v[W]),        SOLVE_MEM(s->ws),    SOLVE_UINT(at),
                        SOLVE_UINT(m),          SOLVE_UINT(ch),      SOLVE_UINT(zero),
                        SOLVE_UINT(s->at.rr[1])};
    solve_arg norm[] = {SOLVE_UINT(n),      SOLVE_MEM(v[W]),           SOLVE_MEM(v[BASIS]),
                        SOLVE_UINT(stride), SOLVE_MEM(s->ws),          SOLVE_UINT(at),
                        SOLVE_UINT(m),      SOLVE_UINT(zero),          SOLVE_UINT(s->at.rr[1]),
                        SOLVE_UINT(groups), SOLVE_UINT(s->at.history), SOLVE_UINT(begin_slot)};
    solve_arg solve[] = {SOLVE_MEM(s->ws), SOLVE_UINT(at), SOLVE_UINT(m)};
    solve_arg update[] = {SOLVE_UINT(n),      SOLVE_MEM(none),  SOLVE_MEM(v[BASIS]),
                          SOLVE_UINT(stride), SOLVE_MEM(s->ws), SOLVE_UINT(at),
                          SOLVE_UINT(m)};
    solve_arg restart[] = {SOLVE_UINT(n), SOLVE_MEM(v[R]), SOLVE_MEM(none), SOLVE_MEM(s->ws),
                           SOLVE_UINT(s->at.rr[0])};
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[BEGIN], 0, 10, begin);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[DOTS], 0, 8, dots);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[ORTH], 0, 10, orth);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[NORM], 0, 12, norm); /* its slot: per step */
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[SOLVE], 0, 3, solve);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[UPDATE], 0, 7, update);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[RESTART_NORM], 0, 5, restart);
    solve_arg add[] = {SOLVE_UINT(n), SOLVE_MEM(none), SOLVE_MEM(v[Z]), SOLVE_MEM(s->ws)};
    if (st == CMRSCL_OK && preconditioned(s))
        st = cmrs_solve_kernel(s, true, "gmres_add", &s->kernel[ADD]);
    if (st == CMRSCL_OK && preconditioned(s))
        st = cmrs_solve_set_args(s->kernel[ADD], 0, 4, add);
    return st;
}

static cmrscl_status gmres_bind_products(cmrscl_solver s)
{
    (void)s; /* bound at each step: the product of v_j */
    return CMRSCL_OK;
}

static cmrscl_status gmres_start(cmrscl_solver s, cl_mem b, cl_mem x)
{
    /* x += V y, or with M: w = V y (from 0), then x += M w */
    solve_arg arg = SOLVE_MEM(x), w = SOLVE_MEM(s->vec[W]);
    cmrscl_status st =
        cmrs_solve_set_args(s->kernel[UPDATE], ARG_UPDATE_X, 1, preconditioned(s) ? &w : &arg);
    if (st == CMRSCL_OK && preconditioned(s))
        st = cmrs_solve_set_args(s->kernel[ADD], ARG_UPDATE_X, 1, &arg);
    if (st == CMRSCL_OK) /* r.r, the threshold */
        st = cmrs_solve_start_common(s, b, x, NULL, NULL, NULL);
    if (st == CMRSCL_OK) /* v0 = r / ||r|| */
        st = cmrs_solve_launch(s, s->kernel[BEGIN], 0);
    return st;
}

/* The cycle applied to x: R y = g, x += V y (only what is not applied yet); with M,
 * x += M (V y). */
static cmrscl_status apply_cycle(cmrscl_solver s)
{
    cmrscl_status st = cmrs_solve_launch(s, s->kernel[SOLVE], 1);
    if (st == CMRSCL_OK && preconditioned(s))
        st = cmrs_solve_fill_zero(s, s->vec[W]);
    if (st == CMRSCL_OK)
        st = cmrs_solve_launch(s, s->kernel[UPDATE], 0);
    if (st == CMRSCL_OK && preconditioned(s))
        st = cmrs_solve_precondition(s, s->vec[W], s->vec[Z]);
    if (st == CMRSCL_OK && preconditioned(s))
        st = cmrs_solve_launch(s, s->kernel[ADD], 0);
    return st;
}

/* Iteration i up to its norm: at a cycle's end x, r = b - A x, ||r|| and v0; then Arnoldi step
 * j: w = A v_j, the dots, w orthogonalized. */
static cmrscl_status arnoldi_ahead(cmrscl_solver s, int i, cl_uint j)
{
    cmrscl_status st = CMRSCL_OK;
    if (j == 0 && i > 0) {
        st = apply_cycle(s);
        if (st == CMRSCL_OK)
            st = cmrs_solve_copy(s, s->b, s->vec[R]);
        if (st == CMRSCL_OK)
            st = cmrs_solve_plain_product(s, -1.0, s->x, 1.0, s->vec[R]);
        if (st == CMRSCL_OK)
            st = cmrs_solve_launch(s, s->kernel[RESTART_NORM], 0);
        if (st == CMRSCL_OK)
            st = cmrs_solve_launch(s, s->kernel[BEGIN], 0);
    }
    if (st == CMRSCL_OK && preconditioned(s))
        st = cmrs_solve_precondition(s, s->views[j], s->vec[Z]);
    if (st == CMRSCL_OK)
        st = cmrs_product_kernels_bind(&s->product[0], s->precision, 1.0,
                                       preconditioned(s) ? s->vec[Z] : s->views[j], 0.0, s->vec[W],
                                       false, NULL, 0, NULL);
    if (st == CMRSCL_OK)
        st = cmrs_solve_product(s, 0);
    solve_arg arg = SOLVE_UINT(j);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[DOTS], ARG_DOTS_J, 1, &arg);
    if (st == CMRSCL_OK) /* GMRES_DOTS_PER vectors a work-group */
        st = cmrs_solve_launch(s, s->kernel[DOTS], (size_t)(j / GMRES_DOTS_PER(s) + 1) * chunks(s));
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[ORTH], ARG_ORTH_J, 1, &arg);
    if (st == CMRSCL_OK)
        st = cmrs_solve_launch(s, s->kernel[ORTH], 0);
    return st;
}

/* x changes at a cycle's end, in AHEAD: a monitor is not handed x (cmrscl_solve.h). X: the
 * norm and the rotations, the residual into the header. */
static cmrscl_status gmres_iterate(cmrscl_solver s, int i, int max, unsigned parts)
{
    (void)max;
    cl_uint j = (cl_uint)(i % s->opt.restart);
    cmrscl_status st = parts & ITER_AHEAD ? arnoldi_ahead(s, i, j) : CMRSCL_OK;
    if (st != CMRSCL_OK || !(parts & ITER_X))
        return st;
    solve_arg arg = SOLVE_UINT(j);
    cl_uint norm_slot = j % 2 ? SLOT_NORM_ODD : SLOT_NORM_EVEN;
    solve_arg slot = SOLVE_UINT(norm_slot);
    st = cmrs_solve_set_args(s->kernel[NORM], ARG_NORM_J, 1, &arg);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->kernel[NORM], ARG_NORM_SLOT, 1, &slot);
    return st == CMRSCL_OK ? cmrs_solve_launch(s, s->kernel[NORM], 0) : st;
}

static cmrscl_status gmres_check_last(cmrscl_solver s, int max)
{
    (void)s, (void)max; /* every step tests its residual */
    return CMRSCL_OK;
}

static cmrscl_status gmres_finish(cmrscl_solver s, cl_mem x)
{
    (void)x;
    return apply_cycle(s);
}

static void gmres_breakdown(const cmrscl_solver s, double v, int cause, int it, char *why,
                            size_t size)
{
    (void)s, (void)cause;
    snprintf(why, size,
             "gmres: the Arnoldi process broke down at iteration %d (a rotation of norm %g): the "
             "matrix is singular on the Krylov space",
             it, v);
}

/* GMRES's method, with `count` work vectors besides the basis (make_basis): R and W, or Z
 * too with a preconditioner object; the functions tell the two apart by the solver's options. */
#define GMRES_METHOD(count)                                                                        \
    {                                                                                              \
        .id = CMRSCL_METHOD_GMRES, .name = "gmres", .vectors = (count), .products = 1,             \
        .product_options = gmres_products, .jacobi = false, .workspace = gmres_workspace,          \
        .prepare = gmres_prepare, .bind_products = gmres_bind_products, .start = gmres_start,      \
        .iterate = gmres_iterate, .check_last = gmres_check_last, .finish = gmres_finish,          \
        .breakdown = gmres_breakdown,                                                              \
    }
const solve_method cmrs_solve_gmres = GMRES_METHOD(2);
const solve_method cmrs_solve_pgmres = GMRES_METHOD(3);
