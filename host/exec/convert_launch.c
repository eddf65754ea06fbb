/* convert_launch.c - the launcher of cl/convert.cl's kernels (convert_launch.h). */
#include "convert_launch.h"

#include <stdio.h>

launcher cmrs_launcher_make(cmrscl_context ctx)
{
    launcher l = {ctx, ctx->queue, false, NULL, CONVERT_GROUP};
    cl_command_queue_properties props = 0;
    clGetCommandQueueInfo(l.queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    l.out_of_order = (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
    return l;
}

cl_int cmrs_launch_order_point(const launcher *l)
{
    return l->out_of_order ? clEnqueueBarrierWithWaitList(l->queue, 0, NULL, NULL) : CL_SUCCESS;
}

/* convert.cl is built after cmrs_abi.h and spmv_common.cl like the families; its plan-dependent
 * values are kernel arguments, so the program depends on the precisions alone (one build per
 * context and pair, not per plan). *seconds (may be NULL) grows by the build or load time. */
cmrscl_status cmrs_convert_program(cmrscl_context ctx, cmrscl_precision precision,
                                   cmrscl_precision source, int index_bits, cl_program *out,
                                   double *seconds)
{
    char options[192];
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -DCONVERT=1 -DHEIGHT=1 -DWARP=1 -DWG_SIZE=1 -DVALUE_DOUBLE=%d "
             "-DSOURCE_DOUBLE=%d -DINDEX64=%d -DCONVERT_GROUP=%d -DSTRIP_HEIGHT_LOGS=%d",
             precision == CMRSCL_DOUBLE, source == CMRSCL_DOUBLE, index_bits == 64, CONVERT_GROUP,
             STRIP_HEIGHT_LOGS);
    double s = 0.0;
    cmrscl_program_source from;
    cmrscl_status st = cmrs_program_get(ctx, "convert.cl", options, out, &s, &from);
    if (seconds)
        *seconds += s;
    return st;
}

cmrscl_status cmrs_launch_set_args(cl_kernel k, const launch_arg *args, int n)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < n; ++i)
        err |= clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].value);
    return err == CL_SUCCESS ? CMRSCL_OK
                             : cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg failed");
}

/* Enqueues `items` work-items (none: nothing) of a kernel whose arguments are set. */
cmrscl_status cmrs_launch_enqueue(const launcher *l, cl_kernel k, size_t items, cl_uint num_wait,
                                  const cl_event *wait, cl_event *done)
{
    if (items == 0)
        return CMRSCL_OK;
    size_t local = l->group, global = (items + local - 1) / local * local;
    cl_int err =
        clEnqueueNDRangeKernel(l->queue, k, 1, NULL, &global, &local, num_wait, wait, done);
    if (err == CL_SUCCESS)
        err = cmrs_launch_order_point(l);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueNDRangeKernel");
}

/* Runs kernel `name` of the launcher's program once over `items` work-items. */
cmrscl_status cmrs_launch_run(const launcher *l, const char *name, const launch_arg *args,
                              int nargs, size_t items, cl_event *done)
{
    cl_int err;
    cl_kernel k = clCreateKernel(l->program, name, &err);
    if (!k)
        return cmrscl_fail_cl(err, name);
    cmrscl_status st = cmrs_launch_set_args(k, args, nargs);
    cl_event traced = NULL; /* CMRSCL_TRACE: each kernel's device time, waited for */
    if (st == CMRSCL_OK)
        st = cmrs_launch_enqueue(l, k, items, 0, NULL,
                                 done               ? done
                                 : cmrscl_tracing() ? &traced
                                                    : NULL);
    clReleaseKernel(k);
    cl_event timed = done ? *done : traced;
    double ms;
    if (st == CMRSCL_OK && timed && cmrscl_tracing() && clWaitForEvents(1, &timed) == CL_SUCCESS &&
        cmrs_event_ms(timed, timed, &ms) == CL_SUCCESS)
        cmrscl_trace("%s: %.3f ms on the device (%zu work-items)", name, ms, items);
    if (traced)
        clReleaseEvent(traced);
    return st;
}

cmrscl_status cmrs_launch_zero(const launcher *l, cl_mem buf, size_t bytes)
{
    const cl_int zero = 0;
    cl_int err = clEnqueueFillBuffer(l->queue, buf, &zero, sizeof zero, 0, bytes, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = cmrs_launch_order_point(l);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueFillBuffer");
}

cmrscl_status cmrs_launch_wait(cl_event *events, cl_uint n)
{
    cl_int err = clWaitForEvents(n, events);
    for (cl_uint i = 0; i < n; ++i)
        clReleaseEvent(events[i]);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clWaitForEvents");
}

cmrscl_status cmrs_launch_read_ints(const launcher *l, cl_mem buf, size_t first, size_t n,
                                    void *dst)
{
    cl_int err = clEnqueueReadBuffer(l->queue, buf, CL_TRUE, first * sizeof(int32_t),
                                     n * sizeof(int32_t), dst, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueReadBuffer");
}

cl_mem cmrs_launch_new_buffer(cmrscl_context ctx, cl_mem_flags flags, size_t bytes, void *host,
                              cmrscl_status *st, const char *what)
{
    cl_int err = CL_SUCCESS;
    cl_mem b =
        clCreateBuffer(ctx->context, flags | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes, host, &err);
    if (!b)
        *st = cmrscl_fail_cl(err, what);
    return b;
}
