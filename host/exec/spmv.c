/* spmv.c - launching one product y = alpha*A*x + beta*y (product.c describes and checks it):
 * the family's kernel over strips and tiles, then cmrs_combine when strips are split and
 * their work-groups do not combine the tiles themselves, and the events a caller asks for. */
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
