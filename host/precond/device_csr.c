/* device_csr.c - what AMG's work on the device shares (amg_galerkin.c, amg_rho_device.c) and
 * the public sparse product takes (multiply.c): a CSR matrix in device buffers - made, sent,
 * read back through the context's pinned ring, released - and an AMG program's kernels. */
#include "precond/precond.h"

#include "exec/convert_launch.h"

#include <stdio.h>
#include <stdlib.h>

void cmrs_device_csr_release(cmrs_device_csr *m)
{
    cl_mem mem[] = {m->ptr, m->col, m->val};
    for (int i = 0; i < 3; ++i)
        if (mem[i])
            clReleaseMemObject(mem[i]);
    *m = (cmrs_device_csr){0};
}

cmrscl_status cmrs_amg_buffer(cmrscl_context ctx, size_t bytes, cl_mem *out)
{
    cmrscl_status st = CMRSCL_OK;
    *out = cmrs_launch_new_buffer(ctx, CL_MEM_READ_WRITE, bytes ? bytes : 1, NULL, &st,
                                  "clCreateBuffer (AMG or C = A B on the device)");
    return st;
}

cmrscl_status cmrs_amg_upload(cmrscl_context ctx, cl_mem dst, size_t bytes, const void *src)
{
    cl_event done = NULL;
    cl_int err = bytes ? cmrs_upload(ctx, dst, bytes, src, &done) : CL_SUCCESS;
    if (err == CL_SUCCESS && done)
        err = clWaitForEvents(1, &done);
    if (done)
        clReleaseEvent(done);
    return err == CL_SUCCESS ? CMRSCL_OK
                             : cmrscl_fail_cl(err, "upload (AMG or C = A B on the device)");
}

cmrscl_status cmrs_device_csr_upload(cmrscl_context ctx, const cmrscl_csr *a, cmrs_device_csr *out)
{
    *out = (cmrs_device_csr){a->rows, a->cols, a->nnz, NULL, NULL, NULL};
    if (a->nnz > INT32_MAX)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "a matrix on the device (AMG, C = A B): %lld entries (at most 2^31 - 1)",
                           (long long)a->nnz);
    int32_t *ptr = cmrs_csr_narrow_row_ptr(a->row_ptr, a->rows);
    size_t n = (size_t)a->nnz;
    cmrscl_status st =
        ptr ? cmrs_amg_buffer(ctx, ((size_t)a->rows + 1) * 4, &out->ptr)
            : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "a matrix on the device (AMG, C = A B)");
    if (st == CMRSCL_OK)
        st = cmrs_amg_buffer(ctx, n * 4, &out->col);
    if (st == CMRSCL_OK)
        st = cmrs_amg_buffer(ctx, n * 8, &out->val);
    if (st == CMRSCL_OK)
        st = cmrs_amg_upload(ctx, out->ptr, ((size_t)a->rows + 1) * 4, ptr);
    if (st == CMRSCL_OK)
        st = cmrs_amg_upload(ctx, out->col, n * 4, a->col_ind);
    if (st == CMRSCL_OK)
        st = cmrs_amg_upload(ctx, out->val, n * 8, a->values);
    free(ptr);
    if (st != CMRSCL_OK)
        cmrs_device_csr_release(out);
    return st;
}

cmrscl_status cmrs_device_csr_download(cmrscl_context ctx, const cmrs_device_csr *c,
                                       cmrscl_csr *out)
{
    *out = (cmrscl_csr){c->rows, c->cols, c->nnz, NULL, NULL, NULL};
    int32_t *ptr = cmrs_parallel_alloc((size_t)c->rows + 1, sizeof *ptr);
    out->col_ind = cmrs_parallel_alloc((size_t)c->nnz + 1, sizeof(int32_t));
    out->values = cmrs_parallel_alloc((size_t)c->nnz + 1, sizeof(double));
    if (!ptr || !out->col_ind || !out->values) {
        free(ptr);
        cmrscl_csr_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                           "a matrix on the device (AMG, C = A B), reading back %lld entries",
                           (long long)c->nnz);
    }
    cl_int err = cmrs_download(ctx, c->ptr, 0, ((size_t)c->rows + 1) * 4, ptr);
    if (err == CL_SUCCESS)
        err = cmrs_download(ctx, c->col, 0, (size_t)c->nnz * 4, out->col_ind);
    if (err == CL_SUCCESS)
        err = cmrs_download(ctx, c->val, 0, (size_t)c->nnz * 8, out->values);
    if (err == CL_SUCCESS && !(out->row_ptr = cmrs_csr_widen_row_ptr(ptr, c->rows)))
        err = CL_OUT_OF_HOST_MEMORY;
    free(ptr);
    if (err == CL_SUCCESS)
        return CMRSCL_OK;
    cmrscl_csr_free(out);
    return cmrscl_fail_cl(err, "reading back (AMG or C = A B on the device)");
}

cmrscl_status cmrs_amg_kernels(cmrscl_context ctx, const char *file, const char *options, int count,
                               const char *const *names, cl_kernel *out, size_t *local)
{
    cl_program program; /* owned by the context's cache */
    double seconds;
    cmrscl_program_source from;
    cmrscl_status st = cmrs_program_get(ctx, file, options, &program, &seconds, &from);
    for (int i = 0; i < count; ++i)
        out[i] = NULL;
    for (int i = 0; st == CMRSCL_OK && i < count; ++i) {
        cl_int err;
        out[i] = clCreateKernel(program, names[i], &err);
        char what[96];
        snprintf(what, sizeof what, "clCreateKernel (%s)", names[i]);
        if (!out[i])
            st = cmrscl_fail_cl(err, what);
        size_t most = 0;
        if (out[i])
            clGetKernelWorkGroupInfo(out[i], ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most,
                                     &most, NULL);
        while (most && *local > most && *local > 1)
            *local /= 2;
    }
    for (int i = 0; st != CMRSCL_OK && i < count; ++i)
        if (out[i])
            clReleaseKernel(out[i]), out[i] = NULL;
    return st;
}
