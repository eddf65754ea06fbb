/* status.c - status names and messages, the per-thread detailed error message, opt-in
 * tracing, and the few utilities every stage needs (timing, checked allocation). */
#include "base/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Large enough for a kernel build log; longer logs are truncated with a marker. */
#define LAST_ERROR_SIZE 16384
static _Thread_local char last_error[LAST_ERROR_SIZE];

unsigned cmrscl_version_number(void) { return CMRSCL_VERSION_NUMBER; }

const char *cmrscl_version_string(void)
{
#define STR_(x) #x
#define STR(x) STR_(x)
    return STR(CMRSCL_VERSION_MAJOR) "." STR(CMRSCL_VERSION_MINOR) "." STR(CMRSCL_VERSION_PATCH);
#undef STR
#undef STR_
}

const char *cmrscl_status_name(cmrscl_status status)
{
    switch (status) {
#define NAME_CASE(name, value, message)                                                            \
    case CMRSCL_##name: return "CMRSCL_" #name;
        CMRSCL_STATUS_LIST(NAME_CASE)
#undef NAME_CASE
    }
    return "CMRSCL_UNKNOWN_STATUS";
}

const char *cmrscl_status_message(cmrscl_status status)
{
    switch (status) {
#define MESSAGE_CASE(name, value, message)                                                         \
    case CMRSCL_##name: return message;
        CMRSCL_STATUS_LIST(MESSAGE_CASE)
#undef MESSAGE_CASE
    }
    return "unknown status";
}

const char *cmrscl_last_error(void) { return last_error; }

cmrscl_status cmrscl_set_error(cmrscl_status status, const char *message)
{
    return cmrscl_fail(status, "%s", message ? message : cmrscl_status_message(status));
}

bool cmrscl_tracing(void)
{
    const char *v = getenv("CMRSCL_TRACE");
    return v && *v && strcmp(v, "0") != 0;
}

void cmrscl_trace(const char *fmt, ...)
{
    if (!cmrscl_tracing())
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("cmrscl: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

cmrscl_status cmrscl_fail(cmrscl_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    cmrscl_trace("%s: %s", cmrscl_status_name(status), last_error);
    return status;
}

void cmrscl_fail_append(const char *text)
{
    static const char marker[] = "\n[... truncated]";
    size_t used = strlen(last_error);
    size_t room = sizeof last_error - used - 1;
    size_t n = strlen(text);
    if (n <= room) {
        memcpy(last_error + used, text, n + 1);
        return;
    }
    if (room > sizeof marker) {
        memcpy(last_error + used, text, room - (sizeof marker - 1));
        memcpy(last_error + sizeof last_error - sizeof marker, marker, sizeof marker);
    }
}

const char *cmrscl_cl_error_name(cl_int err)
{
    switch (err) {
#define CL_NAME(code)                                                                              \
    case code: return #code;
        CL_NAME(CL_SUCCESS)
        CL_NAME(CL_DEVICE_NOT_FOUND)
        CL_NAME(CL_DEVICE_NOT_AVAILABLE)
        CL_NAME(CL_COMPILER_NOT_AVAILABLE)
        CL_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        CL_NAME(CL_OUT_OF_RESOURCES)
        CL_NAME(CL_OUT_OF_HOST_MEMORY)
        CL_NAME(CL_PROFILING_INFO_NOT_AVAILABLE)
        CL_NAME(CL_MEM_COPY_OVERLAP)
        CL_NAME(CL_IMAGE_FORMAT_MISMATCH)
        CL_NAME(CL_MAP_FAILURE)
        CL_NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        CL_NAME(CL_COMPILE_PROGRAM_FAILURE)
        CL_NAME(CL_LINK_PROGRAM_FAILURE)
        CL_NAME(CL_BUILD_PROGRAM_FAILURE)
        CL_NAME(CL_INVALID_VALUE)
        CL_NAME(CL_INVALID_DEVICE_TYPE)
        CL_NAME(CL_INVALID_PLATFORM)
        CL_NAME(CL_INVALID_DEVICE)
        CL_NAME(CL_INVALID_CONTEXT)
        CL_NAME(CL_INVALID_QUEUE_PROPERTIES)
        CL_NAME(CL_INVALID_COMMAND_QUEUE)
        CL_NAME(CL_INVALID_HOST_PTR)
        CL_NAME(CL_INVALID_MEM_OBJECT)
        CL_NAME(CL_INVALID_BUILD_OPTIONS)
        CL_NAME(CL_INVALID_PROGRAM)
        CL_NAME(CL_INVALID_PROGRAM_EXECUTABLE)
        CL_NAME(CL_INVALID_KERNEL_NAME)
        CL_NAME(CL_INVALID_KERNEL)
        CL_NAME(CL_INVALID_ARG_INDEX)
        CL_NAME(CL_INVALID_ARG_VALUE)
        CL_NAME(CL_INVALID_ARG_SIZE)
        CL_NAME(CL_INVALID_KERNEL_ARGS)
        CL_NAME(CL_INVALID_WORK_DIMENSION)
        CL_NAME(CL_INVALID_WORK_GROUP_SIZE)
        CL_NAME(CL_INVALID_WORK_ITEM_SIZE)
        CL_NAME(CL_INVALID_GLOBAL_OFFSET)
        CL_NAME(CL_INVALID_EVENT_WAIT_LIST)
        CL_NAME(CL_INVALID_EVENT)
        CL_NAME(CL_INVALID_OPERATION)
        CL_NAME(CL_INVALID_BUFFER_SIZE)
        CL_NAME(CL_INVALID_GLOBAL_WORK_SIZE)
        CL_NAME(CL_INVALID_PROPERTY)
        CL_NAME(CL_INVALID_COMPILER_OPTIONS)
        CL_NAME(CL_INVALID_LINKER_OPTIONS)
        CL_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
#undef CL_NAME
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL error";
    }
}

cmrscl_status cmrscl_fail_cl(cl_int err, const char *what)
{
    cmrscl_status status = CMRSCL_ERROR_OPENCL;
    /* CL_OUT_OF_RESOURCES is memory at allocation but a launch failure at enqueue, so it
     * stays ERROR_OPENCL here; upload_buffers (matrix.c) maps it for its allocations. */
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_INVALID_BUFFER_SIZE)
        status = CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY;
    else if (err == CL_OUT_OF_HOST_MEMORY)
        status = CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    return cmrscl_fail(status, "%s failed: %s (%d)", what, cmrscl_cl_error_name(err), (int)err);
}

double cmrscl_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void *cmrscl_alloc(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    size_t bytes = n * size;
    return malloc(bytes ? bytes : 1);
}

size_t cmrscl_precision_size(cmrscl_precision p) { return p == CMRSCL_DOUBLE ? 8 : 4; }

int cmrs_pow2_at_least(int n)
{
    int p = 1;
    while (p < n)
        p *= 2;
    return p;
}

const char *cmrscl_precision_name(cmrscl_precision p)
{
    return p == CMRSCL_DOUBLE ? "double" : p == CMRSCL_FLOAT ? "float" : "invalid";
}

void cmrs_c_numeric_enter(c_numeric_scope *scope)
{
    scope->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    scope->previous = scope->c ? uselocale(scope->c) : (locale_t)0;
}

void cmrs_c_numeric_leave(c_numeric_scope *scope)
{
    if (!scope->c)
        return;
    uselocale(scope->previous);
    freelocale(scope->c);
}
