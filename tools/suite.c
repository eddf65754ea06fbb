/* suite.c - suite files (see suite.h). */
#include "suite.h"

#include <stdio.h>
#include <string.h>

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

int suite_read(const char *path, suite_entry_fn add, void *user)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path) : 0;
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
        bool file = ends_with(s, ".mtx") || ends_with(s, ".mtx.gz");
        char full[2048];
        if (file && *s != '/' && slash)
            snprintf(full, sizeof full, "%.*s/%s", dir_len, path, s);
        else
            snprintf(full, sizeof full, "%s", s);
        rc = add(user, full, file) ? 0 : 1;
    }
    fclose(f);
    return rc;
}
