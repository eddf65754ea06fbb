/* cache_dir.c - the per-user cache directory that the tuning database and the on-disk
 * program cache share ($XDG_CACHE_HOME/cmrscl, else ~/.cache/cmrscl), and creating the
 * directories above a file in it. One place, so the two never disagree on where it is. */
#include "base/base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool cmrs_cache_dir(char *path, size_t size)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        return snprintf(path, size, "%s/cmrscl", xdg) < (int)size;
    if (home && *home)
        return snprintf(path, size, "%s/.cache/cmrscl", home) < (int)size;
    return false;
}

int cmrs_make_parent_dirs(const char *file)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", file) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* 0700, as the XDG base directory specification asks: the cache holds what this user
     * built and tuned, no one else needs to read it. */
    for (char *c = path + 1; *c; ++c) {
        if (*c != '/')
            continue;
        *c = '\0';
        int rc = mkdir(path, 0700);
        *c = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return 0;
}
