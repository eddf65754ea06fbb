/* test_recording.c - recorded products (cmrscl_spmv_record, host/exec/recording.c) on the
 * device chosen by CMRSCL_DEVICE, one way a run:
 *   command_buffer  CMRSCL_COMMAND_BUFFER=on: replays are cl_khr_command_buffer command
 *                   buffers (skipped, with the reason, where the device offers none we use);
 *   enqueue         CMRSCL_COMMAND_BUFFER=off: replays enqueue the kernels.
 * Each way: matrices of the catalogue and split ones (each combine the device takes) and a
 * slice, a replay and then four back to back (beta 1: each adds to the last) give the bits of
 * the same cmrscl_spmv calls, and a recording of each (alpha, beta) of the grid (test_util.h)
 * the CPU double reference's; products with other arguments in between change nothing
 * recorded; a values update that stores the values plain (new kernels) is replayed with the
 * new values; a matrix without rows; the event; misuse.
 * Usage: test_recording command_buffer|enqueue */
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static cl_context cl;
static cl_command_queue queue;
static const cmrscl_precision prec = CMRSCL_FLOAT; /* every device has it; the path is the same */

static cl_mem buffer_of(const float *v, size_t n)
{
    cl_int err;
    cl_mem b = clCreateBuffer(cl, CL_MEM_READ_WRITE, sizeof(float) * (n ? n : 1), NULL, &err);
    if (n)
        clEnqueueWriteBuffer(queue, b, CL_TRUE, 0, sizeof(float) * n, v, 0, NULL, NULL);
    return b;
}

static float *random_vector(size_t n)
{
    float *v = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; ++i)
        v[i] = (float)test_uniform(-1, 1);
    return v;
}

/* y after `count` products y = alpha*A*x + y from y0: replays of r, or cmrscl_spmv calls. */
static float *run(cmrscl_matrix m, cmrscl_recording r, cl_mem x, cl_mem y, const float *y0,
                  size_t rows, int count)
{
    clEnqueueWriteBuffer(queue, y, CL_TRUE, 0, sizeof(float) * rows, y0, 0, NULL, NULL);
    for (int i = 0; i < count; ++i)
        CHECK_OK(r ? cmrscl_recording_enqueue(r, 0, NULL, NULL)
                   : cmrscl_spmv(m, 0.75, x, 1.0, y, NULL, 0, NULL, NULL));
    float *out = malloc(sizeof(float) * (rows ? rows : 1));
    clEnqueueReadBuffer(queue, y, CL_TRUE, 0, sizeof(float) * rows, out, 0, NULL, NULL);
    return out;
}

/* A recording of each (alpha, beta) of the grid, replayed once, against the CPU double
 * reference (beta = 0: y0 NaN, never to be read). */
static void check_grid(cmrscl_matrix m, const cmrscl_csr *a, cl_mem x, const float *xv, cl_mem y,
                       const char *name)
{
    size_t rows = (size_t)a->rows;
    cmrscl_csr ra = test_csr_rounded(a, prec);
    for (int g = 0; g < TEST_ALPHA_BETA_COUNT; ++g) {
        double alpha = test_alpha_beta[g][0], beta = test_alpha_beta[g][1];
        float *y0 = random_vector(rows), *got = malloc(sizeof(float) * (rows ? rows : 1));
        for (size_t i = 0; beta == 0 && i < rows; ++i)
            y0[i] = NAN;
        if (rows)
            clEnqueueWriteBuffer(queue, y, CL_TRUE, 0, sizeof(float) * rows, y0, 0, NULL, NULL);
        cmrscl_recording r = NULL;
        CHECK_OK(cmrscl_spmv_record(m, alpha, x, beta, y, &r));
        if (r)
            CHECK_OK(cmrscl_recording_enqueue(r, 0, NULL, NULL));
        if (rows)
            clEnqueueReadBuffer(queue, y, CL_TRUE, 0, sizeof(float) * rows, got, 0, NULL, NULL);
        double ratio =
            test_block_ratio(&ra, prec, alpha, beta, CMRSCL_ROW_MAJOR, 1, xv, 1, y0, got, 1);
        CHECK_MSG(r && ratio <= 1.0,
                  "%s: recorded alpha %g beta %g: %g x the rounding bound from the reference", name,
                  alpha, beta, ratio);
        cmrscl_recording_free(r);
        free(y0), free(got);
    }
    cmrscl_csr_free(&ra);
}

/* Replays of a recording against cmrscl_spmv with its arguments, bit for bit, and against the
 * CPU reference for each (alpha, beta) of the grid. */
static void check_matrix(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_options *opt,
                         int want_buffer, const char *name)
{
    cmrscl_matrix m;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, a, opt, &m));
    if (test_failures)
        return;
    size_t rows = (size_t)a->rows, cols = (size_t)a->cols;
    float *xv = random_vector(cols), *y0 = random_vector(rows), *other = random_vector(cols);
    cl_mem x = buffer_of(xv, cols), y = buffer_of(y0, rows), x2 = buffer_of(other, cols);
    cl_mem y2 = buffer_of(y0, rows);
    cmrscl_recording r;
    CHECK_OK(cmrscl_spmv_record(m, 0.75, x, 1.0, y, &r));
    const char *why = NULL;
    int is_buffer = cmrscl_recording_is_command_buffer(r, &why);
    CHECK_MSG(is_buffer == (want_buffer && rows > 0), "%s: command buffer %d (%s)", name, is_buffer,
              why);
    for (int count = 1; count <= 4; count += 3) {
        float *want = run(m, NULL, x, y, y0, rows, count);
        /* other arguments on the matrix's kernels between recording and replay */
        CHECK_OK(cmrscl_spmv(m, -2.0, x2, 0.0, y2, NULL, 0, NULL, NULL));
        float *got = run(m, r, x, y, y0, rows, count);
        CHECK_MSG(!memcmp(want, got, sizeof(float) * rows),
                  "%s: %d replays differ from cmrscl_spmv", name, count);
        free(want), free(got);
    }
    check_grid(m, a, x, xv, y, name);
    cl_event done = NULL;
    CHECK_OK(cmrscl_recording_enqueue(r, 0, NULL, &done));
    CHECK_MSG(done != NULL && clWaitForEvents(1, &done) == CL_SUCCESS, "%s: no event", name);
    if (done)
        clReleaseEvent(done);
    cmrscl_recording_free(r);
    clReleaseMemObject(x), clReleaseMemObject(y), clReleaseMemObject(x2), clReleaseMemObject(y2);
    free(xv), free(y0), free(other);
    cmrscl_matrix_free(m);
}

/* A dictionary matrix updated with values no dictionary holds: new kernels, recorded again. */
static void check_update(cmrscl_context ctx, int want_buffer)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil7:12", &a));
    cmrscl_matrix m;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, NULL, &m));
    if (test_failures)
        return;
    size_t rows = (size_t)a.rows;
    float *xv = random_vector(rows), *y0 = random_vector(rows);
    cl_mem x = buffer_of(xv, rows), y = buffer_of(y0, rows);
    cmrscl_recording r;
    CHECK_OK(cmrscl_spmv_record(m, 0.75, x, 1.0, y, &r));
    CHECK(cmrscl_recording_is_command_buffer(r, NULL) == want_buffer);
    float *before = run(m, r, x, y, y0, rows, 2);
    double *v = malloc(sizeof(double) * (size_t)a.nnz);
    for (int64_t e = 0; e < a.nnz; ++e)
        v[e] = test_uniform(-1, 1);
    CHECK_OK(cmrscl_matrix_update_values(m, v, CMRSCL_DOUBLE));
    float *want = run(m, NULL, x, y, y0, rows, 2), *got = run(m, r, x, y, y0, rows, 2);
    CHECK_MSG(!memcmp(want, got, sizeof(float) * rows), "replays after an update differ");
    CHECK_MSG(memcmp(before, got, sizeof(float) * rows), "replays kept the old values");
    cmrscl_recording_free(r);
    clReleaseMemObject(x), clReleaseMemObject(y);
    free(xv), free(y0), free(v), free(want), free(got), free(before);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

static void check_misuse(cmrscl_context ctx)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("random:100:4", &a));
    cmrscl_matrix m;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, NULL, &m));
    if (test_failures)
        return;
    float *v = random_vector(100);
    cl_mem x = buffer_of(v, 100), small = buffer_of(v, 99);
    cmrscl_recording r = (cmrscl_recording)&r;
    CHECK_STATUS(cmrscl_spmv_record(m, 1, x, 0, NULL, &r), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(r == NULL);
    CHECK_STATUS(cmrscl_spmv_record(m, 1, x, 0, small, &r), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmv_record(m, 1, x, 0, x, &r), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmv_record(NULL, 1, x, 0, small, &r), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_spmv_record(m, 1, x, 0, small, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(cmrscl_recording_enqueue(NULL, 0, NULL, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    cl_mem y = buffer_of(v, 100);
    CHECK_OK(cmrscl_spmv_record(m, 1, x, 0, y, &r));
    CHECK_STATUS(cmrscl_recording_enqueue(r, 1, NULL, NULL), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK(cmrscl_recording_is_command_buffer(NULL, NULL) == 0);
    cmrscl_recording_free(r);
    cmrscl_recording_free(NULL);
    clReleaseMemObject(x), clReleaseMemObject(small), clReleaseMemObject(y);
    free(v);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "command_buffer") && strcmp(argv[1], "enqueue"))) {
        fprintf(stderr, "usage: %s command_buffer|enqueue\n", argv[0]);
        return 2;
    }
    int want_buffer = !strcmp(argv[1], "command_buffer");
    setenv("CMRSCL_COMMAND_BUFFER", want_buffer ? "on" : "off", 1);
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("recording");
    CHECK_OK(cmrscl_context_cl(ctx, &cl, &queue));
    if (want_buffer) { /* can this device's recordings be command buffers at all? */
        cmrscl_csr a;
        cmrscl_matrix m;
        cmrscl_recording r = NULL;
        float *v = random_vector(16);
        cl_mem x = buffer_of(v, 16), y = buffer_of(v, 16);
        free(v);
        CHECK_OK(cmrscl_csr_generate("stencil5:4", &a));
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, NULL, &m));
        CHECK_OK(cmrscl_spmv_record(m, 1, x, 0, y, &r));
        const char *why = "";
        int usable = cmrscl_recording_is_command_buffer(r, &why);
        cmrscl_recording_free(r), cmrscl_matrix_free(m), cmrscl_csr_free(&a);
        clReleaseMemObject(x), clReleaseMemObject(y);
        if (!usable && !test_failures) {
            printf("skipped: %s\n", why);
            cmrscl_context_free(ctx);
            return SKIP;
        }
        printf("recordings: %s\n", why);
    }
    for (int i = 0; i < test_matrix_count(); ++i) {
        cmrscl_csr a;
        const char *name = test_matrix_build(i, &a);
        check_matrix(ctx, &a, NULL, want_buffer, name);
        cmrscl_csr_free(&a);
    }
    cmrscl_csr s;
    CHECK_OK(cmrscl_csr_generate("skewed:3000:4:3:2500", &s));
    static const char *const splits[] = {"split, combine kernel", "split, in group",
                                         "split, the last tile's combine"};
    cmrscl_device_info info;
    CHECK_OK(cmrscl_context_device_info(ctx, &info));
    for (cmrscl_combine c = CMRSCL_COMBINE_KERNEL; c <= CMRSCL_COMBINE_LAST; ++c) {
        cmrscl_options o = {.tile = 256, .combine = c};
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        if (cmrscl_plan(&info, prec, &s, &o, &p) == CMRSCL_ERROR_UNSUPPORTED) {
            printf("%s: not on this device (%s)\n", splits[c - 1], cmrscl_last_error());
            continue;
        }
        check_matrix(ctx, &s, &o, want_buffer, splits[c - 1]);
    }
    cmrscl_csr_free(&s);
    CHECK_OK(cmrscl_csr_generate("stencil27:10", &s));
    check_matrix(ctx, &s, &(cmrscl_options){.kernel = CMRSCL_KERNEL_SLICE}, want_buffer, "slice");
    cmrscl_csr_free(&s);
    check_update(ctx, want_buffer);
    check_misuse(ctx);
    cmrscl_context_free(ctx);
    return test_finish("recording");
}
