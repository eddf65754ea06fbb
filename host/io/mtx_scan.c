/* mtx_scan.c - the scanning layer of the Matrix Market reader: tokens of a line, and
 * decimal reals correctly rounded by Clinger's fast path, an x87 extended-precision path
 * for the 17 digits %.17g prints, and strtod for everything else. */
#include "mtx_scan.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

const char *cmrs_mtx_show(const char *p, const char *e, char out[48])
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
static const long double exact_pow10_ext[28] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,
                                                1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
                                                1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L,
                                                1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
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
const char *cmrs_mtx_scan_real(const char *p, const char *e, double *out)
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

bool cmrs_mtx_tok_is(const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - p) != n)
        return false;
    for (size_t i = 0; i < n; ++i)
        if ((p[i] >= 'A' && p[i] <= 'Z' ? p[i] + ('a' - 'A') : p[i]) != word[i])
            return false;
    return true;
}

const char *cmrs_mtx_scan_integer_value(const char *p, const char *e, double *out)
{
    int64_t ignored;
    return mtx_scan_int(p, e, &ignored) ? cmrs_mtx_scan_real(p, e, out) : NULL;
}

int cmrs_mtx_split(const char *p, const char *e, mtx_token *t, int max)
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
