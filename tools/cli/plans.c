/* plans.c - see plans.h. */
#include "plans.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Families and reductions are named by the library's variant table. */
const char *plan_kernel_name(cmrscl_kernel k)
{
    for (size_t i = 0; i < cmrscl_variant_count(); ++i)
        if (cmrscl_variant_get(i)->kernel == k)
            return cmrscl_variant_get(i)->family;
    return "auto";
}

const char *plan_reduce_name(cmrscl_reduce r)
{
    for (size_t i = 0; i < cmrscl_variant_count(); ++i)
        if (cmrscl_variant_get(i)->reduce == r)
            return cmrscl_variant_get(i)->reduction;
    return "auto";
}

bool plan_kernel_by_name(const char *name, cmrscl_kernel *out)
{
    for (size_t i = 0; i < cmrscl_variant_count(); ++i)
        if (!strcmp(cmrscl_variant_get(i)->family, name)) {
            *out = cmrscl_variant_get(i)->kernel;
            return true;
        }
    return false;
}

bool plan_reduce_by_name(const char *name, cmrscl_reduce *out)
{
    for (size_t i = 0; i < cmrscl_variant_count(); ++i)
        if (!strcmp(cmrscl_variant_get(i)->reduction, name)) {
            *out = cmrscl_variant_get(i)->reduce;
            return true;
        }
    return false;
}

const char *plan_values_name(const cmrscl_params *p)
{
    static const char *const dict[] = {"dict1", "dict2", "dict4", "dict8", "dict16"};
    static const char *const diagonal[] = {"diagonal1", "diagonal2", "diagonal4", "diagonal8",
                                           "diagonal16"};
    switch (p->values) {
    case CMRSCL_VALUES_DICT:
        return p->dict_bits >= 0 && p->dict_bits <= 4 ? dict[p->dict_bits] : "dict";
    case CMRSCL_VALUES_DIAGONAL:
        return p->dict_bits >= 0 && p->dict_bits <= 4 ? diagonal[p->dict_bits] : "diagonal";
    case CMRSCL_VALUES_FLOAT: return "float";
    default: return "plain";
    }
}

static bool bad_plan(const char *name, const char *why)
{
    fprintf(stderr, "cmrscl-run: --plans: '%s': %s (see cmrscl-run --help)\n", name, why);
    return false;
}

static bool apply_modifier(const char *name, const char *mod, cmrscl_options *o)
{
    if (!strcmp(mod, "stream"))
        o->cache_hint = CMRSCL_CACHE_HINT_STREAM;
    else if (!strcmp(mod, "nosplit"))
        o->tile = -1;
    else if (!strcmp(mod, "group"))
        o->combine = CMRSCL_COMBINE_GROUP;
    else if (!strcmp(mod, "combine"))
        o->combine = CMRSCL_COMBINE_KERNEL;
    else if (!strcmp(mod, "last"))
        o->combine = CMRSCL_COMBINE_LAST;
    else if (!strcmp(mod, "rows"))
        o->order = CMRSCL_ORDER_ROWS;
    else if (!strcmp(mod, "columns"))
        o->order = CMRSCL_ORDER_COLUMNS;
    else if (plan_reduce_by_name(mod, &o->reduce))
        ;
    else if (!strcmp(mod, "plain"))
        o->values = CMRSCL_VALUES_PLAIN;
    else if (!strcmp(mod, "c16") || !strcmp(mod, "c32"))
        o->column_bits = mod[1] == '1' ? 16 : 32;
    else if (!strcmp(mod, "c0"))
        o->column_bits = CMRSCL_COLUMNS_IMPLIED;
    else if (!strncmp(mod, "k=", 2) && (mod[2] == '1' || mod[2] == '2' || mod[2] == '4') && !mod[3])
        o->lane_entries = mod[2] - '0';
    else if (!strncmp(mod, "w=", 2)) {
        char *end;
        long w = strtol(mod + 2, &end, 10);
        if (*end || end == mod + 2 || w < 1 || w > 1024 || (w & (w - 1)))
            return bad_plan(name, "w=N needs a power of two N in 1..1024");
        o->warp = (int)w;
    } else if (!strncmp(mod, "wg=", 3)) {
        char *end;
        long g = strtol(mod + 3, &end, 10);
        if (*end || end == mod + 3 || g < 1 || g > 65536)
            return bad_plan(name, "wg=N needs a work-group size N in 1..65536");
        o->work_group_size = (int)g;
    } else if (!strncmp(mod, "m=", 2)) {
        char *end;
        long m = strtol(mod + 2, &end, 10);
        if (*end || end == mod + 2 || m < 2 || m > 32 || (m & (m - 1)))
            return bad_plan(name, "m=N needs N in 2, 4, 8, 16, 32 (modulo's slot sets)");
        o->modulo = (int)m;
    } else if (!strncmp(mod, "tile=", 5)) {
        char *end;
        long t = strtol(mod + 5, &end, 10);
        if (*end || end == mod + 5 || t < 1 || t > (1 << 30))
            return bad_plan(name, "tile=N needs N in 1..2^30");
        o->tile = (int)t;
    } else {
        return bad_plan(
            name,
            "unknown modifier (stream, nosplit, group, combine, last, rows, "
            "columns, local, shuffle, subgroup, plain, c0, c16, c32, w=N, wg=N, k=1|2|4, tile=N, "
            "m=N)");
    }
    return true;
}

bool plan_from_name(const char *name, const cmrscl_options *base, cmrscl_options *out)
{
    char buf[128];
    if (strlen(name) >= sizeof buf)
        return bad_plan(name, "too long");
    snprintf(buf, sizeof buf, "%s", name);
    char *mods = strchr(buf, '+');
    if (mods)
        *mods++ = '\0';
    char *colon = strchr(buf, ':');
    int height = 0;
    if (colon) {
        *colon = '\0';
        char *end;
        long h = strtol(colon + 1, &end, 10);
        if (*end || end == colon + 1 || h < 1 || h > CMRSCL_MAX_HEIGHT)
            return bad_plan(name, "HEIGHT must be 1..256");
        height = (int)h;
    }
    cmrscl_options o = {0};
    if (!strcmp(buf, "auto")) {
        o = *base;
    } else if (!strcmp(buf, "csr-vector") || !strcmp(buf, "csr-scalar")) {
        if (colon)
            return bad_plan(name, "CSR has HEIGHT 1");
        o.kernel = CMRSCL_KERNEL_STRIP;
        o.height = 1;
        o.tile = -1;
        o.warp = buf[4] == 's' ? 1 : 0;
    } else if (!plan_kernel_by_name(buf, &o.kernel)) {
        char known[160] = "unknown plan (auto, csr-vector, csr-scalar";
        for (int k = CMRSCL_KERNEL_AUTO + 1; strcmp(plan_kernel_name((cmrscl_kernel)k), "auto");
             ++k) /* the families, from the library's table of variants */
            snprintf(known + strlen(known), sizeof known - strlen(known), ", %s",
                     plan_kernel_name((cmrscl_kernel)k));
        snprintf(known + strlen(known), sizeof known - strlen(known), ")");
        return bad_plan(name, known);
    }
    if (height)
        o.height = height;
    for (char *save = NULL, *m = mods ? strtok_r(mods, "+", &save) : NULL; m;
         m = strtok_r(NULL, "+", &save))
        if (!apply_modifier(name, m, &o))
            return false;
    if (o.modulo && o.kernel != CMRSCL_KERNEL_MODULO)
        return bad_plan(name, "m=N is a modifier of the modulo plan");
    *out = o;
    return true;
}

void plan_describe(const cmrscl_params *p, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s h%d w%d/%d %s %s%s", plan_kernel_name(p->kernel), p->height,
                     p->warp, p->work_group_size, plan_reduce_name(p->reduce),
                     p->order == CMRSCL_ORDER_ROWS ? "rows" : "cols",
                     p->layout == CMRSCL_LAYOUT_UNPACKED ? " unpacked" : "");
    if (n > 0 && (size_t)n < size && p->lane_entries > 1)
        n += snprintf(buf + n, size - (size_t)n, " k%d", p->lane_entries);
    if (n > 0 && (size_t)n < size && p->modulo)
        n += snprintf(buf + n, size - (size_t)n, " m%d", p->modulo);
    if (n > 0 && (size_t)n < size && p->stored_entries > p->nnz) /* holes */
        n += snprintf(buf + n, size - (size_t)n, " pad%.2f",
                      (double)p->stored_entries / (double)p->nnz);
    if (n > 0 && (size_t)n < size && p->long_strips)
        n += snprintf(buf + n, size - (size_t)n, " split%d%s", (int)p->tile,
                      p->combine == CMRSCL_COMBINE_GROUP  ? " group"
                      : p->combine == CMRSCL_COMBINE_LAST ? " last"
                                                          : "");
    if (n > 0 && (size_t)n < size && p->cache_hint == CMRSCL_CACHE_HINT_STREAM)
        n += snprintf(buf + n, size - (size_t)n, " stream");
    if (n > 0 && (size_t)n < size && p->column_bits < 32)
        n += snprintf(buf + n, size - (size_t)n, " c%d", p->column_bits);
    if (n > 0 && (size_t)n < size && p->values != CMRSCL_VALUES_PLAIN)
        snprintf(buf + n, size - (size_t)n, " %s", plan_values_name(p));
}
