/* test_api.c - the public API on a real device (CMRSCL_DEVICE): version and status
 * strings, device selection, NULL handles and misuse, device-buffer SpMV with events and
 * queues, interop with the caller's OpenCL objects, device-memory limits (the context
 * stays usable), a kernel build failure reporting its build log, and the two CSR forms
 * (int32 and int64 row pointers), the index width option and the size limits, and the plan's
 * versioned view (cmrscl_params.struct_size). */
#include "test_matrices.h"
#include "test_util.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cmrscl_csr small_matrix(void)
{
    cmrscl_csr a;
    test_matrix_build(9, &a); /* 1500 x 1500 random */
    return a;
}

static void test_strings(void)
{
    CHECK(cmrscl_version_number() == CMRSCL_VERSION_NUMBER);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", CMRSCL_VERSION_MAJOR, CMRSCL_VERSION_MINOR,
             CMRSCL_VERSION_PATCH);
    CHECK(!strcmp(cmrscl_version_string(), expect));
    CHECK(!strcmp(cmrscl_status_name(CMRSCL_OK), "CMRSCL_OK"));
    CHECK(!strcmp(cmrscl_status_name(CMRSCL_ERROR_BUILD), "CMRSCL_ERROR_BUILD"));
    CHECK(!strcmp(cmrscl_status_name((cmrscl_status)-999), "CMRSCL_UNKNOWN_STATUS"));
    CHECK(!strcmp(cmrscl_status_message(CMRSCL_ERROR_PARSE), "malformed Matrix Market file"));
    for (int s = 0; s >= CMRSCL_ERROR_COMMUNICATION; --s)
        CHECK(strcmp(cmrscl_status_name((cmrscl_status)s), "CMRSCL_UNKNOWN_STATUS") != 0);
}

static void test_null_handles(void)
{
    cmrscl_context_free(NULL);
    cmrscl_matrix_free(NULL);
    cmrscl_cmrs_free(NULL);
    cmrscl_csr_free(NULL);
    cmrscl_matrix m = (cmrscl_matrix)1;
    CHECK_STATUS(cmrscl_context_create(NULL, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_matrix_create(NULL, CMRSCL_FLOAT, 0, 0, NULL, NULL, NULL, NULL, &m),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(m == NULL); /* outputs are cleared on failure */
    CHECK_STATUS(cmrscl_spmv(NULL, 1, NULL, 0, NULL, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmv_host(NULL, 1, NULL, 0, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_matrix_params(NULL, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_context_device_info(NULL, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_devices(NULL, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(*cmrscl_last_error() != '\0');
}

static void test_selection(void)
{
    cmrscl_device_info *list;
    size_t n;
    CHECK_OK(cmrscl_devices(&list, &n));
    CHECK(n >= 1);
    cmrscl_context ctx = NULL;
    char sel[64];
    snprintf(sel, sizeof sel, "%u:%u", list[0].platform_index, list[0].device_index);
    CHECK_OK(cmrscl_context_create(sel, &ctx));
    cmrscl_device_info got;
    CHECK_OK(cmrscl_context_device_info(ctx, &got));
    CHECK(!strcmp(got.device_name, list[0].device_name));
    cmrscl_context_free(ctx);
    CHECK_OK(cmrscl_context_create(cmrscl_device_type_name(list[0].type), &ctx));
    cmrscl_context_free(ctx);
    /* A name substring, upper-cased: the match ignores case. */
    char name[8] = {0};
    for (int i = 0; i < 3 && list[0].device_name[i]; ++i)
        name[i] = (char)toupper((unsigned char)list[0].device_name[i]);
    CHECK_OK(cmrscl_context_create(name, &ctx));
    cmrscl_context_free(ctx);
    ctx = (cmrscl_context)1;
    CHECK_STATUS(cmrscl_context_create("no such device, surely", &ctx), CMRSCL_ERROR_NO_DEVICE);
    CHECK(ctx == NULL && test_contains(cmrscl_last_error(), list[0].device_name));
    CHECK_STATUS(cmrscl_context_create("99:99", &ctx), CMRSCL_ERROR_NO_DEVICE);
    free(list);
}

/* y = A x through device buffers, an own queue and events, and their misuse. */
static void test_buffers(cmrscl_context ctx)
{
    cmrscl_csr a = small_matrix();
    cmrscl_matrix m;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_DOUBLE, &a, NULL, &m));
    cl_context cl;
    cl_device_id dev = test_cl_device(ctx, &cl);
    double *x = malloc(sizeof(double) * (size_t)a.cols),
           *y = malloc(sizeof(double) * (size_t)a.rows);
    for (int32_t j = 0; j < a.cols; ++j)
        x[j] = test_uniform(-1, 1);
    cl_int err;
    cl_mem xb =
        clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, 8 * (size_t)a.cols, x, &err);
    cl_mem yb = clCreateBuffer(cl, CL_MEM_READ_WRITE, 8 * (size_t)a.rows, NULL, &err);
    cl_mem small = clCreateBuffer(cl, CL_MEM_READ_WRITE, 8 * (size_t)a.rows - 8, NULL, &err);
    cl_command_queue own = clCreateCommandQueue(cl, dev, 0, &err);
    cl_event ev = NULL, ev2 = NULL;
    CHECK_OK(cmrscl_spmv(m, 1.0, xb, 0.0, yb, own, 0, NULL, &ev));
    CHECK(ev != NULL);
    CHECK_OK(cmrscl_spmv(m, 1.0, xb, 0.0, yb, own, 1, &ev, &ev2));
    CHECK(clWaitForEvents(1, &ev2) == CL_SUCCESS);
    clEnqueueReadBuffer(own, yb, CL_TRUE, 0, 8 * (size_t)a.rows, y, 0, NULL, NULL);
    double ratio = INFINITY;
    CHECK_OK(cmrscl_csr_spmv_check(&a, 1.0, x, 0.0, NULL, y, 0x1p-53, NULL, &ratio));
    CHECK(ratio <= 1.0);
    /* Misuse: too small, the same buffer twice, wait list mismatch. */
    CHECK_STATUS(cmrscl_spmv(m, 1.0, xb, 0.0, small, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "y holds"));
    CHECK_STATUS(cmrscl_spmv(m, 1.0, small, 0.0, yb, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmv(m, 1.0, yb, 0.0, yb, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmv(m, 1.0, xb, 0.0, yb, NULL, 1, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmv(m, 1.0, NULL, 0.0, yb, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    /* A buffer and a queue of another OpenCL context. */
    cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_mem foreign = clCreateBuffer(other, CL_MEM_READ_WRITE, 8 * (size_t)a.rows, NULL, &err);
    cl_command_queue foreign_q = clCreateCommandQueue(other, dev, 0, &err);
    CHECK_STATUS(cmrscl_spmv(m, 1.0, xb, 0.0, foreign, NULL, 0, NULL, NULL),
                 CMRSCL_ERROR_CONTEXT_MISMATCH);
    CHECK_STATUS(cmrscl_spmv(m, 1.0, xb, 0.0, yb, foreign_q, 0, NULL, NULL),
                 CMRSCL_ERROR_CONTEXT_MISMATCH);
    clReleaseCommandQueue(foreign_q);
    clReleaseMemObject(foreign);
    clReleaseContext(other);
    clReleaseEvent(ev);
    clReleaseEvent(ev2);
    clReleaseCommandQueue(own);
    clReleaseMemObject(xb), clReleaseMemObject(yb), clReleaseMemObject(small);
    free(x), free(y);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

static void test_interop(cmrscl_context ctx)
{
    cl_context cl;
    cl_device_id dev = test_cl_device(ctx, &cl);
    cl_int err;
    cl_context mine = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue mine_q = clCreateCommandQueue(mine, dev, 0, &err);
    cmrscl_context wrapped = NULL;
    CHECK_STATUS(cmrscl_context_create_from_cl(cl, mine_q, &wrapped),
                 CMRSCL_ERROR_CONTEXT_MISMATCH);
    CHECK_OK(cmrscl_context_create_from_cl(mine, mine_q, &wrapped));
    /* The caller may drop its references: the cmrscl context retained both. */
    clReleaseCommandQueue(mine_q);
    clReleaseContext(mine);
    cmrscl_csr a = small_matrix();
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(wrapped, CMRSCL_FLOAT, &a, NULL, &m));
    float *x = malloc(4 * (size_t)a.cols), *y = malloc(4 * (size_t)a.rows);
    double *xd = malloc(8 * (size_t)a.cols), *yd = malloc(8 * (size_t)a.rows);
    for (int32_t j = 0; j < a.cols; ++j)
        xd[j] = x[j] = (float)test_uniform(-1, 1);
    CHECK_OK(cmrscl_spmv_host(m, 2.0, x, 0.0, y));
    for (int32_t i = 0; i < a.rows; ++i)
        yd[i] = y[i];
    cmrscl_csr ref = test_csr_rounded(&a, CMRSCL_FLOAT);
    double ratio = INFINITY;
    CHECK_OK(cmrscl_csr_spmv_check(&ref, 2.0, xd, 0.0, NULL, yd, 0x1p-24, NULL, &ratio));
    CHECK(ratio <= 1.0);
    cmrscl_csr_free(&ref);
    free(x), free(y), free(xd), free(yd);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
    cmrscl_context_free(wrapped);
}

/* An out-of-order queue of the caller's: the blocking host call must still wait for the
 * product before reading y (a large matrix makes a premature read visible). */
static void test_out_of_order_queue(cmrscl_context ctx)
{
    cl_context cl;
    cl_device_id dev = test_cl_device(ctx, &cl);
    cl_int err;
    cl_command_queue ooo =
        clCreateCommandQueue(cl, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    if (!ooo) {
        printf("out-of-order queues not supported: that check was not run\n");
        return;
    }
    enum { N = 1 << 21 };
    int32_t *rp = malloc(sizeof(int32_t) * (N + 1)), *ci = malloc(sizeof(int32_t) * 3 * N);
    float *v = malloc(sizeof(float) * 3 * N), *x = malloc(sizeof(float) * N);
    float *y = malloc(sizeof(float) * N);
    int32_t k = 0;
    for (int32_t i = 0; i < N; ++i) { /* 1-D Laplacian: y = A * ones is 0 inside, 1 at ends */
        rp[i] = k;
        for (int32_t j = i - 1; j <= i + 1; ++j)
            if (j >= 0 && j < N)
                ci[k] = j, v[k++] = j == i ? 2.0f : -1.0f;
        x[i] = 1.0f;
    }
    rp[N] = k;
    cmrscl_context wrapped = NULL;
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_context_create_from_cl(cl, ooo, &wrapped));
    CHECK_OK(cmrscl_matrix_create(wrapped, CMRSCL_FLOAT, N, N, rp, ci, v, NULL, &m));
    for (int run = 0; m && run < 3; ++run) {
        for (int32_t i = 0; i < N; ++i)
            y[i] = -7.0f;
        CHECK_OK(cmrscl_spmv_host(m, 1.0, x, 0.0, y));
        int32_t wrong = 0;
        for (int32_t i = 0; i < N; ++i)
            wrong += y[i] != (i == 0 || i == N - 1 ? 1.0f : 0.0f);
        CHECK_MSG(wrong == 0, "out-of-order queue, run %d: %d rows wrong", run, wrong);
    }
    cmrscl_matrix_free(m);
    cmrscl_context_free(wrapped);
    clReleaseCommandQueue(ooo);
    free(rp), free(ci), free(v), free(x), free(y);
}

static void test_matrix_misuse(cmrscl_context ctx)
{
    int32_t rp[] = {0, 2, 1};
    int32_t ci[] = {0, 5};
    float v[] = {1, 2};
    cmrscl_matrix m = (cmrscl_matrix)1;
    CHECK_STATUS(cmrscl_matrix_create(ctx, CMRSCL_FLOAT, 2, 2, rp, ci, v, NULL, &m),
                 CMRSCL_ERROR_INVALID_MATRIX);
    CHECK(m == NULL);
    rp[2] = 2;
    CHECK_STATUS(cmrscl_matrix_create(ctx, CMRSCL_FLOAT, 2, 2, rp, ci, v, NULL, &m),
                 CMRSCL_ERROR_INVALID_MATRIX);
    CHECK(test_contains(cmrscl_last_error(), "col_ind[1] = 5"));
    ci[1] = 1;
    CHECK_STATUS(cmrscl_matrix_create(ctx, CMRSCL_FLOAT, 2, 2, rp, ci, NULL, NULL, &m),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_matrix_create(ctx, (cmrscl_precision)0, 2, 2, rp, ci, v, NULL, &m),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    cmrscl_options o = {0};
    cmrscl_device_info dev;
    CHECK_OK(cmrscl_context_device_info(ctx, &dev));
    /* more local memory than a group gets: 256 rows x the largest group x 4 bytes (on a device
     * whose groups are small enough for that to fit, the refusal cannot be provoked so) */
    o.height = CMRSCL_MAX_HEIGHT, o.work_group_size = (int)dev.max_work_group_size;
    o.kernel = CMRSCL_KERNEL_STRIP, o.reduce = CMRSCL_REDUCE_LOCAL;
    if ((uint64_t)o.height * (uint64_t)o.work_group_size * 4 > dev.local_mem_bytes)
        CHECK_STATUS(cmrscl_matrix_create(ctx, CMRSCL_FLOAT, 2, 2, rp, ci, v, &o, &m),
                     CMRSCL_ERROR_DEVICE_LIMIT);
    else
        printf("api: the local-memory refusal is not checked: %d rows x %d work-items x 4 bytes "
               "fit the device's %llu bytes\n",
               o.height, o.work_group_size, (unsigned long long)dev.local_mem_bytes);
    CHECK_OK(cmrscl_matrix_create(ctx, CMRSCL_FLOAT, 2, 2, rp, ci, v, NULL, &m));
    float x[2] = {1, 1}, y[2] = {0, 0};
    CHECK_OK(cmrscl_spmv_host(m, 1.0, x, 0.0, y));
    CHECK(y[0] == 3 && y[1] == 0); /* row 0 holds both entries */
    CHECK_STATUS(cmrscl_spmv_host(m, 1.0, NULL, 0.0, y), CMRSCL_ERROR_INVALID_ARGUMENT);
    cmrscl_matrix_free(m);
}

/* cmrscl_matrix_create (int32 row pointers, widened) and cmrscl_matrix_create_i64 build the
 * same matrix, and so does a forced 64-bit index width (read back widened); bad widths,
 * negative sizes and the packed layout's column limit fail with clear messages. */
static void test_index_forms(cmrscl_context ctx)
{
    cmrscl_csr a = small_matrix();
    int32_t *rp32 = test_row_ptr32(&a);
    float *v = malloc(sizeof(float) * ((size_t)a.nnz + 1));
    for (int64_t k = 0; k < a.nnz; ++k)
        v[k] = (float)a.values[k];
    cmrscl_matrix m32 = NULL, m64 = NULL, wide = NULL, m = NULL;
    cmrscl_options o = {0};
    o.index_bits = 64;
    CHECK_OK(
        cmrscl_matrix_create(ctx, CMRSCL_FLOAT, a.rows, a.cols, rp32, a.col_ind, v, NULL, &m32));
    CHECK_OK(cmrscl_matrix_create_i64(ctx, CMRSCL_FLOAT, a.rows, a.cols, a.row_ptr, a.col_ind, v,
                                      NULL, &m64));
    CHECK_OK(
        cmrscl_matrix_create(ctx, CMRSCL_FLOAT, a.rows, a.cols, rp32, a.col_ind, v, &o, &wide));
    if (m32 && m64 && wide) {
        cmrscl_params p32 = CMRSCL_PARAMS_INIT, p64 = CMRSCL_PARAMS_INIT, pw = CMRSCL_PARAMS_INIT;
        cmrscl_matrix_params(m32, &p32), cmrscl_matrix_params(m64, &p64);
        cmrscl_matrix_params(wide, &pw);
        CHECK(!strcmp(p32.build_options, p64.build_options) && p32.index_bits == 32 &&
              p64.index_bits == 32 && pw.index_bits == 64 && p32.nnz == a.nnz);
        check_same_cmrs(m32, m64, "int32 and int64 row pointers");
        check_same_cmrs(m32, wide, "32-bit and 64-bit entry indices");
    }
    o.index_bits = 16;
    CHECK_STATUS(
        cmrscl_matrix_create(ctx, CMRSCL_FLOAT, a.rows, a.cols, rp32, a.col_ind, v, &o, &m),
        CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(m == NULL && test_contains(cmrscl_last_error(), "index_bits 16"));
    CHECK_STATUS(cmrscl_matrix_create(ctx, CMRSCL_FLOAT, -1, a.cols, rp32, a.col_ind, v, NULL, &m),
                 CMRSCL_ERROR_INVALID_MATRIX);
    CHECK(test_contains(cmrscl_last_error(), "negative size"));
    CHECK_STATUS(
        cmrscl_matrix_create_i64(ctx, CMRSCL_FLOAT, a.rows, -5, a.row_ptr, a.col_ind, v, NULL, &m),
        CMRSCL_ERROR_INVALID_MATRIX);
    /* 2^28 + 1 columns: beyond the packing of HEIGHT 16, unpacked unless packed is forced */
    int64_t rp[] = {0, 1, 2};
    int32_t ci[] = {0, 1 << 28};
    float vv[] = {1, 2};
    o = (cmrscl_options){.kernel = CMRSCL_KERNEL_STRIP, .height = 16};
    CHECK_OK(cmrscl_matrix_create_i64(ctx, CMRSCL_FLOAT, 2, (1 << 28) + 1, rp, ci, vv, &o, &m));
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    if (m && cmrscl_matrix_params(m, &p) == CMRSCL_OK)
        CHECK(p.layout == CMRSCL_LAYOUT_UNPACKED);
    cmrscl_matrix_free(m);
    m = NULL;
    o.layout = CMRSCL_LAYOUT_PACKED;
    CHECK_STATUS(cmrscl_matrix_create_i64(ctx, CMRSCL_FLOAT, 2, (1 << 28) + 1, rp, ci, vv, &o, &m),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(test_contains(cmrscl_last_error(), "needs at most 2^28 columns (268435457 columns)"));
    cmrscl_matrix_free(m32), cmrscl_matrix_free(m64), cmrscl_matrix_free(wide);
    free(rp32), free(v);
    cmrscl_csr_free(&a);
}

static void test_memory_limit(cmrscl_context ctx)
{
    cmrscl_csr a = small_matrix();
    cmrscl_matrix m = (cmrscl_matrix)1;
    /* values (8 bytes x (nnz + 4 of padding)) is the largest array; a cap below it fails
     * that buffer. */
    uint64_t values = 8 * ((uint64_t)a.nnz + 4);
    CHECK_OK(cmrscl_context_set_memory_limit(ctx, values - 1));
    CHECK_STATUS(cmrscl_matrix_create_from_csr(ctx, CMRSCL_DOUBLE, &a, NULL, &m),
                 CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY);
    CHECK(m == NULL && test_contains(cmrscl_last_error(), "values buffer") &&
          test_contains(cmrscl_last_error(), "memory limit"));
    /* A cap above every buffer but below their sum fails the total. */
    CHECK_OK(cmrscl_context_set_memory_limit(ctx, values + 16));
    CHECK_STATUS(cmrscl_matrix_create_from_csr(ctx, CMRSCL_DOUBLE, &a, NULL, &m),
                 CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY);
    CHECK(test_contains(cmrscl_last_error(), "bytes of device memory"));
    /* The context stays usable once the cap is lifted. */
    CHECK_OK(cmrscl_context_set_memory_limit(ctx, 0));
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_DOUBLE, &a, NULL, &m));
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_params(m, &p));
    /* a value and a column word (4 bytes, or 2 narrow) an entry at least */
    CHECK(p.device_bytes >= (8 + (uint64_t)p.column_bits / 8) * (uint64_t)a.nnz && p.nnz == a.nnz &&
          p.rows == a.rows);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

/* A kernel directory with a broken kernel: the build fails with the compiler's log. */
static void test_build_failure(cmrscl_context ctx)
{
    char dir[] = "/tmp/cmrscl-kernels-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[128];
    /* the shared parts, empty here */
    static const char *const prelude[] = {"cmrs_abi.h", "spmv_common.cl", "warp.cl",
                                          "dots.cl",    "cg_fused.cl",    "combine.cl"};
    enum { PRELUDE = sizeof prelude / sizeof prelude[0] };
    char written[PRELUDE][128];
    for (int i = 0; i < PRELUDE; ++i) {
        snprintf(written[i], sizeof written[i], "%s/%s", dir, prelude[i]);
        FILE *f = fopen(written[i], "w");
        fputs("/* empty here */\n", f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/cmrs_strip.cl", dir);
    FILE *f = fopen(path, "w");
    fputs("__kernel void cmrs_spmv(__global float *y) { this is not OpenCL C }\n", f);
    fclose(f);
    setenv("CMRSCL_KERNEL_DIR", dir, 1);
    cmrscl_csr a = small_matrix();
    cmrscl_matrix m = NULL;
    cmrscl_options o = {0};
    o.height = 3, o.kernel = CMRSCL_KERNEL_STRIP; /* parameters no earlier test built, so
                                                    the cache cannot answer */
    CHECK_STATUS(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &a, &o, &m), CMRSCL_ERROR_BUILD);
    CHECK(test_contains(cmrscl_last_error(), "build log") &&
          test_contains(cmrscl_last_error(), "-DHEIGHT=3"));
    remove(path);
    CHECK_STATUS(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &a, &o, &m),
                 CMRSCL_ERROR_FILE_IO);
    CHECK(test_contains(cmrscl_last_error(), path));
    for (int i = 0; i < PRELUDE; ++i)
        remove(written[i]);
    rmdir(dir);
    unsetenv("CMRSCL_KERNEL_DIR");
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &a, &o, &m));
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

static void test_empty_matrix_event(cmrscl_context ctx)
{
    int32_t rp[1] = {0};
    cmrscl_matrix m;
    CHECK_OK(cmrscl_matrix_create(ctx, CMRSCL_FLOAT, 0, 5, rp, NULL, NULL, NULL, &m));
    cl_event ev = NULL;
    CHECK_OK(cmrscl_spmv(m, 1.0, NULL, 0.0, NULL, NULL, 0, NULL, &ev));
    CHECK(ev != NULL && clWaitForEvents(1, &ev) == CL_SUCCESS);
    if (ev)
        clReleaseEvent(ev);
    cmrscl_cmrs c;
    CHECK_OK(cmrscl_matrix_read_cmrs(m, &c));
    CHECK(c.rows == 0 && c.cols == 5 && c.strips == 0 && c.strip_ptr[0] == 0);
    cmrscl_cmrs_free(&c);
    cmrscl_matrix_free(m);
}

/* The device's rates: a scattered-load rate from a small and a larger buffer, and every
 * argument it cannot take refused with a reason. */
static void test_rates(cmrscl_context ctx)
{
    double g = -1.0, big = -1.0;
    CHECK_OK(cmrscl_gather_measure(ctx, 1 << 16, 2, &g));
    CHECK_OK(cmrscl_gather_measure(ctx, 4 << 20, 2, &big));
    CHECK(g > 0.0 && big > 0.0);
    CHECK_STATUS(cmrscl_gather_measure(ctx, 2, 2, &g), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(g == 0.0 && test_contains(cmrscl_last_error(), "2 bytes to gather from"));
    CHECK_STATUS(cmrscl_gather_measure(ctx, 1 << 16, 0, &g), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_gather_measure(ctx, 1 << 16, 1, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_gather_measure(NULL, 1 << 16, 1, &g), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_gather_measure(ctx, (uint64_t)1 << 40, 1, &g),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
}

/* The plan without a matrix (cmrscl_plan) is the plan cmrscl_matrix_create makes, field by
 * field, for every catalogue matrix on this device - automatic and with options; and the
 * variant table: each row named family/reduction, checked against the device with a reason
 * when refused, and every automatic plan a row the device runs. */
static void test_plan_without_matrix(cmrscl_context ctx)
{
    cmrscl_device_info d;
    CHECK_OK(cmrscl_context_device_info(ctx, &d));
    cmrscl_options variants[3] = {{0}};
    variants[1].kernel = CMRSCL_KERNEL_SEGMENT, variants[1].height = 8;
    variants[2].kernel = CMRSCL_KERNEL_STRIP, variants[2].height = 3, variants[2].tile = 7;
    for (int i = 0; i < test_matrix_count(); ++i)
        for (int k = 0; k < 3; ++k) {
            cmrscl_csr a;
            const char *name = test_matrix_build(i, &a);
            cmrscl_params planned = CMRSCL_PARAMS_INIT, made = CMRSCL_PARAMS_INIT;
            cmrscl_matrix m = NULL;
            CHECK_OK(cmrscl_plan(&d, CMRSCL_FLOAT, &a, &variants[k], &planned));
            CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &a, &variants[k], &m));
            CHECK_OK(cmrscl_matrix_params(m, &made));
            /* where the device's compiler picks sub-group widths itself, a create may fall
             * back to local memory: then only that differs, and the reason says so */
            bool fell_back = planned.reduce == CMRSCL_REDUCE_SUBGROUP &&
                             made.reduce == CMRSCL_REDUCE_LOCAL &&
                             test_contains(made.plan_reason, "local reduction:");
            CHECK_MSG(fell_back || (!strcmp(planned.build_options, made.build_options) &&
                                    !strcmp(planned.plan_reason, made.plan_reason) &&
                                    planned.strips == made.strips && planned.tiles == made.tiles &&
                                    planned.long_strips == made.long_strips &&
                                    planned.tile == made.tile && planned.nnz == made.nnz),
                      "%s, options %d: planned \"%s\" (%d tiles), made \"%s\" (%d tiles)", name, k,
                      planned.build_options, planned.tiles, made.build_options, made.tiles);
            bool runs = false;
            for (size_t v = 0; v < cmrscl_variant_count(); ++v) {
                const cmrscl_variant *t = cmrscl_variant_get(v);
                runs |= t->kernel == made.kernel && t->reduce == made.reduce &&
                        cmrscl_variant_check(&d, t) == CMRSCL_OK;
            }
            CHECK_MSG(runs, "%s: the plan's variant is no row the device runs", name);
            cmrscl_matrix_free(m);
            cmrscl_csr_free(&a);
        }
    CHECK(cmrscl_variant_get(cmrscl_variant_count()) == NULL);
    for (size_t v = 0; v < cmrscl_variant_count(); ++v) {
        const cmrscl_variant *t = cmrscl_variant_get(v);
        char name[64];
        snprintf(name, sizeof name, "%s/%s", t->family, t->reduction);
        CHECK(!strcmp(name, t->name) && t->kernel && t->reduce && t->file);
        cmrscl_status st = cmrscl_variant_check(&d, t);
        CHECK(st == CMRSCL_OK ||
              (st == CMRSCL_ERROR_UNSUPPORTED && test_contains(cmrscl_last_error(), t->name) &&
               test_contains(cmrscl_last_error(), "needs")));
    }
    cmrscl_csr a = small_matrix();
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_STATUS(cmrscl_plan(NULL, CMRSCL_FLOAT, &a, NULL, &p), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_variant_check(&d, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    a.col_ind[0] = a.cols; /* out of range: the validation's message */
    CHECK_STATUS(cmrscl_plan(&d, CMRSCL_FLOAT, &a, NULL, &p), CMRSCL_ERROR_INVALID_MATRIX);
    cmrscl_csr_free(&a);
}

/* cmrscl_params as a versioned view (include/cmrscl.h): a caller's struct_size bounds what
 * cmrscl_matrix_params, cmrscl_plan and cmrscl_matrix_prepare_transpose write - a longer
 * struct (a caller newer than the library) keeps its tail, a size below the first version's
 * is refused with nothing written, 0 reads as the library's own size. */
static void test_params_view(cmrscl_context ctx)
{
    cmrscl_csr a = small_matrix();
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &a, NULL, &m));
    cmrscl_device_info dev;
    CHECK_OK(cmrscl_context_device_info(ctx, &dev));
    cmrscl_params full = CMRSCL_PARAMS_INIT, zero = {0};
    CHECK_OK(cmrscl_matrix_params(m, &full));
    CHECK_OK(cmrscl_matrix_params(m, &zero));
    /* a zeroed struct gets the first version's fields, the same as the full view's */
    CHECK(full.struct_size == sizeof full && zero.struct_size == CMRSCL_PARAMS_SIZE_V1 &&
          !memcmp((char *)&full + sizeof full.struct_size, (char *)&zero + sizeof zero.struct_size,
                  CMRSCL_PARAMS_SIZE_V1 - sizeof full.struct_size) &&
          full.rows == a.rows && full.renumber == CMRSCL_RENUMBER_NONE &&
          zero.renumber == CMRSCL_RENUMBER_AUTO);
    enum { TAIL = 64 };
    unsigned char room[sizeof(cmrscl_params) + TAIL], *tail = room + sizeof(cmrscl_params);
    cmrscl_params *longer = (cmrscl_params *)(void *)room, *shorter = longer;
    for (int call = 0; call < 3; ++call) {
        memset(room, 0xab, sizeof room);
        longer->struct_size = sizeof room;
        cmrscl_status st = call == 0   ? cmrscl_matrix_params(m, longer)
                           : call == 1 ? cmrscl_plan(&dev, CMRSCL_FLOAT, &a, NULL, longer)
                                       : cmrscl_matrix_prepare_transpose(m, NULL, longer);
        CHECK_MSG(st == CMRSCL_OK && longer->struct_size == sizeof(cmrscl_params) &&
                      longer->rows == (call == 2 ? a.cols : a.rows) && tail[0] == 0xab &&
                      tail[TAIL - 1] == 0xab,
                  "call %d: a longer struct got %zu bytes, its tail %s", call, longer->struct_size,
                  tail[0] == 0xab ? "kept" : "written");
        memset(room, 0xab, sizeof room);
        shorter->struct_size = CMRSCL_PARAMS_SIZE_V1 - 1;
        st = call == 0   ? cmrscl_matrix_params(m, shorter)
             : call == 1 ? cmrscl_plan(&dev, CMRSCL_FLOAT, &a, NULL, shorter)
                         : cmrscl_matrix_prepare_transpose(m, NULL, shorter);
        CHECK_MSG(st == CMRSCL_ERROR_INVALID_ARGUMENT &&
                      test_contains(cmrscl_last_error(), "struct_size") &&
                      shorter->struct_size == CMRSCL_PARAMS_SIZE_V1 - 1 &&
                      room[sizeof(size_t)] == 0xab,
                  "call %d: a struct below the first version's size: %d", call, (int)st);
    }
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

int main(void)
{
    test_strings();
    test_null_handles();
    test_selection();
    cmrscl_context ctx = NULL;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (ctx) {
        cmrscl_device_info d;
        cmrscl_context_device_info(ctx, &d);
        printf("device %u:%u %s\n", d.platform_index, d.device_index, d.device_name);
        if (d.fp64)
            test_buffers(ctx);
        test_interop(ctx);
        test_out_of_order_queue(ctx);
        test_matrix_misuse(ctx);
        test_index_forms(ctx);
        if (d.fp64)
            test_memory_limit(ctx);
        test_build_failure(ctx);
        test_empty_matrix_event(ctx);
        test_rates(ctx);
        test_plan_without_matrix(ctx);
        test_params_view(ctx);
    }
    cmrscl_context_free(ctx);
    return test_finish("api");
}
