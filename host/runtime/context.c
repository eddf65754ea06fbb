/* context.c - the lifetime of a cmrscl context: an OpenCL context, device and in-order
 * queue (created here from a selector, or the caller's own for interop), the device facts,
 * the program cache and the upload ring (upload.c). */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

void cmrscl_context_free(cmrscl_context ctx)
{
    if (!ctx)
        return;
    cmrs_program_cache_free(ctx->programs);
    if (ctx->queue) {
        cmrs_upload_ring_free(ctx);
        clReleaseCommandQueue(ctx->queue);
    }
    pthread_mutex_destroy(&ctx->ring_lock);
    if (ctx->context)
        clReleaseContext(ctx->context);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

static cmrscl_status context_new(cmrscl_context *out)
{
    cmrscl_context ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a context");
    if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
        free(ctx);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "cannot create a mutex");
    }
    if (pthread_mutex_init(&ctx->ring_lock, NULL) != 0) {
        pthread_mutex_destroy(&ctx->lock);
        free(ctx);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "cannot create a mutex");
    }
    *out = ctx;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_context_create(const char *selector, cmrscl_context *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    device_entry e;
    cmrscl_context ctx = NULL;
    cmrscl_status st = cmrs_device_select(selector, &e);
    if (st == CMRSCL_OK)
        st = context_new(&ctx);
    if (st != CMRSCL_OK)
        return st;
    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)e.platform, 0};
    ctx->device = e.device;
    ctx->context = clCreateContext(props, 1, &e.device, NULL, NULL, &err);
    if (!ctx->context)
        st = cmrscl_fail_cl(err, "clCreateContext");
    if (st == CMRSCL_OK) {
        ctx->queue = clCreateCommandQueue(ctx->context, e.device, CL_QUEUE_PROFILING_ENABLE, &err);
        if (!ctx->queue)
            st = cmrscl_fail_cl(err, "clCreateCommandQueue");
    }
    if (st == CMRSCL_OK)
        st = cmrs_device_query(&e, ctx->context, &ctx->info);
    if (st != CMRSCL_OK) {
        cmrscl_context_free(ctx);
        return st;
    }
    *out = ctx;
    return CMRSCL_OK;
}

/* Finds the "P:D" numbers of a device the caller brought, for cmrs_device_query's report. */
static device_entry entry_for(cl_device_id device)
{
    device_entry e = {NULL, device, 0, 0};
    clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof e.platform, &e.platform, NULL);
    device_entry *list;
    size_t n;
    if (cmrs_device_enumerate(&list, &n) != CMRSCL_OK)
        return e;
    for (size_t i = 0; i < n; ++i)
        if (list[i].device == device)
            e = list[i];
    free(list);
    return e;
}

cmrscl_status cmrs_queue_owner(cl_command_queue queue, cl_context *context, cl_device_id *device)
{
    cl_int err = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof *context, context, NULL);
    if (err == CL_SUCCESS)
        err = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof *device, device, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clGetCommandQueueInfo");
}

cmrscl_status cmrscl_context_create_from_cl(cl_context context, cl_command_queue queue,
                                            cmrscl_context *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!context || !queue)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "context or queue is NULL");
    cl_context queue_context = NULL;
    cl_device_id device = NULL;
    cmrscl_status st = cmrs_queue_owner(queue, &queue_context, &device);
    if (st != CMRSCL_OK)
        return st;
    if (queue_context != context)
        return cmrscl_fail(CMRSCL_ERROR_CONTEXT_MISMATCH, "the queue belongs to another context");
    cmrscl_context ctx = NULL;
    st = context_new(&ctx);
    if (st != CMRSCL_OK)
        return st;
    clRetainContext(context);
    clRetainCommandQueue(queue);
    ctx->context = context;
    ctx->queue = queue;
    ctx->device = device;
    device_entry e = entry_for(device);
    st = cmrs_device_query(&e, context, &ctx->info);
    if (st != CMRSCL_OK) {
        cmrscl_context_free(ctx);
        return st;
    }
    *out = ctx;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_context_device_info(cmrscl_context ctx, cmrscl_device_info *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!ctx || !out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "context or out is NULL");
    *out = ctx->info;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_context_cl(cmrscl_context ctx, cl_context *context, cl_command_queue *queue)
{
    if (context)
        *context = NULL;
    if (queue)
        *queue = NULL;
    if (!ctx)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "context is NULL");
    if (context)
        *context = ctx->context;
    if (queue)
        *queue = ctx->queue;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_context_set_memory_limit(cmrscl_context ctx, uint64_t bytes)
{
    if (!ctx)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "context is NULL");
    pthread_mutex_lock(&ctx->lock);
    ctx->memory_limit = bytes;
    pthread_mutex_unlock(&ctx->lock);
    return CMRSCL_OK;
}
