/* mtx_source.h - where the Matrix Market reader's bytes come from (mtx_source.c): a file
 * through zlib's gzread or a memory buffer (gzip inflated). Private to the reader. */
#ifndef CMRSCL_MTX_SOURCE_H
#define CMRSCL_MTX_SOURCE_H

#include "base/base.h"

#include <sys/stat.h>
#include <zlib.h>

enum {
    CHUNK = 1 << 20,      /* text bytes requested from the source at a time */
    GZ_BUFFER = 256 << 10 /* zlib's own read buffer: fewer, larger read() calls */
};

typedef struct mtx_source {
    const char *name;
    const cmrscl_mtx_options *opt;
    uint64_t total, next_report; /* progress, in bytes of the file as stored */
    gzFile gz;                   /* file source; NULL for memory */
    const unsigned char *mem;
    size_t mem_size, mem_pos;
    bool gzip, gzip_end; /* memory source holds gzip: zs is live */
    z_stream zs;
} mtx_source;

/* Opens a file for reading: *fd and its status, or a message naming it (a directory too). */
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_open(const char *path, int *fd, struct stat *sb);
/* Calls the caller's progress function now and then (always when `always`). */
CMRSCL_HIDDEN void cmrs_mtx_report_progress(mtx_source *s, uint64_t done, bool always);
/* Up to room bytes into dst; *got == 0 at the end. Fails naming the source on a read
 * error or damaged gzip data. */
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_source_read(mtx_source *s, char *dst, size_t room,
                                                 size_t *got);
/* The whole text of a source (inflated if it is gzip) with a '\0' after its *size bytes;
 * hint: the expected size. */
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_source_slurp(mtx_source *src, size_t hint, char **text,
                                                  size_t *size);
/* A memory source, set up for plain text or gzip; false if zlib has no memory. */
CMRSCL_HIDDEN bool cmrs_mtx_memory_source(mtx_source *src, const void *data, size_t size,
                                          const char *name);

#endif
