/* values_codec.c - how the device stores the values (cmrscl_values): the census of a matrix's
 * values that the plan reads (how many distinct, whether doubles are all floats), and the
 * encodings the kernels decode (spmv_common.cl, "values"): a dictionary index in each column
 * word, or doubles narrowed to floats. Every encoding is exact - a value is compared by its
 * bits in the matrix's precision - so the kernels multiply the very same numbers. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

/* A value's bits in the matrix's precision (a float's in the low 32), so that equal means
 * "the same number to the kernels": 0.0 and -0.0 differ, NaNs compare by payload. */
static uint64_t value_bits(const void *values, cmrscl_precision src, int64_t k,
                           cmrscl_precision precision)
{
    double d = src == CMRSCL_DOUBLE ? ((const double *)values)[k] : ((const float *)values)[k];
    if (precision == CMRSCL_FLOAT) {
        float f = (float)d;
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        return b;
    }
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static bool exactly_float(const void *values, cmrscl_precision src, int64_t k)
{
    if (src == CMRSCL_FLOAT)
        return true;
    double d = ((const double *)values)[k], back = (double)(float)d;
    /* the bits, not the values: -0.0 and 0.0 differ, and so do NaN payloads (lossless) */
    /* NOLINTNEXTLINE(bugprone-suspicious-memory-comparison) */
    return memcmp(&d, &back, sizeof d) == 0;
}

/* The distinct values of a range, ascending by bits; `distinct` stops at MAX_DICT + 1. */
typedef struct census_part {
    uint64_t bits[CMRSCL_MAX_DICT + 1];
    int distinct;
    bool float_exact;
} census_part;

/* Adds b to the sorted set; false when the set is full (more than CMRSCL_MAX_DICT). */
static bool set_add(census_part *c, uint64_t b)
{
    int lo = 0, hi = c->distinct;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (c->bits[mid] < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < c->distinct && c->bits[lo] == b)
        return true;
    memmove(c->bits + lo + 1, c->bits + lo, sizeof *c->bits * (size_t)(c->distinct - lo));
    c->bits[lo] = b;
    return ++c->distinct <= CMRSCL_MAX_DICT;
}

typedef struct census_job {
    const void *values;
    cmrscl_precision src, precision;
    int64_t n;
    census_part part[64];
} census_job;

static void census_range(void *ctx, int thread, int threads)
{
    census_job *j = ctx;
    census_part *c = &j->part[thread];
    int64_t begin, end;
    cmrs_parallel_range(j->n, thread, threads, &begin, &end);
    c->distinct = 0;
    c->float_exact = true;
    bool few = true;
    uint64_t last = 0;
    for (int64_t k = begin; k < end && (few || c->float_exact); ++k) {
        if (few) {
            uint64_t b = value_bits(j->values, j->src, k, j->precision);
            if (k == begin || b != last) /* runs of one value are the common case */
                few = set_add(c, b), last = b;
        }
        if (c->float_exact)
            c->float_exact = exactly_float(j->values, j->src, k);
    }
}

void cmrs_value_census_take(const void *values, cmrscl_precision src, int64_t n,
                            cmrscl_precision precision, value_census *out)
{
    memset(out, 0, sizeof *out);
    out->examined = true;
    out->float_exact = true;
    census_job *j = malloc(sizeof *j);
    int threads = format_threads(n);
    if (!j) { /* unexamined: the plan keeps the values plain */
        out->examined = false;
        return;
    }
    threads = threads > 64 ? 64 : threads;
    memset(j, 0, sizeof *j);
    j->values = values, j->src = src, j->precision = precision, j->n = n;
    cmrs_parallel_run(threads, census_range, j);
    census_part all = {.float_exact = true};
    bool few = true;
    for (int t = 0; t < threads; ++t) {
        for (int i = 0; few && i < j->part[t].distinct; ++i)
            few = set_add(&all, j->part[t].bits[i]);
        all.float_exact = all.float_exact && j->part[t].float_exact;
    }
    out->distinct = all.distinct;
    out->float_exact = precision == CMRSCL_DOUBLE && all.float_exact;
    for (int i = 0; i < all.distinct && i < CMRSCL_MAX_DICT; ++i)
        out->dict[i] = all.bits[i];
    free(j);
}

int cmrs_value_dict_bits(int distinct)
{
    int bits = 0;
    while ((1 << bits) < distinct)
        ++bits;
    return bits;
}

void cmrs_value_dictionary(const value_census *c, cmrscl_precision precision, void *out)
{
    for (int i = 0; i < c->distinct && i < CMRSCL_MAX_DICT; ++i) {
        if (precision == CMRSCL_FLOAT) {
            uint32_t b = (uint32_t)c->dict[i];
            memcpy((float *)out + i, &b, sizeof b);
        } else {
            memcpy((double *)out + i, &c->dict[i], sizeof(double));
        }
    }
}

typedef struct encode_job {
    uint32_t *col_ind;
    const void *values; /* CMRS order, the matrix's precision */
    cmrscl_precision precision;
    int64_t n;
    int row_bits, dict_bits;
    const value_census *c;
} encode_job;

static void encode_range(void *ctx, int thread, int threads)
{
    const encode_job *j = ctx;
    int64_t begin, end;
    cmrs_parallel_range(j->n, thread, threads, &begin, &end);
    const uint32_t row_mask = (1u << j->row_bits) - 1u;
    uint32_t idx = 0;
    for (int64_t k = begin; k < end; ++k) {
        if (j->col_ind[k] == CMRS_HOLE) /* no value; the kernels skip it */
            continue;
        uint64_t b = value_bits(j->values, j->precision, k, j->precision);
        if (j->c->dict[idx] != b) /* the census holds every value: the search ends */
            for (idx = 0; j->c->dict[idx] != b; ++idx)
                ;
        uint32_t w = j->col_ind[k];
        j->col_ind[k] = (w >> j->row_bits) << (j->row_bits + j->dict_bits) | idx << j->row_bits |
                        (w & row_mask);
    }
}

void cmrs_values_encode_dict(uint32_t *col_ind, int64_t n, int row_bits, int dict_bits,
                             const void *values, cmrscl_precision precision, const value_census *c)
{
    encode_job j = {col_ind, values, precision, n, row_bits, dict_bits, c};
    cmrs_parallel_run(format_threads(n), encode_range, &j);
}

void cmrs_values_decode_dict(uint32_t *col_ind, double *values, int64_t n, int row_bits,
                             int dict_bits, const double *dict)
{
    const uint32_t row_mask = (1u << row_bits) - 1u, dict_mask = (1u << dict_bits) - 1u;
    for (int64_t k = 0; k < n; ++k) {
        uint32_t w = col_ind[k];
        if (w == CMRS_HOLE) {
            values[k] = 0;
            continue;
        }
        values[k] = dict[(w >> row_bits) & dict_mask];
        col_ind[k] = (w >> (row_bits + dict_bits)) << row_bits | (w & row_mask);
    }
}
