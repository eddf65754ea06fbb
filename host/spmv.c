/* spmv.c - launching y = alpha*A*x + beta*y: argument checks against the matrix (sizes,
 * context, x and y the same buffer), launch geometry (one warp per strip), events, and the blocking
 * convenience call on host arrays. */
#include "internal.h"

#include <stddef.h>

enum { ARG_X = 6, ARG_Y, ARG_ALPHA, ARG_BETA };

/* A buffer the kernel will touch: right context and at least `need` bytes. */
static cmrscl_status check_vector(cmrscl_matrix m, cl_mem buf, size_t need, const char *name)
{
    if (need == 0)
        return CMRSCL_OK;
    if (!buf)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "%s is NULL", name);
    size_t size = 0;
    cl_context context = NULL;
    cl_int err = clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err == CL_SUCCESS)
        err = clGetMemObjectInfo(buf, CL_MEM_CONTEXT, sizeof context, &context, NULL);
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, name);
    if (context != m->ctx->context)
        return cmrscl_fail(CMRSCL_ERROR_CONTEXT_MISMATCH, "%s belongs to another OpenCL context",
                           name);
    if (size < need)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "%s holds %zu bytes; the matrix needs %zu", name, size, need);
    return CMRSCL_OK;
}

static cmrscl_status check_queue(cmrscl_matrix m, cl_command_queue queue)
{
    cl_context context = NULL;
    cl_device_id device = NULL;
    cmrscl_status st = queue_owner(queue, &context, &device);
    if (st != CMRSCL_OK)
        return st;
    if (context != m->ctx->context || device != m->ctx->device)
        return cmrscl_fail(CMRSCL_ERROR_CONTEXT_MISMATCH,
                           "the queue belongs to another context or device than the matrix");
    return CMRSCL_OK;
}

static cmrscl_status set_scalar_args(cmrscl_matrix m, double alpha, double beta)
{
    cl_int err;
    if (m->params.precision == CMRSCL_DOUBLE) {
        err = clSetKernelArg(m->kernel, ARG_ALPHA, sizeof alpha, &alpha);
        err |= clSetKernelArg(m->kernel, ARG_BETA, sizeof beta, &beta);
    } else {
        cl_float a = (cl_float)alpha, b = (cl_float)beta;
        err = clSetKernelArg(m->kernel, ARG_ALPHA, sizeof a, &a);
        err |= clSetKernelArg(m->kernel, ARG_BETA, sizeof b, &b);
    }
    return err == CL_SUCCESS
               ? CMRSCL_OK
               : cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg for alpha/beta failed");
}

cmrscl_status cmrscl_spmv(cmrscl_matrix m, double alpha, cl_mem x, double beta, cl_mem y,
                          cl_command_queue queue, cl_uint num_wait, const cl_event *wait_list,
                          cl_event *event)
{
    if (event)
        *event = NULL;
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    if ((num_wait > 0) != (wait_list != NULL))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "num_wait and wait_list disagree");
    const cmrscl_params *p = &m->params;
    size_t vsize = cmrscl_precision_size(p->precision);
    /* With no rows the product is empty: nothing is read, so x may be NULL too. */
    cmrscl_status st = check_vector(m, x, p->rows > 0 ? vsize * (size_t)p->cols : 0, "x");
    if (st == CMRSCL_OK)
        st = check_vector(m, y, vsize * (size_t)p->rows, "y");
    if (st == CMRSCL_OK && queue)
        st = check_queue(m, queue);
    if (st != CMRSCL_OK)
        return st;
    if (x && x == y && p->rows > 0 && p->cols > 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "x and y must be different buffers");
    if (!queue)
        queue = m->ctx->queue;
    cl_int err;
    if (p->rows == 0) { /* nothing to compute; still honour the wait list and the event */
        err = event ? clEnqueueMarkerWithWaitList(queue, num_wait, wait_list, event) : CL_SUCCESS;
        return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueMarkerWithWaitList");
    }
    size_t warps_per_group = (size_t)(p->work_group_size / p->warp);
    size_t groups = ((size_t)p->strips + warps_per_group - 1) / warps_per_group;
    size_t local = (size_t)p->work_group_size, global = groups * local;
    cl_mem xarg = p->cols > 0 ? x : NULL;
    pthread_mutex_lock(&m->lock);
    st = set_scalar_args(m, alpha, beta);
    if (st == CMRSCL_OK) {
        err = clSetKernelArg(m->kernel, ARG_X, sizeof(cl_mem), &xarg);
        err |= clSetKernelArg(m->kernel, ARG_Y, sizeof(cl_mem), &y);
        if (err != CL_SUCCESS)
            st = cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg for x/y failed");
    }
    if (st == CMRSCL_OK) {
        err = clEnqueueNDRangeKernel(queue, m->kernel, 1, NULL, &global, &local, num_wait,
                                     wait_list, event);
        if (err != CL_SUCCESS)
            st = cmrscl_fail_cl(err, "clEnqueueNDRangeKernel");
    }
    pthread_mutex_unlock(&m->lock);
    return st;
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
    cl_context context = m->ctx->context;
    cl_int err = CL_SUCCESS;
    cl_mem xbuf = NULL, ybuf = NULL;
    if (xbytes)
        xbuf = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, xbytes, (void *)x,
                              &err);
    if (err == CL_SUCCESS)
        ybuf = clCreateBuffer(context, CL_MEM_READ_WRITE | (beta != 0.0 ? CL_MEM_COPY_HOST_PTR : 0),
                              ybytes, beta != 0.0 ? y : NULL, &err);
    cmrscl_status st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clCreateBuffer (x/y)");
    /* The read waits on the product's event: a caller's queue may be out of order. */
    cl_event done = NULL;
    if (st == CMRSCL_OK)
        st = cmrscl_spmv(m, alpha, xbuf, beta, ybuf, NULL, 0, NULL, &done);
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
