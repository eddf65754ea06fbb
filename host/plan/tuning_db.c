/* tuning_db.c - the per-user tuning database: the options of the plan cmrscl_matrix_tune
 * found fastest, keyed by device, driver, precision and matrix class, in a text file that
 * cmrscl_matrix_create consults when every option is automatic. One line per key:
 *   cmrscl-tuning-v1 <TAB> device <TAB> driver <TAB> precision <TAB> class <TAB> options
 *   <TAB> median ms
 * A line that does not parse, or whose options are out of range, is ignored (and dropped
 * at the next write). Writes go to a temporary file renamed over the old one, so a reader
 * never sees half a file and concurrent writers lose at most each other's entry. */
#include "plan/plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DB_TAG "cmrscl-tuning-v1"
#define DB_LINE 1024

/* The database's path, or false when it is turned off or there is no home directory. */
static bool db_path(char *path, size_t size)
{
    const char *env = getenv("CMRSCL_TUNING_DB");
    if (env && *env) {
        if (!strcmp(env, "off") || !strcmp(env, "0"))
            return false;
        return snprintf(path, size, "%s", env) < (int)size;
    }
    char dir[4000];
    return cmrs_cache_dir(dir, sizeof dir) &&
           snprintf(path, size, "%s/tuning.txt", dir) < (int)size;
}

void cmrs_tuning_class(const cmrscl_matrix_stats *st, int64_t nnz, char *buf, size_t size)
{
    int mu = st->mu > 0 ? (int)floor(2.0 * log2(st->mu)) : -1; /* half octaves */
    int cv = st->row_cv < 0.3 ? 0 : st->row_cv < 1.0 ? 1 : st->row_cv < 3.0 ? 2 : 3;
    int hubs = st->max_row > 1024 && st->max_row > 16.0 * st->mu;
    int scale = nnz < 1000000 ? 0 : nnz < 10000000 ? 1 : 2; /* cache-resident .. large */
    int banded = st->col_spread < LOCAL_SPREAD;
    snprintf(buf, size, "mu%d-cv%d-hubs%d-band%d-size%d", mu, cv, hubs, banded, scale);
}

/* Tabs and newlines would break the line format; device strings never need them. */
static void field(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src);
    for (char *c = dst; *c; ++c)
        if (*c == '\t' || *c == '\n' || *c == '\r')
            *c = ' ';
}

static void db_key(const cmrscl_device_info *dev, cmrscl_precision p, const char *cls, char *key,
                   size_t size)
{
    char name[128], driver[64];
    field(name, sizeof name, dev->device_name);
    field(driver, sizeof driver, dev->driver_version);
    snprintf(key, size, DB_TAG "\t%s\t%s\t%s\t%s\t", name, driver, cmrscl_precision_name(p), cls);
}

static bool parse_options(const char *text, cmrscl_options *o)
{
    int k, h, w, g, ord, r, t, c, l;
    if (sscanf(text, "k%d h%d w%d g%d o%d r%d t%d c%d l%d", &k, &h, &w, &g, &ord, &r, &t, &c, &l) !=
        9)
        return false;
    /* a kernel and reduction given together name a row of the variant table */
    bool variant = k && r ? cmrs_variant_find((cmrscl_kernel)k, (cmrscl_reduce)r) != NULL
                          : (k == 0 || cmrs_variant_family_of((cmrscl_kernel)k)) && r >= 0 &&
                                r <= CMRSCL_REDUCE_SUBGROUP;
    if (!variant || h < 0 || h > CMRSCL_MAX_HEIGHT || w < 0 || w > 1024 || g < 0 || g > 65536 ||
        ord < 0 || ord > CMRSCL_ORDER_COLUMNS || t < -1 || c < 0 || c > CMRSCL_CACHE_HINT_STREAM ||
        l < 0 || l > CMRSCL_LAYOUT_UNPACKED)
        return false;
    memset(o, 0, sizeof *o);
    o->kernel = (cmrscl_kernel)k, o->height = h, o->warp = w, o->work_group_size = g;
    o->order = (cmrscl_order)ord, o->reduce = (cmrscl_reduce)r, o->tile = t;
    o->cache_hint = (cmrscl_cache_hint)c, o->layout = (cmrscl_layout)l;
    return true;
}

bool cmrs_tuning_db_lookup(const cmrscl_device_info *dev, cmrscl_precision p, const char *cls,
                           cmrscl_options *out)
{
    char path[4096], key[512], line[DB_LINE];
    if (!db_path(path, sizeof path))
        return false;
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    db_key(dev, p, cls, key, sizeof key);
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        if (!strncmp(line, key, strlen(key)))
            found = parse_options(line + strlen(key), out);
    fclose(f);
    return found;
}

/* The options of a line: after its fifth tab, if it is one of ours. */
static const char *options_field(const char *line)
{
    if (strncmp(line, DB_TAG "\t", strlen(DB_TAG) + 1) != 0)
        return NULL;
    const char *c = line;
    for (int i = 0; i < 5 && c; ++i)
        if ((c = strchr(c, '\t')) != NULL)
            ++c;
    return c;
}

cmrscl_status cmrs_tuning_db_store(const cmrscl_device_info *dev, cmrscl_precision p,
                                   const char *cls, const cmrscl_options *o, double median_ms)
{
    char path[4096], tmp[4200], key[512], line[DB_LINE];
    if (!db_path(path, sizeof path))
        return CMRSCL_OK; /* turned off */
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (cmrs_make_parent_dirs(tmp) != 0)
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot create the directory of %s: %s", path,
                           strerror(errno));
    FILE *out = fopen(tmp, "w");
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot write %s: %s", tmp, strerror(errno));
    db_key(dev, p, cls, key, sizeof key);
    FILE *in = fopen(path, "r");
    cmrscl_options ignored;
    while (in && fgets(line, sizeof line, in)) {
        /* keep the well-formed lines of other keys */
        const char *opts = options_field(line);
        if (opts && strchr(line, '\n') && strncmp(line, key, strlen(key)) &&
            parse_options(opts, &ignored))
            fputs(line, out);
    }
    if (in)
        fclose(in);
    fprintf(out, "%sk%d h%d w%d g%d o%d r%d t%d c%d l%d\t%.6g\n", key, (int)o->kernel, o->height,
            o->warp, o->work_group_size, (int)o->order, (int)o->reduce, o->tile, (int)o->cache_hint,
            (int)o->layout, median_ms);
    bool failed = ferror(out) != 0;
    failed |= fclose(out) != 0;
    if (failed || rename(tmp, path) != 0) {
        remove(tmp);
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot write the tuning database %s", path);
    }
    return CMRSCL_OK;
}
