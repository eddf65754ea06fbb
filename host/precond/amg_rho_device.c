/* amg_rho_device.c - the passes of AMG's estimate of rho(D^-1 A) on a device (cl/amg_rho.cl),
 * driven by amg_rho.c's Lanczos or power method. On the host the estimate of a fine level
 * streams the matrix once a step for a few tens of steps on the host's threads, beside
 * strength and aggregation, which are bound by the same memory; on a GPU a step takes
 * milliseconds. Its pieces' sums are the host's bit for bit (cl/amg_rho.cl), so the estimate
 * is: the hierarchy is the same whichever made it. A and the vectors go to the device once;
 * each pass is two launches and a read of its pieces' sums. A may stay there for the caller
 * (the builder keeps it for the level's prolongator and Galerkin product, amg_builder.c), and
 * may be there already (the level above's Galerkin product made it there). */
#include "precond/precond.h"

#include "exec/convert_launch.h"

#include <stdio.h>
#include <stdlib.h>

#define RHO_GROUP 64

typedef struct device_passes {
    cmrscl_context ctx;
    launcher l;
    cl_kernel start, product, update, pieces;
    cmrs_device_csr a;
    cl_mem diag, vec[3], terms, sums;
    int32_t rows;
    int64_t pieces_count;
    double *host_sums; /* 3 a piece */
} device_passes;

/* Kernel k, its arguments set, over `items` work-items in groups of the kernels' size. */
static cmrscl_status launch(const device_passes *d, cl_kernel k, const launch_arg *args, int n,
                            size_t items)
{
    cmrscl_status st = cmrs_launch_set_args(k, args, n);
    return st == CMRSCL_OK ? cmrs_launch_enqueue(&d->l, k, items, 0, NULL, NULL) : st;
}

/* The pieces' sums of the first `columns` columns of the terms, added in order into sum. */
static cmrscl_status piece_sums(device_passes *d, cmrscl_status st, int columns, double sum[3])
{
    int pieces = (int)d->pieces_count;
    launch_arg args[] = {ARG(d->rows), ARG(pieces), ARG(columns), ARG(d->terms), ARG(d->sums)};
    if (st == CMRSCL_OK)
        st = launch(d, d->pieces, args, COUNT(args), (size_t)pieces * 3);
    cl_int err = st == CMRSCL_OK ? clEnqueueReadBuffer(d->l.queue, d->sums, CL_TRUE, 0,
                                                       sizeof(double) * 3 * (size_t)pieces,
                                                       d->host_sums, 0, NULL, NULL)
                                 : CL_SUCCESS;
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "AMG spectral radius on the device");
    if (st == CMRSCL_OK)
        cmrs_amg_rho_add(d->host_sums, pieces, sum);
    return st;
}

static cmrscl_status device_product(void *ctx, const cmrs_rho_state *s, double sum[3])
{
    device_passes *d = ctx;
    launch_arg args[] = {ARG(d->rows),  ARG(s->sv),        ARG(d->a.ptr),
                         ARG(d->a.col), ARG(d->a.val),     ARG(d->vec[s->v]),
                         ARG(d->diag),  ARG(d->vec[s->u]), ARG(d->terms)};
    return piece_sums(d, launch(d, d->product, args, COUNT(args), (size_t)d->rows), 3, sum);
}

static cmrscl_status device_update(void *ctx, const cmrs_rho_state *s, double sum[3])
{
    device_passes *d = ctx;
    double av = s->alpha * s->sv, bp = s->beta * s->sp;
    launch_arg args[] = {ARG(d->rows),      ARG(s->su),        ARG(av),
                         ARG(bp),           ARG(d->vec[s->u]), ARG(d->vec[s->v]),
                         ARG(d->vec[s->p]), ARG(d->diag),      ARG(d->terms)};
    return piece_sums(d, launch(d, d->update, args, COUNT(args), (size_t)d->rows), 1, sum);
}

/* The kernels `names` of cl/amg_rho.cl, in groups of RHO_GROUP or the most they run (*group). */
static cmrscl_status rho_kernels(cmrscl_context ctx, int count, const char *const *names,
                                 cl_kernel *out, size_t *group)
{
    char options[160];
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -DHEIGHT=1 -DWARP=1 -DWG_SIZE=%d -DVALUE_DOUBLE=1 -DAMG_PIECE=%d",
             RHO_GROUP, AMG_PIECE);
    *group = RHO_GROUP;
    return cmrs_amg_kernels(ctx, "amg_rho.cl", options, count, names, out, group);
}

/* A on the device (sent, unless there already), the other buffers made, the kernels built;
 * D^-1 and the start made there from A (rho_start): at a fine level each would cross the bus
 * after A on the estimate's path, for what a pass over A makes in a millisecond. */
static cmrscl_status prepare(device_passes *d, const cmrscl_csr *a)
{
    static const char *const names[] = {"rho_start", "rho_product", "rho_update", "rho_pieces"};
    cl_kernel k[4];
    cmrscl_status st = rho_kernels(d->ctx, 4, names, k, &d->l.group);
    d->start = k[0], d->product = k[1], d->update = k[2], d->pieces = k[3];
    size_t n = (size_t)a->rows, bytes = n * sizeof(double);
    d->host_sums = malloc(sizeof(double) * 3 * (size_t)d->pieces_count);
    if (st == CMRSCL_OK && !d->host_sums)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG spectral radius: %zu rows", n);
    if (st == CMRSCL_OK && !d->a.ptr)
        st = cmrs_device_csr_upload(d->ctx, a, &d->a);
    cl_mem *mem[] = {&d->diag, &d->vec[0], &d->vec[1], &d->vec[2], &d->terms, &d->sums};
    size_t size[] = {bytes, bytes,     bytes,
                     bytes, 3 * bytes, sizeof(double) * 3 * (size_t)d->pieces_count};
    for (int i = 0; st == CMRSCL_OK && i < 6; ++i)
        *mem[i] = cmrs_launch_new_buffer(d->ctx, CL_MEM_READ_WRITE, size[i], NULL, &st,
                                         "AMG spectral radius on the device");
    launch_arg args[] = {ARG(d->rows),  ARG(d->a.ptr), ARG(d->a.col),
                         ARG(d->a.val), ARG(d->diag),  ARG(d->vec[0])};
    if (st == CMRSCL_OK)
        st = launch(d, d->start, args, COUNT(args), n);
    if (st == CMRSCL_OK) /* Lanczos' p = 0: made there, not sent */
        st = cmrs_launch_zero(&d->l, d->vec[1], bytes);
    return st;
}

static void release(device_passes *d)
{
    cl_mem mem[] = {d->diag, d->vec[0], d->vec[1], d->vec[2], d->terms, d->sums};
    for (int i = 0; i < 6; ++i)
        if (mem[i])
            clReleaseMemObject(mem[i]);
    cl_kernel k[] = {d->start, d->product, d->update, d->pieces};
    for (int i = 0; i < 4; ++i)
        if (k[i])
            clReleaseKernel(k[i]);
    cmrs_device_csr_release(&d->a);
    free(d->host_sums);
}

cmrscl_status cmrs_amg_spectral_radius_device(cmrscl_context ctx, const cmrscl_csr *a,
                                              bool symmetric, int steps, double *rho,
                                              cmrs_device_csr *a_device)
{
    device_passes d = {.ctx = ctx,
                       .l = cmrs_launcher_make(ctx),
                       .rows = a->rows,
                       .pieces_count = cmrs_amg_pieces(a->rows)};
    /* a's copy there already (it must be a's: the same shape, at least) */
    if (a_device && a_device->ptr && a_device->rows == a->rows && a_device->cols == a->cols &&
        a_device->nnz == a->nnz)
        d.a = *a_device;
    else if (a_device)
        cmrs_device_csr_release(a_device);
    if (a_device)
        *a_device = (cmrs_device_csr){0};
    bool there = d.a.ptr != NULL;
    double t0 = cmrscl_seconds();
    cmrscl_status st = ctx->info.fp64 ? prepare(&d, a)
                                      : cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                                                    "AMG spectral radius on the device: the device "
                                                    "has no fp64");
    double t1 = cmrscl_seconds();
    if (st == CMRSCL_OK) {
        cmrs_rho_passes passes = {device_product, device_update, &d};
        st = cmrs_amg_rho_run(&passes, symmetric, steps, rho);
    }
    cmrscl_trace(
        "AMG estimate of rho on the device, %d rows: A %s and vectors made %.3f s, %d steps "
        "%.3f s",
        (int)a->rows, there ? "there" : "sent", t1 - t0, steps, cmrscl_seconds() - t1);
    if (st == CMRSCL_OK && a_device) /* a stays there, the caller's */
        *a_device = d.a, d.a = (cmrs_device_csr){0};
    release(&d);
    return st;
}

cmrscl_status cmrs_amg_symmetric_device(cmrscl_context ctx, const cmrs_device_csr *a,
                                        bool *symmetric)
{
    if (!ctx->info.fp64)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "AMG symmetry on the device: the device has no fp64");
    static const char *const names[] = {"rho_symmetric"};
    launcher l = cmrs_launcher_make(ctx);
    cl_kernel k = NULL;
    cmrscl_status st = rho_kernels(ctx, 1, names, &k, &l.group);
    cl_int asymmetric = 0;
    cl_mem flag = st == CMRSCL_OK
                      ? cmrs_launch_new_buffer(ctx, CL_MEM_READ_WRITE, sizeof asymmetric, NULL, &st,
                                               "AMG symmetry on the device")
                      : NULL;
    if (st == CMRSCL_OK)
        st = cmrs_launch_zero(&l, flag, sizeof asymmetric);
    launch_arg args[] = {ARG(a->rows), ARG(a->ptr), ARG(a->col), ARG(a->val), ARG(flag)};
    if (st == CMRSCL_OK)
        st = cmrs_launch_set_args(k, args, COUNT(args));
    if (st == CMRSCL_OK)
        st = cmrs_launch_enqueue(&l, k, (size_t)a->rows, 0, NULL, NULL);
    cl_int err = st == CMRSCL_OK ? clEnqueueReadBuffer(l.queue, flag, CL_TRUE, 0, sizeof asymmetric,
                                                       &asymmetric, 0, NULL, NULL)
                                 : CL_SUCCESS;
    if (err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "AMG symmetry on the device");
    if (flag)
        clReleaseMemObject(flag);
    if (k)
        clReleaseKernel(k);
    *symmetric = asymmetric == 0;
    return st;
}
