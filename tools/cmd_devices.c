/* cmd_devices.c - `cmrscl-run devices`: every platform and device with the facts the
 * kernel parameters depend on and the HEIGHT the rule picks for float and double. */
#include "cli.h"

#include <stdlib.h>

static void print_device(const cmrscl_device_info *d)
{
    printf("%u:%u  %s [%s]  (%s)\n", d->platform_index, d->device_index, d->device_name,
           cmrscl_device_type_name(d->type), d->platform_name);
    printf("     %s, driver %s\n", d->device_version, d->driver_version);
    printf("     compute units %u, max work-group %u, memory %.1f GiB (max allocation %.1f GiB)\n",
           d->compute_units, d->max_work_group_size, d->global_mem_bytes / 1073741824.0,
           d->max_alloc_bytes / 1073741824.0);
    printf("     local memory %llu KiB per work-group; HEIGHT rule assumes %llu KiB and %u "
           "work-items per compute unit\n",
           (unsigned long long)(d->local_mem_bytes / 1024),
           (unsigned long long)(d->local_mem_per_cu_bytes / 1024), d->resident_items_per_cu);
    printf("     warp %u (from %s), fp64 %s, sub-groups %s, warp shuffle %s", d->warp_width,
           cmrscl_warp_source_name(d->warp_source), d->fp64 ? "yes" : "no",
           d->subgroups ? "yes" : "no", d->warp_shuffle ? "yes" : "no");
    if (d->nv_compute_capability)
        printf(", compute capability %d.%d", d->nv_compute_capability / 10,
               d->nv_compute_capability % 10);
    printf("\n     HEIGHT: float %d, double ", d->height_float);
    if (d->height_double)
        printf("%d\n", d->height_double);
    else
        printf("- (no fp64)\n");
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
    json_bool("subgroups", d->subgroups);
    json_bool("warp_shuffle", d->warp_shuffle);
    json_int("nv_compute_capability", d->nv_compute_capability);
    json_int("height_float", d->height_float);
    json_int("height_double", d->height_double);
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
