/* test_generate_rows.c - cmrscl_csr_generate_rows: any range of rows of every generated
 * class is those rows of cmrscl_csr_generate's matrix, bit for bit (the ranges of a
 * partition, empty ranges, ranges past the end); the total row count; the limits: a range of
 * a grid whose whole matrix exceeds 32-bit counts, and bad arguments. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

/* Rows [first, first + a->rows) of `whole` equal `a` exactly. */
static bool same_rows(const cmrscl_csr *whole, int64_t first, const cmrscl_csr *a)
{
    if (a->cols != whole->cols || first + a->rows > whole->rows)
        return false;
    int32_t base = whole->row_ptr[first];
    for (int32_t i = 0; i <= a->rows; ++i)
        if (a->row_ptr[i] != whole->row_ptr[first + i] - base)
            return false;
    return memcmp(a->col_ind, whole->col_ind + base, sizeof(int32_t) * (size_t)a->nnz) == 0 &&
           memcmp(a->values, whole->values + base, sizeof(double) * (size_t)a->nnz) == 0;
}

static void check_spec(const char *spec)
{
    cmrscl_csr whole, part;
    CHECK_OK(cmrscl_csr_generate(spec, &whole));
    for (int parts = 1; parts <= 4; ++parts) {
        int64_t rows = whole.rows;
        for (int p = 0; p < parts; ++p) {
            int64_t first = rows * p / parts, count = rows * (p + 1) / parts - first, total = -1;
            CHECK_OK(cmrscl_csr_generate_rows(spec, first, count, &part, &total));
            CHECK_MSG(total == rows && part.rows == count && same_rows(&whole, first, &part),
                      "%s: rows %lld + %lld of %lld differ", spec, (long long)first,
                      (long long)count, (long long)rows);
            cmrscl_csr_free(&part);
        }
    }
    /* Clipped at the end, and past it. */
    CHECK_OK(cmrscl_csr_generate_rows(spec, whole.rows - 1, 100, &part, NULL));
    CHECK(part.rows == 1 && same_rows(&whole, whole.rows - 1, &part));
    cmrscl_csr_free(&part);
    CHECK_OK(cmrscl_csr_generate_rows(spec, whole.rows + 5, 3, &part, NULL));
    CHECK(part.rows == 0 && part.nnz == 0 && part.cols == whole.cols && part.row_ptr[0] == 0);
    cmrscl_csr_free(&part);
    cmrscl_csr_free(&whole);
}

int main(void)
{
    const char *specs[] = {"stencil5:7",     "stencil7:5", "stencil27:6",
                           "random:300:4@3", "perm:100",   "dense:9",
                           "rmat:8:4",       "fem:3:2",    "skewed:200:3:2:50"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; ++i)
        check_spec(specs[i]);

    /* stencil27:700 has 9.1e9 entries (more than this machine holds): a range is built
     * without the rest. */
    cmrscl_csr a;
    int64_t total = 0;
    CHECK_OK(cmrscl_csr_generate_rows("stencil27:700", 343000000 - 1000, 1000, &a, &total));
    CHECK(total == 343000000 && a.rows == 1000 && a.cols == 343000000 && a.nnz > 0);
    cmrscl_csr_free(&a);
    CHECK_STATUS(cmrscl_csr_generate_rows("stencil7:2000", 5, 5, &a, NULL),
                 CMRSCL_ERROR_TOO_LARGE); /* 8e9 rows: beyond 32-bit indices */
    CHECK_STATUS(cmrscl_csr_generate_rows("stencil7:4", -1, 5, &a, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_csr_generate_rows("cube:4", 0, 5, &a, &total),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(total == 0 && a.row_ptr == NULL);
    return test_finish("generate_rows");
}
