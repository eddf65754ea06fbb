/* test_generate_rows.c - cmrscl_csr_generate_rows: any range of rows of every generated
 * class is those rows of cmrscl_csr_generate's matrix, bit for bit (the ranges of a
 * partition, empty ranges, ranges past the end); the total row count; the limits: a range of
 * a grid whose whole matrix exceeds 32-bit counts, and bad arguments. Kronecker products of
 * real files: every entry against the factors', and the same row ranges. lap:SPEC against
 * SPEC's pattern, entry by entry. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* geo:N:K is a shifted graph Laplacian: symmetric, off-diagonal entries -1, each row summing to
 * the shift 1e-4 K (so the diagonal is the degree plus the shift), a mean degree near K; another
 * seed gives another graph. */
static void check_geo(void)
{
    cmrscl_csr a, other;
    CHECK_OK(cmrscl_csr_generate("geo:4000:8", &a));
    CHECK_OK(cmrscl_csr_generate("geo:4000:8@1", &other));
    int64_t bad = 0, asymmetric = 0;
    for (int32_t i = 0; i < a.rows; ++i) {
        double sum = 0;
        for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            int32_t j = a.col_ind[k];
            sum += a.values[k];
            bad += j != i && a.values[k] != -1.0;
            bool mirrored = false; /* a_ji stored, -1 too */
            for (int64_t q = a.row_ptr[j]; q < a.row_ptr[j + 1]; ++q)
                mirrored = mirrored || (a.col_ind[q] == i && a.values[q] == a.values[k]);
            asymmetric += !mirrored;
        }
        bad += fabs(sum - 8e-4) > 1e-12;
    }
    double degree = (double)(a.nnz - a.rows) / a.rows;
    printf("geo:4000:8: mean degree %.2f, %lld rows or entries off, %lld unmirrored\n", degree,
           (long long)bad, (long long)asymmetric);
    CHECK(bad == 0 && asymmetric == 0 && degree > 0.85 * 8 && degree < 1.15 * 8);
    CHECK(other.nnz != a.nnz || memcmp(other.col_ind, a.col_ind, sizeof(int32_t) * a.nnz) != 0);
    cmrscl_csr_free(&a), cmrscl_csr_free(&other);
}

/* lap:SPEC is SPEC's pattern made a shifted graph Laplacian: a_ij = -1 exactly where SPEC
 * stores (i, j) or (j, i), i != j; the diagonal the row's degree plus 1e-4 times the mean
 * degree; nothing else. Checked against a dense map of SPEC's pattern. */
static void check_lap(const char *spec)
{
    char lap_spec[64];
    snprintf(lap_spec, sizeof lap_spec, "lap:%s", spec);
    cmrscl_csr a, l;
    CHECK_OK(cmrscl_csr_generate(spec, &a));
    CHECK_OK(cmrscl_csr_generate(lap_spec, &l));
    CHECK_OK(cmrscl_csr_validate(&l));
    const int32_t n = a.rows;
    unsigned char *joined = calloc((size_t)n * n, 1);
    CHECK(joined != NULL && l.rows == n && l.cols == n);
    int64_t edges = 0;
    for (int32_t i = 0; i < n; ++i)
        for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
            if (a.col_ind[k] != i)
                joined[(size_t)i * n + a.col_ind[k]] = joined[(size_t)a.col_ind[k] * n + i] = 1;
    for (size_t e = 0; e < (size_t)n * n; ++e)
        edges += joined[e];
    const double shift = 1e-4 * (double)edges / n;
    int64_t bad = 0, longest = 0;
    for (int32_t i = 0; i < n; ++i) {
        int64_t degree = 0, seen = 0;
        for (int32_t j = 0; j < n; ++j)
            degree += joined[(size_t)i * n + j];
        longest = degree > longest ? degree : longest;
        for (int64_t k = l.row_ptr[i]; k < l.row_ptr[i + 1]; ++k) {
            int32_t j = l.col_ind[k];
            if (j == i)
                bad += fabs(l.values[k] - ((double)degree + shift)) > 1e-12;
            else
                bad += !joined[(size_t)i * n + j] || l.values[k] != -1.0, ++seen;
        }
        bad += seen != degree;
    }
    printf("%s: %d rows, %lld entries, longest row %lld entries; %lld rows or entries off\n",
           lap_spec, n, (long long)l.nnz, (long long)longest + 1, (long long)bad);
    CHECK(bad == 0 && l.nnz == edges + n);
    free(joined);
    cmrscl_csr_free(&a), cmrscl_csr_free(&l);
}

/* prefix A.mtx:A.mtx, A a Matrix Market file of `entries` (its size line and entries): the
 * status of generating it. */
static void check_file_spec(const char *entries, const char *prefix, cmrscl_status want)
{
    char path[64], spec[160];
    snprintf(path, sizeof path, "/tmp/cmrscl-kron-%d.mtx", (int)getpid());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%s", entries);
    fclose(f);
    snprintf(spec, sizeof spec, "%s%s:%s", prefix, path, path);
    cmrscl_csr a;
    CHECK_STATUS(cmrscl_csr_generate(spec, &a), want);
    remove(path);
}

static void check_spec(const char *spec)
{
    cmrscl_csr whole, part;
    CHECK_OK(cmrscl_csr_generate(spec, &whole));
    /* The size without building: the shape exactly, the entries exactly where the class fixes
     * them (stencils, fem, perm, dense), else the expected count the build comes near (the
     * random rows' lengths, rmat's duplicate edges merged): within a third of it. */
    int64_t sized_rows = -1, sized_cols = -1, entries = -1;
    bool exact = strncmp(spec, "random", 6) && strncmp(spec, "rmat", 4) &&
                 strncmp(spec, "skewed", 6) && strncmp(spec, "geo", 3);
    if (strncmp(spec, "kron:", 5) != 0 && strncmp(spec, "lap:", 4) != 0) {
        CHECK_OK(cmrscl_csr_generate_size(spec, &sized_rows, &sized_cols, &entries));
        CHECK_MSG(sized_rows == whole.rows && sized_cols == whole.cols &&
                      (exact
                           ? entries == whole.nnz
                           : whole.nnz <= entries * 4 / 3 + 8 && whole.nnz >= entries * 2 / 3 - 8),
                  "%s: sized %lld x %lld, %lld entries; built %d x %d, %lld", spec,
                  (long long)sized_rows, (long long)sized_cols, (long long)entries, whole.rows,
                  whole.cols, (long long)whole.nnz);
    }
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

/* Every entry of kron(A, B) is a_ij b_kl at (i*rb + k, j*cb + l), and nothing else. */
static void check_kron(const char *file_a, const char *file_b)
{
    cmrscl_csr a, b, c;
    char path_a[1024], path_b[1024], spec[2100];
    snprintf(path_a, sizeof path_a, "%s", test_shared_matrix(file_a));
    snprintf(path_b, sizeof path_b, "%s", test_shared_matrix(file_b));
    snprintf(spec, sizeof spec, "kron:%s:%s", path_a, path_b);
    CHECK_OK(cmrscl_mtx_read(path_a, NULL, &a));
    CHECK_OK(cmrscl_mtx_read(path_b, NULL, &b));
    CHECK_OK(cmrscl_csr_generate(spec, &c));
    CHECK(c.rows == a.rows * b.rows && c.cols == a.cols * b.cols && c.nnz == a.nnz * b.nnz);
    int64_t bad = 0;
    for (int32_t i = 0; i < a.rows; ++i)
        for (int32_t k = 0; k < b.rows; ++k) {
            int64_t row = (int64_t)i * b.rows + k, e = c.row_ptr[row];
            for (int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
                for (int64_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q, ++e)
                    bad += c.col_ind[e] != a.col_ind[p] * b.cols + b.col_ind[q] ||
                           c.values[e] != a.values[p] * b.values[q];
            bad += e != c.row_ptr[row + 1];
        }
    CHECK_MSG(bad == 0 && cmrscl_csr_validate(&c) == CMRSCL_OK, "%s: %lld wrong entries or rows",
              spec, (long long)bad);
    cmrscl_csr_free(&a), cmrscl_csr_free(&b), cmrscl_csr_free(&c);
    check_spec(spec);
}

int main(void)
{
    check_kron("west0479.mtx", "lp_ship04l.mtx"); /* square (x) wide */
    check_kron("illc1850.mtx", "1138_bus.mtx");   /* tall (x) symmetric */
    cmrscl_csr a;
    char spec[2100];
    snprintf(spec, sizeof spec, "kron:%s:%s", test_shared_matrix("cage8.mtx"), "missing.mtx");
    CHECK_STATUS(cmrscl_csr_generate(spec, &a), CMRSCL_ERROR_FILE_IO);
    CHECK_STATUS(cmrscl_csr_generate("kron:a.txt:b.mtx", &a), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_csr_generate("kron:a.mtx", &a), CMRSCL_ERROR_INVALID_ARGUMENT);
    /* 60,000^2 rows: past 32-bit row indices, refused before any entry is built; a 2 x 3
     * factor: no graph Laplacian of its pattern */
    check_file_spec("60000 60000 1\n1 1 1.0\n", "kron:", CMRSCL_ERROR_TOO_LARGE);
    check_file_spec("2 3 1\n1 3 1.0\n", "lap:kron:", CMRSCL_ERROR_INVALID_ARGUMENT);

    /* Sized, not built: too many rows, a malformed spec, kron (its factors must be read). */
    int64_t r, c, e;
    CHECK_STATUS(cmrscl_csr_generate_size("stencil27:1291", &r, &c, &e), CMRSCL_ERROR_TOO_LARGE);
    CHECK_OK(cmrscl_csr_generate_size("stencil27:1000", &r, &c, &e));
    CHECK(r == 1000000000 && e == 2998LL * 2998 * 2998);
    CHECK_STATUS(cmrscl_csr_generate_size("stencil7:x", &r, &c, &e), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_csr_generate_size("kron:a.mtx:b.mtx", &r, &c, &e),
                 CMRSCL_ERROR_UNSUPPORTED);
    CHECK_STATUS(cmrscl_csr_generate_size("lap:rmat:8:4", &r, &c, &e), CMRSCL_ERROR_UNSUPPORTED);
    const char *specs[] = {"stencil5:7",     "stencil7:5", "stencil27:6",       "convdiff:6",
                           "random:300:4@3", "perm:100",   "dense:9",           "rmat:8:4",
                           "fem:3:2",        "fem:4:1",    "skewed:200:3:2:50", "geo:500:6",
                           "lap:rmat:8:4"};
    for (size_t i = 0; i < sizeof specs / sizeof *specs; ++i)
        check_spec(specs[i]);

    check_geo();
    /* power-law hubs, long rows, rows with and without a diagonal in the pattern */
    check_lap("rmat:9:8");
    check_lap("skewed:600:2:3:400");
    check_lap("random:500:3@2");
    check_lap("perm:300");
    CHECK_STATUS(cmrscl_csr_generate("lap:stencil7:x", &a), CMRSCL_ERROR_INVALID_ARGUMENT);

    /* stencil27:700 has 9.1e9 entries (more than this machine holds): a range is built
     * without the rest. */
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
