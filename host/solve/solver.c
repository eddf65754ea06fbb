/* solver.c - the solvers' public calls (include/cmrscl_solve.h): the options checked and
 * their defaults filled in, a solver made (kernels, vectors, workspace) and freed, and a
 * solve - r = b - A x0, the method's start, its iterations enqueued in batches between
 * checks of the device's state, then the history and the true residual. A check reads the
 * workspace's header without stalling the device: the host enqueues the next batch before it
 * waits for the read behind it, so the device always has work (unless a monitor wants each
 * check as it happens). */
#include "solve/solve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In float the device counts iterations in floats: exact up to 2^24. */
#define MAX_ITERATIONS_LIMIT (1 << 24)
#define MAX_CHECK_INTERVAL 64

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
    if ((unsigned)o.preconditioner > CMRSCL_PRECONDITIONER_JACOBI)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "solve options: preconditioner %d is neither none (0) nor Jacobi (1)",
                           (int)o.preconditioner);
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
                           "solve options: restart %d is outside 1..%d (0: 30)", o.restart,
                           CMRSCL_MAX_RESTART);
    if (o.restart == 0)
        o.restart = 30;
    *out = o;
    return CMRSCL_OK;
}

void cmrscl_solver_free(cmrscl_solver s)
{
    if (!s)
        return;
    cl_kernel common[] = {s->start, s->init, s->reduce, s->norm};
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
    if (s->dinv)
        clReleaseMemObject(s->dinv);
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

/* A check's cost: the round trip of reading the header on an idle queue (the least of a few),
 * what the adaptive check interval weighs the iterations against. */
static cmrscl_status measure_check(cmrscl_solver s)
{
    double header[CMRS_WS_HEADER];
    s->check_seconds = INFINITY;
    for (int k = 0; k < 3; ++k) {
        double t0 = cmrscl_seconds();
        cl_int err = clEnqueueReadBuffer(s->queue, s->ws, CL_TRUE, 0,
                                         CMRS_WS_HEADER * s->value_size, header, 0, NULL, NULL);
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
    cmrscl_status st = cmrs_product_kernels_make(s->m, options, &s->product[i]);
    if (st == CMRSCL_OK && s->product[i].groups != s->product_groups)
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

/* Header slot `slot` of a header read back in the solver's precision. */
static double slot_of(const cmrscl_solver s, const void *header, int slot)
{
    return s->precision == CMRSCL_DOUBLE ? ((const double *)header)[slot]
                                         : ((const float *)header)[slot];
}

/* Why the solve stopped (a CMRS_STOP_ code; 0: it has not): its stop slots' first set one. */
static int stop_of(const cmrscl_solver s, const void *header)
{
    for (int j = 0; j < CMRS_WS_STOP_SLOTS; ++j)
        if (slot_of(s, header, CMRS_WS_STOP + j) != 0)
            return (int)slot_of(s, header, CMRS_WS_STOP + j);
    return 0;
}

static cmrscl_status read_header(cmrscl_solver s, void *header, bool blocking, cl_event *done)
{
    cl_int err = clEnqueueReadBuffer(s->queue, s->ws, blocking ? CL_TRUE : CL_FALSE, 0,
                                     CMRS_WS_HEADER * s->value_size, header, 0, NULL, done);
    if (err == CL_SUCCESS && !blocking)
        err = clFlush(s->queue);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "reading the solver's state");
}

/* The interval that balances the checks' cost (i / k checks of c seconds) against the
 * iterations run past convergence (about k / 2 of t seconds): k = sqrt(2 i c / t), with the
 * iterations done so far, i, standing for those still to come. */
static int adapt_interval(const cmrscl_solver s, int done, double per_iteration)
{
    if (done < 1 || !(per_iteration > 0))
        return 1;
    double k = sqrt(2.0 * done * s->check_seconds / per_iteration);
    return k < 1 ? 1 : k > MAX_CHECK_INTERVAL ? MAX_CHECK_INTERVAL : (int)(k + 0.5);
}

/* The iterations, in batches between checks, until the device stops the solve or max. */
static cmrscl_status iterate(cmrscl_solver s, cmrscl_solve_result *res)
{
    const int max = s->opt.max_iterations;
    double header[2][CMRS_WS_HEADER];
    cl_event read[2] = {NULL, NULL};
    int enqueued[2] = {0, 0}, slot = 0, i = 0,
        k = s->opt.check_interval ? s->opt.check_interval : 1;
    bool pipelined = !s->opt.monitor;
    cmrscl_status st = CMRSCL_OK;
    double t0 = cmrscl_seconds();
    s->launches = 0;
    while (st == CMRSCL_OK) {
        int batch = k < max - i ? k : max - i;
        for (int j = 0; j < batch && st == CMRSCL_OK; ++j)
            st = s->method->iterate(s, i + j, max);
        i += batch;
        if (st == CMRSCL_OK && i == max)
            st = s->method->check_last(s, max);
        if (st == CMRSCL_OK)
            st = read_header(s, header[slot], false, &read[slot]);
        if (st != CMRSCL_OK)
            break;
        enqueued[slot] = i;
        ++res->checks;
        /* the check behind this one, while the device runs this batch (the first and the
         * last: this one) */
        int look = pipelined && read[slot ^ 1] && i < max ? slot ^ 1 : slot;
        cl_int err = clWaitForEvents(1, &read[look]);
        clReleaseEvent(read[look]), read[look] = NULL;
        if (err != CL_SUCCESS) {
            st = cmrscl_fail_cl(err, "waiting for the solver's state");
            break;
        }
        if (s->opt.monitor)
            s->opt.monitor(s->opt.monitor_data, (int)slot_of(s, header[look], CMRS_WS_ITER),
                           sqrt(slot_of(s, header[look], CMRS_WS_RR)));
        if (stop_of(s, header[look]) != 0 || i >= max)
            break;
        if (!s->opt.check_interval)
            k = adapt_interval(s, enqueued[look], (cmrscl_seconds() - t0) / enqueued[look]);
        slot ^= 1;
    }
    for (int j = 0; j < 2; ++j)
        if (read[j]) {
            clWaitForEvents(1, &read[j]);
            clReleaseEvent(read[j]);
        }
    cl_int err = clFinish(s->queue);
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clFinish (solver)");
    res->iterate_seconds = cmrscl_seconds() - t0;
    res->check_interval = k;
    res->launches_per_iteration = i ? (s->launches + i / 2) / i : 0;
    return st;
}

/* ||b - A x|| from a product, the partial sums added in double on the host. */
static cmrscl_status true_residual(cmrscl_solver s, cl_mem b, cl_mem x, double *out)
{
    cl_mem t = s->vec[1]; /* free once the method is done */
    cmrscl_status st = cmrs_solve_copy(s, b, t);
    if (st == CMRSCL_OK)
        st = cmrs_solve_plain_product(s, -1.0, x, 1.0, t);
    if (st == CMRSCL_OK)
        st = cmrs_solve_launch(s, s->norm, 0);
    size_t count = 4 * s->groups;
    double *sums = st == CMRSCL_OK ? cmrscl_alloc(count, sizeof(double)) : NULL;
    if (st == CMRSCL_OK && !sums)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the solver");
    cl_int err = st == CMRSCL_OK
                     ? clEnqueueReadBuffer(s->queue, s->ws, CL_TRUE, s->at.second * s->value_size,
                                           count * s->value_size, sums, 0, NULL, NULL)
                     : CL_SUCCESS;
    if (err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clEnqueueReadBuffer (the true residual)");
    double sum = 0;
    for (size_t g = 0; st == CMRSCL_OK && g < s->groups; ++g)
        sum += s->precision == CMRSCL_DOUBLE ? sums[4 * g] : ((const float *)sums)[4 * g];
    free(sums);
    *out = sqrt(sum);
    return st;
}

/* The history, ||r_k|| for k = 0..iterations, read back once. */
static cmrscl_status read_history(cmrscl_solver s, int iterations, cmrscl_solve_result *res)
{
    size_t n = (size_t)iterations + 1;
    if (n > s->at.history_cap)
        n = s->at.history_cap;
    void *raw = cmrscl_alloc(n, s->value_size);
    res->history = cmrscl_alloc(n, sizeof(double));
    if (!raw || !res->history) {
        free(raw), free(res->history), res->history = NULL;
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the history");
    }
    cl_int err = clEnqueueReadBuffer(s->queue, s->ws, CL_TRUE, s->at.history * s->value_size,
                                     n * s->value_size, raw, 0, NULL, NULL);
    for (size_t k = 0; err == CL_SUCCESS && k < n; ++k) {
        double rr = slot_of(s, raw, (int)k);
        res->history[k] = sqrt(rr > 0 ? rr : 0);
    }
    free(raw);
    res->history_length = err == CL_SUCCESS ? (int)n : 0;
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueReadBuffer (history)");
}

/* The outcome from the header: the result's fields, and the status with its message. */
static cmrscl_status outcome(cmrscl_solver s, const void *header, cmrscl_solve_result *res)
{
    int stop = stop_of(s, header);
    double value = slot_of(s, header, CMRS_WS_VALUE);
    res->iterations = (int)slot_of(s, header, CMRS_WS_ITER);
    res->residual = sqrt(fmax(slot_of(s, header, CMRS_WS_RR), 0));
    res->b_norm = sqrt(fmax(slot_of(s, header, CMRS_WS_BB), 0));
    res->threshold = sqrt(fmax(slot_of(s, header, CMRS_WS_THRESHOLD), 0));
    res->breakdown = value;
    const char *name = s->method->name;
    switch (stop) {
    case 0: res->reason = CMRSCL_SOLVE_MAX_ITERATIONS; return CMRSCL_OK;
    case CMRS_STOP_CONVERGED:
        res->reason = CMRSCL_SOLVE_CONVERGED, res->converged = 1;
        return CMRSCL_OK;
    case CMRS_STOP_BAD_INPUT: {
        double bad_b = slot_of(s, header, CMRS_WS_BAD_B), bad_x = slot_of(s, header, CMRS_WS_BAD_X);
        res->reason = CMRSCL_SOLVE_BAD_INPUT;
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "%s: %s holds %.0f values that are NaN or Inf", name,
                           bad_b ? "b" : "x0 (x on entry)", bad_b ? bad_b : bad_x);
    }
    case CMRS_STOP_BREAKDOWN: {
        char why[256];
        s->method->breakdown(s, value, (int)slot_of(s, header, CMRS_WS_CAUSE), res->iterations, why,
                             sizeof why);
        res->reason = CMRSCL_SOLVE_BREAKDOWN;
        return cmrscl_fail(CMRSCL_ERROR_BREAKDOWN, "%s", why);
    }
    default:
        res->reason = CMRSCL_SOLVE_NONFINITE;
        return cmrscl_fail(CMRSCL_ERROR_BREAKDOWN,
                           "%s: a scalar of the recurrence became %g at iteration %d (a value "
                           "beyond the precision's range, or NaN or Inf in the matrix)",
                           name, value, res->iterations);
    }
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
    s->b = b, s->x = x;
    st = refresh_products(s);
    if (st == CMRSCL_OK && s->opt.preconditioner == CMRSCL_PRECONDITIONER_JACOBI)
        st = cmrs_solve_jacobi(s); /* again after a values update */
    /* r = b - A x0, then the method's start; the iterations are timed from a quiet queue */
    if (st == CMRSCL_OK)
        st = cmrs_solve_copy(s, b, s->vec[0]);
    if (st == CMRSCL_OK)
        st = cmrs_solve_plain_product(s, -1.0, x, 1.0, s->vec[0]);
    if (st == CMRSCL_OK)
        st = s->method->start(s, b, x);
    if (st == CMRSCL_OK && (err = clFinish(s->queue)) != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clFinish (solver)");
    if (st == CMRSCL_OK)
        st = iterate(s, out);
    if (st == CMRSCL_OK)
        st = s->method->finish(s, x);
    double header[CMRS_WS_HEADER];
    if (st == CMRSCL_OK)
        st = read_header(s, header, true, NULL);
    cl_uchar zero = 0;
    if (st == CMRSCL_OK && slot_of(s, header, CMRS_WS_ZERO_B) != 0 &&
        (err = clEnqueueFillBuffer(s->queue, x, &zero, 1, 0, bytes, 0, NULL, NULL)) != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clEnqueueFillBuffer (x = 0 for b = 0)");
    if (st == CMRSCL_OK)
        st = true_residual(s, b, x, &out->true_residual);
    if (st == CMRSCL_OK)
        st = read_history(s, (int)slot_of(s, header, CMRS_WS_ITER), out);
    out->seconds = cmrscl_seconds() - t0;
    return st == CMRSCL_OK ? outcome(s, header, out) : st;
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
