/* fuzz_real.c - libFuzzer target for the reader's number scanner. The input is one value
 * token placed in a 1 x 1 file; the reader has a fast path of its own (exact powers of
 * ten, x87 extended precision) and must give exactly strtod's double - correctly rounded
 * - and accept exactly the tokens strtod reads whole, less hexadecimal floats. The same
 * token in an `integer` file must be accepted exactly when it is a decimal integer. */
#include "fuzz_check.h"

#include <stdlib.h>
#include <string.h>

#define NAME "<fuzz>"

static const char *const banner[2] = {
    "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 ",
    "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 ",
};

/* Bytes the reader takes as separators: with one, the input is several tokens. */
static bool one_token(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; ++i)
        if (strchr(" \t\r\v\f\n", s[i]) && s[i] != '\0')
            return false;
    return true;
}

/* What the reader must make of the token `s` (NUL-terminated, n bytes before the NUL);
 * false where it must refuse it. */
static bool expected_value(const char *s, size_t n, bool integer, double *out)
{
    if (integer) {
        size_t i = s[0] == '+' || s[0] == '-';
        if (i == n)
            return false;
        for (; i < n; ++i)
            if (s[i] < '0' || s[i] > '9')
                return false;
    }
    if (memchr(s, 'x', n) || memchr(s, 'X', n))
        return false;
    char *end;
    *out = strtod(s, &end);
    return end == s + n;
}

static void check_token(const char *token, size_t n, bool integer)
{
    size_t head = strlen(banner[integer]);
    char *text = malloc(head + n + 1);
    FUZZ_CHECK(text != NULL, "no memory");
    memcpy(text, banner[integer], head);
    memcpy(text + head, token, n);
    text[head + n] = '\n';
    cmrscl_csr csr;
    cmrscl_status st = cmrs_mtx_read_memory(text, head + n + 1, NAME, &csr);
    fuzz_check_read(st, &csr, NAME, n);
    double want;
    if (one_token(token, n)) {
        bool ok = expected_value(token, n, integer, &want);
        FUZZ_CHECK((st == CMRSCL_OK) == ok, "token '%s' was %s", token,
                   ok ? "refused" : "accepted");
        if (ok)
            FUZZ_CHECK(csr.nnz == 1 && memcmp(&csr.values[0], &want, sizeof want) == 0,
                       "token '%s' read as %.17g, strtod gives %.17g", token, csr.values[0], want);
    }
    cmrscl_csr_free(&csr);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *token = malloc(size + 1); /* NUL-terminated for strtod and messages */
    FUZZ_CHECK(token != NULL, "no memory");
    if (size)
        memcpy(token, data, size);
    token[size] = '\0';
    check_token(token, size, false);
    check_token(token, size, true);
    free(token);
    return 0;
}
