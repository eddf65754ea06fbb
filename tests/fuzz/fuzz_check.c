/* fuzz_check.c - the shared fuzz properties: what a successful Matrix Market read must
 * satisfy, what a failed one must report, and the CSR -> CMRS -> CSR round trip with the
 * structure cmrscl.h documents for CMRS. */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: fuzz property violated: %s\n  ", file, line, cond);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n  cmrscl_last_error: %s\n", cmrscl_last_error());
    va_end(ap);
    abort();
}

bool fuzz_csr_identical(const cmrscl_csr *a, const cmrscl_csr *b)
{
    if (a->rows != b->rows || a->cols != b->cols || a->nnz != b->nnz)
        return false;
    size_t n = (size_t)a->nnz;
    return memcmp(a->row_ptr, b->row_ptr, ((size_t)a->rows + 1) * sizeof(int64_t)) == 0 &&
           (n == 0 || (memcmp(a->col_ind, b->col_ind, n * sizeof(int32_t)) == 0 &&
                       memcmp(a->values, b->values, n * sizeof(double)) == 0));
}

void fuzz_check_cmrs_round_trip(const cmrscl_csr *csr, int height, unsigned flags,
                                const cmrscl_csr *expect, cmrscl_cmrs *keep)
{
    cmrscl_cmrs cmrs;
    cmrscl_status st = cmrscl_cmrs_from_csr(csr, height, flags, &cmrs);
    FUZZ_CHECK(st == CMRSCL_OK, "cmrs_from_csr(height %d, flags %u): %s", height, flags,
               cmrscl_status_name(st));
    int bits = cmrscl_cmrs_row_bits(height);
    bool packed = !(flags & CMRSCL_CMRS_UNPACKED) && height <= CMRSCL_MAX_PACKED_HEIGHT &&
                  (int64_t)csr->cols <= (1ll << (32 - bits));
    bool ordered = (flags & CMRSCL_CMRS_ORDER_COLUMNS) != 0;
    FUZZ_CHECK(cmrs.rows == csr->rows && cmrs.cols == csr->cols && cmrs.nnz == csr->nnz &&
                   cmrs.height == height &&
                   cmrs.strips == (int32_t)(((int64_t)csr->rows + height - 1) / height),
               "CMRS sizes %d x %d, nnz %lld, height %d, %d strips", cmrs.rows, cmrs.cols,
               (long long)cmrs.nnz, cmrs.height, cmrs.strips);
    FUZZ_CHECK(cmrs.packed == packed && (cmrs.row_in_strip == NULL) == packed &&
                   cmrs.row_bits == (packed ? bits : 0) && cmrs.column_ordered == ordered,
               "layout packed=%d ordered=%d, expected %d %d", cmrs.packed, cmrs.column_ordered,
               packed, ordered);
    for (int32_t s = 0; s <= cmrs.strips; ++s) {
        int32_t row = (int64_t)s * height < csr->rows ? s * height : csr->rows;
        FUZZ_CHECK(cmrs.strip_ptr[s] == (uint64_t)csr->row_ptr[row],
                   "strip_ptr[%d] = %llu, row_ptr[%d] = %lld", s,
                   (unsigned long long)cmrs.strip_ptr[s], row, (long long)csr->row_ptr[row]);
    }
    /* Column ordering is what the kernels rely on for locality in x; check it holds. */
    for (int32_t s = 0; ordered && s < cmrs.strips; ++s)
        for (uint64_t k = cmrs.strip_ptr[s] + 1; k < cmrs.strip_ptr[s + 1]; ++k) {
            uint32_t shift = packed ? (uint32_t)bits : 0;
            FUZZ_CHECK(cmrs.col_ind[k - 1] >> shift <= cmrs.col_ind[k] >> shift,
                       "strip %d not column-ordered at entry %llu", s, (unsigned long long)k);
        }
    cmrscl_csr back;
    st = cmrscl_cmrs_to_csr(&cmrs, &back);
    FUZZ_CHECK(st == CMRSCL_OK, "cmrs_to_csr: %s", cmrscl_status_name(st));
    FUZZ_CHECK(fuzz_csr_identical(&back, expect),
               "CSR -> CMRS -> CSR (height %d, flags %u) is not exact", height, flags);
    cmrscl_csr_free(&back);
    if (keep)
        *keep = cmrs;
    else
        cmrscl_cmrs_free(&cmrs);
}

/* The file reader and the writer only take a path; a memory file reached through /proc
 * keeps the fuzzer off the disk and leaves nothing behind when it is killed. */
static int scratch_fd = -1;

static const char *scratch_path(void)
{
    static char path[64];
    if (scratch_fd < 0) {
        scratch_fd = memfd_create("cmrscl-fuzz.mtx", MFD_CLOEXEC);
        FUZZ_CHECK(scratch_fd >= 0, "memfd_create failed");
        snprintf(path, sizeof path, "/proc/self/fd/%d", scratch_fd);
    }
    return path;
}

void fuzz_check_same_as_file(const uint8_t *data, size_t size, cmrscl_status st,
                             const cmrscl_csr *csr, const char *name)
{
    char *message = st == CMRSCL_OK ? NULL : strdup(cmrscl_last_error());
    const char *path = scratch_path();
    FUZZ_CHECK(ftruncate(scratch_fd, 0) == 0 &&
                   (size == 0 || pwrite(scratch_fd, data, size, 0) == (ssize_t)size),
               "cannot fill the memory file");
    cmrscl_csr file;
    cmrscl_status file_st = cmrscl_mtx_read(path, NULL, &file);
    bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    if (gzip) /* zlib's gzread and mtx.c's inflate loop may meet two faults in either order */
        FUZZ_CHECK((st == CMRSCL_OK) == (file_st == CMRSCL_OK), "memory read gave %s, file read %s",
                   cmrscl_status_name(st), cmrscl_status_name(file_st));
    else
        FUZZ_CHECK(st == file_st, "memory read gave %s, file read %s", cmrscl_status_name(st),
                   cmrscl_status_name(file_st));
    if (st == CMRSCL_OK && file_st == CMRSCL_OK)
        FUZZ_CHECK(fuzz_csr_identical(csr, &file), "memory and file reads differ");
    if (!gzip && st != CMRSCL_OK)
        FUZZ_CHECK(strncmp(message, name, strlen(name)) == 0 &&
                       strncmp(cmrscl_last_error(), path, strlen(path)) == 0 &&
                       strcmp(message + strlen(name), cmrscl_last_error() + strlen(path)) == 0,
                   "memory read said '%s', file read another message", message);
    cmrscl_csr_free(&file);
    free(message);
}

void fuzz_check_same_in_parallel(const uint8_t *data, size_t size, cmrscl_status st,
                                 const cmrscl_csr *csr, const char *name)
{
    char *message = st == CMRSCL_OK ? NULL : strdup(cmrscl_last_error());
    cmrscl_csr par;
    cmrscl_status par_st = cmrs_mtx_read_memory_threads(data, size, name, 3, &par);
    FUZZ_CHECK(st == par_st, "serial read gave %s, parallel read %s", cmrscl_status_name(st),
               cmrscl_status_name(par_st));
    if (st == CMRSCL_OK)
        FUZZ_CHECK(fuzz_csr_identical(csr, &par), "serial and parallel reads differ");
    else
        FUZZ_CHECK(strcmp(message, cmrscl_last_error()) == 0,
                   "serial read said '%s', parallel read '%s'", message, cmrscl_last_error());
    cmrscl_csr_free(&par);
    free(message);
}

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* The writer prints %.17g, so every value must read back bit for bit - except a NaN's
 * payload, which "nan" and "-nan" cannot carry: a payload the reader took from
 * "nan(123)" comes back as the default NaN of that sign (crashes/mtx_nan_payload.mtx). */
static bool same_after_writing(double a, double b)
{
    uint64_t x = bits_of(a), y = bits_of(b);
    return x == y || (a != a && b != b && (x >> 63) == (y >> 63));
}

static void check_write_read(const cmrscl_csr *csr)
{
    const char *path = scratch_path();
    cmrscl_status st = cmrscl_mtx_write(path, csr);
    FUZZ_CHECK(st == CMRSCL_OK, "mtx_write: %s", cmrscl_status_name(st));
    /* Read back from memory: the file reader's megabyte buffers would cost more than all
     * the rest (fuzz_check_same_as_file covers the file reader). */
    off_t size = lseek(scratch_fd, 0, SEEK_END);
    char *text = malloc(size > 0 ? (size_t)size : 1);
    FUZZ_CHECK(size >= 0 && text && pread(scratch_fd, text, (size_t)size, 0) == size,
               "cannot read the memory file back");
    cmrscl_csr back;
    st = cmrs_mtx_read_memory(text, (size_t)size, "<written>", &back);
    free(text);
    FUZZ_CHECK(st == CMRSCL_OK, "reading what mtx_write wrote: %s", cmrscl_status_name(st));
    FUZZ_CHECK(back.rows == csr->rows && back.cols == csr->cols && back.nnz == csr->nnz &&
                   memcmp(back.row_ptr, csr->row_ptr, ((size_t)csr->rows + 1) * 8) == 0 &&
                   (csr->nnz == 0 || memcmp(back.col_ind, csr->col_ind, (size_t)csr->nnz * 4) == 0),
               "write -> read changed the structure");
    for (int64_t k = 0; k < csr->nnz; ++k)
        FUZZ_CHECK(same_after_writing(csr->values[k], back.values[k]),
                   "write -> read changed value %lld: %016llx (%.17g) -> %016llx", (long long)k,
                   (unsigned long long)bits_of(csr->values[k]), csr->values[k],
                   (unsigned long long)bits_of(back.values[k]));
    cmrscl_csr_free(&back);
}

void fuzz_check_read_ok(const cmrscl_csr *csr, int height, unsigned flags)
{
    FUZZ_CHECK(cmrscl_csr_validate(csr) == CMRSCL_OK, "the reader returned an invalid CSR");
    for (int32_t i = 0; i < csr->rows; ++i)
        for (int64_t k = csr->row_ptr[i] + 1; k < csr->row_ptr[i + 1]; ++k)
            FUZZ_CHECK(csr->col_ind[k - 1] < csr->col_ind[k],
                       "row %d not canonical: column %d then %d", i, csr->col_ind[k - 1],
                       csr->col_ind[k]);
    fuzz_check_cmrs_round_trip(csr, height, flags, csr, NULL);
    check_write_read(csr);
}

void fuzz_check_read_error(cmrscl_status st, const char *name, const cmrscl_csr *out)
{
    FUZZ_CHECK(out->rows == 0 && out->cols == 0 && out->nnz == 0 && !out->row_ptr &&
                   !out->col_ind && !out->values,
               "a failed read left output behind");
    FUZZ_CHECK(st == CMRSCL_ERROR_PARSE || st == CMRSCL_ERROR_UNSUPPORTED ||
                   st == CMRSCL_ERROR_TOO_LARGE || st == CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
               "unexpected status %s (%d)", cmrscl_status_name(st), (int)st);
    const char *msg = cmrscl_last_error();
    FUZZ_CHECK(msg[0] != '\0', "empty error message for %s", cmrscl_status_name(st));
    FUZZ_CHECK(strncmp(msg, name, strlen(name)) == 0, "the message does not name the input");
    /* The reader shows offending tokens with '?' for unprintable bytes. */
    for (const char *p = msg; *p; ++p)
        FUZZ_CHECK(*p >= 0x20 && *p < 0x7f, "unprintable byte 0x%02x in the message",
                   (unsigned char)*p);
}

void fuzz_check_read(cmrscl_status st, const cmrscl_csr *csr, const char *name, size_t size)
{
    if (st == CMRSCL_OK)
        fuzz_check_read_ok(csr, 1 + (int)(size % 37), (unsigned)(size / 37 % 4));
    else
        fuzz_check_read_error(st, name, csr);
}
