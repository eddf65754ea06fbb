/* fuzz_check.h - the properties every fuzz target asserts, shared so the targets stay a
 * page each. A violated property aborts, which libFuzzer reports as a crash and saves
 * the input; the message says which property failed. */
#ifndef CMRSCL_FUZZ_CHECK_H
#define CMRSCL_FUZZ_CHECK_H

#include "io/io.h"
#include "format/format.h"

#include <stddef.h>
#include <stdint.h>

/* Not assert(): the build may define NDEBUG, and a fuzzer must never skip its checks. */
#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                                     \
    } while (0)

_Noreturn void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Bit-for-bit equality of two CSR matrices: a NaN equals only the same NaN. */
bool fuzz_csr_identical(const cmrscl_csr *a, const cmrscl_csr *b);

/* A successful read: valid, canonical (columns strictly ascending in every row), exact
 * through CSR -> CMRS -> CSR with the given height and flags, and exact through the
 * public writer and reader. */
void fuzz_check_read_ok(const cmrscl_csr *csr, int height, unsigned flags);

/* A failed read: one of the codes a reader documents, a message that names the input
 * (`name`) and holds only printable text, and an output left zeroed. */
void fuzz_check_read_error(cmrscl_status st, const char *name, const cmrscl_csr *out);

/* Either of the two above for the result of reading an input of `size` bytes; the
 * size picks the CMRS height and flags, cheap variety that a mutation can steer. */
void fuzz_check_read(cmrscl_status st, const cmrscl_csr *csr, const char *name, size_t size);

/* The public file reader (zlib's gzread, 1 MiB pieces) must agree with the memory read
 * (status `st`, matrix `csr` named `name`) of the same bytes: same status, message and
 * matrix; for gzip bytes, success in both or failure in both, the same matrix. Call it
 * while cmrscl_last_error() still describes the memory read; it leaves the file read's
 * message there. */
void fuzz_check_same_as_file(const uint8_t *data, size_t size, cmrscl_status st,
                             const cmrscl_csr *csr, const char *name);

/* The parallel reader (3 threads) must agree with the serial memory read (status `st`,
 * matrix `csr`) exactly: status, message and matrix. Call it while cmrscl_last_error()
 * still describes the serial read. */
void fuzz_check_same_in_parallel(const uint8_t *data, size_t size, cmrscl_status st,
                                 const cmrscl_csr *csr, const char *name);

/* CSR -> CMRS with (height, flags) must succeed, keep the documented structure, and
 * come back as exactly `expect` (the input itself unless column ordering reorders a
 * non-canonical row). The CMRS goes to *keep when that is not NULL, else it is freed. */
void fuzz_check_cmrs_round_trip(const cmrscl_csr *csr, int height, unsigned flags,
                                const cmrscl_csr *expect, cmrscl_cmrs *keep);

#endif /* CMRSCL_FUZZ_CHECK_H */
