/* setup_device.h - the set-up of a matrix whose CSR already lives on the device, timed step
 * by step against the bus copy of its values (`cmrscl-run setup` calls it). */
#ifndef CMRSCL_SETUP_DEVICE_H
#define CMRSCL_SETUP_DEVICE_H

#include "cli.h"

#include <stdio.h>

/* Uploads csr to device buffers (int32 row_ptr and col_ind, values in `precision`; not
 * timed), then times, on the host clock around each call and a clFinish, the median of
 * `repetitions` runs of: the device create
 * (cmrscl_matrix_create_from_cl), a values update from a device buffer and from host memory
 * (the first device update, which builds the permutation of column-ordered strips, on a
 * line of its own), and a plain clEnqueueWriteBuffer of the values: the bus copy every
 * line is compared with, as is host_create_ms (the caller's measurement of the host create).
 * One line per step goes to `out`. opt may be NULL. Returns 0, or EXIT_RUN_FAILED having
 * printed the reason to stderr. */
int setup_device_report(cmrscl_context ctx, const cmrscl_csr *csr, cmrscl_precision precision,
                        const cmrscl_options *opt, int repetitions, double host_create_ms,
                        FILE *out);

#endif
