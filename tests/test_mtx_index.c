/* test_mtx_index.c - an index outside the matrix in a coordinate file fails in the parser,
 * with its message naming the file, the line and the index (ERROR_PARSE), on every path that
 * parses entry lines: the serial reader (from memory and from a file), the parallel reader
 * (from memory with 2, 3 and 8 threads, and cmrscl_mtx_read past its size threshold, plain
 * and gzip) and the share reader of a distributed read. Index 0 of a row or a column, one past
 * the last row or column, and negative ones, in the first, a middle and the last entry line,
 * in general, pattern and symmetric files. A column 0 once slipped through as column -1, to
 * fail later in the COO conversion as "(0, -1) is outside the matrix", naming no line: these
 * tests fail on that. */
#include "io/io.h"
#include "test_files.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An index past the last row or column: rows + 1 or cols + 1. */
#define PAST (-1000)

typedef struct bad_index {
    int64_t row, col; /* the bad entry's indices, 1-based as written (PAST: one past) */
} bad_index;

static const bad_index cases[] = {{1, 0},    {0, 1},  {0, 0},  {PAST, 1},
                                  {1, PAST}, {-1, 1}, {1, -3}, {PAST, PAST}};

/* A file's text: the banner of `kind`, rows x cols, `lines` entry lines (some duplicated,
 * which a general file sums), entry line `bad` (0-based) being case c. The entry lines
 * start at line 3. */
static char *make_text(const char *kind, int32_t rows, int32_t cols, int64_t lines, int64_t bad,
                       const bad_index *c, size_t *size)
{
    const char *value = strstr(kind, "pattern")   ? ""
                        : strstr(kind, "integer") ? " 3"
                                                  : " 0.3183098861837907";
    bool symmetric = strstr(kind, "symmetric") != NULL;
    size_t cap = 128 + 40 * (size_t)lines;
    char *text = malloc(cap);
    size_t n = (size_t)snprintf(text, cap, "%%%%MatrixMarket matrix coordinate %s\n%d %d %lld\n",
                                kind, rows, cols, (long long)lines);
    for (int64_t i = 0; i < lines; ++i) {
        int64_t r = i % rows + 1, col = i * 7 % cols + 1;
        if (symmetric && col > r) /* the lower triangle */
            col = r;
        if (i == bad)
            r = c->row == PAST ? rows + 1 : c->row, col = c->col == PAST ? cols + 1 : c->col;
        n += (size_t)snprintf(text + n, cap - n, "%lld %lld%s\n", (long long)r, (long long)col,
                              value);
    }
    *size = n;
    return text;
}

/* The status and message of one failed read: ERROR_PARSE, "name:line: what", never the COO
 * conversion's "is outside", the output zeroed. */
static void check_message(cmrscl_status st, const cmrscl_csr *a, const char *want,
                          const char *path_kind)
{
    CHECK_MSG(st == CMRSCL_ERROR_PARSE && test_contains(cmrscl_last_error(), want) &&
                  !test_contains(cmrscl_last_error(), "outside"),
              "%s: %s '%s', expected ERROR_PARSE '%s'", path_kind, cmrscl_status_name(st),
              cmrscl_last_error(), want);
    CHECK_MSG(!a || (!a->rows && !a->nnz && !a->row_ptr), "%s: output not zeroed", path_kind);
}

/* The expected message of case c at entry line `bad` of a file called name: the row's
 * when both are outside (the parser reads the row first). */
static void expected(char *out, size_t size, const char *name, int64_t bad, const bad_index *c,
                     int32_t rows, int32_t cols)
{
    int64_t r = c->row == PAST ? rows + 1 : c->row, col = c->col == PAST ? cols + 1 : c->col;
    bool row = r < 1 || r > rows;
    snprintf(out, size, "%s:%lld: %s index %lld out of range 1..%d", name, (long long)bad + 3,
             row ? "row" : "column", (long long)(row ? r : col), row ? rows : cols);
}

/* Every share of a file through cmrscl_mtx_read_share: the share holding the bad line fails
 * with the whole file's message, the others read. */
static void check_shares(const char *path, const char *want, int shares)
{
    int failed = 0;
    for (int s = 0; s < shares; ++s) {
        cmrscl_mtx_share sh;
        cmrscl_status st = cmrscl_mtx_read_share(path, s, shares, &sh);
        if (st != CMRSCL_OK) {
            failed++;
            char what[64];
            snprintf(what, sizeof what, "share %d of %d", s, shares);
            check_message(st, NULL, want, what);
        }
        cmrscl_mtx_share_free(&sh);
    }
    CHECK_MSG(failed == 1, "%s: %d of %d shares failed, expected 1", path, failed, shares);
}

/* Small files: the serial reader from memory and from the file, the parallel reader from
 * memory, the shares. */
static void test_small(void)
{
    static const char *kinds[] = {"real general", "pattern general", "integer symmetric"};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; ++k)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i)
            for (int64_t bad = 0; bad < 9; bad += 4) { /* the first, a middle, the last line */
                bool square = strstr(kinds[k], "symmetric") != NULL;
                int32_t rows = 7, cols = square ? 7 : 5;
                size_t size;
                char *text = make_text(kinds[k], rows, cols, 9, bad, &cases[i], &size);
                char want[256], what[320];
                expected(want, sizeof want, "index.mtx", bad, &cases[i], rows, cols);
                cmrscl_csr a;
                snprintf(what, sizeof what, "%s, case %zu at line %lld, serial", kinds[k], i,
                         (long long)bad + 3);
                check_message(cmrs_mtx_read_memory(text, size, "index.mtx", &a), &a, want, what);
                cmrscl_csr_free(&a);
                for (int threads = 2; threads <= 8; threads = threads == 3 ? 8 : threads + 1) {
                    snprintf(what, sizeof what, "%s, case %zu at line %lld, %d threads", kinds[k],
                             i, (long long)bad + 3, threads);
                    check_message(
                        cmrs_mtx_read_memory_threads(text, size, "index.mtx", threads, &a), &a,
                        want, what);
                    cmrscl_csr_free(&a);
                }
                const char *path = tmp_path("index.mtx");
                CHECK(write_file(path, text, size));
                expected(want, sizeof want, path, bad, &cases[i], rows, cols);
                snprintf(what, sizeof what, "%s, case %zu at line %lld, file", kinds[k], i,
                         (long long)bad + 3);
                check_message(cmrscl_mtx_read(path, NULL, &a), &a, want, what);
                cmrscl_csr_free(&a);
                check_shares(path, want, 3);
                free(text);
            }
}

/* Files past the parallel reader's threshold (4 MiB), through cmrscl_mtx_read with 4 threads
 * (the parallel parse fails quietly and the serial reader gives the message) and with one,
 * plain and gzip; the bad line in the middle and last. */
static void test_large(void)
{
    const int64_t lines = 300000; /* about 6 MB of text */
    int checked = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i += 2) /* column 0, both 0, ... */
        for (int64_t bad = lines / 2; bad < lines; bad += lines / 2 - 1) {
            size_t size;
            char *text = make_text("real general", 1000, 999, lines, bad, &cases[i], &size);
            CHECK(size > (4u << 20));
            const char *plain = tmp_path("large_index.mtx"), *gz = tmp_path("large_index.mtx.gz");
            CHECK(write_file(plain, text, size));
            CHECK(gzip_file(gz, text, size));
            const char *paths[] = {plain, gz};
            for (int g = 0; g < 2; ++g)
                for (int threads = 1; threads <= 4; threads += 3) {
                    char want[256], what[320];
                    expected(want, sizeof want, paths[g], bad, &cases[i], 1000, 999);
                    snprintf(what, sizeof what, "%s, case %zu at line %lld, %d threads", paths[g],
                             i, (long long)bad + 3, threads);
                    cmrscl_mtx_options opt = {.threads = threads};
                    cmrscl_csr a;
                    check_message(cmrscl_mtx_read(paths[g], &opt, &a), &a, want, what);
                    cmrscl_csr_free(&a);
                    checked++;
                }
            char want[256];
            expected(want, sizeof want, "large_index.mtx", bad, &cases[i], 1000, 999);
            cmrscl_csr a;
            check_message(cmrs_mtx_read_memory_threads(text, size, "large_index.mtx", 8, &a), &a,
                          want, "large, from memory, 8 threads");
            cmrscl_csr_free(&a);
            expected(want, sizeof want, plain, bad, &cases[i], 1000, 999);
            check_shares(plain, want, 4);
            free(text);
        }
    CHECK(checked == 32);
}

int main(void)
{
    if (!tmp_init())
        return 1;
    test_small();
    test_large();
    tmp_cleanup();
    return test_finish("mtx_index");
}
