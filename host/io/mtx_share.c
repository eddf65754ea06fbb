/* mtx_share.c - one share of a Matrix Market file's entry lines as coordinates, for one
 * process of a distributed reader (cmrscl_mtx_read_share): the header parsed by the reader's
 * own routines, then only the share's lines, cut as the parallel reader cuts its shares
 * (cmrs_mtx_share_start). Lines are numbered from the share's start while parsing; only when a
 * line fails are the lines before the share counted, and the share parsed again, so that
 * the message names the line as the serial reader would. */
#include "mtx_parser.h"
#include "mtx_source.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file's whole text with a '\0' after it: a plain file mapped (pages of other shares
 * are never touched), a gzip file inflated. */
typedef struct share_text {
    mtx_text plain;
    char *inflated;
    const char *text;
    size_t size;
} share_text;

static cmrscl_status open_text(const char *path, share_text *t)
{
    memset(t, 0, sizeof *t);
    int fd;
    struct stat sb;
    cmrscl_status opened = cmrs_mtx_open(path, &fd, &sb);
    if (opened != CMRSCL_OK)
        return opened;
    unsigned char magic[2] = {0};
    bool gzip = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    cmrscl_status st;
    if (!gzip) {
        st = cmrs_mtx_load_text(fd, (uint64_t)sb.st_size, path, 1, &t->plain);
        t->text = t->plain.text, t->size = t->plain.size;
        close(fd);
        return st;
    }
    mtx_source src = {.name = path};
    src.gz = gzdopen(fd, "rb");
    if (!src.gz) {
        close(fd);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory for zlib", path);
    }
    gzbuffer(src.gz, GZ_BUFFER);
    st = cmrs_mtx_source_slurp(&src, 4 * (size_t)sb.st_size, &t->inflated, &t->size);
    gzclose(src.gz);
    t->text = t->inflated;
    return st;
}

static void close_text(share_text *t)
{
    if (t->plain.text)
        cmrs_mtx_text_free(&t->plain);
    free(t->inflated);
    memset(t, 0, sizeof *t);
}

/* Parses the entry lines [p, e) into ps, numbering them from ps->line + 1. */
static cmrscl_status parse_lines(parser *ps, const char *p, const char *e)
{
    cmrscl_status st = CMRSCL_OK;
    c_numeric_scope numeric;
    cmrs_c_numeric_enter(&numeric);
    while (st == CMRSCL_OK && p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p)), *line_end = nl ? nl : e;
        ps->line++;
        st = line_end - p >= MTX_MAX_LINE
                 ? cmrscl_fail(CMRSCL_ERROR_PARSE, "%s:%lld: line %lld is longer than %d bytes",
                               ps->name, ps->line, ps->line, MTX_MAX_LINE)
                 : cmrs_mtx_parse_entry(ps, p, line_end);
        p = nl ? nl + 1 : e;
    }
    cmrs_c_numeric_leave(&numeric);
    return st;
}

static int64_t count_newlines(const char *p, const char *e)
{
    int64_t n = 0;
    for (const char *nl; p < e && (nl = memchr(p, '\n', (size_t)(e - p))) != NULL; p = nl + 1)
        ++n;
    return n;
}

/* The header's failure with the serial reader's message: it stops at the same line. */
static cmrscl_status header_failure(const char *path)
{
    cmrscl_mtx_options serial = {.threads = 1};
    cmrscl_csr unexpected;
    cmrscl_status st = cmrscl_mtx_read(path, &serial, &unexpected);
    cmrscl_csr_free(&unexpected);
    return st != CMRSCL_OK ? st : cmrscl_fail(CMRSCL_ERROR_PARSE, "%s: bad header", path);
}

cmrscl_status cmrscl_mtx_read_share(const char *path, int share, int shares, cmrscl_mtx_share *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!path || !out || shares < 1 || share < 0 || share >= shares)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "path or out is NULL, or share %d is outside 0..%d", share, shares - 1);
    share_text t;
    cmrscl_status st = open_text(path, &t);
    if (st != CMRSCL_OK)
        return st;
    const char *end = t.text + t.size, *body = NULL;
    parser header = {.name = path, .stage = STAGE_BANNER};
    if (cmrs_mtx_parse_header(&header, t.text, end, &body) != CMRSCL_OK) {
        close_text(&t);
        return header_failure(path);
    }
    const char *p = cmrs_mtx_share_start(body, end, share, shares);
    const char *e = cmrs_mtx_share_start(body, end, share + 1, shares);
    int64_t lines = count_newlines(p, e) + (e > p && e[-1] != '\n');
    parser ps = header;
    ps.declared = INT64_MAX; /* the total is the caller's check, over all shares */
    ps.line = 0;
    st = cmrs_mtx_reserve_entries(&ps, lines * (header.symmetry == SYM_GENERAL ? 1 : 2) + 1);
    ps.max_count = ps.cap;
    if (st == CMRSCL_OK && (st = parse_lines(&ps, p, e)) != CMRSCL_OK &&
        st != CMRSCL_ERROR_OUT_OF_HOST_MEMORY) {
        /* Again, numbered in the whole file, for the message. */
        ps.line = header.line + count_newlines(body, p);
        ps.count = ps.seen = 0;
        st = parse_lines(&ps, p, e);
    }
    if (st == CMRSCL_OK && !ps.val) { /* a pattern file: ones */
        ps.val = cmrscl_alloc((size_t)ps.cap, sizeof(double));
        for (int64_t k = 0; ps.val && k < ps.count; ++k)
            ps.val[k] = 1.0;
        if (!ps.val)
            st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory for the values", path);
    }
    close_text(&t);
    if (st != CMRSCL_OK) {
        free(ps.ri), free(ps.ci), free(ps.val);
        return st;
    }
    *out = (cmrscl_mtx_share){header.rows, header.cols, header.declared, ps.seen,
                              ps.count,    ps.ri,       ps.ci,           ps.val};
    return CMRSCL_OK;
}

void cmrscl_mtx_share_free(cmrscl_mtx_share *s)
{
    if (!s)
        return;
    free(s->row_idx);
    free(s->col_idx);
    free(s->values);
    memset(s, 0, sizeof *s);
}
