/* command_buffer.c - whether a context's products are recorded in cl_khr_command_buffer
 * command buffers (exec/recording.c), and the extension's entry points. Probed once per
 * context, on the first recording: a context that never records pays nothing. Only when
 * CMRSCL_COMMAND_BUFFER=on asks for them (measurement below).
 *
 * Only version 1.0 of the extension, the ratified one (Intel's OpenCL CPU runtime 2026.2):
 * a solver's loop enqueues one recording back to back, each replay before the last has
 * run, which the provisional 0.9 versions allow only with a simultaneous-use capability;
 * and PoCL 3.1's 0.9.0, which has it, replayed kernel arguments set after the recording
 * (test_recording: the paper's 5x5 matrix, with a product of other arguments in between).
 * Devices with a 0.9 version enqueue the kernels instead. The entry points have the same
 * parameters from 0.9.0 to 1.0 (a recorded command's queue argument is NULL: the command
 * buffer's own queue). */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

#ifndef CL_DEVICE_EXTENSIONS_WITH_VERSION /* OpenCL 3.0, beyond the 1.2 API the library targets */
#define CL_DEVICE_EXTENSIONS_WITH_VERSION 0x1060
typedef struct cl_name_version {
    cl_uint version;
    char name[64];
} cl_name_version;
#endif
#define VERSION_1_0 (1u << 22) /* CL_MAKE_VERSION(1, 0, 0) */

/* The extension's version on the device; 0 where the device does not say (OpenCL < 3.0). */
static cl_uint extension_version(cl_device_id device)
{
    size_t bytes = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, NULL, &bytes) != CL_SUCCESS ||
        bytes == 0)
        return 0;
    cl_name_version *list = malloc(bytes);
    cl_uint version = 0;
    if (list &&
        clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS_WITH_VERSION, bytes, list, NULL) == CL_SUCCESS)
        for (size_t i = 0; i < bytes / sizeof *list; ++i)
            if (!strcmp(list[i].name, "cl_khr_command_buffer"))
                version = list[i].version;
    free(list);
    return version;
}

static bool lists_extension(cl_device_id device)
{
    size_t bytes = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &bytes) != CL_SUCCESS)
        return false;
    char *ext = malloc(bytes + 2);
    bool found = false;
    if (ext && clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, bytes, ext + 1, NULL) == CL_SUCCESS) {
        ext[0] = ' ', ext[bytes] = ' ', ext[bytes + 1] = '\0'; /* whole words only */
        found = strstr(ext, " cl_khr_command_buffer ") != NULL;
    }
    free(ext);
    return found;
}

static void *entry_point(cl_device_id device, const char *name)
{
    cl_platform_id platform = NULL;
    clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    return platform ? clGetExtensionFunctionAddressForPlatform(platform, name) : NULL;
}

static void probe(cmrscl_context ctx, command_buffer_api *api)
{
    memset(api, 0, sizeof *api);
    /* Not by default: where they work they did not pay. Intel's CPU runtime 2026.2 on a
     * 2-core machine (cmrscl-launch-cost, docs/dev/PERFORMANCE.md): replays of stencil7:5 in float
     * looped in 14.25 us against 11.76 us for the kernels enqueued, stencil7:20 alike
     * (104.8 us). */
    const char *env = getenv("CMRSCL_COMMAND_BUFFER");
    if (!env || strcmp(env, "on")) {
        api->why = env && !strcmp(env, "off")
                       ? "command buffers turned off (CMRSCL_COMMAND_BUFFER=off)"
                       : "command buffers only on request (CMRSCL_COMMAND_BUFFER=on): where "
                         "measured they were not faster than enqueueing the kernels";
        return;
    }
    cl_device_id dev = ctx->device;
    if (!lists_extension(dev)) {
        api->why = "the device does not offer cl_khr_command_buffer";
        return;
    }
    cl_bitfield required = 0;
    cl_command_queue_properties props = 0;
    clGetDeviceInfo(dev, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof required,
                    &required, NULL);
    clGetCommandQueueInfo(ctx->queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (required & ~props) {
        api->why = "cl_khr_command_buffer needs queue properties the context's queue lacks";
        return;
    }
    if (extension_version(dev) < VERSION_1_0) {
        api->why = "cl_khr_command_buffer before 1.0 (provisional: PoCL 3.1's 0.9.0 replayed "
                   "arguments set after the recording)";
        return;
    }
    api->create = (clCreateCommandBufferKHR_fn)entry_point(dev, "clCreateCommandBufferKHR");
    api->finalize = (clFinalizeCommandBufferKHR_fn)entry_point(dev, "clFinalizeCommandBufferKHR");
    api->ndrange = (clCommandNDRangeKernelKHR_fn)entry_point(dev, "clCommandNDRangeKernelKHR");
    api->enqueue = (clEnqueueCommandBufferKHR_fn)entry_point(dev, "clEnqueueCommandBufferKHR");
    api->release = (clReleaseCommandBufferKHR_fn)entry_point(dev, "clReleaseCommandBufferKHR");
    if (!api->create || !api->finalize || !api->ndrange || !api->enqueue || !api->release) {
        memset(api, 0, sizeof *api);
        api->why = "the platform lists cl_khr_command_buffer but lacks its entry points";
        return;
    }
    api->why = "a cl_khr_command_buffer command buffer";
}

const command_buffer_api *cmrs_command_buffer_support(cmrscl_context ctx)
{
    pthread_mutex_lock(&ctx->lock);
    if (!ctx->command_buffer_probed)
        probe(ctx, &ctx->command_buffer);
    ctx->command_buffer_probed = true;
    pthread_mutex_unlock(&ctx->lock);
    return &ctx->command_buffer;
}
