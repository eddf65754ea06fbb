/* mtx_source.c - the bytes of a Matrix Market file for the reader: a file through zlib's
 * gzread (plain files pass through unchanged) or a memory buffer, inflated here when it
 * starts with the gzip magic; progress reports; the whole text in one buffer for the
 * parallel reader. */
#include "mtx_source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

cmrscl_status cmrs_mtx_open(const char *path, int *fd, struct stat *sb)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot open %s: %s", path, strerror(errno));
    int err = fstat(*fd, sb) != 0 ? errno : S_ISDIR(sb->st_mode) ? EISDIR : 0;
    if (err) {
        close(*fd);
        *fd = -1;
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot read %s: %s", path, strerror(err));
    }
    return CMRSCL_OK;
}

void cmrs_mtx_report_progress(mtx_source *s, uint64_t done, bool always)
{
    if (!s->opt || !s->opt->progress || (!always && done < s->next_report))
        return;
    s->next_report = done + (s->total >= 100 ? s->total / 100 : 1);
    s->opt->progress(s->opt->user, done, s->total);
}

static cmrscl_status read_file(mtx_source *s, char *dst, size_t room, size_t *got)
{
    int err = Z_OK;
    int n = gzread(s->gz, dst, (unsigned)room);
    const char *msg = n <= 0 ? gzerror(s->gz, &err) : "";
    if (n < 0 && err == Z_ERRNO)
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "%s: read failed: %s", s->name, strerror(errno));
    if (n < 0) {
        /* zlib prefixes "<fd:N>: ", which says nothing to the user. */
        const char *colon = strncmp(msg, "<fd:", 4) == 0 ? strstr(msg, ": ") : NULL;
        return cmrscl_fail(CMRSCL_ERROR_PARSE, "%s: corrupt gzip data (%s)", s->name,
                           colon ? colon + 2 : msg);
    }
    /* zlib reports a gzip stream cut short only through the error state at the end. */
    if (n == 0 && err == Z_BUF_ERROR)
        return cmrscl_fail(CMRSCL_ERROR_PARSE, "%s: truncated gzip data (unexpected end of file)",
                           s->name);
    *got = (size_t)n;
    z_off_t done = gzoffset(s->gz);
    if (done >= 0)
        cmrs_mtx_report_progress(s, (uint64_t)done, false);
    return CMRSCL_OK;
}

/* A gzip stream ended; go on if another member follows (as gzip itself does), and
 * ignore anything else after it, as zlib's gzread does for files. */
static void next_gzip_member(mtx_source *s)
{
    size_t pos = (size_t)((const unsigned char *)s->zs.next_in - s->mem);
    if (s->mem_size - pos >= 2 && s->mem[pos] == 0x1f && s->mem[pos + 1] == 0x8b)
        inflateReset(&s->zs);
    else
        s->gzip_end = true;
}

static cmrscl_status read_inflate(mtx_source *s, char *dst, size_t room, size_t *got)
{
    z_stream *zs = &s->zs;
    zs->next_out = (Bytef *)dst;
    zs->avail_out = (uInt)room;
    /* Each inflate() call consumes input, produces output or fails: no endless loop. */
    while (zs->avail_out > 0 && !s->gzip_end) {
        if (zs->avail_in == 0) {
            size_t left = s->mem_size - s->mem_pos;
            if (left == 0)
                return cmrscl_fail(CMRSCL_ERROR_PARSE,
                                   "%s: truncated gzip data (unexpected end of input)", s->name);
            zs->next_in = (Bytef *)(s->mem + s->mem_pos);
            zs->avail_in = left > UINT_MAX ? UINT_MAX : (uInt)left;
            s->mem_pos += zs->avail_in;
        }
        int ret = inflate(zs, Z_NO_FLUSH);
        if (ret == Z_STREAM_END)
            next_gzip_member(s);
        else if (ret == Z_MEM_ERROR)
            return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory to inflate",
                               s->name);
        else if (ret != Z_OK)
            return cmrscl_fail(CMRSCL_ERROR_PARSE, "%s: corrupt gzip data (%s)", s->name,
                               zs->msg ? zs->msg : "inflate failed");
    }
    *got = room - zs->avail_out;
    return CMRSCL_OK;
}

cmrscl_status cmrs_mtx_source_read(mtx_source *s, char *dst, size_t room, size_t *got)
{
    if (s->gz)
        return read_file(s, dst, room, got);
    if (s->gzip)
        return read_inflate(s, dst, room, got);
    size_t n = s->mem_size - s->mem_pos < room ? s->mem_size - s->mem_pos : room;
    if (n)
        memcpy(dst, s->mem + s->mem_pos, n);
    s->mem_pos += n;
    *got = n;
    return CMRSCL_OK;
}

/* The whole text of a source (inflated if it is gzip) with a '\0' after it. */
cmrscl_status cmrs_mtx_source_slurp(mtx_source *src, size_t hint, char **text, size_t *size)
{
    size_t cap = hint < CHUNK ? CHUNK : hint, len = 0, got = 0;
    char *buf = malloc(cap + 1);
    cmrscl_status st = buf ? CMRSCL_OK : CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    while (st == CMRSCL_OK) {
        if (len == cap) {
            char *grown = cap <= SIZE_MAX / 2 - 1 ? realloc(buf, 2 * cap + 1) : NULL;
            if (!grown) {
                st = CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
                break;
            }
            buf = grown, cap *= 2;
        }
        size_t room = cap - len < (1u << 30) ? cap - len : (1u << 30);
        st = cmrs_mtx_source_read(src, buf + len, room, &got);
        if (st != CMRSCL_OK || got == 0)
            break;
        len += got;
    }
    if (st != CMRSCL_OK) {
        free(buf);
        return st;
    }
    buf[len] = '\0';
    *text = buf;
    *size = len;
    return CMRSCL_OK;
}

/* A memory source, set up for plain text or gzip; false if zlib has no memory. */
bool cmrs_mtx_memory_source(mtx_source *src, const void *data, size_t size, const char *name)
{
    *src = (mtx_source){.name = name ? name : "<memory>", .mem = data, .mem_size = size};
    if (size >= 2 && src->mem[0] == 0x1f && src->mem[1] == 0x8b) {
        /* 15 + 32: the largest window, and a gzip (or zlib) header detected. */
        if (inflateInit2(&src->zs, 15 + 32) != Z_OK)
            return false;
        src->gzip = true;
    }
    return true;
}
