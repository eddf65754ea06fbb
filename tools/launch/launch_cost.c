/* launch_cost.c - where a product's host time goes (issue 21 item 3: loops without overhead).
 * For one matrix it measures, per product, from a loop of N calls:
 *   device       the product's device time (profiling events, median) and the back-to-back
 *                loop's time (cmrscl_spmv_time's loop_ms)
 *   cmrscl_spmv  host time of one call, enqueue only (the loop's time before its clFinish)
 *   recording    the same for a replay of the product recorded once (cmrscl_spmv_record:
 *                a command buffer where the device offers cl_khr_command_buffer 1.0), and
 *                the replays' back-to-back loop with its clFinish
 * and the floor OpenCL itself sets on this device, with a kernel that does nothing:
 *   launch       clEnqueueNDRangeKernel alone (arguments set once)
 *   launch+args  the same with four clSetKernelArg per launch (x, y, alpha, beta)
 *   queries      four clGetMemObjectInfo (size and context of x and y: what the library
 *                checks per call)
 * so cmrscl_spmv's cost above "launch+args" is the library's own; and, since a queue that
 * records profiling timestamps may cost a launch more, the back-to-back loops (clFinish
 * included) of cmrscl_spmv and of the empty kernel on the context's queue (profiling on)
 * and on a queue of the same device without profiling.
 *
 *   cmrscl-launch-cost [FILE.mtx | SPEC] [-p float|double] [-d SELECTOR] [-n N]
 *
 * Default: stencil7:20 (8000 rows, a product of a few microseconds), double, N = 5000. */
#include <cmrscl.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const char *nop_source =
    "__kernel void nop(__global float *x, __global float *y, float a, float b) {}\n";

/* The empty kernel with its arguments set (*program: its program, for the caller to
 * release), or NULL. */
static cl_kernel nop_kernel(cl_context cl, cl_mem x, cl_mem y, cl_program *program)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(cl, 1, &nop_source, NULL, &err);
    if (err != CL_SUCCESS || clBuildProgram(p, 0, NULL, NULL, NULL, NULL) != CL_SUCCESS)
        return NULL;
    cl_kernel k = clCreateKernel(p, "nop", &err);
    if (err != CL_SUCCESS)
        return NULL;
    float a = 1.0f, b = 0.0f;
    clSetKernelArg(k, 0, sizeof x, &x), clSetKernelArg(k, 1, sizeof y, &y);
    clSetKernelArg(k, 2, sizeof a, &a), clSetKernelArg(k, 3, sizeof b, &b);
    *program = p;
    return k;
}

/* Microseconds per call of each way to launch the empty kernel (best of three loops). */
static int floor_costs(cl_context cl, cl_command_queue q, cl_mem x, cl_mem y, int n, double us[3])
{
    cl_program p = NULL;
    cl_kernel k = nop_kernel(cl, x, y, &p);
    if (!k)
        return -1;
    float a = 1.0f, b = 0.0f;
    size_t global = 128, local = 128;
    for (int way = 0; way < 3; ++way) {
        us[way] = 1e30;
        for (int round = 0; round < 3; ++round) {
            clFinish(q);
            double t0 = now();
            for (int i = 0; i < n; ++i) {
                if (way == 1)
                    clSetKernelArg(k, 0, sizeof x, &x), clSetKernelArg(k, 1, sizeof y, &y),
                        clSetKernelArg(k, 2, sizeof a, &a), clSetKernelArg(k, 3, sizeof b, &b);
                if (way == 2) {
                    size_t size;
                    cl_context owner;
                    clGetMemObjectInfo(x, CL_MEM_SIZE, sizeof size, &size, NULL);
                    clGetMemObjectInfo(x, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
                    clGetMemObjectInfo(y, CL_MEM_SIZE, sizeof size, &size, NULL);
                    clGetMemObjectInfo(y, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
                } else {
                    clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
                }
            }
            double t = (now() - t0) / n * 1e6;
            us[way] = t < us[way] ? t : us[way];
        }
    }
    clFinish(q);
    clReleaseKernel(k);
    clReleaseProgram(p);
    return 0;
}

/* Microseconds per product of a back-to-back loop of N products on queue q, clFinish
 * included (best of three); k, when given, is an empty kernel launched instead. */
static double loop_us(cmrscl_matrix m, cl_kernel k, cl_mem x, cl_mem y, cl_command_queue q, int n)
{
    double best = 1e30;
    size_t global = 128, local = 128;
    for (int round = 0; round < 3; ++round) {
        clFinish(q);
        double t0 = now();
        for (int i = 0; i < n; ++i)
            if (k ? clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL) !=
                        CL_SUCCESS
                  : cmrscl_spmv(m, 1.0, x, 0.0, y, q, 0, NULL, NULL) != CMRSCL_OK)
                return -1;
        clFinish(q);
        double t = (now() - t0) / n * 1e6;
        best = t < best ? t : best;
    }
    return best;
}

/* The loops of cmrscl_spmv and of the empty kernel on queue q: us[0], us[1]. */
static int queue_loops(cl_context cl, cmrscl_matrix m, cl_mem x, cl_mem y, cl_command_queue q,
                       int n, double us[2])
{
    cl_program p = NULL;
    cl_kernel k = nop_kernel(cl, x, y, &p);
    if (!k)
        return -1;
    us[0] = loop_us(m, NULL, x, y, q, n);
    us[1] = loop_us(m, k, x, y, q, n);
    clReleaseKernel(k);
    clReleaseProgram(p);
    return us[0] < 0 || us[1] < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    const char *spec = "stencil7:20", *device = NULL;
    cmrscl_precision precision = CMRSCL_DOUBLE;
    int n = 5000;
    for (int i = 1; i < argc; ++i) {
        if (argv[i][0] != '-')
            spec = argv[i];
        else if (i + 1 < argc && !strcmp(argv[i], "-p"))
            precision = !strcmp(argv[++i], "float") ? CMRSCL_FLOAT : CMRSCL_DOUBLE;
        else if (i + 1 < argc && !strcmp(argv[i], "-d"))
            device = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "-n") && (n = atoi(argv[++i])) > 0)
            continue;
        else {
            fputs("usage: cmrscl-launch-cost [FILE.mtx | SPEC] [-p float|double] [-d SELECTOR] "
                  "[-n N]\n",
                  stderr);
            return 2;
        }
    }
    cmrscl_csr a = {0};
    cmrscl_context ctx = NULL;
    cmrscl_matrix m = NULL;
    cl_context cl = NULL;
    cl_command_queue q = NULL;
    size_t len = strlen(spec);
    cmrscl_status st = len > 4 && strstr(spec, ".mtx") ? cmrscl_mtx_read(spec, NULL, &a)
                                                       : cmrscl_csr_generate(spec, &a);
    if (st == CMRSCL_OK)
        st = cmrscl_context_create(device, &ctx);
    if (st == CMRSCL_OK)
        st = cmrscl_matrix_create_from_csr(ctx, precision, &a, NULL, &m);
    if (st == CMRSCL_OK)
        st = cmrscl_context_cl(ctx, &cl, &q);
    if (st != CMRSCL_OK) {
        fprintf(stderr, "cmrscl-launch-cost: %s: %s\n", cmrscl_status_name(st),
                cmrscl_last_error());
        cmrscl_matrix_free(m), cmrscl_context_free(ctx), cmrscl_csr_free(&a);
        return 1;
    }
    size_t elem = precision == CMRSCL_DOUBLE ? 8 : 4;
    cl_int err;
    cl_mem x = clCreateBuffer(cl, CL_MEM_READ_WRITE, elem * ((size_t)a.cols + 1), NULL, &err);
    cl_mem y = clCreateBuffer(cl, CL_MEM_READ_WRITE, elem * ((size_t)a.rows + 1), NULL, &err);
    clEnqueueFillBuffer(q, x, &(double){0}, elem, 0, elem * (size_t)a.cols, 0, NULL, NULL);
    cmrscl_timing t;
    st = cmrscl_spmv_time(m, 1.0, x, 0.0, y, 20, n, &t);
    double spmv_us = 1e30, floor_us[3] = {0};
    for (int round = 0; st == CMRSCL_OK && round < 3; ++round) {
        clFinish(q);
        double t0 = now();
        for (int i = 0; st == CMRSCL_OK && i < n; ++i)
            st = cmrscl_spmv(m, 1.0, x, 0.0, y, NULL, 0, NULL, NULL);
        double us = (now() - t0) / n * 1e6;
        spmv_us = us < spmv_us ? us : spmv_us;
    }
    clFinish(q);
    cmrscl_recording rec = NULL;
    const char *rec_how = "";
    double replay_us = 1e30, replay_loop_us = 1e30;
    if (st == CMRSCL_OK)
        st = cmrscl_spmv_record(m, 1.0, x, 0.0, y, &rec);
    cmrscl_recording_is_command_buffer(rec, &rec_how);
    for (int round = 0; st == CMRSCL_OK && round < 3; ++round) {
        clFinish(q);
        double t0 = now();
        for (int i = 0; st == CMRSCL_OK && i < n; ++i)
            st = cmrscl_recording_enqueue(rec, 0, NULL, NULL);
        double t1 = now();
        clFinish(q);
        double us = (t1 - t0) / n * 1e6, loop = (now() - t0) / n * 1e6;
        replay_us = us < replay_us ? us : replay_us;
        replay_loop_us = loop < replay_loop_us ? loop : replay_loop_us;
    }
    cmrscl_recording_free(rec);
    int floor_ok = st == CMRSCL_OK ? floor_costs(cl, q, x, y, n, floor_us) : -1;
    /* the same loops on the context's queue and on one without profiling */
    double profiled_us[2] = {0}, plain_us[2] = {0};
    cl_device_id dev = NULL;
    clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
    cl_command_queue plain = clCreateCommandQueue(cl, dev, 0, &err);
    bool queues_ok = st == CMRSCL_OK && plain && queue_loops(cl, m, x, y, q, n, profiled_us) == 0 &&
                     queue_loops(cl, m, x, y, plain, n, plain_us) == 0;
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    cmrscl_matrix_params(m, &p);
    cmrscl_device_info info;
    cmrscl_context_device_info(ctx, &info);
    if (st == CMRSCL_OK) {
        printf("launch-cost: %s, %s, %d rows, %lld nonzeros on %s (%s)\n", spec,
               precision == CMRSCL_DOUBLE ? "double" : "float", a.rows, (long long)a.nnz,
               info.device_name, info.driver_version);
        printf("launch-cost: plan %s\n", p.plan_reason);
        printf("launch-cost: device %.2f us (median), back-to-back loop %.2f us a product\n",
               t.median_ms * 1e3, t.loop_ms * 1e3);
        printf("launch-cost: cmrscl_spmv enqueue %.2f us a call\n", spmv_us);
        printf("launch-cost: recording (%s): enqueue %.2f us a replay, loop %.2f us a replay\n",
               rec_how, replay_us, replay_loop_us);
        if (floor_ok == 0)
            printf("launch-cost: empty kernel: launch %.2f us, launch + 4 args %.2f us; 4 buffer "
                   "queries %.3f us\n",
                   floor_us[0], floor_us[1], floor_us[2]);
        if (queues_ok)
            printf("launch-cost: loops with clFinish, us a product: cmrscl_spmv %.2f (profiling "
                   "queue) %.2f (plain queue); empty kernel %.2f (profiling) %.2f (plain)\n",
                   profiled_us[0], plain_us[0], profiled_us[1], plain_us[1]);
    } else {
        fprintf(stderr, "cmrscl-launch-cost: %s: %s\n", cmrscl_status_name(st),
                cmrscl_last_error());
    }
    if (plain)
        clReleaseCommandQueue(plain);
    clReleaseMemObject(x), clReleaseMemObject(y);
    cmrscl_matrix_free(m), cmrscl_context_free(ctx), cmrscl_csr_free(&a);
    return st == CMRSCL_OK ? 0 : 1;
}
