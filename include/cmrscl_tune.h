/* cmrscl_tune.h - the tuner (the plans a device can run on a matrix, timed, the fastest kept
 * and recorded in the tuning database) and the device's measured rates (stream bandwidth,
 * scattered loads). Included by cmrscl.h, after the types these calls take; include
 * cmrscl.h, not this file. */
#ifndef CMRSCL_TUNE_H
#define CMRSCL_TUNE_H

#include "cmrscl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Tuning ------------------------------------------------------------------------------ */

/* Called after each candidate plan with its timing and its error against the CPU double
 * reference (cmrscl_csr_spmv_check's bound ratio; > 1 means wrong, and the candidate is not
 * kept); plan is NULL for a candidate the device could not build, with `why` saying why. */
typedef void (*cmrscl_tune_report)(void *user, const cmrscl_params *plan,
                                   const cmrscl_timing *timing, double bound_ratio,
                                   const char *why);
typedef struct cmrscl_tune_options {
    int warmup, repetitions; /* per candidate; 0: 3 and 20 */
    int no_database;         /* 1: do not record the winner in the tuning database */
    cmrscl_tune_report report;
    void *user;
} cmrscl_tune_options;

/* Times the plans the device can run on this matrix - the kernel families over their
 * HEIGHTs, reductions and (NVIDIA) the streaming cache hint - each product checked against
 * the CPU double reference, and creates the matrix with the fastest by median device time.
 * The winner's options are recorded in the tuning database, keyed by device, driver,
 * precision and the matrix's class (bucketed mu, row spread, longest row and size), and
 * cmrscl_matrix_create uses them for matrices of that class whenever every option is left
 * automatic. The database is a text file: $CMRSCL_TUNING_DB, else
 * $XDG_CACHE_HOME/cmrscl/tuning.txt, else ~/.cache/cmrscl/tuning.txt; CMRSCL_TUNING_DB=off
 * turns it off. opt may be NULL. */
CMRSCL_API cmrscl_status cmrscl_matrix_tune(cmrscl_context ctx, cmrscl_precision precision,
                                            const cmrscl_csr *csr, const cmrscl_tune_options *opt,
                                            cmrscl_matrix *out);

/* ---- Device bandwidth ------------------------------------------------------------------ */

/* The device's achievable memory bandwidth through OpenCL, the B of the paper's
 * eta = (beta/tau) / B: stream kernels over three buffers of `bytes` each (0: 1 GiB, or
 * less where the device allows less; on a CPU device eight times its last-level cache, at
 * least 64 MiB - out of the cache, and seconds rather than minutes of a CPU's bandwidth),
 * best of `repetitions` by profiling events. GB/s count
 * bytes read plus bytes written: read 1x, copy 2x, triad 3x the buffer. */
typedef struct cmrscl_bandwidth {
    uint64_t bytes; /* per buffer */
    double read_gbs, copy_gbs, triad_gbs;
    double best_gbs; /* the largest of the three */
} cmrscl_bandwidth;
CMRSCL_API cmrscl_status cmrscl_bandwidth_measure(cmrscl_context ctx, uint64_t bytes,
                                                  int repetitions, cmrscl_bandwidth *out);

/* How fast the device serves scattered loads, as it must the x of a matrix whose columns
 * are scattered: random 4-byte loads from one buffer of `bytes` (give x's size), each to
 * its own 32-byte sector but by chance, in billions of loads per second (*gloads), best of
 * `repetitions`. With x inside the last-level cache this is that cache's rate of scattered
 * sectors: a product that gathers S such sectors takes at least S / rate. */
CMRSCL_API cmrscl_status cmrscl_gather_measure(cmrscl_context ctx, uint64_t bytes, int repetitions,
                                               double *gloads);

#ifdef __cplusplus
}
#endif
#endif /* CMRSCL_TUNE_H */
