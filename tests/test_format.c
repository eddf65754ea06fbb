/* test_format.c - host format tests: the paper's 5x5 example (section 3 and 4) reproduced
 * exactly, CSR validation, COO -> CSR, CSR <-> CMRS round trips for heights 1..20 in both
 * layouts and orders, and rejection of corrupted CMRS arrays. */
#include "format/format.h"
#include "io/io.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The paper's matrix M^ (rows 0..4): values 1..10 in row-major order. */
static int64_t paper_row_ptr[] = {0, 2, 4, 6, 9, 10};
static int32_t paper_col[] = {0, 3, 1, 4, 2, 4, 2, 3, 4, 4};
static double paper_val[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
static const cmrscl_csr paper = {5, 5, 10, paper_row_ptr, paper_col, paper_val};

static uint32_t entry_row_in_strip(const cmrscl_cmrs *m, int k)
{
    return m->packed ? m->col_ind[k] & ((1u << m->row_bits) - 1) : m->row_in_strip[k];
}
static uint32_t entry_col(const cmrscl_cmrs *m, int k)
{
    return m->packed ? m->col_ind[k] >> m->row_bits : m->col_ind[k];
}

static void expect_cmrs(const cmrscl_cmrs *m, const uint32_t *strip_ptr, int strips,
                        const uint32_t *col, const uint32_t *ris, const double *val)
{
    CHECK(m->strips == strips);
    for (int s = 0; s <= strips; ++s)
        CHECK_MSG(m->strip_ptr[s] == strip_ptr[s], "StripPtr[%d] = %llu, expected %u", s,
                  (unsigned long long)m->strip_ptr[s], strip_ptr[s]);
    for (int k = 0; k < m->nnz; ++k) {
        CHECK_MSG(entry_col(m, k) == col[k], "ColInd[%d] = %u, expected %u", k, entry_col(m, k),
                  col[k]);
        CHECK_MSG(entry_row_in_strip(m, k) == ris[k], "RowInStrip[%d] = %u, expected %u", k,
                  entry_row_in_strip(m, k), ris[k]);
        CHECK_MSG(m->values[k] == val[k], "Val[%d] = %g, expected %g", k, m->values[k], val[k]);
    }
}

static void test_paper_example(void)
{
    static const uint32_t strip_ptr[] = {0, 4, 9, 10};
    static const uint32_t col[] = {0, 3, 1, 4, 2, 4, 2, 3, 4, 4};
    static const uint32_t ris[] = {0, 0, 1, 1, 0, 0, 1, 1, 1, 0};
    static const double val[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    static const uint32_t ord_col[] = {0, 1, 3, 4, 2, 2, 3, 4, 4, 4};
    static const uint32_t ord_ris[] = {0, 1, 0, 1, 0, 1, 1, 0, 1, 0};
    static const double ord_val[] = {1, 3, 2, 4, 5, 7, 8, 6, 9, 10};
    for (unsigned layout = 0; layout <= CMRSCL_CMRS_UNPACKED; layout += CMRSCL_CMRS_UNPACKED) {
        cmrscl_cmrs m;
        CHECK_OK(cmrscl_cmrs_from_csr(&paper, 2, layout, &m));
        CHECK(m.packed == (layout == 0));
        CHECK(m.column_ordered == 0);
        expect_cmrs(&m, strip_ptr, 3, col, ris, val);
        if (m.packed) /* the packed word itself, as in the paper: column << 4 | row */
            CHECK(m.col_ind[2] == (1u << 4 | 1u));
        cmrscl_cmrs_free(&m);
        CHECK_OK(cmrscl_cmrs_from_csr(&paper, 2, layout | CMRSCL_CMRS_ORDER_COLUMNS, &m));
        CHECK(m.column_ordered == 1);
        expect_cmrs(&m, strip_ptr, 3, ord_col, ord_ris, ord_val);
        cmrscl_cmrs_free(&m);
    }
    double x[5] = {1, 2, 3, 4, 5}, y[5] = {1, 1, 1, 1, 1};
    static const double expect[5] = {9, 26, 45, 98, 50};
    CHECK_OK(cmrscl_csr_spmv(&paper, 1.0, x, 0.0, y));
    for (int i = 0; i < 5; ++i)
        CHECK(y[i] == expect[i]);
    CHECK_OK(cmrscl_csr_spmv(&paper, 2.0, x, -1.0, y));
    for (int i = 0; i < 5; ++i)
        CHECK(y[i] == expect[i]);
}

static void expect_same_csr(const cmrscl_csr *a, const cmrscl_csr *b, const char *what)
{
    CHECK_MSG(a->rows == b->rows && a->cols == b->cols && a->nnz == b->nnz, "%s: sizes differ",
              what);
    if (a->rows != b->rows || a->nnz != b->nnz)
        return;
    CHECK_MSG(!memcmp(a->row_ptr, b->row_ptr, sizeof(int64_t) * ((size_t)a->rows + 1)),
              "%s: row_ptr differs", what);
    CHECK_MSG(!memcmp(a->col_ind, b->col_ind, sizeof(int32_t) * (size_t)a->nnz),
              "%s: col_ind differs", what);
    CHECK_MSG(!memcmp(a->values, b->values, sizeof(double) * (size_t)a->nnz), "%s: values differ",
              what);
}

/* Random canonical CSR with empty rows and one long row, via the COO builder. */
static cmrscl_csr random_csr(int32_t rows, int32_t cols, int32_t entries)
{
    int32_t *ri = malloc(sizeof(int32_t) * (size_t)(entries + cols + 1));
    int32_t *ci = malloc(sizeof(int32_t) * (size_t)(entries + cols + 1));
    double *v = malloc(sizeof(double) * (size_t)(entries + cols + 1));
    int32_t n = 0;
    for (int32_t k = 0; k < entries && rows > 0 && cols > 0; ++k, ++n) {
        ri[n] = (int32_t)test_uniform(0, rows * 0.8); /* the last rows stay empty */
        ci[n] = (int32_t)test_uniform(0, cols);
        v[n] = test_uniform(-1, 1);
    }
    for (int32_t j = 0; rows > 2 && j < cols; ++j, ++n) { /* a dense row */
        ri[n] = rows / 2, ci[n] = j, v[n] = j;
    }
    cmrscl_csr csr;
    CHECK_OK(cmrscl_csr_from_coo(rows, cols, n, ri, ci, v, &csr));
    free(ri), free(ci), free(v);
    return csr;
}

static void test_round_trips(void)
{
    static const int32_t shapes[][3] = {{0, 0, 0},    {7, 0, 0},     {0, 7, 0},
                                        {5, 5, 0},    {1, 1, 1},     {37, 37, 300},
                                        {64, 9, 100}, {9, 300, 200}, {100, 100, 2000}};
    test_seed(7);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        cmrscl_csr a = random_csr(shapes[s][0], shapes[s][1], shapes[s][2]);
        for (int h = 1; h <= 70; h += h < 20 ? 1 : 25) {
            for (unsigned flags = 0; flags < 4; ++flags) {
                cmrscl_cmrs m;
                cmrscl_csr back;
                CHECK_OK(cmrscl_cmrs_from_csr(&a, h, flags, &m));
                CHECK(m.packed == !(flags & CMRSCL_CMRS_UNPACKED));
                CHECK(m.row_bits == (m.packed ? (h <= 16 ? 4 : h <= 32 ? 5 : h <= 64 ? 6 : 7) : 0));
                CHECK_OK(cmrscl_cmrs_to_csr(&m, &back));
                char what[64];
                snprintf(what, sizeof what, "shape %zu height %d flags %u", s, h, flags);
                expect_same_csr(&a, &back, what);
                cmrscl_csr_free(&back);
                cmrscl_cmrs_free(&m);
            }
        }
        cmrscl_csr_free(&a);
    }
}

static void test_unsorted_rows_round_trip(void)
{
    /* Unsorted columns and a duplicate within a row: kept as given without ordering. */
    int64_t rp[] = {0, 3, 5};
    int32_t ci[] = {4, 1, 4, 3, 0};
    double v[] = {1, 2, 3, 4, 5};
    cmrscl_csr a = {2, 5, 5, rp, ci, v};
    CHECK_OK(cmrscl_csr_validate(&a));
    cmrscl_cmrs m;
    cmrscl_csr back;
    CHECK_OK(cmrscl_cmrs_from_csr(&a, 2, 0, &m));
    CHECK_OK(cmrscl_cmrs_to_csr(&m, &back));
    expect_same_csr(&a, &back, "unsorted rows");
    cmrscl_csr_free(&back);
    cmrscl_cmrs_free(&m);
    /* With column ordering each row comes back sorted by column, duplicates adjacent. */
    CHECK_OK(cmrscl_cmrs_from_csr(&a, 2, CMRSCL_CMRS_ORDER_COLUMNS, &m));
    CHECK_OK(cmrscl_cmrs_to_csr(&m, &back));
    static const int32_t sorted_col[] = {1, 4, 4, 0, 3};
    static const double sorted_val[] = {2, 1, 3, 5, 4};
    for (int k = 0; k < 5; ++k)
        CHECK(back.col_ind[k] == sorted_col[k] && back.values[k] == sorted_val[k]);
    cmrscl_csr_free(&back);
    cmrscl_cmrs_free(&m);
}

/* The conversion runs on all host threads, each taking whole strips: any thread count
 * gives the same arrays, every strip sorted by column with ties in row order. */
static void test_threads_agree(void)
{
    test_seed(21);
    cmrscl_csr a = random_csr(5000, 4000, 300000);
    for (int32_t k = 100; k < 140; ++k) /* one column: duplicates, rows out of order */
        a.col_ind[k] = a.col_ind[100];
    static const struct {
        int height;
        unsigned flags;
    } cases[] = {{16, CMRSCL_CMRS_ORDER_COLUMNS},
                 {8, CMRSCL_CMRS_ORDER_COLUMNS | CMRSCL_CMRS_UNPACKED},
                 {1, CMRSCL_CMRS_ORDER_COLUMNS},
                 {32, 0},
                 {7, CMRSCL_CMRS_UNPACKED}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        cmrscl_cmrs m[2];
        for (int i = 0; i < 2; ++i) {
            setenv("CMRSCL_THREADS", i ? "3" : "1", 1);
            CHECK_OK(cmrscl_cmrs_from_csr(&a, cases[c].height, cases[c].flags, &m[i]));
        }
        unsetenv("CMRSCL_THREADS");
        size_t nnz = (size_t)a.nnz;
        CHECK_MSG(memcmp(m[0].strip_ptr, m[1].strip_ptr, 8 * ((size_t)m[0].strips + 1)) == 0 &&
                      memcmp(m[0].col_ind, m[1].col_ind, 4 * nnz) == 0 &&
                      memcmp(m[0].values, m[1].values, 8 * nnz) == 0 &&
                      (m[0].packed || memcmp(m[0].row_in_strip, m[1].row_in_strip, nnz) == 0),
                  "case %zu: 1 and 3 threads give different CMRS", c);
        const cmrscl_cmrs *x = &m[1];
        bool ordered = true;
        for (int32_t s = 0; s < x->strips && (cases[c].flags & CMRSCL_CMRS_ORDER_COLUMNS); ++s)
            for (uint64_t k = x->strip_ptr[s] + 1; k < x->strip_ptr[s + 1]; ++k) {
                uint32_t mask = x->packed ? (1u << x->row_bits) - 1 : 0;
                uint32_t c0 = x->packed ? x->col_ind[k - 1] >> x->row_bits : x->col_ind[k - 1];
                uint32_t c1 = x->packed ? x->col_ind[k] >> x->row_bits : x->col_ind[k];
                uint32_t r0 = x->packed ? x->col_ind[k - 1] & mask : x->row_in_strip[k - 1];
                uint32_t r1 = x->packed ? x->col_ind[k] & mask : x->row_in_strip[k];
                ordered &= c0 < c1 || (c0 == c1 && r0 <= r1);
            }
        CHECK_MSG(ordered, "case %zu: a strip is not sorted by (column, row)", c);
        cmrscl_csr back;
        CHECK_OK(cmrscl_cmrs_to_csr(x, &back));
        CHECK_MSG(back.nnz == a.nnz, "case %zu: entries lost", c);
        cmrscl_csr_free(&back);
        cmrscl_cmrs_free(&m[0]);
        cmrscl_cmrs_free(&m[1]);
    }
    cmrscl_csr_free(&a);
}

static void test_wide_matrix_unpacked(void)
{
    /* 2^28 + 1 columns do not fit 28 bits: the unpacked layout is used, not an error. */
    int64_t rp[] = {0, 1, 2};
    int32_t ci[] = {0, (1 << 28)};
    double v[] = {1, 2};
    cmrscl_csr a = {2, (1 << 28) + 1, 2, rp, ci, v};
    cmrscl_cmrs m;
    CHECK_OK(cmrscl_cmrs_from_csr(&a, 4, 0, &m));
    CHECK(!m.packed && m.row_in_strip && m.col_ind[1] == (1u << 28) && m.row_in_strip[1] == 1);
    cmrscl_cmrs_free(&m);
    /* Taller strips take more row bits: 2^27 + 1 columns fit 4 bits but not 5. */
    a.cols = (1 << 27) + 1;
    ci[1] = 1 << 27;
    CHECK_OK(cmrscl_cmrs_from_csr(&a, 16, 0, &m));
    CHECK(m.packed && m.row_bits == 4 && m.col_ind[1] == (1u << 31 | 1u));
    cmrscl_cmrs_free(&m);
    CHECK_OK(cmrscl_cmrs_from_csr(&a, 17, 0, &m));
    CHECK(!m.packed && m.row_bits == 0);
    cmrscl_cmrs_free(&m);
    CHECK(cmrscl_cmrs_row_bits(1) == 4 && cmrscl_cmrs_row_bits(17) == 5 &&
          cmrscl_cmrs_row_bits(256) == 8 && cmrscl_cmrs_row_bits(257) == 0);
    CHECK_STATUS(cmrscl_cmrs_from_csr(&a, 0, 0, &m), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_cmrs_from_csr(&a, CMRSCL_MAX_HEIGHT + 1, 0, &m),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
}

static void test_csr_validation(void)
{
    int64_t rp[] = {0, 2, 1};
    int32_t ci[] = {0, 1};
    double v[] = {1, 2};
    cmrscl_csr a = {2, 2, 1, rp, ci, v};
    CHECK_STATUS(cmrscl_csr_validate(&a), CMRSCL_ERROR_INVALID_MATRIX);
    CHECK(test_contains(cmrscl_last_error(), "row_ptr decreases"));
    rp[2] = 2, a.nnz = 2, ci[1] = 2;
    CHECK_STATUS(cmrscl_csr_validate(&a), CMRSCL_ERROR_INVALID_MATRIX);
    CHECK(test_contains(cmrscl_last_error(), "col_ind[1] = 2"));
    ci[1] = -1;
    CHECK_STATUS(cmrscl_csr_validate(&a), CMRSCL_ERROR_INVALID_MATRIX);
    ci[1] = 1, rp[0] = 1;
    CHECK_STATUS(cmrscl_csr_validate(&a), CMRSCL_ERROR_INVALID_MATRIX);
    CHECK(test_contains(cmrscl_last_error(), "row_ptr[0]"));
    rp[0] = 0, a.nnz = 3;
    CHECK_STATUS(cmrscl_csr_validate(&a), CMRSCL_ERROR_INVALID_MATRIX);
    a.nnz = 2, a.rows = -1;
    CHECK_STATUS(cmrscl_csr_validate(&a), CMRSCL_ERROR_INVALID_MATRIX);
    CHECK_STATUS(cmrscl_csr_validate(NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    a.rows = 2, a.row_ptr = NULL;
    CHECK_STATUS(cmrscl_csr_validate(&a), CMRSCL_ERROR_INVALID_ARGUMENT);
    cmrscl_csr_free(NULL); /* no-op */
}

static void test_coo(void)
{
    int32_t ri[] = {1, 0, 1, 0, 1};
    int32_t ci[] = {2, 1, 0, 1, 2};
    double v[] = {1, 2, 3, 4, 0.5};
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_from_coo(2, 3, 5, ri, ci, v, &a));
    static const int64_t rp[] = {0, 1, 3};
    static const int32_t col[] = {1, 0, 2};
    static const double val[] = {6, 3, 1.5};
    CHECK(a.nnz == 3);
    for (int i = 0; i < 3; ++i)
        CHECK(a.row_ptr[i] == rp[i]);
    for (int k = 0; k < a.nnz && k < 3; ++k)
        CHECK(a.col_ind[k] == col[k] && a.values[k] == val[k]);
    cmrscl_csr_free(&a);
    CHECK(a.row_ptr == NULL && a.nnz == 0); /* free zeroes: a second free is harmless */
    cmrscl_csr_free(&a);
    CHECK_OK(cmrscl_csr_from_coo(2, 3, 5, ri, ci, NULL, &a)); /* pattern: duplicates count */
    CHECK(a.nnz == 3 && a.values[0] == 2 && a.values[1] == 1);
    cmrscl_csr_free(&a);
    ri[3] = 2;
    CHECK_STATUS(cmrscl_csr_from_coo(2, 3, 5, ri, ci, v, &a), CMRSCL_ERROR_INVALID_MATRIX);
    CHECK(test_contains(cmrscl_last_error(), "entry 3 at (2, 1)"));
    CHECK_STATUS(cmrscl_csr_from_coo(2, 3, -1, ri, ci, v, &a), CMRSCL_ERROR_INVALID_MATRIX);
    CHECK_OK(cmrscl_csr_from_coo(0, 0, 0, NULL, NULL, NULL, &a));
    CHECK(a.rows == 0 && a.row_ptr && a.row_ptr[0] == 0);
    cmrscl_csr_free(&a);
}

static void test_corrupt_cmrs(void)
{
    cmrscl_cmrs m;
    cmrscl_csr back;
    CHECK_OK(cmrscl_cmrs_from_csr(&paper, 2, CMRSCL_CMRS_UNPACKED, &m));
    m.row_in_strip[9] = 1; /* row 5 of a 5-row matrix */
    CHECK_STATUS(cmrscl_cmrs_to_csr(&m, &back), CMRSCL_ERROR_INVALID_MATRIX);
    m.row_in_strip[9] = 2; /* not below the height */
    CHECK_STATUS(cmrscl_cmrs_to_csr(&m, &back), CMRSCL_ERROR_INVALID_MATRIX);
    m.row_in_strip[9] = 0, m.col_ind[0] = 5;
    CHECK_STATUS(cmrscl_cmrs_to_csr(&m, &back), CMRSCL_ERROR_INVALID_MATRIX);
    m.col_ind[0] = 0, m.strip_ptr[1] = 10;
    CHECK_STATUS(cmrscl_cmrs_to_csr(&m, &back), CMRSCL_ERROR_INVALID_MATRIX);
    m.strip_ptr[1] = 100; /* past nnz, though strip_ptr[2] comes back below it */
    CHECK_STATUS(cmrscl_cmrs_to_csr(&m, &back), CMRSCL_ERROR_INVALID_MATRIX);
    m.strip_ptr[1] = 4, m.strips = 2;
    CHECK_STATUS(cmrscl_cmrs_to_csr(&m, &back), CMRSCL_ERROR_INVALID_MATRIX);
    m.strips = 3;
    CHECK_OK(cmrscl_cmrs_to_csr(&m, &back));
    cmrscl_csr_free(&back);
    cmrscl_cmrs_free(&m);
}

/* Validation and the reference product walk large matrices on all host threads: the same
 * first offender, the same y and the same check outputs for any thread count. */
static void test_threads_validate_and_check(void)
{
    test_seed(33);
    cmrscl_csr a = random_csr(6000, 4000, 400000);
    double *x = malloc(sizeof(double) * (size_t)a.cols), *y[2], err[2], ratio[2];
    for (int32_t j = 0; j < a.cols; ++j)
        x[j] = test_uniform(-1, 1);
    char message[2][256];
    int32_t saved[2] = {a.col_ind[a.nnz - 10], a.col_ind[a.nnz / 2]};
    for (int i = 0; i < 2; ++i) {
        setenv("CMRSCL_THREADS", i ? "3" : "1", 1);
        y[i] = malloc(sizeof(double) * (size_t)a.rows);
        CHECK_OK(cmrscl_csr_spmv(&a, 1.5, x, 0.0, y[i]));
        CHECK_OK(cmrscl_csr_spmv_check(&a, 1.5, x, 0.0, NULL, y[i], 0x1p-53, &err[i], &ratio[i]));
        a.col_ind[a.nnz - 10] = a.cols, a.col_ind[a.nnz / 2] = -3; /* the second is reported */
        CHECK_STATUS(cmrscl_csr_validate(&a), CMRSCL_ERROR_INVALID_MATRIX);
        snprintf(message[i], sizeof message[i], "%s", cmrscl_last_error());
        a.col_ind[a.nnz - 10] = saved[0], a.col_ind[a.nnz / 2] = saved[1];
    }
    unsetenv("CMRSCL_THREADS");
    CHECK(!memcmp(y[0], y[1], sizeof(double) * (size_t)a.rows));
    CHECK(!memcmp(err, err + 1, sizeof err[0]) && !memcmp(ratio, ratio + 1, sizeof ratio[0]));
    CHECK(ratio[0] == 0.0);
    CHECK_MSG(!strcmp(message[0], message[1]) && test_contains(message[0], "= -3 (row"),
              "messages \"%s\" and \"%s\"", message[0], message[1]);
    free(x), free(y[0]), free(y[1]);
    cmrscl_csr_free(&a);
}

/* Rows and columns are 32-bit: generators refuse larger shapes with the limit named; the
 * row-structured ones are built on all host threads, the same for any count. */
static void test_generator_limits(void)
{
    static const struct {
        const char *spec, *needle;
    } too_large[] = {{"stencil27:1291", "outside 1..1290^3"},
                     {"stencil5:46341", "outside 1..46340^2"},
                     {"perm:2147483648", "outside 1..2147483647"},
                     {"dense:2147483648", "outside 1..2147483647"},
                     {"random:2147483648:1", "outside N 1..2147483647"},
                     {"fem:2048:64", "N^3 B <= 2147483647 rows"}};
    cmrscl_csr a;
    for (size_t i = 0; i < sizeof too_large / sizeof *too_large; ++i) {
        CHECK_STATUS(cmrscl_csr_generate(too_large[i].spec, &a), CMRSCL_ERROR_TOO_LARGE);
        CHECK_MSG(test_contains(cmrscl_last_error(), too_large[i].needle), "%s: \"%s\"",
                  too_large[i].spec, cmrscl_last_error());
    }
    static const char *const specs[] = {"stencil27:23", "stencil5:200", "fem:5:3"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; ++i) {
        cmrscl_csr g[2];
        for (int t = 0; t < 2; ++t) {
            setenv("CMRSCL_THREADS", t ? "3" : "1", 1);
            CHECK_OK(cmrscl_csr_generate(specs[i], &g[t]));
        }
        unsetenv("CMRSCL_THREADS");
        expect_same_csr(&g[0], &g[1], specs[i]);
        CHECK_OK(cmrscl_csr_validate(&g[1]));
        cmrscl_csr_free(&g[0]), cmrscl_csr_free(&g[1]);
    }
    CHECK_OK(cmrscl_csr_generate("stencil27:23", &a)); /* (3 n - 2)^3 entries */
    CHECK(a.nnz == 67LL * 67 * 67 && a.rows == 23 * 23 * 23);
    cmrscl_csr_free(&a);
}

int main(void)
{
    test_paper_example();
    test_round_trips();
    test_unsorted_rows_round_trip();
    test_threads_agree();
    test_wide_matrix_unpacked();
    test_csr_validation();
    test_coo();
    test_corrupt_cmrs();
    test_threads_validate_and_check();
    test_generator_limits();
    return test_finish("format");
}
