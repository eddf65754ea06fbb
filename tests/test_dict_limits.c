/* test_dict_limits.c - the values' dictionary (host/format/values_codec.c, the index in the
 * column word) at its limits, on the device chosen by CMRSCL_DEVICE: the plan's coding asserted
 * (values, index bits, size), and the product and the transposed product against the CPU
 * double reference (test_op_ratio):
 *   sizes  1, 2, 3, 4, 5, 8, 9, 15, 16 and 17 distinct values - each width of the index
 *          (0 to 4 bits) at its largest size and one more, the largest dictionary
 *          (CMRSCL_MAX_DICT) and one more - chosen, asked for (17: refused, naming the limit)
 *          and plain; the first entry an explicit 0.0, the only one (the census once dropped a
 *          leading 0.0: its index then named another value, y off by about half);
 *   zeros  explicit 0.0 and -0.0 (distinct values to the dictionary: their bits differ) first,
 *          last, as the only entry of a row, as every value of the matrix, as a 1 x 1 matrix,
 *          and both signs in one matrix; dictionary and plain, on the automatic plan, strips of
 *          4 and slices of 8.
 *   diagonal  the diagonal apart (CMRSCL_VALUES_DIAGONAL): 1, 2, 3, 4, 7, 8 and 15 values off
 *          the diagonal (each index width with the diagonal's index its all-ones, and one more)
 *          and a distinct one on it a row, chosen, on a tall matrix too
 *          (its diagonal min(rows, cols) long); 16 off it, or a row with two entries on its
 *          diagonal, not chosen and refused when asked for, with the reason; a diagonal
 *          matrix - no index bits - not chosen (its array would outweigh the values) but taken
 *          when asked for; implied columns asked for with AUTO values: no dictionary, and
 *          DIAGONAL asked for beside them refused; a stencil's few values: DICT, DIAGONAL
 *          refused.
 * x never 0, so a zero coded as another value shows; odd sizes (13 x 11, 7 x 5).
 * Usage: test_dict_limits float|double */
#include "exec/exec.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

/* Distinct values in p, by their bits (as the dictionary tells them apart). */
static int distinct_values(const cmrscl_csr *a, cmrscl_precision p)
{
    int distinct = 0;
    for (int64_t k = 0; k < a->nnz; ++k) {
        bool seen = false;
        for (int64_t q = 0; q < k && !seen; ++q)
            if (p == CMRSCL_FLOAT) {
                float x = (float)a->values[k], y = (float)a->values[q];
                seen = memcmp(&x, &y, sizeof x) == 0;
            } else {
                seen = memcmp(&a->values[k], &a->values[q], sizeof(double)) == 0;
            }
        distinct += !seen;
    }
    return distinct;
}

static int index_bits(int distinct)
{
    int bits = 0;
    while ((1 << bits) < distinct)
        ++bits;
    return bits;
}

/* m's plan stores the values as `want` (a dictionary of `distinct`), and both products are
 * right. */
static void check_products(cmrscl_matrix m, const cmrscl_csr *ref, cmrscl_precision prec,
                           cmrscl_values want, int distinct, const cmrscl_options *o,
                           const char *what)
{
    cmrscl_params p = CMRSCL_PARAMS_INIT, pt = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_params(m, &p));
    bool dict = want == CMRSCL_VALUES_DICT;
    CHECK_MSG(p.values == want && p.dict_size == (dict ? distinct : 0) &&
                  p.dict_bits == (dict ? index_bits(distinct) : 0),
              "%s: values %d, a dictionary of %d in %d bits, expected %d, %d values (%s)", what,
              (int)p.values, p.dict_size, p.dict_bits, (int)want, distinct, p.plan_reason);
    double ratio = test_op_ratio(m, CMRSCL_NON_TRANSPOSE, ref, prec);
    CHECK_MSG(ratio <= 1.0, "%s: A x off by %g of the rounding bound (%s)", what, ratio,
              p.plan_reason);
    /* A^T, planned by itself, with the same values option: the same values */
    cmrscl_options ot = {.values = o->values};
    CHECK_OK(cmrscl_matrix_prepare_transpose(m, &ot, &pt));
    CHECK_MSG(pt.values == want && pt.dict_size == p.dict_size,
              "%s: A^T's values %d, a dictionary of %d, expected %d (%s)", what, (int)pt.values,
              pt.dict_size, (int)want, pt.plan_reason);
    ratio = test_op_ratio(m, CMRSCL_TRANSPOSE, ref, prec);
    CHECK_MSG(ratio <= 1.0, "%s: A^T x off by %g of the rounding bound (%s)", what, ratio,
              pt.plan_reason);
}

/* 13 x 11, entries where (r + c) % 3 != 1 (row 0 starts at column 0): the first an explicit
 * 0.0, the others cycling through n - 1 distinct nonzero values exact in float; n == 1:
 * every value 0.0. */
static void sized_matrix(int n, cmrscl_csr *out)
{
    int32_t ri[143], ci[143];
    double v[143];
    int count = 0;
    for (int32_t r = 0; r < 13; ++r)
        for (int32_t c = 0; c < 11; ++c)
            if ((r + c) % 3 != 1) {
                int i = count ? 1 + (count - 1) % (n > 1 ? n - 1 : 1) : 0;
                ri[count] = r, ci[count] = c;
                v[count++] = n == 1 || i == 0 ? 0.0 : (i % 2 ? -1 : 1) * (0.5 + 0.25 * i);
            }
    CHECK_OK(cmrscl_csr_from_coo(13, 11, count, ri, ci, v, out));
}

static void test_sizes(cmrscl_context ctx, cmrscl_precision prec)
{
    static const int sizes[] = {1, 2, 3, 4, 5, 8, 9, 15, CMRSCL_MAX_DICT, CMRSCL_MAX_DICT + 1};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
        cmrscl_csr a;
        sized_matrix(sizes[s], &a);
        CHECK_MSG(a.values && a.values[0] == 0.0 && distinct_values(&a, prec) == sizes[s],
                  "%d values: the matrix has %d", sizes[s], distinct_values(&a, prec));
        cmrscl_csr ref = test_csr_rounded(&a, prec);
        bool fits = sizes[s] <= CMRSCL_MAX_DICT;
        /* the values are floats: too many for a dictionary, doubles take FLOAT */
        cmrscl_values chosen = fits                    ? CMRSCL_VALUES_DICT
                               : prec == CMRSCL_DOUBLE ? CMRSCL_VALUES_FLOAT
                                                       : CMRSCL_VALUES_PLAIN;
        static const cmrscl_values asked[3] = {CMRSCL_VALUES_AUTO, CMRSCL_VALUES_DICT,
                                               CMRSCL_VALUES_PLAIN};
        for (int k = 0; k < 3; ++k) {
            cmrscl_options o = {.values = asked[k]};
            cmrscl_values want = k == 0 ? chosen : asked[k];
            char what[96];
            snprintf(what, sizeof what, "%d distinct values, %s", sizes[s],
                     k == 0   ? "chosen"
                     : k == 1 ? "a dictionary asked for"
                              : "plain");
            cmrscl_matrix m = NULL;
            if (k == 1 && !fits) {
                CHECK_STATUS(cmrscl_matrix_create_from_csr(ctx, prec, &a, &o, &m),
                             CMRSCL_ERROR_INVALID_ARGUMENT);
                CHECK_MSG(!m && test_contains(cmrscl_last_error(), "at most 16 distinct values"),
                          "%s: '%s'", what, cmrscl_last_error());
                continue;
            }
            CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, &o, &m));
            if (m)
                check_products(m, &ref, prec, want, sizes[s], &o, what);
            cmrscl_matrix_free(m);
        }
        cmrscl_csr_free(&ref), cmrscl_csr_free(&a);
    }
}

enum { FIRST, LAST, ROW, ALL, ONE, BOTH, PLACES };
static const char *const place_names[PLACES] = {"first",       "last",  "a row's only entry",
                                                "every value", "1 x 1", "0.0 first, -0.0 last"};

/* 7 x 5: row r's columns c with (r + c) even, but row 3's only entry at column 2; values
 * cycling through 1.5, -0.75, 2.0, and `zero` where `place` says. */
static void zero_matrix(int place, double zero, cmrscl_csr *out)
{
    static const double others[3] = {1.5, -0.75, 2.0};
    int32_t ri[35], ci[35];
    double v[35];
    int n = 0;
    for (int32_t r = 0; r < (place == ONE ? 1 : 7); ++r)
        for (int32_t c = 0; c < (place == ONE ? 1 : 5); ++c)
            if (place == ONE || (r == 3 ? c == 2 : (r + c) % 2 == 0)) {
                ri[n] = r, ci[n] = c;
                bool z = place == ALL || place == ONE || (place == ROW && r == 3) ||
                         ((place == FIRST || place == BOTH) && n == 0);
                v[n] = z ? (place == BOTH ? 0.0 : zero) : others[n % 3];
                n++;
            }
    if (place == LAST || place == BOTH)
        v[n - 1] = place == BOTH ? -0.0 : zero;
    int32_t rows = place == ONE ? 1 : 7, cols = place == ONE ? 1 : 5;
    CHECK_OK(cmrscl_csr_from_coo(rows, cols, n, ri, ci, v, out));
    int kept = 0, zeros = place == ALL || place == ONE ? n : place == BOTH ? 2 : 1;
    for (int64_t k = 0; k < out->nnz; ++k) /* in order already: the zeros kept, signs too */
        kept += out->values[k] == 0.0 && signbit(out->values[k]) == signbit(v[k]);
    CHECK_MSG(out->nnz == n && kept == zeros, "%s: the CSR lost a zero or its sign",
              place_names[place]);
}

static void test_zeros(cmrscl_context ctx, cmrscl_precision prec)
{
    static const struct {
        cmrscl_kernel kernel;
        int height;
        const char *name;
    } plans[] = {{0, 0, "automatic"},
                 {CMRSCL_KERNEL_STRIP, 4, "strips of 4"},
                 {CMRSCL_KERNEL_SLICE, 8, "slices of 8"}};
    for (int place = 0; place < PLACES; ++place)
        for (int sign = 0; sign < (place == BOTH ? 1 : 2); ++sign) {
            cmrscl_csr a;
            zero_matrix(place, sign ? -0.0 : 0.0, &a);
            cmrscl_csr ref = test_csr_rounded(&a, prec);
            int distinct = distinct_values(&a, prec);
            for (size_t k = 0; k < sizeof plans / sizeof *plans; ++k)
                for (int dict = 0; dict < 2; ++dict) {
                    cmrscl_options o = {.kernel = plans[k].kernel, .height = plans[k].height};
                    o.values = dict ? CMRSCL_VALUES_DICT : CMRSCL_VALUES_PLAIN;
                    char what[160];
                    snprintf(what, sizeof what, "%s0.0 %s, %s, %s", sign ? "-" : "",
                             place_names[place], plans[k].name, dict ? "dictionary" : "plain");
                    cmrscl_matrix m = NULL;
                    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, &o, &m));
                    if (m)
                        check_products(m, &ref, prec, o.values, distinct, &o, what);
                    cmrscl_matrix_free(m);
                }
            cmrscl_csr_free(&ref), cmrscl_csr_free(&a);
        }
}

/* rows x cols, tridiagonal: entries (r, r - 1), (r, r) where r < cols, (r, r + 1); off the
 * diagonal `off` values cycling, on it 3 + r / 4 (all distinct, exact in float); `twice`: row
 * 1 holds its diagonal entry twice; `band` 0: only the diagonal. */
static void diagonal_matrix(int32_t rows, int32_t cols, int off, bool twice, bool band,
                            cmrscl_csr *out)
{
    size_t room = 3 * (size_t)rows + 1;
    *out = (cmrscl_csr){rows,
                        cols,
                        0,
                        malloc(sizeof(int64_t) * ((size_t)rows + 1)),
                        malloc(sizeof(int32_t) * room),
                        malloc(sizeof(double) * room)};
    int64_t k = 0, n = 0;
    for (int32_t r = 0; r < rows; ++r) {
        out->row_ptr[r] = k;
        for (int32_t c = r - 1; c <= r + 1; ++c) {
            if (c < 0 || c >= cols || (!band && c != r))
                continue;
            int copies = c == r && twice && r == 1 ? 2 : 1;
            for (int i = 0; i < copies; ++i) {
                out->col_ind[k] = c;
                out->values[k++] = c == r ? 3.0 + 0.25 * r : -1.0 - 0.5 * (double)(n++ % off);
            }
        }
    }
    out->row_ptr[rows] = k;
    out->nnz = k;
}

/* The plan takes `want` for a, or refuses `asked` saying `why`; taken, its products right. */
static void check_diagonal(cmrscl_context ctx, cmrscl_precision prec, const cmrscl_csr *a,
                           const cmrscl_options *o, cmrscl_values want, int off, const char *why,
                           const char *what)
{
    cmrscl_matrix m = NULL;
    if (why) {
        CHECK_STATUS(cmrscl_matrix_create_from_csr(ctx, prec, a, o, &m),
                     CMRSCL_ERROR_INVALID_ARGUMENT);
        CHECK_MSG(!m && test_contains(cmrscl_last_error(), why), "%s: '%s', expected '%s'", what,
                  cmrscl_last_error(), why);
        cmrscl_matrix_free(m);
        return;
    }
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, a, o, &m));
    if (!m)
        return;
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_params(m, &p));
    bool apart = want == CMRSCL_VALUES_DIAGONAL;
    CHECK_MSG(p.values == want && p.dict_size == (apart ? off : 0) &&
                  p.dict_bits == (apart ? index_bits(off + 1) : 0),
              "%s: values %d, %d off the diagonal in %d bits, expected %d (%s)", what,
              (int)p.values, p.dict_size, p.dict_bits, (int)want, p.plan_reason);
    cmrscl_csr ref = test_csr_rounded(a, prec);
    double ratio = test_op_ratio(m, CMRSCL_NON_TRANSPOSE, &ref, prec),
           ratio_t = test_op_ratio(m, CMRSCL_TRANSPOSE, &ref, prec);
    CHECK_MSG(ratio <= 1.0 && ratio_t <= 1.0, "%s: A x, A^T x off by %g, %g of the bound (%s)",
              what, ratio, ratio_t, p.plan_reason);
    cmrscl_csr_free(&ref);
    cmrscl_matrix_free(m);
}

static void test_diagonal(cmrscl_context ctx, cmrscl_precision prec)
{
    const cmrscl_values other = prec == CMRSCL_DOUBLE ? CMRSCL_VALUES_FLOAT : CMRSCL_VALUES_PLAIN;
    const cmrscl_options automatic = {0}, asked = {.values = CMRSCL_VALUES_DIAGONAL};
    cmrscl_options implied = {
        .kernel = CMRSCL_KERNEL_STRIP, .height = 1, .column_bits = CMRSCL_COLUMNS_IMPLIED};
    cmrscl_csr a;
    /* each index width with the diagonal's index its last (1, 3, 7: all ones) and one more */
    static const int offs[] = {1, 2, 3, 4, 7, 8};
    for (size_t i = 0; i < sizeof offs / sizeof *offs; ++i) {
        char what[64];
        snprintf(what, sizeof what, "%d off, chosen", offs[i]);
        diagonal_matrix(40, 40, offs[i], false, true, &a);
        check_diagonal(ctx, prec, &a, &automatic, CMRSCL_VALUES_DIAGONAL, offs[i], NULL, what);
        cmrscl_csr_free(&a);
    }
    diagonal_matrix(40, 40, 15, false, true, &a);
    check_diagonal(ctx, prec, &a, &automatic, CMRSCL_VALUES_DIAGONAL, 15, NULL, "15 off, chosen");
    cmrscl_options slices = {.kernel = CMRSCL_KERNEL_SLICE, .height = 8};
    check_diagonal(ctx, prec, &a, &slices, CMRSCL_VALUES_DIAGONAL, 15, NULL, "15 off, slices");
    check_diagonal(ctx, prec, &a, &implied, other, 0, NULL, "implied columns, AUTO values");
    implied.values = CMRSCL_VALUES_DIAGONAL;
    check_diagonal(ctx, prec, &a, &implied, other, 0, "without a dictionary index",
                   "implied columns and DIAGONAL");
    cmrscl_csr_free(&a);
    diagonal_matrix(60, 45, 15, false, true, &a);
    check_diagonal(ctx, prec, &a, &automatic, CMRSCL_VALUES_DIAGONAL, 15, NULL, "60 x 45");
    cmrscl_csr_free(&a);
    diagonal_matrix(40, 40, 16, false, true, &a);
    check_diagonal(ctx, prec, &a, &automatic, other, 0, NULL, "16 off");
    check_diagonal(ctx, prec, &a, &asked, other, 0, "(more than 15 values off the diagonal)",
                   "16 off, asked for");
    cmrscl_csr_free(&a);
    diagonal_matrix(40, 40, 3, true, true, &a);
    check_diagonal(ctx, prec, &a, &automatic, other, 0, NULL, "twice on a row's diagonal");
    check_diagonal(ctx, prec, &a, &asked, other, 0, "(a row holds two entries on its diagonal)",
                   "twice, asked for");
    cmrscl_csr_free(&a);
    diagonal_matrix(40, 40, 1, false, false, &a);
    check_diagonal(ctx, prec, &a, &automatic, other, 0, NULL, "a diagonal matrix");
    check_diagonal(ctx, prec, &a, &asked, CMRSCL_VALUES_DIAGONAL, 0, NULL,
                   "a diagonal matrix, asked for");
    cmrscl_csr_free(&a);
    sized_matrix(5, &a);
    check_diagonal(ctx, prec, &a, &asked, CMRSCL_VALUES_DICT, 0, "(DICT fits: few values in all)",
                   "5 values, DIAGONAL asked for");
    cmrscl_csr_free(&a);
}

int main(int argc, char **argv)
{
    cmrscl_precision prec;
    if (!test_precision_arg(argc, argv, &prec))
        return 2;
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("dict_limits");
    if (prec == CMRSCL_DOUBLE && !ctx->info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    test_sizes(ctx, prec);
    test_zeros(ctx, prec);
    test_diagonal(ctx, prec);
    cmrscl_context_free(ctx);
    return test_finish("dict_limits");
}
