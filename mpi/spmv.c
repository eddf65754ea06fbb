/* spmv.c - the distributed product: agree that every rank's arguments are good, gather the x
 * entries others need and read them back (the gather first on the context's queue, the read on
 * the side queue), enqueue the local product behind the gather, exchange over MPI while the
 * device computes, write the halo and enqueue the remote product and its addition into y, agree
 * on the outcome. Also the serial variant (exchange after the local product) that the timing
 * compares with, and the host-array convenience call. */
#include "dist_internal.h"

#include <stdlib.h>
#include <string.h>

void cmrs_dist_record_release(product_record *r)
{
    cl_event e[] = {r->gather, r->read, r->local, r->write, r->remote, r->scatter};
    for (size_t i = 0; i < sizeof e / sizeof *e; ++i)
        if (e[i])
            clReleaseEvent(e[i]);
    memset(r, 0, sizeof *r);
}

static cmrscl_status check_vector(cmrscl_dist_matrix m, cl_mem buf, int32_t count, const char *name)
{
    if (count == 0)
        return CMRSCL_OK;
    if (!buf)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "%s is NULL but holds %d entries here",
                              name, count);
    size_t size = 0, need = cmrs_dist_value_size(m->plan.precision) * (size_t)count;
    cl_context owner = NULL;
    cl_int err = clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err == CL_SUCCESS)
        err = clGetMemObjectInfo(buf, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
    if (err != CL_SUCCESS)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "%s: not a buffer (OpenCL error %d)",
                              name, (int)err);
    if (owner != m->cl)
        return cmrs_dist_fail(CMRSCL_ERROR_CONTEXT_MISMATCH, "%s belongs to another OpenCL context",
                              name);
    if (size < need)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                              "%s holds %zu bytes; this rank needs %zu", name, size, need);
    return CMRSCL_OK;
}

static cmrscl_status check_product(cmrscl_dist_matrix m, cl_mem x, cl_mem y)
{
    cmrscl_status st = check_vector(m, x, m->plan.local_cols, "x");
    if (st == CMRSCL_OK)
        st = check_vector(m, y, m->plan.local_rows, "y");
    if (st == CMRSCL_OK && x && x == y && m->plan.local_rows > 0)
        st = cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "x and y must be different buffers");
    return st;
}

static cmrscl_status wait_event(cmrscl_dist_matrix m, cl_event e, const char *what)
{
    cl_int err = cmrs_dist_wait(m, 1, &e);
    return err == CL_SUCCESS
               ? CMRSCL_OK
               : cmrs_dist_fail(CMRSCL_ERROR_OPENCL, "%s failed: OpenCL error %d", what, (int)err);
}

static cmrscl_status keep_first(cmrscl_status a, cmrscl_status b) { return a != CMRSCL_OK ? a : b; }

/* The exchange: receives posted once the previous product's halo write has read the staging
 * buffer, sends once the packed entries are on the host. Every rank posts and completes its
 * messages even after a local failure, so that the neighbours' messages are matched. */
static cmrscl_status exchange(cmrscl_dist_matrix m, cl_event read, product_record *rec)
{
    cmrscl_status st = wait_event(m, m->last_write, "the previous halo write");
    if (m->last_write)
        clReleaseEvent(m->last_write), m->last_write = NULL;
    st = keep_first(st, cmrs_halo_post_receives(m));
    st = keep_first(st, wait_event(m, read, "reading the sent x entries"));
    double t0 = cmrs_dist_seconds(); /* the pack is over: from here on, MPI alone */
    st = keep_first(st, cmrs_halo_post_sends(m));
    double t1 = cmrs_dist_seconds();
    st = keep_first(st, cmrs_halo_wait(m));
    if (rec) {
        rec->exchange_s = cmrs_dist_seconds() - t0;
        rec->wait_s = cmrs_dist_seconds() - t1;
    }
    return st;
}

/* The remote block's product, after the halo's write: into y itself where the block has every
 * row (beta = 1), else into remote_part, then added into y's rows with remote entries. */
static cmrscl_status remote_product(cmrscl_dist_matrix m, double alpha, cl_mem y,
                                    product_record *rec)
{
    cl_uint waits = m->last_write ? 1 : 0;
    cl_event *wait = waits ? &m->last_write : NULL;
    if (!m->scatter)
        return cmrscl_spmv(m->remote, alpha, m->halo_values, 1.0, y, NULL, waits, wait,
                           rec ? &rec->remote : NULL);
    cmrscl_status st = cmrscl_spmv(m->remote, alpha, m->halo_values, 0.0, m->remote_part, NULL,
                                   waits, wait, rec ? &rec->remote : NULL);
    return st == CMRSCL_OK ? cmrs_halo_scatter(m, y, rec ? &rec->scatter : NULL) : st;
}

cmrscl_status cmrs_dist_product(cmrscl_dist_matrix m, cmrscl_status pre, double alpha, cl_mem x,
                                double beta, cl_mem y, bool overlap, product_record *rec)
{
    cmrscl_status st = pre;
    if (!m->in_solve &&
        (st = cmrs_dist_agree(m->comm, pre != CMRSCL_OK ? pre : check_product(m, x, y))) !=
            CMRSCL_OK)
        return st;
    cl_event read = NULL, start = NULL;
    if (!overlap) {
        st = cmrscl_spmv(m->local, alpha, x, beta, y, NULL, 0, NULL, rec ? &rec->local : NULL);
        clFinish(m->queue);
    }
    if (st == CMRSCL_OK)
        st = cmrs_halo_pack(m, x, &start, &read);
    if (st == CMRSCL_OK && overlap)
        st = cmrscl_spmv(m->local, alpha, x, beta, y, NULL, 0, NULL, rec ? &rec->local : NULL);
    clFlush(m->queue); /* the device starts while the host exchanges */
    if (m->plan.exchange != CMRSCL_EXCHANGE_MESSAGES)
        st = cmrs_window_exchange(m, st, x, start, &read, rec);
    else
        st = keep_first(st, exchange(m, read, rec));
    if (rec)
        rec->read = read;
    else if (read)
        clReleaseEvent(read);
    /* The halo buffer is free once `start` has run: it follows the previous remote product. */
    if (st == CMRSCL_OK && m->plan.exchange == CMRSCL_EXCHANGE_MESSAGES)
        st = cmrs_halo_unpack(m, start, &m->last_write);
    if (start && rec && m->plan.sent > 0)
        rec->gather = start;
    else if (start)
        clReleaseEvent(start);
    if (st == CMRSCL_OK && rec && m->last_write)
        clRetainEvent(rec->write = m->last_write);
    if (st == CMRSCL_OK && m->remote)
        st = remote_product(m, alpha, y, rec);
    return m->in_solve ? st : cmrs_dist_agree(m->comm, st);
}

cmrscl_status cmrscl_dist_spmv(cmrscl_dist_matrix m, double alpha, cl_mem x, double beta, cl_mem y)
{
    if (!m)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    return cmrs_dist_product(m, CMRSCL_OK, alpha, x, beta, y, true, NULL);
}

/* A device copy of n values of the precision (NULL for n == 0). */
static cl_mem device_copy(cmrscl_dist_matrix m, const void *host, int32_t n, cl_int *err)
{
    *err = CL_SUCCESS;
    if (n == 0)
        return NULL;
    size_t bytes = cmrs_dist_value_size(m->plan.precision) * (size_t)n;
    return clCreateBuffer(m->cl, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                          (void *)host, err);
}

cmrscl_status cmrscl_dist_spmv_host(cmrscl_dist_matrix m, double alpha, const void *x, double beta,
                                    void *y)
{
    if (!m)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    int32_t rows = m->plan.local_rows, cols = m->plan.local_cols;
    cl_int ex = CL_SUCCESS, ey = CL_SUCCESS;
    cmrscl_status st = (cols > 0 && !x) || (rows > 0 && !y)
                           ? cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "x or y is NULL")
                           : CMRSCL_OK;
    cl_mem dx = st == CMRSCL_OK ? device_copy(m, x, cols, &ex) : NULL;
    cl_mem dy = st == CMRSCL_OK ? device_copy(m, beta != 0.0 ? y : NULL, rows, &ey) : NULL;
    if (st == CMRSCL_OK && (ex != CL_SUCCESS || ey != CL_SUCCESS))
        st = cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY,
                            "x or y on the device: OpenCL error %d",
                            (int)(ex != CL_SUCCESS ? ex : ey));
    st = cmrs_dist_product(m, st, alpha, dx, beta, dy, true, NULL);
    if (st == CMRSCL_OK && rows > 0) {
        size_t bytes = cmrs_dist_value_size(m->plan.precision) * (size_t)rows;
        cl_int err = clEnqueueReadBuffer(m->queue, dy, CL_TRUE, 0, bytes, y, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            st = cmrs_dist_fail(CMRSCL_ERROR_OPENCL, "reading y: OpenCL error %d", (int)err);
    }
    if (dx)
        clReleaseMemObject(dx);
    if (dy)
        clReleaseMemObject(dy);
    return st;
}
