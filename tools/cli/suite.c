/* suite.c - suite files (see suite.h). */
#include "suite.h"

#include <stdio.h>
#include <string.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* The start of the last path component of [path, end). */
static const char *base_of(const char *path, const char *end)
{
    const char *base = path;
    for (const char *p = path; p < end; ++p)
        if (*p == '/')
            base = p + 1;
    return base;
}

/* The ':' between the two files of "A.mtx:B.mtx" (a kron spec after "kron:"), or NULL. */
static const char *kron_split(const char *files)
{
    const char *at = strstr(files, ".mtx:");
    if (at)
        return at + 4;
    at = strstr(files, ".mtx.gz:");
    return at ? at + 7 : NULL;
}

void suite_matrix_name(const char *input, bool is_file, char *name, size_t size)
{
    int lap = is_file || strncmp(input, "lap:", 4) ? 0 : 4; /* lap:kron:A:B */
    bool kron = !is_file && !strncmp(input + lap, "kron:", 5);
    const char *split = kron ? kron_split(input + lap + 5) : NULL;
    if (is_file) {
        snprintf(name, size, "%s", base_of(input, input + strlen(input)));
    } else if (split) {
        const char *a = base_of(input + lap + 5, split), *b = split + 1;
        snprintf(name, size, "%skron:%.*s:%s", lap ? "lap:" : "", (int)(split - a), a,
                 base_of(b, b + strlen(b)));
    } else {
        snprintf(name, size, "%s", input);
    }
}

/* A path of the suite relative to its directory (dir_len characters of `suite`). */
static void resolve(const char *suite, int dir_len, const char *path, int path_len, char *out,
                    size_t size)
{
    if (*path != '/' && dir_len >= 0)
        snprintf(out, size, "%.*s/%.*s", dir_len, suite, path_len, path);
    else
        snprintf(out, size, "%.*s", path_len, path);
}

int suite_read(const char *path, suite_entry_fn add, void *user)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path) : -1;
    char line[1024];
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = line + strspn(line, " \t"), *e = s + strlen(s);
        while (e > s && strchr(" \t\r\n", e[-1]))
            *--e = '\0';
        if (!*s)
            continue;
        /* lap:kron:A:B - the Laplacian of a Kronecker product - resolves A and B as kron's */
        int lap = strncmp(s, "lap:", 4) ? 0 : 4;
        const char *split = strncmp(s + lap, "kron:", 5) ? NULL : kron_split(s + lap + 5);
        bool file = !split && (ends_with(s, ".mtx") || ends_with(s, ".mtx.gz"));
        char full[2100], a[1024], b[1024];
        if (file) {
            resolve(path, dir_len, s, (int)strlen(s), full, sizeof full);
        } else if (split) {
            resolve(path, dir_len, s + lap + 5, (int)(split - (s + lap + 5)), a, sizeof a);
            resolve(path, dir_len, split + 1, (int)strlen(split + 1), b, sizeof b);
            snprintf(full, sizeof full, "%skron:%s:%s", lap ? "lap:" : "", a, b);
        } else {
            snprintf(full, sizeof full, "%s", s);
        }
        rc = add(user, full, file) ? 0 : 1;
    }
    fclose(f);
    return rc;
}
