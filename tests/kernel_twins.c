/* kernel_twins.c - the checks of kernel_twins.h. */
#include "kernel_twins.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long products_checked = 0;

/* Runs one product on the device and checks it against the CPU double reference; the same
 * product of wide (the matrix with 64-bit indices; may be NULL) must match it bit for bit. */
void check_product(cmrscl_matrix m, cmrscl_matrix wide, const cmrscl_csr *ref_a,
                   cmrscl_precision prec, double alpha, double beta, const char *what)
{
    int32_t rows = ref_a->rows, cols = ref_a->cols;
    size_t vs = cmrscl_precision_size(prec);
    double *x = malloc(sizeof(double) * ((size_t)cols + 1));
    double *y0 = malloc(sizeof(double) * ((size_t)rows + 1));
    double *y = malloc(sizeof(double) * ((size_t)rows + 1));
    void *xd = malloc(vs * ((size_t)cols + 1)), *yd = malloc(vs * ((size_t)rows + 1));
    for (int32_t j = 0; j < cols; ++j) {
        double v = test_uniform(-1, 1);
        x[j] = prec == CMRSCL_FLOAT ? (double)(float)v : v;
        if (prec == CMRSCL_FLOAT)
            ((float *)xd)[j] = (float)v;
        else
            ((double *)xd)[j] = v;
    }
    for (int32_t i = 0; i < rows; ++i) {
        /* beta == 0: poison y so an unwritten row, or a row read despite beta == 0, shows. */
        double v = beta == 0.0 ? NAN : test_uniform(-1, 1);
        y0[i] = prec == CMRSCL_FLOAT ? (double)(float)v : v;
        if (prec == CMRSCL_FLOAT)
            ((float *)yd)[i] = (float)v;
        else
            ((double *)yd)[i] = v;
    }
    void *y_wide = malloc(vs * ((size_t)rows + 1)), *y_again = malloc(vs * ((size_t)rows + 1));
    memcpy(y_wide, yd, vs * (size_t)rows);
    memcpy(y_again, yd, vs * (size_t)rows);
    CHECK_OK(cmrscl_spmv_host(m, alpha, xd, beta, yd));
    if (wide) {
        CHECK_OK(cmrscl_spmv_host(wide, alpha, xd, beta, y_wide));
        CHECK_MSG(!memcmp(yd, y_wide, vs * (size_t)rows),
                  "%s alpha %g beta %g: the twin (64-bit indices, the in-group combine, plain "
                  "values, or a slice's row a work-item) gives another y",
                  what, alpha, beta);
    }
    /* Run after run the same y, bit for bit (the split path included). */
    CHECK_OK(cmrscl_spmv_host(m, alpha, xd, beta, y_again));
    CHECK_MSG(!memcmp(yd, y_again, vs * (size_t)rows),
              "%s alpha %g beta %g: another y when run again", what, alpha, beta);
    free(y_wide), free(y_again);
    for (int32_t i = 0; i < rows; ++i)
        y[i] = prec == CMRSCL_FLOAT ? (double)((float *)yd)[i] : ((double *)yd)[i];
    double ratio = INFINITY;
    CHECK_OK(cmrscl_csr_spmv_check(ref_a, alpha, x, beta, y0, y,
                                   prec == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, NULL, &ratio));
    CHECK_MSG(ratio <= 1.0, "%s alpha %g beta %g: error %.3g x the rounding bound", what, alpha,
              beta, ratio);
    ++products_checked;
    free(x), free(y0), free(y), free(xd), free(yd);
}

void check_products(cmrscl_matrix m, cmrscl_matrix wide, const cmrscl_csr *ref_a,
                    cmrscl_precision prec, const char *what)
{
    for (int g = 0; g < TEST_ALPHA_BETA_COUNT; ++g)
        check_product(m, wide, ref_a, prec, test_alpha_beta[g][0], test_alpha_beta[g][1], what);
}

/* Matrix a with its values coded as `codec` (the plan's choice: `expect` unless the plan
 * refuses it, MODULO) against its twin with plain values: the same y bit for bit, the plain
 * arrays read back, and after a values update (new values, in CSR order) stored plain and
 * still right. */
static void check_codec(cmrscl_context ctx, const variant *v, const cmrscl_options *opt,
                        const cmrscl_csr *a, cmrscl_values expect, bool read_back, const char *what)
{
    cmrscl_options coded = *opt, plain = *opt;
    plain.values = CMRSCL_VALUES_PLAIN;
    cmrscl_matrix m = NULL, twin = NULL;
    /* narrow columns asked for may not fit beside the dictionary's bits: then 32-bit */
    if (coded.column_bits == 16 &&
        cmrscl_matrix_create_from_csr(ctx, v->precision, a, &coded, &m) != CMRSCL_OK)
        coded.column_bits = 32;
    if (!m)
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, v->precision, a, &coded, &m));
    cmrscl_params columns = CMRSCL_PARAMS_INIT;
    /* a work-item walking each strip of the segment family (WARP 1) takes no index by itself
     * (plan_values.c, index_pays): the index asked for, so that its decode is checked there */
    bool coded_index = expect == CMRSCL_VALUES_DICT || expect == CMRSCL_VALUES_DIAGONAL;
    if (m && cmrscl_matrix_params(m, &columns) == CMRSCL_OK && coded_index &&
        columns.kernel == CMRSCL_KERNEL_SEGMENT && columns.warp == 1 && a->nnz > 0) {
        cmrscl_matrix_free(m), m = NULL;
        coded.values = expect;
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, v->precision, a, &coded, &m));
    }
    if (m && cmrscl_matrix_params(m, &columns) == CMRSCL_OK &&
        (columns.kernel == CMRSCL_KERNEL_SLICE || columns.kernel == CMRSCL_KERNEL_STRIP))
        plain.column_bits = columns.column_bits; /* the same column words: only values differ */
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, v->precision, a, &plain, &twin));
    if (m && twin) {
        cmrscl_params p = CMRSCL_PARAMS_INIT, q = CMRSCL_PARAMS_INIT;
        CHECK_OK(cmrscl_matrix_params(m, &p));
        CHECK_OK(cmrscl_matrix_params(twin, &q));
        if (p.kernel == CMRSCL_KERNEL_MODULO || a->nnz == 0)
            expect = CMRSCL_VALUES_PLAIN;
        size_t vs = cmrscl_precision_size(v->precision), n = (size_t)a->nnz,
               stored = (size_t)p.stored_entries; /* with the holes of a slice */
        size_t slots = (size_t)1 << p.dict_bits;
        uint64_t saved = expect == CMRSCL_VALUES_DICT ? vs * (stored + CMRS_ENTRY_PAD) - vs * slots
                         : expect == CMRSCL_VALUES_DIAGONAL
                             ? vs * (stored + CMRS_ENTRY_PAD) -
                                   vs * (slots + (size_t)(a->rows < a->cols ? a->rows : a->cols))
                         : expect == CMRSCL_VALUES_FLOAT ? 4 * (stored + CMRS_ENTRY_PAD)
                                                         : 0;
        CHECK_MSG(p.values == expect && q.values == CMRSCL_VALUES_PLAIN &&
                      p.device_bytes + saved == q.device_bytes &&
                      p.bytes_per_entry_matrix <= q.bytes_per_entry_matrix,
                  "%s: values %d (expected %d), %llu device bytes against plain %llu (%s)", what,
                  (int)p.values, (int)expect, (unsigned long long)p.device_bytes,
                  (unsigned long long)q.device_bytes, p.plan_reason);
        cmrscl_csr ref = test_csr_rounded(a, v->precision);
        check_products(m, twin, &ref, v->precision, what);
        if (read_back && plan_has_holes(p.kernel))
            check_holed_arrays(m, &ref, what);
        else if (read_back)
            check_device_arrays(m, &ref, what);
        cmrscl_csr_free(&ref);
        /* an update stores the values plain: other values, one per entry (a matrix without
         * entries has nothing to update) */
        if (n == 0) {
            cmrscl_matrix_free(m);
            cmrscl_matrix_free(twin);
            return;
        }
        double *other = malloc(sizeof(double) * (n + 1));
        for (size_t k = 0; k < n; ++k)
            other[k] = test_uniform(-1, 1);
        CHECK_OK(cmrscl_matrix_update_values(m, other, CMRSCL_DOUBLE));
        CHECK_OK(cmrscl_matrix_params(m, &p));
        CHECK_MSG(p.values == CMRSCL_VALUES_PLAIN &&
                      p.bytes_per_entry_matrix == q.bytes_per_entry_matrix &&
                      test_contains(p.build_options, "-DVALUES=1 -DDICT_BITS=0"),
                  "%s: after an update: values %d, %.3f bytes per entry against plain %.3f", what,
                  (int)p.values, p.bytes_per_entry_matrix, q.bytes_per_entry_matrix);
        cmrscl_csr updated = *a;
        updated.values = other;
        ref = test_csr_rounded(&updated, v->precision);
        check_product(m, NULL, &ref, v->precision, 1.0, 0.0, what);
        cmrscl_csr_free(&ref);
        free(other);
    }
    cmrscl_matrix_free(m);
    cmrscl_matrix_free(twin);
}

/* The dictionary's size in each test case: together they decode 0, 1, 2, 3 and 4 index bits,
 * in packed and unpacked column words, in every family (one size a process: each is a
 * program to compile). */
static int dictionary_size(const char *test_case)
{
    static const struct {
        const char *name;
        int size;
    } sizes[] = {{"strip_packed", 3},     {"strip_unpacked", 16},
                 {"strip_narrow", 2},     {"segment_packed", 1},
                 {"segment_unpacked", 5}, {"split_strip", 16},
                 {"split_segment", 2},    {"slice", 4}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        if (!strcmp(test_case, sizes[i].name))
            return sizes[i].size;
    return 3;
}

/* The distinct values of v[0, n), counted up to CMRSCL_MAX_DICT + 1. */
static int distinct_values(const double *v, int64_t n)
{
    int distinct = 0;
    for (int64_t k = 0; k < n && distinct <= CMRSCL_MAX_DICT; ++k) {
        bool seen = false;
        for (int64_t j = 0; j < k && !seen; ++j)
            seen = v[j] == v[k];
        distinct += !seen;
    }
    return distinct;
}

/* What the plan takes for float-exact values whose off-diagonal ones are few (at most
 * CMRSCL_MAX_DICT - 1) and whose diagonal ones are all distinct: DICT where they are few in
 * all; DIAGONAL where no row has two entries on its diagonal and the dictionary's slots and
 * the diagonal take fewer bytes than FLOAT's (double) or PLAIN's values; else FLOAT (double)
 * or PLAIN. */
static cmrscl_values diagonal_expected(const cmrscl_csr *a, cmrscl_precision precision)
{
    bool twice = false;
    double *off = malloc(sizeof(double) * ((size_t)a->nnz + 1));
    int64_t n_off = 0;
    for (int32_t r = 0; r < a->rows; ++r) {
        int here = 0;
        for (int64_t k = a->row_ptr[r]; k < a->row_ptr[r + 1]; ++k)
            if (a->col_ind[k] == r)
                ++here;
            else
                off[n_off++] = a->values[k];
        twice = twice || here > 1;
    }
    int off_distinct = distinct_values(off, n_off), bits = 0;
    free(off);
    while ((1 << bits) < off_distinct + 1)
        ++bits;
    double vs = (double)cmrscl_precision_size(precision);
    double diagonal = (double)(a->rows < a->cols ? a->rows : a->cols);
    bool smaller = vs * ((double)(1 << bits) + diagonal) <
                   (precision == CMRSCL_DOUBLE ? 4.0 : vs) * (double)a->nnz;
    if (distinct_values(a->values, a->nnz) <= CMRSCL_MAX_DICT)
        return CMRSCL_VALUES_DICT;
    if (!twice && smaller && off_distinct < CMRSCL_MAX_DICT)
        return CMRSCL_VALUES_DIAGONAL;
    return precision == CMRSCL_DOUBLE ? CMRSCL_VALUES_FLOAT : CMRSCL_VALUES_PLAIN;
}

/* Matrix a's values as DICT, DIAGONAL and (double) FLOAT codecs take them, each against plain
 * twins. */
void check_codecs(cmrscl_context ctx, const variant *v, const cmrscl_options *opt,
                  const cmrscl_csr *a, bool read_back, const char *what)
{
    int size = dictionary_size(v->name);
    cmrscl_csr c = *a;
    double *values = malloc(sizeof(double) * ((size_t)a->nnz + 1));
    c.values = values;
    char label[240];
    for (int64_t k = 0; k < a->nnz; ++k) /* `size` values, exact in float */
        values[k] = 0.75 * (double)(k % size) - 2.5;
    snprintf(label, sizeof label, "%s, %d dictionary values", what, size);
    check_codec(ctx, v, opt, &c, CMRSCL_VALUES_DICT, read_back, label);
    /* the same off the diagonal (one fewer at most), each row's diagonal its own value */
    int off = size < CMRSCL_MAX_DICT ? size : CMRSCL_MAX_DICT - 1;
    for (int32_t r = 0; r < a->rows; ++r)
        for (int64_t k = a->row_ptr[r]; k < a->row_ptr[r + 1]; ++k)
            values[k] =
                a->col_ind[k] == r ? 3.0 + 0.25 * (double)r : 0.75 * (double)(k % off) - 2.5;
    snprintf(label, sizeof label, "%s, the diagonal apart and %d values off it", what, off);
    check_codec(ctx, v, opt, &c, diagonal_expected(&c, v->precision), read_back, label);
    if (v->precision == CMRSCL_DOUBLE) {
        for (int64_t k = 0; k < a->nnz; ++k)
            values[k] = (double)(float)a->values[k];
        /* a dictionary would take fewer; and random values off the diagonal are many */
        snprintf(label, sizeof label, "%s, float values", what);
        check_codec(ctx, v, opt, &c,
                    distinct_values(values, a->nnz) > CMRSCL_MAX_DICT ? CMRSCL_VALUES_FLOAT
                                                                      : CMRSCL_VALUES_DICT,
                    read_back, label);
    }
    free(values);
}

/* Implied columns: m and its twin of 32-bit columns read back the same arrays, and again
 * after the same values update (whose permutation has no column words to read here). */
static void check_implied_update(cmrscl_matrix m, cmrscl_matrix wide, const variant *v,
                                 const cmrscl_csr *a, const char *what)
{
    check_same_cmrs(wide, m, what);
    cmrscl_csr b = *a;
    double *values = malloc(sizeof(double) * ((size_t)a->nnz + 1));
    for (int64_t k = 0; k < a->nnz; ++k)
        values[k] = 2.0 * a->values[k] - 1.0;
    b.values = values;
    CHECK_OK(cmrscl_matrix_update_values(m, values, CMRSCL_DOUBLE));
    CHECK_OK(cmrscl_matrix_update_values(wide, values, CMRSCL_DOUBLE));
    cmrscl_csr ref_b = test_csr_rounded(&b, v->precision);
    char label[240];
    snprintf(label, sizeof label, "%s, values updated", what);
    check_product(m, wide, &ref_b, v->precision, -1.5, 0.5, label);
    check_same_cmrs(wide, m, label);
    cmrscl_csr_free(&ref_b);
    free(values);
}

/* Slices and strips store narrow columns where they fit (host/format/cmrs_narrow.c): matrix m,
 * made with automatic column bits (slices) or those test_kernel chose (strips: implied or 16
 * where they fit and save bytes), against its twin of 32-bit columns - the same y bit for bit,
 * the device bytes the narrow words save, and (implied) the arrays read back and a values
 * update - or, where m kept 32 bits, the reason says why. Returns whether m is narrow. */
bool check_narrow(cmrscl_context ctx, const variant *v, const cmrscl_options *opt,
                  const cmrscl_csr *a, const cmrscl_csr *ref_a, cmrscl_matrix m, const char *what)
{
    cmrscl_params p = CMRSCL_PARAMS_INIT, q = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_params(m, &p));
    if (p.column_bits == 32) {
        CHECK_MSG(test_contains(p.plan_reason, "columns 32-bit: "), "%s: 32-bit columns (%s)", what,
                  p.plan_reason);
        return false;
    }
    cmrscl_options o = *opt;
    o.values = CMRSCL_VALUES_PLAIN, o.column_bits = 32;
    cmrscl_matrix wide = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, v->precision, a, &o, &wide));
    if (!wide)
        return true;
    CHECK_OK(cmrscl_matrix_params(wide, &q));
    bool implied = p.column_bits == 0;
    size_t stored = (size_t)p.stored_entries,
           columns = implied ? cmrs_implied_bytes(p.strips)
                             : cmrs_narrow_bytes(p.strips, p.stored_entries);
    CHECK_MSG(
        q.column_bits == 32 &&
            test_contains(p.build_options, implied ? "-DCOLUMN_BITS=0" : "-DCOLUMN_BITS=16") &&
            (!implied || (p.height == 1 && test_contains(p.plan_reason, "columns implied"))) &&
            p.device_bytes - columns == q.device_bytes - 4 * (stored + CMRS_ENTRY_PAD) &&
            p.bytes_per_entry_matrix <= q.bytes_per_entry_matrix,
        "%s: %s columns: %llu device bytes against %llu (%s)", what, implied ? "implied" : "narrow",
        (unsigned long long)p.device_bytes, (unsigned long long)q.device_bytes, p.build_options);
    check_products(m, wide, ref_a, v->precision, what);
    if (implied)
        check_implied_update(m, wide, v, a, what);
    cmrscl_matrix_free(wide);
    return true;
}
