/* test_params.c - kernel parameters from device facts without a device: the HEIGHT rule
 * against the paper's numbers (section 6.3), user overrides, variant choice, and every
 * parameter error a user can provoke (no fp64, bad warp, local memory, packing). */
#include "internal.h"
#include "test_util.h"

#include <stdio.h>
#include <string.h>

static cmrscl_device_info fake_device(uint64_t local_per_cu, unsigned resident, uint64_t local)
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
    return d;
}

static void test_height_rule(void)
{
    /* Kepler K20M: 48 KiB, 2048 threads per SM -> 6 floats, the paper's optimum. */
    cmrscl_device_info kepler = fake_device(48 * 1024, 2048, 48 * 1024);
    CHECK(params_rule_height(&kepler, CMRSCL_FLOAT) == 6);
    CHECK(params_rule_height(&kepler, CMRSCL_DOUBLE) == 3);
    /* Hopper: 228 KiB, 2048 threads -> 28 floats (clamped to 16), 14 doubles. */
    cmrscl_device_info hopper = fake_device(228 * 1024, 2048, 48 * 1024);
    CHECK(params_rule_height(&hopper, CMRSCL_FLOAT) == 16);
    CHECK(params_rule_height(&hopper, CMRSCL_DOUBLE) == 14);
    /* A tiny local memory still gives a runnable HEIGHT of at least 1. */
    cmrscl_device_info tiny = fake_device(1024, 2048, 1024);
    CHECK(params_rule_height(&tiny, CMRSCL_DOUBLE) == 1);
    /* The per-work-group limit caps the rule: 4 KiB / (128 work-items * 4 bytes) = 8. */
    cmrscl_device_info small_group = fake_device(1 << 20, 64, 4096);
    CHECK(params_rule_height(&small_group, CMRSCL_FLOAT) == 8);
}

static void test_choices(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    cmrscl_params p;
    CHECK_OK(params_choose(&d, CMRSCL_FLOAT, 1000, NULL, &p));
    CHECK(p.height == 16 && p.warp == 32 && p.work_group_size == 128);
    CHECK(p.layout == CMRSCL_LAYOUT_PACKED && p.order == CMRSCL_ORDER_COLUMNS);
    CHECK(p.reduce == CMRSCL_REDUCE_LOCAL); /* no warp shuffle on this device */
    CHECK(!strcmp(p.height_source, "device rule"));
    CHECK(test_contains(p.build_options, "-DHEIGHT=16 ") &&
          test_contains(p.build_options, "-DVALUE_DOUBLE=0") &&
          test_contains(p.build_options, "-DREDUCE=1"));
    d.warp_shuffle = 1;
    CHECK_OK(params_choose(&d, CMRSCL_DOUBLE, 1000, NULL, &p));
    CHECK(p.reduce == CMRSCL_REDUCE_SHUFFLE && test_contains(p.build_options, "-DREDUCE=2"));
    /* User overrides win and say so. */
    cmrscl_options o = {0};
    o.height = 5, o.order = CMRSCL_ORDER_ROWS, o.reduce = CMRSCL_REDUCE_LOCAL, o.warp = 8;
    CHECK_OK(params_choose(&d, CMRSCL_DOUBLE, 1000, &o, &p));
    CHECK(p.height == 5 && !strcmp(p.height_source, "user") && p.order == CMRSCL_ORDER_ROWS &&
          p.reduce == CMRSCL_REDUCE_LOCAL && p.warp == 8 && p.work_group_size == 128);
    /* The packing does not fit: the unpacked layout is chosen, not an error. */
    o = (cmrscl_options){0};
    o.height = 17;
    CHECK_OK(params_choose(&d, CMRSCL_FLOAT, 1000, &o, &p));
    CHECK(p.layout == CMRSCL_LAYOUT_UNPACKED && test_contains(p.build_options, "-DPACKED=0"));
    o.height = 4;
    CHECK_OK(params_choose(&d, CMRSCL_FLOAT, (1 << 28) + 1, &o, &p));
    CHECK(p.layout == CMRSCL_LAYOUT_UNPACKED);
    /* A device whose largest work-group is below 128: the group shrinks by warps. */
    d.max_work_group_size = 96;
    CHECK_OK(params_choose(&d, CMRSCL_FLOAT, 10, NULL, &p));
    CHECK(p.work_group_size == 96);
}

static void test_errors(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    cmrscl_params p;
    cmrscl_options o = {0};
    CHECK_STATUS(params_choose(&d, (cmrscl_precision)7, 10, NULL, &p),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    d.fp64 = 0;
    CHECK_STATUS(params_choose(&d, CMRSCL_DOUBLE, 10, NULL, &p), CMRSCL_ERROR_UNSUPPORTED);
    CHECK(test_contains(cmrscl_last_error(), "cl_khr_fp64"));
    d.fp64 = 1;
    o.warp = 24;
    CHECK_STATUS(params_choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.warp = 32, o.work_group_size = 48;
    CHECK_STATUS(params_choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.work_group_size = 2048;
    CHECK_STATUS(params_choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_DEVICE_LIMIT);
    o = (cmrscl_options){0};
    o.height = CMRSCL_MAX_HEIGHT + 1;
    CHECK_STATUS(params_choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.height = 0, o.reduce = (cmrscl_reduce)9;
    CHECK_STATUS(params_choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.reduce = CMRSCL_REDUCE_AUTO, o.layout = (cmrscl_layout)-1;
    CHECK_STATUS(params_choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    o.height = 20, o.layout = CMRSCL_LAYOUT_PACKED;
    CHECK_STATUS(params_choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "packed layout"));
    o.layout = CMRSCL_LAYOUT_AUTO, o.reduce = CMRSCL_REDUCE_SHUFFLE;
    CHECK_STATUS(params_choose(&d, CMRSCL_FLOAT, 10, &o, &p), CMRSCL_ERROR_UNSUPPORTED);
    /* 256 rows x 128 work-items x 8 bytes = 256 KiB of local memory: too much. */
    o = (cmrscl_options){0};
    o.height = 256;
    CHECK_STATUS(params_choose(&d, CMRSCL_DOUBLE, 10, &o, &p), CMRSCL_ERROR_DEVICE_LIMIT);
    CHECK(test_contains(cmrscl_last_error(), "local memory"));
}

static void test_tuned_table(void)
{
    cmrscl_device_info d = fake_device(228 * 1024, 2048, 48 * 1024);
    snprintf(d.device_name, sizeof d.device_name, "NVIDIA H200");
    cmrscl_params p;
    CHECK_OK(params_choose(&d, CMRSCL_DOUBLE, 10, NULL, &p));
    CHECK(p.height == 16 && !strcmp(p.height_source, "tuned"));
    cmrscl_options o = {0};
    o.height = 7; /* the user still wins */
    CHECK_OK(params_choose(&d, CMRSCL_DOUBLE, 10, &o, &p));
    CHECK(p.height == 7 && !strcmp(p.height_source, "user"));
}

/* The device-memory check on fake device facts: the device's own limits, which a real
 * test could only reach with a matrix of gigabytes, and the context's cap. */
static void test_device_memory_limits(void)
{
    struct cmrscl_context_s ctx;
    memset(&ctx, 0, sizeof ctx);
    pthread_mutex_init(&ctx.lock, NULL);
    ctx.info = fake_device(0, 0, 0);
    ctx.info.max_alloc_bytes = 1000;
    ctx.info.global_mem_bytes = 2500;
    size_t fits[4] = {100, 1000, 0, 1000};
    CHECK_OK(matrix_check_device_memory(&ctx, fits));
    size_t big_buffer[4] = {100, 1001, 0, 500};
    CHECK_STATUS(matrix_check_device_memory(&ctx, big_buffer), CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY);
    CHECK(test_contains(cmrscl_last_error(), "1001-byte col_ind buffer") &&
          test_contains(cmrscl_last_error(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
    size_t too_much[4] = {900, 900, 0, 900};
    CHECK_STATUS(matrix_check_device_memory(&ctx, too_much), CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY);
    CHECK(test_contains(cmrscl_last_error(), "2700 bytes") &&
          test_contains(cmrscl_last_error(), "CL_DEVICE_GLOBAL_MEM_SIZE"));
    ctx.memory_limit = 1500; /* the cap tightens both limits */
    CHECK_STATUS(matrix_check_device_memory(&ctx, fits), CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY);
    CHECK(test_contains(cmrscl_last_error(), "memory limit"));
    pthread_mutex_destroy(&ctx.lock);
}

int main(void)
{
    test_height_rule();
    test_choices();
    test_errors();
    test_tuned_table();
    test_device_memory_limits();
    return test_finish("params");
}
