/* test_mtx_parallel.c - the parallel reader gives exactly the serial reader's result:
 * the same CSR bit for bit, or the same status and the same message (file and line), on
 * every file of the test corpus, the shared real matrices and the fuzz corpora, for
 * several thread counts; on files large enough that cmrscl_mtx_read takes the parallel
 * path (plain and gzip, general and symmetric, good and damaged); and cmrscl_csr_from_coo
 * on all threads against a plain reference (shuffled entries, duplicates). */
#include "io/io.h"
#include "test_files.h"
#include "test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int thread_counts[] = {2, 3, 8};

/* One text through the serial reader and the parallel one with each thread count. */
static void compare_text(const char *text, size_t size, const char *name)
{
    cmrscl_csr serial, parallel;
    cmrscl_status want = cmrs_mtx_read_memory(text, size, name, &serial);
    char message[1024];
    snprintf(message, sizeof message, "%s", want == CMRSCL_OK ? "" : cmrscl_last_error());
    for (size_t i = 0; i < sizeof thread_counts / sizeof *thread_counts; ++i) {
        cmrscl_status got =
            cmrs_mtx_read_memory_threads(text, size, name, thread_counts[i], &parallel);
        CHECK_MSG(got == want, "%s, %d threads: %s, serial %s", name, thread_counts[i],
                  cmrscl_status_name(got), cmrscl_status_name(want));
        if (got == want && want == CMRSCL_OK)
            CHECK_MSG(same_csr(&serial, &parallel), "%s, %d threads: a different CSR", name,
                      thread_counts[i]);
        if (got == want && want != CMRSCL_OK)
            CHECK_MSG(strcmp(message, cmrscl_last_error()) == 0,
                      "%s, %d threads: message '%s', serial '%s'", name, thread_counts[i],
                      cmrscl_last_error(), message);
        cmrscl_csr_free(&parallel);
    }
    cmrscl_csr_free(&serial);
}

/* Every regular file of a directory; returns how many. */
static int compare_directory(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int files = 0;
    char path[4096];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t size;
        char *text = slurp(path, &size);
        if (!text)
            continue; /* a subdirectory */
        compare_text(text, size, e->d_name);
        free(text);
        files++;
    }
    closedir(d);
    return files;
}

static void test_corpora(void)
{
    const char *dirs[] = {"mtx/good",
                          "mtx/bad",
                          "suitesparse",
                          "../fuzz/corpus/mtx",
                          "../fuzz/corpus/mtx_gz",
                          "../fuzz/corpus/real",
                          "../fuzz/crashes"};
    int files = 0;
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; ++i)
        files += compare_directory(test_data(dirs[i]));
    printf("mtx_parallel: %d files, serial = parallel with 2, 3 and 8 threads\n", files);
    CHECK_MSG(files > 100, "only %d corpus files found", files);
}

/* ---- files past the parallel reader's size threshold, through cmrscl_mtx_read ---- */

static cmrscl_status read_with(const char *path, int threads, cmrscl_csr *out)
{
    cmrscl_mtx_options opt = {.threads = threads};
    return cmrscl_mtx_read(path, &opt, out);
}

static void compare_file(const char *path)
{
    cmrscl_csr serial, parallel;
    cmrscl_status want = read_with(path, 1, &serial);
    char message[1024];
    snprintf(message, sizeof message, "%s", want == CMRSCL_OK ? "" : cmrscl_last_error());
    cmrscl_status got = read_with(path, 4, &parallel);
    CHECK_MSG(got == want, "%s: parallel %s, serial %s", path, cmrscl_status_name(got),
              cmrscl_status_name(want));
    if (got == want && want == CMRSCL_OK)
        CHECK_MSG(same_csr(&serial, &parallel), "%s: a different CSR", path);
    if (got == want && want != CMRSCL_OK)
        CHECK_MSG(strcmp(message, cmrscl_last_error()) == 0, "%s: message '%s', serial '%s'", path,
                  cmrscl_last_error(), message);
    cmrscl_csr_free(&serial);
    cmrscl_csr_free(&parallel);
}

static void test_large_files(void)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("random:40000:12@7", &a)); /* about 10 MB of text */
    const char *plain = tmp_path("large.mtx"), *gz = tmp_path("large.mtx.gz");
    CHECK_OK(cmrscl_mtx_write(plain, &a));
    CHECK_OK(cmrscl_mtx_write(gz, &a));
    compare_file(plain);
    compare_file(gz);
    cmrscl_csr back;
    CHECK_OK(read_with(plain, 4, &back));
    CHECK_MSG(same_csr(&a, &back), "written and read back in parallel: a different CSR");
    cmrscl_csr_free(&back);

    /* A symmetric file: the lower triangle of the square part, mirrored while reading. */
    const char *sym = tmp_path("symmetric.mtx");
    int64_t lower = 0;
    for (int pass = 0; pass < 2; ++pass) {
        FILE *f = pass ? fopen(sym, "w") : NULL;
        if (f)
            fprintf(f, "%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %lld\n", a.rows,
                    a.rows, (long long)lower);
        for (int32_t i = 0; i < a.rows; ++i)
            for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
                if (a.col_ind[k] <= i) {
                    if (f)
                        fprintf(f, "%d %d %.17g\n", i + 1, a.col_ind[k] + 1, a.values[k]);
                    else
                        lower++;
                }
        if (f)
            fclose(f);
    }
    compare_file(sym);

    /* In row order, without values (pattern: ones), and with a comment line among the
     * entries (a gap: the general path instead of the in-order one). */
    const char *pattern = tmp_path("pattern.mtx"), *gap = tmp_path("gap.mtx");
    for (int which = 0; which < 2; ++which) {
        FILE *f = fopen(which ? gap : pattern, "w");
        fprintf(f, "%%%%MatrixMarket matrix coordinate %s general\n%d %d %lld\n",
                which ? "real" : "pattern", a.rows, a.cols, (long long)a.nnz);
        for (int32_t i = 0; i < a.rows; ++i)
            for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
                if (which && k == a.nnz / 3)
                    fprintf(f, "%% a comment among the entries\n");
                if (which)
                    fprintf(f, "%d %d %.17g\n", i + 1, a.col_ind[k] + 1, a.values[k]);
                else
                    fprintf(f, "%d %d\n", i + 1, a.col_ind[k] + 1);
            }
        fclose(f);
    }
    compare_file(pattern);
    compare_file(gap);

    /* Damage near the end: the serial reader's message (file and line) in both. */
    size_t size;
    char *text = slurp(plain, &size);
    if (text) {
        const char *damaged = tmp_path("damaged.mtx"), *cut = tmp_path("truncated.mtx");
        memcpy(text + size - 4, "x\n\n\n", 4);
        CHECK(write_file(damaged, text, size));
        CHECK(write_file(cut, text, size / 2));
        compare_file(damaged);
        compare_file(cut);
        free(text);
    }
    cmrscl_csr_free(&a);
}

/* ---- cmrscl_csr_from_coo on all threads ---- */

static int by_row_col(const void *pa, const void *pb)
{
    const int64_t *a = pa, *b = pb; /* (row, col, position) packed in three int64 */
    for (int i = 0; i < 3; ++i)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static void test_from_coo(void)
{
    enum { ROWS = 3000, COLS = 2000, N = 400000 };
    int32_t *ri = malloc(sizeof(int32_t) * N), *ci = malloc(sizeof(int32_t) * N);
    double *v = malloc(sizeof(double) * N);
    int64_t *key = malloc(sizeof(int64_t) * 3 * N);
    test_seed(11);
    for (int k = 0; k < N; ++k) {
        ri[k] = (int32_t)test_uniform(0, ROWS);
        ci[k] = (int32_t)test_uniform(0, 300); /* narrow: many duplicates, long rows */
        if (k % 5 == 0)
            ri[k] = 7; /* one very long row */
        v[k] = test_uniform(-1, 1);
        key[3 * k] = ri[k], key[3 * k + 1] = ci[k], key[3 * k + 2] = k;
    }
    /* The reference: sort by (row, column, input position), sum runs in that order. */
    qsort(key, N, 3 * sizeof(int64_t), by_row_col);
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_from_coo(ROWS, COLS, N, ri, ci, v, &a));
    int32_t *count = calloc(ROWS + 1, sizeof(int32_t));
    int64_t at = -1, row = -1, col = -1;
    double sum = 0.0;
    bool same = true;
    for (int k = 0; k <= N && same; ++k) {
        bool next = k == N || key[3 * k] != row || key[3 * k + 1] != col;
        if (next && at >= 0) /* the finished entry: its sum, bit for bit */
            same = memcmp(&a.values[at], &sum, sizeof sum) == 0;
        if (k == N)
            break;
        if (next) {
            row = key[3 * k], col = key[3 * k + 1], sum = v[key[3 * k + 2]];
            same &= ++at < a.nnz && a.col_ind[at] == col;
            count[row + 1]++;
        } else {
            sum += v[key[3 * k + 2]];
        }
    }
    for (int32_t r = 0; r < ROWS && same; ++r)
        same = a.row_ptr[r + 1] == (count[r + 1] += count[r]);
    CHECK_MSG(same && at + 1 == a.nnz, "from_coo: not the canonical CSR (entry %lld of %lld)",
              (long long)at, (long long)a.nnz);
    free(count);
    cmrscl_csr_free(&a);
    free(ri), free(ci), free(v), free(key);
}

int main(void)
{
    if (!tmp_init())
        return 1;
    test_corpora();
    test_large_files();
    test_from_coo();
    tmp_cleanup();
    return test_finish("mtx_parallel");
}
