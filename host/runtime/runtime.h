/* runtime.h - the runtime stage: OpenCL platforms and devices and their facts (device.c,
 * subgroups.c), contexts (context.c), kernel sources, JIT builds and the program caches in
 * memory and on disk (program.c, program_cache.c), and small helpers on OpenCL objects
 * (cl_objects.c). */
#ifndef CMRSCL_RUNTIME_H
#define CMRSCL_RUNTIME_H

#include "base/base.h"

#include <CL/cl_ext.h>

/* ---- device.c: platforms, devices, selection and facts ---- */

typedef struct device_entry {
    cl_platform_id platform;
    cl_device_id device;
    unsigned platform_index, device_index;
} device_entry;

/* All devices of all platforms in "P:D" order (free() the list). */
CMRSCL_HIDDEN cmrscl_status cmrs_device_enumerate(device_entry **list, size_t *count);
/* Resolves a selector (see cmrscl_context_create) to one device. */
CMRSCL_HIDDEN cmrscl_status cmrs_device_select(const char *selector, device_entry *out);
/* Fills the facts of a device; `context` (may be NULL) is used for the warp probe. */
CMRSCL_HIDDEN cmrscl_status cmrs_device_query(const device_entry *entry, cl_context context,
                                              cmrscl_device_info *out);

/* ---- subgroups.c: the sub-groups of a device, and of a built kernel ---- */

/* Fills the sub-group facts of *out (subgroups .. subgroup_cl_c) from the extensions and
 * OpenCL C features, checked by probe kernels; warp_width and max_work_group_size first. */
CMRSCL_HIDDEN void cmrs_subgroups_query(const device_entry *entry, cl_context context,
                                        const char *ext, cmrscl_device_info *out);
/* Whether a kernel built for a SUBGROUP plan has the plan's sub-group width (p->warp) in
 * work-groups of p->work_group_size; else ERROR_UNSUPPORTED saying what it has. */
CMRSCL_HIDDEN cmrscl_status cmrs_subgroups_check_kernel(cmrscl_context ctx, cl_kernel kernel,
                                                        const cmrscl_params *p);

/* ---- program.c: kernel sources, JIT build, cache ---- */

/* The text of a kernel file: from $CMRSCL_KERNEL_DIR if set, else embedded at build
 * time; *out is a malloc'ed NUL-terminated string. */
CMRSCL_HIDDEN cmrscl_status cmrs_program_source(const char *file_name, char **out);
typedef struct program_cache_entry {
    char *file; /* the kernel file: two files may be built with the same options */
    char *options;
    cl_program program;
    struct program_cache_entry *next;
} program_cache_entry;
/* Returns the program of kernel file `file` (after the prelude) with `options`, built for
 * ctx's device once, then cached in the context (keyed by file and options). *build_seconds is 0
 * for a cached program; *from says where it came from. The program stays owned by the cache. */
CMRSCL_HIDDEN cmrscl_status cmrs_program_get(cmrscl_context ctx, const char *file,
                                             const char *options, cl_program *out,
                                             double *build_seconds, cmrscl_program_source *from);
/* Builds a one-off program (used by the warp probe); the caller releases it. */
CMRSCL_HIDDEN cmrscl_status cmrs_program_build(cl_context context, cl_device_id device,
                                               const char *source, const char *options,
                                               cl_program *out);
CMRSCL_HIDDEN void cmrs_program_cache_free(program_cache_entry *head);
/* program_cache.c, the on-disk cache of program binaries (format and checks there). */
CMRSCL_HIDDEN uint64_t cmrs_fnv1a64(const void *data, size_t size);
typedef struct program_key {
    char *text; /* library, platform, device, driver, options and source */
    size_t length;
    char path[4096]; /* the entry's file */
} program_key;
/* The key of a program and its file; false when the cache is off (CMRSCL_PROGRAM_CACHE),
 * there is no directory for it, or no memory. */
CMRSCL_HIDDEN bool cmrs_program_key_make(cl_device_id device, const char *file, const char *source,
                                         const char *options, program_key *out);
CMRSCL_HIDDEN void cmrs_program_key_free(program_key *key);
/* The program built from a valid entry, else NULL (a bad entry is removed). */
CMRSCL_HIDDEN cl_program cmrs_program_disk_load(const program_key *key, cl_context context,
                                                cl_device_id device, const char *options);
/* Writes the binary of a built program as the entry (atomically); failures are ignored. */
CMRSCL_HIDDEN void cmrs_program_disk_store(const program_key *key, cl_program prog);

/* ---- command_buffer.c: cl_khr_command_buffer, where a device offers it ---- */

/* The extension's entry points for one context's device and queue, found once. create is
 * NULL where a recorded product cannot be a command buffer there; `why` says why (or how
 * it is used). */
typedef struct command_buffer_api {
    clCreateCommandBufferKHR_fn create;
    clFinalizeCommandBufferKHR_fn finalize;
    clCommandNDRangeKernelKHR_fn ndrange;
    clEnqueueCommandBufferKHR_fn enqueue;
    clReleaseCommandBufferKHR_fn release;
    const char *why; /* static string */
} command_buffer_api;
/* The context's command-buffer support, probed on first use (under ctx->lock). */
CMRSCL_HIDDEN const command_buffer_api *cmrs_command_buffer_support(cmrscl_context ctx);

/* ---- context.c ---- */

/* The context's pinned ring for uploads (upload.c): two slots of `slot` bytes, mapped. */
typedef struct upload_ring {
    cl_mem buf;
    void *slots;
    size_t slot;
    bool unpinnable; /* the device refused the pinned buffer: not asked again */
} upload_ring;

struct cmrscl_context_s {
    cl_context context;
    cl_device_id device;
    cl_command_queue queue;
    cmrscl_device_info info;
    uint64_t memory_limit; /* 0: none */
    pthread_mutex_t lock;  /* guards the program cache and the command-buffer probe */
    program_cache_entry *programs;
    bool command_buffer_probed;
    command_buffer_api command_buffer;
    pthread_mutex_t ring_lock; /* guards the ring: one upload through it at a time */
    upload_ring ring;
};

/* The context and device a command queue belongs to. */
CMRSCL_HIDDEN cmrscl_status cmrs_queue_owner(cl_command_queue queue, cl_context *context,
                                             cl_device_id *device);

/* ---- upload.c: host arrays into device buffers, and back ---- */

/* `bytes` of src into dst from offset 0 on ctx's queue: large arrays on a discrete GPU through
 * the context's pinned ring (returning once they are there, *done NULL), others as one
 * non-blocking write (*done its event; src must stay until it completes). */
CMRSCL_HIDDEN cl_int cmrs_upload(cmrscl_context ctx, cl_mem dst, size_t bytes, const void *src,
                                 cl_event *done);
/* `bytes` of src from `offset` into dst, there when this returns: large arrays from a discrete
 * GPU through the same ring. */
CMRSCL_HIDDEN cl_int cmrs_download(cmrscl_context ctx, cl_mem src, size_t offset, size_t bytes,
                                   void *dst);
CMRSCL_HIDDEN void cmrs_upload_ring_free(cmrscl_context ctx);

/* ---- cl_objects.c: events and buffers ---- */

/* Milliseconds from the start of `first` to the end of `last` (profiling events). */
CMRSCL_HIDDEN cl_int cmrs_event_ms(cl_event first, cl_event last, double *ms);
/* A caller's buffer: of this OpenCL context, holding at least `need` bytes (nothing is
 * checked when need is 0). */
CMRSCL_HIDDEN cmrscl_status cmrs_buffer_check(cl_context context, cl_mem buf, size_t need,
                                              const char *name);

#endif /* CMRSCL_RUNTIME_H */
