/* cmd_devices.c - `cmrscl-run devices`: every platform and device with the facts the plan
 * depends on, and the kernel variants it runs (or what it lacks for the others). */
#include "cli.h"

#include <stdlib.h>

static void print_device(const cmrscl_device_info *d)
{
    printf("%u:%u  %s [%s]  (%s)\n", d->platform_index, d->device_index, d->device_name,
           cmrscl_device_type_name(d->type), d->platform_name);
    printf("     %s, driver %s\n", d->device_version, d->driver_version);
    /* decimal units, as the size checks' refusals give them (run_memory.c) */
    printf("     compute units %u, max work-group %u, memory %.1f GB (max allocation %.1f GB)\n",
           d->compute_units, d->max_work_group_size, d->global_mem_bytes * 1e-9,
           d->max_alloc_bytes * 1e-9);
    printf("     local memory %llu KiB per work-group; HEIGHT rule assumes %llu KiB and %u "
           "work-items per compute unit\n",
           (unsigned long long)(d->local_mem_bytes / 1024),
           (unsigned long long)(d->local_mem_per_cu_bytes / 1024), d->resident_items_per_cu);
    printf("     warp %u (from %s), fp64 %s, warp shuffle %s", d->warp_width,
           cmrscl_warp_source_name(d->warp_source), d->fp64 ? "yes" : "no",
           d->warp_shuffle ? "yes" : "no");
    if (d->nv_compute_capability)
        printf(", compute capability %d.%d", d->nv_compute_capability / 10,
               d->nv_compute_capability % 10);
    printf("\n     last-level cache %.1f MiB (%s)\n", d->cache_bytes / 1048576.0, d->cache_source);
    printf("     sub-groups %s", !d->subgroups       ? "no"
                                 : d->subgroup_width ? "yes"
                                                     : "listed, unusable");
    if (d->subgroup_width) {
        printf(": width %u, fixed widths", d->subgroup_width);
        if (!d->subgroup_widths)
            printf(" none (each kernel's own is checked)");
        for (unsigned w = 2; w <= 64; w *= 2)
            if (d->subgroup_widths & w)
                printf(" %u", w);
        printf(", shuffles %s, %s, OpenCL C %d.%d",
               d->subgroup_relative  ? "yes (relative too)"
               : d->subgroup_shuffle ? "yes"
                                     : "no",
               d->subgroup_apart ? "a group's sub-groups part ways" : "tied together in a group",
               d->subgroup_cl_c / 10, d->subgroup_cl_c % 10);
    }
    printf("\n     variants:");
    for (size_t i = 0; i < cmrscl_variant_count(); ++i) {
        const cmrscl_variant *v = cmrscl_variant_get(i);
        if (cmrscl_variant_check(d, v) == CMRSCL_OK)
            printf(" %s", v->name);
    }
    printf("\n");
}

static void json_device(const cmrscl_device_info *d)
{
    char index[32];
    snprintf(index, sizeof index, "%u:%u", d->platform_index, d->device_index);
    json_open(NULL, '{');
    json_string("index", index);
    json_string("name", d->device_name);
    json_string("platform", d->platform_name);
    json_string("type", cmrscl_device_type_name(d->type));
    json_string("version", d->device_version);
    json_string("driver", d->driver_version);
    json_int("compute_units", d->compute_units);
    json_int("max_work_group_size", d->max_work_group_size);
    json_int("global_mem_bytes", (long long)d->global_mem_bytes);
    json_int("max_alloc_bytes", (long long)d->max_alloc_bytes);
    json_int("local_mem_bytes", (long long)d->local_mem_bytes);
    json_int("local_mem_per_cu_bytes", (long long)d->local_mem_per_cu_bytes);
    json_int("resident_items_per_cu", d->resident_items_per_cu);
    json_int("warp_width", d->warp_width);
    json_string("warp_source", cmrscl_warp_source_name(d->warp_source));
    json_bool("fp64", d->fp64);
    json_bool("warp_shuffle", d->warp_shuffle);
    json_int("nv_compute_capability", d->nv_compute_capability);
    json_int("cache_bytes", (long long)d->cache_bytes);
    json_string("cache_source", d->cache_source);
    json_bool("subgroups", d->subgroups);
    json_int("subgroup_width", d->subgroup_width);
    json_int("subgroup_widths", d->subgroup_widths);
    json_bool("subgroup_shuffle", d->subgroup_shuffle);
    json_bool("subgroup_apart", d->subgroup_apart);
    json_int("subgroup_cl_c", d->subgroup_cl_c);
    json_open("variants", '[');
    for (size_t i = 0; i < cmrscl_variant_count(); ++i) {
        const cmrscl_variant *v = cmrscl_variant_get(i);
        json_open(NULL, '{');
        json_string("name", v->name);
        bool ok = cmrscl_variant_check(d, v) == CMRSCL_OK;
        json_bool("runs", ok);
        json_string("why_not", ok ? "" : cmrscl_last_error());
        json_close('}');
    }
    json_close(']');
    json_close('}');
}

int cmd_devices(const cli_options *opt)
{
    cmrscl_device_info *list;
    size_t n;
    cmrscl_status st = cmrscl_devices(&list, &n);
    if (st != CMRSCL_OK)
        return cli_fail("listing devices", st);
    if (opt->json)
        json_open(NULL, '[');
    for (size_t i = 0; i < n; ++i) {
        if (opt->json)
            json_device(&list[i]);
        else
            print_device(&list[i]);
    }
    if (opt->json) {
        json_close(']');
        json_end();
    }
    free(list);
    return 0;
}
