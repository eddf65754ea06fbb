/* json.c - a minimal streaming JSON writer for cmrscl-run --json: one document on stdout,
 * indented, with commas and string escaping handled here so commands just name fields. */
#include "cli.h"

#include <math.h>

#define MAX_DEPTH 16
static int depth;
static FILE *sink; /* NULL: stdout */
#define OUT (sink ? sink : stdout)
static bool first[MAX_DEPTH] = {true};

static void item(const char *key)
{
    if (depth > 0)
        fputs(first[depth] ? "\n" : ",\n", OUT);
    first[depth] = false;
    for (int i = 0; i < depth; ++i)
        fputs("  ", OUT);
    if (key)
        fprintf(OUT, "\"%s\": ", key);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes are not one. */
static int utf8_length(const unsigned char *s)
{
    int n = s[0] < 0x80           ? 1
            : (s[0] >> 5) == 0x6  ? 2
            : (s[0] >> 4) == 0xe  ? 3
            : (s[0] >> 3) == 0x1e ? 4
                                  : 0;
    for (int i = 1; i < n; ++i)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* JSON must be UTF-8: file and device names that are not get U+FFFD per bad byte. */
static void put_string(const char *text)
{
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    fputc('"', OUT);
    while (*s) {
        int n = utf8_length(s);
        if (n == 0) {
            fputs("\\ufffd", OUT);
            s += 1;
        } else if (*s == '"' || *s == '\\') {
            fprintf(OUT, "\\%c", *s++);
        } else if (*s < 0x20) {
            fprintf(OUT, "\\u%04x", *s++);
        } else {
            fwrite(s, 1, (size_t)n, OUT);
            s += n;
        }
    }
    fputc('"', OUT);
}

void json_open(const char *key, char bracket)
{
    item(key);
    fputc(bracket, OUT);
    if (depth + 1 < MAX_DEPTH)
        first[++depth] = true;
}

void json_close(char bracket)
{
    bool empty = first[depth];
    --depth;
    if (!empty) {
        fputc('\n', OUT);
        for (int i = 0; i < depth; ++i)
            fputs("  ", OUT);
    }
    fputc(bracket, OUT);
}

void json_string(const char *key, const char *value)
{
    item(key);
    put_string(value);
}

void json_number(const char *key, double value)
{
    item(key);
    if (isfinite(value))
        fprintf(OUT, "%.6g", value);
    else
        fputs("null", OUT); /* JSON has no NaN or infinity */
}

void json_int(const char *key, long long value)
{
    item(key);
    fprintf(OUT, "%lld", value);
}

void json_bool(const char *key, bool value)
{
    item(key);
    fputs(value ? "true" : "false", OUT);
}

void json_to(FILE *file) { sink = file; }

void json_end(void)
{
    fputc('\n', OUT);
    depth = 0;
    first[0] = true;
}
