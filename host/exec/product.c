/* product.c - the public products as one descriptor. cmrscl_spmv, _op, _host, _host_op, _time,
 * _time_op and cmrscl_spmm, _host, _time all describe y = alpha*op(A)*X + beta*Y for one
 * vector or a block of k, and run it one of three ways: enqueued on a queue, timed, or on host
 * arrays. A product is described and checked once (its vectors against op(A)'s shape), op
 * resolved (A^T: transpose.c, held under its lock while the product runs), and launched by
 * cmrs_spmm_enqueue - which hands one plain vector to the single product (spmv.c). */
#include "exec/exec.h"

#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Elements of a block of `length` rows and k vectors with leading dimension ld: up to and
 * including its last element; 0 when empty. */
static bool block_elements(cmrscl_dense_order order, size_t length, size_t k, size_t ld,
                           size_t *out)
{
    size_t lines = order == CMRSCL_ROW_MAJOR ? length : k,
           last = order == CMRSCL_ROW_MAJOR ? k : length;
    *out = 0;
    if (lines == 0 || last == 0)
        return true;
    return !__builtin_mul_overflow(lines - 1, ld, out) && !__builtin_add_overflow(*out, last, out);
}

/* X and Y of a block of k vectors against op(A)'s rows and cols, the leading dimensions with 0
 * resolved. */
static cmrscl_status block_shape(cmrscl_precision precision, int32_t rows, int32_t cols,
                                 cmrscl_dense_order order, int k, size_t ldx, size_t ldy,
                                 block_args *b)
{
    if (order != CMRSCL_ROW_MAJOR && order != CMRSCL_COLUMN_MAJOR)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "order %d: expected CMRSCL_ROW_MAJOR or CMRSCL_COLUMN_MAJOR",
                           (int)order);
    if (k < 1)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "k = %d vectors: expected at least 1", k);
    bool rm = order == CMRSCL_ROW_MAJOR;
    size_t least_x = rm ? (size_t)k : (size_t)cols, least_y = rm ? (size_t)k : (size_t)rows;
    b->order = order;
    b->k = k;
    b->ldx = ldx ? ldx : least_x;
    b->ldy = ldy ? ldy : least_y;
    if (b->ldx < least_x || b->ldy < least_y)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "leading dimensions ldx %zu, ldy %zu: at least %zu and %zu for %s "
                           "blocks of %d vectors",
                           ldx, ldy, least_x, least_y, rm ? "row-major" : "column-major", k);
    size_t vs = cmrscl_precision_size(precision), xn, yn;
    if (!block_elements(order, (size_t)cols, (size_t)k, b->ldx, &xn) ||
        !block_elements(order, (size_t)rows, (size_t)k, b->ldy, &yn) ||
        __builtin_mul_overflow(xn, vs, &b->x_bytes) || __builtin_mul_overflow(yn, vs, &b->y_bytes))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "the blocks' sizes overflow size_t");
    return CMRSCL_OK;
}

cmrscl_status cmrs_product_describe(cmrscl_matrix m, cmrscl_operation op, bool block,
                                    cmrscl_dense_order order, int k, size_t ldx, size_t ldy,
                                    double alpha, double beta, product_desc *out)
{
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    if (op != CMRSCL_NON_TRANSPOSE && op != CMRSCL_TRANSPOSE)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "operation %d is neither CMRSCL_NON_TRANSPOSE nor CMRSCL_TRANSPOSE",
                           (int)op);
    if (block && m->renumbering)
        return cmrs_renumber_refuse(m, "the block product (cmrscl_spmm)");
    *out = (product_desc){.a = m, .m = m, .op = op, .alpha = alpha, .beta = beta, .block = block};
    const cmrscl_params *p = &m->params;
    bool t = op == CMRSCL_TRANSPOSE;
    out->rows = t ? p->cols : p->rows;
    out->cols = t ? p->rows : p->cols;
    return block_shape(p->precision, out->rows, out->cols, order, k, ldx, ldy, &out->b);
}

cmrscl_status cmrs_product_check(const product_desc *d, cl_mem x, cl_mem y, cl_command_queue queue,
                                 cl_uint num_wait, const cl_event *wait_list)
{
    if ((num_wait > 0) != (wait_list != NULL))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "num_wait and wait_list disagree");
    const char *xn = d->block ? "X" : "x", *yn = d->block ? "Y" : "y";
    /* With no rows the product is empty: nothing is read, so x may be NULL too. */
    cl_context context = d->a->ctx->context;
    cmrscl_status st = cmrs_buffer_check(context, x, d->rows > 0 ? d->b.x_bytes : 0, xn);
    if (st == CMRSCL_OK)
        st = cmrs_buffer_check(context, y, d->b.y_bytes, yn);
    if (st == CMRSCL_OK && queue)
        st = cmrs_spmv_check_queue(d->a, queue);
    if (st == CMRSCL_OK && x && x == y && d->b.x_bytes && d->b.y_bytes)
        st = cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "%s and %s must be different buffers", xn,
                         yn);
    return st;
}

/* op resolved: the matrix whose kernels run (A, or A^T held under its lock until release). */
static cmrscl_status resolve(product_desc *d)
{
    return d->op == CMRSCL_TRANSPOSE ? cmrs_transpose_hold(d->a, &d->m) : CMRSCL_OK;
}

static cmrscl_status release(const product_desc *d, cmrscl_status st)
{
    if (d->op == CMRSCL_TRANSPOSE)
        cmrs_transpose_let_go(d->a);
    return st;
}

/* One product enqueued under the matrix's lock (argument setting + enqueue, as every product)
 * on `queue` (NULL: the matrix's) after the wait list; first and last as cmrs_spmv_enqueue's
 * (NULL: not asked for). */
static cmrscl_status launch_kernels(const product_desc *d, double alpha, cl_mem x, double beta,
                                    cl_mem y, cl_command_queue queue, cl_uint num_wait,
                                    const cl_event *wait_list, cl_event *first, cl_event *last)
{
    cmrscl_matrix m = d->m;
    pthread_mutex_lock(&m->lock);
    cmrscl_status st =
        cmrs_spmm_enqueue(m, &d->b, alpha, x, beta, y, queue, num_wait, wait_list, first, last);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* A renumbered matrix (matrix_renumber.c): x' = P x, t = op(P A P^T) x', y = alpha P^T t +
 * beta y - op(A) = P^T op(P A P^T) P either way, the matrix being square. first is the gather's
 * event, last the scatter's. */
static cmrscl_status launch_renumbered(const product_desc *d, cl_mem x, cl_mem y,
                                       cl_command_queue queue, cl_uint num_wait,
                                       const cl_event *wait_list, cl_event *first, cl_event *last)
{
    cl_mem xr, t;
    cmrs_renumber_hold(d->a); /* then d->m's lock, in launch_kernels: never the other way */
    cmrs_renumber_vectors(d->a, &xr, &t);
    cl_event gathered = NULL, multiplied = NULL;
    cmrscl_status st = cmrs_renumber_gather(d->a, queue, x, xr, num_wait, wait_list, &gathered);
    if (st == CMRSCL_OK)
        st = launch_kernels(d, 1.0, xr, 0.0, t, queue, 1, &gathered, NULL, &multiplied);
    if (st == CMRSCL_OK)
        st = cmrs_renumber_scatter(d->a, queue, d->alpha, t, d->beta, y, 1, &multiplied, last);
    cmrs_renumber_let_go(d->a);
    if (st == CMRSCL_OK && first)
        *first = gathered, gathered = NULL;
    if (gathered)
        clReleaseEvent(gathered);
    if (multiplied)
        clReleaseEvent(multiplied);
    return st;
}

static cmrscl_status launch(const product_desc *d, cl_mem x, cl_mem y, cl_command_queue queue,
                            cl_uint num_wait, const cl_event *wait_list, cl_event *first,
                            cl_event *last)
{
    queue = queue ? queue : d->a->ctx->queue;
    if (d->a->renumbering && d->rows > 0)
        return launch_renumbered(d, x, y, queue, num_wait, wait_list, first, last);
    return launch_kernels(d, d->alpha, x, d->beta, y, queue, num_wait, wait_list, first, last);
}

/* ---- enqueued ---- */

static cmrscl_status enqueue(product_desc *d, cl_mem x, cl_mem y, cl_command_queue queue,
                             cl_uint num_wait, const cl_event *wait_list, cl_event *event)
{
    cmrscl_status st = cmrs_product_check(d, x, y, queue, num_wait, wait_list);
    if (st == CMRSCL_OK)
        st = resolve(d);
    if (st != CMRSCL_OK)
        return st;
    return release(d, launch(d, x, y, queue, num_wait, wait_list, NULL, event));
}

cmrscl_status cmrscl_spmv_op(cmrscl_matrix m, cmrscl_operation op, double alpha, cl_mem x,
                             double beta, cl_mem y, cl_command_queue queue, cl_uint num_wait,
                             const cl_event *wait_list, cl_event *event)
{
    if (event)
        *event = NULL;
    product_desc d;
    cmrscl_status st =
        cmrs_product_describe(m, op, false, CMRSCL_COLUMN_MAJOR, 1, 0, 0, alpha, beta, &d);
    return st == CMRSCL_OK ? enqueue(&d, x, y, queue, num_wait, wait_list, event) : st;
}

cmrscl_status cmrscl_spmv(cmrscl_matrix m, double alpha, cl_mem x, double beta, cl_mem y,
                          cl_command_queue queue, cl_uint num_wait, const cl_event *wait_list,
                          cl_event *event)
{
    return cmrscl_spmv_op(m, CMRSCL_NON_TRANSPOSE, alpha, x, beta, y, queue, num_wait, wait_list,
                          event);
}

cmrscl_status cmrscl_spmm(cmrscl_matrix m, cmrscl_dense_order order, int k, double alpha, cl_mem x,
                          size_t ldx, double beta, cl_mem y, size_t ldy, cl_command_queue queue,
                          cl_uint num_wait, const cl_event *wait_list, cl_event *event)
{
    if (event)
        *event = NULL;
    product_desc d;
    cmrscl_status st =
        cmrs_product_describe(m, CMRSCL_NON_TRANSPOSE, true, order, k, ldx, ldy, alpha, beta, &d);
    return st == CMRSCL_OK ? enqueue(&d, x, y, queue, num_wait, wait_list, event) : st;
}

/* ---- timed ---- */

/* Device time of each of n products from its first and last events. */
static cmrscl_status product_times(cl_event *first, cl_event *last, int n, double *ms)
{
    for (int i = 0; i < n; ++i) {
        cl_int err = cmrs_event_ms(first[i], last[i], &ms[i]);
        if (err != CL_SUCCESS)
            return cmrscl_fail_cl(err, "clGetEventProfilingInfo");
    }
    return CMRSCL_OK;
}

static cmrscl_status check_timing(int warmup, int repetitions, const cmrscl_timing *out)
{
    if (!out || warmup < 0 || repetitions < 1)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "out is NULL, or warmup %d < 0, or repetitions %d < 1", warmup,
                           repetitions);
    return CMRSCL_OK;
}

/* `warmup` products, then `repetitions` timed by their events and as many back to back
 * (cmrscl_timing; the arguments checked by the caller). */
static cmrscl_status time_products(const product_desc *d, cl_mem x, cl_mem y, int warmup,
                                   int repetitions, cmrscl_timing *out)
{
    cmrscl_status st = CMRSCL_OK;
    cl_command_queue q = d->m->ctx->queue;
    cl_command_queue_properties props = 0;
    clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    if (!(props & CL_QUEUE_PROFILING_ENABLE))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "timing needs a queue with CL_QUEUE_PROFILING_ENABLE");
    int n = repetitions;
    cl_event *first = calloc((size_t)n, sizeof *first), *last = calloc((size_t)n, sizeof *last);
    double *ms = calloc((size_t)n, sizeof *ms);
    if (!first || !last || !ms)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d timing events", n);
    for (int i = 0; st == CMRSCL_OK && i < warmup; ++i)
        st = launch(d, x, y, NULL, 0, NULL, NULL, NULL);
    for (int i = 0; st == CMRSCL_OK && i < n; ++i)
        st = launch(d, x, y, NULL, 0, NULL, &first[i], &last[i]);
    cl_int err = clFinish(q);
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clFinish");
    if (st == CMRSCL_OK)
        st = product_times(first, last, n, ms);
    for (int i = 0; first && last && i < n; ++i) {
        if (first[i])
            clReleaseEvent(first[i]);
        if (last[i])
            clReleaseEvent(last[i]);
    }
    /* Back to back: what a solver loop sees, launch overhead included. */
    double t0 = cmrscl_seconds();
    for (int i = 0; st == CMRSCL_OK && i < n; ++i)
        st = launch(d, x, y, NULL, 0, NULL, NULL, NULL);
    err = clFinish(q);
    double loop = cmrscl_seconds() - t0;
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clFinish");
    if (st == CMRSCL_OK) {
        qsort(ms, (size_t)n, sizeof *ms, compare_doubles);
        out->warmup = warmup;
        out->repetitions = n;
        out->min_ms = ms[0];
        out->median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
        out->loop_ms = loop * 1e3 / n;
    }
    free(first), free(last), free(ms);
    return st;
}

static cmrscl_status timed(product_desc *d, cl_mem x, cl_mem y, int warmup, int repetitions,
                           cmrscl_timing *out)
{
    cmrscl_status st = cmrs_product_check(d, x, y, NULL, 0, NULL);
    if (st == CMRSCL_OK) /* before A^T is built for a call that would fail */
        st = check_timing(warmup, repetitions, out);
    if (st == CMRSCL_OK)
        st = resolve(d);
    if (st != CMRSCL_OK)
        return st;
    return release(d, time_products(d, x, y, warmup, repetitions, out));
}

cmrscl_status cmrscl_spmv_time_op(cmrscl_matrix m, cmrscl_operation op, double alpha, cl_mem x,
                                  double beta, cl_mem y, int warmup, int repetitions,
                                  cmrscl_timing *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    product_desc d;
    cmrscl_status st =
        cmrs_product_describe(m, op, false, CMRSCL_COLUMN_MAJOR, 1, 0, 0, alpha, beta, &d);
    return st == CMRSCL_OK ? timed(&d, x, y, warmup, repetitions, out) : st;
}

cmrscl_status cmrscl_spmv_time(cmrscl_matrix m, double alpha, cl_mem x, double beta, cl_mem y,
                               int warmup, int repetitions, cmrscl_timing *out)
{
    return cmrscl_spmv_time_op(m, CMRSCL_NON_TRANSPOSE, alpha, x, beta, y, warmup, repetitions,
                               out);
}

cmrscl_status cmrscl_spmm_time(cmrscl_matrix m, cmrscl_dense_order order, int k, double alpha,
                               cl_mem x, size_t ldx, double beta, cl_mem y, size_t ldy, int warmup,
                               int repetitions, cmrscl_timing *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    product_desc d;
    cmrscl_status st =
        cmrs_product_describe(m, CMRSCL_NON_TRANSPOSE, true, order, k, ldx, ldy, alpha, beta, &d);
    return st == CMRSCL_OK ? timed(&d, x, y, warmup, repetitions, out) : st;
}

/* ---- on host arrays ---- */

/* x and y copied into buffers (y only when it is read, or parts of it must come back as they
 * were), the product enqueued on them under the matrix's lock, y read back after its event. */
static cmrscl_status on_host(product_desc *d, const void *x, void *y)
{
    const block_args *b = &d->b;
    if (b->y_bytes == 0)
        return CMRSCL_OK;
    if ((b->x_bytes && !x) || !y)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           d->block ? "X or Y is NULL" : "x or y is NULL");
    /* Y goes in unless it is written whole without being read: the elements between its rows
     * or vectors (ld above the packed one) come back as they were */
    size_t packed = cmrscl_precision_size(d->a->params.precision) * (size_t)d->rows * (size_t)b->k;
    bool y_in = d->beta != 0.0 || b->y_bytes != packed;
    cmrscl_status st = resolve(d);
    if (st != CMRSCL_OK)
        return st;
    cmrscl_matrix m = d->m;
    cl_context context = m->ctx->context;
    cl_int err = CL_SUCCESS;
    cl_mem xbuf = NULL, ybuf = NULL;
    if (b->x_bytes)
        xbuf = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b->x_bytes,
                              (void *)x, &err);
    if (err == CL_SUCCESS)
        ybuf = clCreateBuffer(context, CL_MEM_READ_WRITE | (y_in ? CL_MEM_COPY_HOST_PTR : 0),
                              b->y_bytes, y_in ? y : NULL, &err);
    st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clCreateBuffer (x/y)");
    /* The read waits on the product's event: a caller's queue may be out of order. */
    cl_event done = NULL;
    if (st == CMRSCL_OK)
        st = launch(d, xbuf, ybuf, NULL, 0, NULL, NULL, &done);
    if (st == CMRSCL_OK) {
        err = clEnqueueReadBuffer(m->ctx->queue, ybuf, CL_TRUE, 0, b->y_bytes, y, 1, &done, NULL);
        if (err != CL_SUCCESS)
            st = cmrscl_fail_cl(err, "clEnqueueReadBuffer (y)");
    }
    if (done)
        clReleaseEvent(done);
    if (xbuf)
        clReleaseMemObject(xbuf);
    if (ybuf)
        clReleaseMemObject(ybuf);
    return release(d, st);
}

cmrscl_status cmrscl_spmv_host_op(cmrscl_matrix m, cmrscl_operation op, double alpha, const void *x,
                                  double beta, void *y)
{
    product_desc d;
    cmrscl_status st =
        cmrs_product_describe(m, op, false, CMRSCL_COLUMN_MAJOR, 1, 0, 0, alpha, beta, &d);
    return st == CMRSCL_OK ? on_host(&d, x, y) : st;
}

cmrscl_status cmrscl_spmv_host(cmrscl_matrix m, double alpha, const void *x, double beta, void *y)
{
    return cmrscl_spmv_host_op(m, CMRSCL_NON_TRANSPOSE, alpha, x, beta, y);
}

cmrscl_status cmrscl_spmm_host(cmrscl_matrix m, cmrscl_dense_order order, int k, double alpha,
                               const void *x, size_t ldx, double beta, void *y, size_t ldy)
{
    product_desc d;
    cmrscl_status st =
        cmrs_product_describe(m, CMRSCL_NON_TRANSPOSE, true, order, k, ldx, ldy, alpha, beta, &d);
    return st == CMRSCL_OK ? on_host(&d, x, y) : st;
}
