/* mtx.c - Matrix Market reader: a .mtx or .mtx.gz file (streamed through zlib) or a
 * memory buffer -> COO -> canonical CSR. Text is read in large chunks and tokenized by
 * hand, because fgets+sscanf per entry is what makes most readers slow; every size,
 * index and count is checked, so a hostile file fails with a message naming its line
 * instead of crashing, hanging or allocating what its header claims. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
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
#define MAX_DIMENSION (1 << 20)
#else
#define MAX_DIMENSION INT32_MAX
#endif

enum {
    CHUNK = 1 << 20,        /* text bytes requested from the source at a time */
    MAX_LINE = 1 << 20,     /* longest accepted line, without its '\n' */
    GZ_BUFFER = 256 << 10,  /* zlib's own read buffer: fewer, larger read() calls */
    FIRST_ENTRIES = 1 << 12 /* initial COO capacity, whatever the header declares */
};

/* ---- sources: a file through gzread (plain files pass through unchanged) or memory,
 * inflated here when it starts with the gzip magic ---- */

typedef struct source {
    const char *name;
    const cmrscl_mtx_options *opt;
    uint64_t total, next_report; /* progress, in bytes of the file as stored */
    gzFile gz;                   /* file source; NULL for memory */
    const unsigned char *mem;
    size_t mem_size, mem_pos;
    bool gzip, gzip_end; /* memory source holds gzip: zs is live */
    z_stream zs;
} source;

static void report_progress(source *s, uint64_t done, bool always)
{
    if (!s->opt || !s->opt->progress || (!always && done < s->next_report))
        return;
    s->next_report = done + (s->total >= 100 ? s->total / 100 : 1);
    s->opt->progress(s->opt->user, done, s->total);
}

static cmrscl_status read_file(source *s, char *dst, size_t room, size_t *got)
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
        report_progress(s, (uint64_t)done, false);
    return CMRSCL_OK;
}

/* A gzip stream ended; go on if another member follows (as gzip itself does), and
 * ignore anything else after it, as zlib's gzread does for files. */
static void next_gzip_member(source *s)
{
    size_t pos = (size_t)((const unsigned char *)s->zs.next_in - s->mem);
    if (s->mem_size - pos >= 2 && s->mem[pos] == 0x1f && s->mem[pos + 1] == 0x8b)
        inflateReset(&s->zs);
    else
        s->gzip_end = true;
}

static cmrscl_status read_inflate(source *s, char *dst, size_t room, size_t *got)
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

static cmrscl_status source_read(source *s, char *dst, size_t room, size_t *got)
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

/* ---- parser state ---- */

typedef enum { FIELD_REAL, FIELD_INTEGER, FIELD_PATTERN } field_kind;
typedef enum { SYM_GENERAL, SYM_SYMMETRIC, SYM_SKEW } symmetry_kind;
typedef enum { STAGE_BANNER, STAGE_SIZE, STAGE_ENTRIES } stage_kind;

typedef struct parser {
    const char *name;
    long long line; /* number of the line being parsed, from 1 */
    stage_kind stage;
    field_kind field;
    symmetry_kind symmetry;
    int32_t rows, cols;
    int64_t declared, seen;        /* entries in the size line / entry lines read */
    int64_t count, cap, max_count; /* COO entries stored, mirrored ones included */
    int32_t *ri, *ci;              /* 0-based */
    double *val;                   /* NULL for pattern files: csr_from_coo fills in 1 */
} parser;

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

/* ---- tokens ---- */

static inline bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
static inline bool is_digit(char c) { return (unsigned)(c - '0') < 10u; }
static inline const char *skip_blanks(const char *p, const char *e)
{
    while (p < e && is_blank(*p))
        ++p;
    return p;
}
static inline const char *token_end(const char *p, const char *e)
{
    while (p < e && !is_blank(*p))
        ++p;
    return p;
}

/* A token for a message: at most 40 bytes, with bytes that are not printable as '?'
 * so binary garbage cannot garble the message. */
static const char *show(const char *p, const char *e, char out[48])
{
    const char *end = token_end(p, e);
    size_t n = 0;
    for (; p < end && n < 40; ++p)
        out[n++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
    if (p < end)
        out[n++] = '.', out[n++] = '.', out[n++] = '.';
    out[n] = '\0';
    return out;
}

/* A whole token that is an optionally signed decimal integer; magnitudes beyond 2^63
 * saturate, which is outside every range a caller accepts. NULL if not an integer. */
static const char *scan_int(const char *p, const char *e, int64_t *out)
{
    bool neg = false;
    if (p < e && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    const char *digits = p;
    int64_t v = 0;
    for (; p < e && is_digit(*p); ++p)
        v = v <= (INT64_MAX - 9) / 10 ? v * 10 + (*p - '0') : INT64_MAX;
    if (p == digits || (p < e && !is_blank(*p)))
        return NULL;
    *out = neg ? -v : v;
    return p;
}

/* strtod for what the fast path does not take: long mantissas, large exponents, nan,
 * inf. The buffer always holds a '\n' or '\0' after the line, so strtod stops there. */
static const char *scan_real_slow(const char *p, const char *e, double *out)
{
    const char *end = token_end(p, e);
    char *stop;
    /* strtod also reads C99 hexadecimal floats; Matrix Market values are decimal. */
    for (const char *q = p; q < end; ++q)
        if (*q == 'x' || *q == 'X')
            return NULL;
    *out = strtod(p, &stop);
    return stop == end && end > p ? end : NULL;
}

/* Powers of ten that are exact doubles (5^22 < 2^53). */
static const double exact_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* x87 extended precision: a 64-bit mantissa, as on x86 Linux. */
#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
#define EXTENDED_PATH 1
/* Exact in the 64-bit mantissa (5^27 < 2^64). */
static const long double exact_pow10_ext[28] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
    1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
    1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
#endif

/* mant * 10^exp10 correctly rounded without strtod, when that is cheap; false if not.
 * - Clinger's fast path: mant <= 2^53 and |exp10| <= 22 make both factors exact doubles,
 *   so one IEEE multiply or divide rounds correctly.
 * - Otherwise (typically the 17 digits that %.17g prints) with x87 extended precision:
 *   mant < 2^63 and 10^|exp10| <= 10^27 are exact there, so one extended operation is
 *   within half an extended ulp of the true value; rounding that to double is then
 *   correct unless it sits exactly on a midpoint between two doubles (the low 11 of its
 *   64 mantissa bits are 10000000000), which is left to strtod. */
static bool fast_scale(uint64_t mant, int64_t exp10, double *out)
{
    if (FLT_EVAL_METHOD != 0)
        return false; /* excess precision would round twice */
    if (mant <= (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22) {
        double m = (double)mant;
        *out = exp10 < 0 ? m / exact_pow10[-exp10] : m * exact_pow10[exp10];
        return true;
    }
#ifdef EXTENDED_PATH
    if (mant < (UINT64_C(1) << 63) && exp10 >= -27 && exp10 <= 27) {
        long double m = (long double)mant, x;
        x = exp10 < 0 ? m / exact_pow10_ext[-exp10] : m * exact_pow10_ext[exp10];
        uint64_t bits; /* the mantissa is the first 8 bytes of the x87 format */
        memcpy(&bits, &x, sizeof bits);
        if ((bits & 0x7ff) != 0x400) {
            *out = (double)x;
            return true;
        }
    }
#endif
    return false;
}

/* A decimal number token: up to 19 significant digits gathered into an integer and a
 * decimal exponent, scaled by fast_scale; everything else (more digits, huge exponents,
 * nan, inf) goes to strtod, so every result is correctly rounded. NULL if the token is
 * not a number. */
static const char *scan_real(const char *p, const char *e, double *out)
{
    const char *start = p;
    bool neg = false, seen = false, inexact = false;
    uint64_t mant = 0;
    int digits = 0;
    int64_t exp10 = 0;
    if (p < e && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    for (; p < e && is_digit(*p); ++p, seen = true) {
        if (digits < 19 && (mant || *p != '0'))
            mant = mant * 10 + (uint64_t)(*p - '0'), digits += 1;
        else if (mant)
            exp10 += 1, inexact |= *p != '0';
    }
    if (p < e && *p == '.')
        for (++p; p < e && is_digit(*p); ++p, seen = true) {
            if (digits < 19 && (mant || *p != '0'))
                mant = mant * 10 + (uint64_t)(*p - '0'), digits += 1, exp10 -= 1;
            else if (!mant)
                exp10 -= 1;
            else
                inexact |= *p != '0';
        }
    if (seen && p < e && (*p | 0x20) == 'e') {
        bool eneg = false;
        int64_t x = 0;
        if (++p < e && (*p == '-' || *p == '+'))
            eneg = *p++ == '-';
        if (p == e || !is_digit(*p))
            return NULL;
        for (; p < e && is_digit(*p); ++p)
            x = x < 100000 ? x * 10 + (*p - '0') : x; /* beyond any double's range */
        exp10 += eneg ? -x : x;
    }
    double d = 0.0;
    if (!seen || inexact || (p < e && !is_blank(*p)) || (mant && !fast_scale(mant, exp10, &d)))
        return scan_real_slow(start, e, out);
    *out = neg ? -d : d;
    return p;
}

/* Case-insensitive comparison of a token with a lower-case word. */
static bool tok_is(const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - p) != n)
        return false;
    for (size_t i = 0; i < n; ++i)
        if ((p[i] >= 'A' && p[i] <= 'Z' ? p[i] + ('a' - 'A') : p[i]) != word[i])
            return false;
    return true;
}

/* A whole integer token, for the `integer` field, converted exactly as a real. */
static const char *scan_integer_value(const char *p, const char *e, double *out)
{
    int64_t ignored;
    return scan_int(p, e, &ignored) ? scan_real(p, e, out) : NULL;
}

typedef struct token {
    const char *p, *end;
} token;

/* Splits a line into at most `max` tokens; returns their number, or max + 1 if the line
 * holds more. */
static int split(const char *p, const char *e, token *t, int max)
{
    int n = 0;
    for (p = skip_blanks(p, e); p < e; p = skip_blanks(p, e)) {
        if (n == max)
            return max + 1;
        t[n].p = p;
        p = token_end(p, e);
        t[n++].end = p;
    }
    return n;
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

static cmrscl_status banner_word(const parser *ps, const token *t, int pos, int *value)
{
    for (size_t i = 0; i < sizeof banner_words / sizeof *banner_words; ++i) {
        const struct banner_word *w = &banner_words[i];
        if (w->pos != pos || !tok_is(t->p, t->end, w->word))
            continue;
        if (w->unsupported)
            return line_fail(ps, CMRSCL_ERROR_UNSUPPORTED, "%s", w->unsupported);
        *value = w->value;
        return CMRSCL_OK;
    }
    char shown[48];
    return line_fail(ps, CMRSCL_ERROR_PARSE, "unknown %s '%s' in the banner", banner_what[pos],
                     show(t->p, t->end, shown));
}

static cmrscl_status parse_banner(parser *ps, const char *p, const char *e)
{
    token t[5];
    char shown[48];
    if (e - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3; /* a UTF-8 byte order mark, as some Windows editors write */
    int n = split(p, e, t, 5);
    if (n == 0)
        return CMRSCL_OK;
    if (!tok_is(t[0].p, t[0].end, "%%matrixmarket"))
        return line_fail(ps, CMRSCL_ERROR_PARSE,
                         "missing %%%%MatrixMarket banner (the file starts with '%s')",
                         show(t[0].p, e, shown));
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
    token t[3];
    int64_t v[3];
    p = skip_blanks(p, e);
    if (p == e || *p == '%')
        return CMRSCL_OK;
    int n = split(p, e, t, 3);
    for (int i = 0; i < n && i < 3; ++i)
        if (!scan_int(t[i].p, t[i].end, &v[i]))
            n = -1;
    if (n != 3)
        return line_fail(ps, CMRSCL_ERROR_PARSE,
                         "bad size line: expected three integers 'rows columns entries'");
    if (v[0] < 0 || v[1] < 0 || v[2] < 0)
        return line_fail(ps, CMRSCL_ERROR_PARSE, "negative size %lld x %lld, %lld entries",
                         (long long)v[0], (long long)v[1], (long long)v[2]);
    if (v[0] > MAX_DIMENSION || v[1] > MAX_DIMENSION || v[2] > INT32_MAX) {
        char shown[3][48]; /* the text, since huge numbers saturated in v */
        for (int i = 0; i < 3; ++i)
            show(t[i].p, t[i].end, shown[i]);
        return line_fail(ps, CMRSCL_ERROR_TOO_LARGE,
                         "size %s x %s with %s entries exceeds the limit of %d", shown[0],
                         shown[1], shown[2], v[2] > INT32_MAX ? INT32_MAX : MAX_DIMENSION);
    }
    if (ps->symmetry != SYM_GENERAL && v[0] != v[1])
        return line_fail(ps, CMRSCL_ERROR_PARSE,
                         "a symmetric matrix must be square, not %lld x %lld",
                         (long long)v[0], (long long)v[1]);
    ps->rows = (int32_t)v[0];
    ps->cols = (int32_t)v[1];
    ps->declared = v[2];
    /* Mirroring at most doubles the entries; the COO arrays never grow beyond this. */
    ps->max_count = ps->symmetry == SYM_GENERAL ? v[2] : 2 * v[2];
    if (ps->max_count > INT32_MAX)
        ps->max_count = INT32_MAX;
    ps->stage = STAGE_ENTRIES;
    return CMRSCL_OK;
}

/* ---- entries ---- */

/* Geometric growth, capped by what the header allows: a header that lies about its size
 * costs memory only in proportion to the entries actually present. */
static cmrscl_status grow_entries(parser *ps)
{
    if (ps->cap >= ps->max_count)
        return line_fail(ps, CMRSCL_ERROR_TOO_LARGE,
                         "expanding the symmetric matrix gives more than %d entries", INT32_MAX);
    int64_t cap = ps->cap ? 2 * ps->cap : FIRST_ENTRIES;
    if (cap > ps->max_count)
        cap = ps->max_count;
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
    if (!scan_int(p, e, &ignored))
        return line_fail(ps, CMRSCL_ERROR_PARSE, "bad %s index '%s'", what, show(p, e, shown));
    return line_fail(ps, CMRSCL_ERROR_PARSE, "%s index %s out of range 1..%d", what,
                     show(p, e, shown), limit);
}

static cmrscl_status bad_value(const parser *ps, const char *p, const char *e)
{
    char shown[48];
    if (ps->field == FIELD_INTEGER)
        return line_fail(ps, CMRSCL_ERROR_PARSE, "non-integer value '%s' in an integer matrix",
                         show(p, e, shown));
    return line_fail(ps, CMRSCL_ERROR_PARSE, "bad value '%s'", show(p, e, shown));
}

static cmrscl_status parse_entry(parser *ps, const char *p, const char *e)
{
    int64_t r, c;
    double v = 1.0;
    p = skip_blanks(p, e);
    if (p == e || *p == '%')
        return CMRSCL_OK;
    if (ps->seen == ps->declared)
        return line_fail(ps, CMRSCL_ERROR_PARSE, "more entries than the %lld declared",
                         (long long)ps->declared);
    const char *q = scan_int(p, e, &r);
    if (!q || r < 1 || r > ps->rows)
        return bad_index(ps, "row", p, e, ps->rows);
    if ((p = skip_blanks(q, e)) == e)
        return line_fail(ps, CMRSCL_ERROR_PARSE, "missing column index");
    q = scan_int(p, e, &c);
    if (!q || c < 1 || c > ps->cols)
        return bad_index(ps, "column", p, e, ps->cols);
    p = skip_blanks(q, e);
    if (ps->field != FIELD_PATTERN) {
        if (p == e)
            return line_fail(ps, CMRSCL_ERROR_PARSE, "missing value");
        q = ps->field == FIELD_REAL ? scan_real(p, e, &v) : scan_integer_value(p, e, &v);
        if (!q)
            return bad_value(ps, p, e);
        p = skip_blanks(q, e);
    }
    if (p != e) {
        char shown[48];
        return line_fail(ps, CMRSCL_ERROR_PARSE, "unexpected '%s' after the entry",
                         show(p, e, shown));
    }
    ps->seen++;
    return store(ps, (int32_t)(r - 1), (int32_t)(c - 1), v);
}

/* ---- the stream: complete lines from chunks ---- */

static cmrscl_status parse_line(parser *ps, const char *p, const char *e)
{
    if (ps->stage == STAGE_ENTRIES)
        return parse_entry(ps, p, e);
    return ps->stage == STAGE_BANNER ? parse_banner(ps, p, e) : parse_size(ps, p, e);
}

/* Called when a partial line fills the whole buffer: grow it, up to MAX_LINE + 1 bytes
 * (room for the longest line and the '\n' that proves it is complete). */
static cmrscl_status grow_buffer(const parser *ps, char **buf, size_t *cap)
{
    if (*cap > MAX_LINE)
        return cmrscl_fail(CMRSCL_ERROR_PARSE, "%s:%lld: line %lld is longer than %d bytes",
                           ps->name, ps->line + 1, ps->line + 1, MAX_LINE);
    size_t grown = *cap * 2 > (size_t)MAX_LINE + 1 ? (size_t)MAX_LINE + 1 : *cap * 2;
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
static cmrscl_status parse_stream(source *src, parser *ps, size_t cap)
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
            st = parse_line(ps, buf + pos, nl);
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
        st = source_read(src, buf + len, cap - len, &got);
        len += got;
        buf[len] = '\0';
        eof = got == 0;
    }
    if (st == CMRSCL_OK && pos < len) { /* a last line without '\n' */
        ps->line++;
        st = parse_line(ps, buf + pos, buf + len);
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

static cmrscl_status parse_all(source *src, size_t cap, cmrscl_csr *out)
{
    parser ps = {.name = src->name, .stage = STAGE_BANNER};
    cmrscl_status st = parse_stream(src, &ps, cap);
    if (st == CMRSCL_OK)
        st = check_complete(&ps);
    if (st == CMRSCL_OK)
        st = cmrscl_csr_from_coo(ps.rows, ps.cols, ps.count, ps.ri, ps.ci, ps.val, out);
    free(ps.ri);
    free(ps.ci);
    free(ps.val);
    return st;
}

/* ---- public entry points ---- */

cmrscl_status mtx_read_memory(const void *data, size_t size, const char *name, cmrscl_csr *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    memset(out, 0, sizeof *out);
    if (!data && size > 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "data is NULL");
    source src = {.name = name ? name : "<memory>", .mem = data, .mem_size = size};
    /* The whole text fits when it is small; a big one is read CHUNK bytes at a time. */
    size_t cap = size < CHUNK ? size + 1 : CHUNK;
    if (size >= 2 && src.mem[0] == 0x1f && src.mem[1] == 0x8b) {
        /* 15 + 32: the largest window, and a gzip (or zlib) header detected. */
        if (inflateInit2(&src.zs, 15 + 32) != Z_OK)
            return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory for zlib",
                               src.name);
        src.gzip = true;
        cap = CHUNK / 16;
    }
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
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    int err = fstat(fd, &sb) != 0 ? errno : S_ISDIR(sb.st_mode) ? EISDIR : 0;
    if (err) {
        close(fd);
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot read %s: %s", path, strerror(err));
    }
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory for zlib", path);
    }
    gzbuffer(gz, GZ_BUFFER);
    source src = {.name = path, .opt = opt, .gz = gz};
    src.total = S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
    report_progress(&src, 0, true);
    cmrscl_status st = parse_all(&src, CHUNK, out);
    if (st == CMRSCL_OK)
        report_progress(&src, src.total, true);
    gzclose(gz);
    return st;
}
