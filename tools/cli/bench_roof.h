/* bench_roof.h - the roof of a sparse product on this device, from two measured rates:
 *   DRAM: CSR's least traffic (values, columns, row pointers, x and y once) at the stream
 *         bandwidth B - the bound of matrices beyond the last-level cache;
 *   L2:   every 32-byte sector the compute units receive - x's scattered sectors and the
 *         rest of that traffic - at the rate the device serves scattered loads from a
 *         buffer of x's size (cmrscl_gather_measure).
 * The roof is the larger. On matrices with scattered columns the L2 term is what both
 * cmrscl and cuSPARSE run at (measured: docs/dev/PERFORMANCE.md); on banded ones x comes
 * from L1 instead, the L2 term overestimates, and a product beats the "roof". */
#ifndef CMRSCL_BENCH_ROOF_H
#define CMRSCL_BENCH_ROOF_H

#include "cli.h"

typedef struct bench_roof {
    double x_sectors;     /* distinct 32-byte sectors of x per 32 consecutive entries, summed */
    double gather_gloads; /* scattered loads from a buffer of x's size, 1e9/s; 0: unknown */
    double dram_ms, l2_ms;
    double roof_ms; /* the larger of the two; 0: unknown */
} bench_roof;

/* x's sectors as warps of 32 lanes load them, one entry a lane, in CSR order: each load
 * instruction costs one sector per distinct sector its lanes touch (entries of the same
 * sector share it; reuse from L1 across instructions is not counted). */
double roof_x_sectors(const cmrscl_csr *a, cmrscl_precision precision);

/* Scattered-load rates by buffer size, measured once per size. */
typedef struct roof_rates {
    uint64_t bytes[32];
    double gloads[32];
    int n;
} roof_rates;

/* The roof of `a` in `precision` with this beta (y read too when it is not 0), from the
 * stream bandwidth and the scattered-load rate of x's size (rates keeps each size's). The
 * L2 term stays 0 when the rate cannot be measured. */
void roof_compute(cmrscl_context ctx, roof_rates *rates, const cmrscl_csr *a,
                  cmrscl_precision precision, double beta, double bandwidth_gbs, bench_roof *out);

#endif
