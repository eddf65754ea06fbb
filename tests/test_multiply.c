/* test_multiply.c - C = A B (cmrscl_csr_multiply) through the public API, on the device chosen by
 * CMRSCL_DEVICE:
 *   - square products (a stencil, a graph Laplacian, a nonsymmetric convection-diffusion
 *     matrix, A A and A B), rectangular ones, inputs with unsorted and repeated columns: C's
 *     pattern is the product of the patterns (counted here, row by row), its columns
 *     ascending, C x = A (B x) to rounding for a random x, and the device's C is the host's
 *     (ctx NULL) bit for bit, run after run;
 *   - C as a matrix of the device in float and double: its product against the reference on C;
 *   - the local tables' fill taken only where every row of C fits them (tables of 2, 4, 8 slots
 *     on C's rows of 3-5 columns);
 *   - products that cancel are stored, as 0; an empty A gives an empty C;
 *   - a row of C of 1,100 columns: the host makes C (info says why), the same C;
 *   - bad arguments: NULL operands, no output, a matrix without a context, a bad precision,
 *     shapes that do not match, an invalid CSR - each its status and a message naming it.
 * Where the device has no fp64 the host makes every C, and the test says so: the device's path
 * is then not checked. Usage: test_multiply. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* rows x cols, `per` entries a row at random columns, unsorted, some repeated (valid CSR, not
 * canonical); values in [-1, 1). */
static cmrscl_csr random_csr(int32_t rows, int32_t cols, int per, uint64_t seed)
{
    cmrscl_csr m = {rows, cols, (int64_t)rows * per, NULL, NULL, NULL};
    m.row_ptr = malloc(sizeof(int64_t) * ((size_t)rows + 1));
    m.col_ind = malloc(sizeof(int32_t) * (size_t)m.nnz);
    m.values = malloc(sizeof(double) * (size_t)m.nnz);
    for (int32_t i = 0; i <= rows; ++i)
        m.row_ptr[i] = (int64_t)i * per;
    for (int64_t k = 0; k < m.nnz; ++k) {
        m.col_ind[k] =
            k % per == per - 1 && k > 0 ? m.col_ind[k - 1] : (int32_t)(lcg(&seed) % (uint64_t)cols);
        m.values[k] = (double)(lcg(&seed) % 2048) / 1024.0 - 1.0;
    }
    return m;
}

/* c's rows against the product of a's and b's patterns (each row's distinct columns, counted
 * with a marker) and ascending; c x against a (b x). */
static void check_product(const cmrscl_csr *a, const cmrscl_csr *b, const cmrscl_csr *c,
                          const char *what)
{
    CHECK_MSG(c->rows == a->rows && c->cols == b->cols, "%s: C is %d x %d", what, (int)c->rows,
              (int)c->cols);
    if (c->rows != a->rows || c->cols != b->cols)
        return;
    int32_t *mark = malloc(sizeof(int32_t) * ((size_t)b->cols + 1));
    for (int32_t j = 0; j < b->cols; ++j)
        mark[j] = -1;
    int bad_rows = 0;
    for (int32_t i = 0; i < a->rows; ++i) {
        int64_t n = 0;
        for (int64_t ka = a->row_ptr[i]; ka < a->row_ptr[i + 1]; ++ka) {
            int32_t r = a->col_ind[ka];
            for (int64_t kb = b->row_ptr[r]; kb < b->row_ptr[r + 1]; ++kb)
                if (mark[b->col_ind[kb]] != i)
                    mark[b->col_ind[kb]] = i, ++n;
        }
        bool ok = c->row_ptr[i + 1] - c->row_ptr[i] == n;
        for (int64_t k = c->row_ptr[i]; ok && k < c->row_ptr[i + 1]; ++k)
            ok = mark[c->col_ind[k]] == i &&
                 (k == c->row_ptr[i] || c->col_ind[k - 1] < c->col_ind[k]);
        bad_rows += !ok;
    }
    CHECK_MSG(bad_rows == 0, "%s: %d rows of C are not the product of the patterns, ascending",
              what, bad_rows);
    double *x = malloc(sizeof(double) * ((size_t)b->cols + 1)),
           *bx = malloc(sizeof(double) * ((size_t)b->rows + 1)),
           *abx = malloc(sizeof(double) * ((size_t)a->rows + 1)),
           *cx = malloc(sizeof(double) * ((size_t)a->rows + 1));
    uint64_t seed = 7;
    for (int32_t j = 0; j < b->cols; ++j)
        x[j] = (double)(lcg(&seed) % 4096) / 2048.0 - 1.0;
    CHECK_OK(cmrscl_csr_spmv(b, 1.0, x, 0.0, bx));
    CHECK_OK(cmrscl_csr_spmv(a, 1.0, bx, 0.0, abx));
    CHECK_OK(cmrscl_csr_spmv(c, 1.0, x, 0.0, cx));
    double diff = 0, norm = 0;
    for (int32_t i = 0; i < a->rows; ++i)
        diff += (cx[i] - abx[i]) * (cx[i] - abx[i]), norm += abx[i] * abx[i];
    CHECK_MSG(sqrt(diff) <= 1e-12 * sqrt(norm) + 1e-300, "%s: ||C x - A (B x)|| = %.3g of %.3g",
              what, sqrt(diff), sqrt(norm));
    free(mark), free(x), free(bx), free(abx), free(cx);
}

/* C = A B on the device against the host's, bit for bit, twice; C as matrices of each precision
 * against the reference on C. */
static void check_case(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_csr *b, bool fp64,
                       const char *what)
{
    cmrscl_csr host = {0}, dev = {0}, again = {0};
    cmrscl_multiply_info info;
    CHECK_OK(cmrscl_csr_multiply(NULL, a, b, CMRSCL_DOUBLE, NULL, &host, &info));
    CHECK_MSG(!info.on_device && test_contains(info.reason, "no context"), "%s: reference: %d (%s)",
              what, info.on_device, info.reason);
    check_product(a, b, &host, what);
    CHECK_OK(cmrscl_csr_multiply(ctx, a, b, CMRSCL_DOUBLE, NULL, &dev, &info));
    bool want_device = fp64 && a->nnz > 0 && b->nnz > 0;
    CHECK_MSG(info.on_device == want_device, "%s: made on the device: %d (%s)", what,
              info.on_device, info.reason);
    CHECK_MSG(test_same_csr(&dev, &host), "%s: the device's C is not the host's, bit for bit",
              what);
    CHECK_OK(cmrscl_csr_multiply(ctx, a, b, CMRSCL_DOUBLE, NULL, &again, NULL));
    CHECK_MSG(test_same_csr(&again, &dev), "%s: C differs run after run", what);
    for (int p = 0; p < 2 && host.rows > 0; ++p) {
        cmrscl_precision precision = p ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
        if (precision == CMRSCL_DOUBLE && !fp64)
            continue;
        cmrscl_matrix m = NULL;
        cmrscl_csr both = {0};
        CHECK_OK(cmrscl_csr_multiply(ctx, a, b, precision, &m, &both, NULL));
        CHECK_MSG(test_same_csr(&both, &host), "%s: C read back beside its matrix differs", what);
        double *x = malloc(sizeof(double) * ((size_t)host.cols + 1));
        double *y = malloc(sizeof(double) * ((size_t)host.rows + 1));
        for (int32_t j = 0; j < host.cols; ++j)
            x[j] = 1.0 + (j % 7) / 8.0;
        double ratio = INFINITY;
        void *xd = test_values_in(x, host.cols, precision), *yd = NULL;
        if (m) {
            yd = test_values_in(y, host.rows, precision);
            CHECK_OK(cmrscl_spmv_host(m, 1.0, xd, 0.0, yd));
            for (int32_t i = 0; i < host.rows; ++i)
                y[i] = test_value_at(yd, precision, i);
            double unit = precision == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53;
            double *xr = malloc(sizeof(double) * ((size_t)host.cols + 1));
            for (int32_t j = 0; j < host.cols; ++j)
                xr[j] = test_value_at(xd, precision, j);
            /* (C's values rounded to float count in the bound: its entries' own rounding) */
            CHECK_OK(cmrscl_csr_spmv_check(&host, 1.0, xr, 0.0, NULL, y,
                                           precision == CMRSCL_FLOAT ? 2 * unit : unit, NULL,
                                           &ratio));
            free(xr);
        }
        CHECK_MSG(m && ratio <= 1.0, "%s: C as a %s matrix: its product is %.3g of its bound", what,
                  p ? "double" : "float", ratio);
        free(xd), free(yd), free(x), free(y);
        cmrscl_matrix_free(m);
        cmrscl_csr_free(&both);
    }
    cmrscl_csr_free(&host), cmrscl_csr_free(&dev), cmrscl_csr_free(&again);
}

/* n x n tridiagonal: A A has rows of 3 to 5 columns. */
static cmrscl_csr tridiagonal(int32_t n)
{
    cmrscl_csr m = {n, n, 3 * (int64_t)n - 2, NULL, NULL, NULL};
    m.row_ptr = malloc(sizeof(int64_t) * ((size_t)n + 1));
    m.col_ind = malloc(sizeof(int32_t) * (size_t)m.nnz);
    m.values = malloc(sizeof(double) * (size_t)m.nnz);
    int64_t k = 0;
    for (int32_t i = 0; i < n; ++i) {
        m.row_ptr[i] = k;
        for (int32_t j = i - 1; j <= i + 1; ++j)
            if (j >= 0 && j < n)
                m.col_ind[k] = j, m.values[k++] = j == i ? 2.0 + i % 3 : -1.0 - (i % 5) / 8.0;
    }
    m.row_ptr[n] = k;
    return m;
}

/* The rows' tables in local memory only where every row of C fits them (cl/spgemm.cl,
 * SPGEMM_LOCAL): C = A A of a tridiagonal A, whose longest rows have 5 columns, with tables of 4
 * slots (the global fill), of 8 (the local one) and of 2 (the global fill, rows of 3 columns
 * past them too). */
static void check_local_tables(cmrscl_context ctx, bool fp64)
{
    cmrscl_csr a = tridiagonal(200);
    const char *slots[] = {"4", "8", "2"};
    /* and where the work-item's global tables would be, a work-group's of 4 lanes a row (a
     * GPU's: cl/spgemm.cl, spgemm_count_group and spgemm_fill_group) */
    for (int groups = 0; groups < 2; ++groups)
        for (int s = 0; s < 3; ++s) {
            setenv("CMRSCL_AMG_SPGEMM_GROUPS", groups ? "1" : "0", 1);
            setenv("CMRSCL_AMG_SPGEMM_LANES", "4", 1);
            setenv("CMRSCL_AMG_SPGEMM_LOCAL", slots[s], 1);
            char what[80];
            snprintf(what, sizeof what, "a tridiagonal squared, local tables of %s%s", slots[s],
                     groups ? ", groups" : "");
            check_case(ctx, &a, &a, fp64, what);
        }
    unsetenv("CMRSCL_AMG_SPGEMM_GROUPS");
    unsetenv("CMRSCL_AMG_SPGEMM_LANES");
    unsetenv("CMRSCL_AMG_SPGEMM_LOCAL");
    cmrscl_csr_free(&a);
}

static void check_generated(cmrscl_context ctx, bool fp64)
{
    /* (stencil27:8 with a work-group a row: rows of 125 columns, 27 steps of 27 lanes) */
    const char *specs[] = {"stencil7:10", "geo:3000:8", "convdiff:20", "stencil27:8"};
    for (int s = 0; s < 4; ++s) {
        if (s == 3) /* (the others: a work-item a row on a CPU, a work-group on a GPU) */
            setenv("CMRSCL_AMG_SPGEMM_GROUPS", "1", 1);
        else
            unsetenv("CMRSCL_AMG_SPGEMM_GROUPS");
        cmrscl_csr a;
        CHECK_OK(cmrscl_csr_generate(specs[s], &a));
        char what[64];
        snprintf(what, sizeof what, "%s squared", specs[s]);
        check_case(ctx, &a, &a, fp64, what);
        cmrscl_csr t;
        CHECK_OK(cmrscl_csr_transpose(&a, &t));
        snprintf(what, sizeof what, "%s times its transpose", specs[s]);
        check_case(ctx, &a, &t, fp64, what);
        cmrscl_csr_free(&t);
        cmrscl_csr_free(&a);
    }
    /* B's columns repeated: the group fill would race on them, so the work-item's takes it */
    cmrscl_csr a = random_csr(300, 200, 5, 1), b = random_csr(200, 250, 7, 2);
    check_case(ctx, &a, &b, fp64, "random 300 x 200 times 200 x 250, columns unsorted, repeated");
    unsetenv("CMRSCL_AMG_SPGEMM_GROUPS");
    cmrscl_csr_free(&a), cmrscl_csr_free(&b);
}

static void check_small_cases(cmrscl_context ctx, bool fp64)
{
    /* [1 1] [1; -1]: the products cancel, the entry is stored as 0 */
    int64_t ap[] = {0, 2}, bp[] = {0, 1, 2};
    int32_t ac[] = {0, 1}, bc[] = {0, 0};
    double av[] = {1, 1}, bv[] = {1, -1};
    cmrscl_csr a = {1, 2, 2, ap, ac, av}, b = {2, 1, 2, bp, bc, bv}, c = {0};
    CHECK_OK(cmrscl_csr_multiply(ctx, &a, &b, CMRSCL_DOUBLE, NULL, &c, NULL));
    CHECK_MSG(c.nnz == 1 && c.col_ind[0] == 0 && c.values[0] == 0.0,
              "cancelling products: %lld entries, not one 0", (long long)c.nnz);
    cmrscl_csr_free(&c);
    /* no entries in A: C of A's rows and B's columns, empty */
    int64_t zp[] = {0, 0, 0, 0};
    cmrscl_csr z = {3, 2, 0, zp, NULL, NULL};
    cmrscl_multiply_info info;
    CHECK_OK(cmrscl_csr_multiply(ctx, &z, &b, CMRSCL_DOUBLE, NULL, &c, &info));
    CHECK_MSG(c.rows == 3 && c.cols == 1 && c.nnz == 0 && !info.on_device,
              "an empty A: C %d x %d, %lld entries, on the device %d", (int)c.rows, (int)c.cols,
              (long long)c.nnz, info.on_device);
    cmrscl_csr_free(&c);
    /* a row of 1,100 columns: more than a row's table holds, so the host makes C - counted by a
     * work-item, then by a work-group (a GPU's count of rows of many products) */
    cmrscl_csr wide = random_csr(1, 1100, 1100, 3), eye;
    for (int32_t j = 0; j < 1100; ++j)
        wide.col_ind[j] = j;
    CHECK_OK(cmrscl_csr_generate("perm:1100", &eye));
    for (int groups = 0; groups < 2; ++groups) {
        setenv("CMRSCL_AMG_SPGEMM_GROUPS", groups ? "1" : "0", 1);
        CHECK_OK(cmrscl_csr_multiply(ctx, &wide, &eye, CMRSCL_DOUBLE, NULL, &c, &info));
        CHECK_MSG(!info.on_device &&
                      (!fp64 || test_contains(info.reason, "more than 1024 columns")),
                  "a row of 1,100 columns, groups %d: made on the device %d (%s)", groups,
                  info.on_device, info.reason);
        check_product(&wide, &eye, &c, "a row of 1,100 columns");
        cmrscl_csr_free(&c);
    }
    unsetenv("CMRSCL_AMG_SPGEMM_GROUPS");
    cmrscl_csr_free(&wide), cmrscl_csr_free(&eye);
}

static void check_errors(cmrscl_context ctx)
{
    cmrscl_csr a, c;
    cmrscl_matrix m;
    CHECK_OK(cmrscl_csr_generate("stencil5:4", &a));
    CHECK_STATUS(cmrscl_csr_multiply(ctx, NULL, &a, CMRSCL_DOUBLE, NULL, &c, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_csr_multiply(ctx, &a, &a, CMRSCL_DOUBLE, NULL, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "neither c_matrix nor c_csr"));
    CHECK_STATUS(cmrscl_csr_multiply(NULL, &a, &a, CMRSCL_DOUBLE, &m, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "needs a context") && m == NULL);
    CHECK_STATUS(cmrscl_csr_multiply(ctx, &a, &a, (cmrscl_precision)7, &m, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "precision 7"));
    cmrscl_csr b = random_csr(5, 3, 2, 4);
    CHECK_STATUS(cmrscl_csr_multiply(ctx, &a, &b, CMRSCL_DOUBLE, NULL, &c, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "A is 16 x 16 and B 5 x 3"));
    b.col_ind[3] = 3; /* out of range */
    CHECK_STATUS(cmrscl_csr_multiply(ctx, &b, &a, CMRSCL_DOUBLE, NULL, &c, NULL),
                 CMRSCL_ERROR_INVALID_MATRIX);
    CHECK(test_contains(cmrscl_last_error(), "cmrscl_csr_multiply: A: "));
    CHECK_STATUS(cmrscl_csr_multiply(ctx, &a, &b, CMRSCL_DOUBLE, NULL, &c, NULL),
                 CMRSCL_ERROR_INVALID_MATRIX);
    CHECK(test_contains(cmrscl_last_error(), "cmrscl_csr_multiply: B: ") && c.row_ptr == NULL);
    cmrscl_csr_free(&a), cmrscl_csr_free(&b);
}

int main(void)
{
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("multiply");
    cmrscl_device_info di;
    CHECK_OK(cmrscl_context_device_info(ctx, &di));
    bool fp64 = di.fp64 != 0;
    if (!fp64)
        printf("the device has no fp64: the host makes every C, the device's path is not "
               "checked here\n");
    check_generated(ctx, fp64);
    check_local_tables(ctx, fp64);
    check_small_cases(ctx, fp64);
    check_errors(ctx);
    cmrscl_context_free(ctx);
    return test_finish("multiply");
}
