/* window.c - the halo exchange between ranks of one host through an MPI-3 shared-memory
 * window: each rank's received halo lives in its segment of the window, and a sender's
 * device reads its gathered entries straight into the receiver's segment, where the
 * receiver's device writes them from. The data cross host memory once, with no MPI copy in
 * between (the message path moves them device -> pinned buffer -> MPI's shared-memory copy
 * -> pinned buffer -> device). Per neighbour and product, two empty messages order the
 * copies: "ready" (receiver to sender: the previous product's halo write has read the
 * segment) and "done" (sender to receiver: the entries have landed), MPI_Win_sync on both
 * sides of each. A receiver writes each neighbour's part to the device as soon as its
 * "done" arrives. */
#include "dist_internal.h"

#include <stdlib.h>
#include <string.h>

enum { READY_TAG = 0x5244, DONE_TAG = 0x444e, OFFSET_TAG = 0x4f46 };

static cmrscl_status cl_fail(cl_int err, const char *what)
{
    return cmrs_dist_fail(CMRSCL_ERROR_OPENCL, "%s failed: OpenCL error %d", what, (int)err);
}

/* Whether every rank of the communicator shares this rank's host (collective). */
static cmrscl_status one_host(MPI_Comm comm, bool *out)
{
    MPI_Comm node;
    int size = 0, node_size = 0;
    int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_size(node, &node_size);
        MPI_Comm_free(&node);
        MPI_Comm_size(comm, &size);
    }
    *out = node_size == size;
    return rc == MPI_SUCCESS ? CMRSCL_OK : cmrs_dist_fail_mpi(rc, "MPI_Comm_split_type");
}

/* Every rank's first column (m->col_first, ranks + 1 of them): the slices' bounds. */
static cmrscl_status column_layout(cmrscl_dist_matrix m)
{
    int ranks = m->plan.ranks;
    m->col_first = calloc((size_t)ranks + 1, sizeof *m->col_first);
    cmrscl_status st = cmrs_dist_agree(
        m->comm,
        m->col_first ? CMRSCL_OK : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory"));
    int64_t cols = m->plan.local_cols;
    int rc = st == CMRSCL_OK
                 ? MPI_Allgather(&cols, 1, MPI_INT64_T, m->col_first + 1, 1, MPI_INT64_T, m->comm)
                 : MPI_SUCCESS;
    for (int r = 0; st == CMRSCL_OK && r < ranks; ++r)
        m->col_first[r + 1] += m->col_first[r];
    return st != CMRSCL_OK || rc == MPI_SUCCESS ? st
                                                : cmrs_dist_fail_mpi(rc, "MPI_Allgather (slices)");
}

/* Whole slices where they move fewer bytes over all ranks: a rank that sends reads its slice
 * once, and each writes its senders' whole slices, against reading what it sends and writing
 * its halo. */
static cmrscl_status slices_pay(cmrscl_dist_matrix m, bool *out)
{
    int64_t bytes[2] = {(int64_t)m->plan.sent + m->plan.halo,
                        m->plan.sent > 0 ? m->plan.local_cols : 0},
            all[2];
    for (int k = 0; k < m->plan.neighbours; ++k)
        if (m->nb_recv[k] > 0)
            bytes[1] += m->col_first[m->nb_rank[k] + 1] - m->col_first[m->nb_rank[k]];
    int rc = MPI_Allreduce(bytes, all, 2, MPI_INT64_T, MPI_SUM, m->comm);
    *out = all[1] < all[0];
    return rc == MPI_SUCCESS ? CMRSCL_OK : cmrs_dist_fail_mpi(rc, "MPI_Allreduce (slices)");
}

/* The exchange the ranks use: $CMRSCL_DIST_EXCHANGE ("messages", "shared" or "slices", the
 * same on every rank), else the window where all ranks share one host and more than one rank
 * takes part - whole slices where they move fewer bytes. Collective, agreed. */
static cmrscl_status choose(cmrscl_dist_matrix m, cmrscl_dist_exchange *out)
{
    static const char *const names[] = {"messages", "shared", "slices"};
    const char *env = getenv("CMRSCL_DIST_EXCHANGE");
    int asked = -1; /* -1: not asked, else an exchange */
    for (int e = 0; env && *env && e < 3; ++e)
        if (strcmp(env, names[e]) == 0)
            asked = e;
    bool same_host = false;
    cmrscl_status st = one_host(m->comm, &same_host);
    if (st == CMRSCL_OK && env && *env && asked < 0)
        st = cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                            "CMRSCL_DIST_EXCHANGE='%s': expected 'messages', 'shared' or 'slices'",
                            env);
    else if (st == CMRSCL_OK && asked > 0 && !same_host)
        st =
            cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "CMRSCL_DIST_EXCHANGE=%s, but the ranks are on more than one host", env);
    if ((st = cmrs_dist_agree(m->comm, st)) != CMRSCL_OK ||
        (st = cmrs_dist_same_setting(m->comm, asked, "CMRSCL_DIST_EXCHANGE")) != CMRSCL_OK)
        return st;
    /* one_host and the setting are the same on every rank: so is everything below */
    *out = m->plan.ranks == 1 ? CMRSCL_EXCHANGE_MESSAGES /* nothing to exchange */
           : asked >= 0       ? (cmrscl_dist_exchange)asked
           : same_host        ? CMRSCL_EXCHANGE_SHARED
                              : CMRSCL_EXCHANGE_MESSAGES;
    if (*out == CMRSCL_EXCHANGE_MESSAGES || (st = column_layout(m)) != CMRSCL_OK)
        return st;
    bool slices = false;
    if (asked < 0 && (st = slices_pay(m, &slices)) == CMRSCL_OK && slices)
        *out = CMRSCL_EXCHANGE_SLICES;
    return st;
}

/* A buffer over host memory of the window (CL_MEM_USE_HOST_PTR), never enqueued: NVIDIA's
 * driver pins the memory such a buffer covers, and copies between the device and any address
 * in it then run at the pinned speed, not through the driver's staging of pageable memory
 * (docs/dev/PERFORMANCE.md, "shared window"). Elsewhere it costs an object. */
static cmrscl_status cover(cmrscl_dist_matrix m, void *base, size_t bytes, cl_mem *out)
{
    cl_int err;
    *out = clCreateBuffer(m->cl, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, base, &err);
    if (err == CL_SUCCESS)
        return CMRSCL_OK;
    *out = NULL;
    return cmrs_dist_fail(CMRSCL_ERROR_OPENCL, "a buffer over the shared window: OpenCL error %d",
                          (int)err);
}

/* Where this rank's entries go in each receiver's segment: every receiver tells its
 * senders the offset of their part (its nb_recv_at), and the window where that segment
 * starts gives the address. */
static cmrscl_status find_destinations(cmrscl_dist_matrix m)
{
    int nb = m->plan.neighbours, first = MPI_SUCCESS;
    int64_t *offset = calloc((size_t)nb + 1, sizeof *offset);
    m->nb_dest = calloc((size_t)nb + 1, sizeof *m->nb_dest);
    m->nb_cover = calloc((size_t)nb + 1, sizeof *m->nb_cover);
    if (!offset || !m->nb_dest || !m->nb_cover) {
        free(offset);
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory");
    }
    for (int k = 0; k < nb; ++k) {
        MPI_Request *req = &m->requests[2 * k];
        req[0] = req[1] = MPI_REQUEST_NULL;
        int rc = MPI_SUCCESS;
        if (m->nb_recv[k] > 0)
            rc = MPI_Isend(&m->nb_recv_at[k], 1, MPI_INT64_T, m->nb_rank[k], OFFSET_TAG, m->comm,
                           &req[0]);
        if (rc == MPI_SUCCESS && m->nb_send[k] > 0)
            rc = MPI_Irecv(&offset[k], 1, MPI_INT64_T, m->nb_rank[k], OFFSET_TAG, m->comm, &req[1]);
        first = first == MPI_SUCCESS ? rc : first;
    }
    int rc = MPI_Waitall(2 * nb, m->requests, MPI_STATUSES_IGNORE);
    first = first == MPI_SUCCESS ? rc : first;
    size_t vs = cmrs_dist_value_size(m->plan.precision);
    bool slices = m->plan.exchange == CMRSCL_EXCHANGE_SLICES;
    for (int k = 0; first == MPI_SUCCESS && k < nb; ++k) {
        MPI_Aint size = 0;
        int unit = 0;
        void *base = NULL;
        if (slices && m->nb_recv[k] > 0) { /* the sender's slice: where we write from */
            int q = m->nb_rank[k];
            first = MPI_Win_shared_query(m->window, q, &size, &unit, &base);
            int64_t need = (m->col_first[q + 1] - m->col_first[q]) * (int64_t)vs;
            if (first == MPI_SUCCESS && size < need) {
                free(offset);
                return cmrs_dist_fail(CMRSCL_ERROR_COMMUNICATION,
                                      "rank %d's slice segment holds %lld bytes, not %lld", q,
                                      (long long)size, (long long)need);
            }
            m->nb_dest[k] = base;
            if (first == MPI_SUCCESS && size > 0 && cover(m, base, (size_t)size, &m->nb_cover[k])) {
                free(offset);
                return CMRSCL_ERROR_OPENCL; /* cover() said why */
            }
            continue;
        }
        if (slices || m->nb_send[k] == 0)
            continue;
        first = MPI_Win_shared_query(m->window, m->nb_rank[k], &size, &unit, &base);
        if (first == MPI_SUCCESS &&
            (offset[k] < 0 || (offset[k] + m->nb_send[k]) * (int64_t)vs > (int64_t)size)) {
            long long at = (long long)offset[k];
            free(offset);
            return cmrs_dist_fail(CMRSCL_ERROR_COMMUNICATION,
                                  "rank %d's halo segment holds %lld bytes; our %d entries at %lld "
                                  "do not fit",
                                  m->nb_rank[k], (long long)size, m->nb_send[k], at);
        }
        m->nb_dest[k] = (char *)base + vs * (size_t)offset[k];
        if (first == MPI_SUCCESS && size > 0 && cover(m, base, (size_t)size, &m->nb_cover[k])) {
            free(offset);
            return CMRSCL_ERROR_OPENCL; /* cover() said why */
        }
    }
    free(offset);
    return first == MPI_SUCCESS ? CMRSCL_OK
                                : cmrs_dist_fail_mpi(first, "the shared window's segments");
}

cmrscl_status cmrs_window_setup(cmrscl_dist_matrix m)
{
    cmrscl_status st = cmrscl_context_cl(m->ctx, &m->cl, &m->queue);
    if ((st = cmrs_dist_agree(m->comm, st)) == CMRSCL_OK)
        st = choose(m, &m->plan.exchange);
    if (st != CMRSCL_OK || m->plan.exchange == CMRSCL_EXCHANGE_MESSAGES)
        return st;
    free(m->requests); /* four per neighbour: ready and done, each way */
    m->requests = calloc(4 * (size_t)m->plan.neighbours + 1, sizeof *m->requests);
    st = cmrs_dist_agree(
        m->comm,
        m->requests ? CMRSCL_OK : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory"));
    if (st != CMRSCL_OK)
        return st;
    /* Each rank's segment on pages of its own (noncontiguous): its NUMA node's, and no
     * false sharing between a segment's end and the next one's start. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    /* the received halo, or (whole slices) this rank's slice of x */
    int32_t held = m->plan.exchange == CMRSCL_EXCHANGE_SLICES ? m->plan.local_cols : m->plan.halo;
    MPI_Aint bytes = (MPI_Aint)(cmrs_dist_value_size(m->plan.precision) * (size_t)held);
    int rc = MPI_Win_allocate_shared(bytes, 1, info, m->comm, &m->halo_host, &m->window);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        m->window = MPI_WIN_NULL;
        return cmrs_dist_agree(m->comm, cmrs_dist_fail_mpi(rc, "MPI_Win_allocate_shared (halo)"));
    }
    /* A passive epoch for the matrix's lifetime: MPI_Win_sync orders the copies. */
    rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, m->window);
    st = rc == MPI_SUCCESS ? find_destinations(m) : cmrs_dist_fail_mpi(rc, "MPI_Win_lock_all");
    if (st == CMRSCL_OK && bytes > 0)
        st = cover(m, m->halo_host, (size_t)bytes, &m->own_cover);
    return cmrs_dist_agree(m->comm, st);
}

void cmrs_window_free(cmrscl_dist_matrix m)
{
    free(m->col_first), m->col_first = NULL;
    if (m->window == MPI_WIN_NULL)
        return;
    for (int k = 0; m->nb_cover && k < m->plan.neighbours; ++k)
        if (m->nb_cover[k])
            clReleaseMemObject(m->nb_cover[k]);
    if (m->own_cover)
        clReleaseMemObject(m->own_cover);
    MPI_Win_unlock_all(m->window);
    MPI_Win_free(&m->window);
    m->halo_host = NULL;
    free(m->nb_dest), m->nb_dest = NULL;
    free(m->nb_cover), m->nb_cover = NULL;
}

static cmrscl_status keep_first(cmrscl_status a, cmrscl_status b) { return a != CMRSCL_OK ? a : b; }

/* Posts one empty message per neighbour with entries that way: sends (receive false: to
 * those that send us entries, as receivers) or receives (from them). */
static cmrscl_status post_tokens(cmrscl_dist_matrix m, MPI_Request *req, bool to_senders,
                                 bool receive, int tag)
{
    int first = MPI_SUCCESS;
    for (int k = 0; k < m->plan.neighbours; ++k) {
        int count = to_senders ? m->nb_recv[k] : m->nb_send[k], rc = MPI_SUCCESS;
        req[k] = MPI_REQUEST_NULL;
        if (count > 0 && receive)
            rc = MPI_Irecv(NULL, 0, MPI_BYTE, m->nb_rank[k], tag, m->comm, &req[k]);
        else if (count > 0)
            rc = MPI_Isend(NULL, 0, MPI_BYTE, m->nb_rank[k], tag, m->comm, &req[k]);
        if (rc != MPI_SUCCESS)
            req[k] = MPI_REQUEST_NULL, first = first == MPI_SUCCESS ? rc : first;
    }
    return first == MPI_SUCCESS ? CMRSCL_OK
                                : cmrs_dist_fail_mpi(first, "the shared window's messages");
}

/* The next of the requests to complete, or -1 when none is left (MPI_Waitany). */
static int next_done(int n, MPI_Request *req, cmrscl_status *st)
{
    int index = MPI_UNDEFINED;
    int rc = MPI_Waitany(n, req, &index, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        *st = keep_first(*st, cmrs_dist_fail_mpi(rc, "MPI_Waitany (shared window)"));
        return -1;
    }
    return index == MPI_UNDEFINED ? -1 : index;
}

/* The halos: each sender's gathered entries read into each receiver's segment. */
static cmrscl_status halo_exchange(cmrscl_dist_matrix m, cmrscl_status pre, cl_event start,
                                   cl_event *read, product_record *rec)
{
    int nb = m->plan.neighbours;
    size_t vs = cmrs_dist_value_size(m->plan.precision);
    MPI_Request *ready_out = m->requests, *done_in = ready_out + nb;
    MPI_Request *ready_in = done_in + nb, *done_out = ready_in + nb;
    cl_event *reads = calloc((size_t)nb + 1, sizeof *reads);
    cmrscl_status st = reads ? pre : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory");
    *read = NULL;
    for (int k = 0; k < nb; ++k)
        done_out[k] = MPI_REQUEST_NULL;
    /* As a receiver: our segment is free once the previous halo write has run. */
    cl_int err = cmrs_dist_wait(m, 1, &m->last_write);
    if (m->last_write)
        clReleaseEvent(m->last_write), m->last_write = NULL;
    st = keep_first(st, err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "the previous halo write"));
    st = keep_first(st, post_tokens(m, done_in, true, true, DONE_TAG));
    st = keep_first(st, post_tokens(m, ready_out, true, false, READY_TAG));
    st = keep_first(st, post_tokens(m, ready_in, false, true, READY_TAG));
    /* As a sender: each read into a receiver's segment once it is ready, after the gather;
     * order[] keeps the order they were enqueued in, which the side queue runs them in. */
    int *order = calloc((size_t)nb + 1, sizeof *order), enqueued = 0;
    if (!order)
        st = keep_first(st, cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory"));
    for (int k; (k = next_done(nb, ready_in, &st)) >= 0;) {
        err = st == CMRSCL_OK
                  ? clEnqueueReadBuffer(m->side, m->send_values, CL_FALSE,
                                        vs * (size_t)m->nb_send_at[k], vs * (size_t)m->nb_send[k],
                                        m->nb_dest[k], 1, &start, &reads[k])
                  : CL_SUCCESS;
        if (err == CL_SUCCESS && reads[k])
            err = clFlush(m->side), order[enqueued++] = k;
        if (err != CL_SUCCESS)
            st = keep_first(st, cl_fail(err, "clEnqueueReadBuffer (into a shared segment)"));
    }
    for (int i = 0; i < enqueued; ++i) {
        err = cmrs_dist_wait(m, 1, &reads[order[i]]);
        if (err != CL_SUCCESS)
            st = keep_first(st, cl_fail(err, "reading the sent x entries"));
        MPI_Win_sync(m->window);
        int rc = MPI_Isend(NULL, 0, MPI_BYTE, m->nb_rank[order[i]], DONE_TAG, m->comm,
                           &done_out[order[i]]);
        if (rc != MPI_SUCCESS)
            st = keep_first(st, cmrs_dist_fail_mpi(rc, "MPI_Isend (shared window)"));
    }
    /* "done" to every receiver, even after a failure: nobody waits forever */
    for (int k = 0; k < nb; ++k)
        if (m->nb_send[k] > 0 && !reads[k] &&
            MPI_Isend(NULL, 0, MPI_BYTE, m->nb_rank[k], DONE_TAG, m->comm, &done_out[k]) !=
                MPI_SUCCESS)
            done_out[k] = MPI_REQUEST_NULL;
    double t0 = cmrs_dist_seconds(); /* the pack is over: from here on, the exchange alone */
    double t1 = t0;
    /* As a receiver: each neighbour's part to the device as soon as it has landed. The
     * halo buffer is free once `start` has run (it follows the previous remote product);
     * the side queue keeps the writes in order, so the last one's event covers them all. */
    for (int k; (k = next_done(nb, done_in, &st)) >= 0;) {
        MPI_Win_sync(m->window);
        if (st != CMRSCL_OK)
            continue;
        cl_event done = NULL;
        size_t at = vs * (size_t)m->nb_recv_at[k];
        err = clEnqueueWriteBuffer(m->side, m->halo_values, CL_FALSE, at,
                                   vs * (size_t)m->nb_recv[k], (char *)m->halo_host + at,
                                   start ? 1 : 0, start ? &start : NULL, &done);
        if (err == CL_SUCCESS)
            err = clFlush(m->side);
        if (err != CL_SUCCESS)
            st = keep_first(st, cl_fail(err, "clEnqueueWriteBuffer (halo)"));
        if (m->last_write)
            clReleaseEvent(m->last_write);
        m->last_write = done;
    }
    int rc = MPI_Waitall(2 * nb, ready_out, MPI_STATUSES_IGNORE); /* ready_out, then done_in */
    rc = rc == MPI_SUCCESS ? MPI_Waitall(nb, done_out, MPI_STATUSES_IGNORE) : rc;
    if (rc != MPI_SUCCESS)
        st = keep_first(st, cmrs_dist_fail_mpi(rc, "MPI_Waitall (shared window)"));
    if (rec) {
        rec->exchange_s = cmrs_dist_seconds() - t0;
        rec->wait_s = cmrs_dist_seconds() - t1;
    }
    /* The last read's event ends the pack. */
    if (enqueued > 0)
        *read = reads[order[enqueued - 1]], reads[order[enqueued - 1]] = NULL;
    for (int k = 0; k < nb; ++k)
        if (reads[k])
            clReleaseEvent(reads[k]);
    free(order);
    free(reads);
    return st;
}

/* Whole slices: once every receiver has read our previous slice ("ready"), our device reads
 * the whole slice of x into our segment, and "done" goes to every receiver; as a receiver,
 * each sender's slice goes to the device as its "done" arrives, and the halo is gathered from
 * the slices on the device once `start` has run (the previous remote product has read it). */
static cmrscl_status slices_exchange(cmrscl_dist_matrix m, cmrscl_status pre, cl_mem x,
                                     cl_event start, cl_event *read, product_record *rec)
{
    int nb = m->plan.neighbours;
    size_t vs = cmrs_dist_value_size(m->plan.precision);
    MPI_Request *ready_out = m->requests, *done_in = ready_out + nb;
    MPI_Request *ready_in = done_in + nb, *done_out = ready_in + nb;
    *read = NULL;
    for (int k = 0; k < nb; ++k)
        done_out[k] = MPI_REQUEST_NULL;
    cl_int err = cmrs_dist_wait(m, 1, &m->last_write);
    if (m->last_write)
        clReleaseEvent(m->last_write), m->last_write = NULL;
    cmrscl_status st =
        keep_first(pre, err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "the previous halo gather"));
    st = keep_first(st, post_tokens(m, done_in, true, true, DONE_TAG));
    st = keep_first(st, post_tokens(m, ready_out, true, false, READY_TAG));
    st = keep_first(st, post_tokens(m, ready_in, false, true, READY_TAG));
    int rc = MPI_Waitall(nb, ready_in, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS)
        st = keep_first(st, cmrs_dist_fail_mpi(rc, "MPI_Waitall (shared window)"));
    if (st == CMRSCL_OK && m->plan.sent > 0) {
        err = clEnqueueReadBuffer(m->side, x, CL_FALSE, 0, vs * (size_t)m->plan.local_cols,
                                  m->halo_host, start ? 1 : 0, start ? &start : NULL, read);
        if (err == CL_SUCCESS)
            err = cmrs_dist_wait(m, 1, read);
        if (err != CL_SUCCESS)
            st = cl_fail(err, "clEnqueueReadBuffer (this rank's slice)");
        MPI_Win_sync(m->window);
    }
    for (int k = 0; k < nb; ++k) /* "done" to every receiver, even after a failure */
        if (m->nb_send[k] > 0 && MPI_Isend(NULL, 0, MPI_BYTE, m->nb_rank[k], DONE_TAG, m->comm,
                                           &done_out[k]) != MPI_SUCCESS)
            done_out[k] = MPI_REQUEST_NULL;
    double t0 = cmrs_dist_seconds(); /* the pack is over: from here on, the exchange alone */
    for (int k; (k = next_done(nb, done_in, &st)) >= 0;) {
        MPI_Win_sync(m->window);
        int q = m->nb_rank[k];
        size_t count = (size_t)(m->col_first[q + 1] - m->col_first[q]);
        err = st == CMRSCL_OK
                  ? clEnqueueWriteBuffer(m->side, m->slices, CL_FALSE, vs * (size_t)m->slice_at[k],
                                         vs * count, m->nb_dest[k], 0, NULL, NULL)
                  : CL_SUCCESS;
        if (err == CL_SUCCESS && st == CMRSCL_OK)
            err = clFlush(m->side);
        if (err != CL_SUCCESS)
            st = keep_first(st, cl_fail(err, "clEnqueueWriteBuffer (a sender's slice)"));
    }
    if (st == CMRSCL_OK && m->plan.halo > 0)
        st = cmrs_halo_from_slices(m, start, &m->last_write);
    rc = MPI_Waitall(nb, ready_out, MPI_STATUSES_IGNORE);
    rc = rc == MPI_SUCCESS ? MPI_Waitall(nb, done_out, MPI_STATUSES_IGNORE) : rc;
    if (rc != MPI_SUCCESS)
        st = keep_first(st, cmrs_dist_fail_mpi(rc, "MPI_Waitall (shared window)"));
    if (rec)
        rec->exchange_s = rec->wait_s = cmrs_dist_seconds() - t0;
    if (st != CMRSCL_OK) /* no write still reading a sender's segment when "ready" goes next */
        clFinish(m->side);
    return st;
}

cmrscl_status cmrs_window_exchange(cmrscl_dist_matrix m, cmrscl_status pre, cl_mem x,
                                   cl_event start, cl_event *read, product_record *rec)
{
    return m->plan.exchange == CMRSCL_EXCHANGE_SLICES ? slices_exchange(m, pre, x, start, read, rec)
                                                      : halo_exchange(m, pre, start, read, rec);
}
