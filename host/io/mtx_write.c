/* mtx_write.c - CSR -> Matrix Market `coordinate real general`, gzip-compressed when the
 * path ends in ".gz". Values are printed with %.17g, enough digits for every double to
 * read back bit for bit, so write -> read is an exact round trip, except that a NaN's
 * payload bits are not written (Matrix Market has no syntax for them): NaN reads back as
 * NaN of the same sign. */
#include "io/io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum {
    WRITE_CHUNK = 1 << 18, /* text handed to zlib at a time */
    MAX_ENTRY_TEXT = 64    /* "row col value\n": 10 + 1 + 10 + 1 + 24 + 1 bytes at most */
};

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* Decimal digits of v; returns the end. Hand-written because the writer prints two
 * indices per entry and snprintf would dominate its time. */
static char *put_uint(char *p, uint32_t v)
{
    char digits[10];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = digits[--n];
    return p;
}

static cmrscl_status write_failed(gzFile gz, const char *path)
{
    int err;
    const char *msg = gzerror(gz, &err);
    return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot write %s: %s", path,
                       err == Z_ERRNO ? strerror(errno) : msg);
}

static bool put(gzFile gz, const char *buf, size_t len)
{
    return len == 0 || gzwrite(gz, buf, (unsigned)len) == (int)len;
}

static cmrscl_status write_text(gzFile gz, const char *path, const cmrscl_csr *csr, char *buf)
{
    int n = snprintf(buf, WRITE_CHUNK,
                     "%%%%MatrixMarket matrix coordinate real general\n"
                     "%% written by cmrscl %s\n%d %d %lld\n",
                     cmrscl_version_string(), csr->rows, csr->cols, (long long)csr->nnz);
    size_t len = (size_t)n;
    for (int32_t i = 0; i < csr->rows; ++i) {
        for (int64_t k = csr->row_ptr[i]; k < csr->row_ptr[i + 1]; ++k) {
            if (WRITE_CHUNK - len < MAX_ENTRY_TEXT) {
                if (!put(gz, buf, len))
                    return write_failed(gz, path);
                len = 0;
            }
            char *p = put_uint(buf + len, (uint32_t)i + 1);
            *p++ = ' ';
            p = put_uint(p, (uint32_t)csr->col_ind[k] + 1);
            *p++ = ' ';
            p += snprintf(p, 32, "%.17g", csr->values[k]);
            *p++ = '\n';
            len = (size_t)(p - buf);
        }
    }
    return put(gz, buf, len) ? CMRSCL_OK : write_failed(gz, path);
}

cmrscl_status cmrscl_mtx_write(const char *path, const cmrscl_csr *csr)
{
    if (!path)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "path is NULL");
    cmrscl_status st = cmrscl_csr_validate(csr);
    if (st != CMRSCL_OK)
        return st;
    char *buf = malloc(WRITE_CHUNK);
    if (!buf)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to write %s", path);
    /* One interface for both: "T" makes zlib write the text through uncompressed. */
    errno = 0;
    gzFile gz = gzopen(path, ends_with(path, ".gz") ? "wb6" : "wbT");
    if (!gz) {
        free(buf);
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot create %s: %s", path,
                           errno ? strerror(errno) : "out of memory");
    }
    c_numeric_scope numeric;
    cmrs_c_numeric_enter(&numeric);
    st = write_text(gz, path, csr, buf);
    cmrs_c_numeric_leave(&numeric);
    free(buf);
    /* Buffered data reaches the disk only here, so a full disk may show up only now. */
    errno = 0;
    int ret = gzclose(gz);
    if (st == CMRSCL_OK && ret != Z_OK)
        st = cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot write %s: %s", path,
                         ret == Z_ERRNO && errno ? strerror(errno) : "zlib error on close");
    return st;
}
