/* bandwidth.c - what the device's memory achieves through OpenCL (cl/stream.cl): stream
 * read, copy and triad over three buffers far larger than the last-level cache, best of the
 * repetitions by profiling events, as B in the paper's eta = beta/tau / B; and the rate of
 * scattered loads from a buffer the size of x, the other roof of a sparse product. */
#include "exec/exec.h"

#include <stdlib.h>
#include <string.h>

typedef struct stream_env {
    cl_command_queue q;
    cl_mem a, b, c, sums;
    size_t global;
    uint64_t bytes; /* per buffer */
} stream_env;

/* How the work-items walk the buffers. A GPU streams with grid strides (each warp's loads
 * coalesce). A CPU compiler may run each work-item's loop at a time, and then only blocks of
 * its own stream (strides send every load to another page), or vectorise across work-items,
 * and then strides do: on CPUs both run and each kernel keeps its best. cmrscl-run bandwidth
 * on a 2-core EPYC (2026-11-24): PoCL 3.1 read 2.8 GB/s with strides, 38 in blocks; Intel's
 * CPU runtime 2026.2 about 14 either way (copy 31-41), where a plain C loop reads 9.7 and
 * memcpy copies 23. */
typedef struct stream_pattern {
    const char *options; /* cl/stream.cl's build options */
    bool cpu_only;
} stream_pattern;

static const stream_pattern patterns[] = {
    {"-cl-std=CL1.2", false},
    {"-cl-std=CL1.2 -DCONTIGUOUS=1", true},
};

static cmrscl_status stream_program(cmrscl_context ctx, const char *options, cl_program *prog)
{
    char *src = NULL;
    cmrscl_status st = cmrs_program_source("stream.cl", &src);
    if (st == CMRSCL_OK)
        st = cmrs_program_build(ctx->context, ctx->device, src, options, prog);
    free(src);
    return st;
}

/* Best (shortest) time in seconds of `repetitions` launches of k, after one warm-up. */
static cmrscl_status best_time(const stream_env *e, cl_kernel k, int repetitions, double *best)
{
    *best = 0.0;
    for (int i = 0; i <= repetitions; ++i) {
        cl_event ev = NULL;
        cl_int err = clEnqueueNDRangeKernel(e->q, k, 1, NULL, &e->global, NULL, 0, NULL, &ev);
        if (err == CL_SUCCESS)
            err = clWaitForEvents(1, &ev);
        double ms = 0.0;
        if (err == CL_SUCCESS)
            err = cmrs_event_ms(ev, ev, &ms);
        if (ev)
            clReleaseEvent(ev);
        if (err != CL_SUCCESS)
            return cmrscl_fail_cl(err, "stream kernel");
        double t = ms * 1e-3;
        if (i > 0 && t > 0 && (*best == 0.0 || t < *best))
            *best = t;
    }
    return CMRSCL_OK;
}

/* The three stream kernels of one access pattern; each rate the better of what it measures
 * and what *out holds. */
static cmrscl_status run_streams(cmrscl_context ctx, const stream_env *e,
                                 const stream_pattern *pattern, int repetitions,
                                 cmrscl_bandwidth *out)
{
    cl_uint n = (cl_uint)(e->bytes / 16); /* float4 elements per buffer */
    cl_program prog = NULL;
    cl_kernel k[3] = {NULL, NULL, NULL};
    static const char *const names[3] = {"stream_read", "stream_copy", "stream_triad"};
    cmrscl_status st = stream_program(ctx, pattern->options, &prog);
    for (int i = 0; st == CMRSCL_OK && i < 3; ++i) {
        cl_int err;
        if (!(k[i] = clCreateKernel(prog, names[i], &err)))
            st = cmrscl_fail_cl(err, "clCreateKernel (stream)");
    }
    if (st == CMRSCL_OK) {
        cl_float scalar = 3.0f;
        cl_int err = clSetKernelArg(k[0], 0, sizeof(cl_mem), &e->a) |
                     clSetKernelArg(k[0], 1, sizeof(cl_uint), &n) |
                     clSetKernelArg(k[0], 2, sizeof(cl_mem), &e->sums) |
                     clSetKernelArg(k[1], 0, sizeof(cl_mem), &e->a) |
                     clSetKernelArg(k[1], 1, sizeof(cl_mem), &e->b) |
                     clSetKernelArg(k[1], 2, sizeof(cl_uint), &n) |
                     clSetKernelArg(k[2], 0, sizeof(cl_mem), &e->a) |
                     clSetKernelArg(k[2], 1, sizeof(cl_mem), &e->b) |
                     clSetKernelArg(k[2], 2, sizeof(cl_mem), &e->c) |
                     clSetKernelArg(k[2], 3, sizeof(cl_float), &scalar) |
                     clSetKernelArg(k[2], 4, sizeof(cl_uint), &n);
        if (err != CL_SUCCESS)
            st = cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg (stream) failed");
    }
    double t[3] = {0, 0, 0}, moved[3] = {1, 2, 3}; /* buffers read + written per kernel */
    for (int i = 0; st == CMRSCL_OK && i < 3; ++i)
        st = best_time(e, k[i], repetitions, &t[i]);
    double bytes = 16.0 * n;
    double *gbs[3] = {&out->read_gbs, &out->copy_gbs, &out->triad_gbs};
    for (int i = 0; st == CMRSCL_OK && i < 3; ++i) {
        double gb = t[i] > 0 ? moved[i] * bytes / t[i] * 1e-9 : 0.0;
        *gbs[i] = gb > *gbs[i] ? gb : *gbs[i];
        if (*gbs[i] > out->best_gbs)
            out->best_gbs = *gbs[i];
    }
    for (int i = 0; i < 3; ++i)
        if (k[i])
            clReleaseKernel(k[i]);
    if (prog)
        clReleaseProgram(prog);
    return st;
}

cmrscl_status cmrscl_bandwidth_measure(cmrscl_context ctx, uint64_t bytes, int repetitions,
                                       cmrscl_bandwidth *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!ctx || !out || repetitions < 1)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "context or out is NULL, or repetitions %d < 1", repetitions);
    const cmrscl_device_info *d = &ctx->info;
    if (bytes == 0) { /* 1 GiB each, or what the device allows for three of them */
        bytes = 1ull << 30;
        /* A CPU streams a few tens of GB/s: a buffer well past its cache measures the same
         * in a fraction of the time */
        uint64_t past_cache = 8 * d->cache_bytes > (64ull << 20) ? 8 * d->cache_bytes : 64ull << 20;
        if ((d->type & CL_DEVICE_TYPE_CPU) && past_cache < bytes)
            bytes = past_cache;
        if (bytes > d->max_alloc_bytes)
            bytes = d->max_alloc_bytes;
        if (bytes > d->global_mem_bytes / 4)
            bytes = d->global_mem_bytes / 4;
    }
    bytes = bytes / 16 * 16;
    if (bytes < 16 || bytes / 16 > UINT32_MAX) /* the kernels count float4s in a uint */
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "%llu bytes per buffer: expected 16 bytes to 64 GiB",
                           (unsigned long long)bytes);
    stream_env e = {ctx->queue, NULL, NULL, NULL, NULL, 0, bytes};
    /* Enough work-items for every compute unit to keep many loads in flight. */
    e.global = (size_t)(d->compute_units ? d->compute_units : 1) * 2048;
    cl_int err = CL_SUCCESS;
    cl_mem *bufs[3] = {&e.a, &e.b, &e.c};
    for (int i = 0; i < 3 && err == CL_SUCCESS; ++i)
        *bufs[i] = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err == CL_SUCCESS)
        e.sums = clCreateBuffer(ctx->context, CL_MEM_WRITE_ONLY, e.global * sizeof(cl_float), NULL,
                                &err);
    cl_float one = 1.0f;
    for (int i = 0; i < 3 && err == CL_SUCCESS; ++i) /* never time untouched memory */
        err = clEnqueueFillBuffer(e.q, *bufs[i], &one, sizeof one, 0, bytes, 0, NULL, NULL);
    cmrscl_status st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "stream buffers");
    bool cpu = (d->type & CL_DEVICE_TYPE_CPU) != 0;
    for (size_t i = 0; st == CMRSCL_OK && i < sizeof patterns / sizeof *patterns; ++i)
        if (cpu || !patterns[i].cpu_only)
            st = run_streams(ctx, &e, &patterns[i], repetitions, out);
    out->bytes = bytes;
    cl_mem all[4] = {e.a, e.b, e.c, e.sums};
    for (int i = 0; i < 4; ++i)
        if (all[i])
            clReleaseMemObject(all[i]);
    return st;
}

#define GATHER_LOADS 128 /* loads per work-item: ~2e7 per launch on a large GPU */

cmrscl_status cmrscl_gather_measure(cmrscl_context ctx, uint64_t bytes, int repetitions,
                                    double *gloads)
{
    if (gloads)
        *gloads = 0.0;
    if (!ctx || !gloads || repetitions < 1)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "context or gloads is NULL, or repetitions %d < 1", repetitions);
    const cmrscl_device_info *d = &ctx->info;
    if (bytes < 4 || bytes / 4 > UINT32_MAX || bytes > d->max_alloc_bytes)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "%llu bytes to gather from: expected 4 bytes to the device's largest "
                           "buffer (%llu bytes) and at most 16 GiB",
                           (unsigned long long)bytes, (unsigned long long)d->max_alloc_bytes);
    bytes = bytes / 4 * 4;
    stream_env e = {ctx->queue, NULL, NULL, NULL, NULL, 0, bytes};
    cl_uint n = (cl_uint)(bytes / 4); /* floats */
    e.global = (size_t)(d->compute_units ? d->compute_units : 1) * 2048;
    cl_program prog = NULL;
    cl_kernel k = NULL;
    cl_int err = CL_SUCCESS;
    e.a = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err == CL_SUCCESS)
        e.sums = clCreateBuffer(ctx->context, CL_MEM_WRITE_ONLY, e.global * sizeof(cl_float), NULL,
                                &err);
    cl_float one = 1.0f;
    if (err == CL_SUCCESS) /* never time untouched memory */
        err = clEnqueueFillBuffer(e.q, e.a, &one, sizeof one, 0, bytes, 0, NULL, NULL);
    cmrscl_status st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "gather buffers");
    if (st == CMRSCL_OK)
        st = stream_program(ctx, patterns[0].options, &prog);
    if (st == CMRSCL_OK && !(k = clCreateKernel(prog, "stream_gather", &err)))
        st = cmrscl_fail_cl(err, "clCreateKernel (gather)");
    cl_uint loads = GATHER_LOADS;
    if (st == CMRSCL_OK &&
        (clSetKernelArg(k, 0, sizeof(cl_mem), &e.a) | clSetKernelArg(k, 1, sizeof(cl_uint), &n) |
         clSetKernelArg(k, 2, sizeof(cl_uint), &loads) |
         clSetKernelArg(k, 3, sizeof(cl_mem), &e.sums)) != CL_SUCCESS)
        st = cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg (gather) failed");
    double t = 0.0;
    if (st == CMRSCL_OK)
        st = best_time(&e, k, repetitions, &t);
    if (st == CMRSCL_OK && t > 0)
        *gloads = (double)e.global * GATHER_LOADS / t * 1e-9;
    if (k)
        clReleaseKernel(k);
    if (prog)
        clReleaseProgram(prog);
    if (e.a)
        clReleaseMemObject(e.a);
    if (e.sums)
        clReleaseMemObject(e.sums);
    return st;
}
