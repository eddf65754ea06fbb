/* amg_rho_device.c - level 0's estimate of rho(D^-1 A) on the device, where the level-0
 * matrix is there already (cmrscl_amg_options.matrix: the solver's own): amg_rho.c's Lanczos
 * steps (cmrs_amg_lanczos), its passes as the matrix's product and two kernels of cl/amg.cl.
 * On the host each step reads all of A from memory twice over a level that the device holds
 * anyway; the device's product is tens of times faster. The groups' sums come back to the host
 * and are added in group order: the same bits run after run, though not the host passes' bits
 * (the device's product sums a row in its own order), so a hierarchy made this way differs from
 * one made without the device matrix in the last bits of its weights. */
#include "precond/precond.h"

#include <stdlib.h>
#include <string.h>

enum { V, P, U, Y, DINV, SUMS, BUFFERS };

typedef struct device_passes {
    cmrscl_matrix a0;
    cl_command_queue queue;
    cl_kernel product, update;
    cl_mem mem[BUFFERS];
    cl_uint n;
    size_t local, groups;
    double *sums; /* the groups' real4s, read back */
} device_passes;

/* The groups' sums of one pass, added in group order into sums[0..2]. */
static cmrscl_status run_and_add(device_passes *d, cl_kernel k, double sums[3])
{
    size_t global = d->groups * d->local;
    cl_int err = clEnqueueNDRangeKernel(d->queue, k, 1, NULL, &global, &d->local, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(d->queue, d->mem[SUMS], CL_TRUE, 0,
                                  d->groups * 4 * sizeof(double), d->sums, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "AMG rho on the device");
    sums[0] = sums[1] = sums[2] = 0;
    for (size_t g = 0; g < d->groups; ++g)
        for (int c = 0; c < 3; ++c)
            sums[c] += d->sums[4 * g + c];
    return CMRSCL_OK;
}

static cmrscl_status device_product(void *self, double sv, double sums[3])
{
    device_passes *d = self;
    pthread_mutex_lock(&d->a0->lock);
    cmrscl_status st =
        cmrs_spmv_enqueue(d->a0, sv, d->mem[V], 0.0, d->mem[Y], d->queue, 0, NULL, NULL, NULL);
    pthread_mutex_unlock(&d->a0->lock);
    cl_int err = clSetKernelArg(d->product, 0, sizeof(cl_uint), &d->n);
    err |= clSetKernelArg(d->product, 1, sizeof(double), &sv);
    const int order[] = {DINV, V, Y, U, SUMS};
    for (cl_uint i = 0; i < 5; ++i)
        err |= clSetKernelArg(d->product, 2 + i, sizeof(cl_mem), &d->mem[order[i]]);
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "AMG rho: the product's arguments");
    return st == CMRSCL_OK ? run_and_add(d, d->product, sums) : st;
}

static cmrscl_status device_update(void *self, double su, double av, double bp, double sums[3])
{
    device_passes *d = self;
    cl_int err = clSetKernelArg(d->update, 0, sizeof(cl_uint), &d->n);
    const double scalar[] = {su, av, bp};
    for (cl_uint i = 0; i < 3; ++i)
        err |= clSetKernelArg(d->update, 1 + i, sizeof(double), &scalar[i]);
    const int order[] = {DINV, U, V, P, SUMS};
    for (cl_uint i = 0; i < 5; ++i)
        err |= clSetKernelArg(d->update, 4 + i, sizeof(cl_mem), &d->mem[order[i]]);
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "AMG rho: the update's arguments");
    return run_and_add(d, d->update, sums);
}

static void device_swap(void *self)
{
    device_passes *d = self;
    cl_mem t = d->mem[V];
    d->mem[V] = d->mem[P], d->mem[P] = t;
}

/* Buffer i of n doubles, from `from` when given. */
static cmrscl_status buffer(device_passes *d, int i, size_t n, const double *from)
{
    cl_int err;
    d->mem[i] =
        clCreateBuffer(d->a0->ctx->context, CL_MEM_READ_WRITE | (from ? CL_MEM_COPY_HOST_PTR : 0),
                       (n ? n : 1) * sizeof(double), (void *)from, &err);
    return d->mem[i] ? CMRSCL_OK : cmrscl_fail_cl(err, "clCreateBuffer (AMG rho)");
}

cmrscl_status cmrs_amg_device_rho(cmrscl_matrix a0, const double *diag_inv, int steps, double *rho)
{
    cmrscl_context ctx = a0->ctx;
    device_passes d = {.a0 = a0, .queue = ctx->queue, .n = (cl_uint)a0->params.rows};
    cl_program program;
    cmrscl_status st = cmrs_amg_program(ctx, CMRSCL_DOUBLE, false, &d.local, &program);
    d.groups = (d.n + d.local - 1) / d.local;
    double *start = cmrscl_alloc((size_t)d.n + 1, sizeof(double));
    d.sums = cmrscl_alloc(d.groups * 4 + 4, sizeof(double));
    if (st == CMRSCL_OK && (!start || !d.sums))
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG rho: %u rows", d.n);
    cl_int err = CL_SUCCESS;
    if (st == CMRSCL_OK) {
        d.product = clCreateKernel(program, "amg_rho_product", &err);
        if (d.product)
            d.update = clCreateKernel(program, "amg_rho_update", &err);
        if (!d.product || !d.update)
            st = cmrscl_fail_cl(err, "clCreateKernel (AMG rho)");
    }
    if (st == CMRSCL_OK) {
        cmrs_amg_start_vector(start, d.n);
        st = buffer(&d, V, d.n, start);
    }
    if (st == CMRSCL_OK) { /* Lanczos' first step takes 0 times p: 0, not whatever was there */
        memset(start, 0, ((size_t)d.n + 1) * sizeof(double));
        st = buffer(&d, P, d.n, start);
    }
    if (st == CMRSCL_OK)
        st = buffer(&d, U, d.n, NULL);
    if (st == CMRSCL_OK)
        st = buffer(&d, Y, d.n, NULL);
    if (st == CMRSCL_OK)
        st = buffer(&d, DINV, d.n, diag_inv);
    if (st == CMRSCL_OK)
        st = buffer(&d, SUMS, d.groups * 4, NULL);
    double estimate = 0;
    cmrs_lanczos_passes passes = {&d, device_product, device_update, device_swap};
    if (st == CMRSCL_OK)
        st = cmrs_amg_lanczos(&passes, steps, &estimate);
    for (int i = 0; i < BUFFERS; ++i)
        if (d.mem[i])
            clReleaseMemObject(d.mem[i]);
    if (d.product)
        clReleaseKernel(d.product);
    if (d.update)
        clReleaseKernel(d.update);
    free(start), free(d.sums);
    if (st == CMRSCL_OK)
        *rho = estimate > 0 ? estimate : 1.0;
    return st;
}
