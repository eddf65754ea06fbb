/* upload.c - host arrays into device buffers (runtime.h, cmrs_upload). NVIDIA's OpenCL copies
 * from pageable memory at 7-8 GB/s and from pinned memory at 55 (an H200, PCIe 5), so arrays
 * of a slot or more go through a ring of two pinned slots: the host's threads fill one while
 * the other crosses the bus - 32-36 GB/s with the copies on 16 threads (docs/dev/PERFORMANCE.md,
 * UPLOAD_RING_SLOT). The ring is the context's, pinned at its first use and kept: 2 x
 * UPLOAD_RING_SLOT of host memory. Pinning it costs about as long as a pageable write of a few
 * hundred MB, so an array of UPLOAD_RING_FIRST or more pins it; once pinned, every array of a
 * slot or more takes it (an AMG hierarchy's many matrices, a context's later matrices). Devices
 * that share the host's memory (CPUs, integrated GPUs) take the arrays as they are: a ring would
 * only add a copy. Reads of large arrays back into the host (cmrs_download) take the same ring
 * the other way: into fresh pageable memory NVIDIA's OpenCL reads at a few GB/s, while the
 * host's threads copy a slot out, touching its pages, as the next crosses. */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

#define UPLOAD_RING_SLOT ((size_t)32 << 20)
#define UPLOAD_RING_FIRST ((size_t)256 << 20)

/* The ring's slot for an upload of `bytes` (0: none): CMRSCL_UPLOAD_RING=BYTES asks for slots
 * of that size on any device, for any array (*forced; 0: never; the tests' way to take the
 * ring on a CPU). */
static size_t ring_slot(cmrscl_context ctx, size_t bytes, bool *forced)
{
    const char *asked = getenv("CMRSCL_UPLOAD_RING");
    *forced = asked && *asked;
    if (*forced) { /* (slots beyond a GB: none - two of them must fit a size_t and the host) */
        unsigned long long slot = strtoull(asked, NULL, 10);
        return slot <= ((size_t)1 << 30) ? (size_t)slot : 0;
    }
    cl_bool unified = CL_FALSE; /* (a GPU that does not say is taken as discrete) */
    clGetDeviceInfo(ctx->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL);
    bool discrete = (ctx->info.type & CL_DEVICE_TYPE_GPU) && !unified;
    return discrete && bytes >= UPLOAD_RING_SLOT ? UPLOAD_RING_SLOT : 0;
}

void cmrs_upload_ring_free(cmrscl_context ctx)
{
    upload_ring *r = &ctx->ring;
    if (r->slots &&
        clEnqueueUnmapMemObject(ctx->queue, r->buf, r->slots, 0, NULL, NULL) == CL_SUCCESS)
        clFinish(ctx->queue);
    if (r->buf)
        clReleaseMemObject(r->buf);
    *r = (upload_ring){0};
}

/* The ring with slots of `slot` bytes, pinned and mapped (false: it could not be made). */
static bool ring_ready(cmrscl_context ctx, size_t slot)
{
    upload_ring *r = &ctx->ring;
    if (r->slots && r->slot == slot)
        return true;
    if (r->unpinnable) /* tried once: later uploads go as they are */
        return false;
    cmrs_upload_ring_free(ctx);
    cl_int err;
    r->buf = clCreateBuffer(ctx->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_ONLY, 2 * slot, NULL,
                            &err);
    if (r->buf)
        r->slots = clEnqueueMapBuffer(ctx->queue, r->buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                      2 * slot, 0, NULL, NULL, &err);
    if (!r->slots) {
        cmrs_upload_ring_free(ctx);
        r->unpinnable = true;
        return false;
    }
    r->slot = slot;
    return true;
}

/* The array through the ring, slot after slot; returns once every chunk has crossed. */
static cl_int ring_upload(cmrscl_context ctx, cl_mem dst, size_t bytes, const char *src)
{
    const upload_ring *r = &ctx->ring;
    cl_event pending[2] = {NULL, NULL}; /* each slot's last chunk on its way */
    cl_int err = CL_SUCCESS;
    for (size_t at = 0, k = 0; at < bytes && err == CL_SUCCESS; at += r->slot, ++k) {
        int s = (int)(k & 1);
        if (pending[s]) { /* the slot's last chunk must have left it */
            err = clWaitForEvents(1, &pending[s]);
            clReleaseEvent(pending[s]);
            pending[s] = NULL;
        }
        char *slot = (char *)r->slots + (size_t)s * r->slot;
        const size_t n = bytes - at < r->slot ? bytes - at : r->slot;
        if (err == CL_SUCCESS) {
            cmrs_parallel_copy(slot, src + at, n);
            err =
                clEnqueueWriteBuffer(ctx->queue, dst, CL_FALSE, at, n, slot, 0, NULL, &pending[s]);
        }
        if (err == CL_SUCCESS)
            err = clFlush(ctx->queue);
    }
    for (int s = 0; s < 2; ++s)
        if (pending[s]) {
            cl_int e = clWaitForEvents(1, &pending[s]);
            err = err == CL_SUCCESS ? e : err;
            clReleaseEvent(pending[s]);
        }
    return err;
}

/* Whether an array of `bytes` crosses through the ring: if so, the ring is ready and the
 * caller holds its lock (one transfer through it at a time). */
static bool ring_taken(cmrscl_context ctx, size_t bytes)
{
    bool forced;
    size_t slot = ring_slot(ctx, bytes, &forced);
    if (slot == 0)
        return false;
    pthread_mutex_lock(&ctx->ring_lock);
    bool ready = (forced || ctx->ring.slots || bytes >= UPLOAD_RING_FIRST) && ring_ready(ctx, slot);
    if (!ready)
        pthread_mutex_unlock(&ctx->ring_lock);
    return ready;
}

cl_int cmrs_upload(cmrscl_context ctx, cl_mem dst, size_t bytes, const void *src, cl_event *done)
{
    *done = NULL;
    if (ring_taken(ctx, bytes)) {
        cl_int err = ring_upload(ctx, dst, bytes, src);
        pthread_mutex_unlock(&ctx->ring_lock);
        return err;
    } /* else as it is, from pageable memory */
    return clEnqueueWriteBuffer(ctx->queue, dst, CL_FALSE, 0, bytes, src, 0, NULL, done);
}

/* `bytes` of src from `offset` into dst through the ring: a slot read while the one before is
 * copied out on the host's threads. */
static cl_int ring_download(cmrscl_context ctx, cl_mem src, size_t offset, size_t bytes, char *dst)
{
    const upload_ring *r = &ctx->ring;
    size_t chunks = (bytes + r->slot - 1) / r->slot;
    cl_event pending[2] = {NULL, NULL}; /* each slot's chunk on its way */
    cl_int err = CL_SUCCESS;
    for (size_t k = 0; k <= chunks && err == CL_SUCCESS; ++k) {
        if (k < chunks) { /* chunk k into its slot, whose last chunk (k - 2) is copied out */
            size_t at = k * r->slot, n = bytes - at < r->slot ? bytes - at : r->slot;
            err =
                clEnqueueReadBuffer(ctx->queue, src, CL_FALSE, offset + at, n,
                                    (char *)r->slots + (k & 1) * r->slot, 0, NULL, &pending[k & 1]);
            if (err == CL_SUCCESS)
                err = clFlush(ctx->queue);
        }
        if (k > 0 && err == CL_SUCCESS) { /* chunk k - 1 out of its slot */
            size_t s = (k - 1) & 1, at = (k - 1) * r->slot;
            err = clWaitForEvents(1, &pending[s]);
            clReleaseEvent(pending[s]);
            pending[s] = NULL;
            if (err == CL_SUCCESS)
                cmrs_parallel_copy(dst + at, (const char *)r->slots + s * r->slot,
                                   bytes - at < r->slot ? bytes - at : r->slot);
        }
    }
    for (int s = 0; s < 2; ++s)
        if (pending[s]) {
            clWaitForEvents(1, &pending[s]);
            clReleaseEvent(pending[s]);
        }
    return err;
}

cl_int cmrs_download(cmrscl_context ctx, cl_mem src, size_t offset, size_t bytes, void *dst)
{
    if (ring_taken(ctx, bytes)) {
        cl_int err = ring_download(ctx, src, offset, bytes, dst);
        pthread_mutex_unlock(&ctx->ring_lock);
        return err;
    } /* else as it is, into pageable memory */
    return bytes ? clEnqueueReadBuffer(ctx->queue, src, CL_TRUE, offset, bytes, dst, 0, NULL, NULL)
                 : CL_SUCCESS;
}
