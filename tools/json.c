/* json.c - a minimal streaming JSON writer for cmrscl-run --json: one document on stdout,
 * indented, with commas and string escaping handled here so commands just name fields. */
#include "cli.h"

#include <math.h>

#define MAX_DEPTH 16
static int depth;
static bool first[MAX_DEPTH] = {true};

static void item(const char *key)
{
    if (depth > 0)
        fputs(first[depth] ? "\n" : ",\n", stdout);
    first[depth] = false;
    for (int i = 0; i < depth; ++i)
        fputs("  ", stdout);
    if (key)
        printf("\"%s\": ", key);
}

static void put_string(const char *s)
{
    putchar('"');
    for (; s && *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

void json_open(const char *key, char bracket)
{
    item(key);
    putchar(bracket);
    if (depth + 1 < MAX_DEPTH)
        first[++depth] = true;
}

void json_close(char bracket)
{
    bool empty = first[depth];
    --depth;
    if (!empty) {
        putchar('\n');
        for (int i = 0; i < depth; ++i)
            fputs("  ", stdout);
    }
    putchar(bracket);
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
        printf("%.6g", value);
    else
        fputs("null", stdout); /* JSON has no NaN or infinity */
}

void json_int(const char *key, long long value)
{
    item(key);
    printf("%lld", value);
}

void json_bool(const char *key, bool value)
{
    item(key);
    fputs(value ? "true" : "false", stdout);
}

void json_end(void)
{
    putchar('\n');
    depth = 0;
    first[0] = true;
}
