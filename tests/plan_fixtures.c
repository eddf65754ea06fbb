/* plan_fixtures.c - see plan_fixtures.h. */
#include "plan_fixtures.h"

#include <stdio.h>
#include <string.h>

cmrscl_device_info fake_device(uint64_t local_per_cu, unsigned resident, uint64_t local)
{
    cmrscl_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.device_name, sizeof d.device_name, "Fake Device");
    d.local_mem_per_cu_bytes = local_per_cu;
    d.resident_items_per_cu = resident;
    d.local_mem_bytes = local;
    d.max_work_group_size = 1024;
    d.warp_width = 32;
    d.fp64 = 1;
    d.cache_bytes = 50u << 20; /* an H100's L2 */
    return d;
}

/* An H100/H200-like GPU: warp shuffles, 132 compute units (8448 resident warps), the
 * matrix rule's device. */
cmrscl_device_info fake_gpu(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    d.warp_shuffle = 1, d.compute_units = 132;
    return d;
}

/* A matrix of `cols` columns with the given row statistics and no RowPtr (no split). */
cmrscl_status choose(const cmrscl_device_info *d, cmrscl_precision precision, int32_t cols,
                     const cmrscl_options *o, cmrscl_params *p)
{
    plan_matrix a = {10,    cols, 10,   NULL, {1.0, 0.0, 1, 0, 0.0}, NULL, NULL,
                     false, NULL, NULL, NULL};
    return cmrs_plan_choose(d, precision, &a, o, p);
}

/* A matrix of 2^20 rows (many, for the fake devices) with these statistics (spread: the
 * column spread). */
cmrscl_status choose_rows(const cmrscl_device_info *d, int32_t rows, double mu, double cv,
                          double spread, int32_t cols, cmrscl_params *p)
{
    double nnz = rows * mu < INT32_MAX ? rows * mu : INT32_MAX;
    plan_matrix a = {rows, cols, (int32_t)nnz, NULL, {mu, cv, (int32_t)(2 * mu), 0, spread},
                     NULL, NULL, false,        NULL, NULL,
                     NULL};
    return cmrs_plan_choose(d, CMRSCL_FLOAT, &a, NULL, p);
}
cmrscl_status choose_stats(const cmrscl_device_info *d, double mu, double cv, double spread,
                           int32_t cols, cmrscl_params *p)
{
    return choose_rows(d, 1 << 20, mu, cv, spread, cols, p);
}
