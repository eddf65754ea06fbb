/* plan_fixtures.h - fake devices and matrices for the plan tests (test_plan.c,
 * test_plan_devices.c): the plan from device facts and statistics alone, no device needed. */
#ifndef CMRSCL_PLAN_FIXTURES_H
#define CMRSCL_PLAN_FIXTURES_H

#include "plan/plan.h"

/* A device with these occupancy facts: warp 32, fp64, 1024 work-items a group, 50 MB cache,
 * no warp primitives. */
cmrscl_device_info fake_device(uint64_t local_per_cu, unsigned resident, uint64_t local);
/* An H100/H200-like GPU: warp shuffles, 132 compute units (8448 resident warps). */
cmrscl_device_info fake_gpu(void);
/* A matrix of `cols` columns with the given row statistics and no RowPtr (no split). */
cmrscl_status choose(const cmrscl_device_info *d, cmrscl_precision precision, int32_t cols,
                     const cmrscl_options *o, cmrscl_params *p);
/* A float matrix of `rows` rows with these statistics (spread: the column spread). */
cmrscl_status choose_rows(const cmrscl_device_info *d, int32_t rows, double mu, double cv,
                          double spread, int32_t cols, cmrscl_params *p);
/* ... of 2^20 rows (many, for the fake devices). */
cmrscl_status choose_stats(const cmrscl_device_info *d, double mu, double cv, double spread,
                           int32_t cols, cmrscl_params *p);

#endif
