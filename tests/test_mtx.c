/* test_mtx.c - the Matrix Market reader and writer: exact CSR for tiny hand-checked
 * files, a table of malformed files with the status and message each must give, the
 * SuiteSparse files against an independent reader, write -> read round trips (plain and
 * gzip), memory buffers, hostile sizes, long lines, and correctly rounded values. */
#include "internal.h"
#include "test_util.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_LINE (1 << 20) /* the reader's documented line limit */

/* ---- scratch files in a private temporary directory ---- */

static char tmp_dir[64];
static char tmp_names[64][256];
static int tmp_count;

/* A path in the scratch directory, remembered for the cleanup (each call its own). */
static const char *tmp_path(const char *name)
{
    static char overflow[256];
    char *buf = tmp_count < 64 ? tmp_names[tmp_count++] : overflow;
    snprintf(buf, sizeof overflow, "%s/%s", tmp_dir, name);
    return buf;
}

static void tmp_cleanup(void)
{
    for (int i = 0; i < tmp_count; ++i)
        unlink(tmp_names[i]);
    rmdir(tmp_dir);
}

static bool write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, size, f) == size;
    return (f && fclose(f) == 0) && ok;
}

/* The whole file in a malloc'ed buffer (NUL-terminated), or NULL. */
static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *size = n;
    return buf;
}

static bool gzip_file(const char *path, const void *data, size_t size)
{
    gzFile gz = gzopen(path, "wb9");
    if (!gz)
        return false;
    bool ok = gzwrite(gz, data, (unsigned)size) == (int)size;
    return gzclose(gz) == Z_OK && ok;
}

/* ---- comparing CSR ---- */

static bool same_csr(const cmrscl_csr *a, const cmrscl_csr *b)
{
    return a->rows == b->rows && a->cols == b->cols && a->nnz == b->nnz &&
           memcmp(a->row_ptr, b->row_ptr, sizeof(int32_t) * ((size_t)a->rows + 1)) == 0 &&
           (a->nnz == 0 || (memcmp(a->col_ind, b->col_ind, sizeof(int32_t) * (size_t)a->nnz) == 0 &&
                            memcmp(a->values, b->values, sizeof(double) * (size_t)a->nnz) == 0));
}

typedef struct expected_csr {
    const char *file;
    int32_t rows, cols, nnz;
    int32_t row_ptr[8], col_ind[8];
    double values[8];
} expected_csr;

/* Each one worked out by hand from the file's text. */
static const expected_csr good_files[] = {
    {"general.mtx", 4, 5, 6, {0, 2, 4, 4, 6}, {0, 2, 1, 3, 0, 4}, {1.5, 3, 0.5, 0, 0.7, -22.5}},
    {"symmetric.mtx", 3, 3, 6, {0, 3, 4, 6}, {0, 1, 2, 0, 0, 2}, {2, -1, 5, -1, 5, 4}},
    {"skew.mtx", 3, 3, 4, {0, 1, 3, 4}, {1, 0, 2, 1}, {-1.5, 1.5, 2, -2}},
    {"pattern.mtx", 3, 3, 3, {0, 1, 1, 3}, {1, 0, 2}, {1, 1, 1}},
    {"pattern_symmetric.mtx", 3, 3, 5, {0, 2, 4, 5}, {0, 1, 0, 2, 1}, {1, 1, 1, 1, 1}},
    {"integer.mtx", 2, 3, 3, {0, 2, 3}, {0, 2, 1}, {-7, 12, 0}},
    {"tall.mtx", 5, 2, 2, {0, 0, 1, 1, 1, 2}, {1, 0}, {1, 2}},
    {"duplicates.mtx", 2, 2, 2, {0, 1, 2}, {1, 0}, {3.5, 0}},
    {"crlf.mtx", 2, 2, 2, {0, 1, 2}, {0, 1}, {1.25, -4}},
    {"mixed_case.mtx", 1, 1, 1, {0, 1}, {0}, {3}},
    {"no_final_newline.mtx", 2, 2, 1, {0, 0, 1}, {0}, {9}},
    {"empty_matrix.mtx", 0, 0, 0, {0}, {0}, {0}},
    {"no_entries.mtx", 3, 3, 0, {0, 0, 0, 0}, {0}, {0}},
};

static bool matches(const cmrscl_csr *a, const expected_csr *e)
{
    int32_t *row_ptr = (int32_t *)e->row_ptr, *col_ind = (int32_t *)e->col_ind;
    cmrscl_csr want = {e->rows, e->cols, e->nnz, row_ptr, col_ind, (double *)e->values};
    return same_csr(a, &want);
}

static void test_good_files(void)
{
    char rel[256];
    for (size_t i = 0; i < sizeof good_files / sizeof *good_files; ++i) {
        const expected_csr *e = &good_files[i];
        snprintf(rel, sizeof rel, "mtx/good/%s", e->file);
        cmrscl_csr a;
        cmrscl_status st = cmrscl_mtx_read(test_data(rel), NULL, &a);
        CHECK_MSG(st == CMRSCL_OK, "%s: %s (%s)", e->file, cmrscl_status_name(st),
                  cmrscl_last_error());
        CHECK_MSG(st != CMRSCL_OK || matches(&a, e), "%s: wrong CSR", e->file);
        cmrscl_csr_free(&a);
    }
}

static void test_nan_inf(void)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_mtx_read(test_data("mtx/good/nan_inf.mtx"), NULL, &a));
    CHECK(a.nnz == 6);
    if (a.nnz != 6) {
        cmrscl_csr_free(&a);
        return;
    }
    const double *v = a.values;
    CHECK(isnan(v[0]));
    CHECK(isinf(v[1]) && v[1] > 0);
    CHECK(isinf(v[2]) && v[2] < 0);
    CHECK(isinf(v[3]) && v[3] > 0);
    CHECK(isnan(v[4]) && signbit(v[4]));
    CHECK(v[5] == 0.0 && signbit(v[5]));
    cmrscl_csr_free(&a);
}

/* ---- malformed files ---- */

typedef struct bad_case {
    const char *file;
    cmrscl_status status;
    const char *message; /* a substring of cmrscl_last_error() */
} bad_case;

static const bad_case bad_files[] = {
    {"empty.mtx", CMRSCL_ERROR_PARSE, "empty.mtx: empty file"},
    {"blank_only.mtx", CMRSCL_ERROR_PARSE, "blank_only.mtx: empty file"},
    {"no_banner.mtx", CMRSCL_ERROR_PARSE, "no_banner.mtx:1: missing %%MatrixMarket banner"},
    {"banner_short.mtx", CMRSCL_ERROR_PARSE, "banner_short.mtx:1: bad banner (symmetry)"},
    {"banner_typo.mtx", CMRSCL_ERROR_PARSE, "banner_typo.mtx:1: unknown field 'reel'"},
    {"banner_extra.mtx", CMRSCL_ERROR_PARSE, "banner_extra.mtx:1: bad banner (text after"},
    {"array.mtx", CMRSCL_ERROR_UNSUPPORTED, "array.mtx:1: dense array format not supported"},
    {"complex.mtx", CMRSCL_ERROR_UNSUPPORTED, "complex.mtx:1: complex values"},
    {"hermitian.mtx", CMRSCL_ERROR_UNSUPPORTED, "hermitian.mtx:1: hermitian"},
    {"vector.mtx", CMRSCL_ERROR_UNSUPPORTED, "vector.mtx:1: vector objects"},
    {"pattern_skew.mtx", CMRSCL_ERROR_UNSUPPORTED, "pattern_skew.mtx:1: pattern skew-symmetric"},
    {"no_size.mtx", CMRSCL_ERROR_PARSE, "no_size.mtx:4: missing size line"},
    {"size_short.mtx", CMRSCL_ERROR_PARSE, "size_short.mtx:2: bad size line"},
    {"size_junk.mtx", CMRSCL_ERROR_PARSE, "size_junk.mtx:2: bad size line"},
    {"size_word.mtx", CMRSCL_ERROR_PARSE, "size_word.mtx:2: bad size line"},
    {"size_negative.mtx", CMRSCL_ERROR_PARSE, "size_negative.mtx:2: negative size"},
    {"size_huge_rows.mtx", CMRSCL_ERROR_TOO_LARGE, "size_huge_rows.mtx:2: size 3000000000 x 2"},
    {"size_huge_entries.mtx", CMRSCL_ERROR_TOO_LARGE, "with 3000000000 entries exceeds"},
    {"size_overflow.mtx", CMRSCL_ERROR_TOO_LARGE,
     ":2: size 2 x 2 with 99999999999999999999999 entries"},
    {"symmetric_not_square.mtx", CMRSCL_ERROR_PARSE, ":2: a symmetric matrix must be square"},
    {"bad_index.mtx", CMRSCL_ERROR_PARSE, "bad_index.mtx:5: row index 0 out of range 1..5"},
    {"negative_index.mtx", CMRSCL_ERROR_PARSE, ":4: column index -1 out of range 1..5"},
    {"row_too_big.mtx", CMRSCL_ERROR_PARSE, "row_too_big.mtx:4: row index 6 out of range 1..5"},
    {"col_too_big.mtx", CMRSCL_ERROR_PARSE, ":3: column index 5 out of range 1..4"},
    {"index_overflow.mtx", CMRSCL_ERROR_PARSE, ":3: row index 99999999999999999999999 out of"},
    {"truncated.mtx", CMRSCL_ERROR_PARSE,
     "truncated.mtx:4: truncated file: it ends after 2 of the 3 declared entries"},
    {"hostile_count.mtx", CMRSCL_ERROR_PARSE, "hostile_count.mtx:2: truncated file"},
    {"too_many.mtx", CMRSCL_ERROR_PARSE, "too_many.mtx:4: more entries than the 1 declared"},
    {"junk_index.mtx", CMRSCL_ERROR_PARSE, "junk_index.mtx:3: bad column index 'x'"},
    {"real_index.mtx", CMRSCL_ERROR_PARSE, "real_index.mtx:3: bad row index '1.0'"},
    {"trailing_garbage.mtx", CMRSCL_ERROR_PARSE, ":3: unexpected '1' after the entry"},
    {"value_junk.mtx", CMRSCL_ERROR_PARSE, "value_junk.mtx:4: bad value '2;'"},
    {"missing_value.mtx", CMRSCL_ERROR_PARSE, "missing_value.mtx:3: missing value"},
    {"missing_column.mtx", CMRSCL_ERROR_PARSE, "missing_column.mtx:3: missing column index"},
    {"bad_value.mtx", CMRSCL_ERROR_PARSE, "bad_value.mtx:3: bad value '1.2.3'"},
    {"bad_exponent.mtx", CMRSCL_ERROR_PARSE, "bad_exponent.mtx:3: bad value '1e'"},
    {"hex_junk.mtx", CMRSCL_ERROR_PARSE, "hex_junk.mtx:3: bad value '0x'"},
    {"hex_value.mtx", CMRSCL_ERROR_PARSE, "hex_value.mtx:3: bad value '0x1p3'"},
    {"integer_fraction.mtx", CMRSCL_ERROR_PARSE, ":4: non-integer value '1.5' in an integer"},
    {"pattern_value.mtx", CMRSCL_ERROR_PARSE, "pattern_value.mtx:3: unexpected '1.0'"},
    {"skew_diagonal.mtx", CMRSCL_ERROR_PARSE, ":4: diagonal entry (2, 2) in a skew-symmetric"},
    {"binary.mtx", CMRSCL_ERROR_PARSE, "binary.mtx:1: missing %%MatrixMarket banner"},
    {"binary_value.mtx", CMRSCL_ERROR_PARSE, "binary_value.mtx:3: bad value '\?\?\?\?'"},
    {"nul_in_line.mtx", CMRSCL_ERROR_PARSE, "nul_in_line.mtx:3: bad row index '1?1'"},
    {"corrupt.mtx.gz", CMRSCL_ERROR_PARSE,
     "corrupt.mtx.gz: corrupt gzip data (invalid block type)"},
    {"truncated.mtx.gz", CMRSCL_ERROR_PARSE, "truncated.mtx.gz: truncated gzip data"},
};

/* Every failure leaves the output zeroed, as the API promises. */
static bool is_zeroed(const cmrscl_csr *a)
{
    return !a->rows && !a->cols && !a->nnz && !a->row_ptr && !a->col_ind && !a->values;
}

static void check_failure(const char *what, cmrscl_status got, const cmrscl_csr *a,
                          cmrscl_status want, const char *message)
{
    CHECK_MSG(got == want, "%s: got %s, expected %s (%s)", what, cmrscl_status_name(got),
              cmrscl_status_name(want), cmrscl_last_error());
    CHECK_MSG(test_contains(cmrscl_last_error(), message), "%s: message '%s' lacks '%s'", what,
              cmrscl_last_error(), message);
    CHECK_MSG(is_zeroed(a), "%s: output not zeroed after a failure", what);
}

static void test_bad_files(void)
{
    char rel[256];
    for (size_t i = 0; i < sizeof bad_files / sizeof *bad_files; ++i) {
        const bad_case *b = &bad_files[i];
        snprintf(rel, sizeof rel, "mtx/bad/%s", b->file);
        cmrscl_csr a;
        cmrscl_status st = cmrscl_mtx_read(test_data(rel), NULL, &a);
        check_failure(b->file, st, &a, b->status, b->message);
        cmrscl_csr_free(&a);
        /* The same text from memory must give the same verdict. */
        size_t size;
        char *text = slurp(test_data(rel), &size);
        CHECK_MSG(text != NULL, "cannot read %s", rel);
        st = mtx_read_memory(text, size, b->file, &a);
        check_failure(b->file, st, &a, b->status, b->message);
        cmrscl_csr_free(&a);
        free(text);
    }
}

/* ---- the file system ---- */

static void test_file_errors(void)
{
    cmrscl_csr a;
    const char *missing = tmp_path("no_such_file.mtx");
    cmrscl_status st = cmrscl_mtx_read(missing, NULL, &a);
    check_failure("missing file", st, &a, CMRSCL_ERROR_FILE_IO, missing);
    CHECK(test_contains(cmrscl_last_error(), strerror(ENOENT)));

    st = cmrscl_mtx_read(test_data("mtx"), NULL, &a);
    check_failure("directory", st, &a, CMRSCL_ERROR_FILE_IO, strerror(EISDIR));

    CHECK_STATUS(cmrscl_mtx_read(NULL, NULL, &a), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_mtx_read(missing, NULL, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);

    /* Root reads any file whatever its mode, so the check means nothing there. */
    if (geteuid() == 0) {
        printf("mtx: permission-denied check skipped (running as root)\n");
        return;
    }
    const char *locked = tmp_path("locked.mtx");
    const char text[] = "%%MatrixMarket matrix coordinate real general\n1 1 0\n";
    CHECK(write_file(locked, text, sizeof text - 1) && chmod(locked, 0) == 0);
    st = cmrscl_mtx_read(locked, NULL, &a);
    check_failure("permission denied", st, &a, CMRSCL_ERROR_FILE_IO, strerror(EACCES));
    CHECK(test_contains(cmrscl_last_error(), locked));
}

/* ---- gzip: files, memory, several members, damage ---- */

static void test_gzip(void)
{
    size_t size;
    char *text = slurp(test_data("mtx/good/general.mtx"), &size);
    CHECK(text != NULL);
    if (!text)
        return;
    const char *gz_path = tmp_path("general.mtx.gz");
    CHECK(gzip_file(gz_path, text, size));

    cmrscl_csr a, b;
    CHECK_OK(cmrscl_mtx_read(gz_path, NULL, &a));
    CHECK(matches(&a, &good_files[0]));
    cmrscl_csr_free(&a);

    size_t gz_size;
    unsigned char *gz = (unsigned char *)slurp(gz_path, &gz_size);
    CHECK(gz && gz_size > 20);
    CHECK_OK(mtx_read_memory(gz, gz_size, "general.mtx.gz", &a));
    CHECK(matches(&a, &good_files[0]));
    CHECK_OK(mtx_read_memory(text, size, "general.mtx", &b));
    CHECK(same_csr(&a, &b));
    cmrscl_csr_free(&a);
    cmrscl_csr_free(&b);

    /* gzip allows several members back to back; split the text at a line boundary. */
    const char *cut = strstr(text, "\n2 4 0") + 1;
    const char *multi_path = tmp_path("multi.mtx.gz");
    gzip_file(multi_path, text, (size_t)(cut - text));
    size_t first_size;
    char *first = slurp(multi_path, &first_size);
    gzip_file(multi_path, cut, size - (size_t)(cut - text));
    size_t second_size;
    char *second = slurp(multi_path, &second_size);
    char *both = malloc(first_size + second_size);
    memcpy(both, first, first_size);
    memcpy(both + first_size, second, second_size);
    CHECK_OK(mtx_read_memory(both, first_size + second_size, "multi.mtx.gz", &a));
    CHECK(matches(&a, &good_files[0]));
    cmrscl_csr_free(&a);
    CHECK(write_file(multi_path, both, first_size + second_size));
    CHECK_OK(cmrscl_mtx_read(multi_path, NULL, &a));
    CHECK(matches(&a, &good_files[0]));
    cmrscl_csr_free(&a);

    /* Damage: cut short, and a wrong CRC in the trailer (last 8 bytes: CRC32, size). */
    CHECK_STATUS(mtx_read_memory(gz, gz_size - 12, "cut.gz", &a), CMRSCL_ERROR_PARSE);
    CHECK(test_contains(cmrscl_last_error(), "cut.gz: truncated gzip data"));
    gz[gz_size - 8] ^= 0x55;
    CHECK_STATUS(mtx_read_memory(gz, gz_size, "crc.gz", &a), CMRSCL_ERROR_PARSE);
    CHECK(test_contains(cmrscl_last_error(), "crc.gz: corrupt gzip data"));
    const char *bad_crc = tmp_path("crc.mtx.gz");
    CHECK(write_file(bad_crc, gz, gz_size));
    CHECK_STATUS(cmrscl_mtx_read(bad_crc, NULL, &a), CMRSCL_ERROR_PARSE);
    CHECK(test_contains(cmrscl_last_error(), "gzip"));
    free(first), free(second), free(both), free(gz), free(text);
}

/* ---- long lines and hostile sizes ---- */

/* A banner, a comment line of exactly `comment` bytes, then a valid 1 x 1 matrix. */
static char *long_comment_file(size_t comment, size_t *size)
{
    const char head[] = "%%MatrixMarket matrix coordinate real general\n";
    const char tail[] = "\n1 1 1\n1 1 2\n";
    *size = sizeof head - 1 + comment + sizeof tail - 1;
    char *text = malloc(*size);
    memcpy(text, head, sizeof head - 1);
    memset(text + sizeof head - 1, 'x', comment);
    text[sizeof head - 1] = '%';
    memcpy(text + sizeof head - 1 + comment, tail, sizeof tail - 1);
    return text;
}

static void test_long_lines(void)
{
    size_t size;
    cmrscl_csr a;
    char *ok = long_comment_file(MAX_LINE, &size);
    CHECK_OK(mtx_read_memory(ok, size, "longest.mtx", &a));
    CHECK(a.nnz == 1 && a.values[0] == 2.0);
    cmrscl_csr_free(&a);
    const char *path = tmp_path("longest.mtx");
    CHECK(write_file(path, ok, size));
    CHECK_OK(cmrscl_mtx_read(path, NULL, &a));
    CHECK(a.nnz == 1);
    cmrscl_csr_free(&a);
    free(ok);

    char *bad = long_comment_file(MAX_LINE + 1, &size);
    CHECK_STATUS(mtx_read_memory(bad, size, "too_long.mtx", &a), CMRSCL_ERROR_PARSE);
    CHECK(test_contains(cmrscl_last_error(), "too_long.mtx:2: line 2 is longer than 1048576"));
    path = tmp_path("too_long.mtx");
    CHECK(write_file(path, bad, size));
    CHECK_STATUS(cmrscl_mtx_read(path, NULL, &a), CMRSCL_ERROR_PARSE);
    CHECK(test_contains(cmrscl_last_error(), "line 2 is longer than 1048576 bytes"));
    free(bad);
    /* Far longer, with no newline at all: must stop at the limit, not keep growing. */
    bad = long_comment_file(8 * MAX_LINE, &size);
    CHECK_STATUS(mtx_read_memory(bad, size, "huge_line.mtx", &a), CMRSCL_ERROR_PARSE);
    CHECK(test_contains(cmrscl_last_error(), "line 2 is longer"));
    free(bad);
}

static void test_hostile_header(void)
{
    static const char *const texts[] = {
        "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 2000000000\n",
        ("%%MatrixMarket matrix coordinate real symmetric\n2147483647 2147483647 2147483647\n"
         "1 1 1\n2 1 1\n"),
        "%%MatrixMarket matrix coordinate pattern general\n5 5 2147483647\n1 1\n",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; ++i) {
        cmrscl_csr a;
        double t0 = cmrscl_seconds();
        cmrscl_status st = mtx_read_memory(texts[i], strlen(texts[i]), "hostile.mtx", &a);
        double t = cmrscl_seconds() - t0;
        check_failure("hostile header", st, &a, CMRSCL_ERROR_PARSE, "truncated file");
        CHECK_MSG(t < 0.5, "hostile header %zu took %.3f s", i, t);
    }
}

/* ---- values: correctly rounded, like strtod ---- */

/* clang-format off */ /* a table, packed by hand */
static const char *const hard_values[] = {
    "0.1", "-0.0", "+5", "1e22", "1e23", "9007199254740992", "9007199254740993",
    "123456789012345678901234567890", "0.000000000000000000000000000001",
    "1.00000000000000000000000000000000001", "2.2250738585072011e-308",
    "2.2250738585072014e-308", "4.9e-324", "2.4e-324", "1e-400", "1e400",
    "1.7976931348623157e308", "1.7976931348623159e308", "8.98846567431158e307",
    "3.141592653589793238462643383279", "1.", ".5", "00012.50", "1E5", "1e+05", "1e-05",
    "0e999999999999", "12345678901234567e-22", "1234567890123456789e3", "4503599627370497.5",
};
/* clang-format on */

/* Random numbers of four kinds: free-form decimals (1..25 digits, the point anywhere,
 * often an exponent), doubles printed with 17 digits as writers do, decimals within a
 * hair of the midpoint between two doubles, and integers exactly on such a midpoint
 * (where the round-half-even rule decides). */
static void random_decimal(char *out, int kind)
{
    if (kind == 1) {
        sprintf(out, "%.17g", test_uniform(-1, 1) * pow(10, (int)test_uniform(-30, 30)));
        return;
    }
    if (kind == 2) {
        double d = ldexp(test_uniform(0.5, 1), (int)test_uniform(-80, 80));
        long double mid = ((long double)d + (long double)nextafter(d, INFINITY)) / 2;
        sprintf(out, "%.*Le", 16 + (int)test_uniform(0, 4), mid);
        return;
    }
    if (kind == 3) {
        uint64_t odd = 2 * (uint64_t)test_uniform(0, 1e15) + 1;
        sprintf(out, "%llu", (unsigned long long)((UINT64_C(1) << 53) + odd));
        return;
    }
    char *p = out;
    if (test_uniform(0, 1) < 0.3)
        *p++ = '-';
    int digits = 1 + (int)test_uniform(0, 25);
    int point = (int)test_uniform(0, digits + 1);
    for (int i = 0; i < digits; ++i) {
        if (i == point)
            *p++ = '.';
        *p++ = (char)('0' + (int)test_uniform(0, 10));
    }
    double exponent = test_uniform(0, 1);
    if (exponent < 0.4)
        p += sprintf(p, "e%d", (int)test_uniform(-30, 31));
    else if (exponent < 0.6)
        p += sprintf(p, "e%d", (int)test_uniform(-340, 341));
    *p = '\0';
}

static void test_values(void)
{
    enum { N = 40000 };
    size_t hard = sizeof hard_values / sizeof *hard_values;
    static char words[N][48];
    for (size_t k = 0; k < N; ++k) {
        if (k < hard)
            snprintf(words[k], sizeof words[k], "%s", hard_values[k]);
        else
            random_decimal(words[k], (int)(k % 4));
    }
    size_t cap = (size_t)N * 64 + 128, len = 0;
    char *text = malloc(cap);
    len +=
        (size_t)sprintf(text, "%%%%MatrixMarket matrix coordinate real general\n1 %d %d\n", N, N);
    for (size_t k = 0; k < N; ++k)
        len += (size_t)sprintf(text + len, "1 %zu %s\n", k + 1, words[k]);
    cmrscl_csr a;
    CHECK_OK(mtx_read_memory(text, len, "values.mtx", &a));
    int wrong = 0;
    for (size_t k = 0; k < N && a.nnz == N; ++k) {
        double want = strtod(words[k], NULL);
        if (memcmp(&want, &a.values[k], sizeof want) != 0 && wrong++ < 5)
            test_fail(__FILE__, __LINE__, "'%s' read as %.17g, strtod gives %.17g", words[k],
                      a.values[k], want);
    }
    CHECK(a.nnz == N && wrong == 0);
    cmrscl_csr_free(&a);
    free(text);
}

/* ---- the SuiteSparse files against an independent reader ---- */

typedef struct reference {
    char field[32], symmetry[32];
    long rows, cols, entries, diagonal;
    double sum, magnitude; /* of all values after expansion */
} reference;

/* A deliberately simple reader (fgets + sscanf) that shares nothing with the parser. */
static bool reference_read(const char *path, reference *r)
{
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "r");
    char line[4096];
    if (!f)
        return false;
    if (!fgets(line, sizeof line, f) ||
        sscanf(line, "%%%%MatrixMarket matrix coordinate %31s %31s", r->field, r->symmetry) != 2) {
        fclose(f);
        return false;
    }
    bool general = strcmp(r->symmetry, "general") == 0;
    bool skew = strcmp(r->symmetry, "skew-symmetric") == 0;
    bool size_seen = false;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '%' || line[strspn(line, " \t\r\n")] == '\0')
            continue;
        if (!size_seen) {
            size_seen = sscanf(line, "%ld %ld %ld", &r->rows, &r->cols, &r->entries) == 3;
            continue;
        }
        long i, j;
        double v = 1.0;
        if (sscanf(line, "%ld %ld %lf", &i, &j, &v) < 2)
            break;
        double copies = general || i == j ? 1.0 : skew ? 0.0 : 2.0;
        r->diagonal += i == j;
        r->sum += copies * v;
        r->magnitude += (general || i == j ? 1.0 : 2.0) * fabs(v);
    }
    fclose(f);
    return size_seen;
}

/* From tests/data/suitesparse/README.md. */
static const struct {
    const char *file;
    int32_t rows, cols, entries;
} shared[] = {
    {"1138_bus.mtx", 1138, 1138, 2596},   {"west0479.mtx", 479, 479, 1910},
    {"cage8.mtx", 1015, 1015, 11003},     {"lp_ship04l.mtx", 402, 2166, 6380},
    {"illc1850.mtx", 1850, 712, 8758},    {"Trefethen_2000.mtx", 2000, 2000, 21953},
    {"commanche.mtx", 7920, 7920, 19800}, {"rajat01.mtx", 6833, 6833, 43250},
};

static bool canonical(const cmrscl_csr *a)
{
    for (int32_t i = 0; i < a->rows; ++i)
        for (int32_t k = a->row_ptr[i] + 1; k < a->row_ptr[i + 1]; ++k)
            if (a->col_ind[k] <= a->col_ind[k - 1])
                return false;
    return true;
}

static double value_sum(const cmrscl_csr *a)
{
    double s = 0.0;
    for (int32_t k = 0; k < a->nnz; ++k)
        s += a->values[k];
    return s;
}

/* write -> read gives the same arrays, plain and gzip-compressed. */
static void check_round_trip(const char *name, const cmrscl_csr *a)
{
    static const char *const suffixes[] = {".out.mtx", ".out.mtx.gz"};
    char file[160];
    for (int s = 0; s < 2; ++s) {
        snprintf(file, sizeof file, "%s%s", name, suffixes[s]);
        const char *path = tmp_path(file);
        cmrscl_csr b;
        CHECK_OK(cmrscl_mtx_write(path, a));
        CHECK_OK(cmrscl_mtx_read(path, NULL, &b));
        CHECK_MSG(same_csr(a, &b), "%s: round trip through %s changed the matrix", name, file);
        cmrscl_csr_free(&b);
        size_t size;
        unsigned char *bytes = (unsigned char *)slurp(path, &size);
        bool gz = bytes && size > 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
        CHECK_MSG(gz == (s == 1), "%s: gzip-compressed %s", file, gz ? "wrongly" : "not");
        free(bytes);
    }
}

static void test_shared_matrices(void)
{
    for (size_t i = 0; i < sizeof shared / sizeof *shared; ++i) {
        const char *path = test_shared_matrix(shared[i].file);
        char path_copy[4096];
        snprintf(path_copy, sizeof path_copy, "%s", path);
        reference r;
        CHECK_MSG(reference_read(path_copy, &r), "%s: reference reader failed", path_copy);
        CHECK(r.rows == shared[i].rows && r.cols == shared[i].cols &&
              r.entries == shared[i].entries);
        long nnz = strcmp(r.symmetry, "general") == 0 ? r.entries : 2 * r.entries - r.diagonal;
        cmrscl_csr a;
        cmrscl_status st = cmrscl_mtx_read(path_copy, NULL, &a);
        CHECK_MSG(st == CMRSCL_OK, "%s: %s", path_copy, cmrscl_last_error());
        if (st != CMRSCL_OK)
            continue;
        CHECK_MSG(a.rows == r.rows && a.cols == r.cols && a.nnz == nnz,
                  "%s: %d x %d, nnz %d; expected %ld x %ld, nnz %ld", shared[i].file, a.rows,
                  a.cols, a.nnz, r.rows, r.cols, nnz);
        CHECK_OK(cmrscl_csr_validate(&a));
        CHECK_MSG(canonical(&a), "%s: not canonical", shared[i].file);
        CHECK_MSG(fabs(value_sum(&a) - r.sum) <= 1e-12 * (r.magnitude + 1.0),
                  "%s: value sum %.17g, expected %.17g", shared[i].file, value_sum(&a), r.sum);
        check_round_trip(shared[i].file, &a);
        cmrscl_csr_free(&a);
    }
}

/* ---- progress reports ---- */

typedef struct progress_log {
    int calls;
    bool monotonic;
    uint64_t last, total;
} progress_log;

static void record_progress(void *user, uint64_t done, uint64_t total)
{
    progress_log *log = user;
    log->monotonic &= log->calls == 0 || (done >= log->last && total == log->total);
    log->calls++;
    log->last = done;
    log->total = total;
}

static void check_progress(const char *path)
{
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
    progress_log log = {.monotonic = true};
    cmrscl_mtx_options opt = {.progress = record_progress, .user = &log};
    cmrscl_csr a;
    CHECK_OK(cmrscl_mtx_read(path, &opt, &a));
    CHECK_MSG(log.calls >= 2 && log.monotonic && log.last == (uint64_t)sb.st_size &&
                  log.total == (uint64_t)sb.st_size,
              "%s: %d progress calls, last %llu of %llu, file has %lld bytes", path, log.calls,
              (unsigned long long)log.last, (unsigned long long)log.total, (long long)sb.st_size);
    cmrscl_csr_free(&a);
}

static void test_progress(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", test_shared_matrix("rajat01.mtx"));
    check_progress(path);
    /* For gzip the report counts compressed bytes, so it ends at the file's size too. */
    size_t size;
    char *text = slurp(path, &size);
    const char *gz = tmp_path("rajat01.mtx.gz");
    CHECK(text && gzip_file(gz, text, size));
    check_progress(gz);
    free(text);
}

/* ---- writer ---- */

static double random_double(void)
{
    for (;;) { /* any bit pattern but NaN, so that memcmp can compare */
        uint64_t bits =
            (uint64_t)test_uniform(0, 4294967296.0) << 32 | (uint64_t)test_uniform(0, 4294967296.0);
        double d;
        memcpy(&d, &bits, sizeof d);
        if (!isnan(d))
            return d;
    }
}

static void test_writer(void)
{
    /* Every double, subnormals and infinities included, survives %.17g and back. */
    enum { N = 3000 };
    int32_t ri[N], ci[N];
    double v[N];
    for (int k = 0; k < N; ++k) {
        ri[k] = (int32_t)test_uniform(0, 50);
        ci[k] = (int32_t)test_uniform(0, 70);
        v[k] = random_double();
    }
    v[0] = INFINITY, v[1] = -0.0, v[2] = 4.9e-324;
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_from_coo(50, 70, N, ri, ci, v, &a));
    check_round_trip("random", &a);

    /* Empty matrices, and the failures. */
    cmrscl_csr empty = {0};
    int32_t zero = 0;
    empty.row_ptr = &zero;
    check_round_trip("empty", &empty);
    CHECK_STATUS(cmrscl_mtx_write(NULL, &a), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_mtx_write(tmp_path("null.mtx"), NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    cmrscl_csr broken = a;
    broken.nnz += 1;
    CHECK_STATUS(cmrscl_mtx_write(tmp_path("broken.mtx"), &broken), CMRSCL_ERROR_INVALID_MATRIX);
    const char *no_dir = tmp_path("no_such_dir/out.mtx");
    CHECK_STATUS(cmrscl_mtx_write(no_dir, &a), CMRSCL_ERROR_FILE_IO);
    CHECK(test_contains(cmrscl_last_error(), no_dir) &&
          test_contains(cmrscl_last_error(), strerror(ENOENT)));
    if (access("/dev/full", W_OK) == 0) { /* a device that is always out of space */
        CHECK_STATUS(cmrscl_mtx_write("/dev/full", &a), CMRSCL_ERROR_FILE_IO);
        CHECK(test_contains(cmrscl_last_error(), strerror(ENOSPC)));
    }
    cmrscl_csr_free(&a);
}

/* An application that set a comma-decimal LC_NUMERIC must still read and write '.':
 * values that take strtod's path (17 digits, 1e-400) and the writer's %.17g. */
static void test_foreign_locale(void)
{
    static const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "de_DE"};
    const char *set = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !set; ++i)
        set = setlocale(LC_NUMERIC, names[i]);
    if (!set || strtod("0.5", NULL) == 0.5) {
        printf("no comma-decimal locale installed: the locale check was not run\n");
        setlocale(LC_NUMERIC, "C");
        return;
    }
    /* 25 significant digits: too many for the exact fast paths, so strtod reads it. */
    static const char text[] = "%%MatrixMarket matrix coordinate real general\n"
                               "2 2 2\n1 1 0.1234567890123456789012345\n2 2 1e-400\n";
    const char *path = tmp_path("locale.mtx");
    cmrscl_csr a = {0}, b = {0};
    CHECK(write_file(path, text, sizeof text - 1));
    CHECK_OK(cmrscl_mtx_read(path, NULL, &a));
    CHECK(a.nnz == 2 && a.values[0] == 0.1234567890123456789012345 && a.values[1] == 0.0);
    CHECK_OK(cmrscl_mtx_write(path, &a));
    FILE *f = fopen(path, "r");
    char written[512] = {0};
    CHECK(f && fread(written, 1, sizeof written - 1, f) > 0);
    if (f)
        fclose(f);
    CHECK_MSG(!strchr(written, ','), "the writer used the locale's decimal comma:\n%s", written);
    CHECK_OK(cmrscl_mtx_read(path, NULL, &b));
    CHECK(b.nnz == 2 && b.values[0] == a.values[0]);
    CHECK(strtod("0,5", NULL) == 0.5); /* the application's locale is left as it was */
    cmrscl_csr_free(&a);
    cmrscl_csr_free(&b);
    setlocale(LC_NUMERIC, "C");
}

int main(void)
{
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/cmrscl_test_mtx_XXXXXX");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_seed(20240611);
    test_good_files();
    test_nan_inf();
    test_bad_files();
    test_file_errors();
    test_gzip();
    test_long_lines();
    test_hostile_header();
    test_values();
    test_shared_matrices();
    test_progress();
    test_writer();
    test_foreign_locale();
    tmp_cleanup();
    return test_finish("mtx");
}
