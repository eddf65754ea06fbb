/* recording.c - a product recorded once and enqueued many times (cmrscl_spmv_record): a
 * solver loop's product without its per-call set-up. Where command buffers are asked for
 * and the device offers them (runtime/command_buffer.c) the product's launches - the family's
 * kernel, then cmrs_combine after it by a sync point - are recorded with their arguments, and a
 * replay is one clEnqueueCommandBufferKHR. Elsewhere a replay is cmrs_spmv_enqueue with the
 * recorded arguments, skipping the checks made when recording. A recorded command keeps
 * the arguments it was recorded with, so the matrix's kernels may take other arguments in
 * between. Kernels made again after recording (a values update storing the values plain)
 * make the next replay record again. */
#include "exec/exec.h"

#include <stdlib.h>

struct cmrscl_recording_s {
    cmrscl_matrix m;
    double alpha, beta;
    cl_mem x, y;
    const command_buffer_api *api; /* NULL: replays enqueue the kernels */
    cl_command_buffer_khr buffer;
    unsigned kernels_made; /* m->kernels_made when recorded */
    const char *why;       /* a command buffer that could not be made: NULL, or why not */
};

/* Records the product in a new command buffer (under m->lock). */
static cmrscl_status record(cmrscl_recording r)
{
    cmrscl_matrix m = r->m;
    const command_buffer_api *api = r->api;
    if (r->buffer)
        api->release(r->buffer), r->buffer = NULL;
    cl_int err;
    cl_command_buffer_khr b = api->create(1, &m->ctx->queue, NULL, &err);
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clCreateCommandBufferKHR");
    size_t local, global, clocal, cglobal;
    cmrs_spmv_sizes(m, &local, &global, &clocal, &cglobal);
    cl_sync_point_khr main_done = 0;
    err = cmrs_spmv_set_args(m, r->alpha, r->x, r->beta, r->y);
    if (err == CL_SUCCESS)
        err = api->ndrange(b, NULL, NULL, m->kernel, 1, NULL, &global, &local, 0, NULL, &main_done,
                           NULL);
    if (err == CL_SUCCESS && m->combine) /* after the tiles' sums */
        err = api->ndrange(b, NULL, NULL, m->combine, 1, NULL, &cglobal, &clocal, 1, &main_done,
                           NULL, NULL);
    if (err == CL_SUCCESS)
        err = api->finalize(b);
    if (err != CL_SUCCESS) {
        api->release(b);
        return cmrscl_fail_cl(err, "recording the product in a command buffer");
    }
    r->buffer = b;
    r->kernels_made = m->kernels_made;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_spmv_record(cmrscl_matrix m, double alpha, cl_mem x, double beta, cl_mem y,
                                 cmrscl_recording *out)
{
    if (out)
        *out = NULL;
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    product_desc d;
    cmrscl_status st = cmrs_product_describe(m, CMRSCL_NON_TRANSPOSE, false, CMRSCL_COLUMN_MAJOR, 1,
                                             0, 0, alpha, beta, &d);
    if (st == CMRSCL_OK)
        st = cmrs_product_check(&d, x, y, NULL, 0, NULL);
    if (st == CMRSCL_OK)
        st = cmrs_renumber_refuse(m, "a recorded product (cmrscl_spmv_record)");
    if (st != CMRSCL_OK)
        return st;
    cmrscl_recording r = calloc(1, sizeof *r);
    if (!r)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a recording");
    *r = (struct cmrscl_recording_s){m, alpha, beta, x, y, NULL, NULL, 0, NULL};
    const command_buffer_api *api = cmrs_command_buffer_support(m->ctx);
    if (api->create && m->params.rows > 0) { /* no rows: a replay is a marker (cmrs_spmv_enqueue) */
        r->api = api;
        pthread_mutex_lock(&m->lock);
        if (record(r) != CMRSCL_OK) /* e.g. a queue the device's command buffers refuse */
            r->api = NULL, r->why = "the command buffer could not be made (a queue or a "
                                    "kernel the device refused): the kernels are enqueued";
        pthread_mutex_unlock(&m->lock);
    }
    *out = r;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_recording_enqueue(cmrscl_recording r, cl_uint num_wait,
                                       const cl_event *wait_list, cl_event *event)
{
    if (event)
        *event = NULL;
    if (!r)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "recording is NULL");
    if ((num_wait > 0) != (wait_list != NULL))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "num_wait and wait_list disagree");
    cmrscl_matrix m = r->m;
    cmrscl_status st = CMRSCL_OK;
    pthread_mutex_lock(&m->lock);
    if (!r->api) {
        st = cmrs_spmv_enqueue(m, r->alpha, r->x, r->beta, r->y, m->ctx->queue, num_wait, wait_list,
                               NULL, event);
    } else {
        if (r->kernels_made != m->kernels_made)
            st = record(r);
        cl_int err = st == CMRSCL_OK
                         ? r->api->enqueue(0, NULL, r->buffer, num_wait, wait_list, event)
                         : CL_SUCCESS;
        if (err != CL_SUCCESS)
            st = cmrscl_fail_cl(err, "clEnqueueCommandBufferKHR");
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

int cmrscl_recording_is_command_buffer(cmrscl_recording r, const char **reason)
{
    if (reason)
        *reason = !r                       ? "recording is NULL"
                  : r->m->params.rows == 0 ? "a matrix without rows: nothing to record"
                                           : cmrs_command_buffer_support(r->m->ctx)->why;
    return r && r->api ? 1 : 0;
}

void cmrscl_recording_free(cmrscl_recording r)
{
    if (!r)
        return;
    if (r->buffer)
        r->api->release(r->buffer);
    free(r);
}
