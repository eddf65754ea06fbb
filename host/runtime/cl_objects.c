/* cl_objects.c - small helpers on OpenCL objects that several stages use: the time between
 * two profiling events, and the checks of a caller's buffer. */
#include "runtime/runtime.h"

/* A buffer a kernel will touch: right context and at least `need` bytes. */
cmrscl_status cmrs_buffer_check(cl_context context, cl_mem buf, size_t need, const char *name)
{
    if (need == 0)
        return CMRSCL_OK;
    if (!buf)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "%s is NULL", name);
    size_t size = 0;
    cl_context owner = NULL;
    cl_int err = clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err == CL_SUCCESS)
        err = clGetMemObjectInfo(buf, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, name);
    if (owner != context)
        return cmrscl_fail(CMRSCL_ERROR_CONTEXT_MISMATCH, "%s belongs to another OpenCL context",
                           name);
    if (size < need)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "%s holds %zu bytes; the matrix needs %zu", name, size, need);
    return CMRSCL_OK;
}

cl_int cmrs_event_ms(cl_event first, cl_event last, double *ms)
{
    cl_ulong t0 = 0, t1 = 0;
    cl_int err =
        first ? clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL)
              : CL_SUCCESS;
    if (err == CL_SUCCESS && last)
        err = clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    *ms = err == CL_SUCCESS && t1 > t0 ? (double)(t1 - t0) * 1e-6 : 0.0;
    return err;
}
