/* test_files.c - scratch files for the Matrix Market tests: a private temporary
 * directory, whole-file reads and writes (plain and gzip), and exact CSR comparison. */
#include "test_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

bool tmp_init(void)
{
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/cmrscl_test_mtx_XXXXXX");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return false;
    }
    return true;
}

char tmp_dir[64];
static char tmp_names[64][256];
static int tmp_count;

/* A path in the scratch directory, remembered for the cleanup (each call its own). */
const char *tmp_path(const char *name)
{
    static char overflow[256];
    char *buf = tmp_count < 64 ? tmp_names[tmp_count++] : overflow;
    snprintf(buf, sizeof overflow, "%s/%s", tmp_dir, name);
    return buf;
}

void tmp_cleanup(void)
{
    for (int i = 0; i < tmp_count; ++i)
        unlink(tmp_names[i]);
    rmdir(tmp_dir);
}

bool write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, size, f) == size;
    return (f && fclose(f) == 0) && ok;
}

/* The whole file in a malloc'ed buffer (NUL-terminated), or NULL. */
char *slurp(const char *path, size_t *size)
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

bool gzip_file(const char *path, const void *data, size_t size)
{
    gzFile gz = gzopen(path, "wb9");
    if (!gz)
        return false;
    bool ok = gzwrite(gz, data, (unsigned)size) == (int)size;
    return gzclose(gz) == Z_OK && ok;
}

bool same_csr(const cmrscl_csr *a, const cmrscl_csr *b)
{
    return a->rows == b->rows && a->cols == b->cols && a->nnz == b->nnz &&
           memcmp(a->row_ptr, b->row_ptr, sizeof(int64_t) * ((size_t)a->rows + 1)) == 0 &&
           (a->nnz == 0 || (memcmp(a->col_ind, b->col_ind, sizeof(int32_t) * (size_t)a->nnz) == 0 &&
                            memcmp(a->values, b->values, sizeof(double) * (size_t)a->nnz) == 0));
}
