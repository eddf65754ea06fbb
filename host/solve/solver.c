/* solver.c - the solvers' public calls (include/cmrscl_solve.h): the options checked and
 * their defaults filled in, a solver made (kernels, vectors, workspace) and freed, and a
 * solve's arguments checked before it runs (solve_run.c). */
#include "solve/solve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In float the device counts iterations in floats: exact up to 2^24. */
#define MAX_ITERATIONS_LIMIT (1 << 24)

static const solve_method *method_of(cmrscl_method id)
{
    switch (id) {
    case CMRSCL_METHOD_CG: return &cmrs_solve_cg;
    case CMRSCL_METHOD_BICGSTAB: return &cmrs_solve_bicgstab;
    case CMRSCL_METHOD_GMRES: return &cmrs_solve_gmres;
    }
    return NULL;
}

const char *cmrscl_method_name(cmrscl_method method)
{
    const solve_method *m = method_of(method);
    return m ? m->name : NULL;
}

const char *cmrscl_solve_reason_name(cmrscl_solve_reason reason)
{
    switch (reason) {
    case CMRSCL_SOLVE_CONVERGED: return "converged";
    case CMRSCL_SOLVE_MAX_ITERATIONS: return "max iterations";
    case CMRSCL_SOLVE_BREAKDOWN: return "breakdown";
    case CMRSCL_SOLVE_NONFINITE: return "NaN or Inf";
    case CMRSCL_SOLVE_BAD_INPUT: return "NaN or Inf in b or x0";
    case CMRSCL_SOLVE_DRIFTED: return "drifted";
    }
    return "unknown";
}

/* The options checked, with their defaults: *out ready for a solver of `rows` rows. */
static cmrscl_status check_options(const cmrscl_solve_options *in, int32_t rows,
                                   cmrscl_solve_options *out)
{
    cmrscl_solve_options o = {0};
    if (in)
        o = *in;
    const solve_method *method = method_of(o.method);
    if (!method)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "solve options: method %d is not CG (0), BiCGStab (1) or GMRES (2)",
                           (int)o.method);
    if ((unsigned)o.preconditioner > CMRSCL_PRECONDITIONER_AMG)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "solve options: preconditioner %d is not none (0), Jacobi (1) or AMG "
                           "(2)",
                           (int)o.preconditioner);
    if ((o.preconditioner == CMRSCL_PRECONDITIONER_AMG) != (o.precond != NULL))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           o.precond ? "solve options: a preconditioner object is given but "
                                       "preconditioner is not CMRSCL_PRECONDITIONER_AMG"
                                     : "solve options: CMRSCL_PRECONDITIONER_AMG needs its object "
                                       "in precond (cmrscl_precond_create_amg)");
    if (o.preconditioner == CMRSCL_PRECONDITIONER_JACOBI && !method->jacobi)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "solve options: the Jacobi preconditioner is CG's; %s takes none",
                           method->name);
    if (!(o.rtol >= 0) || !(o.atol >= 0) || isinf(o.rtol) || isinf(o.atol))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "solve options: rtol %g and atol %g must be finite and >= 0", o.rtol,
                           o.atol);
    if (o.rtol == 0 && o.atol == 0)
        o.rtol = 1e-5;
    if (o.max_iterations < 0 || o.max_iterations > MAX_ITERATIONS_LIMIT)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "solve options: max_iterations %d is outside 0..%d (0: 10 x rows)",
                           o.max_iterations, MAX_ITERATIONS_LIMIT);
    if (o.max_iterations == 0) {
        int64_t ten = 10 * (int64_t)rows;
        o.max_iterations = ten < 1                      ? 1
                           : ten > MAX_ITERATIONS_LIMIT ? MAX_ITERATIONS_LIMIT
                                                        : (int)ten;
    }
    if (o.check_interval < 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "solve options: check_interval %d < 0 (0: chosen as measured)",
                           o.check_interval);
    if (o.restart < 0 || o.restart > CMRSCL_MAX_RESTART)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "solve options: restart %d is outside 1..%d (0: 20)", o.restart,
                           CMRSCL_MAX_RESTART);
    if (o.restart == 0)
        o.restart = 20;
    *out = o;
    return CMRSCL_OK;
}

void cmrscl_solver_free(cmrscl_solver s)
{
    if (!s)
        return;
    cl_kernel common[] = {s->start, s->init, s->reduce, s->norm, s->triple};
    for (size_t i = 0; i < sizeof common / sizeof common[0]; ++i)
        if (common[i])
            clReleaseKernel(common[i]);
    for (size_t i = 0; i < s->view_count; ++i) /* sub-buffers before their buffer */
        if (s->views[i])
            clReleaseMemObject(s->views[i]);
    free(s->views);
    for (int i = 0; i < 8; ++i) {
        if (s->kernel[i])
            clReleaseKernel(s->kernel[i]);
        if (s->vec[i])
            clReleaseMemObject(s->vec[i]);
    }
    for (int i = 0; i < 2; ++i)
        cmrs_product_kernels_release(&s->product[i]);
    for (int i = 0; i < 3; ++i)
        cmrs_product_kernels_release(&s->fused[i]);
    if (s->ws)
        clReleaseMemObject(s->ws);
    if (s->pinned) {
        clEnqueueUnmapMemObject(s->ctx->queue, s->pinned, s->headers, 0, NULL, NULL);
        clFinish(s->ctx->queue);
        clReleaseMemObject(s->pinned);
    }
    if (s->dinv)
        clReleaseMemObject(s->dinv);
    for (int i = 0; i < 4; ++i)
        if (s->ordered[i])
            clReleaseMemObject(s->ordered[i]);
    free(s);
}

static bool queue_out_of_order(cl_command_queue q)
{
    cl_command_queue_properties props = 0;
    clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    return (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
}

/* Every buffer written once, so that a device that allocates on first use (NVIDIA's) does so
 * now and the set-up pays for it, not the first solve. */
static cmrscl_status touch_buffers(cmrscl_solver s)
{
    cl_uchar zero = 0;
    cl_int err = clEnqueueFillBuffer(s->queue, s->ws, &zero, 1, 0, s->at.reals * s->value_size, 0,
                                     NULL, NULL);
    size_t bytes = (s->n ? s->n : 1) * s->value_size;
    for (int i = 0; i < 8 && err == CL_SUCCESS; ++i) /* each holds n values at least */
        if (s->vec[i])
            err = clEnqueueFillBuffer(s->queue, s->vec[i], &zero, 1, 0, bytes, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clFinish(s->queue);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueFillBuffer (solver)");
}

/* The checks' two headers in pinned host memory (solve.h), else in the solver struct. */
static void map_headers(cmrscl_solver s)
{
    size_t bytes = (size_t)2 * CMRS_WS_HEADER * s->value_size;
    cl_int err;
    s->headers = s->own_headers;
    s->pinned = clCreateBuffer(s->ctx->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                               NULL, &err);
    void *host = s->pinned
                     ? clEnqueueMapBuffer(s->ctx->queue, s->pinned, CL_TRUE,
                                          CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &err)
                     : NULL;
    if (host)
        s->headers = host;
    else if (s->pinned)
        clReleaseMemObject(s->pinned), s->pinned = NULL;
}

/* A check's cost: the round trip of reading the header on an idle queue (the least of a few),
 * what the adaptive check interval weighs the iterations against. */
static cmrscl_status measure_check(cmrscl_solver s)
{
    map_headers(s);
    s->check_seconds = INFINITY;
    for (int k = 0; k < 3; ++k) {
        double t0 = cmrscl_seconds();
        cl_int err = clEnqueueReadBuffer(s->queue, s->ws, CL_TRUE, 0,
                                         CMRS_WS_HEADER * s->value_size, s->headers, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            return cmrscl_fail_cl(err, "clEnqueueReadBuffer (the solver's state)");
        double t = cmrscl_seconds() - t0;
        s->check_seconds = t < s->check_seconds ? t : s->check_seconds;
    }
    return CMRSCL_OK;
}

/* Product i with the method's epilogue (and the chain, where the solver takes it). */
static cmrscl_status make_product(cmrscl_solver s, int i)
{
    char options[128];
    const char *method = s->method->product_options(s, i);
    if (s->sums == SUMS_CHAIN) /* PTX's acq_rel atomics: sm_70 on */
        snprintf(options, sizeof options, "%s -DDOTS_CHAIN=%zu -DDOTS_CHAIN_ACQREL=%d", method,
                 s->chain, s->ctx->info.nv_compute_capability >= 70);
    else
        snprintf(options, sizeof options, "%s", method);
    cmrscl_status st = cmrs_product_kernels_make(s->m, options, s->fold_cap, &s->product[i]);
    if (st == CMRSCL_OK &&
        (s->product[i].groups != s->product_groups || s->product[i].space != s->product_space))
        st = cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                         "the matrix's product was planned anew after a values update: make "
                         "the solver again");
    return st;
}

cmrscl_status cmrscl_solver_create(cmrscl_matrix m, const cmrscl_solve_options *opt,
                                   cmrscl_solver *out)
{
    if (out)
        *out = NULL;
    if (!m || !out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix or out is NULL");
    const cmrscl_params *p = &m->params;
    if (p->rows != p->cols)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "a solver needs a square matrix: this one is %d x %d", p->rows, p->cols);
    cmrscl_solve_options o;
    cmrscl_status st = check_options(opt, p->rows, &o);
    if (st != CMRSCL_OK)
        return st;
    cmrscl_solver s = calloc(1, sizeof *s);
    if (!s)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a solver");
    s->m = m, s->ctx = m->ctx, s->opt = o, s->method = method_of(o.method);
    if (o.preconditioner == CMRSCL_PRECONDITIONER_AMG) /* around an operator of its own */
        s->method = o.method == CMRSCL_METHOD_CG         ? &cmrs_solve_pcg
                    : o.method == CMRSCL_METHOD_BICGSTAB ? &cmrs_solve_pbicgstab
                                                         : &cmrs_solve_pgmres;
    s->precision = p->precision, s->value_size = cmrscl_precision_size(p->precision);
    s->n = (cl_uint)p->rows;
    s->queue = m->ctx->queue, s->out_of_order = queue_out_of_order(s->queue);
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < s->method->vectors && st == CMRSCL_OK; ++i) {
        s->vec[i] = clCreateBuffer(s->ctx->context, CL_MEM_READ_WRITE,
                                   (s->n ? s->n : 1) * s->value_size, NULL, &err);
        if (!s->vec[i])
            st = cmrscl_fail_cl(err, "clCreateBuffer (the solver's vectors)");
    }
    int ordered = !m->renumbering ? 0 : o.preconditioner == CMRSCL_PRECONDITIONER_AMG ? 4 : 2;
    for (int i = 0; i < ordered && st == CMRSCL_OK; ++i) {
        s->ordered[i] = clCreateBuffer(s->ctx->context, CL_MEM_READ_WRITE,
                                       (s->n ? s->n : 1) * s->value_size, NULL, &err);
        if (!s->ordered[i])
            st = cmrscl_fail_cl(err, "clCreateBuffer (the solver's vectors)");
    }
    if (st == CMRSCL_OK)
        st = cmrs_solve_kernels_make(s);
    if (st == CMRSCL_OK)
        cmrs_solve_choose_sums(s);
    for (int i = 0; i < s->method->products && st == CMRSCL_OK; ++i)
        st = make_product(s, i);
    if (st == CMRSCL_OK)
        st = cmrs_solve_workspace_make(s, s->method->workspace ? s->method->workspace(s) : 0);
    if (st == CMRSCL_OK)
        st = s->method->prepare(s);
    if (st == CMRSCL_OK)
        st = s->method->bind_products(s);
    if (st == CMRSCL_OK)
        st = touch_buffers(s);
    if (st == CMRSCL_OK)
        st = measure_check(s);
    if (st != CMRSCL_OK) {
        cmrscl_solver_free(s);
        return st;
    }
    *out = s;
    return CMRSCL_OK;
}

/* The products made again after the matrix's kernels were (a values update that stored the
 * values another way): the kernels the solver holds name the matrix's old buffers. */
static cmrscl_status refresh_products(cmrscl_solver s)
{
    if (s->product[0].kernels_made == s->m->kernels_made)
        return CMRSCL_OK;
    cmrscl_status st = CMRSCL_OK;
    for (int i = 0; i < s->method->products && st == CMRSCL_OK; ++i) {
        cmrs_product_kernels_release(&s->product[i]);
        st = make_product(s, i);
    }
    return st == CMRSCL_OK ? s->method->bind_products(s) : st;
}

/* A renumbered matrix's solve in the device's order from start to end: b and x0 gathered into
 * it, x scattered back - also when the solve stopped early (x holds the last iterate). */
static cmrscl_status run_renumbered(cmrscl_solver s, cl_mem b, cl_mem x, cmrscl_solve_result *out)
{
    cl_mem ob = s->ordered[0], ox = s->ordered[1];
    cmrscl_status st = cmrs_solve_renumber(s, true, b, ob);
    if (st == CMRSCL_OK)
        st = cmrs_solve_renumber(s, true, x, ox);
    if (st != CMRSCL_OK)
        return st;
    cmrscl_status ran = cmrs_solve_run(s, ob, ox, out);
    st = cmrs_solve_renumber(s, false, ox, x);
    cl_int err = st == CMRSCL_OK ? clFinish(s->queue) : CL_SUCCESS; /* x written on return */
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clFinish (solver)");
    return ran != CMRSCL_OK ? ran : st;
}

cmrscl_status cmrscl_solver_solve(cmrscl_solver s, cl_mem b, cl_mem x, cl_command_queue queue,
                                  cl_uint num_wait, const cl_event *wait_list,
                                  cmrscl_solve_result *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!s || !out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "solver or out is NULL");
    if ((num_wait > 0) != (wait_list != NULL))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "num_wait and wait_list disagree");
    size_t bytes = s->n * s->value_size;
    cmrscl_status st = cmrs_buffer_check(s->ctx->context, b, bytes, "b");
    if (st == CMRSCL_OK)
        st = cmrs_buffer_check(s->ctx->context, x, bytes, "x");
    if (st == CMRSCL_OK && queue)
        st = cmrs_spmv_check_queue(s->m, queue);
    if (st == CMRSCL_OK && b == x && s->n)
        st = cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "b and x must be different buffers");
    if (st != CMRSCL_OK)
        return st;
    double t0 = cmrscl_seconds();
    s->queue = queue ? queue : s->ctx->queue;
    s->out_of_order = queue_out_of_order(s->queue);
    cl_int err =
        num_wait ? clEnqueueBarrierWithWaitList(s->queue, num_wait, wait_list, NULL) : CL_SUCCESS;
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clEnqueueBarrierWithWaitList (solver)");
    if (s->n == 0) { /* nothing to solve */
        out->reason = CMRSCL_SOLVE_CONVERGED, out->converged = 1;
        return CMRSCL_OK;
    }
    st = refresh_products(s);
    if (st == CMRSCL_OK && s->opt.preconditioner == CMRSCL_PRECONDITIONER_JACOBI)
        st = cmrs_solve_jacobi(s); /* again after a values update */
    if (st == CMRSCL_OK)
        st = s->m->renumbering ? run_renumbered(s, b, x, out) : cmrs_solve_run(s, b, x, out);
    out->seconds = cmrscl_seconds() - t0;
    return st;
}

cmrscl_status cmrscl_solver_solve_host(cmrscl_solver s, const void *b, void *x,
                                       cmrscl_solve_result *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!s || !out || (s->n && (!b || !x)))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "solver, b, x or out is NULL");
    size_t bytes = (s->n ? s->n : 1) * s->value_size;
    double none = 0; /* no rows: a buffer of one value all the same */
    cl_int err = CL_SUCCESS;
    cl_mem bb = clCreateBuffer(s->ctx->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                               s->n ? (void *)b : &none, &err);
    cl_mem xb = bb ? clCreateBuffer(s->ctx->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                    bytes, s->n ? x : &none, &err)
                   : NULL;
    cmrscl_status st = xb ? CMRSCL_OK : cmrscl_fail_cl(err, "clCreateBuffer (b, x)");
    if (st == CMRSCL_OK) {
        st = cmrscl_solver_solve(s, bb, xb, NULL, 0, NULL, out);
        /* the last iterate comes back whatever the outcome */
        err = s->n ? clEnqueueReadBuffer(s->ctx->queue, xb, CL_TRUE, 0, s->n * s->value_size, x, 0,
                                         NULL, NULL)
                   : CL_SUCCESS;
        if (st == CMRSCL_OK && err != CL_SUCCESS)
            st = cmrscl_fail_cl(err, "clEnqueueReadBuffer (x)");
    }
    if (bb)
        clReleaseMemObject(bb);
    if (xb)
        clReleaseMemObject(xb);
    return st;
}

cmrscl_status cmrscl_solve(cmrscl_matrix m, const cmrscl_solve_options *opt, cl_mem b, cl_mem x,
                           cmrscl_solve_result *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    cmrscl_solver s = NULL;
    cmrscl_status st = cmrscl_solver_create(m, opt, &s);
    if (st == CMRSCL_OK)
        st = cmrscl_solver_solve(s, b, x, NULL, 0, NULL, out);
    cmrscl_solver_free(s);
    return st;
}

cmrscl_status cmrscl_solve_host(cmrscl_matrix m, const cmrscl_solve_options *opt, const void *b,
                                void *x, cmrscl_solve_result *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    cmrscl_solver s = NULL;
    cmrscl_status st = cmrscl_solver_create(m, opt, &s);
    if (st == CMRSCL_OK)
        st = cmrscl_solver_solve_host(s, b, x, out);
    cmrscl_solver_free(s);
    return st;
}

void cmrscl_solve_result_free(cmrscl_solve_result *r)
{
    if (!r)
        return;
    free(r->history);
    memset(r, 0, sizeof *r);
}
