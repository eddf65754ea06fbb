/* halo.c - the halo exchange's steps: on the device, the sent x entries gathered by a small
 * kernel of our own (mpi/halo.cl, built in the matrix's context) and read into pinned host
 * memory; over MPI, nonblocking receives and sends per neighbour on the matrix's own
 * communicator; then the received halo written to the device for the remote product, whose
 * rows another small kernel adds into y. The kernels run on the context's queue, the gather
 * ahead of the local product: a kernel queued behind it would wait for the local product's
 * work-groups to drain, and the exchange with it. The copies run on a queue of their own, so
 * they overlap the local product; events order the two queues. */
#include "dist_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct embedded_kernel {
    const char *name;
    const char *text;
    size_t size;
};
extern const struct embedded_kernel cmrscl_mpi_kernels[]; /* generated from mpi/halo.cl */

enum { HALO_TAG = 0x484c }; /* on the matrix's duplicated communicator: no user message */

static cmrscl_status cl_fail(cl_int err, const char *what)
{
    return cmrs_dist_fail(err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES
                              ? CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY
                              : CMRSCL_ERROR_OPENCL,
                          "%s failed: OpenCL error %d", what, (int)err);
}

static cmrscl_status build_kernels(cmrscl_dist_matrix m, bool scatter)
{
    cl_device_id device = NULL;
    cl_int err = clGetCommandQueueInfo(m->queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL);
    if (err != CL_SUCCESS)
        return cl_fail(err, "clGetCommandQueueInfo (halo.cl)");
    const char *options =
        m->plan.precision == CMRSCL_DOUBLE ? "-D REAL=double -D USE_FP64" : "-D REAL=float";
    cmrscl_status st =
        cmrs_dist_build(m->cl, device, "halo.cl", cmrscl_mpi_kernels[0].text, options, &m->program);
    if (st != CMRSCL_OK)
        return st;
    m->gather = clCreateKernel(m->program, "halo_gather", &err);
    if (err == CL_SUCCESS && scatter)
        m->scatter = clCreateKernel(m->program, "halo_scatter_add", &err);
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "clCreateKernel (halo.cl)");
}

/* A buffer in host memory the device copies from or to directly (pinned where the driver
 * pins ALLOC_HOST_PTR, as NVIDIA does), mapped once for the matrix's lifetime. */
static cmrscl_status pinned(cmrscl_dist_matrix m, size_t bytes, cl_mem *buf, void **host)
{
    cl_int err;
    *buf = clCreateBuffer(m->cl, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
    if (err == CL_SUCCESS)
        *host = clEnqueueMapBuffer(m->side, *buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                   NULL, NULL, &err);
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "a pinned staging buffer");
}

/* The side queue, on the device of the context's queue, profiled like it. */
static cmrscl_status side_queue(cmrscl_dist_matrix m)
{
    cl_device_id device = NULL;
    cl_command_queue_properties props = 0;
    cl_int err = clGetCommandQueueInfo(m->queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL);
    if (err == CL_SUCCESS)
        err = clGetCommandQueueInfo(m->queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (err == CL_SUCCESS)
        m->side = clCreateCommandQueue(m->cl, device, props & CL_QUEUE_PROFILING_ENABLE, &err);
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "clCreateCommandQueue (halo copies)");
}

/* How the host waits for the device: $CMRSCL_DIST_WAIT "spin" or "block", else by the device's
 * type (dist_internal.h, spin). */
static cmrscl_status wait_mode(cmrscl_dist_matrix m)
{
    const char *env = getenv("CMRSCL_DIST_WAIT");
    if (env && *env) {
        if (strcmp(env, "spin") && strcmp(env, "block"))
            return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                                  "CMRSCL_DIST_WAIT='%s': expected 'spin' or 'block'", env);
        m->spin = !strcmp(env, "spin");
        return CMRSCL_OK;
    }
    cl_device_id device = NULL;
    cl_device_type type = 0;
    cl_int err = clGetCommandQueueInfo(m->queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL);
    if (err == CL_SUCCESS)
        err = clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    m->spin = (type & CL_DEVICE_TYPE_GPU) != 0;
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "the device's type");
}

cl_int cmrs_dist_wait(cmrscl_dist_matrix m, cl_uint n, const cl_event *events)
{
    for (cl_uint i = 0; i < n; ++i) {
        if (!events[i])
            continue;
        if (!m->spin) {
            cl_int err = clWaitForEvents(1, &events[i]);
            if (err != CL_SUCCESS)
                return err;
            continue;
        }
        cl_command_queue q = NULL; /* a spinning host must flush what it waits for itself */
        cl_int status = CL_QUEUED;
        cl_int err = clGetEventInfo(events[i], CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL);
        if (err == CL_SUCCESS && q)
            err = clFlush(q);
        while (err == CL_SUCCESS && status > CL_COMPLETE)
            err = clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                 &status, NULL);
        if (err != CL_SUCCESS)
            return err;
        if (status < 0)
            return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
    }
    return CL_SUCCESS;
}

/* CMRSCL_EXCHANGE_SLICES: the senders' slices on the device, one after another, and where
 * each halo entry sits in them (halo columns ascend, grouped by owner). */
static cmrscl_status slice_buffers(cmrscl_dist_matrix m)
{
    int nb = m->plan.neighbours;
    int64_t total = 0;
    m->slice_at = calloc((size_t)nb + 1, sizeof *m->slice_at);
    cl_int *index = malloc(sizeof *index * ((size_t)m->plan.halo + 1));
    if (!m->slice_at || !index) {
        free(index);
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the slices");
    }
    for (int k = 0; k < nb; ++k) {
        int q = m->nb_rank[k];
        m->slice_at[k] = total;
        for (int32_t h = 0; h < m->nb_recv[k]; ++h) {
            int64_t at = m->nb_recv_at[k] + h;
            index[at] = (cl_int)(total + m->halo_cols[at] - m->col_first[q]);
        }
        if (m->nb_recv[k] > 0)
            total += m->col_first[q + 1] - m->col_first[q];
    }
    size_t vs = cmrs_dist_value_size(m->plan.precision);
    cl_int err = total > INT32_MAX ? CL_INVALID_BUFFER_SIZE : CL_SUCCESS;
    if (err == CL_SUCCESS)
        m->slices = clCreateBuffer(m->cl, CL_MEM_READ_WRITE, vs * (size_t)total, NULL, &err);
    if (err == CL_SUCCESS)
        m->slice_index = clCreateBuffer(m->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                        sizeof *index * (size_t)m->plan.halo, index, &err);
    free(index);
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "the senders' slices on the device");
}

cmrscl_status cmrs_halo_setup(cmrscl_dist_matrix m, const int32_t *send_local)
{
    cmrscl_status st = cmrscl_context_cl(m->ctx, &m->cl, &m->queue);
    if (st == CMRSCL_OK)
        st = wait_mode(m);
    if (st == CMRSCL_OK && (m->plan.sent > 0 || m->plan.halo > 0))
        st = side_queue(m);
    size_t vs = cmrs_dist_value_size(m->plan.precision), sent = (size_t)m->plan.sent;
    size_t halo = (size_t)m->plan.halo, remote_rows = (size_t)m->plan.remote_rows;
    /* Where only some rows have remote entries, the remote block holds those rows alone and
     * its product is added into y by a kernel: for a stencil's plane of halo rows, the
     * product then reads and writes that plane's y, not every row's. Where every row has
     * remote entries the block's rows are y's, and its product adds into y itself. */
    bool scatter = halo > 0 && remote_rows < (size_t)m->plan.local_rows;
    bool slices = m->plan.exchange == CMRSCL_EXCHANGE_SLICES;
    cl_int err = CL_SUCCESS;
    if (st == CMRSCL_OK && (sent > 0 || scatter || (slices && halo > 0)))
        st = build_kernels(m, scatter);
    if (st == CMRSCL_OK && slices && halo > 0)
        st = slice_buffers(m);
    if (st == CMRSCL_OK && scatter) {
        m->remote_row_buf = clCreateBuffer(m->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                           sizeof(cl_int) * remote_rows, m->remote_row, &err);
        if (err == CL_SUCCESS)
            m->remote_part = clCreateBuffer(m->cl, CL_MEM_READ_WRITE, vs * remote_rows, NULL, &err);
        if (err != CL_SUCCESS)
            st = cl_fail(err, "the remote rows' buffers");
    }
    if (st == CMRSCL_OK && sent > 0 && !slices) {
        m->send_index = clCreateBuffer(m->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       sizeof(cl_int) * sent, (void *)send_local, &err);
        if (err == CL_SUCCESS)
            m->send_values = clCreateBuffer(m->cl, CL_MEM_READ_WRITE, vs * sent, NULL, &err);
        if (err != CL_SUCCESS)
            st = cl_fail(err, "the send buffers");
        else if (m->plan.exchange == CMRSCL_EXCHANGE_MESSAGES)
            st = pinned(m, vs * sent, &m->pinned[0], &m->send_host);
    }
    if (st == CMRSCL_OK && halo > 0) {
        /* written by a copy, or (whole slices) by the gather kernel */
        m->halo_values = clCreateBuffer(m->cl, slices ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY,
                                        vs * halo, NULL, &err);
        if (err != CL_SUCCESS)
            st = cl_fail(err, "the halo buffer");
        else if (m->plan.exchange == CMRSCL_EXCHANGE_MESSAGES)
            st = pinned(m, vs * halo, &m->pinned[1], &m->halo_host);
    }
    return st;
}

void cmrs_halo_free(cmrscl_dist_matrix m)
{
    if (m->last_write)
        clReleaseEvent(m->last_write);
    void *host[2] = {m->send_host, m->halo_host};
    for (int i = 0; i < 2; ++i)
        if (m->pinned[i] && host[i])
            clEnqueueUnmapMemObject(m->side, m->pinned[i], host[i], 0, NULL, NULL);
    if (m->side) {
        clFinish(m->side);
        clReleaseCommandQueue(m->side);
    }
    cl_mem bufs[] = {m->send_index,     m->send_values, m->halo_values,
                     m->remote_row_buf, m->remote_part, m->pinned[0],
                     m->pinned[1],      m->slices,      m->slice_index};
    free(m->slice_at);
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; ++i)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    if (m->gather)
        clReleaseKernel(m->gather);
    if (m->scatter)
        clReleaseKernel(m->scatter);
    if (m->program)
        clReleaseProgram(m->program);
}

/* A kernel of halo.cl over n items: out = in[index] or y[index] += in, on queue q after
 * `after` (may be NULL). */
static cmrscl_status enqueue_on(cmrscl_dist_matrix m, cl_command_queue q, cl_kernel k, cl_mem a,
                                cl_mem index, cl_mem b, cl_int n, cl_event after, cl_event *event)
{
    cl_int err = clSetKernelArg(k, 0, sizeof a, &a);
    err |= clSetKernelArg(k, 1, sizeof index, &index);
    err |= clSetKernelArg(k, 2, sizeof b, &b);
    err |= clSetKernelArg(k, 3, sizeof n, &n);
    if (err != CL_SUCCESS)
        return cl_fail(err, "clSetKernelArg (halo.cl)");
    size_t local = 64, global = ((size_t)n + local - 1) / local * local;
    err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, after ? 1 : 0,
                                 after ? &after : NULL, event);
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "clEnqueueNDRangeKernel (halo.cl)");
}

/* The same on the context's queue, after what it holds. */
static cmrscl_status enqueue_small(cmrscl_dist_matrix m, cl_kernel k, cl_mem a, cl_mem index,
                                   cl_mem b, cl_int n, cl_event *event)
{
    return enqueue_on(m, m->queue, k, a, index, b, n, NULL, event);
}

cmrscl_status cmrs_halo_from_slices(cmrscl_dist_matrix m, cl_event start, cl_event *event)
{
    cmrscl_status st = enqueue_on(m, m->side, m->gather, m->slices, m->slice_index, m->halo_values,
                                  m->plan.halo, start, event);
    cl_int err = st == CMRSCL_OK ? clFlush(m->side) : CL_SUCCESS;
    return st != CMRSCL_OK || err == CL_SUCCESS ? st : cl_fail(err, "clFlush (halo copies)");
}

cmrscl_status cmrs_halo_pack(cmrscl_dist_matrix m, cl_mem x, cl_event *start, cl_event *read)
{
    *start = *read = NULL;
    /* Nothing to gather (the slices are read whole, by cmrs_window_exchange): a marker says
     * when x is written and the previous remote product has read the halo buffer. */
    if (m->plan.sent == 0 || m->plan.exchange == CMRSCL_EXCHANGE_SLICES) {
        cl_int err = m->plan.halo > 0 || m->plan.sent > 0
                         ? clEnqueueMarkerWithWaitList(m->queue, 0, NULL, start)
                         : CL_SUCCESS;
        if (err == CL_SUCCESS && *start)
            err = clFlush(m->queue);
        return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "clEnqueueMarkerWithWaitList");
    }
    cmrscl_status st =
        enqueue_small(m, m->gather, x, m->send_index, m->send_values, m->plan.sent, start);
    if (st != CMRSCL_OK || m->plan.exchange != CMRSCL_EXCHANGE_MESSAGES)
        return st; /* the shared window's reads wait for their receivers: cmrs_window_exchange */
    /* Flushed before another queue waits on it (OpenCL asks it), and so it starts at once. */
    size_t bytes = cmrs_dist_value_size(m->plan.precision) * (size_t)m->plan.sent;
    cl_int err = clFlush(m->queue);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(m->side, m->send_values, CL_FALSE, 0, bytes, m->send_host, 1,
                                  start, read);
    if (err == CL_SUCCESS)
        err = clFlush(m->side);
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "clEnqueueReadBuffer (sent x entries)");
}

cmrscl_status cmrs_halo_scatter(cmrscl_dist_matrix m, cl_mem y, cl_event *event)
{
    return enqueue_small(m, m->scatter, y, m->remote_row_buf, m->remote_part, m->plan.remote_rows,
                         event);
}

/* Posts one nonblocking call per neighbour with entries that way (the others' requests are
 * null, which MPI_Waitall skips). After a failed call the others are still posted, so that
 * every neighbour's matching call completes; the first failure is returned. */
static cmrscl_status post(cmrscl_dist_matrix m, bool receive)
{
    size_t vs = cmrs_dist_value_size(m->plan.precision);
    int nb = m->plan.neighbours, first = MPI_SUCCESS;
    for (int k = 0; k < nb; ++k) {
        MPI_Request *req = &m->requests[receive ? k : nb + k];
        int count = receive ? m->nb_recv[k] : m->nb_send[k], rc = MPI_SUCCESS;
        *req = MPI_REQUEST_NULL;
        if (count > 0 && receive)
            rc = MPI_Irecv((char *)m->halo_host + vs * (size_t)m->nb_recv_at[k], count, m->type,
                           m->nb_rank[k], HALO_TAG, m->comm, req);
        else if (count > 0)
            rc = MPI_Isend((char *)m->send_host + vs * (size_t)m->nb_send_at[k], count, m->type,
                           m->nb_rank[k], HALO_TAG, m->comm, req);
        if (rc != MPI_SUCCESS) {
            *req = MPI_REQUEST_NULL;
            first = first == MPI_SUCCESS ? rc : first;
        }
    }
    return first == MPI_SUCCESS ? CMRSCL_OK
                                : cmrs_dist_fail_mpi(first, receive ? "MPI_Irecv" : "MPI_Isend");
}

cmrscl_status cmrs_halo_post_receives(cmrscl_dist_matrix m) { return post(m, true); }
cmrscl_status cmrs_halo_post_sends(cmrscl_dist_matrix m) { return post(m, false); }

cmrscl_status cmrs_halo_wait(cmrscl_dist_matrix m)
{
    int rc = MPI_Waitall(2 * m->plan.neighbours, m->requests, MPI_STATUSES_IGNORE);
    return rc == MPI_SUCCESS ? CMRSCL_OK : cmrs_dist_fail_mpi(rc, "MPI_Waitall (halo exchange)");
}

cmrscl_status cmrs_halo_unpack(cmrscl_dist_matrix m, cl_event ready, cl_event *event)
{
    *event = NULL;
    if (m->plan.halo == 0)
        return CMRSCL_OK;
    size_t bytes = cmrs_dist_value_size(m->plan.precision) * (size_t)m->plan.halo;
    cl_int err = clEnqueueWriteBuffer(m->side, m->halo_values, CL_FALSE, 0, bytes, m->halo_host,
                                      ready ? 1 : 0, ready ? &ready : NULL, event);
    if (err == CL_SUCCESS)
        err = clFlush(m->side);
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "clEnqueueWriteBuffer (halo)");
}
