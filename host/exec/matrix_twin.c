/* matrix_twin.c - a matrix in float made on the device from one in double: the same plan and
 * arrays, its values rounded there. AMG's float cycle multiplies level 0 by it where the
 * caller's double matrix is on the device already: no second conversion of A on the host, no
 * second upload of its indices - the twin holds a reference to each of the double matrix's
 * index arrays, and arrays of its own for what a product or an update writes in place: its
 * values and its tiles' sums. An update that changes an index array (the dictionary's bits
 * dropped, the permutation built: matrix_update.c) replaces it with one of its own, so the
 * other matrix keeps the arrays it was made with. */
#include "convert_launch.h"

#include <stdlib.h>
#include <string.h>

/* A FLOAT-coded matrix's floats copied into `to` (bytes of them). */
static cmrscl_status copy_floats(const launcher *l, cl_mem from, cl_mem to, size_t bytes)
{
    cl_int err = clEnqueueCopyBuffer(l->queue, from, to, 0, 0, bytes, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = cmrs_launch_order_point(l);
    return err == CL_SUCCESS ? CMRSCL_OK
                             : cmrscl_fail_cl(err, "clEnqueueCopyBuffer (a float twin's values)");
}

/* `count` doubles of m's values rounded into the floats of `to` (convert_values, no
 * permutation). */
static cmrscl_status round_doubles(cmrscl_matrix m, launcher *l, size_t count, cl_mem to)
{
    const int index_bits = m->params.index_bits;
    cmrscl_status st =
        cmrs_convert_program(m->ctx, CMRSCL_FLOAT, CMRSCL_DOUBLE, index_bits, &l->program, NULL);
    cl_uint first32 = 0, count32 = (cl_uint)count, no_perm = 0;
    cl_ulong first64 = 0, count64 = count;
    const bool wide = index_bits == 64;
    launch_arg args[] = {wide ? ARG(first64) : ARG(first32),
                         wide ? ARG(count64) : ARG(count32),
                         ARG(no_perm),
                         ARG(m->buf[BUF_VALUES]), /* (not read without the permutation) */
                         ARG(m->buf[BUF_VALUES]),
                         wide ? ARG(first64) : ARG(first32),
                         ARG(to)};
    return st == CMRSCL_OK ? cmrs_launch_run(l, "convert_values", args, COUNT(args), count, NULL)
                           : st;
}

/* The twin's values, its own (an update writes them in place): m's rounded to float on the
 * device (every stored value - the entries and their padding, or the dictionary and the
 * diagonal, each one rounded as the host rounds a double), or a copy of m's floats where it
 * stores its doubles as floats (those a plain float matrix stores as they are). */
static cmrscl_status round_values(cmrscl_matrix m, cmrscl_params *p, cl_mem *out)
{
    const bool as_float = m->params.values == CMRSCL_VALUES_FLOAT;
    size_t bytes = cmrs_matrix_values_bytes(&m->params, (size_t)m->params.stored_entries),
           count = bytes / (as_float ? sizeof(float) : sizeof(double));
    cmrscl_status st = CMRSCL_OK;
    p->device_bytes += count * sizeof(float);
    if (as_float)
        p->values = CMRSCL_VALUES_PLAIN;
    *out = cmrs_launch_new_buffer(m->ctx, CL_MEM_READ_WRITE, count * sizeof(float), NULL, &st,
                                  "values");
    launcher l = cmrs_launcher_make(m->ctx);
    if (st == CMRSCL_OK)
        st = as_float ? copy_floats(&l, m->buf[BUF_VALUES], *out, bytes)
                      : round_doubles(m, &l, count, *out);
    if (st != CMRSCL_OK && *out)
        clReleaseMemObject(*out), *out = NULL;
    return st;
}

/* The twin's own tiles' sums (and the last tile's counts, zero), as large as m's. */
static cmrscl_status own_partial(cmrscl_matrix m, cmrscl_matrix t)
{
    size_t bytes = 0;
    if (!m->buf[BUF_PARTIAL] || clGetMemObjectInfo(m->buf[BUF_PARTIAL], CL_MEM_SIZE, sizeof bytes,
                                                   &bytes, NULL) != CL_SUCCESS)
        return CMRSCL_OK;
    cmrscl_status st = CMRSCL_OK;
    t->buf[BUF_PARTIAL] =
        cmrs_launch_new_buffer(m->ctx, CL_MEM_READ_WRITE, bytes, NULL, &st, "tile sums");
    launcher l = cmrs_launcher_make(m->ctx);
    if (st == CMRSCL_OK)
        st = cmrs_launch_zero(&l, t->buf[BUF_PARTIAL], bytes);
    t->params.device_bytes += bytes;
    return st;
}

cmrscl_status cmrs_matrix_float_twin(cmrscl_matrix m, cmrscl_matrix *out)
{
    *out = NULL;
    if (m->params.precision != CMRSCL_DOUBLE || m->renumbering)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "a float twin is made from a double matrix in the caller's numbering");
    cmrscl_matrix t;
    cmrscl_status st = cmrs_matrix_new(m->ctx, &t);
    if (st != CMRSCL_OK)
        return st;
    pthread_mutex_lock(&m->lock); /* (a values update replaces m's arrays under it) */
    cmrscl_params *p = &t->params;
    *p = m->params;
    p->precision = CMRSCL_FLOAT;
    p->device_bytes = p->transpose_device_bytes = 0; /* (what the twin alone holds) */
    t->strip_groups = m->strip_groups, t->tile_groups = m->tile_groups;
    t->first_tile_group = m->first_tile_group;
    for (int i = 0; i < BUF_COUNT; ++i) /* the indices shared; values, sums, staging its own */
        if (m->buf[i] && i != BUF_VALUES && i != BUF_PARTIAL && i != BUF_STAGING)
            clRetainMemObject(t->buf[i] = m->buf[i]);
    st = round_values(m, p, &t->buf[BUF_VALUES]);
    if (st == CMRSCL_OK)
        st = own_partial(m, t);
    if (st == CMRSCL_OK)
        st = cmrs_update_share(m, t);
    pthread_mutex_unlock(&m->lock);
    if (st == CMRSCL_OK) {
        cmrs_plan_bytes_per_entry(p);
        p->block_vectors = cmrs_plan_block_vectors(p);
        st = cmrs_plan_build_options(&m->ctx->info, p);
    }
    if (st == CMRSCL_OK)
        st = cmrs_matrix_create_kernels(t);
    if (st == CMRSCL_OK && p->reduce == CMRSCL_REDUCE_SUBGROUP) /* the width the plan holds */
        st = cmrs_subgroups_check_kernel(m->ctx, t->kernel, p);
    if (st != CMRSCL_OK) {
        cmrscl_matrix_free(t);
        return st;
    }
    *out = t;
    return CMRSCL_OK;
}
