/* gen_spec.c - the generator specs: parsing "class:numbers@seed" (for gen.c, which builds the
 * matrix) and sizing one without building it (cmrscl_csr_generate_size), so that a caller can
 * refuse a matrix too large for its memory first. */
#include "io/io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Reads up to `max` colon-separated non-negative integers; returns how many, or -1. */
static int parse_numbers(const char *text, const char *end, long *values, int max)
{
    int n = 0;
    while (n < max && text < end) {
        if (*text < '0' || *text > '9')
            return -1;
        char *stop;
        errno = 0;
        values[n++] = strtol(text, &stop, 10);
        if (errno || stop > end)
            return -1;
        if (stop == end)
            return n;
        if (*stop != ':')
            return -1;
        text = stop + 1;
    }
    return -1;
}

#define GEN_CLASSES                                                                                \
    "stencil5:N, stencil7:N, stencil27:N, convdiff:N, random:N:K, perm:N, dense:N, "               \
    "rmat:SCALE:EDGES, fem:N:B, skewed:N:K:D:LEN, geo:N:K, elastic:N, each optionally followed "   \
    "by @SEED; kron:A.mtx:B.mtx; lap:SPEC"

/* The classes of a spec and how many numbers each takes, in the order the switches below
 * number them. */
static const struct {
    const char *prefix;
    int numbers;
} gen_classes[] = {{"stencil5:", 1}, {"stencil7:", 1}, {"stencil27:", 1}, {"random:", 2},
                   {"perm:", 1},     {"dense:", 1},    {"rmat:", 2},      {"fem:", 2},
                   {"skewed:", 4},   {"convdiff:", 1}, {"geo:", 2},       {"elastic:", 1}};

cmrscl_status cmrs_gen_parse_spec(const char *spec, int *cls, long v[4], uint64_t *seed)
{
    const char *at = strchr(spec, '@'), *end = at ? at : spec + strlen(spec);
    *seed = 0x5EED;
    if (at) {
        long s;
        if (parse_numbers(at + 1, at + strlen(at), &s, 1) != 1)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "bad seed in matrix spec '%s' (expected @ and a number)", spec);
        *seed += (uint64_t)s * 0x9E3779B97F4A7C15ull;
    }
    for (size_t i = 0; i < sizeof gen_classes / sizeof gen_classes[0]; ++i) {
        size_t len = strlen(gen_classes[i].prefix);
        if (strncmp(spec, gen_classes[i].prefix, len) != 0)
            continue;
        if (parse_numbers(spec + len, end, v, 4) != gen_classes[i].numbers)
            break;
        *cls = (int)i;
        return CMRSCL_OK;
    }
    return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "unknown matrix spec '%s' (expected %s)",
                       spec, GEN_CLASSES);
}

cmrscl_status cmrscl_csr_generate_size(const char *spec, int64_t *rows, int64_t *cols,
                                       int64_t *entries)
{
    int cls = 0;
    long v[4];
    uint64_t seed;
    if (!spec || !rows || !cols || !entries)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "spec, rows, cols or entries is NULL");
    if (!strncmp(spec, "kron:", 5) || !strncmp(spec, "lap:", 4))
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED, "%s sized only by building it",
                           spec[0] == 'k' ? "kron:" : "lap:");
    cmrscl_status st = cmrs_gen_parse_spec(spec, &cls, v, &seed);
    if (st != CMRSCL_OK)
        return st;
    for (int i = 0; i < gen_classes[cls].numbers; ++i)
        if (v[i] < 0 || v[i] > INT32_MAX) /* the generator names the class's own limits */
            return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE, "%s: a number outside 0..%d", spec,
                               INT32_MAX);
    /* long double: no overflow on the way to the range check */
    long double n = (long double)v[0], k = (long double)v[1], r = 0, e = 0;
    switch (cls) {
    case 0: r = n * n, e = 5 * n * n - 4 * n; break;
    case 1:
    case 9: r = n * n * n, e = 7 * n * n * n - 6 * n * n; break;
    case 2: r = n * n * n, e = (3 * n - 2) * (3 * n - 2) * (3 * n - 2); break;
    case 3: r = n, e = n * k; break; /* row lengths uniform in 0..2K */
    case 4: r = n, e = n; break;
    case 5: r = n, e = n * n; break;
    case 6: r = (long double)((int64_t)1 << (v[0] < 62 ? v[0] : 62)), e = r * k; break;
    case 7: r = n * n * n * k, e = (3 * n - 2) * (3 * n - 2) * (3 * n - 2) * k * k; break;
    case 10: r = n, e = n * (k + 1); break; /* the mean degree k, and the diagonal */
    default: r = n, e = n * k + (long double)v[2] * (long double)v[3]; break;
    }
    if (n < 1 || r > INT32_MAX)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE, "%s: %.0Lf rows, outside 1..%d", spec, r,
                           INT32_MAX);
    *rows = *cols = (int64_t)r;
    *entries = e > (long double)INT64_MAX ? INT64_MAX : (int64_t)e;
    return CMRSCL_OK;
}
