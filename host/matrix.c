/* matrix.c - a device matrix: host CSR -> CMRS with the parameters chosen for the device,
 * device buffers (checked against the device's allocation limits first), and the kernel
 * from the context's program cache with its matrix arguments already set. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ARG_ROWS, ARG_STRIPS, ARG_STRIP_PTR, ARG_COL_IND, ARG_ROW_IN_STRIP, ARG_VAL };

void cmrscl_matrix_free(cmrscl_matrix m)
{
    if (!m)
        return;
    if (m->kernel)
        clReleaseKernel(m->kernel);
    cl_mem *bufs[] = {&m->strip_ptr, &m->col_ind, &m->row_in_strip, &m->values};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i)
        if (*bufs[i])
            clReleaseMemObject(*bufs[i]);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

/* The arrays a matrix puts on the device, in the order of the kernel arguments. */
typedef struct upload {
    const void *host[4];
    size_t bytes[4];
} upload;
static const char *const upload_names[4] = {"strip_ptr", "col_ind", "row_in_strip", "values"};

/* Device bytes of each array, known from the sizes alone, so the limits are checked
 * before any conversion work. */
static void device_sizes(const cmrscl_params *p, int32_t rows, int32_t nnz, size_t bytes[4])
{
    size_t strips = (size_t)(((int64_t)rows + p->height - 1) / p->height);
    bytes[0] = sizeof(uint32_t) * (strips + 1);
    bytes[1] = sizeof(uint32_t) * (size_t)nnz;
    bytes[2] = p->layout == CMRSCL_LAYOUT_UNPACKED ? (size_t)nnz : 0;
    bytes[3] = cmrscl_precision_size(p->precision) * (size_t)nnz;
}

/* Fails with the sizes when the matrix cannot fit: one buffer above the largest single
 * allocation, or all of them above the memory; the context's cap tightens both. */
cmrscl_status matrix_check_device_memory(cmrscl_context ctx, const size_t bytes[4])
{
    const cmrscl_device_info *d = &ctx->info;
    pthread_mutex_lock(&ctx->lock);
    uint64_t limit = ctx->memory_limit;
    pthread_mutex_unlock(&ctx->lock);
    uint64_t total = 0, largest = 0, alloc_cap = d->max_alloc_bytes,
             total_cap = d->global_mem_bytes;
    int which = 0;
    for (int i = 0; i < 4; ++i) {
        total += bytes[i];
        if (bytes[i] > largest)
            largest = bytes[i], which = i;
    }
    bool capped = limit && limit < alloc_cap;
    if (limit && limit < total_cap)
        total_cap = limit;
    if (capped)
        alloc_cap = limit;
    if (largest > alloc_cap)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY,
                           "the matrix needs a %llu-byte %s buffer but at most %llu bytes can be "
                           "allocated at once on device \"%s\" (%s)",
                           (unsigned long long)largest, upload_names[which],
                           (unsigned long long)alloc_cap, d->device_name,
                           capped ? "the context's memory limit" : "CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    if (total > total_cap)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY,
                           "the matrix needs %llu bytes of device memory but device \"%s\" "
                           "offers %llu (%s)",
                           (unsigned long long)total, d->device_name, (unsigned long long)total_cap,
                           total_cap == d->global_mem_bytes ? "CL_DEVICE_GLOBAL_MEM_SIZE"
                                                            : "the context's memory limit");
    return CMRSCL_OK;
}

static cmrscl_status upload_buffers(cmrscl_matrix m, const upload *u)
{
    cl_mem *dst[4] = {&m->strip_ptr, &m->col_ind, &m->row_in_strip, &m->values};
    for (int i = 0; i < 4; ++i) {
        if (!u->host[i])
            continue; /* row_in_strip of the packed layout */
        cl_int err;
        /* OpenCL has no empty buffers; an empty array gets a small one that is never read. */
        bool empty = u->bytes[i] == 0;
        *dst[i] =
            clCreateBuffer(m->ctx->context, CL_MEM_READ_ONLY | (empty ? 0 : CL_MEM_COPY_HOST_PTR),
                           empty ? 16 : u->bytes[i], empty ? NULL : (void *)u->host[i], &err);
        if (!*dst[i]) {
            cmrscl_status st = cmrscl_fail_cl(err, "clCreateBuffer");
            if (err == CL_OUT_OF_RESOURCES) /* at allocation, resources means memory */
                st = CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY;
            char sizes[128];
            snprintf(sizes, sizeof sizes, " (%s, %zu bytes)", upload_names[i], u->bytes[i]);
            cmrscl_fail_append(sizes);
            return st;
        }
        m->params.device_bytes += empty ? 16 : u->bytes[i];
    }
    return CMRSCL_OK;
}

static cmrscl_status create_kernel(cmrscl_matrix m)
{
    cl_program prog;
    cmrscl_status st =
        program_get(m->ctx, m->params.build_options, &prog, &m->params.build_seconds);
    if (st != CMRSCL_OK)
        return st;
    cl_int err;
    m->kernel = clCreateKernel(prog, "cmrs_spmv", &err);
    if (!m->kernel)
        return cmrscl_fail_cl(err, "clCreateKernel");
    size_t max_wg = 0;
    clGetKernelWorkGroupInfo(m->kernel, m->ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg,
                             &max_wg, NULL);
    if (max_wg && max_wg < (size_t)m->params.work_group_size)
        return cmrscl_fail(CMRSCL_ERROR_DEVICE_LIMIT,
                           "the kernel runs at most %zu work-items per group on this device, "
                           "fewer than the %d chosen",
                           max_wg, m->params.work_group_size);
    cl_uint rows = (cl_uint)m->params.rows, strips = (cl_uint)m->params.strips;
    err = clSetKernelArg(m->kernel, ARG_ROWS, sizeof rows, &rows);
    err |= clSetKernelArg(m->kernel, ARG_STRIPS, sizeof strips, &strips);
    err |= clSetKernelArg(m->kernel, ARG_STRIP_PTR, sizeof(cl_mem), &m->strip_ptr);
    err |= clSetKernelArg(m->kernel, ARG_COL_IND, sizeof(cl_mem), &m->col_ind);
    err |= clSetKernelArg(m->kernel, ARG_ROW_IN_STRIP, sizeof(cl_mem), &m->row_in_strip);
    err |= clSetKernelArg(m->kernel, ARG_VAL, sizeof(cl_mem), &m->values);
    if (err != CL_SUCCESS)
        return cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg for the matrix arguments failed");
    return CMRSCL_OK;
}

static cmrscl_status matrix_create(cmrscl_context ctx, cmrscl_precision precision, int32_t rows,
                                   int32_t cols, const int32_t *row_ptr, const int32_t *col_ind,
                                   const void *values, cmrscl_precision values_precision,
                                   const cmrscl_options *opt, cmrscl_matrix *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!ctx)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "context is NULL");
    cmrscl_status st = csr_validate_structure(rows, cols, row_ptr, col_ind);
    if (st != CMRSCL_OK)
        return st;
    if (row_ptr[rows] > 0 && !values)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "values is NULL");
    cmrscl_matrix m = calloc(1, sizeof *m);
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a matrix");
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "cannot create a mutex");
    }
    m->ctx = ctx;
    cmrscl_params *p = &m->params;
    st = params_choose(&ctx->info, precision, cols, opt, p);
    if (st != CMRSCL_OK) {
        cmrscl_matrix_free(m);
        return st;
    }

    size_t bytes[4];
    device_sizes(p, rows, row_ptr[rows], bytes);
    st = matrix_check_device_memory(ctx, bytes);
    if (st != CMRSCL_OK) {
        cmrscl_matrix_free(m);
        return st;
    }

    double t0 = cmrscl_seconds();
    cmrscl_cmrs host;
    int32_t *perm = NULL;
    void *vals = NULL;
    unsigned flags = (p->order == CMRSCL_ORDER_COLUMNS ? CMRSCL_CMRS_ORDER_COLUMNS : 0) |
                     (p->layout == CMRSCL_LAYOUT_UNPACKED ? CMRSCL_CMRS_UNPACKED : 0);
    st = cmrs_build_structure(rows, cols, row_ptr, col_ind, p->height, flags, &host, &perm);
    size_t vsize = cmrscl_precision_size(precision);
    if (st == CMRSCL_OK && !(vals = cmrscl_alloc((size_t)host.nnz, vsize)))
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d values", host.nnz);
    if (st == CMRSCL_OK) {
        cmrs_gather_values(vals, precision, values, values_precision, perm, host.nnz);
        p->convert_seconds = cmrscl_seconds() - t0;
        p->rows = rows, p->cols = cols, p->nnz = host.nnz, p->strips = host.strips;
        upload u = {{host.strip_ptr, host.col_ind, host.row_in_strip, vals},
                    {bytes[0], bytes[1], bytes[2], bytes[3]}};
        st = upload_buffers(m, &u);
    }
    free(perm);
    free(vals);
    cmrscl_cmrs_free(&host);
    if (st == CMRSCL_OK)
        st = create_kernel(m);
    if (st != CMRSCL_OK) {
        cmrscl_matrix_free(m);
        return st;
    }
    *out = m;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_matrix_create(cmrscl_context ctx, cmrscl_precision precision, int32_t rows,
                                   int32_t cols, const int32_t *row_ptr, const int32_t *col_ind,
                                   const void *values, const cmrscl_options *opt,
                                   cmrscl_matrix *out)
{
    return matrix_create(ctx, precision, rows, cols, row_ptr, col_ind, values, precision, opt, out);
}

cmrscl_status cmrscl_matrix_create_from_csr(cmrscl_context ctx, cmrscl_precision precision,
                                            const cmrscl_csr *csr, const cmrscl_options *opt,
                                            cmrscl_matrix *out)
{
    if (out)
        *out = NULL;
    cmrscl_status st = cmrscl_csr_validate(csr);
    if (st != CMRSCL_OK)
        return st;
    return matrix_create(ctx, precision, csr->rows, csr->cols, csr->row_ptr, csr->col_ind,
                         csr->values, CMRSCL_DOUBLE, opt, out);
}

cmrscl_status cmrscl_matrix_params(cmrscl_matrix m, cmrscl_params *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!m || !out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix or out is NULL");
    *out = m->params;
    return CMRSCL_OK;
}

static cmrscl_status read_buffer(cmrscl_matrix m, cl_mem buf, size_t bytes, void *dst)
{
    if (bytes == 0)
        return CMRSCL_OK;
    cl_int err = clEnqueueReadBuffer(m->ctx->queue, buf, CL_TRUE, 0, bytes, dst, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueReadBuffer");
}

cmrscl_status cmrscl_matrix_read_cmrs(cmrscl_matrix m, cmrscl_cmrs *out)
{
    if (!m || !out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix or out is NULL");
    memset(out, 0, sizeof *out);
    const cmrscl_params *p = &m->params;
    size_t nnz = (size_t)p->nnz, vsize = cmrscl_precision_size(p->precision);
    bool packed = p->layout == CMRSCL_LAYOUT_PACKED;
    cmrscl_cmrs c = {
        p->rows, p->cols, p->nnz, p->height, p->strips, packed, p->order == CMRSCL_ORDER_COLUMNS,
        NULL,    NULL,    NULL,   NULL};
    c.strip_ptr = cmrscl_alloc((size_t)p->strips + 1, sizeof(uint32_t));
    c.col_ind = cmrscl_alloc(nnz, sizeof(uint32_t));
    c.row_in_strip = packed ? NULL : cmrscl_alloc(nnz, 1);
    c.values = cmrscl_alloc(nnz, sizeof(double));
    void *raw = cmrscl_alloc(nnz, vsize);
    cmrscl_status st = CMRSCL_OK;
    if (!c.strip_ptr || !c.col_ind || (!packed && !c.row_in_strip) || !c.values || !raw)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to read back the matrix");
    if (st == CMRSCL_OK)
        st = read_buffer(m, m->strip_ptr, sizeof(uint32_t) * ((size_t)p->strips + 1), c.strip_ptr);
    if (st == CMRSCL_OK)
        st = read_buffer(m, m->col_ind, sizeof(uint32_t) * nnz, c.col_ind);
    if (st == CMRSCL_OK && !packed)
        st = read_buffer(m, m->row_in_strip, nnz, c.row_in_strip);
    if (st == CMRSCL_OK)
        st = read_buffer(m, m->values, vsize * nnz, raw);
    if (st == CMRSCL_OK)
        cmrs_gather_values(c.values, CMRSCL_DOUBLE, raw, p->precision, NULL, p->nnz);
    free(raw);
    if (st != CMRSCL_OK) {
        cmrscl_cmrs_free(&c);
        return st;
    }
    *out = c;
    return CMRSCL_OK;
}
