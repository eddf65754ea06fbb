/* device.c - OpenCL platforms and devices: enumeration in "P:D" order, selection by index,
 * type or name, and the facts the kernel parameters depend on (local memory, warp or
 * wavefront width and how it was found, fp64, sub-groups, NVIDIA compute capability). */
#include "internal.h"

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

cmrscl_status device_enumerate(device_entry **list, size_t *count)
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
    size_t n = 0, cap = 0;
    device_entry *out = NULL;
    for (cl_uint p = 0; p < nplat; ++p) {
        cl_uint ndev = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &ndev) != CL_SUCCESS || !ndev)
            continue;
        cl_device_id *devs = cmrscl_alloc(ndev, sizeof *devs);
        device_entry *grown = devs ? realloc(out, (cap = n + ndev) * sizeof *out) : NULL;
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

cmrscl_status device_select(const char *selector, device_entry *out)
{
    const char *source = "selector";
    if (!selector || !*selector) {
        selector = getenv("CMRSCL_DEVICE");
        source = "CMRSCL_DEVICE";
    }
    device_entry *list;
    size_t n;
    cmrscl_status st = device_enumerate(&list, &n);
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

/* Shared memory per SM and resident threads per SM by compute capability (CUDA C
 * Programming Guide, "Technical Specifications per Compute Capability"). OpenCL only
 * reports the 48 KiB a work-group may use, which is too small for the occupancy rule. */
static void nv_sm_limits(int cc, uint64_t *smem, unsigned *threads)
{
    static const struct {
        int cc;
        unsigned kib, threads;
    } table[] = {{30, 48, 2048},   {37, 112, 2048}, {50, 64, 2048},  {52, 96, 2048},
                 {53, 64, 2048},   {60, 64, 2048},  {61, 96, 2048},  {62, 64, 2048},
                 {70, 96, 2048},   {72, 96, 2048},  {75, 64, 1024},  {80, 164, 2048},
                 {86, 100, 1536},  {87, 164, 1536}, {89, 100, 1536}, {90, 228, 2048},
                 {100, 228, 2048}, {120, 100, 1536}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
        if (table[i].cc <= cc) { /* the newest entry not newer than the device */
            *smem = (uint64_t)table[i].kib * 1024;
            *threads = table[i].threads;
        }
}

static cmrscl_status probe_warp(const device_entry *e, cl_context context, unsigned *warp)
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
    cmrscl_status st = program_source("probe.cl", &src);
    if (st == CMRSCL_OK)
        st = program_build(context, e->device, src, "", &prog);
    if (st == CMRSCL_OK && !(k = clCreateKernel(prog, "probe", &err)))
        st = cmrscl_fail_cl(err, "clCreateKernel (warp probe)");
    if (st == CMRSCL_OK &&
        (err = clGetKernelWorkGroupInfo(k, e->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                        sizeof multiple, &multiple, NULL)) != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clGetKernelWorkGroupInfo (warp probe)");
    if (k)
        clReleaseKernel(k);
    if (prog)
        clReleaseProgram(prog);
    if (own)
        clReleaseContext(own);
    free(src);
    /* Round down to a power of two in 1..64: the kernels need one. */
    unsigned w = 1;
    while (w * 2 <= multiple && w < 64)
        w *= 2;
    *warp = w;
    return st;
}

/* Runs probe_subgroups on one group of `group` work-items; *width is the sub-group size
 * when every sub-group has it and holds consecutive work-items, else 0. */
static cmrscl_status run_subgroup_probe(cl_context context, cl_device_id device, cl_kernel k,
                                        size_t group, unsigned *width)
{
    *width = 0;
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(context, device, 0, &err);
    cl_mem out = q ? clCreateBuffer(context, CL_MEM_WRITE_ONLY, 8 * group, NULL, &err) : NULL;
    cl_uint *ids = malloc(8 * group);
    if (out && ids)
        err = clSetKernelArg(k, 0, sizeof out, &out);
    if (out && ids && err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(q, k, 1, NULL, &group, &group, 0, NULL, NULL);
    if (out && ids && err == CL_SUCCESS)
        err = clEnqueueReadBuffer(q, out, CL_TRUE, 0, 8 * group, ids, 0, NULL, NULL);
    if (out && ids && err == CL_SUCCESS) {
        unsigned s = ids[0];
        bool regular = s > 0 && (s & (s - 1)) == 0 && group % s == 0;
        for (size_t i = 0; regular && i < group; ++i)
            regular = ids[2 * i] == s && ids[2 * i + 1] == i % s;
        *width = regular ? s : 0;
    }
    free(ids);
    if (out)
        clReleaseMemObject(out);
    if (q)
        clReleaseCommandQueue(q);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "sub-group probe");
}

/* cl_khr_subgroups says nothing of the sub-groups' size or layout, so a probe kernel
 * reports them, under the first OpenCL C version that declares the extension. The
 * sub-group reduction runs one sub-group per work-group, the one arrangement that holds
 * whether or not the sub-groups follow the group size. */
static void probe_subgroups(const device_entry *e, cl_context context, cmrscl_device_info *out)
{
    static const struct {
        const char *std;
        int version;
    } stds[] = {{"-cl-std=CL1.2", 12}, {"-cl-std=CL2.0", 20}, {"-cl-std=CL3.0", 30}};
    cl_int err;
    cl_context own = context ? NULL : clCreateContext(NULL, 1, &e->device, NULL, NULL, &err);
    char *src = NULL;
    if (!own && !context)
        return;
    if (program_source("probe.cl", &src) == CMRSCL_OK)
        for (size_t i = 0; i < 3 && !out->subgroup_width; ++i) {
            cl_program prog = NULL;
            cl_kernel k = NULL;
            if (program_build(context ? context : own, e->device, src, stds[i].std, &prog) !=
                CMRSCL_OK)
                continue;
            unsigned w = 0;
            if ((k = clCreateKernel(prog, "probe_subgroups", &err)) != NULL &&
                run_subgroup_probe(context ? context : own, e->device, k, 64, &w) == CMRSCL_OK &&
                w >= 2) {
                out->subgroup_width = w;
                out->subgroup_cl_c = stds[i].version;
            }
            if (k)
                clReleaseKernel(k);
            clReleaseProgram(prog);
        }
    free(src);
    if (own)
        clReleaseContext(own);
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
    if (probe_warp(e, context, &out->warp_width) != CMRSCL_OK)
        out->warp_width = 1;
    return CMRSCL_OK;
}

cmrscl_status device_query(const device_entry *e, cl_context context, cmrscl_device_info *out)
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

    size_t ext_size = 0;
    clGetDeviceInfo(e->device, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_size);
    char *ext = calloc(ext_size + 1, 1);
    if (!ext)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for device extensions");
    clGetDeviceInfo(e->device, CL_DEVICE_EXTENSIONS, ext_size, ext, NULL);
    out->fp64 = strstr(ext, "cl_khr_fp64") != NULL;
    out->subgroups = strstr(ext, "cl_khr_subgroups") != NULL;
    if (strstr(ext, "cl_nv_device_attribute_query")) {
        cl_uint major = 0, minor = 0;
        clGetDeviceInfo(e->device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof major, &major,
                        NULL);
        clGetDeviceInfo(e->device, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof minor, &minor,
                        NULL);
        out->nv_compute_capability = (int)(major * 10 + minor);
    }
    cmrscl_status st = query_warp(e, context, ext, out);
    free(ext);
    if (st != CMRSCL_OK)
        return st;
    if (out->subgroups && out->max_work_group_size >= 64)
        probe_subgroups(e, context, out);

    /* Occupancy inputs of the HEIGHT rule (params.c). Unknown devices: the local memory of
     * one work-group per compute unit and 2048 resident work-items, Kepler's figures. */
    out->local_mem_per_cu_bytes = out->local_mem_bytes;
    out->resident_items_per_cu = 2048;
    if (out->nv_compute_capability >= 30)
        nv_sm_limits(out->nv_compute_capability, &out->local_mem_per_cu_bytes,
                     &out->resident_items_per_cu);
    /* shfl.sync needs sm_30+ and 32-wide warps. */
    out->warp_shuffle = out->nv_compute_capability >= 30 && out->warp_width == 32;
    const char *source;
    out->height_float = plan_default_height(out, CMRSCL_FLOAT, &source);
    out->height_double = out->fp64 ? plan_default_height(out, CMRSCL_DOUBLE, &source) : 0;
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
    cmrscl_status st = device_enumerate(&list, &n);
    if (st != CMRSCL_OK)
        return st;
    cmrscl_device_info *info = calloc(n, sizeof *info);
    if (!info) {
        free(list);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for device facts");
    }
    for (size_t i = 0; i < n && st == CMRSCL_OK; ++i)
        st = device_query(&list[i], NULL, &info[i]);
    free(list);
    if (st != CMRSCL_OK) {
        free(info);
        return st;
    }
    *devices = info;
    *count = n;
    return CMRSCL_OK;
}
