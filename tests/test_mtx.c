/* test_mtx.c - the Matrix Market reader on files: exact CSR for tiny hand-checked files,
 * a table of malformed files with the status and message each must give, the file system
 * (missing, unreadable, directories), gzip (files, memory, members, damage), long lines
 * and hostile sizes; the size line read alone. Values, real matrices and the writer:
 * test_mtx_values.c. */
#include "io/io.h"
#include "test_files.h"
#include "test_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_LINE (1 << 20) /* the reader's documented line limit */

typedef struct expected_csr {
    const char *file;
    int32_t rows, cols, nnz;
    int64_t row_ptr[8];
    int32_t col_ind[8];
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
    int64_t *row_ptr = (int64_t *)e->row_ptr;
    int32_t *col_ind = (int32_t *)e->col_ind;
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
    /* 64-bit entry counts: a 2 x 2 matrix may declare 3e9 entries (duplicates) */
    {"size_huge_entries.mtx", CMRSCL_ERROR_PARSE, "ends after 1 of the 3000000000 declared"},
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
        st = cmrs_mtx_read_memory(text, size, b->file, &a);
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
    CHECK_OK(cmrs_mtx_read_memory(gz, gz_size, "general.mtx.gz", &a));
    CHECK(matches(&a, &good_files[0]));
    CHECK_OK(cmrs_mtx_read_memory(text, size, "general.mtx", &b));
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
    CHECK_OK(cmrs_mtx_read_memory(both, first_size + second_size, "multi.mtx.gz", &a));
    CHECK(matches(&a, &good_files[0]));
    cmrscl_csr_free(&a);
    CHECK(write_file(multi_path, both, first_size + second_size));
    CHECK_OK(cmrscl_mtx_read(multi_path, NULL, &a));
    CHECK(matches(&a, &good_files[0]));
    cmrscl_csr_free(&a);

    /* Damage: cut short, and a wrong CRC in the trailer (last 8 bytes: CRC32, size). */
    CHECK_STATUS(cmrs_mtx_read_memory(gz, gz_size - 12, "cut.gz", &a), CMRSCL_ERROR_PARSE);
    CHECK(test_contains(cmrscl_last_error(), "cut.gz: truncated gzip data"));
    gz[gz_size - 8] ^= 0x55;
    CHECK_STATUS(cmrs_mtx_read_memory(gz, gz_size, "crc.gz", &a), CMRSCL_ERROR_PARSE);
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
    CHECK_OK(cmrs_mtx_read_memory(ok, size, "longest.mtx", &a));
    CHECK(a.nnz == 1 && a.values[0] == 2.0);
    cmrscl_csr_free(&a);
    const char *path = tmp_path("longest.mtx");
    CHECK(write_file(path, ok, size));
    CHECK_OK(cmrscl_mtx_read(path, NULL, &a));
    CHECK(a.nnz == 1);
    cmrscl_csr_free(&a);
    free(ok);

    char *bad = long_comment_file(MAX_LINE + 1, &size);
    CHECK_STATUS(cmrs_mtx_read_memory(bad, size, "too_long.mtx", &a), CMRSCL_ERROR_PARSE);
    CHECK(test_contains(cmrscl_last_error(), "too_long.mtx:2: line 2 is longer than 1048576"));
    path = tmp_path("too_long.mtx");
    CHECK(write_file(path, bad, size));
    CHECK_STATUS(cmrscl_mtx_read(path, NULL, &a), CMRSCL_ERROR_PARSE);
    CHECK(test_contains(cmrscl_last_error(), "line 2 is longer than 1048576 bytes"));
    free(bad);
    /* Far longer, with no newline at all: must stop at the limit, not keep growing. */
    bad = long_comment_file(8 * MAX_LINE, &size);
    CHECK_STATUS(cmrs_mtx_read_memory(bad, size, "huge_line.mtx", &a), CMRSCL_ERROR_PARSE);
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
        cmrscl_status st = cmrs_mtx_read_memory(texts[i], strlen(texts[i]), "hostile.mtx", &a);
        double t = cmrscl_seconds() - t0;
        check_failure("hostile header", st, &a, CMRSCL_ERROR_PARSE, "truncated file");
        CHECK_MSG(t < 0.5, "hostile header %zu took %.3f s", i, t);
    }
}

/* ---- the size line alone ---- */

/* The files of bad_files whose fault is in the banner or the size line. */
static const char *const header_faults[] = {"empty.mtx",
                                            "blank_only.mtx",
                                            "no_banner.mtx",
                                            "banner_short.mtx",
                                            "banner_typo.mtx",
                                            "banner_extra.mtx",
                                            "array.mtx",
                                            "complex.mtx",
                                            "hermitian.mtx",
                                            "vector.mtx",
                                            "pattern_skew.mtx",
                                            "no_size.mtx",
                                            "size_short.mtx",
                                            "size_junk.mtx",
                                            "size_word.mtx",
                                            "size_negative.mtx",
                                            "size_huge_rows.mtx",
                                            "size_overflow.mtx",
                                            "symmetric_not_square.mtx",
                                            "binary.mtx"};

static bool is_header_fault(const char *file)
{
    for (size_t i = 0; i < sizeof header_faults / sizeof *header_faults; ++i)
        if (!strcmp(file, header_faults[i]))
            return true;
    return false;
}

static void test_read_size(void)
{
    char rel[256];
    int32_t rows, cols;
    int64_t entries;
    for (size_t i = 0; i < sizeof good_files / sizeof *good_files; ++i) {
        const expected_csr *e = &good_files[i];
        snprintf(rel, sizeof rel, "mtx/good/%s", e->file);
        CHECK_OK(cmrscl_mtx_read_size(test_data(rel), &rows, &cols, &entries));
        /* duplicates merge and mirror images skip the diagonal: entries bounds nnz */
        CHECK_MSG(rows == e->rows && cols == e->cols && entries >= e->nnz, "%s: %d x %d, %lld",
                  e->file, rows, cols, (long long)entries);
    }
    CHECK_OK(cmrscl_mtx_read_size(test_data("mtx/good/symmetric.mtx"), &rows, &cols, &entries));
    CHECK(entries == 8); /* 4 declared, each counted with its mirror image */
    /* The header the reader refuses, refused the same way; a fault further on is not seen. */
    for (size_t i = 0; i < sizeof bad_files / sizeof *bad_files; ++i) {
        const bad_case *b = &bad_files[i];
        snprintf(rel, sizeof rel, "mtx/bad/%s", b->file);
        cmrscl_status st = cmrscl_mtx_read_size(test_data(rel), &rows, &cols, &entries);
        if (is_header_fault(b->file)) {
            CHECK_MSG(st == b->status && test_contains(cmrscl_last_error(), b->message),
                      "%s: %s (%s)", b->file, cmrscl_status_name(st), cmrscl_last_error());
            CHECK(rows == 0 && cols == 0 && entries == 0);
        } else {
            CHECK_MSG(st == CMRSCL_OK || st == b->status, "%s: %s", b->file,
                      cmrscl_status_name(st));
        }
    }
    /* A huge size line in a tiny file, gzip-compressed: read at once, nothing allocated. */
    const char text[] = "%%MatrixMarket matrix coordinate real general\n% a comment\n"
                        "500000000 500000000 1\n1 1 2.0\n";
    const char *gz_path = tmp_path("huge_one_entry.mtx.gz");
    CHECK(gzip_file(gz_path, text, sizeof text - 1));
    CHECK_OK(cmrscl_mtx_read_size(gz_path, &rows, &cols, &entries));
    CHECK(rows == 500000000 && cols == 500000000 && entries == 1);
    CHECK_STATUS(cmrscl_mtx_read_size(tmp_path("no_such_file.mtx"), &rows, &cols, &entries),
                 CMRSCL_ERROR_FILE_IO);
    CHECK_STATUS(cmrscl_mtx_read_size(gz_path, NULL, &cols, &entries),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    if (!tmp_init())
        return 1;
    test_seed(20240611);
    test_good_files();
    test_nan_inf();
    test_bad_files();
    test_file_errors();
    test_gzip();
    test_long_lines();
    test_hostile_header();
    test_read_size();
    tmp_cleanup();
    return test_finish("mtx");
}
