/* mtx_scan.h - the scanning layer of the Matrix Market reader: blanks, tokens, integers
 * and correctly rounded reals in one line of text [p, e). Private to mtx.c and mtx_scan.c.
 * The per-character helpers and mtx_scan_int stay inline: every entry line runs them. */
#ifndef CMRSCL_MTX_SCAN_H
#define CMRSCL_MTX_SCAN_H

#include "base/base.h"

#include <stdbool.h>
#include <stdint.h>

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

/* A whole token that is an optionally signed decimal integer; magnitudes beyond 2^63
 * saturate, which is outside every range a caller accepts. NULL if not an integer. */
static inline const char *mtx_scan_int(const char *p, const char *e, int64_t *out)
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

/* A decimal number token, correctly rounded to the nearest double; nan and inf are
 * accepted, C99 hexadecimal floats are not. Returns the token's end, NULL if the token is
 * not a number. The text must be followed by a '\n' or '\0' (read by the strtod fallback). */
CMRSCL_HIDDEN const char *cmrs_mtx_scan_real(const char *p, const char *e, double *out);

/* A whole integer token, for the `integer` field, converted exactly as a real. */
CMRSCL_HIDDEN const char *cmrs_mtx_scan_integer_value(const char *p, const char *e, double *out);

/* A token for a message: at most 40 bytes, with bytes that are not printable as '?'
 * so binary garbage cannot garble the message. Returns out. */
CMRSCL_HIDDEN const char *cmrs_mtx_show(const char *p, const char *e, char out[48]);

/* Case-insensitive comparison of a token with a lower-case word. */
CMRSCL_HIDDEN bool cmrs_mtx_tok_is(const char *p, const char *end, const char *word);

typedef struct mtx_token {
    const char *p, *end;
} mtx_token;

/* Splits a line into at most `max` tokens; returns their number, or max + 1 if the line
 * holds more. */
CMRSCL_HIDDEN int cmrs_mtx_split(const char *p, const char *e, mtx_token *t, int max);

#endif
