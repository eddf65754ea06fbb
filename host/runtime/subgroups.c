/* subgroups.c - a device's sub-groups, for the warp layer's SUBGROUP backend (cl/warp.cl):
 *   - whether it has them: the extension cl_khr_subgroups, or OpenCL C 3.0's feature
 *     __opencl_c_subgroups, which 3.0 devices report without the extension (Intel's CPU
 *     runtime does), and under which OpenCL C version kernels reach them;
 *   - what a probe kernel sees: each sub-group's width and layout, with and without the
 *     widths a kernel can ask for (intel_reqd_sub_group_size: an implementation may accept
 *     the attribute and not honour it, so every width is run before it is believed), and
 *     whether the shuffles the families use build and give the right lanes;
 *   - after a build, the width the compiler actually gave a kernel, so that no kernel
 *     computes with a width it does not have (the plan then takes another path). */
#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CL_DEVICE_OPENCL_C_FEATURES_ 0x106F /* OpenCL 3.0 */
#define CL_DEVICE_SUB_GROUP_SIZES_INTEL_ 0x4108
#define CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE_ 0x2033
#define CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE_ 0x2034
#define CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL_ 0x410A
#define PROBE_GROUP 128    /* work-items of the probe's group */
#define MAX_SUBGROUP_LOG 6 /* widths up to 64 lanes */

/* Whether the device lists an OpenCL C 3.0 feature (CL_DEVICE_OPENCL_C_FEATURES). */
static bool has_feature(cl_device_id device, const char *name)
{
    typedef struct {
        cl_uint version;
        char name[64];
    } name_version;
    size_t size = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_OPENCL_C_FEATURES_, 0, NULL, &size) != CL_SUCCESS ||
        size < sizeof(name_version))
        return false;
    name_version *list = malloc(size);
    bool found = false;
    if (list &&
        clGetDeviceInfo(device, CL_DEVICE_OPENCL_C_FEATURES_, size, list, NULL) == CL_SUCCESS)
        for (size_t i = 0; i < size / sizeof *list && !found; ++i)
            found = strncmp(list[i].name, name, sizeof list[i].name) == 0;
    free(list);
    return found;
}

/* The widths (bit k: 2^k lanes, 2..64) the device lists for intel_reqd_sub_group_size. */
static unsigned listed_widths(cl_device_id device, const char *ext)
{
    size_t sizes[64], bytes = 0;
    if (!strstr(ext, "cl_intel_required_subgroup_size") ||
        clGetDeviceInfo(device, CL_DEVICE_SUB_GROUP_SIZES_INTEL_, sizeof sizes, sizes, &bytes) !=
            CL_SUCCESS)
        return 0;
    unsigned mask = 0;
    for (size_t i = 0; i < bytes / sizeof(size_t); ++i)
        for (int k = 1; k <= MAX_SUBGROUP_LOG; ++k)
            mask |= sizes[i] == ((size_t)1 << k) ? 1u << k : 0u;
    return mask;
}

/* Runs probe kernel `name` on one group of PROBE_GROUP work-items, each writing `words`
 * uints, into got; false when anything fails. */
static bool launch_probe(cl_context context, cl_device_id device, cl_program prog, const char *name,
                         size_t words, cl_uint *got)
{
    cl_int err;
    size_t group = PROBE_GROUP, bytes = sizeof(cl_uint) * words * group;
    cl_kernel k = clCreateKernel(prog, name, &err);
    cl_command_queue q = k ? clCreateCommandQueue(context, device, 0, &err) : NULL;
    cl_mem out = q ? clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &err) : NULL;
    bool ran = out && clSetKernelArg(k, 0, sizeof out, &out) == CL_SUCCESS &&
               clEnqueueNDRangeKernel(q, k, 1, NULL, &group, &group, 0, NULL, NULL) == CL_SUCCESS &&
               clEnqueueReadBuffer(q, out, CL_TRUE, 0, bytes, got, 0, NULL, NULL) == CL_SUCCESS;
    if (out)
        clReleaseMemObject(out);
    if (q)
        clReleaseCommandQueue(q);
    if (k)
        clReleaseKernel(k);
    return ran;
}

/* The width of the probe's sub-groups when every one has it, holds consecutive work-items in
 * order and, with `shuffles`, swapped lanes right through the shuffles the families use;
 * else 0. */
static unsigned run_probe(cl_context context, cl_device_id device, cl_program prog,
                          const char *name, bool shuffles)
{
    cl_uint got[4 * PROBE_GROUP];
    if (!launch_probe(context, device, prog, name, 4, got))
        return 0;
    unsigned s = got[0];
    bool regular = s >= 2 && (s & (s - 1)) == 0 && PROBE_GROUP % s == 0;
    for (cl_uint i = 0; regular && i < PROBE_GROUP; ++i) {
        const cl_uint *g = got + (size_t)4 * i;
        regular = g[0] == s && g[1] == (i % s | (i / s) << 16);
        if (shuffles) /* lane ^ 1, lane - 1 (lane 0 its own), lane + 1 (the last its own) */
            regular = regular && g[2] == (i ^ 1) &&
                      g[3] == ((i % s ? i - 1 : i) | (i % s + 1 < s ? i + 1 : i) << 16);
    }
    return regular ? s : 0;
}

/* Whether the sub-groups of `width` lanes in one group may take different paths: the apart
 * probe's sums (probe.cl) right for every work-item. */
static bool run_apart_probe(cl_context context, cl_device_id device, cl_program prog,
                            const char *name, unsigned width)
{
    cl_uint got[PROBE_GROUP];
    bool apart = launch_probe(context, device, prog, name, 1, got);
    for (cl_uint i = 0; apart && i < PROBE_GROUP; ++i) {
        cl_uint lane = i % width, g = i / width;
        apart = got[i] == (g + 1) * (lane ^ 1u) + g * (g + 1) / 2;
    }
    return apart;
}

/* Builds probe.cl's sub-group kernels with `options` and fills what they tell. */
static bool probe_with(cl_context context, cl_device_id device, const char *src,
                       const char *options, unsigned listed, bool shuffle, bool relative,
                       cmrscl_device_info *out)
{
    char opts[256];
    snprintf(opts, sizeof opts, "%s -DPROBE_WIDTHS=%u -DPROBE_SHUFFLE=%d -DSG_RELATIVE=%d", options,
             listed, shuffle, relative);
    cl_program prog = NULL;
    if (cmrs_program_build(context, device, src, opts, &prog) != CMRSCL_OK)
        return false;
    /* The compiler's own width: what it gives a kernel that asks for none, unless that is the
     * whole group (an implementation whose sub-group is the work-group has no width of its own). */
    unsigned natural = run_probe(context, device, prog, "probe_subgroups", shuffle);
    if (natural >= PROBE_GROUP)
        natural = 0;
    unsigned widths = 0;
    for (int k = 1; k <= MAX_SUBGROUP_LOG; ++k) {
        char name[32];
        snprintf(name, sizeof name, "probe_subgroups_%u", 1u << k);
        if ((listed >> k & 1u) && run_probe(context, device, prog, name, shuffle) == 1u << k)
            widths |= 1u << k;
    }
    if (!natural && !widths) {
        clReleaseProgram(prog);
        return false;
    }
    /* The width plans use: the compiler's own, where kernels may have it; else the width work-
     * groups are best a multiple of (PoCL: 8), else the widest up to 32. */
    unsigned w = 0;
    if (natural && (!widths || (widths & natural)))
        w = natural;
    else if (widths & out->warp_width)
        w = out->warp_width;
    else
        for (w = 32; w >= 2 && !(widths & w); w /= 2) {
        }
    out->subgroup_widths = widths;
    out->subgroup_shuffle = shuffle;
    out->subgroup_width = w >= 2 ? w : 0;
    /* Whether sub-groups of a group may part ways, at the width plans use (with shuffles:
     * the probe needs them; without, the families that part ways have nothing to run). */
    char name[40];
    if (widths & w)
        snprintf(name, sizeof name, "probe_subgroups_apart_%u", w);
    else
        snprintf(name, sizeof name, "probe_subgroups_apart");
    out->subgroup_apart = shuffle && w >= 2 && run_apart_probe(context, device, prog, name, w);
    clReleaseProgram(prog);
    return out->subgroup_width != 0;
}

void cmrs_subgroups_query(const device_entry *e, cl_context context, const char *ext,
                          cmrscl_device_info *out)
{
    bool feature = has_feature(e->device, "__opencl_c_subgroups");
    out->subgroups = feature || strstr(ext, "cl_khr_subgroups") != NULL;
    if (!out->subgroups || out->max_work_group_size < PROBE_GROUP)
        return;
    cl_int err;
    cl_context own = context ? NULL : clCreateContext(NULL, 1, &e->device, NULL, NULL, &err);
    char *src = NULL;
    if ((!own && !context) || cmrs_program_source("probe.cl", &src) != CMRSCL_OK) {
        free(src);
        if (own)
            clReleaseContext(own);
        return;
    }
    /* The OpenCL C versions to try: 3.0 first where the feature is reported (3.0 devices
     * need not declare the extension to older versions), else those of the extension. */
    static const struct {
        const char *std;
        int version;
    } stds[] = {{"-cl-std=CL3.0", 30}, {"-cl-std=CL1.2", 12}, {"-cl-std=CL2.0", 20}};
    unsigned listed = listed_widths(e->device, ext);
    bool shuffle = strstr(ext, "cl_khr_subgroup_shuffle") != NULL;
    bool relative = strstr(ext, "cl_khr_subgroup_shuffle_relative") != NULL;
    for (size_t i = feature ? 0 : 1; i < 3 && !out->subgroup_width; ++i) {
        /* shuffles that do not build or give wrong lanes count as absent */
        if (probe_with(context ? context : own, e->device, src, stds[i].std, listed, shuffle,
                       relative, out) ||
            (shuffle && probe_with(context ? context : own, e->device, src, stds[i].std, listed,
                                   false, false, out)))
            out->subgroup_cl_c = stds[i].version;
    }
    out->subgroup_relative = out->subgroup_shuffle && relative;
    free(src);
    if (own)
        clReleaseContext(own);
}

/* clGetKernelSubGroupInfoKHR through the ICD loader, which dispatches it to any platform. */
typedef cl_int(CL_API_CALL *sub_group_info_fn)(cl_kernel, cl_device_id, cl_uint, size_t,
                                               const void *, size_t, void *, size_t *);

cmrscl_status cmrs_subgroups_check_kernel(cmrscl_context ctx, cl_kernel kernel,
                                          const cmrscl_params *p)
{
    cl_platform_id platform = NULL;
    clGetDeviceInfo(ctx->device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    /* an extension's entry point: a data pointer made a function pointer, through an integer */
    /* NOLINTNEXTLINE(performance-no-int-to-ptr) */
    sub_group_info_fn info = (sub_group_info_fn)(uintptr_t)clGetExtensionFunctionAddressForPlatform(
        platform, "clGetKernelSubGroupInfoKHR");
    size_t group = (size_t)p->work_group_size, width = 0, count = 0;
    bool fixed = ctx->info.subgroup_widths & (unsigned)p->warp;
    if (fixed) {
        /* Fixed by the attribute, which the device query saw honoured; the kernel's own
         * report, where the implementation gives one, must agree. */
        if (info &&
            info(kernel, ctx->device, CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL_, 0, NULL,
                 sizeof width, &width, NULL) == CL_SUCCESS &&
            width && width != (size_t)p->warp)
            return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                               "the compiler built the kernel with sub-groups of %zu lanes, not "
                               "the %d it was asked for",
                               width, p->warp);
        return CMRSCL_OK;
    }
    cl_int err = info ? info(kernel, ctx->device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE_,
                             sizeof group, &group, sizeof width, &width, NULL)
                      : CL_INVALID_OPERATION;
    if (err == CL_SUCCESS)
        err = info(kernel, ctx->device, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE_, sizeof group,
                   &group, sizeof count, &count, NULL);
    if (err != CL_SUCCESS)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "the kernel's sub-group size cannot be read back "
                           "(clGetKernelSubGroupInfoKHR: %s)",
                           cmrscl_cl_error_name(err));
    if (width != (size_t)p->warp || count * width != group)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "the compiler built the kernel with %zu sub-groups of at most %zu "
                           "lanes per work-group of %zu, not sub-groups of the %d lanes the plan "
                           "counts on",
                           count, width, group, p->warp);
    return CMRSCL_OK;
}
