/* test_concurrency.c - determinism (bit-identical y run after run, and across two matrices
 * built with the same parameters, also with their arrays through the context's upload ring)
 * and thread safety: threads with their own contexts, threads sharing one context and one
 * matrix, each with its own queue and buffers, and threads making matrices through one ring. */
#include "runtime/runtime.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define PRODUCTS 8

static cmrscl_csr matrix; /* shared read-only by all threads */
static double *x_ref;     /* x as doubles, rounded to float */
static float *x_host;

static bool product_ok(const float *y, double alpha)
{
    double *yd = malloc(sizeof(double) * (size_t)matrix.rows), ratio = INFINITY;
    for (int32_t i = 0; i < matrix.rows; ++i)
        yd[i] = y[i];
    cmrscl_csr ref = test_csr_rounded(&matrix, CMRSCL_FLOAT);
    bool ok = cmrscl_csr_spmv_check(&ref, alpha, x_ref, 0.0, NULL, yd, 0x1p-24, NULL, &ratio) ==
                  CMRSCL_OK &&
              ratio <= 1.0;
    cmrscl_csr_free(&ref);
    free(yd);
    return ok;
}

static void test_determinism(cmrscl_context ctx)
{
    cmrscl_matrix m1, m2;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &matrix, NULL, &m1));
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &matrix, NULL, &m2));
    size_t bytes = sizeof(float) * (size_t)matrix.rows;
    float *first = malloc(bytes), *again = malloc(bytes);
    for (int32_t i = 0; i < matrix.rows; ++i)
        first[i] = again[i] = (float)test_uniform(-1, 1);
    CHECK_OK(cmrscl_spmv_host(m1, 1.5, x_host, -0.5, first));
    for (int run = 0; run < 5; ++run) {
        float *y = malloc(bytes);
        memcpy(y, again, bytes);
        CHECK_OK(cmrscl_spmv_host(run % 2 ? m2 : m1, 1.5, x_host, -0.5, y));
        CHECK_MSG(!memcmp(y, first, bytes), "run %d differs from the first run", run);
        free(y);
    }
    free(first), free(again);
    cmrscl_matrix_free(m1);
    cmrscl_matrix_free(m2);
}

/* A matrix whose arrays came through the upload ring (runtime/upload.c) in slots of `slot`
 * bytes - CMRSCL_UPLOAD_RING asks for it on any device - gives the same bits as one whose
 * arrays were written directly: chunks of a few KB and odd tails, and the ring made anew for
 * another slot size. */
static void test_upload_ring(cmrscl_context ctx)
{
    size_t bytes = sizeof(float) * (size_t)matrix.rows;
    float *want = malloc(bytes), *y = malloc(bytes);
    cmrscl_matrix plain = NULL;
    setenv("CMRSCL_UPLOAD_RING", "0", 1);
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &matrix, NULL, &plain));
    CHECK_OK(cmrscl_spmv_host(plain, 1.5, x_host, 0.0, want));
    static const char *const slots[] = {"4096", "1000", "4096"};
    for (int k = 0; k < 3; ++k) {
        cmrscl_matrix m = NULL;
        setenv("CMRSCL_UPLOAD_RING", slots[k], 1);
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &matrix, NULL, &m));
        CHECK_MSG(ctx->ring.slot == strtoul(slots[k], NULL, 10) && ctx->ring.slots,
                  "slots of %s bytes asked: the ring holds slots of %zu", slots[k], ctx->ring.slot);
        memset(y, 0, bytes);
        CHECK_OK(cmrscl_spmv_host(m, 1.5, x_host, 0.0, y));
        CHECK_MSG(!memcmp(y, want, bytes), "arrays through slots of %s bytes: another y", slots[k]);
        cmrscl_matrix_free(m);
    }
    unsetenv("CMRSCL_UPLOAD_RING");
    cmrscl_matrix_free(plain);
    free(want), free(y);
}

/* Bytes read back through the ring (cmrs_download) in slots of a few hundred bytes, from an
 * offset, with an odd tail: the buffer's bytes, as a plain read gives them. */
static void test_download_ring(cmrscl_context ctx)
{
    size_t bytes = 10007, offset = 13;
    unsigned char *want = malloc(bytes), *got = malloc(bytes);
    for (size_t i = 0; i < bytes; ++i)
        want[i] = (unsigned char)(i * 131 + 7);
    cl_int err;
    cl_mem buf =
        clCreateBuffer(ctx->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, want, &err);
    CHECK_MSG(buf != NULL, "clCreateBuffer: %d", (int)err);
    static const char *const slots[] = {"0", "300", "4096"};
    for (int k = 0; buf && k < 3; ++k) {
        setenv("CMRSCL_UPLOAD_RING", slots[k], 1);
        memset(got, 0, bytes);
        err = cmrs_download(ctx, buf, offset, bytes - offset, got);
        CHECK_MSG(err == CL_SUCCESS && !memcmp(got, want + offset, bytes - offset),
                  "a read back through slots of %s bytes: error %d or other bytes", slots[k],
                  (int)err);
    }
    unsetenv("CMRSCL_UPLOAD_RING");
    if (buf)
        clReleaseMemObject(buf);
    free(want), free(got);
}

/* Each thread: a matrix of the shared context (through its upload ring, the test's caller
 * asks for it), its products checked. */
static void *ring_matrix(void *arg)
{
    cmrscl_context ctx = arg;
    bool *ok = malloc(sizeof *ok);
    cmrscl_matrix m = NULL;
    float *y = malloc(sizeof(float) * (size_t)matrix.rows);
    *ok = cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &matrix, NULL, &m) == CMRSCL_OK &&
          cmrscl_spmv_host(m, 2.0, x_host, 0.0, y) == CMRSCL_OK && product_ok(y, 2.0);
    free(y);
    cmrscl_matrix_free(m);
    return ok;
}

/* Each thread: its own context and matrix. */
static void *own_context(void *arg)
{
    (void)arg;
    bool *ok = malloc(sizeof *ok);
    *ok = true;
    cmrscl_context ctx = NULL;
    cmrscl_matrix m = NULL;
    float *y = malloc(sizeof(float) * (size_t)matrix.rows);
    *ok = cmrscl_context_create(NULL, &ctx) == CMRSCL_OK &&
          cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &matrix, NULL, &m) == CMRSCL_OK;
    for (int k = 0; *ok && k < PRODUCTS; ++k)
        *ok = cmrscl_spmv_host(m, 1.0 + k, x_host, 0.0, y) == CMRSCL_OK && product_ok(y, 1.0 + k);
    free(y);
    cmrscl_matrix_free(m);
    cmrscl_context_free(ctx);
    return ok;
}

typedef struct shared_job {
    cmrscl_context ctx;
    cmrscl_matrix m;
    int id;
} shared_job;

/* Each thread: the shared matrix, its own queue and buffers, device-buffer calls. */
static void *shared_matrix(void *arg)
{
    const shared_job *job = arg;
    bool *ok = malloc(sizeof *ok);
    cl_context cl;
    cl_device_id dev = test_cl_device(job->ctx, &cl);
    cl_int err;
    cl_command_queue own = clCreateCommandQueue(cl, dev, 0, &err);
    size_t xb = sizeof(float) * (size_t)matrix.cols, yb = sizeof(float) * (size_t)matrix.rows;
    cl_mem x = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, xb, x_host, &err);
    cl_mem y = clCreateBuffer(cl, CL_MEM_READ_WRITE, yb, NULL, &err);
    float *yh = malloc(yb);
    *ok = own && x && y;
    for (int k = 0; *ok && k < PRODUCTS; ++k) {
        double alpha = job->id + 0.25 * k;
        *ok = cmrscl_spmv(job->m, alpha, x, 0.0, y, own, 0, NULL, NULL) == CMRSCL_OK &&
              clEnqueueReadBuffer(own, y, CL_TRUE, 0, yb, yh, 0, NULL, NULL) == CL_SUCCESS &&
              product_ok(yh, alpha);
    }
    free(yh);
    clReleaseMemObject(x), clReleaseMemObject(y), clReleaseCommandQueue(own);
    return ok;
}

static void join_all(pthread_t *t, const char *what)
{
    for (int i = 0; i < THREADS; ++i) {
        void *res = NULL;
        pthread_join(t[i], &res);
        CHECK_MSG(res && *(bool *)res, "%s: thread %d got a wrong or failed product", what, i);
        free(res);
    }
}

int main(void)
{
    test_matrix_build(9, &matrix);
    x_host = malloc(sizeof(float) * (size_t)matrix.cols);
    x_ref = malloc(sizeof(double) * (size_t)matrix.cols);
    for (int32_t j = 0; j < matrix.cols; ++j)
        x_ref[j] = x_host[j] = (float)test_uniform(-1, 1);
    cmrscl_context ctx = NULL;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (ctx) {
        test_determinism(ctx);
        test_upload_ring(ctx);
        test_download_ring(ctx);
        pthread_t t[THREADS];
        setenv("CMRSCL_UPLOAD_RING", "4096", 1);
        for (int i = 0; i < THREADS; ++i)
            pthread_create(&t[i], NULL, ring_matrix, ctx);
        join_all(t, "matrices through one upload ring");
        unsetenv("CMRSCL_UPLOAD_RING");
        for (int i = 0; i < THREADS; ++i)
            pthread_create(&t[i], NULL, own_context, NULL);
        join_all(t, "own contexts");
        shared_job jobs[THREADS];
        cmrscl_matrix m = NULL;
        CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &matrix, NULL, &m));
        for (int i = 0; m && i < THREADS; ++i) {
            jobs[i] = (shared_job){ctx, m, i + 1};
            pthread_create(&t[i], NULL, shared_matrix, &jobs[i]);
        }
        if (m)
            join_all(t, "shared matrix");
        cmrscl_matrix_free(m);
    }
    cmrscl_context_free(ctx);
    cmrscl_csr_free(&matrix);
    free(x_host), free(x_ref);
    return test_finish("concurrency");
}
