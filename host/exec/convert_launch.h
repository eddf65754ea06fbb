/* convert_launch.h - how the device-side conversion (matrix_device.c) and the values-only
 * updates (matrix_update.c) run the kernels of cl/convert.cl: on the context's queue, each
 * step ordered after the one before, one argument list per kernel. */
#ifndef CMRSCL_CONVERT_LAUNCH_H
#define CMRSCL_CONVERT_LAUNCH_H

#include "exec/exec.h"

#define CONVERT_GROUP 256                  /* work-items per group of the conversion kernels */
#define ROW_TOTALS (3 + STRIP_HEIGHT_LOGS) /* TOTALS of convert.cl: row_totals' values */

/* Where the conversion's commands go: the context's queue. An out-of-order queue gets a
 * barrier after each command, so every step sees the one before it. */
typedef struct launcher {
    cmrscl_context ctx;
    cl_command_queue queue;
    bool out_of_order;
    cl_program program; /* convert.cl for the matrix's and the source's precision */
    size_t group;       /* work-items a group: CONVERT_GROUP, or what other kernels run */
} launcher;

CMRSCL_HIDDEN launcher cmrs_launcher_make(cmrscl_context ctx);
/* A barrier after a command on an out-of-order queue; nothing on an in-order one. */
CMRSCL_HIDDEN cl_int cmrs_launch_order_point(const launcher *l);
/* convert.cl for the matrix's precision, the source values' precision and the matrix's
 * entry index width (32 or 64); *seconds (may be NULL) grows by the build or load time. */
CMRSCL_HIDDEN cmrscl_status cmrs_convert_program(cmrscl_context ctx, cmrscl_precision precision,
                                                 cmrscl_precision source, int index_bits,
                                                 cl_program *out, double *seconds);

/* One kernel argument: its size and where its value is. */
typedef struct launch_arg {
    size_t size;
    const void *value;
} launch_arg;
#define ARG(v) ((launch_arg){sizeof(v), &(v)})
#define COUNT(args) ((int)(sizeof(args) / sizeof((args)[0])))

CMRSCL_HIDDEN cmrscl_status cmrs_launch_set_args(cl_kernel k, const launch_arg *args, int n);
/* Enqueues `items` work-items (none: nothing) of a kernel whose arguments are set, in groups
 * of the launcher's size. */
CMRSCL_HIDDEN cmrscl_status cmrs_launch_enqueue(const launcher *l, cl_kernel k, size_t items,
                                                cl_uint num_wait, const cl_event *wait,
                                                cl_event *done);
/* Runs kernel `name` of the launcher's program once over `items` work-items
 * (CMRSCL_TRACE: and prints its device time). */
CMRSCL_HIDDEN cmrscl_status cmrs_launch_run(const launcher *l, const char *name,
                                            const launch_arg *args, int nargs, size_t items,
                                            cl_event *done);
/* `bytes` of buf zeroed (a multiple of 4), ordered before what follows. */
CMRSCL_HIDDEN cmrscl_status cmrs_launch_zero(const launcher *l, cl_mem buf, size_t bytes);
/* Waits for the events and releases them. */
CMRSCL_HIDDEN cmrscl_status cmrs_launch_wait(cl_event *events, cl_uint n);
/* Reads n 32-bit integers from buf[first...] (blocking). */
CMRSCL_HIDDEN cmrscl_status cmrs_launch_read_ints(const launcher *l, cl_mem buf, size_t first,
                                                  size_t n, void *dst);
/* A buffer (filled from host when given); on failure NULL and *st says why. */
CMRSCL_HIDDEN cl_mem cmrs_launch_new_buffer(cmrscl_context ctx, cl_mem_flags flags, size_t bytes,
                                            void *host, cmrscl_status *st, const char *what);

#endif
