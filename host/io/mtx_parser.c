/* mtx_parser.c - the Matrix Market parser's lines: the banner, the size line and the entry
 * lines, each checked (every size, index and count: a hostile file fails with a message
 * naming its line), entries stored as COO with their mirror images for the symmetric kinds.
 * The serial stream (mtx.c), the parallel reader (mtx_parallel.c) and the share reader
 * (mtx_share.c) run it over their lines (mtx_parser.h). */
#include "io/io.h"
#include "mtx_parser.h"
#include "mtx_scan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

cmrscl_status cmrs_mtx_line_fail(const parser *ps, cmrscl_status status, const char *fmt, ...)
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
        if (w->pos != pos || !cmrs_mtx_tok_is(t->p, t->end, w->word))
            continue;
        if (w->unsupported)
            return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_UNSUPPORTED, "%s", w->unsupported);
        *value = w->value;
        return CMRSCL_OK;
    }
    char shown[48];
    return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE, "unknown %s '%s' in the banner",
                              banner_what[pos], cmrs_mtx_show(t->p, t->end, shown));
}

static cmrscl_status parse_banner(parser *ps, const char *p, const char *e)
{
    mtx_token t[5];
    char shown[48];
    if (e - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3; /* a UTF-8 byte order mark, as some Windows editors write */
    int n = cmrs_mtx_split(p, e, t, 5);
    if (n == 0)
        return CMRSCL_OK;
    if (!cmrs_mtx_tok_is(t[0].p, t[0].end, "%%matrixmarket"))
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE,
                                  "missing %%%%MatrixMarket banner (the file starts with '%s')",
                                  cmrs_mtx_show(t[0].p, e, shown));
    int values[5] = {0};
    for (int pos = 1; pos < n && pos <= 4; ++pos) {
        cmrscl_status st = banner_word(ps, &t[pos], pos, &values[pos]);
        if (st != CMRSCL_OK)
            return st;
    }
    if (n != 5)
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE,
                                  "bad banner (%s): expected '%%%%MatrixMarket matrix coordinate "
                                  "<field> <symmetry>'",
                                  n < 5 ? banner_what[n] : "text after the symmetry");
    ps->field = (field_kind)values[3];
    ps->symmetry = (symmetry_kind)values[4];
    if (ps->field == FIELD_PATTERN && ps->symmetry == SYM_SKEW)
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_UNSUPPORTED,
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
    int n = cmrs_mtx_split(p, e, t, 3);
    for (int i = 0; i < n && i < 3; ++i)
        if (!mtx_scan_int(t[i].p, t[i].end, &v[i]))
            n = -1;
    if (n != 3)
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE,
                                  "bad size line: expected three integers 'rows columns entries'");
    if (v[0] < 0 || v[1] < 0 || v[2] < 0)
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE, "negative size %lld x %lld, %lld entries",
                                  (long long)v[0], (long long)v[1], (long long)v[2]);
    if (v[0] > MAX_DIMENSION || v[1] > MAX_DIMENSION || v[2] > MAX_ENTRIES) {
        char shown[3][48]; /* the text, since huge numbers saturated in v */
        for (int i = 0; i < 3; ++i)
            cmrs_mtx_show(t[i].p, t[i].end, shown[i]);
        return cmrs_mtx_line_fail(
            ps, CMRSCL_ERROR_TOO_LARGE, "size %s x %s with %s entries exceeds the limit of %lld %s",
            shown[0], shown[1], shown[2],
            v[2] > MAX_ENTRIES ? (long long)MAX_ENTRIES : (long long)MAX_DIMENSION,
            v[2] > MAX_ENTRIES ? "entries" : "rows and columns");
    }
    if (ps->symmetry != SYM_GENERAL && v[0] != v[1])
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE,
                                  "a symmetric matrix must be square, not %lld x %lld",
                                  (long long)v[0], (long long)v[1]);
    ps->rows = (int32_t)v[0];
    ps->cols = (int32_t)v[1];
    ps->declared = v[2];
    /* Mirroring at most doubles the entries; the COO arrays never grow beyond this. */
    ps->max_count = ps->symmetry == SYM_GENERAL ? v[2] : 2 * v[2];
    ps->stage = STAGE_ENTRIES;
    return CMRSCL_OK;
}

/* ---- entries ---- */

cmrscl_status cmrs_mtx_reserve_entries(parser *ps, int64_t cap)
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
    return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld entries",
                              (long long)cap);
}

/* Geometric growth, capped by what the header allows: a header that lies about its size
 * costs memory only in proportion to the entries actually present. */
static cmrscl_status grow_entries(parser *ps)
{
    if (ps->cap >= ps->max_count) /* only the parallel reader's shares get here (it reruns) */
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE, "more entries than the %lld expected",
                                  (long long)ps->max_count);
    int64_t cap = ps->cap ? 2 * ps->cap : FIRST_ENTRIES;
    return cmrs_mtx_reserve_entries(ps, cap > ps->max_count ? ps->max_count : cap);
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
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE,
                                  "diagonal entry (%d, %d) in a skew-symmetric matrix", r + 1,
                                  c + 1);
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
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE, "bad %s index '%s'", what,
                                  cmrs_mtx_show(p, e, shown));
    return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE, "%s index %s out of range 1..%d", what,
                              cmrs_mtx_show(p, e, shown), limit);
}

static cmrscl_status bad_value(const parser *ps, const char *p, const char *e)
{
    char shown[48];
    if (ps->field == FIELD_INTEGER)
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE,
                                  "non-integer value '%s' in an integer matrix",
                                  cmrs_mtx_show(p, e, shown));
    return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE, "bad value '%s'", cmrs_mtx_show(p, e, shown));
}

cmrscl_status cmrs_mtx_parse_entry(parser *ps, const char *p, const char *e)
{
    int64_t r, c;
    double v = 1.0;
    p = skip_blanks(p, e);
    if (p == e || *p == '%')
        return CMRSCL_OK;
    if (ps->seen == ps->declared)
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE, "more entries than the %lld declared",
                                  (long long)ps->declared);
    const char *q = mtx_scan_int(p, e, &r);
    if (!q || r < 1 || r > ps->rows)
        return bad_index(ps, "row", p, e, ps->rows);
    if ((p = skip_blanks(q, e)) == e)
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE, "missing column index");
    q = mtx_scan_int(p, e, &c);
    if (!q || c < 1 || c > ps->cols)
        return bad_index(ps, "column", p, e, ps->cols);
    p = skip_blanks(q, e);
    if (ps->field != FIELD_PATTERN) {
        if (p == e)
            return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE, "missing value");
        q = ps->field == FIELD_REAL ? cmrs_mtx_scan_real(p, e, &v)
                                    : cmrs_mtx_scan_integer_value(p, e, &v);
        if (!q)
            return bad_value(ps, p, e);
        p = skip_blanks(q, e);
    }
    if (p != e) {
        char shown[48];
        return cmrs_mtx_line_fail(ps, CMRSCL_ERROR_PARSE, "unexpected '%s' after the entry",
                                  cmrs_mtx_show(p, e, shown));
    }
    ps->seen++;
    return store(ps, (int32_t)(r - 1), (int32_t)(c - 1), v);
}

/* ---- the stream: complete lines from chunks ---- */

cmrscl_status cmrs_mtx_parse_line(parser *ps, const char *p, const char *e)
{
    if (ps->stage == STAGE_ENTRIES)
        return cmrs_mtx_parse_entry(ps, p, e);
    return ps->stage == STAGE_BANNER ? parse_banner(ps, p, e) : parse_size(ps, p, e);
}

/* Called when a partial line fills the whole buffer: grow it, up to MTX_MAX_LINE + 1 bytes
 * (room for the longest line and the '\n' that proves it is complete). */
