/* cg_poisson.c - conjugate gradients on the 3-D Poisson problem, distributed with
 * libcmrscl_mpi: the 7-point Laplacian on an N^3 grid (Dirichlet boundaries, N^3 unknowns),
 * right-hand side b = 1. Each rank generates only its own rows (cmrscl_dist_create_generated),
 * runs its products on its own device with the halo exchange overlapping the local product
 * (cmrscl_dist_spmv), keeps every vector on the device (the small OpenCL program below does
 * the vector updates and the partial dot products), and the dot products are finished with
 * MPI_Allreduce. At the end the residual ||b - A x|| / ||b|| is computed again from a fresh
 * product, independently of the recurrence.
 *
 *   mpirun -np 2 cg_poisson [N] [-p float|double] [-d SELECTOR] [-t TOL] [-m MAX_ITER]
 *
 * Exit status: 0 when the final residual is within 10 x TOL, 1 otherwise or on an error. */
#include <cmrscl_mpi.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *vector_source =
    "#ifdef USE_FP64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n"
    /* y = a x + b y */
    "__kernel void axpby(REAL a, __global const REAL *x, REAL b, __global REAL *y, int n)\n"
    "{ int i = (int)get_global_id(0); if (i < n) y[i] = a * x[i] + b * y[i]; }\n"
    /* One partial sum of x . y per work-group (grid-stride loop, tree in local memory). */
    "__kernel void dot_partial(__global const REAL *x, __global const REAL *y,\n"
    "                          __global REAL *partial, int n, __local REAL *sum)\n"
    "{\n"
    "    REAL s = 0;\n"
    "    for (int i = (int)get_global_id(0); i < n; i += (int)get_global_size(0))\n"
    "        s += x[i] * y[i];\n"
    "    int l = (int)get_local_id(0);\n"
    "    sum[l] = s;\n"
    "    for (int step = (int)get_local_size(0) / 2; step > 0; step /= 2) {\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        if (l < step) sum[l] += sum[l + step];\n"
    "    }\n"
    "    if (l == 0) partial[get_group_id(0)] = sum[0];\n"
    "}\n";

enum { GROUP = 64, GROUPS = 64 };

/* The device side of the solver's vectors. */
typedef struct vectors {
    cl_context cl;
    cl_command_queue q;
    cl_program program;
    cl_kernel axpby, dot;
    cl_mem partial;
    size_t value; /* bytes per value */
    int n;        /* this rank's entries */
} vectors;

static void die(const char *what, cmrscl_status st)
{
    fprintf(stderr, "cg_poisson: %s: %s: %s\n", what, cmrscl_status_name(st), cmrscl_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_cl(cl_int err, const char *what)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, "cg_poisson: %s failed: OpenCL error %d\n", what, (int)err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void vectors_init(vectors *v, cmrscl_context ctx, cmrscl_precision p, int n)
{
    memset(v, 0, sizeof *v);
    cmrscl_context_cl(ctx, &v->cl, &v->q);
    v->value = p == CMRSCL_DOUBLE ? sizeof(double) : sizeof(float);
    v->n = n;
    cl_int err;
    v->program = clCreateProgramWithSource(v->cl, 1, &vector_source, NULL, &err);
    check_cl(err, "clCreateProgramWithSource");
    err = clBuildProgram(v->program, 0, NULL,
                         p == CMRSCL_DOUBLE ? "-D REAL=double -D USE_FP64" : "-D REAL=float", NULL,
                         NULL);
    if (err != CL_SUCCESS) {
        char log[4096] = "";
        cl_device_id device;
        clGetCommandQueueInfo(v->q, CL_QUEUE_DEVICE, sizeof device, &device, NULL);
        clGetProgramBuildInfo(v->program, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "cg_poisson: the vector kernels: %s\n", log);
    }
    check_cl(err, "clBuildProgram (the vector kernels)");
    v->axpby = clCreateKernel(v->program, "axpby", &err);
    check_cl(err, "clCreateKernel (axpby)");
    v->dot = clCreateKernel(v->program, "dot_partial", &err);
    check_cl(err, "clCreateKernel (dot_partial)");
    v->partial = clCreateBuffer(v->cl, CL_MEM_READ_WRITE, v->value * GROUPS, NULL, &err);
    check_cl(err, "clCreateBuffer (partial sums)");
}

static void vectors_free(vectors *v)
{
    clReleaseMemObject(v->partial);
    clReleaseKernel(v->axpby);
    clReleaseKernel(v->dot);
    clReleaseProgram(v->program);
}

/* A device vector of this rank's n entries, all `fill` (at least one element). */
static cl_mem vector_new(const vectors *v, double fill)
{
    size_t count = v->n > 0 ? (size_t)v->n : 1;
    char *host = malloc(v->value * count);
    for (size_t i = 0; host && i < count; ++i) {
        if (v->value == sizeof(double))
            ((double *)host)[i] = fill;
        else
            ((float *)host)[i] = (float)fill;
    }
    cl_int err = host ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
    cl_mem buf = host ? clCreateBuffer(v->cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                       v->value * count, host, &err)
                      : NULL;
    free(host);
    check_cl(err, "a vector");
    return buf;
}

static void set_scalar(const vectors *v, cl_kernel k, cl_uint at, double s)
{
    float f = (float)s;
    check_cl(clSetKernelArg(k, at, v->value, v->value == sizeof(double) ? (void *)&s : (void *)&f),
             "clSetKernelArg");
}

/* y = a x + b y */
static void axpby(const vectors *v, double a, cl_mem x, double b, cl_mem y)
{
    if (v->n == 0)
        return;
    set_scalar(v, v->axpby, 0, a);
    set_scalar(v, v->axpby, 2, b);
    cl_int err = clSetKernelArg(v->axpby, 1, sizeof x, &x);
    err |= clSetKernelArg(v->axpby, 3, sizeof y, &y);
    err |= clSetKernelArg(v->axpby, 4, sizeof v->n, &v->n);
    size_t local = GROUP, global = ((size_t)v->n + GROUP - 1) / GROUP * GROUP;
    check_cl(err | clEnqueueNDRangeKernel(v->q, v->axpby, 1, NULL, &global, &local, 0, NULL, NULL),
             "axpby");
}

/* x . y over all ranks: partial sums per work-group on the device, their sum in double on
 * the host, then MPI_Allreduce. */
static double dot(const vectors *v, cl_mem x, cl_mem y)
{
    double mine = 0.0, all = 0.0;
    if (v->n > 0) {
        size_t local = GROUP, groups = ((size_t)v->n + GROUP - 1) / GROUP;
        groups = groups < GROUPS ? groups : GROUPS;
        size_t global = groups * GROUP;
        cl_int err = clSetKernelArg(v->dot, 0, sizeof x, &x);
        err |= clSetKernelArg(v->dot, 1, sizeof y, &y);
        err |= clSetKernelArg(v->dot, 2, sizeof v->partial, &v->partial);
        err |= clSetKernelArg(v->dot, 3, sizeof v->n, &v->n);
        err |= clSetKernelArg(v->dot, 4, v->value * GROUP, NULL);
        err |= clEnqueueNDRangeKernel(v->q, v->dot, 1, NULL, &global, &local, 0, NULL, NULL);
        double part[GROUPS * 2];
        err |= clEnqueueReadBuffer(v->q, v->partial, CL_TRUE, 0, v->value * groups, part, 0, NULL,
                                   NULL);
        check_cl(err, "dot");
        for (size_t g = 0; g < groups; ++g)
            mine += v->value == sizeof(double) ? part[g] : (double)((float *)part)[g];
    }
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

typedef struct settings {
    int n, max_iter;
    double tol;
    cmrscl_precision precision;
    const char *device;
} settings;

static int parse(int argc, char **argv, settings *s)
{
    *s = (settings){32, 2000, 0.0, CMRSCL_DOUBLE, NULL};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-p") == 0 && next)
            s->precision = strcmp(argv[++i], "float") == 0 ? CMRSCL_FLOAT : CMRSCL_DOUBLE;
        else if (strcmp(a, "-d") == 0 && next)
            s->device = argv[++i];
        else if (strcmp(a, "-t") == 0 && next)
            s->tol = atof(argv[++i]);
        else if (strcmp(a, "-m") == 0 && next)
            s->max_iter = atoi(argv[++i]);
        else if (a[0] >= '1' && a[0] <= '9')
            s->n = atoi(a);
        else
            return 0;
    }
    if (s->tol <= 0.0)
        s->tol = s->precision == CMRSCL_DOUBLE ? 1e-8 : 1e-5;
    return s->n > 0 && s->max_iter > 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    settings s;
    if (!parse(argc, argv, &s)) {
        if (rank == 0)
            fputs("usage: cg_poisson [N] [-p float|double] [-d SELECTOR] [-t TOL] [-m MAX_ITER]\n",
                  stderr);
        MPI_Finalize();
        return 2;
    }
    cmrscl_context ctx = NULL;
    cmrscl_dist_matrix a = NULL;
    cmrscl_status st = cmrscl_dist_context_create(MPI_COMM_WORLD, s.device, &ctx);
    if (st != CMRSCL_OK)
        die("selecting the devices", st);
    char spec[32];
    snprintf(spec, sizeof spec, "stencil7:%d", s.n);
    double t0 = now();
    if ((st = cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, s.precision, spec, NULL, &a)))
        die("creating the matrix", st);
    cmrscl_dist_plan plan;
    cmrscl_dist_matrix_plan(a, &plan);
    double setup = now() - t0;

    vectors v;
    vectors_init(&v, ctx, s.precision, plan.local_rows);
    cl_mem b = vector_new(&v, 1.0), x = vector_new(&v, 0.0), r = vector_new(&v, 1.0);
    cl_mem p = vector_new(&v, 1.0), ap = vector_new(&v, 0.0);
    double bnorm = sqrt(dot(&v, b, b)), rr = dot(&v, r, r), rel = 1.0;
    int it = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    while (it < s.max_iter && rel > s.tol) {
        if ((st = cmrscl_dist_spmv(a, 1.0, p, 0.0, ap)) != CMRSCL_OK)
            die("A p", st);
        double alpha = rr / dot(&v, p, ap);
        axpby(&v, alpha, p, 1.0, x);   /* x += alpha p */
        axpby(&v, -alpha, ap, 1.0, r); /* r -= alpha A p */
        double rr_next = dot(&v, r, r);
        axpby(&v, 1.0, r, rr_next / rr, p); /* p = r + beta p */
        rr = rr_next;
        rel = sqrt(rr) / bnorm;
        ++it;
    }
    double solve = now() - t0;
    /* The residual again, from a fresh product: b - A x. */
    if ((st = cmrscl_dist_spmv(a, -1.0, x, 0.0, ap)) != CMRSCL_OK)
        die("A x", st);
    axpby(&v, 1.0, b, 1.0, ap);
    double residual = sqrt(dot(&v, ap, ap)) / bnorm;
    bool converged = residual <= 10.0 * s.tol;
    if (rank == 0) {
        printf("cg_poisson: 7-point Poisson on a %d^3 grid: %lld unknowns, %lld nonzeros, "
               "%d ranks, %s\n",
               s.n, (long long)plan.rows, (long long)plan.nnz, ranks,
               s.precision == CMRSCL_DOUBLE ? "double" : "float");
        printf("set-up %.3f s; %d iterations in %.3f s (%.3f ms each)\n", setup, it, solve,
               it ? 1e3 * solve / it : 0.0);
        printf("relative residual ||b - A x|| / ||b|| = %.3e (recurrence %.3e, tolerance %.1e): "
               "%s\n",
               residual, rel, s.tol, converged ? "converged" : "NOT converged");
    }
    cl_mem all[] = {b, x, r, p, ap};
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i)
        clReleaseMemObject(all[i]);
    vectors_free(&v);
    cmrscl_dist_free(a);
    cmrscl_context_free(ctx);
    MPI_Finalize();
    return converged ? 0 : 1;
}
