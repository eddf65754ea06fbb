/* spmv.c - launching y = alpha*A*x + beta*y: argument checks against the matrix (sizes,
 * context, x and y the same buffer), the launches (the family's kernel over strips and
 * tiles, then cmrs_combine when strips are split and their work-groups do not combine the
 * tiles themselves), events, the timing of a product, and
 * the blocking convenience call on host arrays. */
#include "exec/exec.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Per-product arguments of cmrs_spmv and cmrs_combine: cl/cmrs_abi.h. */

cmrscl_status cmrs_spmv_check_queue(cmrscl_matrix m, cl_command_queue queue)
{
    cl_context context = NULL;
    cl_device_id device = NULL;
    cmrscl_status st = cmrs_queue_owner(queue, &context, &device);
    if (st != CMRSCL_OK)
        return st;
    if (context != m->ctx->context || device != m->ctx->device)
        return cmrscl_fail(CMRSCL_ERROR_CONTEXT_MISMATCH,
                           "the queue belongs to another context or device than the matrix");
    return CMRSCL_OK;
}

cmrscl_status cmrs_spmv_check_product(cmrscl_matrix m, cl_mem x, cl_mem y, cl_command_queue queue,
                                      cl_uint num_wait, const cl_event *wait_list)
{
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    if ((num_wait > 0) != (wait_list != NULL))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "num_wait and wait_list disagree");
    const cmrscl_params *p = &m->params;
    size_t vsize = cmrscl_precision_size(p->precision);
    /* With no rows the product is empty: nothing is read, so x may be NULL too. */
    cl_context context = m->ctx->context;
    cmrscl_status st =
        cmrs_buffer_check(context, x, p->rows > 0 ? vsize * (size_t)p->cols : 0, "x");
    if (st == CMRSCL_OK)
        st = cmrs_buffer_check(context, y, vsize * (size_t)p->rows, "y");
    if (st == CMRSCL_OK && queue)
        st = cmrs_spmv_check_queue(m, queue);
    if (st == CMRSCL_OK && x && x == y && p->rows > 0 && p->cols > 0)
        st = cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "x and y must be different buffers");
    return st;
}

cl_int cmrs_spmv_set_scalars(cl_kernel k, cl_uint at, cmrscl_precision precision, double alpha,
                             double beta)
{
    if (precision == CMRSCL_DOUBLE)
        return clSetKernelArg(k, at, sizeof alpha, &alpha) |
               clSetKernelArg(k, at + 1, sizeof beta, &beta);
    cl_float a = (cl_float)alpha, b = (cl_float)beta;
    return clSetKernelArg(k, at, sizeof a, &a) | clSetKernelArg(k, at + 1, sizeof b, &b);
}

cl_int cmrs_spmv_set_args(cmrscl_matrix m, double alpha, cl_mem x, double beta, cl_mem y)
{
    const cmrscl_params *p = &m->params;
    cl_mem xarg = p->cols > 0 ? x : NULL;
    cl_int err = cmrs_spmv_set_scalars(m->kernel, CMRS_ARG_ALPHA, p->precision, alpha, beta);
    err |= clSetKernelArg(m->kernel, CMRS_ARG_X, sizeof(cl_mem), &xarg);
    err |= clSetKernelArg(m->kernel, CMRS_ARG_Y, sizeof(cl_mem), &y);
    if (m->combine) {
        err |= cmrs_spmv_set_scalars(m->combine, CMRS_COMBINE_ALPHA, p->precision, alpha, beta);
        err |= clSetKernelArg(m->combine, CMRS_COMBINE_Y, sizeof(cl_mem), &y);
    }
    return err;
}

void cmrs_spmv_sizes(cmrscl_matrix m, size_t *local, size_t *global, size_t *combine_local,
                     size_t *combine_global)
{
    const cmrscl_params *p = &m->params;
    *local = (size_t)p->work_group_size;
    *global = (m->strip_groups + m->tile_groups) * *local;
    size_t items = (size_t)p->long_strips * (size_t)p->height;
    *combine_local = 64;
    *combine_global = (items + 63) / 64 * 64;
}

cmrscl_status cmrs_spmv_enqueue(cmrscl_matrix m, double alpha, cl_mem x, double beta, cl_mem y,
                                cl_command_queue queue, cl_uint num_wait, const cl_event *wait_list,
                                cl_event *first, cl_event *last)
{
    const cmrscl_params *p = &m->params;
    cl_int err;
    if (p->rows == 0) { /* nothing to compute; still honour the wait list and the events */
        cl_event e = NULL;
        err = first || last ? clEnqueueMarkerWithWaitList(queue, num_wait, wait_list, &e)
                            : CL_SUCCESS;
        if (first && last && e)
            clRetainEvent(e);
        if (first)
            *first = e;
        if (last)
            *last = e;
        return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueMarkerWithWaitList");
    }
    if (cmrs_spmv_set_args(m, alpha, x, beta, y) != CL_SUCCESS)
        return cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg for x, y, alpha or beta failed");
    size_t local, global, clocal, cglobal;
    cmrs_spmv_sizes(m, &local, &global, &clocal, &cglobal);
    /* The combine kernel must see the tiles' sums: an in-order queue guarantees it; an
     * out-of-order one needs the main kernel's event (NVIDIA: an event wait between two
     * kernels costs microseconds, a visible share of a product on small matrices). Only
     * split matrices ask the queue. */
    bool in_order = true;
    if (m->combine) {
        cl_command_queue_properties qprops = 0;
        clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof qprops, &qprops, NULL);
        in_order = !(qprops & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    }
    cl_event main_done = NULL, combine_done = NULL;
    bool want_main = first || last || !in_order;
    err = clEnqueueNDRangeKernel(queue, m->kernel, 1, NULL, &global, &local, num_wait, wait_list,
                                 want_main ? &main_done : NULL);
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clEnqueueNDRangeKernel");
    if (m->combine) {
        err =
            clEnqueueNDRangeKernel(queue, m->combine, 1, NULL, &cglobal, &clocal, in_order ? 0 : 1,
                                   in_order ? NULL : &main_done, last ? &combine_done : NULL);
        if (err != CL_SUCCESS) {
            if (main_done)
                clReleaseEvent(main_done);
            return cmrscl_fail_cl(err, "clEnqueueNDRangeKernel (combine)");
        }
    }
    if (last)
        *last = combine_done ? combine_done : main_done;
    if (last && !combine_done && first)
        clRetainEvent(main_done); /* one reference for each output */
    if (first)
        *first = main_done;
    else if (main_done && !(last && !combine_done))
        clReleaseEvent(main_done);
    return CMRSCL_OK;
}

cmrscl_status cmrscl_spmv(cmrscl_matrix m, double alpha, cl_mem x, double beta, cl_mem y,
                          cl_command_queue queue, cl_uint num_wait, const cl_event *wait_list,
                          cl_event *event)
{
    if (event)
        *event = NULL;
    cmrscl_status st = cmrs_spmv_check_product(m, x, y, queue, num_wait, wait_list);
    if (st != CMRSCL_OK)
        return st;
    pthread_mutex_lock(&m->lock);
    st = cmrs_spmv_enqueue(m, alpha, x, beta, y, queue ? queue : m->ctx->queue, num_wait, wait_list,
                           NULL, event);
    pthread_mutex_unlock(&m->lock);
    return st;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Device time of each of n products from its first and last events. */
static cmrscl_status product_times(cl_event *first, cl_event *last, int n, double *ms)
{
    for (int i = 0; i < n; ++i) {
        cl_int err = cmrs_event_ms(first[i], last[i], &ms[i]);
        if (err != CL_SUCCESS)
            return cmrscl_fail_cl(err, "clGetEventProfilingInfo");
    }
    return CMRSCL_OK;
}

/* One product under the matrix's lock (argument setting + enqueue, as every product). */
static cmrscl_status locked(cmrscl_matrix m, product_fn product, void *job, cl_event *first,
                            cl_event *last)
{
    pthread_mutex_lock(&m->lock);
    cmrscl_status st = product(job, first, last);
    pthread_mutex_unlock(&m->lock);
    return st;
}

cmrscl_status cmrs_time_products(cmrscl_matrix m, product_fn product, void *job, int warmup,
                                 int repetitions, cmrscl_timing *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!out || warmup < 0 || repetitions < 1)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "out is NULL, or warmup %d < 0, or repetitions %d < 1", warmup,
                           repetitions);
    cl_command_queue q = m->ctx->queue;
    cl_command_queue_properties props = 0;
    clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (!(props & CL_QUEUE_PROFILING_ENABLE))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "timing needs a queue with CL_QUEUE_PROFILING_ENABLE");
    int n = repetitions;
    cl_event *first = calloc((size_t)n, sizeof *first), *last = calloc((size_t)n, sizeof *last);
    double *ms = calloc((size_t)n, sizeof *ms);
    cmrscl_status st = CMRSCL_OK;
    if (!first || !last || !ms)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d timing events", n);
    for (int i = 0; st == CMRSCL_OK && i < warmup; ++i)
        st = locked(m, product, job, NULL, NULL);
    for (int i = 0; st == CMRSCL_OK && i < n; ++i)
        st = locked(m, product, job, &first[i], &last[i]);
    cl_int err = clFinish(q);
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clFinish");
    if (st == CMRSCL_OK)
        st = product_times(first, last, n, ms);
    for (int i = 0; first && last && i < n; ++i) {
        if (first[i])
            clReleaseEvent(first[i]);
        if (last[i])
            clReleaseEvent(last[i]);
    }
    /* Back to back: what a solver loop sees, launch overhead included. */
    double t0 = cmrscl_seconds();
    for (int i = 0; st == CMRSCL_OK && i < n; ++i)
        st = locked(m, product, job, NULL, NULL);
    err = clFinish(q);
    double loop = cmrscl_seconds() - t0;
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clFinish");
    if (st == CMRSCL_OK) {
        qsort(ms, (size_t)n, sizeof *ms, compare_doubles);
        out->warmup = warmup;
        out->repetitions = n;
        out->min_ms = ms[0];
        out->median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
        out->loop_ms = loop * 1e3 / n;
    }
    free(first), free(last), free(ms);
    return st;
}

/* One product of cmrscl_spmv_time. */
typedef struct spmv_job {
    cmrscl_matrix m;
    double alpha, beta;
    cl_mem x, y;
} spmv_job;

static cmrscl_status spmv_product(void *job, cl_event *first, cl_event *last)
{
    spmv_job *j = job;
    return cmrs_spmv_enqueue(j->m, j->alpha, j->x, j->beta, j->y, j->m->ctx->queue, 0, NULL, first,
                             last);
}

cmrscl_status cmrscl_spmv_time(cmrscl_matrix m, double alpha, cl_mem x, double beta, cl_mem y,
                               int warmup, int repetitions, cmrscl_timing *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    cmrscl_status st = cmrs_spmv_check_product(m, x, y, NULL, 0, NULL);
    if (st != CMRSCL_OK)
        return st;
    spmv_job job = {m, alpha, beta, x, y};
    return cmrs_time_products(m, spmv_product, &job, warmup, repetitions, out);
}

cmrscl_status cmrs_host_product(cmrscl_matrix m, const void *x, size_t xbytes, void *y,
                                size_t ybytes, bool y_in, buffer_product_fn product, void *job)
{
    cl_context context = m->ctx->context;
    cl_int err = CL_SUCCESS;
    cl_mem xbuf = NULL, ybuf = NULL;
    if (xbytes)
        xbuf = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, xbytes, (void *)x,
                              &err);
    if (err == CL_SUCCESS)
        ybuf = clCreateBuffer(context, CL_MEM_READ_WRITE | (y_in ? CL_MEM_COPY_HOST_PTR : 0),
                              ybytes, y_in ? y : NULL, &err);
    cmrscl_status st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clCreateBuffer (x/y)");
    /* The read waits on the product's event: a caller's queue may be out of order. */
    cl_event done = NULL;
    if (st == CMRSCL_OK)
        st = product(job, xbuf, ybuf, &done);
    if (st == CMRSCL_OK) {
        err = clEnqueueReadBuffer(m->ctx->queue, ybuf, CL_TRUE, 0, ybytes, y, 1, &done, NULL);
        if (err != CL_SUCCESS)
            st = cmrscl_fail_cl(err, "clEnqueueReadBuffer (y)");
    }
    if (done)
        clReleaseEvent(done);
    if (xbuf)
        clReleaseMemObject(xbuf);
    if (ybuf)
        clReleaseMemObject(ybuf);
    return st;
}

static cmrscl_status spmv_on_buffers(void *job, cl_mem x, cl_mem y, cl_event *done)
{
    spmv_job *j = job;
    return cmrscl_spmv(j->m, j->alpha, x, j->beta, y, NULL, 0, NULL, done);
}

cmrscl_status cmrscl_spmv_host(cmrscl_matrix m, double alpha, const void *x, double beta, void *y)
{
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    const cmrscl_params *p = &m->params;
    size_t vsize = cmrscl_precision_size(p->precision);
    size_t xbytes = vsize * (size_t)p->cols, ybytes = vsize * (size_t)p->rows;
    if (ybytes == 0)
        return CMRSCL_OK;
    if ((xbytes && !x) || !y)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "x or y is NULL");
    spmv_job job = {m, alpha, beta, NULL, NULL};
    return cmrs_host_product(m, x, xbytes, y, ybytes, beta != 0.0, spmv_on_buffers, &job);
}
