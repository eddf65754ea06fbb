/* cmrs.c - CSR <-> CMRS on the host (paper, section 3): StripPtr, ColInd with the row in
 * strip packed into its low row_bits bits (or a separate RowInStrip array when the
 * packing does not fit), the optional per-strip column ordering (section 4, "fourth
 * optimization"), both on all host threads, and the exact way back to CSR. */
#include "format/format.h"
#include "io/io.h"

#include <stdlib.h>
#include <string.h>

int cmrscl_cmrs_row_bits(int height)
{
    if (height < 1 || height > CMRSCL_MAX_HEIGHT)
        return 0;
    int bits = CMRSCL_CMRS_BITS;
    while ((1 << bits) < height)
        ++bits;
    return bits;
}

bool cmrs_packing_fits(int32_t cols, int height)
{
    int bits = cmrscl_cmrs_row_bits(height);
    return bits > 0 && height <= CMRSCL_MAX_PACKED_HEIGHT && (int64_t)cols <= (1ll << (32 - bits));
}

void cmrscl_cmrs_free(cmrscl_cmrs *cmrs)
{
    if (!cmrs)
        return;
    free(cmrs->strip_ptr);
    free(cmrs->col_ind);
    free(cmrs->row_in_strip);
    free(cmrs->values);
    memset(cmrs, 0, sizeof *cmrs);
}

/* ---- CSR -> CMRS: each thread takes whole strips holding an equal share of the
 * entries, so the result does not depend on the thread count ---- */

typedef struct strip_builder {
    int32_t rows, strips;
    int height, bits;
    bool packed, ordered;
    const int64_t *row_ptr;
    const int32_t *col_ind;
    const cmrs_values *values; /* NULL: the structure only */
    cmrscl_cmrs *out;
    void *perm; /* uint32_t or uint64_t per perm_bits; NULL: not asked for */
    int perm_bits;
    bool out_of_memory;
} strip_builder;

/* The entries of one strip while it is sorted: column, CSR position, row in strip. */
typedef struct strip_entries {
    uint32_t *col;
    int64_t *pos;
    uint8_t *row;
} strip_entries;

static bool strip_entries_alloc(strip_entries *e, size_t n)
{
    e->col = cmrscl_alloc(n, sizeof *e->col);
    e->pos = cmrscl_alloc(n, sizeof *e->pos);
    e->row = cmrscl_alloc(n, sizeof *e->row);
    return e->col && e->pos && e->row;
}

static void strip_entries_free(strip_entries *e) { free(e->col), free(e->pos), free(e->row); }

/* Stable merge of the runs [lo, mid) and [mid, hi) of a into d. */
static void merge_runs(const strip_entries *a, int64_t lo, int64_t mid, int64_t hi,
                       const strip_entries *d)
{
    int64_t i = lo, j = mid, k = lo;
    while (i < mid || j < hi) {
        /* Ties from the left run: equal columns stay in CSR (row) order. */
        int64_t from = j >= hi || (i < mid && a->col[i] <= a->col[j]) ? i++ : j++;
        d->col[k] = a->col[from], d->pos[k] = a->pos[from], d->row[k++] = a->row[from];
    }
}

/* Column ordering of one strip's n entries (paper, section 4, "fourth optimization"): a
 * stable sort by column. Its rows are usually sorted runs already, so a natural merge
 * sort takes log2(HEIGHT) passes; run_end holds n + 1 run boundaries of scratch. Returns
 * the array (a or b) that holds the result. */
static const strip_entries *sort_strip(strip_entries *a, strip_entries *b, int64_t n,
                                       int64_t *run_end)
{
    int64_t runs = 0;
    for (int64_t k = 1; k <= n; ++k)
        if (k == n || a->col[k] < a->col[k - 1])
            run_end[runs++] = k;
    while (runs > 1) {
        int64_t merged = 0, lo = 0;
        for (int64_t r = 0; r < runs; r += 2) {
            int64_t mid = run_end[r], hi = r + 1 < runs ? run_end[r + 1] : mid;
            merge_runs(a, lo, mid, hi, b);
            run_end[merged++] = hi;
            lo = hi;
        }
        strip_entries t = *a;
        *a = *b, *b = t;
        runs = merged;
    }
    return a;
}

/* The values of n entries from CMRS position k0: dst[k0 + j] = src[pos[j]] (src[k0 + j]
 * when pos is NULL: the orders agree), converted to the destination's precision. */
static void place_values(const cmrs_values *v, int64_t k0, int64_t n, const int64_t *pos)
{
#define PLACE(DT, ST)                                                                              \
    for (int64_t j = 0; j < n; ++j)                                                                \
    ((DT *)v->dst)[k0 + j] = (DT)((const ST *)v->src)[pos ? pos[j] : k0 + j]
    if (v->dst_precision == CMRSCL_DOUBLE && v->src_precision == CMRSCL_DOUBLE)
        PLACE(double, double);
    else if (v->dst_precision == CMRSCL_DOUBLE)
        PLACE(double, float);
    else if (v->src_precision == CMRSCL_DOUBLE)
        PLACE(float, double);
    else
        PLACE(float, float);
#undef PLACE
}

/* The first strip that starts at or after entry e (strips if none): strip s starts at
 * row s * height, so it is the first strip at or after the first such row. */
static int64_t strip_at(const strip_builder *c, int64_t e)
{
    int64_t row = cmrs_csr_row_at(c->row_ptr, c->rows, e);
    return (row + c->height - 1) / c->height;
}

/* Strip s's entries in CSR order: into the output directly, or into the sort's scratch. */
static void gather_strip(const strip_builder *c, int64_t first_row, int64_t last_row,
                         strip_entries *a)
{
    cmrscl_cmrs *out = c->out;
    for (int64_t i = first_row, j = 0; i < last_row; ++i) {
        uint32_t r = (uint32_t)(i - first_row);
        for (int64_t k = c->row_ptr[i]; k < c->row_ptr[i + 1]; ++k, ++j) {
            uint32_t col = (uint32_t)c->col_ind[k];
            if (c->ordered) {
                a->col[j] = col, a->pos[j] = k, a->row[j] = (uint8_t)r;
            } else if (c->packed) {
                out->col_ind[k] = col << c->bits | r;
            } else {
                out->col_ind[k] = col;
                out->row_in_strip[k] = (uint8_t)r;
            }
        }
    }
}

/* A column-ordered strip's sorted entries from position begin on. */
static void put_sorted(const strip_builder *c, int64_t begin, int64_t n, const strip_entries *e)
{
    cmrscl_cmrs *out = c->out;
    for (int64_t j = 0; j < n; ++j) {
        int64_t k = begin + j;
        if (c->packed) {
            out->col_ind[k] = e->col[j] << c->bits | e->row[j];
        } else {
            out->col_ind[k] = e->col[j];
            out->row_in_strip[k] = e->row[j];
        }
    }
    if (c->perm_bits == 32)
        for (int64_t j = 0; j < n; ++j)
            ((uint32_t *)c->perm)[begin + j] = (uint32_t)e->pos[j];
    else if (c->perm_bits == 64)
        for (int64_t j = 0; j < n; ++j)
            ((uint64_t *)c->perm)[begin + j] = (uint64_t)e->pos[j];
}

static void build_strips(void *ctx, int thread, int threads)
{
    strip_builder *c = ctx;
    int64_t e0, e1;
    cmrs_parallel_range(c->row_ptr[c->rows], thread, threads, &e0, &e1);
    int64_t s0 = strip_at(c, e0), s1 = thread == threads - 1 ? c->strips : strip_at(c, e1);
    strip_entries a = {0}, b = {0};
    int64_t *run_end = NULL, cap = 0;
    for (int64_t s = s0; s < s1; ++s) {
        int64_t first_row = s * c->height;
        int64_t last_row = first_row + c->height < c->rows ? first_row + c->height : c->rows;
        int64_t begin = c->row_ptr[first_row], n = c->row_ptr[last_row] - begin;
        c->out->strip_ptr[s] = (uint64_t)begin;
        if (c->ordered && n > cap) {
            strip_entries_free(&a), strip_entries_free(&b), free(run_end);
            cap = n;
            run_end = cmrscl_alloc((size_t)cap + 1, sizeof *run_end);
            if (!strip_entries_alloc(&a, (size_t)cap) || !strip_entries_alloc(&b, (size_t)cap) ||
                !run_end) {
                c->out_of_memory = true;
                break;
            }
        }
        gather_strip(c, first_row, last_row, &a);
        const strip_entries *sorted = c->ordered ? sort_strip(&a, &b, n, run_end) : NULL;
        if (sorted)
            put_sorted(c, begin, n, sorted);
        if (c->values)
            place_values(c->values, begin, n, sorted ? sorted->pos : NULL);
    }
    strip_entries_free(&a), strip_entries_free(&b), free(run_end);
}

cmrscl_status cmrs_build(int32_t rows, int32_t cols, const int64_t *row_ptr, const int32_t *col_ind,
                         int height, unsigned flags, const cmrs_values *values, int perm_bits,
                         cmrscl_cmrs *out, void **perm)
{
    memset(out, 0, sizeof *out);
    *perm = NULL;
    if (height < 1 || height > CMRSCL_MAX_HEIGHT)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "height %d is outside 1..%d", height,
                           CMRSCL_MAX_HEIGHT);
    int64_t nnz = row_ptr[rows];
    int32_t strips = (int32_t)(((int64_t)rows + height - 1) / height);
    bool packed = !(flags & CMRSCL_CMRS_UNPACKED) && cmrs_packing_fits(cols, height);
    bool ordered = (flags & CMRSCL_CMRS_ORDER_COLUMNS) != 0;
    out->strip_ptr = cmrscl_alloc((size_t)strips + 1, sizeof(uint64_t));
    /* Huge pages for the big arrays: the threads fault them in as they fill them. */
    out->col_ind = cmrs_parallel_alloc((size_t)nnz + CMRS_ENTRY_PAD, sizeof(uint32_t));
    if (out->col_ind)
        memset(out->col_ind + nnz, 0, CMRS_ENTRY_PAD * sizeof(uint32_t));
    out->row_in_strip = packed ? NULL : cmrs_parallel_alloc((size_t)nnz, sizeof(uint8_t));
    perm_bits = ordered ? perm_bits : 0;
    void *p = perm_bits ? cmrs_parallel_alloc((size_t)nnz, (size_t)perm_bits / 8) : NULL;
    strip_builder c = {rows,   strips,  height,  cmrscl_cmrs_row_bits(height),
                       packed, ordered, row_ptr, col_ind,
                       values, out,     p,       perm_bits,
                       false};
    if (out->strip_ptr && out->col_ind && (packed || out->row_in_strip) && (!perm_bits || p)) {
        out->strip_ptr[strips] = (uint64_t)nnz;
        if (values) {
            size_t vs = cmrscl_precision_size(values->dst_precision);
            memset((char *)values->dst + vs * (size_t)nnz, 0, vs * CMRS_ENTRY_PAD);
        }
        cmrs_parallel_run(format_threads(nnz), build_strips, &c);
    } else {
        c.out_of_memory = true;
    }
    if (c.out_of_memory) {
        free(p);
        cmrscl_cmrs_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for CMRS of %lld entries",
                           (long long)nnz);
    }
    out->rows = rows;
    out->cols = cols;
    out->nnz = nnz;
    out->height = height;
    out->strips = strips;
    out->packed = packed;
    out->row_bits = packed ? c.bits : 0;
    out->column_ordered = ordered;
    *perm = p;
    return CMRSCL_OK;
}

typedef struct conversion {
    void *dst;
    cmrscl_precision dst_precision, src_precision;
    const void *src;
    int64_t n;
} conversion;

static void convert_range(void *ctx, int thread, int threads)
{
    const conversion *v = ctx;
    int64_t k0, k1;
    cmrs_parallel_range(v->n, thread, threads, &k0, &k1);
    cmrs_values part = {v->src, v->src_precision, v->dst, v->dst_precision};
    place_values(&part, k0, k1 - k0, NULL);
}

void cmrs_values_convert(void *dst, cmrscl_precision dst_precision, const void *src,
                         cmrscl_precision src_precision, int64_t n)
{
    conversion v = {dst, dst_precision, src_precision, src, n};
    cmrs_parallel_run(format_threads(n), convert_range, &v);
}

cmrscl_status cmrscl_cmrs_from_csr(const cmrscl_csr *csr, int height, unsigned flags,
                                   cmrscl_cmrs *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    cmrscl_status st = cmrscl_csr_validate(csr);
    if (st != CMRSCL_OK)
        return st;
    double *values = cmrs_parallel_alloc((size_t)csr->nnz + CMRS_ENTRY_PAD, sizeof(double));
    if (!values)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld values",
                           (long long)csr->nnz);
    cmrs_values v = {csr->values, CMRSCL_DOUBLE, values, CMRSCL_DOUBLE};
    void *perm;
    st = cmrs_build(csr->rows, csr->cols, csr->row_ptr, csr->col_ind, height, flags, &v, 0, out,
                    &perm);
    if (st != CMRSCL_OK) {
        free(values);
        return st;
    }
    out->values = values;
    return CMRSCL_OK;
}

/* Checks a CMRS struct well enough that converting it cannot read or write out of bounds. */
static cmrscl_status cmrs_validate(const cmrscl_cmrs *m)
{
    if (m->rows < 0 || m->cols < 0 || m->nnz < 0 || m->height < 1 || m->height > CMRSCL_MAX_HEIGHT)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                           "bad CMRS sizes %d x %d, nnz %lld, height %d", m->rows, m->cols,
                           (long long)m->nnz, m->height);
    if (m->strips != (int32_t)(((int64_t)m->rows + m->height - 1) / m->height))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "%d strips for %d rows of height %d",
                           m->strips, m->rows, m->height);
    if (m->packed ? !cmrs_packing_fits(m->cols, m->height) ||
                        m->row_bits != cmrscl_cmrs_row_bits(m->height)
                  : (m->nnz > 0 && !m->row_in_strip))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                           "layout does not match height/columns (row_bits %d for height %d)",
                           m->row_bits, m->height);
    if (!m->strip_ptr || (m->nnz > 0 && (!m->col_ind || !m->values)))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "CMRS array is NULL");
    uint64_t nnz = (uint64_t)m->nnz;
    if (m->strip_ptr[0] != 0 || m->strip_ptr[m->strips] != nnz)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "strip_ptr must run from 0 to nnz = %lld",
                           (long long)m->nnz);
    for (int32_t s = 0; s < m->strips; ++s) {
        /* Both bounds before the entries are read: a strip may not end past nnz even
         * when a later strip_ptr comes back down to it. */
        uint64_t begin = m->strip_ptr[s], end = m->strip_ptr[s + 1];
        if (end < begin || end > nnz)
            return cmrscl_fail(
                CMRSCL_ERROR_INVALID_MATRIX, "strip_ptr[%d] = %llu is outside %llu..%lld", s + 1,
                (unsigned long long)end, (unsigned long long)begin, (long long)m->nnz);
        for (uint64_t k = begin; k < end; ++k) {
            uint32_t c = m->packed ? m->col_ind[k] >> m->row_bits : m->col_ind[k];
            uint32_t r = m->packed ? m->col_ind[k] & ((1u << m->row_bits) - 1) : m->row_in_strip[k];
            int64_t row = (int64_t)s * m->height + r;
            if (r >= (uint32_t)m->height || row >= m->rows || c >= (uint32_t)m->cols)
                return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                                   "entry %llu: row %lld, column %u outside the %d x %d matrix",
                                   (unsigned long long)k, (long long)row, c, m->rows, m->cols);
        }
    }
    return CMRSCL_OK;
}

cmrscl_status cmrscl_cmrs_to_csr(const cmrscl_cmrs *cmrs, cmrscl_csr *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!out || !cmrs)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "cmrs or out is NULL");
    cmrscl_status st = cmrs_validate(cmrs);
    if (st != CMRSCL_OK)
        return st;
    /* row_bits means something only in the packed layout (validated there). */
    const uint32_t mask = cmrs->packed ? (1u << cmrs->row_bits) - 1 : 0;
    int64_t *row_ptr = calloc((size_t)cmrs->rows + 2, sizeof(int64_t));
    int32_t *col_ind = cmrscl_alloc((size_t)cmrs->nnz, sizeof(int32_t));
    double *values = cmrscl_alloc((size_t)cmrs->nnz, sizeof(double));
    if (!row_ptr || !col_ind || !values) {
        free(row_ptr), free(col_ind), free(values);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for CSR of %lld entries",
                           (long long)cmrs->nnz);
    }
    /* Count entries per row into row_ptr[row + 2], prefix-sum so row_ptr[row + 1] is the
     * row's first slot, then place entries advancing that cursor: the standard stable
     * scatter, which leaves row_ptr[row + 1] at the row's end. */
    for (int pass = 0; pass < 2; ++pass) {
        for (int32_t s = 0; s < cmrs->strips; ++s) {
            for (uint64_t k = cmrs->strip_ptr[s]; k < cmrs->strip_ptr[s + 1]; ++k) {
                uint32_t r = cmrs->packed ? cmrs->col_ind[k] & mask : cmrs->row_in_strip[k];
                int64_t row = (int64_t)s * cmrs->height + r;
                if (pass == 0) {
                    row_ptr[row + 2]++;
                    continue;
                }
                int64_t at = row_ptr[row + 1]++;
                col_ind[at] =
                    (int32_t)(cmrs->packed ? cmrs->col_ind[k] >> cmrs->row_bits : cmrs->col_ind[k]);
                values[at] = cmrs->values[k];
            }
        }
        if (pass == 0)
            for (int32_t i = 0; i < cmrs->rows; ++i)
                row_ptr[i + 2] += row_ptr[i + 1];
    }
    out->rows = cmrs->rows;
    out->cols = cmrs->cols;
    out->nnz = cmrs->nnz;
    out->row_ptr = row_ptr;
    out->col_ind = col_ind;
    out->values = values;
    return CMRSCL_OK;
}
