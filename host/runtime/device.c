/* device.c - OpenCL platforms and devices: enumeration in "P:D" order, selection by index,
 * type or name, and the facts the plan depends on: local memory, warp or wavefront width and
 * how it was found, the resident work-items and the last-level cache, fp64, NVIDIA's compute
 * capability; sub-groups are found by subgroups.c. Each fact comes from a query where OpenCL
 * or a vendor extension has one, and from a table (that says what it is) where not. */
#include "runtime/runtime.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Vendor queries from cl_nv_device_attribute_query and cl_amd_device_attribute_query. */
#define CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV 0x4000
#define CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV 0x4001
#define CL_DEVICE_WARP_SIZE_NV 0x4003
#define CL_DEVICE_WAVEFRONT_WIDTH_AMD 0x4043

cmrscl_status cmrs_device_enumerate(device_entry **list, size_t *count)
{
    *list = NULL;
    *count = 0;
    cl_uint nplat = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &nplat);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found no driver */ || nplat == 0)
        return cmrscl_fail(CMRSCL_ERROR_NO_DEVICE, "no OpenCL platform is installed (is an ICD "
                                                   "such as pocl-opencl-icd registered?)");
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clGetPlatformIDs");
    cl_platform_id *plats = cmrscl_alloc(nplat, sizeof *plats);
    if (!plats)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for platforms");
    if ((err = clGetPlatformIDs(nplat, plats, NULL)) != CL_SUCCESS) {
        free(plats);
        return cmrscl_fail_cl(err, "clGetPlatformIDs");
    }
    size_t n = 0;
    device_entry *out = NULL;
    for (cl_uint p = 0; p < nplat; ++p) {
        cl_uint ndev = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &ndev) != CL_SUCCESS || !ndev)
            continue;
        cl_device_id *devs = cmrscl_alloc(ndev, sizeof *devs);
        device_entry *grown = devs ? realloc(out, (n + ndev) * sizeof *out) : NULL;
        if (!grown) {
            free(devs), free(out), free(plats);
            return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for devices");
        }
        out = grown;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, ndev, devs, NULL) != CL_SUCCESS)
            ndev = 0; /* the platform changed its mind: skip it */
        for (cl_uint d = 0; d < ndev; ++d)
            out[n++] = (device_entry){plats[p], devs[d], p, d};
        free(devs);
    }
    free(plats);
    if (n == 0) {
        free(out);
        return cmrscl_fail(CMRSCL_ERROR_NO_DEVICE,
                           "OpenCL platforms are installed but offer no device");
    }
    *list = out;
    *count = n;
    return CMRSCL_OK;
}

/* A device string, truncated to the buffer when longer (OpenCL would refuse it whole). */
static void device_string(cl_device_id d, cl_device_info what, char *buf, size_t size)
{
    size_t needed = 0;
    buf[0] = '\0';
    if (clGetDeviceInfo(d, what, 0, NULL, &needed) != CL_SUCCESS || needed == 0)
        return;
    char *full = malloc(needed);
    if (full && clGetDeviceInfo(d, what, needed, full, NULL) == CL_SUCCESS)
        snprintf(buf, size, "%.*s", (int)(needed - 1), full);
    free(full);
}

static bool contains_nocase(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    for (; *haystack; ++haystack) {
        size_t i = 0;
        while (i < n && tolower((unsigned char)haystack[i]) == tolower((unsigned char)needle[i]))
            ++i;
        if (i == n)
            return true;
    }
    return n == 0;
}

static cl_device_type type_of(cl_device_id d)
{
    cl_device_type t = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    return t;
}

/* Does a device match a selector: "P:D", a type name, or a name substring? */
static bool selector_matches(const char *sel, const device_entry *e)
{
    unsigned p, d;
    char tail;
    if (sscanf(sel, "%u:%u%c", &p, &d, &tail) == 2)
        return e->platform_index == p && e->device_index == d;
    static const struct {
        const char *name;
        cl_device_type type;
    } types[] = {{"gpu", CL_DEVICE_TYPE_GPU},
                 {"cpu", CL_DEVICE_TYPE_CPU},
                 {"accelerator", CL_DEVICE_TYPE_ACCELERATOR}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (strcasecmp(sel, types[i].name) == 0)
            return (type_of(e->device) & types[i].type) != 0;
    char name[256], plat[256];
    device_string(e->device, CL_DEVICE_NAME, name, sizeof name);
    plat[0] = '\0';
    clGetPlatformInfo(e->platform, CL_PLATFORM_NAME, sizeof plat, plat, NULL);
    plat[sizeof plat - 1] = '\0';
    return contains_nocase(name, sel) || contains_nocase(plat, sel);
}

cmrscl_status cmrs_device_select(const char *selector, device_entry *out)
{
    const char *source = "selector";
    if (!selector || !*selector) {
        selector = getenv("CMRSCL_DEVICE");
        source = "CMRSCL_DEVICE";
    }
    device_entry *list;
    size_t n;
    cmrscl_status st = cmrs_device_enumerate(&list, &n);
    if (st != CMRSCL_OK)
        return st;
    const device_entry *found = NULL;
    if (!selector || !*selector) { /* default: the first GPU, else the first device */
        for (size_t i = 0; i < n && !found; ++i)
            if (type_of(list[i].device) & CL_DEVICE_TYPE_GPU)
                found = &list[i];
        if (!found)
            found = &list[0];
    }
    for (size_t i = 0; i < n && !found; ++i)
        if (selector_matches(selector, &list[i]))
            found = &list[i];
    if (found) {
        *out = *found;
        free(list);
        return CMRSCL_OK;
    }
    cmrscl_fail(CMRSCL_ERROR_NO_DEVICE, "no OpenCL device matches %s \"%s\"; devices:", source,
                selector);
    for (size_t i = 0; i < n; ++i) {
        char name[256], line[300];
        device_string(list[i].device, CL_DEVICE_NAME, name, sizeof name);
        snprintf(line, sizeof line, " %u:%u %s (%s);", list[i].platform_index, list[i].device_index,
                 name, cmrscl_device_type_name(type_of(list[i].device)));
        cmrscl_fail_append(line);
    }
    free(list);
    return CMRSCL_ERROR_NO_DEVICE;
}

const char *cmrscl_device_type_name(cl_device_type type)
{
    if (type & CL_DEVICE_TYPE_GPU)
        return "gpu";
    if (type & CL_DEVICE_TYPE_CPU)
        return "cpu";
    if (type & CL_DEVICE_TYPE_ACCELERATOR)
        return "accelerator";
    return "other";
}

const char *cmrscl_warp_source_name(cmrscl_warp_source source)
{
    switch (source) {
    case CMRSCL_WARP_FROM_NV_ATTRIBUTE: return "CL_DEVICE_WARP_SIZE_NV";
    case CMRSCL_WARP_FROM_AMD_ATTRIBUTE: return "CL_DEVICE_WAVEFRONT_WIDTH_AMD";
    case CMRSCL_WARP_FROM_PROBE: return "probe kernel";
    }
    return "unknown";
}

/* NVIDIA per SM, by compute capability: shared memory and resident threads (CUDA C
 * Programming Guide, "Technical Specifications per Compute Capability"), and the L2 cache
 * of the generation's data-centre part divided by its SMs. OpenCL reports only the 48 KiB a
 * work-group may use (too small for the occupancy rule), and as its global memory cache
 * 32 KiB per SM (4,325,376 bytes on an H100's 132 SMs), not the L2. */
static void nv_sm_limits(int cc, unsigned sms, cmrscl_device_info *out)
{
    static const struct {
        int cc;
        unsigned smem_kib, threads;
        uint64_t l2_per_sm; /* bytes */
    } table[] = {
        {30, 48, 2048, (1536u << 10) / 15},   {37, 112, 2048, (1536u << 10) / 15},
        {50, 64, 2048, (2048u << 10) / 16},   {52, 96, 2048, (3072u << 10) / 24},
        {53, 64, 2048, (256u << 10) / 2},     {60, 64, 2048, (4096u << 10) / 56}, /* P100 */
        {61, 96, 2048, (3072u << 10) / 30},   {62, 64, 2048, (512u << 10) / 2},
        {70, 96, 2048, (6144u << 10) / 80},                                       /* V100 */
        {72, 96, 2048, (512u << 10) / 8},     {75, 64, 1024, (4096u << 10) / 40}, /* T4 */
        {80, 164, 2048, (40u << 20) / 108},                                       /* A100 */
        {86, 100, 1536, (6144u << 10) / 84},  {87, 164, 1536, (4096u << 10) / 16},
        {89, 100, 1536, (72u << 20) / 128}, /* RTX 4090 */
        {90, 228, 2048, (50u << 20) / 132}, /* H100 SXM: the 50 MB the H200 plans were
                                               measured against too (docs/dev/PERFORMANCE.md) */
        {100, 228, 2048, (126u << 20) / 148}, {120, 100, 1536, (96u << 20) / 170}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
        if (table[i].cc <= cc) { /* the newest entry not newer than the device */
            out->local_mem_per_cu_bytes = (uint64_t)table[i].smem_kib * 1024;
            out->resident_items_per_cu = table[i].threads;
            out->cache_bytes = table[i].l2_per_sm * sms;
            out->cache_source = "NVIDIA table: L2 per SM by compute capability";
        }
}

/* cl_intel_device_attribute_query and cl_amd_device_attribute_query facts. */
#define CL_DEVICE_NUM_THREADS_PER_EU_INTEL 0x4255
#define CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD 0x4040

/* Work-items a compute unit keeps resident, the occupancy the plan's rules assume. */
static void resident_items(cl_device_id d, const char *ext, cmrscl_device_info *out)
{
    cl_uint v = 0;
    out->resident_items_per_cu = 2048; /* unknown devices: Kepler's figure, the paper's */
    if (!(out->type & CL_DEVICE_TYPE_GPU))
        return;
    /* Intel GPUs count EUs as compute units: hardware threads per EU, each one sub-group. */
    if (strstr(ext, "cl_intel_device_attribute_query") &&
        clGetDeviceInfo(d, CL_DEVICE_NUM_THREADS_PER_EU_INTEL, sizeof v, &v, NULL) == CL_SUCCESS &&
        v && out->subgroup_width)
        out->resident_items_per_cu = v * out->subgroup_width;
    /* AMD: SIMDs per CU, each with up to 10 wavefronts (GCN; an assumption, not measured). */
    else if (strstr(ext, "cl_amd_device_attribute_query") &&
             clGetDeviceInfo(d, CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD, sizeof v, &v, NULL) ==
                 CL_SUCCESS &&
             v)
        out->resident_items_per_cu = v * 10 * out->warp_width;
}

/* The probe kernel's SIMD width (its preferred work-group multiple) and the most work-items
 * a group of it may have (CL_KERNEL_WORK_GROUP_SIZE: a device may run fewer than its
 * CL_DEVICE_MAX_WORK_GROUP_SIZE, as Mesa's llvmpipe runs 32 of the 1024 it reports). */
static cmrscl_status probe_warp(const device_entry *e, cl_context context, unsigned *warp,
                                size_t *kernel_group)
{
    cl_int err;
    cl_context own = NULL;
    if (!context) {
        own = clCreateContext(NULL, 1, &e->device, NULL, NULL, &err);
        if (!own)
            return cmrscl_fail_cl(err, "clCreateContext (warp probe)");
        context = own;
    }
    char *src = NULL;
    cl_program prog = NULL;
    cl_kernel k = NULL;
    size_t multiple = 1;
    cmrscl_status st = cmrs_program_source("probe.cl", &src);
    if (st == CMRSCL_OK)
        st = cmrs_program_build(context, e->device, src, "", &prog);
    if (st == CMRSCL_OK && !(k = clCreateKernel(prog, "probe", &err)))
        st = cmrscl_fail_cl(err, "clCreateKernel (warp probe)");
    if (st == CMRSCL_OK &&
        (err = clGetKernelWorkGroupInfo(k, e->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                        sizeof multiple, &multiple, NULL)) != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clGetKernelWorkGroupInfo (warp probe)");
    if (st == CMRSCL_OK)
        clGetKernelWorkGroupInfo(k, e->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof *kernel_group,
                                 kernel_group, NULL);
    if (k)
        clReleaseKernel(k);
    if (prog)
        clReleaseProgram(prog);
    if (own)
        clReleaseContext(own);
    free(src);
    /* Round down to a power of two in 1..64: the kernels need one. */
    unsigned w = 1;
    while ((size_t)w * 2 <= multiple && w < 64)
        w *= 2;
    *warp = w;
    return st;
}

static cmrscl_status query_warp(const device_entry *e, cl_context context, const char *ext,
                                cmrscl_device_info *out)
{
    cl_uint w = 0;
    if (strstr(ext, "cl_nv_device_attribute_query") &&
        clGetDeviceInfo(e->device, CL_DEVICE_WARP_SIZE_NV, sizeof w, &w, NULL) == CL_SUCCESS && w) {
        out->warp_width = w;
        out->warp_source = CMRSCL_WARP_FROM_NV_ATTRIBUTE;
        return CMRSCL_OK;
    }
    if (strstr(ext, "cl_amd_device_attribute_query") &&
        clGetDeviceInfo(e->device, CL_DEVICE_WAVEFRONT_WIDTH_AMD, sizeof w, &w, NULL) ==
            CL_SUCCESS &&
        w) {
        out->warp_width = w;
        out->warp_source = CMRSCL_WARP_FROM_AMD_ATTRIBUTE;
        return CMRSCL_OK;
    }
    /* A device that cannot build the probe cannot build the SpMV kernel either; that
     * fails later with its build log. Here it only gets warp 1, so listing goes on. */
    out->warp_source = CMRSCL_WARP_FROM_PROBE;
    size_t kernel_group = 0;
    if (probe_warp(e, context, &out->warp_width, &kernel_group) != CMRSCL_OK)
        out->warp_width = 1;
    /* what a kernel runs, not what the device reports, decides every plan's work-group */
    if (kernel_group > 0 && kernel_group < out->max_work_group_size)
        out->max_work_group_size = (unsigned)kernel_group;
    return CMRSCL_OK;
}

cmrscl_status cmrs_device_query(const device_entry *e, cl_context context, cmrscl_device_info *out)
{
    memset(out, 0, sizeof *out);
    out->platform_index = e->platform_index;
    out->device_index = e->device_index;
    clGetPlatformInfo(e->platform, CL_PLATFORM_NAME, sizeof out->platform_name, out->platform_name,
                      NULL);
    out->platform_name[sizeof out->platform_name - 1] = '\0';
    device_string(e->device, CL_DEVICE_NAME, out->device_name, sizeof out->device_name);
    device_string(e->device, CL_DEVICE_VERSION, out->device_version, sizeof out->device_version);
    device_string(e->device, CL_DRIVER_VERSION, out->driver_version, sizeof out->driver_version);
    out->type = type_of(e->device);
    cl_uint u = 0;
    cl_ulong ul = 0;
    size_t sz = 0;
    clGetDeviceInfo(e->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof u, &u, NULL);
    out->compute_units = u;
    clGetDeviceInfo(e->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof sz, &sz, NULL);
    out->max_work_group_size = (unsigned)sz;
    clGetDeviceInfo(e->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof ul, &ul, NULL);
    out->global_mem_bytes = ul;
    clGetDeviceInfo(e->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ul, &ul, NULL);
    out->max_alloc_bytes = ul;
    clGetDeviceInfo(e->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof ul, &ul, NULL);
    out->local_mem_bytes = ul;
    ul = 0;
    clGetDeviceInfo(e->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof ul, &ul, NULL);
    out->cache_bytes = ul;
    out->cache_source = "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE";

    size_t ext_size = 0;
    clGetDeviceInfo(e->device, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_size);
    char *ext = calloc(ext_size + 1, 1);
    if (!ext)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for device extensions");
    clGetDeviceInfo(e->device, CL_DEVICE_EXTENSIONS, ext_size, ext, NULL);
    out->fp64 = strstr(ext, "cl_khr_fp64") != NULL;
    if (strstr(ext, "cl_nv_device_attribute_query")) {
        cl_uint major = 0, minor = 0;
        clGetDeviceInfo(e->device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof major, &major,
                        NULL);
        clGetDeviceInfo(e->device, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof minor, &minor,
                        NULL);
        out->nv_compute_capability = (int)(major * 10 + minor);
    }
    cmrscl_status st = query_warp(e, context, ext, out);
    if (st == CMRSCL_OK)
        cmrs_subgroups_query(e, context, ext, out);
    /* Occupancy inputs of the HEIGHT rule (plan.c): the local memory of one work-group per
     * compute unit where nothing better is known. */
    out->local_mem_per_cu_bytes = out->local_mem_bytes;
    resident_items(e->device, ext, out);
    free(ext);
    if (st != CMRSCL_OK)
        return st;
    if (out->nv_compute_capability >= 30)
        nv_sm_limits(out->nv_compute_capability, out->compute_units, out);
    /* shfl.sync needs sm_30+ and 32-wide warps. */
    out->warp_shuffle = out->nv_compute_capability >= 30 && out->warp_width == 32;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_devices(cmrscl_device_info **devices, size_t *count)
{
    if (!devices || !count)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "devices or count is NULL");
    *devices = NULL;
    *count = 0;
    device_entry *list;
    size_t n;
    cmrscl_status st = cmrs_device_enumerate(&list, &n);
    if (st != CMRSCL_OK)
        return st;
    cmrscl_device_info *info = calloc(n ? n : 1, sizeof *info);
    if (!info) {
        free(list);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for device facts");
    }
    for (size_t i = 0; i < n && st == CMRSCL_OK; ++i)
        st = cmrs_device_query(&list[i], NULL, &info[i]);
    free(list);
    if (st != CMRSCL_OK) {
        free(info);
        return st;
    }
    *devices = info;
    *count = n;
    return CMRSCL_OK;
}
