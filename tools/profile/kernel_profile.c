/* kernel_profile.c - libcmrscl-kernel-profile.so, a library to preload into any program that
 * launches OpenCL kernels (cmrscl-run, a solver, Python): every clEnqueueNDRangeKernel gets a
 * profiling event, and when the program exits each kernel's launches are reported by name and
 * global size - how many, the median and the total of their device time:
 *
 *   LD_PRELOAD=build/lib/libcmrscl-kernel-profile.so cmrscl-run solve -g SPEC --method bicgstab ...
 *   kernel-profile: cmrs_spmv      global 1155072  launches 402  median 165.44 us  total 66247.9 us
 *
 * Where a solver's iteration goes, kernel by kernel, without a change to the program (the
 * library's queues are created with profiling on; a queue without it reports nothing for its
 * launches). CMRSCL_KERNEL_PROFILE=FILE appends the report to FILE instead of stderr. Launches
 * past KERNEL_PROFILE_MAX are counted, not timed. Measuring only: the events cost the host a
 * little time a launch, so time a loop without it. Linux (dlsym's RTLD_NEXT). */
#define _GNU_SOURCE
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_PROFILE_MAX (1u << 22)

typedef cl_int (*enqueue_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                             const size_t *, cl_uint, const cl_event *, cl_event *);

typedef struct launch {
    char name[64];
    size_t global;
    cl_event event;
} launch;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static launch *launches;
static size_t count, room, untimed;

/* The launch kept for the report (its event retained), under the lock. */
static void keep(cl_kernel kernel, cl_uint dims, const size_t *global, cl_event event)
{
    if (count == room && room < KERNEL_PROFILE_MAX) {
        size_t more = room ? 2 * room : 4096;
        launch *grown = realloc(launches, more * sizeof *grown);
        if (grown)
            launches = grown, room = more;
    }
    if (count == room) {
        ++untimed;
        clReleaseEvent(event);
        return;
    }
    launch *l = &launches[count++];
    memset(l->name, 0, sizeof l->name);
    clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof l->name - 1, l->name, NULL);
    l->global = 1;
    for (cl_uint d = 0; d < dims && global; ++d)
        l->global *= global[d];
    l->event = event;
}

cl_int clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                              const size_t *offset, const size_t *global, const size_t *local,
                              cl_uint waits, const cl_event *wait_list, cl_event *event)
{
    static enqueue_fn next;
    if (!next)
        next = (enqueue_fn)dlsym(RTLD_NEXT, "clEnqueueNDRangeKernel");
    if (!next)
        return CL_INVALID_OPERATION;
    cl_event own = NULL;
    cl_int err =
        next(queue, kernel, dims, offset, global, local, waits, wait_list, event ? event : &own);
    if (err != CL_SUCCESS)
        return err;
    cl_event e = event ? *event : own;
    if (event)
        clRetainEvent(e); /* the caller's, which it may release before the report */
    pthread_mutex_lock(&lock);
    keep(kernel, dims, global, e);
    pthread_mutex_unlock(&lock);
    return err;
}

static int by_time(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A launch's device time in us; < 0 where its queue kept none. */
static double device_us(cl_event e)
{
    cl_ulong start = 0, end = 0;
    if (clWaitForEvents(1, &e) != CL_SUCCESS ||
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) !=
            CL_SUCCESS ||
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) != CL_SUCCESS)
        return -1;
    return (double)(end - start) * 1e-3;
}

/* Each (name, global size) in the order of its first launch. */
__attribute__((destructor)) static void report(void)
{
    if (count == 0)
        return;
    const char *path = getenv("CMRSCL_KERNEL_PROFILE");
    FILE *out = path && *path ? fopen(path, "a") : NULL;
    FILE *to = out ? out : stderr;
    double *times = malloc(count * sizeof *times);
    char *done = calloc(count, 1);
    if (!times || !done) {
        fprintf(to, "kernel-profile: no memory for the report of %zu launches\n", count);
        count = 0;
    }
    for (size_t i = 0; i < count; ++i) {
        if (done[i])
            continue;
        size_t n = 0;
        double total = 0;
        for (size_t j = i; j < count; ++j) {
            if (done[j] || launches[j].global != launches[i].global ||
                strcmp(launches[j].name, launches[i].name) != 0)
                continue;
            done[j] = 1;
            double us = device_us(launches[j].event);
            if (us >= 0)
                times[n++] = us, total += us;
        }
        if (n == 0)
            continue;
        qsort(times, n, sizeof *times, by_time);
        fprintf(to,
                "kernel-profile: %-24s global %9zu  launches %6zu  median %9.2f us  "
                "total %10.1f us\n",
                launches[i].name, launches[i].global, n, times[n / 2], total);
    }
    if (untimed)
        fprintf(to, "kernel-profile: %zu launches past the first %u not timed\n", untimed,
                KERNEL_PROFILE_MAX);
    for (size_t i = 0; i < count; ++i)
        clReleaseEvent(launches[i].event);
    free(times), free(done), free(launches);
    if (out)
        fclose(out);
}
