/* matrix_arrays.c - a device matrix's arrays and kernels, and its lifetime: the bytes of each
 * array (known from the plan and the split alone, so the device's limits are checked before
 * any conversion work), the buffers, the family's kernels from the context's program cache
 * with their matrix arguments set, and the matrix made and freed - its parts (the updates',
 * the transposed product's, the block product's state) releasing themselves. */
#include "exec/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernels' arguments are in the order of cl/cmrs_abi.h; the matrix's buffers follow its
 * scalars in buffer order (BUF_STRIP_PTR .. BUF_PARTIAL). spmv.c sets x, y, alpha and beta
 * per product. */
_Static_assert(CMRS_ARG_STRIP_PTR + BUF_PARTIAL - BUF_STRIP_PTR == CMRS_ARG_PARTIAL &&
                   CMRS_ARG_PARTIAL + 1 == CMRS_ARG_X,
               "the matrix buffers are the kernel arguments strip_ptr .. partial, in order");

const char *const cmrs_matrix_buffer_names[BUF_COUNT] = {
    "strip_ptr", "col_ind",    "row_in_strip", "values",      "tile_start", "tile_strip",
    "partial",   "long_strip", "first_tile",   "permutation", "staging"};

void cmrscl_matrix_free(cmrscl_matrix m)
{
    if (!m)
        return;
    if (m->kernel)
        clReleaseKernel(m->kernel);
    if (m->combine)
        clReleaseKernel(m->combine);
    for (int i = 0; i < BUF_COUNT; ++i)
        if (m->buf[i])
            clReleaseMemObject(m->buf[i]);
    /* each part releases itself, through the function its file put first in it */
    matrix_part_release *parts[] = {
        (matrix_part_release *)m->update, (matrix_part_release *)m->transposed,
        (matrix_part_release *)m->spmm, (matrix_part_release *)m->renumbering};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i)
        if (parts[i])
            (*parts[i])(m);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

void *cmrs_index_narrow(uint64_t *a, size_t n, int index_bits)
{
    /* Element k moves from byte 8k to byte 4k: never over an element not yet moved. */
    for (size_t k = 0; index_bits == 32 && k < n; ++k)
        ((uint32_t *)a)[k] = (uint32_t)a[k];
    return a;
}

size_t cmrs_matrix_values_bytes(const cmrscl_params *p, size_t stored)
{
    /* in the column words: the dictionary, its unused indices zero, and DIAGONAL's diagonal */
    if (plan_value_codec(p)->in_column_words)
        return cmrscl_precision_size(p->precision) *
               (((size_t)1 << p->dict_bits) + plan_diagonal_values(p));
    return plan_value_bytes(p) * (stored + CMRS_ENTRY_PAD);
}

size_t cmrs_matrix_column_bytes(const cmrscl_params *p, size_t stored)
{
    if (p->column_bits == 16)
        return cmrs_narrow_bytes(p->strips, (int64_t)stored);
    if (p->column_bits == 0)
        return cmrs_implied_bytes(p->strips);
    return sizeof(uint32_t) * (stored + CMRS_ENTRY_PAD);
}

/* Device bytes of each array, known from the plan and the split alone, so the limits are
 * checked before any conversion work. Entry indices (StripPtr, the tiles' first entries)
 * take index_bits each; strip and tile numbers 32. */
void cmrs_matrix_device_sizes(const cmrscl_params *p, const split_layout *sp,
                              size_t bytes[BUF_COUNT])
{
    size_t strips = (size_t)p->strips, nnz = (size_t)p->nnz,
           vs = cmrscl_precision_size(p->precision), is = (size_t)p->index_bits / 8;
    size_t tiles = (size_t)sp->tiles, longs = (size_t)sp->long_strips;
    bytes[BUF_STRIP_PTR] = is * (strips + 1);
    bytes[BUF_COL_IND] = cmrs_matrix_column_bytes(p, nnz);
    bytes[BUF_ROW_IN_STRIP] = p->layout == CMRSCL_LAYOUT_UNPACKED ? nnz : 0;
    bytes[BUF_VALUES] = cmrs_matrix_values_bytes(p, nnz);
    bytes[BUF_TILE_START] = is * tiles;
    bytes[BUF_TILE_STRIP] = sizeof(uint32_t) * tiles;
    /* the tiles' sums; with the last tile's combine, then a count of arrived tiles a tile
     * (cl/combine.cl; zero at creation, and again after each combine) */
    bytes[BUF_PARTIAL] = vs * tiles * (size_t)p->height +
                         (p->combine == CMRSCL_COMBINE_LAST ? sizeof(uint32_t) * tiles : 0);
    bytes[BUF_LONG_STRIP] = sizeof(uint32_t) * longs;
    /* read by cmrs_combine only: none when a work-group combines the tiles */
    bool combine_kernel = longs && p->combine == CMRSCL_COMBINE_KERNEL;
    bytes[BUF_FIRST_TILE] = combine_kernel ? sizeof(uint32_t) * (longs + 1) : 0;
    bytes[BUF_PERM] = 0;    /* see matrix_create and matrix_update.c */
    bytes[BUF_STAGING] = 0; /* made by the first update from the host */
}

/* Fails with the sizes when the matrix cannot fit: one buffer above the largest single
 * allocation, or all of them above the memory; the context's cap tightens both. */
cmrscl_status cmrs_matrix_check_device_memory(cmrscl_context ctx, const size_t bytes[BUF_COUNT])
{
    const cmrscl_device_info *d = &ctx->info;
    pthread_mutex_lock(&ctx->lock);
    uint64_t limit = ctx->memory_limit;
    pthread_mutex_unlock(&ctx->lock);
    uint64_t total = 0, largest = 0, alloc_cap = d->max_alloc_bytes,
             total_cap = d->global_mem_bytes;
    int which = 0;
    for (int i = 0; i < BUF_COUNT; ++i) {
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
                           (unsigned long long)largest, cmrs_matrix_buffer_names[which],
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

/* Creates the device buffers and fills those with a host array (host[i]); host[i] NULL
 * with bytes[i] > 0 means "allocate only" (partial sums; the device path's arrays), bytes[i]
 * == 0 means "not used" (the argument stays NULL). Kernels write the buffers allocated
 * only, and the values (cmrscl_matrix_update_values). The fills are non-blocking writes
 * waited for together: NVIDIA's driver copies pageable memory several times faster that
 * way than through CL_MEM_COPY_HOST_PTR at creation. */
cmrscl_status cmrs_matrix_upload_buffers(cmrscl_matrix m, void *const host[BUF_COUNT],
                                         const size_t bytes[BUF_COUNT])
{
    cl_event written[BUF_COUNT];
    cl_uint writes = 0;
    cmrscl_status st = CMRSCL_OK;
    for (int i = 0; i < BUF_COUNT && st == CMRSCL_OK; ++i) {
        if (bytes[i] == 0)
            continue;
        cl_int err;
        bool kernel_writes = !host[i] || i == BUF_VALUES;
        m->buf[i] =
            clCreateBuffer(m->ctx->context, kernel_writes ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY,
                           bytes[i], NULL, &err);
        if (m->buf[i] && host[i]) {
            err = cmrs_upload(m->ctx, m->buf[i], bytes[i], host[i], &written[writes]);
            writes += err == CL_SUCCESS && written[writes] != NULL; /* the ring's leave none */
        } else if (m->buf[i] && i == BUF_PARTIAL && m->params.combine == CMRSCL_COMBINE_LAST) {
            const cl_uint zero = 0; /* the tiles' counts start at 0 */
            err = clEnqueueFillBuffer(m->ctx->queue, m->buf[i], &zero, sizeof zero, 0, bytes[i], 0,
                                      NULL, &written[writes]);
            writes += err == CL_SUCCESS;
        }
        if (!m->buf[i] || err != CL_SUCCESS) {
            st = cmrscl_fail_cl(err, !m->buf[i] ? "clCreateBuffer"
                                     : host[i]  ? "clEnqueueWriteBuffer"
                                                : "clEnqueueFillBuffer");
            if (err == CL_OUT_OF_RESOURCES || err == CL_MEM_OBJECT_ALLOCATION_FAILURE)
                st = CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY;
            char sizes[128];
            snprintf(sizes, sizeof sizes, " (%s, %zu bytes)", cmrs_matrix_buffer_names[i],
                     bytes[i]);
            cmrscl_fail_append(sizes);
            break;
        }
        m->params.device_bytes += bytes[i];
    }
    /* The host arrays are freed when this returns, whatever happened. */
    cl_int err = writes ? clWaitForEvents(writes, written) : CL_SUCCESS;
    for (cl_uint i = 0; i < writes; ++i)
        clReleaseEvent(written[i]);
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clWaitForEvents (filling the matrix's buffers)");
    return st;
}

static cmrscl_status make_kernel(cmrscl_matrix m, cl_program prog, const char *name, cl_kernel *out)
{
    cl_int err;
    *out = clCreateKernel(prog, name, &err);
    if (!*out)
        return cmrscl_fail_cl(err, "clCreateKernel");
    return CMRSCL_OK;
}

cmrscl_status cmrs_matrix_create_kernels(cmrscl_matrix m)
{
    const cmrscl_params *p = &m->params;
    ++m->kernels_made;
    if (m->kernel) /* kernels of an earlier plan (matrix_update.c: values stored plain) */
        clReleaseKernel(m->kernel), m->kernel = NULL;
    if (m->combine)
        clReleaseKernel(m->combine), m->combine = NULL;
    cl_program prog;
    double seconds;
    cmrscl_program_source from;
    cmrscl_status st = cmrs_program_get(m->ctx, cmrs_variant_family_of(p->kernel)->file,
                                        p->build_options, &prog, &seconds, &from);
    if (from != CMRSCL_PROGRAM_CONTEXT || m->params.build_seconds == 0.0) /* not the plan's check */
        m->params.build_seconds = seconds, m->params.program_source = from;
    if (st == CMRSCL_OK)
        st = make_kernel(m, prog, "cmrs_spmv", &m->kernel);
    if (st == CMRSCL_OK && p->long_strips && p->combine == CMRSCL_COMBINE_KERNEL)
        st = make_kernel(m, prog, "cmrs_combine", &m->combine);
    if (st != CMRSCL_OK)
        return st;
    return cmrs_matrix_kernel_limits(m, m->kernel)
               ? CMRSCL_ERROR_DEVICE_LIMIT
               : cmrs_matrix_kernel_args(m, m->kernel, m->combine);
}

bool cmrs_matrix_kernel_limits(cmrscl_matrix m, cl_kernel kernel)
{
    size_t max_wg = 0;
    clGetKernelWorkGroupInfo(kernel, m->ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg,
                             &max_wg, NULL);
    if (max_wg && max_wg < (size_t)m->params.work_group_size) {
        cmrscl_fail(CMRSCL_ERROR_DEVICE_LIMIT,
                    "the kernel runs at most %zu work-items per group on this device, fewer than "
                    "the %d chosen",
                    max_wg, m->params.work_group_size);
        return true;
    }
    return false;
}

cmrscl_status cmrs_matrix_kernel_args(cmrscl_matrix m, cl_kernel kernel, cl_kernel combine)
{
    const cmrscl_params *p = &m->params;
    cl_uint u[CMRS_ARG_STRIP_PTR] = {(cl_uint)p->rows, (cl_uint)p->strips,
                                     (cl_uint)m->first_tile_group, (cl_uint)p->tiles,
                                     (cl_uint)p->tile};
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < CMRS_ARG_STRIP_PTR; ++i)
        err |= clSetKernelArg(kernel, (cl_uint)i, sizeof(cl_uint), &u[i]);
    for (int i = BUF_STRIP_PTR; i <= BUF_PARTIAL; ++i)
        err |= clSetKernelArg(kernel, (cl_uint)(CMRS_ARG_STRIP_PTR + i - BUF_STRIP_PTR),
                              sizeof(cl_mem), &m->buf[i]);
    if (combine) {
        cl_uint longs = (cl_uint)p->long_strips;
        err |= clSetKernelArg(combine, CMRS_COMBINE_ROWS, sizeof(cl_uint), &u[CMRS_ARG_ROWS]);
        err |= clSetKernelArg(combine, CMRS_COMBINE_LONG_STRIPS, sizeof longs, &longs);
        err |= clSetKernelArg(combine, CMRS_COMBINE_LONG_STRIP, sizeof(cl_mem),
                              &m->buf[BUF_LONG_STRIP]);
        err |= clSetKernelArg(combine, CMRS_COMBINE_FIRST_TILE, sizeof(cl_mem),
                              &m->buf[BUF_FIRST_TILE]);
        err |= clSetKernelArg(combine, CMRS_COMBINE_PARTIAL, sizeof(cl_mem), &m->buf[BUF_PARTIAL]);
    }
    if (err != CL_SUCCESS)
        return cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg for the matrix arguments failed");
    return CMRSCL_OK;
}

cmrscl_status cmrs_matrix_new(cmrscl_context ctx, cmrscl_matrix *out)
{
    *out = NULL;
    cmrscl_matrix m = calloc(1, sizeof *m);
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a matrix");
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "cannot create a mutex");
    }
    m->ctx = ctx;
    *out = m;
    return CMRSCL_OK;
}
