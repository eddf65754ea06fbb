/* bench_roof.c - see bench_roof.h. */
#include "bench_roof.h"

#include <string.h>

#define WARP_LOAD 32 /* entries one load instruction of a warp covers */

double roof_x_sectors(const cmrscl_csr *a, cmrscl_precision precision)
{
    const int shift = precision == CMRSCL_DOUBLE ? 2 : 3; /* values per 32-byte sector: 4, 8 */
    double sectors = 0;
    for (int64_t j0 = 0; j0 < a->nnz; j0 += WARP_LOAD) {
        int32_t s[WARP_LOAD];
        int n = (int)(a->nnz - j0 < WARP_LOAD ? a->nnz - j0 : WARP_LOAD);
        for (int k = 0; k < n; ++k) { /* insertion sort: 32 at most, mostly in order */
            int32_t v = a->col_ind[j0 + k] >> shift;
            int i = k;
            for (; i > 0 && s[i - 1] > v; --i)
                s[i] = s[i - 1];
            s[i] = v;
        }
        for (int k = 0; k < n; ++k)
            sectors += k == 0 || s[k] != s[k - 1];
    }
    return sectors;
}

static double rate_for(cmrscl_context ctx, roof_rates *rates, uint64_t bytes)
{
    for (int i = 0; i < rates->n; ++i)
        if (rates->bytes[i] == bytes)
            return rates->gloads[i];
    double g = 0.0;
    if (cmrscl_gather_measure(ctx, bytes, 10, &g) != CMRSCL_OK)
        g = 0.0;
    if (rates->n < (int)(sizeof rates->bytes / sizeof rates->bytes[0])) {
        rates->bytes[rates->n] = bytes;
        rates->gloads[rates->n++] = g;
    }
    return g;
}

void roof_compute(cmrscl_context ctx, roof_rates *rates, const cmrscl_csr *a,
                  cmrscl_precision precision, double beta, double bandwidth_gbs, bench_roof *out)
{
    memset(out, 0, sizeof *out);
    const double sv = precision == CMRSCL_DOUBLE ? 8 : 4;
    const double x_bytes = sv * (a->cols > 0 ? a->cols : 1);
    /* everything but x, once: values, 32-bit columns, row pointers, y (read and written
     * when beta != 0) */
    double rest = (sv + 4) * (double)a->nnz + 4.0 * (a->rows + 1.0) +
                  sv * a->rows * (beta != 0.0 ? 2.0 : 1.0);
    out->x_sectors = roof_x_sectors(a, precision);
    out->gather_gloads = rate_for(ctx, rates, (uint64_t)x_bytes);
    out->dram_ms = bandwidth_gbs > 0 ? (rest + x_bytes) / bandwidth_gbs * 1e-6 : 0.0;
    out->l2_ms =
        out->gather_gloads > 0 ? (out->x_sectors + rest / 32.0) / out->gather_gloads * 1e-6 : 0.0;
    out->roof_ms = out->dram_ms > out->l2_ms ? out->dram_ms : out->l2_ms;
}
