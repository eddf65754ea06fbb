/* mtx.c - Matrix Market reader: a .mtx or .mtx.gz file or a memory buffer (mtx_source.c)
 * -> COO -> canonical CSR, read in large chunks and tokenized by mtx_scan.c; big files go
 * to the parallel reader (mtx_parallel.c) first. Every size, index and count is checked:
 * a hostile file fails with a message naming its line. */
#include "io/io.h"
#include "mtx_parser.h"
#include "mtx_scan.h"
#include "mtx_source.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static cmrscl_status grow_buffer(const parser *ps, char **buf, size_t *cap)
{
    if (*cap > MTX_MAX_LINE)
        return cmrscl_fail(CMRSCL_ERROR_PARSE, "%s:%lld: line %lld is longer than %d bytes",
                           ps->name, ps->line + 1, ps->line + 1, MTX_MAX_LINE);
    size_t grown = *cap * 2 > (size_t)MTX_MAX_LINE + 1 ? (size_t)MTX_MAX_LINE + 1 : *cap * 2;
    char *p = realloc(*buf, grown + 1);
    if (!p)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory for a %zu-byte line",
                           ps->name, grown);
    *buf = p;
    *cap = grown;
    return CMRSCL_OK;
}

/* Reads the source chunk by chunk, parsing each complete line; a partial last line is
 * carried over to the front of the buffer. buf[len] is always a '\0' sentinel. A parser
 * reading the header only stops at the first entry line. */
static cmrscl_status parse_stream(mtx_source *src, parser *ps, size_t cap)
{
    char *buf = malloc(cap + 1);
    if (!buf)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory for the read buffer",
                           ps->name);
    size_t len = 0, pos = 0;
    bool eof = false;
    cmrscl_status st = CMRSCL_OK;
    bool done = false;
    while (st == CMRSCL_OK) {
        const char *nl;
        while (st == CMRSCL_OK && !done && (nl = memchr(buf + pos, '\n', len - pos)) != NULL) {
            ps->line++;
            st = cmrs_mtx_parse_line(ps, buf + pos, nl);
            pos = (size_t)(nl - buf) + 1;
            done = ps->header_only && ps->stage == STAGE_ENTRIES;
        }
        if (st != CMRSCL_OK || eof || done)
            break;
        memmove(buf, buf + pos, len - pos);
        len -= pos;
        pos = 0;
        if (len == cap && (st = grow_buffer(ps, &buf, &cap)) != CMRSCL_OK)
            break;
        size_t got = 0;
        st = cmrs_mtx_source_read(src, buf + len, cap - len, &got);
        len += got;
        buf[len] = '\0';
        eof = got == 0;
    }
    if (st == CMRSCL_OK && !done && pos < len) { /* a last line without '\n' */
        ps->line++;
        st = cmrs_mtx_parse_line(ps, buf + pos, buf + len);
    }
    free(buf);
    return st;
}

/* At the end of the text: was everything the header promised there? */
static cmrscl_status check_complete(const parser *ps)
{
    if (ps->stage == STAGE_BANNER)
        return cmrscl_fail(CMRSCL_ERROR_PARSE, "%s: empty file (no %%%%MatrixMarket banner)",
                           ps->name);
    if (ps->stage == STAGE_SIZE)
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE,
                                  "missing size line 'rows columns entries'");
    if (ps->seen < ps->declared)
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE,
                                  "truncated file: it ends after %lld of the %lld declared entries",
                                  (long long)ps->seen, (long long)ps->declared);
    return CMRSCL_OK;
}

static cmrscl_status parse_all(mtx_source *src, size_t cap, cmrscl_csr *out)
{
    parser ps = {.name = src->name, .stage = STAGE_BANNER};
    c_numeric_scope numeric;
    cmrs_c_numeric_enter(&numeric);
    cmrscl_status st = parse_stream(src, &ps, cap);
    cmrs_c_numeric_leave(&numeric);
    if (st == CMRSCL_OK)
        st = check_complete(&ps);
    if (st == CMRSCL_OK)
        st = cmrscl_csr_from_coo(ps.rows, ps.cols, ps.count, ps.ri, ps.ci, ps.val, out);
    free(ps.ri);
    free(ps.ci);
    free(ps.val);
    return st;
}

/* ---- the parallel reader first, the serial one when it declines ---- */

/* Files from this size on are worth the threads. */
#define PARALLEL_MIN_BYTES (4u << 20)

/* The parallel reader on a source; false when it declined (then *out is empty). */
static bool read_parallel(mtx_source *src, size_t hint, int threads, cmrscl_csr *out)
{
    char *text = NULL;
    size_t size = 0;
    cmrscl_status st = cmrs_mtx_source_slurp(src, hint, &text, &size);
    if (st == CMRSCL_OK)
        st = cmrs_mtx_parse_parallel(text, size, src->name, threads, out);
    free(text);
    return st == CMRSCL_OK;
}

/* ---- public entry points ---- */

cmrscl_status cmrs_mtx_read_memory_threads(const void *data, size_t size, const char *name,
                                           int threads, cmrscl_csr *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    mtx_source src;
    if (threads > 1 && (data || size == 0) && cmrs_mtx_memory_source(&src, data, size, name)) {
        bool done = read_parallel(&src, size, threads, out);
        if (src.gzip)
            inflateEnd(&src.zs);
        if (done)
            return CMRSCL_OK;
    }
    return cmrs_mtx_read_memory(data, size, name, out);
}

cmrscl_status cmrs_mtx_read_memory(const void *data, size_t size, const char *name, cmrscl_csr *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    if (!data && size > 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "data is NULL");
    mtx_source src;
    if (!cmrs_mtx_memory_source(&src, data, size, name))
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory for zlib", src.name);
    /* The whole text fits when it is small; a big one is read CHUNK bytes at a time. */
    size_t cap = src.gzip ? CHUNK / 16 : size < CHUNK ? size + 1 : CHUNK;
    cmrscl_status st = parse_all(&src, cap, out);
    if (src.gzip)
        inflateEnd(&src.zs);
    return st;
}

cmrscl_status cmrscl_mtx_read(const char *path, const cmrscl_mtx_options *opt, cmrscl_csr *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    if (!path)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "path is NULL");
    int fd;
    struct stat sb;
    cmrscl_status opened = cmrs_mtx_open(path, &fd, &sb);
    if (opened != CMRSCL_OK)
        return opened;
    mtx_source src = {.name = path, .opt = opt};
    src.total = S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
    cmrs_mtx_report_progress(&src, 0, true);
    int threads = opt && opt->threads > 0 ? opt->threads : cmrs_parallel_threads();
    bool parallel = threads > 1 && src.total >= PARALLEL_MIN_BYTES;
    unsigned char magic[2] = {0};
    bool gzip = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (parallel && !gzip) {
        mtx_text text;
        bool done = cmrs_mtx_load_text(fd, src.total, path, threads, &text) == CMRSCL_OK &&
                    cmrs_mtx_parse_parallel(text.text, text.size, path, threads, out) == CMRSCL_OK;
        cmrs_mtx_text_free(&text);
        if (done) {
            cmrs_mtx_report_progress(&src, src.total, true);
            close(fd);
            return CMRSCL_OK;
        }
    }
    src.gz = gzdopen(fd, "rb");
    if (!src.gz) {
        close(fd);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory for zlib", path);
    }
    gzbuffer(src.gz, GZ_BUFFER);
    cmrscl_status st = CMRSCL_ERROR_PARSE;
    if (parallel && gzip && read_parallel(&src, 4 * (size_t)src.total, threads, out))
        st = CMRSCL_OK;
    else if (gzrewind(src.gz) == 0) /* the serial reader from the start */
        src.next_report = 0, st = parse_all(&src, CHUNK, out);
    else
        st = cmrscl_fail(CMRSCL_ERROR_FILE_IO, "%s: cannot rewind", path);
    if (st == CMRSCL_OK)
        cmrs_mtx_report_progress(&src, src.total, true);
    gzclose(src.gz);
    return st;
}

cmrscl_status cmrscl_mtx_read_size(const char *path, int32_t *rows, int32_t *cols, int64_t *entries)
{
    if (!path || !rows || !cols || !entries)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "path, rows, cols or entries is NULL");
    *rows = *cols = 0, *entries = 0;
    int fd;
    struct stat sb;
    cmrscl_status st = cmrs_mtx_open(path, &fd, &sb);
    if (st != CMRSCL_OK)
        return st;
    mtx_source src = {.name = path};
    if (!(src.gz = gzdopen(fd, "rb"))) { /* plain text passes through */
        close(fd);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory for zlib", path);
    }
    parser ps = {.name = path, .stage = STAGE_BANNER, .header_only = true};
    st = parse_stream(&src, &ps, 1 << 16);
    if (st == CMRSCL_OK && ps.stage != STAGE_ENTRIES)
        st = check_complete(&ps);
    gzclose(src.gz);
    if (st == CMRSCL_OK)
        *rows = ps.rows, *cols = ps.cols, *entries = ps.max_count;
    return st;
}
