/* test_holes_layout.c - the host layouts with holes on the awkward matrix catalogue. The MODULO
 * kernel's (host/format/cmrs_modulo.c), for every MODULO and a spread of warps and heights:
 *   - within each step of WARP positions of a strip, no two entries whose positions share
 *     position % MODULO have the same row (the property the kernel's race freedom rests on);
 *   - every CSR entry is stored exactly once, with its own column, row and value; holes carry
 *     the hole column, value 0 and the hole permutation entry;
 *   - within each row the entries keep their order (their CSR entries ascend);
 *   - the stored length stays within the bound the plan sizes indices by;
 *   - dropping the holes gives back a CMRS of the same matrix.
 * The slice kernel's (host/format/cmrs_slice.c, made from the CSR), heights 1, 4, 16 and 64:
 * each strip stores its longest row times the height (what cmrs_slice_stored counts for the
 * plan), entry i of row r at i * height + r and holes elsewhere; every entry once, rows in
 * order, holes dropped the matrix again; stored in float, the values rounded as cmrs_build
 * rounds them. Narrow columns (host/format/cmrs_narrow.c): a slice's steps and a strip's
 * offsets, where they fit, decode to the column words; with jump words, the slice layout's
 * holes before the long steps, the jumps in them, and the words decoding again. */
#include "format/format.h"
#include "io/io.h"
#include "test_matrices.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t row_at(const cmrscl_cmrs *c, uint64_t k)
{
    return c->packed ? c->col_ind[k] & ((1u << c->row_bits) - 1u) : c->row_in_strip[k];
}

static uint32_t col_at(const cmrscl_cmrs *c, uint64_t k)
{
    return c->packed ? c->col_ind[k] >> c->row_bits : c->col_ind[k];
}

/* The step property and the holes of strip s. */
static void check_steps(const cmrs_holed *o, int32_t s, int modulo, int warp, const char *what)
{
    const cmrscl_cmrs *c = &o->cmrs;
    const double *v = o->values;
    const uint64_t *perm = o->perm;
    uint64_t begin = c->strip_ptr[s], end = c->strip_ptr[s + 1];
    for (uint64_t step = begin; step < end; step += (uint64_t)warp)
        for (uint64_t a = step; a < end && a < step + (uint64_t)warp; ++a) {
            if (c->col_ind[a] == CMRS_HOLE) {
                CHECK_MSG(v[a] == 0.0 && perm[a] == UINT64_MAX, "%s: hole %llu not empty", what,
                          (unsigned long long)a);
                continue;
            }
            for (uint64_t b = a + (uint64_t)modulo; b < end && b < step + (uint64_t)warp;
                 b += (uint64_t)modulo)
                CHECK_MSG(c->col_ind[b] == CMRS_HOLE || row_at(c, a) != row_at(c, b),
                          "%s: strip %d, positions %llu and %llu share class and row %u", what, s,
                          (unsigned long long)(a - begin), (unsigned long long)(b - begin),
                          row_at(c, a));
        }
}

/* Holes dropped: a CMRS of the same matrix again (consumes o's values). */
static void check_dropped(const cmrscl_csr *a, cmrs_holed *o, const char *what)
{
    o->cmrs.values = o->values, o->values = NULL;
    cmrs_drop_holes(&o->cmrs);
    cmrscl_csr back;
    CHECK_OK(cmrscl_cmrs_to_csr(&o->cmrs, &back));
    CHECK_MSG(back.nnz == a->nnz && !memcmp(back.col_ind, a->col_ind, 4 * (size_t)a->nnz) &&
                  !memcmp(back.values, a->values, 8 * (size_t)a->nnz),
              "%s: holes dropped, not the matrix", what);
    cmrscl_csr_free(&back);
}

/* Every CSR entry once, in place, rows in order. */
static void check_entries(const cmrscl_csr *a, const cmrs_holed *o, const char *what)
{
    const cmrscl_cmrs *c = &o->cmrs;
    const uint64_t *perm = o->perm;
    char *seen = calloc((size_t)a->nnz + 1, 1);
    int64_t *last = malloc(sizeof(int64_t) * ((size_t)a->rows + 1)); /* last entry per row */
    for (int32_t i = 0; i < a->rows; ++i)
        last[i] = -1;
    int64_t entries = 0;
    for (int32_t s = 0; s < c->strips; ++s)
        for (uint64_t k = c->strip_ptr[s]; k < c->strip_ptr[s + 1]; ++k) {
            if (c->col_ind[k] == CMRS_HOLE)
                continue;
            int64_t e = (int64_t)perm[k], row = (int64_t)s * c->height + row_at(c, k);
            bool ok = e >= 0 && e < a->nnz && !seen[e] && row < a->rows && a->row_ptr[row] <= e &&
                      e < a->row_ptr[row + 1] && (int32_t)col_at(c, k) == a->col_ind[e] &&
                      ((const double *)o->values)[k] == a->values[e] && e > last[row];
            CHECK_MSG(ok, "%s: position %llu holds entry %lld wrongly or out of row order", what,
                      (unsigned long long)k, (long long)e);
            if (ok)
                seen[e] = 1, last[row] = e, ++entries;
        }
    CHECK_MSG(entries == a->nnz, "%s: %lld of %lld entries stored", what, (long long)entries,
              (long long)a->nnz);
    free(seen), free(last);
}

/* A strip's narrow offsets (host/format/cmrs_narrow.c), where they fit: each word is the offset
 * from its strip's first column (the smallest) above the row in as few bits as the height
 * needs, and decodes to the column word; the largest offset is the brute-force one. */
static void check_offsets(const cmrscl_csr *a, const cmrscl_cmrs *c, int height, const char *what)
{
    int64_t largest = 0;
    for (int32_t s = 0; s < c->strips; ++s) {
        int64_t lo = INT64_MAX, hi = -1, r0 = (int64_t)s * height;
        int64_t r1 = r0 + height < a->rows ? r0 + height : a->rows;
        for (int64_t k = a->row_ptr[r0]; k < a->row_ptr[r1]; ++k) {
            lo = a->col_ind[k] < lo ? a->col_ind[k] : lo;
            hi = a->col_ind[k] > hi ? a->col_ind[k] : hi;
        }
        largest = hi >= 0 && hi - lo > largest ? hi - lo : largest;
    }
    CHECK_MSG(cmrs_narrow_largest_offset(a->rows, a->row_ptr, a->col_ind, height) == largest,
              "%s: largest offset %lld, counted %lld", what,
              (long long)cmrs_narrow_largest_offset(a->rows, a->row_ptr, a->col_ind, height),
              (long long)largest);
    const int bits = cmrs_narrow_row_bits(height, c->packed); /* the word's row bits */
    if (largest > (1ll << (16 - bits)) - 2)
        return;
    void *narrow = NULL;
    uint32_t *back = malloc(sizeof(uint32_t) * ((size_t)c->nnz + 1));
    CHECK_OK(cmrs_narrow_encode(c, 0, NARROW_OFFSETS, &narrow));
    if (narrow) {
        cmrs_narrow_decode(narrow, c, 0, NARROW_OFFSETS, back);
        const uint32_t *first = narrow;
        const uint16_t *words = (const uint16_t *)(first + c->strips);
        int64_t wrong = 0;
        for (int32_t s = 0; s < c->strips; ++s)
            for (uint64_t k = c->strip_ptr[s]; k < c->strip_ptr[s + 1]; ++k) {
                uint32_t column = c->col_ind[k] >> c->row_bits,
                         row = c->packed ? c->col_ind[k] & ((1u << c->row_bits) - 1u) : 0;
                wrong += back[k] != c->col_ind[k] ||
                         words[k] != ((column - first[s]) << bits | row) ||
                         words[k] == CMRS_NARROW_HOLE;
            }
        CHECK_MSG(wrong == 0, "%s: %lld narrow offsets decode wrong", what, (long long)wrong);
    }
    free(narrow), free(back);
}

/* The layout of `a` with these parameters, checked. */
static void check_layout(const cmrscl_csr *a, const char *name, int height, unsigned flags,
                         int modulo, int warp)
{
    char what[160];
    snprintf(what, sizeof what, "%s, height %d, %s, modulo %d, warp %d", name, height,
             flags & CMRSCL_CMRS_ORDER_COLUMNS ? "columns" : "rows", modulo, warp);
    void *perm = NULL; /* the column order's permutation, as matrix.c asks for it */
    cmrscl_cmrs again;
    cmrs_values vals = {a->values, CMRSCL_DOUBLE, malloc(8 * ((size_t)a->nnz + CMRS_ENTRY_PAD)),
                        CMRSCL_DOUBLE};
    CHECK_OK(cmrs_build(a->rows, a->cols, a->row_ptr, a->col_ind, height, flags, &vals, 64, &again,
                        &perm));
    check_offsets(a, &again, height, what);
    cmrs_holed o;
    CHECK_OK(cmrs_modulo_layout(&again, vals.dst, sizeof(double), perm, 64, modulo, warp, &o));
    if (o.cmrs.strip_ptr) {
        int64_t bound = a->nnz * (warp / modulo) + (int64_t)again.strips * warp;
        CHECK_MSG(o.cmrs.nnz >= a->nnz && o.cmrs.nnz <= bound, "%s: %lld stored for %lld", what,
                  (long long)o.cmrs.nnz, (long long)a->nnz);
        CHECK_MSG(modulo != warp || o.cmrs.nnz == a->nnz, "%s: holes with MODULO == WARP", what);
        for (int32_t s = 0; s < o.cmrs.strips; ++s)
            check_steps(&o, s, modulo, warp, what);
        check_entries(a, &o, what);
        check_dropped(a, &o, what);
    }
    cmrs_holed_free(&o);
    cmrscl_cmrs_free(&again);
    free(vals.dst), free(perm);
}

/* A slice's narrow columns (host/format/cmrs_narrow.c), where its steps fit, decode to its
 * column words, holes too; the largest step is the brute-force one. */
static void check_narrow(const cmrscl_csr *a, const cmrscl_cmrs *c, int height, const char *what)
{
    int64_t largest = 0;
    for (int32_t s = 0; s < c->strips && largest >= 0; ++s) {
        int64_t first = INT64_MAX, r1 = (int64_t)(s + 1) * height;
        for (int64_t r = (int64_t)s * height; r < r1 && r < a->rows; ++r)
            if (a->row_ptr[r] < a->row_ptr[r + 1] && a->col_ind[a->row_ptr[r]] < first)
                first = a->col_ind[a->row_ptr[r]];
        for (int64_t r = (int64_t)s * height; r < r1 && r < a->rows && largest >= 0; ++r)
            for (int64_t k = a->row_ptr[r], before = first; k < a->row_ptr[r + 1]; ++k) {
                int64_t step = a->col_ind[k] - before;
                largest = step < 0 ? -1 : step > largest ? step : largest;
                before = a->col_ind[k];
            }
    }
    CHECK_MSG(cmrs_narrow_largest_step(a->rows, a->row_ptr, a->col_ind, height) == largest,
              "%s: largest step %lld, counted %lld", what,
              (long long)cmrs_narrow_largest_step(a->rows, a->row_ptr, a->col_ind, height),
              (long long)largest);
    if (largest < 0 || largest > 65534)
        return;
    void *narrow = NULL;
    uint32_t *back = malloc(sizeof(uint32_t) * ((size_t)c->nnz + 1));
    CHECK_OK(cmrs_narrow_encode(c, 0, NARROW_STEPS, &narrow));
    if (narrow) {
        cmrs_narrow_decode(narrow, c, 0, NARROW_STEPS, back);
        const uint16_t *words = (const uint16_t *)((const uint32_t *)narrow + c->strips);
        int64_t wrong = 0;
        for (int64_t k = 0; k < c->nnz; ++k)
            wrong += back[k] != c->col_ind[k] ||
                     (words[k] == CMRS_NARROW_HOLE) != (c->col_ind[k] == CMRS_HOLE);
        CHECK_MSG(wrong == 0, "%s: %lld narrow columns decode wrong", what, (long long)wrong);
    }
    free(narrow), free(back);
}

/* The slice layout of `a` with this height: each strip its longest row times the height,
 * entry i of row r at i * height + r, holes elsewhere (hole column, value 0, hole entry). */
static void check_slices(const cmrscl_csr *a, const char *name, int height, unsigned flags)
{
    char what[160];
    snprintf(what, sizeof what, "%s, slices of height %d%s", name, height,
             flags & CMRSCL_CMRS_UNPACKED ? ", unpacked" : "");
    cmrs_values vals = {a->values, CMRSCL_DOUBLE, NULL, CMRSCL_DOUBLE};
    cmrs_holed o;
    CHECK_OK(cmrs_slice_from_csr(a->rows, a->cols, a->row_ptr, a->col_ind, height, flags, &vals, 0,
                                 64, &o));
    if (o.cmrs.strip_ptr) {
        int64_t counted = cmrs_slice_stored(a->rows, a->row_ptr, NULL, height, 0, NULL);
        CHECK_MSG(o.cmrs.nnz == counted, "%s: %lld stored, counted %lld", what,
                  (long long)o.cmrs.nnz, (long long)counted);
        const uint64_t *perm = o.perm;
        const double *v = o.values;
        bool placed = true;
        for (int32_t s = 0; s < o.cmrs.strips && placed; ++s) {
            int64_t width = 0, r0 = (int64_t)s * height;
            for (int64_t r = r0; r < r0 + height && r < a->rows; ++r)
                if (a->row_ptr[r + 1] - a->row_ptr[r] > width)
                    width = a->row_ptr[r + 1] - a->row_ptr[r];
            placed = o.cmrs.strip_ptr[s + 1] - o.cmrs.strip_ptr[s] == (uint64_t)(width * height);
            for (int64_t i = 0; i < width && placed; ++i)
                for (int64_t r = 0; r < height && placed; ++r) {
                    uint64_t k = o.cmrs.strip_ptr[s] + (uint64_t)(i * height + r);
                    int64_t row = r0 + r;
                    bool entry = row < a->rows && i < a->row_ptr[row + 1] - a->row_ptr[row];
                    placed = entry ? perm[k] == (uint64_t)(a->row_ptr[row] + i) &&
                                         row_at(&o.cmrs, k) == (uint32_t)r
                                   : o.cmrs.col_ind[k] == CMRS_HOLE && v[k] == 0.0 &&
                                         perm[k] == UINT64_MAX;
                    CHECK_MSG(placed, "%s: strip %d, row %lld, entry %lld misplaced", what, s,
                              (long long)r, (long long)i);
                }
        }
        check_narrow(a, &o.cmrs, height, what);
        check_entries(a, &o, what);
        check_dropped(a, &o, what);
    }
    cmrs_holed_free(&o);
}

/* Jump words (host/format/cmrs_narrow.c): the slice layout with a hole before each step
 * longer than `above` - each row's words its entries in order, a hole before exactly the
 * long steps (counted by brute force), holes after - and its narrow words with jumps: a
 * jump (top bit) in each of those holes, the entries' words with the top bit clear, and
 * all of it decoding to the layout's column words. A small `above` gives the catalogue's
 * matrices many jumps (each jump takes what it can of its step, maybe nothing: the entry's
 * word keeps the rest). */
static int64_t check_jumps(const cmrscl_csr *a, const char *name, int height, int64_t above)
{
    char what[160];
    snprintf(what, sizeof what, "%s, slices of height %d, jumps above %lld", name, height,
             (long long)above);
    cmrs_values vals = {a->values, CMRSCL_DOUBLE, NULL, CMRSCL_DOUBLE};
    cmrs_holed o;
    int64_t jumps = -1, expected = 0;
    CHECK_OK(cmrs_slice_from_csr(a->rows, a->cols, a->row_ptr, a->col_ind, height, 0, &vals, above,
                                 64, &o));
    int64_t counted = cmrs_slice_stored(a->rows, a->row_ptr, a->col_ind, height, above, &jumps);
    bool placed = o.cmrs.strip_ptr && o.cmrs.nnz == counted;
    CHECK_MSG(placed, "%s: %lld stored, counted %lld", what, (long long)o.cmrs.nnz,
              (long long)counted);
    for (int32_t s = 0; s < o.cmrs.strips && placed; ++s) {
        int64_t r0 = (int64_t)s * height, first = INT64_MAX;
        for (int64_t r = r0; r < r0 + height && r < a->rows; ++r)
            if (a->row_ptr[r] < a->row_ptr[r + 1] && a->col_ind[a->row_ptr[r]] < first)
                first = a->col_ind[a->row_ptr[r]];
        uint64_t len = (o.cmrs.strip_ptr[s + 1] - o.cmrs.strip_ptr[s]) / (uint64_t)height;
        for (int64_t r = r0; r < r0 + height && placed; ++r) {
            uint64_t i = 0;
            int64_t before = first;
            for (int64_t e = r < a->rows ? a->row_ptr[r] : 0; r < a->rows && e < a->row_ptr[r + 1];
                 ++e) {
                uint64_t at = o.cmrs.strip_ptr[s] + i * (uint64_t)height + (uint64_t)(r - r0);
                if (a->col_ind[e] - before > above) { /* the jump's hole first */
                    placed = o.cmrs.col_ind[at] == CMRS_HOLE;
                    ++i, ++expected, at += (uint64_t)height;
                }
                placed = placed && i < len && ((const uint64_t *)o.perm)[at] == (uint64_t)e;
                before = a->col_ind[e], ++i;
            }
            for (; i < len && placed; ++i)
                placed = o.cmrs.col_ind[o.cmrs.strip_ptr[s] + i * (uint64_t)height +
                                        (uint64_t)(r - r0)] == CMRS_HOLE;
            CHECK_MSG(placed, "%s: strip %d, row %lld misplaced", what, s, (long long)(r - r0));
        }
    }
    CHECK_MSG(jumps == expected, "%s: %lld jumps counted, %lld long steps", what, (long long)jumps,
              (long long)expected);
    void *narrow = NULL;
    uint32_t *back = malloc(sizeof(uint32_t) * ((size_t)o.cmrs.nnz + 1));
    if (placed)
        CHECK_OK(cmrs_narrow_encode(&o.cmrs, 0, NARROW_STEPS_JUMPS, &narrow));
    if (narrow) {
        cmrs_narrow_decode(narrow, &o.cmrs, 0, NARROW_STEPS_JUMPS, back);
        const uint16_t *words = (const uint16_t *)((const uint32_t *)narrow + o.cmrs.strips);
        int64_t wrong = 0, jump_words = 0;
        for (int64_t k = 0; k < o.cmrs.nnz; ++k) {
            const bool hole = o.cmrs.col_ind[k] == CMRS_HOLE;
            const bool jump = words[k] != CMRS_NARROW_HOLE && (words[k] & CMRS_NARROW_JUMP);
            jump_words += jump;
            wrong += back[k] != o.cmrs.col_ind[k] || (!hole && (words[k] & CMRS_NARROW_JUMP));
        }
        CHECK_MSG(wrong == 0 && jump_words == expected,
                  "%s: %lld narrow words decode wrong, %lld jump words for %lld long steps", what,
                  (long long)wrong, (long long)jump_words, (long long)expected);
    }
    check_entries(a, &o, what);
    check_dropped(a, &o, what);
    free(narrow), free(back);
    cmrs_holed_free(&o);
    return expected;
}

/* The slices of a matrix stored in float: each entry's value the CSR's double rounded to float
 * (as cmrs_build converts it), each hole's 0. */
static void check_slice_floats(const cmrscl_csr *a, const char *name, int height)
{
    cmrs_values vals = {a->values, CMRSCL_DOUBLE, NULL, CMRSCL_FLOAT};
    cmrs_holed o;
    CHECK_OK(
        cmrs_slice_from_csr(a->rows, a->cols, a->row_ptr, a->col_ind, height, 0, &vals, 0, 64, &o));
    const float *v = o.values;
    const uint64_t *perm = o.perm;
    int64_t wrong = 0;
    for (int64_t k = 0; o.values && k < o.cmrs.nnz; ++k)
        wrong += perm[k] == UINT64_MAX ? v[k] != 0.0f : v[k] != (float)a->values[perm[k]];
    CHECK_MSG(o.values && wrong == 0, "%s, slices of height %d in float: %lld values wrong", name,
              height, (long long)wrong);
    cmrs_holed_free(&o);
}

/* A matrix without entries still gets its values' padding, zeros (the device reads past the
 * last position); column-ordered strips are refused, not laid out wrong. */
static void check_slice_edges(void)
{
    const int64_t row_ptr[6] = {0, 0, 0, 0, 0, 0};
    cmrs_values vals = {NULL, CMRSCL_DOUBLE, NULL, CMRSCL_DOUBLE};
    cmrs_holed o;
    CHECK_OK(cmrs_slice_from_csr(5, 7, row_ptr, NULL, 4, 0, &vals, 0, 0, &o));
    const double *v = o.values;
    bool zeros = v != NULL && o.cmrs.nnz == 0;
    for (int k = 0; zeros && k < CMRS_ENTRY_PAD; ++k)
        zeros = v[k] == 0.0 && o.cmrs.col_ind[k] == 0;
    CHECK_MSG(zeros, "slices of an empty matrix: the padding of the values is not zeros");
    cmrs_holed_free(&o);
    CHECK(cmrs_slice_from_csr(5, 7, row_ptr, NULL, 4, CMRSCL_CMRS_ORDER_COLUMNS, &vals, 0, 0, &o) ==
          CMRSCL_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    check_slice_edges();
    static const int heights[] = {1, 3, 16, 33};
    int layouts = 0;
    int64_t jump_words = 0; /* a check of jumps that met none would check nothing */
    for (int i = 0; i < test_matrix_count(); ++i) {
        cmrscl_csr a;
        const char *name = test_matrix_build(i, &a);
        for (int h = 0; h < 4; ++h)
            for (int modulo = 2; modulo <= 32; modulo *= 2)
                for (int warp = modulo < 8 ? 8 : modulo; warp <= 32; warp *= 4, ++layouts)
                    check_layout(&a, name, heights[h],
                                 (unsigned)((h + modulo) % 2 ? CMRSCL_CMRS_ORDER_COLUMNS : 0) |
                                     (h == 3 ? CMRSCL_CMRS_UNPACKED : 0),
                                 modulo, warp);
        for (int h = 1; h <= 64; h *= 4, ++layouts) /* 1, 4, 16, 64 */
            check_slices(&a, name, h, h == 4 ? CMRSCL_CMRS_UNPACKED : 0);
        for (int h = 1; h <= 32; h *= 32, ++layouts) /* 1, 32 */
            jump_words += check_jumps(&a, name, h, h == 1 ? 3 : 40);
        check_slice_floats(&a, name, 16), ++layouts;
        cmrscl_csr_free(&a);
    }
    CHECK_MSG(jump_words > 1000, "only %lld jump words over the catalogue", (long long)jump_words);
    printf("%d layouts checked, %lld jump words among them\n", layouts, (long long)jump_words);
    return test_finish("holes_layout");
}
