/* test_mtx_share.c - cmrscl_mtx_read_share, the reader of one process of a distributed
 * read: the shares of a file, taken in order, hold exactly the coordinates cmrscl_mtx_read
 * turns into CSR (the same CSR bit for bit), and their lines add up to the declared entries;
 * on a damaged file the first failing share fails with the serial reader's status and
 * message (file and line numbered in the whole file), or, where no single share can tell
 * (a wrong entry count), the lines do not add up. Every file of the corpus, the shared real
 * matrices, gzip, 1..5 shares. */
#include "test_files.h"
#include "test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shares of `path` (all read), concatenated, as canonical CSR. */
static void compare_shares(const char *path, int shares, const cmrscl_csr *serial,
                           cmrscl_status want, const char *message)
{
    cmrscl_mtx_share s[5];
    cmrscl_status got = CMRSCL_OK;
    char first_message[1024] = "";
    int64_t total = 0, lines = 0;
    for (int i = 0; i < shares; ++i) {
        cmrscl_status st = cmrscl_mtx_read_share(path, i, shares, &s[i]);
        if (st != CMRSCL_OK && got == CMRSCL_OK) {
            got = st;
            snprintf(first_message, sizeof first_message, "%s", cmrscl_last_error());
        }
        total += s[i].count, lines += s[i].lines;
    }
    if (want != CMRSCL_OK) {
        bool counted_wrong = got == CMRSCL_OK && lines != s[0].declared;
        CHECK_MSG(got == want || counted_wrong, "%s, %d shares: %s, serial %s (%s)", path, shares,
                  cmrscl_status_name(got), cmrscl_status_name(want), message);
        if (got == want)
            CHECK_MSG(strcmp(first_message, message) == 0, "%s, %d shares: '%s', serial '%s'", path,
                      shares, first_message, message);
    } else if (got != CMRSCL_OK) {
        CHECK_MSG(false, "%s, %d shares: %s (%s)", path, shares, cmrscl_status_name(got),
                  first_message);
    } else {
        CHECK_MSG(lines == s[0].declared, "%s: %lld lines, %lld declared", path, (long long)lines,
                  (long long)s[0].declared);
        int32_t *r = malloc(sizeof *r * (size_t)(total + 1));
        int32_t *c = malloc(sizeof *c * (size_t)(total + 1));
        double *v = malloc(sizeof *v * (size_t)(total + 1));
        int64_t n = 0;
        for (int i = 0; r && c && v && i < shares; n += s[i++].count) {
            memcpy(r + n, s[i].row_idx, sizeof *r * (size_t)s[i].count);
            memcpy(c + n, s[i].col_idx, sizeof *c * (size_t)s[i].count);
            memcpy(v + n, s[i].values, sizeof *v * (size_t)s[i].count);
        }
        cmrscl_csr joined;
        CHECK_OK(cmrscl_csr_from_coo(s[0].rows, s[0].cols, total, r, c, v, &joined));
        CHECK_MSG(same_csr(serial, &joined), "%s, %d shares: a different CSR", path, shares);
        cmrscl_csr_free(&joined);
        free(r), free(c), free(v);
    }
    for (int i = 0; i < shares; ++i)
        cmrscl_mtx_share_free(&s[i]);
}

static void compare_file(const char *path)
{
    cmrscl_csr serial;
    cmrscl_mtx_options one = {.threads = 1};
    cmrscl_status want = cmrscl_mtx_read(path, &one, &serial);
    char message[1024];
    snprintf(message, sizeof message, "%s", want == CMRSCL_OK ? "" : cmrscl_last_error());
    for (int shares = 1; shares <= 5; ++shares)
        compare_shares(path, shares, &serial, want, message);
    cmrscl_csr_free(&serial);
}

static int compare_directory(const char *dir)
{
    DIR *d = opendir(dir);
    int files = 0;
    char path[4096];
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        compare_file(path);
        files++;
    }
    if (d)
        closedir(d);
    return files;
}

int main(void)
{
    if (!tmp_init())
        return 1;
    int files = compare_directory(test_data("mtx/good"));
    files += compare_directory(test_data("mtx/bad"));
    files += compare_directory(test_data("suitesparse"));
    CHECK_MSG(files > 60, "only %d files found", files);

    /* gzip: the same shares as the plain text. */
    size_t size;
    char *text = slurp(test_shared_matrix("1138_bus.mtx"), &size);
    const char *gz = tmp_path("bus.mtx.gz");
    CHECK(text && gzip_file(gz, text, size));
    compare_file(gz);
    free(text);

    /* Arguments. */
    cmrscl_mtx_share s;
    CHECK_STATUS(cmrscl_mtx_read_share(NULL, 0, 1, &s), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_mtx_read_share(gz, 2, 2, &s), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_mtx_read_share(gz, 0, 0, &s), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_mtx_read_share("/no/such/file.mtx", 0, 2, &s), CMRSCL_ERROR_FILE_IO);
    CHECK(s.count == 0 && s.row_idx == NULL);
    cmrscl_mtx_share_free(&s);
    cmrscl_mtx_share_free(NULL);
    tmp_cleanup();
    return test_finish("mtx_share");
}
