/* fuzz_cmrs.c - libFuzzer target for CSR -> CMRS -> CSR. The input decodes to a small
 * matrix, a height and flags; the round trip must be bit-exact (NaN payloads included),
 * and a CMRS with one corrupted field or byte must convert to a valid CSR or fail with
 * ERROR_INVALID_MATRIX, never read or write out of bounds.
 *
 * Input layout (missing bytes read as 0):
 *   0 rows % 65    1 cols % 65    2 height (see decode_height)
 *   3 flags: 1 ORDER_COLUMNS, 2 UNPACKED, 4 raw CSR (each row's entries in input order,
 *     repeats kept, instead of canonical CSR from cmrscl_csr_from_coo), 8 pattern
 *   4 corruption target, 5-6 its position, 7 its xor mask (see corrupt)
 *   then entries of 3 bytes: row, column, value code (see decode_value), a code that
 *   asks for raw bits being followed by 8 bytes of a double. */
#include "fuzz_check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { HEADER = 8, MAX_DIM = 64 };
enum { RAW_CSR = 4, PATTERN = 8 };

typedef struct reader {
    const uint8_t *p, *end;
} reader;

static uint8_t next_byte(reader *r) { return r->p < r->end ? *r->p++ : 0; }

/* Mostly 1..40, around the packed limit of 16; the rest reach the extremes, including
 * the invalid heights 0, -1 and 257. */
static int decode_height(uint8_t b)
{
    static const int extremes[16] = {0,   -1,  257, 64,  65, 100, 127, 128,
                                     129, 200, 255, 256, 16, 17,  32,  1};
    return b < 240 ? 1 + b % 40 : extremes[b - 240];
}

static double from_bits(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Small multiples of 1/4 (exact, so summed duplicates stay exact), the IEEE corner
 * cases by their bits, or 8 raw bytes. */
static double decode_value(reader *r)
{
    static const uint64_t special[16] = {
        0x0000000000000000, 0x8000000000000000, /* +0, -0 */
        0x7ff0000000000000, 0xfff0000000000000, /* +inf, -inf */
        0x7ff8000000000000, 0xfff8000000000000, /* quiet NaN, negative */
        0x7ff0000000000001, 0x7ff8deadbeef0001, /* signalling NaN, NaN with a payload */
        0x0000000000000001, 0x800fffffffffffff, /* subnormals */
        0x0010000000000000, 0x7fefffffffffffff, /* DBL_MIN, DBL_MAX */
        0xffefffffffffffff, 0x3ff0000000000001, /* -DBL_MAX, 1 + ulp */
        0x3fb999999999999a, 0x4340000000000001, /* 0.1, 2^54 + 2 */
    };
    uint8_t code = next_byte(r);
    if (code < 0x40)
        return ((int)code - 32) / 4.0;
    if (code < 0x50)
        return from_bits(special[code - 0x40]);
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i)
        bits = bits << 8 | next_byte(r);
    return from_bits(bits);
}

/* CSR keeping each row's entries in input order, repeats included: valid, but not
 * canonical. */
static void raw_csr(int32_t rows, int32_t cols, int32_t n, const int32_t *ri, const int32_t *ci,
                    const double *val, cmrscl_csr *out)
{
    out->rows = rows, out->cols = cols, out->nnz = n;
    out->row_ptr = calloc((size_t)rows + 1, sizeof(int64_t));
    out->col_ind = malloc((size_t)n * sizeof(int32_t) + 1);
    out->values = malloc((size_t)n * sizeof(double) + 1);
    FUZZ_CHECK(out->row_ptr && out->col_ind && out->values, "no memory");
    for (int32_t k = 0; k < n; ++k)
        out->row_ptr[ri[k] + 1]++;
    for (int32_t i = 0; i < rows; ++i)
        out->row_ptr[i + 1] += out->row_ptr[i];
    int64_t *fill = malloc(((size_t)rows + 1) * sizeof(int64_t));
    FUZZ_CHECK(fill != NULL, "no memory");
    memcpy(fill, out->row_ptr, ((size_t)rows + 1) * sizeof(int64_t));
    for (int32_t k = 0; k < n; ++k) {
        int64_t at = fill[ri[k]]++;
        out->col_ind[at] = ci[k];
        out->values[at] = val ? val[k] : 1.0;
    }
    free(fill);
}

/* What column ordering turns `csr` into: each row stably sorted by column. */
static void stable_sort_rows(const cmrscl_csr *csr, cmrscl_csr *out)
{
    *out = *csr;
    out->row_ptr = malloc(((size_t)csr->rows + 1) * sizeof(int64_t));
    out->col_ind = malloc((size_t)csr->nnz * sizeof(int32_t) + 1);
    out->values = malloc((size_t)csr->nnz * sizeof(double) + 1);
    FUZZ_CHECK(out->row_ptr && out->col_ind && out->values, "no memory");
    memcpy(out->row_ptr, csr->row_ptr, ((size_t)csr->rows + 1) * sizeof(int64_t));
    memcpy(out->col_ind, csr->col_ind, (size_t)csr->nnz * sizeof(int32_t));
    memcpy(out->values, csr->values, (size_t)csr->nnz * sizeof(double));
    for (int32_t i = 0; i < csr->rows; ++i)
        for (int64_t k = csr->row_ptr[i] + 1; k < csr->row_ptr[i + 1]; ++k)
            for (int64_t j = k; j > csr->row_ptr[i] && out->col_ind[j - 1] > out->col_ind[j]; --j) {
                int32_t c = out->col_ind[j];
                double v = out->values[j];
                out->col_ind[j] = out->col_ind[j - 1], out->values[j] = out->values[j - 1];
                out->col_ind[j - 1] = c, out->values[j - 1] = v;
            }
}

static void *copy_array(const void *src, size_t bytes)
{
    void *dst = malloc(bytes ? bytes : 1);
    FUZZ_CHECK(dst != NULL, "no memory");
    if (bytes)
        memcpy(dst, src, bytes);
    return dst;
}

/* One corruption of a deep copy of `m`: a byte of an array flipped, or a size field or
 * the layout flag changed alone. Changing one field keeps the arrays as large as the
 * other fields say, which is all the converter may assume of its caller. */
static void corrupt(const cmrscl_cmrs *m, const uint8_t h[HEADER], cmrscl_cmrs *c)
{
    *c = *m;
    size_t nnz = (size_t)m->nnz;
    c->strip_ptr = copy_array(m->strip_ptr, ((size_t)m->strips + 1) * sizeof(uint64_t));
    c->col_ind = copy_array(m->col_ind, nnz * sizeof(uint32_t));
    c->row_in_strip = m->row_in_strip ? copy_array(m->row_in_strip, nnz) : NULL;
    c->values = copy_array(m->values, nnz * sizeof(double));
    unsigned pos = (unsigned)h[5] << 8 | h[6];
    uint8_t mask = h[7] ? h[7] : 1;
    int32_t wide = (int32_t)((uint32_t)mask << 8 * (pos % 4)); /* reaches the sign bit */
    uint8_t *bytes = (uint8_t *)c->strip_ptr;
    size_t len = ((size_t)m->strips + 1) * sizeof(uint64_t);
    switch (h[4] % 10) {
    case 1: bytes = (uint8_t *)c->col_ind, len = nnz * sizeof(uint32_t); break;
    case 2: bytes = c->row_in_strip, len = c->row_in_strip ? nnz : 0; break;
    case 3: bytes = (uint8_t *)c->values, len = nnz * sizeof(double); break;
    case 4: c->rows ^= wide, len = 0; break;
    case 5: c->cols ^= wide, len = 0; break;
    case 6: c->height ^= wide, len = 0; break;
    case 7: /* the layout flag, or the row bits of the packing */
        if (h[7] & 1)
            c->packed = !c->packed;
        else
            c->row_bits ^= h[7] >> 1;
        len = 0;
        break;
    case 8: c->nnz ^= wide, len = 0; break;
    case 9: c->strips ^= wide, len = 0; break;
    }
    if (len)
        bytes[pos % len] ^= mask;
}

static void check_corrupted(const cmrscl_cmrs *m, const uint8_t h[HEADER])
{
    cmrscl_cmrs bad;
    corrupt(m, h, &bad);
    cmrscl_csr csr;
    cmrscl_status st = cmrscl_cmrs_to_csr(&bad, &csr);
    FUZZ_CHECK(st == CMRSCL_OK || st == CMRSCL_ERROR_INVALID_MATRIX,
               "corrupted CMRS (target %d) gave %s", h[4] % 10, cmrscl_status_name(st));
    if (st == CMRSCL_OK)
        FUZZ_CHECK(cmrscl_csr_validate(&csr) == CMRSCL_OK && csr.rows == bad.rows &&
                       csr.cols == bad.cols && csr.nnz == bad.nnz,
                   "corrupted CMRS (target %d) gave an invalid CSR", h[4] % 10);
    else
        FUZZ_CHECK(cmrscl_last_error()[0] != '\0' && !csr.row_ptr && !csr.col_ind && !csr.values,
                   "no message, or output left behind, for the corrupted CMRS");
    cmrscl_csr_free(&csr);
    cmrscl_cmrs_free(&bad);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, data + size};
    uint8_t h[HEADER];
    for (int i = 0; i < HEADER; ++i)
        h[i] = next_byte(&r);
    int32_t rows = h[0] % (MAX_DIM + 1), cols = h[1] % (MAX_DIM + 1);
    int height = decode_height(h[2]);
    /* MODULO arrangement: when cmrs.c gains it, decode its flag and parameter here and
     * teach fuzz_check_cmrs_round_trip the structure it promises. */
    unsigned flags = h[3] & (CMRSCL_CMRS_ORDER_COLUMNS | CMRSCL_CMRS_UNPACKED);

    size_t max = size / 3 + 1;
    int32_t *ri = malloc(max * sizeof(int32_t)), *ci = malloc(max * sizeof(int32_t));
    double *val = malloc(max * sizeof(double));
    FUZZ_CHECK(ri && ci && val, "no memory");
    int32_t n = 0;
    while (rows > 0 && cols > 0 && r.p < r.end) {
        ri[n] = next_byte(&r) % rows;
        ci[n] = next_byte(&r) % cols;
        val[n++] = decode_value(&r);
    }
    const double *values = h[3] & PATTERN ? NULL : val;

    cmrscl_csr csr;
    if (h[3] & RAW_CSR) {
        raw_csr(rows, cols, n, ri, ci, values, &csr);
    } else {
        cmrscl_status st = cmrscl_csr_from_coo(rows, cols, n, ri, ci, values, &csr);
        FUZZ_CHECK(st == CMRSCL_OK, "csr_from_coo: %s", cmrscl_status_name(st));
        for (int32_t i = 0; i < rows; ++i)
            for (int64_t k = csr.row_ptr[i] + 1; k < csr.row_ptr[i + 1]; ++k)
                FUZZ_CHECK(csr.col_ind[k - 1] < csr.col_ind[k], "csr_from_coo: row %d", i);
    }
    free(ri), free(ci), free(val);
    FUZZ_CHECK(cmrscl_csr_validate(&csr) == CMRSCL_OK, "the decoded CSR is invalid");

    cmrscl_cmrs cmrs;
    if (height < 1 || height > CMRSCL_MAX_HEIGHT) {
        cmrscl_status st = cmrscl_cmrs_from_csr(&csr, height, flags, &cmrs);
        FUZZ_CHECK(st == CMRSCL_ERROR_INVALID_ARGUMENT && cmrs.strip_ptr == NULL,
                   "height %d gave %s", height, cmrscl_status_name(st));
    } else {
        cmrscl_csr expect = csr;
        if ((h[3] & RAW_CSR) && (flags & CMRSCL_CMRS_ORDER_COLUMNS))
            stable_sort_rows(&csr, &expect);
        fuzz_check_cmrs_round_trip(&csr, height, flags, &expect, &cmrs);
        if (expect.col_ind != csr.col_ind)
            cmrscl_csr_free(&expect);
        check_corrupted(&cmrs, h);
        cmrscl_cmrs_free(&cmrs);
    }
    cmrscl_csr_free(&csr);
    return 0;
}
