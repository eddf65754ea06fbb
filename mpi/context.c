/* context.c - a device per rank: ranks of one node spread over its devices by their rank
 * among the node's ranks (MPI_COMM_TYPE_SHARED), or each given its own selector; the ranks
 * agree on the outcome, so a bad selector on one rank fails all of them. */
#include "dist_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static cmrscl_status local_rank(MPI_Comm comm, int *out)
{
    MPI_Comm node;
    int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Comm_rank(node, out);
        MPI_Comm_free(&node);
    }
    return rc == MPI_SUCCESS ? CMRSCL_OK : cmrs_dist_fail_mpi(rc, "MPI_Comm_split_type");
}

/* Item `index` (modulo their number) of a comma-separated list, into buf. */
static const char *list_item(const char *list, int index, char *buf, size_t size)
{
    int n = 1;
    for (const char *p = list; *p; ++p)
        n += *p == ',';
    const char *p = list;
    for (int k = index % n; k > 0; --k)
        p = strchr(p, ',') + 1;
    size_t len = strcspn(p, ",");
    snprintf(buf, size, "%.*s", (int)(len < size ? len : size - 1), p);
    return buf;
}

/* The selector of this rank's device: for a device type ("gpu", "cpu", "accelerator"; none
 * given: "gpu") the local rank's device of that type, modulo their number; else, or when
 * there is no device of the type, the item as it is (P:D, a name substring, or empty: the
 * library's default, and its message when nothing matches). */
static cmrscl_status rank_selector(const char *item, int local, char *out, size_t size)
{
    const char *type = *item ? item : "gpu";
    snprintf(out, size, "%s", item);
    cmrscl_device_info *devices = NULL;
    size_t count = 0, matching = 0;
    cmrscl_status st = cmrscl_devices(&devices, &count);
    for (size_t i = 0; st == CMRSCL_OK && i < count; ++i)
        matching += strcasecmp(type, cmrscl_device_type_name(devices[i].type)) == 0;
    for (size_t i = 0, k = 0; st == CMRSCL_OK && matching > 0 && i < count; ++i)
        if (strcasecmp(type, cmrscl_device_type_name(devices[i].type)) == 0 &&
            k++ == (size_t)local % matching)
            snprintf(out, size, "%u:%u", devices[i].platform_index, devices[i].device_index);
    free(devices);
    return st;
}

cmrscl_status cmrscl_dist_context_create(MPI_Comm comm, const char *selector, cmrscl_context *out)
{
    if (out)
        *out = NULL;
    MPI_Comm dup;
    cmrscl_status st = cmrs_dist_comm_dup(comm, &dup);
    if (st != CMRSCL_OK)
        return st;
    const char *given = selector && *selector ? selector : getenv("CMRSCL_DEVICE");
    char item[256], chosen[256];
    int local = 0;
    st = out ? local_rank(dup, &local)
             : cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    if (st == CMRSCL_OK)
        st = rank_selector(list_item(given ? given : "", local, item, sizeof item), local, chosen,
                           sizeof chosen);
    cmrscl_context ctx = NULL;
    if (st == CMRSCL_OK)
        st = cmrscl_context_create(*chosen ? chosen : NULL, &ctx);
    if ((st = cmrs_dist_agree(dup, st)) != CMRSCL_OK)
        cmrscl_context_free(ctx);
    else
        *out = ctx;
    MPI_Comm_free(&dup);
    return st;
}
