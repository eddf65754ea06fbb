/* test_narrow_limits.c - the narrow column codings (host/format/cmrs_narrow.c) at their limits,
 * on the device chosen by CMRSCL_DEVICE: the plan's coding asserted, and every product against
 * the CPU double reference (test_op_ratio), at the largest value the 16-bit word holds, one
 * below and one above it:
 *   steps    a slice's step along a row, beside a dictionary index of 0 and 2 bits: at most
 *            2^(16 - dict bits) - 2, the all-ones word being a hole (CMRS_NARROW_HOLE). At the
 *            limit and below: 16-bit steps without jump words; one above: a jump word before
 *            each long step, asked for or chosen. A plan that took the all-ones word as a step
 *            would drop those entries (y off by about half): the neighbours alone (65534,
 *            65536) do not show it;
 *   offsets  a strip's offset from its first column, beside the row in strip and the index
 *            (HEIGHT 1, 4 and 5): at the limit and below 16-bit offsets; one above, asked for,
 *            refused naming the field, else 32-bit words;
 *   implied  strips of one row whose columns are one run: taken; a row with a gap refused.
 * Odd sizes: a tail strip shorter than the height, the long steps in it too; the dictionary's
 * every value at a long step (its last index makes the all-ones word).
 * Usage: test_narrow_limits float|double */
#include "exec/exec.h"
#include "test_matrices.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

/* Four values, exact in float: a dictionary of 2 index bits. */
static const double four[4] = {0.5, -1.25, 2.0, -0.75};

/* rows x (span + 7) with steps along each row of at most 4 but in the long rows (r % 7 == 3,
 * and the last row: in a slice of 32 the tail), whose last step is exactly `span`; values
 * cycling through `four` (dict) or distinct (plain). Sets *long_rows. */
static void step_matrix(int32_t rows, int32_t span, bool dict, int *long_rows, cmrscl_csr *out)
{
    int32_t cols = span + 7;
    int64_t *rp = malloc(sizeof(int64_t) * ((size_t)rows + 1));
    int32_t *ci = malloc(sizeof(int32_t) * 3 * (size_t)rows);
    double *v = malloc(sizeof(double) * 3 * (size_t)rows);
    int64_t n = 0;
    *long_rows = 0;
    rp[0] = 0;
    for (int32_t r = 0; r < rows; ++r) {
        int32_t first = r % 3, second = first + 1 + r % 4; /* the strip's first column is 0 */
        for (int k = 0; k < 2; ++k, ++n)
            ci[n] = k ? second : first, v[n] = dict ? four[n % 4] : 1.0 + 0.001 * (double)n;
        if (r % 7 == 3 || r == rows - 1) { /* the long entries take each value in turn */
            ci[n] = second + span, v[n] = dict ? four[*long_rows % 4] : 1.0 + 0.001 * (double)n;
            ++n, ++*long_rows;
        }
        rp[r + 1] = n;
    }
    *out = (cmrscl_csr){rows, cols, n, rp, ci, v};
}

/* rows x (span + 3), strips of `height` rows, each row's columns b, b + 1 + r % 2 and b + span
 * with b the same in a strip ((r / height) % 3): each strip's largest offset exactly span. */
static void offset_matrix(int32_t rows, int32_t span, int height, bool dict, cmrscl_csr *out)
{
    int64_t *rp = malloc(sizeof(int64_t) * ((size_t)rows + 1));
    int32_t *ci = malloc(sizeof(int32_t) * 3 * (size_t)rows);
    double *v = malloc(sizeof(double) * 3 * (size_t)rows);
    int64_t n = 0;
    rp[0] = 0;
    for (int32_t r = 0; r < rows; ++r) {
        int32_t b = (r / height) % 3;
        ci[n] = b, ci[n + 1] = b + 1 + r % 2, ci[n + 2] = b + span;
        for (int k = 0; k < 3; ++k, ++n) /* the far entry of row r: value r % 4 */
            v[n] = dict ? four[(k == 2 ? r : k) % 4] : 1.0 + 0.001 * (double)n;
        rp[r + 1] = n;
    }
    *out = (cmrscl_csr){rows, span + 3, n, rp, ci, v};
}

static void csr_release(cmrscl_csr *a) { free(a->row_ptr), free(a->col_ind), free(a->values); }

/* m's product against the reference, and its plan: column bits, jump words, values. */
static void check_matrix(cmrscl_context ctx, cmrscl_precision prec, const cmrscl_csr *a,
                         const cmrscl_options *o, int bits, int64_t jumps, const char *what)
{
    cmrscl_csr ref = test_csr_rounded(a, prec);
    cmrscl_matrix m = NULL;
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, a, o, &m));
    if (m) {
        CHECK_OK(cmrscl_matrix_params(m, &p));
        bool dict = o->values == CMRSCL_VALUES_DICT;
        CHECK_MSG(p.column_bits == bits && p.column_jumps == jumps && p.kernel == o->kernel &&
                      p.values == o->values && p.dict_bits == (dict ? 2 : 0),
                  "%s: column bits %d, %lld jump words, values %d of %d bits, expected %d bits, "
                  "%lld jumps (%s)",
                  what, p.column_bits, (long long)p.column_jumps, (int)p.values, p.dict_bits, bits,
                  (long long)jumps, p.plan_reason);
        double ratio = test_op_ratio(m, CMRSCL_NON_TRANSPOSE, &ref, prec);
        CHECK_MSG(ratio <= 1.0, "%s: A x off by %g of the rounding bound (%s)", what, ratio,
                  p.plan_reason);
    }
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&ref);
}

/* Slices of 32 (37 rows: a tail of 5) and 8 (a tail of 5 too): steps at the limit, one below,
 * one above; asked for 16 bits and chosen. */
static void test_steps(cmrscl_context ctx, cmrscl_precision prec)
{
    for (int dict = 0; dict < 2; ++dict) {
        int32_t limit = (1 << (16 - 2 * dict)) - 2; /* 65534, 16382 */
        for (int32_t span = limit - 1; span <= limit + 1; ++span)
            for (int height = 32; height >= 8; height /= 4) {
                cmrscl_csr a;
                int long_rows;
                step_matrix(height + 5, span, dict, &long_rows, &a);
                for (int asked = 0; asked < 2; ++asked) {
                    cmrscl_options o = {.kernel = CMRSCL_KERNEL_SLICE, .height = height};
                    o.values = dict ? CMRSCL_VALUES_DICT : CMRSCL_VALUES_PLAIN;
                    o.column_bits = asked ? 16 : 0;
                    char what[160];
                    snprintf(what, sizeof what, "slices of %d, %s values, a step of %d, %s", height,
                             dict ? "4 dictionary" : "plain", span,
                             asked ? "16 bits asked for" : "chosen");
                    /* above the limit: a jump word before each long step (few: chosen too) */
                    check_matrix(ctx, prec, &a, &o, 16, span > limit ? long_rows : 0, what);
                }
                csr_release(&a);
            }
    }
}

/* Strips: HEIGHT 1 (no row bits), 4 (2 row bits) with a dictionary of 4 (2 index bits), 5
 * unpacked (no row bits); 11 rows (tails of 3 and 1). */
static void test_offsets(cmrscl_context ctx, cmrscl_precision prec)
{
    static const struct {
        int height;
        cmrscl_layout layout;
        bool dict;
        int32_t limit; /* 2^(16 - row bits - dict bits) - 2 */
    } cases[] = {{1, CMRSCL_LAYOUT_PACKED, false, 65534},
                 {4, CMRSCL_LAYOUT_PACKED, true, 4094},
                 {5, CMRSCL_LAYOUT_UNPACKED, false, 65534},
                 {5, CMRSCL_LAYOUT_PACKED, true, 2046}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c)
        for (int32_t span = cases[c].limit - 1; span <= cases[c].limit + 1; ++span) {
            cmrscl_csr a;
            offset_matrix(11, span, cases[c].height, cases[c].dict, &a);
            cmrscl_options o = {.kernel = CMRSCL_KERNEL_STRIP, .height = cases[c].height};
            o.layout = cases[c].layout, o.column_bits = 16;
            o.values = cases[c].dict ? CMRSCL_VALUES_DICT : CMRSCL_VALUES_PLAIN;
            char what[160];
            snprintf(what, sizeof what, "strips of %d%s, %s values, an offset of %d",
                     cases[c].height, cases[c].layout == CMRSCL_LAYOUT_UNPACKED ? " unpacked" : "",
                     cases[c].dict ? "4 dictionary" : "plain", span);
            if (span <= cases[c].limit) {
                check_matrix(ctx, prec, &a, &o, 16, 0, what);
            } else {
                cmrscl_matrix m = NULL;
                CHECK_STATUS(cmrscl_matrix_create_from_csr(ctx, prec, &a, &o, &m),
                             CMRSCL_ERROR_INVALID_ARGUMENT);
                char field[64];
                snprintf(field, sizeof field, "first column to fit %d bits",
                         cases[c].limit == 65534  ? 16
                         : cases[c].limit == 4094 ? 12
                                                  : 11);
                CHECK_MSG(!m && test_contains(cmrscl_last_error(), field), "%s: '%s' lacks '%s'",
                          what, cmrscl_last_error(), field);
                o.column_bits = 0; /* the plan's choice: 32-bit words */
                check_matrix(ctx, prec, &a, &o, 32, 0, what);
            }
            csr_release(&a);
        }
}

/* Implied columns: strips of one row, each row a run (odd lengths, an empty row, a row of
 * one), against a row with a gap of one column. */
static void test_implied(cmrscl_context ctx, cmrscl_precision prec)
{
    int64_t rp[8] = {0, 5, 5, 6, 13, 16, 17, 22};
    int32_t ci[22] = {0, 1, 2, 3, 4, 8, 2, 3, 4, 5, 6, 7, 8, 6, 7, 8, 0, 1, 2, 3, 4, 5};
    double v[22];
    for (int k = 0; k < 22; ++k)
        v[k] = 0.25 * (k + 1);
    cmrscl_csr a = {7, 9, 22, rp, ci, v};
    cmrscl_options o = {.kernel = CMRSCL_KERNEL_STRIP, .height = 1};
    o.column_bits = CMRSCL_COLUMNS_IMPLIED, o.values = CMRSCL_VALUES_PLAIN;
    check_matrix(ctx, prec, &a, &o, 0, 0, "implied columns, runs");
    ci[21] = 6; /* the last row 1..4, 6 */
    cmrscl_matrix m = NULL;
    CHECK_STATUS(cmrscl_matrix_create_from_csr(ctx, prec, &a, &o, &m),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(!m && test_contains(cmrscl_last_error(), "one ascending run"), "a gap: '%s'",
              cmrscl_last_error());
}

int main(int argc, char **argv)
{
    cmrscl_precision prec;
    if (!test_precision_arg(argc, argv, &prec))
        return 2;
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("narrow_limits");
    if (prec == CMRSCL_DOUBLE && !ctx->info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    test_steps(ctx, prec);
    test_offsets(ctx, prec);
    test_implied(ctx, prec);
    cmrscl_context_free(ctx);
    return test_finish("narrow_limits");
}
