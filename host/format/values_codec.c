/* values_codec.c - how the device stores the values (cmrscl_values): the census of a matrix's
 * values that the plan reads (how many distinct, whether doubles are all floats, how many
 * off the diagonal), and the encodings the kernels decode (spmv_common.cl, "values"): a
 * dictionary index in each column word - with DIAGONAL the diagonal's entries reading an array
 * of their own -, or doubles narrowed to floats. Every encoding is exact - a value is compared by
 * its bits in the matrix's precision - so the kernels multiply the very same numbers. */
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

/* The values off the diagonal: rows split among the threads, each part stopping - and
 * saying no by a full count - once it holds more than a dictionary with the diagonal's index
 * leaves room for, or (twice) meets a row with two entries on its diagonal. */
typedef struct off_diagonal_job {
    const void *values;
    cmrscl_precision src, precision;
    int32_t rows;
    const int64_t *row_ptr;
    const int32_t *col_ind;
    census_part part[64];
    bool twice[64];
} off_diagonal_job;

static void off_diagonal_range(void *ctx, int thread, int threads)
{
    off_diagonal_job *j = ctx;
    census_part *c = &j->part[thread];
    int64_t begin, end;
    cmrs_parallel_range(j->rows, thread, threads, &begin, &end);
    c->distinct = 0;
    bool few = true;
    for (int64_t r = begin; r < end && few; ++r) {
        int on = 0;
        for (int64_t k = j->row_ptr[r]; k < j->row_ptr[r + 1] && few; ++k) {
            if (j->col_ind[k] == r) {
                j->twice[thread] = ++on > 1;
                few = !j->twice[thread];
            } else {
                few = set_add(c, value_bits(j->values, j->src, k, j->precision)) &&
                      c->distinct < CMRSCL_MAX_DICT;
            }
        }
    }
    if (!few)
        c->distinct = CMRSCL_MAX_DICT; /* too many, or twice: the part says no */
}

static void census_off_diagonal(const void *values, cmrscl_precision src, int32_t rows,
                                const int64_t *row_ptr, const int32_t *col_ind,
                                cmrscl_precision precision, value_census *out)
{
    off_diagonal_job *j = calloc(1, sizeof *j);
    out->off_distinct = -1;
    if (!j)
        return; /* not examined: no DIAGONAL */
    int threads = format_threads(row_ptr[rows]);
    threads = threads > 64 ? 64 : threads;
    j->values = values, j->src = src, j->precision = precision;
    j->rows = rows, j->row_ptr = row_ptr, j->col_ind = col_ind;
    cmrs_parallel_run(threads, off_diagonal_range, j);
    census_part all = {0};
    bool few = true, twice = false;
    for (int t = 0; t < threads; ++t) /* the reason, whatever the threads' count */
        twice = twice || j->twice[t];
    for (int t = 0; t < threads && few && !twice; ++t) {
        few = j->part[t].distinct < CMRSCL_MAX_DICT;
        for (int i = 0; few && i < j->part[t].distinct; ++i)
            few = set_add(&all, j->part[t].bits[i]) && all.distinct < CMRSCL_MAX_DICT;
    }
    out->off_distinct = twice ? -2 : few ? all.distinct : -1;
    for (int i = 0; i < out->off_distinct; ++i)
        out->off_dict[i] = all.bits[i];
    free(j);
}

void cmrs_value_census_take(const void *values, cmrscl_precision src, int32_t rows,
                            const int64_t *row_ptr, const int32_t *col_ind,
                            cmrscl_precision precision, value_census *out)
{
    memset(out, 0, sizeof *out);
    out->examined = true;
    out->float_exact = true;
    const int64_t n = row_ptr[rows];
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
    if (out->distinct > CMRSCL_MAX_DICT)
        census_off_diagonal(values, src, rows, row_ptr, col_ind, precision, out);
}

int cmrs_value_dict_bits(int distinct)
{
    int bits = 0;
    while ((1 << bits) < distinct)
        ++bits;
    return bits;
}

void cmrs_value_dictionary(const uint64_t *bits, int distinct, cmrscl_precision precision,
                           void *out)
{
    for (int i = 0; i < distinct && i < CMRSCL_MAX_DICT; ++i) {
        if (precision == CMRSCL_FLOAT) {
            uint32_t b = (uint32_t)bits[i];
            memcpy((float *)out + i, &b, sizeof b);
        } else {
            memcpy((double *)out + i, &bits[i], sizeof(double));
        }
    }
}

/* The index of value bits b in dict (it is there: the census holds every value), starting
 * from the last entry's: runs of one value are the common case. */
static uint32_t dict_index(const uint64_t *dict, uint64_t b, uint32_t last)
{
    if (dict[last] == b)
        return last;
    uint32_t idx = 0;
    while (dict[idx] != b)
        ++idx;
    return idx;
}

typedef struct encode_job {
    uint32_t *col_ind;
    const void *values; /* CMRS order, the matrix's precision */
    cmrscl_precision precision;
    int64_t n;
    int row_bits, dict_bits;
    const value_census *c;
} encode_job;

static uint32_t with_index(uint32_t w, uint32_t idx, int row_bits, int dict_bits)
{
    const uint32_t row_mask = (1u << row_bits) - 1u;
    return (w >> row_bits) << (row_bits + dict_bits) | idx << row_bits | (w & row_mask);
}

static void encode_range(void *ctx, int thread, int threads)
{
    const encode_job *j = ctx;
    int64_t begin, end;
    cmrs_parallel_range(j->n, thread, threads, &begin, &end);
    uint32_t idx = 0;
    for (int64_t k = begin; k < end; ++k) {
        if (j->col_ind[k] == CMRS_HOLE) /* no value; the kernels skip it */
            continue;
        idx = dict_index(j->c->dict, value_bits(j->values, j->precision, k, j->precision), idx);
        j->col_ind[k] = with_index(j->col_ind[k], idx, j->row_bits, j->dict_bits);
    }
}

void cmrs_values_encode_dict(uint32_t *col_ind, int64_t n, int row_bits, int dict_bits,
                             const void *values, cmrscl_precision precision, const value_census *c)
{
    encode_job j = {col_ind, values, precision, n, row_bits, dict_bits, c};
    cmrs_parallel_run(format_threads(n), encode_range, &j);
}

/* DIAGONAL by strips, whose rows tell which entries sit on the diagonal: a thread's strips
 * write only their own rows of the diagonal. */
typedef struct diagonal_job {
    cmrscl_cmrs *c;
    const void *values;
    cmrscl_precision precision;
    int dict_bits;
    const value_census *census;
    void *diagonal;
} diagonal_job;

static void encode_diagonal_range(void *ctx, int thread, int threads)
{
    const diagonal_job *j = ctx;
    const cmrscl_cmrs *c = j->c;
    const int row_bits = c->packed ? c->row_bits : 0;
    const uint32_t row_mask = (1u << row_bits) - 1u, on = (1u << j->dict_bits) - 1u;
    const size_t size = cmrscl_precision_size(j->precision);
    int64_t first, last;
    cmrs_parallel_range(c->strips, thread, threads, &first, &last);
    uint32_t idx = 0;
    for (int64_t s = first; s < last; ++s)
        for (uint64_t k = c->strip_ptr[s]; k < c->strip_ptr[s + 1]; ++k) {
            const uint32_t w = c->col_ind[k];
            if (w == CMRS_HOLE)
                continue;
            const int64_t row = s * c->height + (c->packed ? (w & row_mask) : c->row_in_strip[k]);
            if ((int64_t)(w >> row_bits) == row) {
                memcpy((char *)j->diagonal + (size_t)row * size, (const char *)j->values + k * size,
                       size);
                c->col_ind[k] = with_index(w, on, row_bits, j->dict_bits);
                continue;
            }
            idx = dict_index(j->census->off_dict,
                             value_bits(j->values, j->precision, (int64_t)k, j->precision), idx);
            c->col_ind[k] = with_index(w, idx, row_bits, j->dict_bits);
        }
}

void cmrs_values_encode_diagonal(cmrscl_cmrs *c, int dict_bits, const void *values,
                                 cmrscl_precision precision, const value_census *census,
                                 void *diagonal)
{
    diagonal_job j = {c, values, precision, dict_bits, census, diagonal};
    cmrs_parallel_run(format_threads(c->nnz), encode_diagonal_range, &j);
}

void cmrs_values_decode_dict(uint32_t *col_ind, double *values, int64_t n, int row_bits,
                             int dict_bits, const double *dict, const double *diagonal)
{
    const uint32_t row_mask = (1u << row_bits) - 1u, dict_mask = (1u << dict_bits) - 1u;
    for (int64_t k = 0; k < n; ++k) {
        uint32_t w = col_ind[k];
        if (w == CMRS_HOLE) {
            values[k] = 0;
            continue;
        }
        const uint32_t idx = (w >> row_bits) & dict_mask, column = w >> (row_bits + dict_bits);
        values[k] = diagonal && idx == dict_mask ? diagonal[column] : dict[idx];
        col_ind[k] = column << row_bits | (w & row_mask);
    }
}
