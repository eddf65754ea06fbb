/* test_mtx_values.c - what the Matrix Market reader and writer do with numbers and real
 * files: correctly rounded values (like strtod), the SuiteSparse matrices against an
 * independent reader, write -> read round trips (plain and gzip), progress reports, and
 * a comma-decimal locale in the application. */
#include "io/io.h"
#include "test_files.h"
#include "test_util.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    CHECK_OK(cmrs_mtx_read_memory(text, len, "values.mtx", &a));
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
        for (int64_t k = a->row_ptr[i] + 1; k < a->row_ptr[i + 1]; ++k)
            if (a->col_ind[k] <= a->col_ind[k - 1])
                return false;
    return true;
}

static double value_sum(const cmrscl_csr *a)
{
    double s = 0.0;
    for (int64_t k = 0; k < a->nnz; ++k)
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
                  "%s: %d x %d, nnz %lld; expected %ld x %ld, nnz %ld", shared[i].file, a.rows,
                  a.cols, (long long)a.nnz, r.rows, r.cols, nnz);
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
    int64_t zero = 0;
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
static bool test_foreign_locale(void)
{
    static const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "de_DE"};
    const char *set = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !set; ++i)
        set = setlocale(LC_NUMERIC, names[i]);
    if (!set || strtod("0.5", NULL) == 0.5) {
        printf("skipped: no comma-decimal locale installed (de_DE.UTF-8 or fr_FR.UTF-8)\n");
        setlocale(LC_NUMERIC, "C");
        return false;
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
    return true;
}

int main(int argc, char **argv)
{
    if (!tmp_init())
        return 1;
    if (argc == 2 && !strcmp(argv[1], "locale")) { /* a test of its own: skipped, not passed */
        bool ran = test_foreign_locale();
        tmp_cleanup();
        return ran || test_failures ? test_finish("mtx_locale") : 77;
    }
    test_seed(20240611);
    test_values();
    test_shared_matrices();
    test_progress();
    test_writer();
    tmp_cleanup();
    return test_finish("mtx_values");
}
