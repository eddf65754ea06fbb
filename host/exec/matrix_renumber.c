/* matrix_renumber.c - what a renumbered matrix (cmrscl_renumber) keeps beside P A P^T: its
 * order on the device, where each of the caller's entries went (for values updates), two vectors a
 * product works in, and the kernels that move vectors between the caller's order and the device's
 * (cl/renumber.cl). Made with the matrix (matrix.c); used by the products (product.c), the values
 * updates (matrix_update.c) and the solvers. */
#include "exec/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RENUMBER_GROUP 256 /* work-items a group: a plain stream, any device runs it */

struct renumbering {
    matrix_part_release release; /* first: cmrscl_matrix_free calls it */
    int64_t *entry;              /* the caller's entry -> its place on the device (updates) */
    cl_mem order_buf, x, t;
    cl_kernel gather, scatter;
    /* held from a product's gather to its scatter: they share x and t (and the kernels'
     * arguments), so one caller's three launches follow each other in the queue */
    pthread_mutex_t lock;
    size_t local;
};

static void renumber_release(cmrscl_matrix m)
{
    struct renumbering *r = m->renumbering;
    cl_mem mems[] = {r->order_buf, r->x, r->t};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; ++i)
        if (mems[i])
            clReleaseMemObject(mems[i]);
    if (r->gather)
        clReleaseKernel(r->gather);
    if (r->scatter)
        clReleaseKernel(r->scatter);
    pthread_mutex_destroy(&r->lock);
    free(r->entry), free(r);
    m->renumbering = NULL;
}

static cmrscl_status make_kernels(cmrscl_matrix m, struct renumbering *r)
{
    r->local = RENUMBER_GROUP;
    while (r->local > 1 && r->local > m->ctx->info.max_work_group_size)
        r->local /= 2;
    char options[160];
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -DHEIGHT=1 -DWARP=1 -DWG_SIZE=%zu -DVALUE_DOUBLE=%d", r->local,
             m->params.precision == CMRSCL_DOUBLE);
    cl_program program; /* owned by the context's cache */
    double seconds;
    cmrscl_program_source from;
    cmrscl_status st = cmrs_program_get(m->ctx, "renumber.cl", options, &program, &seconds, &from);
    cl_int err = CL_SUCCESS;
    if (st == CMRSCL_OK && !(r->gather = clCreateKernel(program, "renumber_gather", &err)))
        st = cmrscl_fail_cl(err, "clCreateKernel (renumber_gather)");
    if (st == CMRSCL_OK && !(r->scatter = clCreateKernel(program, "renumber_scatter", &err)))
        st = cmrscl_fail_cl(err, "clCreateKernel (renumber_scatter)");
    return st;
}

cmrscl_status cmrs_renumber_attach(cmrscl_matrix m, cmrs_renumbered *from)
{
    struct renumbering *r = calloc(1, sizeof *r);
    if (!r || pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a renumbering");
    }
    r->release = renumber_release;
    r->entry = from->entry, from->entry = NULL;
    m->renumbering = r;
    cmrscl_params *p = &m->params;
    size_t n = p->rows ? (size_t)p->rows : 1, vs = cmrscl_precision_size(p->precision);
    cl_int err = CL_SUCCESS;
    cl_context cx = m->ctx->context;
    r->order_buf = clCreateBuffer(cx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(int32_t),
                                  from->order, &err);
    if (r->order_buf)
        r->x = clCreateBuffer(cx, CL_MEM_READ_WRITE, n * vs, NULL, &err);
    if (r->x)
        r->t = clCreateBuffer(cx, CL_MEM_READ_WRITE, n * vs, NULL, &err);
    if (!r->t)
        return cmrscl_fail_cl(err, "clCreateBuffer (the renumbering's order and vectors)");
    p->device_bytes += n * (sizeof(int32_t) + 2 * vs);
    cmrs_plan_note_renumbered(p);
    return make_kernels(m, r);
}

void cmrs_renumber_hold(cmrscl_matrix m) { pthread_mutex_lock(&m->renumbering->lock); }

void cmrs_renumber_let_go(cmrscl_matrix m) { pthread_mutex_unlock(&m->renumbering->lock); }

static cmrscl_status launch(cmrscl_matrix m, cl_kernel k, const char *name, cl_int set,
                            cl_command_queue queue, cl_uint num_wait, const cl_event *wait_list,
                            cl_event *event)
{
    if (set != CL_SUCCESS)
        return cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg (%s) failed", name);
    struct renumbering *r = m->renumbering;
    size_t n = (size_t)m->params.rows, global = (n + r->local - 1) / r->local * r->local;
    cl_int err =
        clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &r->local, num_wait, wait_list, event);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, name);
}

static cl_int set_real(cl_kernel k, cl_uint index, cmrscl_precision precision, double v)
{
    if (precision == CMRSCL_DOUBLE)
        return clSetKernelArg(k, index, sizeof v, &v);
    cl_float f = (cl_float)v;
    return clSetKernelArg(k, index, sizeof f, &f);
}

cmrscl_status cmrs_renumber_gather(cmrscl_matrix m, cl_command_queue queue, cl_mem src, cl_mem dst,
                                   cl_uint num_wait, const cl_event *wait_list, cl_event *event)
{
    struct renumbering *r = m->renumbering;
    cl_uint n = (cl_uint)m->params.rows;
    cl_int err = clSetKernelArg(r->gather, 0, sizeof n, &n);
    err |= clSetKernelArg(r->gather, 1, sizeof r->order_buf, &r->order_buf);
    err |= clSetKernelArg(r->gather, 2, sizeof src, &src);
    err |= clSetKernelArg(r->gather, 3, sizeof dst, &dst);
    return launch(m, r->gather, "renumber_gather", err, queue, num_wait, wait_list, event);
}

cmrscl_status cmrs_renumber_scatter(cmrscl_matrix m, cl_command_queue queue, double alpha, cl_mem t,
                                    double beta, cl_mem y, cl_uint num_wait,
                                    const cl_event *wait_list, cl_event *event)
{
    struct renumbering *r = m->renumbering;
    cl_uint n = (cl_uint)m->params.rows;
    cmrscl_precision pr = m->params.precision;
    cl_int err = clSetKernelArg(r->scatter, 0, sizeof n, &n);
    err |= clSetKernelArg(r->scatter, 1, sizeof r->order_buf, &r->order_buf);
    err |= set_real(r->scatter, 2, pr, alpha);
    err |= clSetKernelArg(r->scatter, 3, sizeof t, &t);
    err |= set_real(r->scatter, 4, pr, beta);
    err |= clSetKernelArg(r->scatter, 5, sizeof y, &y);
    return launch(m, r->scatter, "renumber_scatter", err, queue, num_wait, wait_list, event);
}

void cmrs_renumber_vectors(cmrscl_matrix m, cl_mem *x, cl_mem *t)
{
    *x = m->renumbering->x, *t = m->renumbering->t;
}

void cmrs_renumber_values(cmrscl_matrix m, const void *values, size_t value_size, void *out)
{
    cmrs_renumber_move_values(m->renumbering->entry, m->params.nnz, values, value_size, out);
}

cmrscl_status cmrs_renumber_refuse(cmrscl_matrix m, const char *what)
{
    if (!m || !m->renumbering)
        return CMRSCL_OK;
    return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                       "%s of a renumbered matrix (cmrscl_options.renumber) is not available yet: "
                       "create the matrix with CMRSCL_RENUMBER_NONE",
                       what);
}
