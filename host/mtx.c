/* mtx.c - Matrix Market reader: a .mtx or .mtx.gz file or a memory buffer (mtx_source.c)
 * -> COO -> canonical CSR, read in large chunks and tokenized by mtx_scan.c; big files go
 * to the parallel reader (mtx_parallel.c) first. Every size, index and count is checked:
 * a hostile file fails with a message naming its line. */
#include "internal.h"
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

/* Fuzzers build with this macro; a header may declare a matrix of 2^31 rows and no
 * entries, whose valid CSR alone takes gigabytes, so they get a smaller limit. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define MAX_DIMENSION (1 << 16)
#else
#define MAX_DIMENSION INT32_MAX
#endif
/* Entries are counted in 64 bits; mirroring a symmetric file's entries must not overflow. */
#define MAX_ENTRIES (INT64_MAX / 2)

enum { FIRST_ENTRIES = 1 << 12 }; /* initial COO capacity, whatever the header declares */

static cmrscl_status line_fail(const parser *ps, cmrscl_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static cmrscl_status line_fail(const parser *ps, cmrscl_status status, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cmrscl_fail(status, "%s:%lld: %s", ps->name, ps->line, what);
}

/* ---- header: banner and size line ---- */

/* The words allowed at each banner position; `unsupported` names a valid Matrix Market
 * variant that this library does not read. */
static const struct banner_word {
    int pos;
    const char *word;
    int value;
    const char *unsupported;
} banner_words[] = {
    {1, "matrix", 0, NULL},
    {1, "vector", 0, "vector objects are not supported, only matrices"},
    {2, "coordinate", 0, NULL},
    {2, "array", 0, "dense array format not supported, only coordinate"},
    {3, "real", FIELD_REAL, NULL},
    {3, "integer", FIELD_INTEGER, NULL},
    {3, "pattern", FIELD_PATTERN, NULL},
    {3, "complex", 0, "complex values are not supported"},
    {4, "general", SYM_GENERAL, NULL},
    {4, "symmetric", SYM_SYMMETRIC, NULL},
    {4, "skew-symmetric", SYM_SKEW, NULL},
    {4, "hermitian", 0, "hermitian matrices (complex values) are not supported"},
};
static const char *const banner_what[] = {"banner", "object", "format", "field", "symmetry"};

static cmrscl_status banner_word(const parser *ps, const mtx_token *t, int pos, int *value)
{
    for (size_t i = 0; i < sizeof banner_words / sizeof *banner_words; ++i) {
        const struct banner_word *w = &banner_words[i];
        if (w->pos != pos || !mtx_tok_is(t->p, t->end, w->word))
            continue;
        if (w->unsupported)
            return line_fail(ps, CMRSCL_ERROR_UNSUPPORTED, "%s", w->unsupported);
        *value = w->value;
        return CMRSCL_OK;
    }
    char shown[48];
    return line_fail(ps, CMRSCL_ERROR_PARSE, "unknown %s '%s' in the banner", banner_what[pos],
                     mtx_show(t->p, t->end, shown));
}

static cmrscl_status parse_banner(parser *ps, const char *p, const char *e)
{
    mtx_token t[5];
    char shown[48];
    if (e - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3; /* a UTF-8 byte order mark, as some Windows editors write */
    int n = mtx_split(p, e, t, 5);
    if (n == 0)
        return CMRSCL_OK;
    if (!mtx_tok_is(t[0].p, t[0].end, "%%matrixmarket"))
        return line_fail(ps, CMRSCL_ERROR_PARSE,
                         "missing %%%%MatrixMarket banner (the file starts with '%s')",
                         mtx_show(t[0].p, e, shown));
    int values[5] = {0};
    for (int pos = 1; pos < n && pos <= 4; ++pos) {
        cmrscl_status st = banner_word(ps, &t[pos], pos, &values[pos]);
        if (st != CMRSCL_OK)
            return st;
    }
    if (n != 5)
        return line_fail(ps, CMRSCL_ERROR_PARSE,
                         "bad banner (%s): expected '%%%%MatrixMarket matrix coordinate "
                         "<field> <symmetry>'",
                         n < 5 ? banner_what[n] : "text after the symmetry");
    ps->field = (field_kind)values[3];
    ps->symmetry = (symmetry_kind)values[4];
    if (ps->field == FIELD_PATTERN && ps->symmetry == SYM_SKEW)
        return line_fail(ps, CMRSCL_ERROR_UNSUPPORTED,
                         "pattern skew-symmetric is not supported (no values to negate)");
    ps->stage = STAGE_SIZE;
    return CMRSCL_OK;
}

static cmrscl_status parse_size(parser *ps, const char *p, const char *e)
{
    mtx_token t[3];
    int64_t v[3];
    p = skip_blanks(p, e);
    if (p == e || *p == '%')
        return CMRSCL_OK;
    int n = mtx_split(p, e, t, 3);
    for (int i = 0; i < n && i < 3; ++i)
        if (!mtx_scan_int(t[i].p, t[i].end, &v[i]))
            n = -1;
    if (n != 3)
        return line_fail(ps, CMRSCL_ERROR_PARSE,
                         "bad size line: expected three integers 'rows columns entries'");
    if (v[0] < 0 || v[1] < 0 || v[2] < 0)
        return line_fail(ps, CMRSCL_ERROR_PARSE, "negative size %lld x %lld, %lld entries",
                         (long long)v[0], (long long)v[1], (long long)v[2]);
    if (v[0] > MAX_DIMENSION || v[1] > MAX_DIMENSION || v[2] > MAX_ENTRIES) {
        char shown[3][48]; /* the text, since huge numbers saturated in v */
        for (int i = 0; i < 3; ++i)
            mtx_show(t[i].p, t[i].end, shown[i]);
        return line_fail(ps, CMRSCL_ERROR_TOO_LARGE,
                         "size %s x %s with %s entries exceeds the limit of %lld %s", shown[0],
                         shown[1], shown[2],
                         v[2] > MAX_ENTRIES ? (long long)MAX_ENTRIES : (long long)MAX_DIMENSION,
                         v[2] > MAX_ENTRIES ? "entries" : "rows and columns");
    }
    if (ps->symmetry != SYM_GENERAL && v[0] != v[1])
        return line_fail(ps, CMRSCL_ERROR_PARSE,
                         "a symmetric matrix must be square, not %lld x %lld", (long long)v[0],
                         (long long)v[1]);
    ps->rows = (int32_t)v[0];
    ps->cols = (int32_t)v[1];
    ps->declared = v[2];
    /* Mirroring at most doubles the entries; the COO arrays never grow beyond this. */
    ps->max_count = ps->symmetry == SYM_GENERAL ? v[2] : 2 * v[2];
    ps->stage = STAGE_ENTRIES;
    return CMRSCL_OK;
}

/* ---- entries ---- */

cmrscl_status mtx_reserve_entries(parser *ps, int64_t cap)
{
    if ((uint64_t)cap > SIZE_MAX / sizeof(double))
        goto oom;
    void *p = realloc(ps->ri, (size_t)cap * sizeof(int32_t));
    if (!p)
        goto oom;
    ps->ri = p;
    if (!(p = realloc(ps->ci, (size_t)cap * sizeof(int32_t))))
        goto oom;
    ps->ci = p;
    if (ps->field != FIELD_PATTERN) {
        if (!(p = realloc(ps->val, (size_t)cap * sizeof(double))))
            goto oom;
        ps->val = p;
    }
    ps->cap = cap;
    return CMRSCL_OK;
oom:
    return line_fail(ps, CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld entries",
                     (long long)cap);
}

/* Geometric growth, capped by what the header allows: a header that lies about its size
 * costs memory only in proportion to the entries actually present. */
static cmrscl_status grow_entries(parser *ps)
{
    if (ps->cap >= ps->max_count) /* only the parallel reader's shares get here (it reruns) */
        return line_fail(ps, CMRSCL_ERROR_PARSE, "more entries than the %lld expected",
                         (long long)ps->max_count);
    int64_t cap = ps->cap ? 2 * ps->cap : FIRST_ENTRIES;
    return mtx_reserve_entries(ps, cap > ps->max_count ? ps->max_count : cap);
}

static inline cmrscl_status push(parser *ps, int32_t r, int32_t c, double v)
{
    if (ps->count == ps->cap) {
        cmrscl_status st = grow_entries(ps);
        if (st != CMRSCL_OK)
            return st;
    }
    ps->ri[ps->count] = r;
    ps->ci[ps->count] = c;
    if (ps->val)
        ps->val[ps->count] = v;
    ps->count++;
    return CMRSCL_OK;
}

/* Stores an entry (0-based) and, for the symmetric kinds, its mirror image. */
static cmrscl_status store(parser *ps, int32_t r, int32_t c, double v)
{
    if (ps->symmetry == SYM_SKEW && r == c)
        return line_fail(ps, CMRSCL_ERROR_PARSE,
                         "diagonal entry (%d, %d) in a skew-symmetric matrix", r + 1, c + 1);
    cmrscl_status st = push(ps, r, c, v);
    if (st == CMRSCL_OK && ps->symmetry != SYM_GENERAL && r != c)
        st = push(ps, c, r, ps->symmetry == SYM_SKEW ? -v : v);
    return st;
}

static cmrscl_status bad_index(const parser *ps, const char *what, const char *p, const char *e,
                               int32_t limit)
{
    char shown[48];
    int64_t ignored;
    if (!mtx_scan_int(p, e, &ignored))
        return line_fail(ps, CMRSCL_ERROR_PARSE, "bad %s index '%s'", what, mtx_show(p, e, shown));
    return line_fail(ps, CMRSCL_ERROR_PARSE, "%s index %s out of range 1..%d", what,
                     mtx_show(p, e, shown), limit);
}

static cmrscl_status bad_value(const parser *ps, const char *p, const char *e)
{
    char shown[48];
    if (ps->field == FIELD_INTEGER)
        return line_fail(ps, CMRSCL_ERROR_PARSE, "non-integer value '%s' in an integer matrix",
                         mtx_show(p, e, shown));
    return line_fail(ps, CMRSCL_ERROR_PARSE, "bad value '%s'", mtx_show(p, e, shown));
}

cmrscl_status mtx_parse_entry(parser *ps, const char *p, const char *e)
{
    int64_t r, c;
    double v = 1.0;
    p = skip_blanks(p, e);
    if (p == e || *p == '%')
        return CMRSCL_OK;
    if (ps->seen == ps->declared)
        return line_fail(ps, CMRSCL_ERROR_PARSE, "more entries than the %lld declared",
                         (long long)ps->declared);
    const char *q = mtx_scan_int(p, e, &r);
    if (!q || r < 1 || r > ps->rows)
        return bad_index(ps, "row", p, e, ps->rows);
    if ((p = skip_blanks(q, e)) == e)
        return line_fail(ps, CMRSCL_ERROR_PARSE, "missing column index");
    q = mtx_scan_int(p, e, &c);
    if (!q || c < 1 || c > ps->cols)
        return bad_index(ps, "column", p, e, ps->cols);
    p = skip_blanks(q, e);
    if (ps->field != FIELD_PATTERN) {
        if (p == e)
            return line_fail(ps, CMRSCL_ERROR_PARSE, "missing value");
        q = ps->field == FIELD_REAL ? mtx_scan_real(p, e, &v) : mtx_scan_integer_value(p, e, &v);
        if (!q)
            return bad_value(ps, p, e);
        p = skip_blanks(q, e);
    }
    if (p != e) {
        char shown[48];
        return line_fail(ps, CMRSCL_ERROR_PARSE, "unexpected '%s' after the entry",
                         mtx_show(p, e, shown));
    }
    ps->seen++;
    return store(ps, (int32_t)(r - 1), (int32_t)(c - 1), v);
}

/* ---- the stream: complete lines from chunks ---- */

cmrscl_status mtx_parse_line(parser *ps, const char *p, const char *e)
{
    if (ps->stage == STAGE_ENTRIES)
        return mtx_parse_entry(ps, p, e);
    return ps->stage == STAGE_BANNER ? parse_banner(ps, p, e) : parse_size(ps, p, e);
}

/* Called when a partial line fills the whole buffer: grow it, up to MTX_MAX_LINE + 1 bytes
 * (room for the longest line and the '\n' that proves it is complete). */
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
 * carried over to the front of the buffer. buf[len] is always a '\0' sentinel. */
static cmrscl_status parse_stream(mtx_source *src, parser *ps, size_t cap)
{
    char *buf = malloc(cap + 1);
    if (!buf)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory for the read buffer",
                           ps->name);
    size_t len = 0, pos = 0;
    bool eof = false;
    cmrscl_status st = CMRSCL_OK;
    while (st == CMRSCL_OK) {
        const char *nl;
        while (st == CMRSCL_OK && (nl = memchr(buf + pos, '\n', len - pos)) != NULL) {
            ps->line++;
            st = mtx_parse_line(ps, buf + pos, nl);
            pos = (size_t)(nl - buf) + 1;
        }
        if (st != CMRSCL_OK || eof)
            break;
        memmove(buf, buf + pos, len - pos);
        len -= pos;
        pos = 0;
        if (len == cap && (st = grow_buffer(ps, &buf, &cap)) != CMRSCL_OK)
            break;
        size_t got = 0;
        st = mtx_source_read(src, buf + len, cap - len, &got);
        len += got;
        buf[len] = '\0';
        eof = got == 0;
    }
    if (st == CMRSCL_OK && pos < len) { /* a last line without '\n' */
        ps->line++;
        st = mtx_parse_line(ps, buf + pos, buf + len);
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
        return line_fail(ps, CMRSCL_ERROR_PARSE, "missing size line 'rows columns entries'");
    if (ps->seen < ps->declared)
        return line_fail(ps, CMRSCL_ERROR_PARSE,
                         "truncated file: it ends after %lld of the %lld declared entries",
                         (long long)ps->seen, (long long)ps->declared);
    return CMRSCL_OK;
}

static cmrscl_status parse_all(mtx_source *src, size_t cap, cmrscl_csr *out)
{
    parser ps = {.name = src->name, .stage = STAGE_BANNER};
    c_numeric_scope numeric;
    c_numeric_enter(&numeric);
    cmrscl_status st = parse_stream(src, &ps, cap);
    c_numeric_leave(&numeric);
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
    cmrscl_status st = mtx_source_slurp(src, hint, &text, &size);
    if (st == CMRSCL_OK)
        st = mtx_parse_parallel(text, size, src->name, threads, out);
    free(text);
    return st == CMRSCL_OK;
}

/* ---- public entry points ---- */

cmrscl_status mtx_read_memory_threads(const void *data, size_t size, const char *name, int threads,
                                      cmrscl_csr *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    mtx_source src;
    if (threads > 1 && (data || size == 0) && mtx_memory_source(&src, data, size, name)) {
        bool done = read_parallel(&src, size, threads, out);
        if (src.gzip)
            inflateEnd(&src.zs);
        if (done)
            return CMRSCL_OK;
    }
    return mtx_read_memory(data, size, name, out);
}

cmrscl_status mtx_read_memory(const void *data, size_t size, const char *name, cmrscl_csr *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    if (!data && size > 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "data is NULL");
    mtx_source src;
    if (!mtx_memory_source(&src, data, size, name))
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
    cmrscl_status opened = mtx_open(path, &fd, &sb);
    if (opened != CMRSCL_OK)
        return opened;
    mtx_source src = {.name = path, .opt = opt};
    src.total = S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
    mtx_report_progress(&src, 0, true);
    int threads = opt && opt->threads > 0 ? opt->threads : parallel_threads();
    bool parallel = threads > 1 && src.total >= PARALLEL_MIN_BYTES;
    unsigned char magic[2] = {0};
    bool gzip = pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (parallel && !gzip) {
        mtx_text text;
        bool done = mtx_load_text(fd, src.total, path, threads, &text) == CMRSCL_OK &&
                    mtx_parse_parallel(text.text, text.size, path, threads, out) == CMRSCL_OK;
        mtx_text_free(&text);
        if (done) {
            mtx_report_progress(&src, src.total, true);
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
        mtx_report_progress(&src, src.total, true);
    gzclose(src.gz);
    return st;
}
