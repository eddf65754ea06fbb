/* spmm.c - launching Y = alpha*A*X + beta*Y for a block of k vectors (cl/cmrs_spmm.cl):
 * argument checks against the matrix, the launch's shape from the vectors and the device's
 * local memory, its kernels built on first use and kept per shape, launches of up to
 * SPMM_MAX_VECTORS vectors each, and the host and timing forms. */
#include "exec/exec.h"

#include <stdlib.h>
#include <string.h>

/* Vectors one launch takes at most: 32 lanes x 2 each. A wider block is several launches,
 * each reading the matrix once; more vectors per lane would hold more sums per lane (local
 * memory, registers) for a share of the matrix's bytes that is small by then. */
#define SPMM_MAX_VECTORS 64
#define SPMM_WARP 32     /* lanes per strip: the width of NVIDIA's warp */
#define SPMM_MAX_WARPS 4 /* warps per work-group at most */

/* The shape of one launch: the warp layer's backend, lanes per strip, lanes sharing one entry
 * (each taking vec_per_lane vectors), work-group size. */
typedef struct spmm_shape {
    int reduce, warp, vec_lanes, vec_per_lane, work_group_size;
} spmm_shape;

struct spmm_kernel {
    char options[320]; /* the -D string: the matrix's layout (an update may change it) + shape */
    cl_kernel kernel;
    struct spmm_kernel *next;
};

void spmm_kernels_free(struct spmm_kernel *k)
{
    while (k) {
        struct spmm_kernel *next = k->next;
        clReleaseKernel(k->kernel);
        free(k);
        k = next;
    }
}

static int pow2_at_least(int n)
{
    int p = 1;
    while (p < n)
        p *= 2;
    return p;
}

/* The shape for n vectors (1 .. SPMM_MAX_VECTORS): as many of them as lanes allow, the sums
 * of each warp (local slots: HEIGHT x vectors per lane x lanes) within half the local
 * memory of a work-group, so two groups can share a compute unit. The launch then covers
 * vec_lanes x vec_per_lane of the n vectors, maybe fewer. */
static cmrscl_status spmm_shape_for(cmrscl_matrix m, int n, spmm_shape *out)
{
    const cmrscl_device_info *dev = &m->ctx->info;
    const cmrscl_params *p = &m->params;
    size_t elt = cmrscl_precision_size(p->precision), budget = dev->local_mem_bytes / 2;
    spmm_shape s = {dev->warp_shuffle ? CMRS_REDUCE_SHUFFLE : CMRS_REDUCE_LOCAL, SPMM_WARP, 0, 0,
                    0};
    while (s.warp > 1 && (unsigned)s.warp > dev->max_work_group_size)
        s.warp /= 2;
    for (;;) {
        s.vec_lanes = pow2_at_least(n) < s.warp ? pow2_at_least(n) : s.warp;
        s.vec_per_lane = s.vec_per_lane ? s.vec_per_lane : (n + s.vec_lanes - 1) / s.vec_lanes;
        bool slots = p->kernel != CMRSCL_KERNEL_SLICE && (p->height > 1 || s.vec_lanes < s.warp);
        size_t warp_bytes =
            slots ? (size_t)p->height * (size_t)s.vec_per_lane * (size_t)s.warp * elt : 0;
        if (warp_bytes <= budget || (warp_bytes <= dev->local_mem_bytes && s.warp == 1)) {
            int warps = SPMM_MAX_WARPS;
            while (warps > 1 && ((size_t)warps * warp_bytes > budget ||
                                 (unsigned)(warps * s.warp) > dev->max_work_group_size))
                warps /= 2;
            s.work_group_size = warps * s.warp;
            /* NVIDIA's shuffles need whole hardware warps in a group; narrower: barriers */
            if (s.reduce == CMRS_REDUCE_SHUFFLE && s.work_group_size % 32 != 0)
                s.reduce = CMRS_REDUCE_LOCAL;
            *out = s;
            return CMRSCL_OK;
        }
        if (s.vec_per_lane > 1)
            s.vec_per_lane = 1; /* fewer vectors per launch */
        else if (s.warp > 1)
            s.warp /= 2;
        else
            return cmrscl_fail(CMRSCL_ERROR_DEVICE_LIMIT,
                               "the block product's sums of a strip of %d rows do not fit the "
                               "device's %llu bytes of local memory",
                               p->height, (unsigned long long)dev->local_mem_bytes);
    }
}

/* The kernel of shape s for the matrix's current layout: kept, or built now. Under m->lock. */
static cmrscl_status spmm_kernel(cmrscl_matrix m, const spmm_shape *s, cl_kernel *out)
{
    char options[320];
    int n = plan_spmm_options(&m->params, s->reduce, s->warp, s->work_group_size, s->vec_lanes,
                              s->vec_per_lane, options, sizeof options);
    if (n < 0 || (size_t)n >= sizeof options)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                           "the block product's build options are too long");
    for (struct spmm_kernel *k = m->spmm; k; k = k->next)
        if (!strcmp(k->options, options)) {
            *out = k->kernel;
            return CMRSCL_OK;
        }
    cl_program prog;
    double seconds;
    cmrscl_program_source from;
    cmrscl_status st = program_get(m->ctx, "cmrs_spmm.cl", options, &prog, &seconds, &from);
    if (st != CMRSCL_OK)
        return st;
    cl_int err;
    cl_kernel kernel = clCreateKernel(prog, "cmrs_spmm", &err);
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clCreateKernel (cmrs_spmm)");
    size_t max_wg = 0;
    clGetKernelWorkGroupInfo(kernel, m->ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg,
                             &max_wg, NULL);
    struct spmm_kernel *k = calloc(1, sizeof *k);
    if (!k || (max_wg && max_wg < (size_t)s->work_group_size)) {
        clReleaseKernel(kernel);
        free(k);
        return k ? cmrscl_fail(CMRSCL_ERROR_DEVICE_LIMIT,
                               "the block product's kernel runs at most %zu work-items per "
                               "group on this device, fewer than its %d",
                               max_wg, s->work_group_size)
                 : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a kernel");
    }
    memcpy(k->options, options, sizeof options);
    k->kernel = kernel;
    k->next = m->spmm;
    m->spmm = k;
    *out = kernel;
    return CMRSCL_OK;
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

/* The block product's arguments, checked; the leading dimensions with 0 resolved. */
typedef struct block_args {
    cmrscl_dense_order order;
    int k;
    size_t ldx, ldy;
    size_t x_elements, y_elements;
} block_args;

static cmrscl_status check_block(cmrscl_matrix m, cmrscl_dense_order order, int k, size_t ldx,
                                 size_t ldy, block_args *b)
{
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    if (order != CMRSCL_ROW_MAJOR && order != CMRSCL_COLUMN_MAJOR)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "order %d: expected CMRSCL_ROW_MAJOR or CMRSCL_COLUMN_MAJOR",
                           (int)order);
    if (k < 1)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "k = %d vectors: expected at least 1", k);
    const cmrscl_params *p = &m->params;
    bool rm = order == CMRSCL_ROW_MAJOR;
    size_t least_x = rm ? (size_t)k : (size_t)p->cols, least_y = rm ? (size_t)k : (size_t)p->rows;
    b->order = order;
    b->k = k;
    b->ldx = ldx ? ldx : least_x;
    b->ldy = ldy ? ldy : least_y;
    if (b->ldx < least_x || b->ldy < least_y)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "leading dimensions ldx %zu, ldy %zu: at least %zu and %zu for %s "
                           "blocks of %d vectors",
                           ldx, ldy, least_x, least_y, rm ? "row-major" : "column-major", k);
    if (!block_elements(order, (size_t)p->cols, (size_t)k, b->ldx, &b->x_elements) ||
        !block_elements(order, (size_t)p->rows, (size_t)k, b->ldy, &b->y_elements))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "the blocks' sizes overflow size_t");
    return CMRSCL_OK;
}

static cmrscl_status check_buffers(cmrscl_matrix m, const block_args *b, cl_mem x, cl_mem y,
                                   cl_command_queue queue, cl_uint num_wait,
                                   const cl_event *wait_list)
{
    if ((num_wait > 0) != (wait_list != NULL))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "num_wait and wait_list disagree");
    size_t vs = cmrscl_precision_size(m->params.precision);
    if (b->x_elements > SIZE_MAX / vs || b->y_elements > SIZE_MAX / vs)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "the blocks' sizes overflow size_t");
    cl_context context = m->ctx->context;
    size_t xbytes = m->params.rows > 0 ? vs * b->x_elements : 0;
    cmrscl_status st = buffer_check(context, x, xbytes, "X");
    if (st == CMRSCL_OK)
        st = buffer_check(context, y, vs * b->y_elements, "Y");
    if (st == CMRSCL_OK && queue)
        st = spmv_check_queue(m, queue);
    if (st == CMRSCL_OK && x && x == y && b->x_elements && b->y_elements)
        st = cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "X and Y must be different buffers");
    return st;
}

/* Vector j of a block, contiguous: k == 1 laid out as one plain vector. */
static bool plain_vector(const block_args *b)
{
    return b->k == 1 && (b->order == CMRSCL_COLUMN_MAJOR || (b->ldx == 1 && b->ldy == 1));
}

/* Enqueues the block product: launches of up to SPMM_MAX_VECTORS vectors, in vector order;
 * *first and *last as spmv_enqueue's. The caller holds m->lock. */
static cmrscl_status spmm_enqueue(cmrscl_matrix m, const block_args *b, double alpha, cl_mem x,
                                  double beta, cl_mem y, cl_command_queue queue, cl_uint num_wait,
                                  const cl_event *wait_list, cl_event *first, cl_event *last)
{
    const cmrscl_params *p = &m->params;
    if (plain_vector(b) || p->rows == 0)
        return spmv_enqueue(m, alpha, x, beta, y, queue, num_wait, wait_list, first, last);
    bool rm = b->order == CMRSCL_ROW_MAJOR;
    cl_ulong stride[4] = {rm ? b->ldx : 1, rm ? 1 : b->ldx, rm ? b->ldy : 1, rm ? 1 : b->ldy};
    cl_mem xarg = p->cols > 0 ? x : NULL;
    cl_uint u[2] = {(cl_uint)p->rows, (cl_uint)p->strips};
    cl_event prev = NULL;
    cmrscl_status st = CMRSCL_OK;
    for (int begin = 0; st == CMRSCL_OK && begin < b->k;) {
        int n = b->k - begin < SPMM_MAX_VECTORS ? b->k - begin : SPMM_MAX_VECTORS;
        spmm_shape s = {0};
        cl_kernel kern = NULL;
        st = spmm_shape_for(m, n, &s);
        if (st == CMRSCL_OK)
            st = spmm_kernel(m, &s, &kern);
        if (st != CMRSCL_OK)
            break;
        cl_uint range[2] = {
            (cl_uint)begin,
            (cl_uint)(begin +
                      (n < s.vec_lanes * s.vec_per_lane ? n : s.vec_lanes * s.vec_per_lane))};
        cl_int err = clSetKernelArg(kern, CMRS_SPMM_ROWS, sizeof u[0], &u[0]);
        err |= clSetKernelArg(kern, CMRS_SPMM_STRIPS, sizeof u[1], &u[1]);
        for (int i = 0; i < 4; ++i) /* the matrix's buffers: an update may replace them */
            err |= clSetKernelArg(kern, (cl_uint)(CMRS_SPMM_STRIP_PTR + i), sizeof(cl_mem),
                                  &m->buf[BUF_STRIP_PTR + i]);
        err |= clSetKernelArg(kern, CMRS_SPMM_X, sizeof xarg, &xarg);
        err |= clSetKernelArg(kern, CMRS_SPMM_Y, sizeof y, &y);
        for (int i = 0; i < 2; ++i) {
            err |=
                clSetKernelArg(kern, (cl_uint)(CMRS_SPMM_X_ROW + i), sizeof(cl_ulong), &stride[i]);
            err |= clSetKernelArg(kern, (cl_uint)(CMRS_SPMM_Y_ROW + i), sizeof(cl_ulong),
                                  &stride[2 + i]);
            err |= clSetKernelArg(kern, (cl_uint)(CMRS_SPMM_VEC_BEGIN + i), sizeof(cl_uint),
                                  &range[i]);
        }
        err |= spmv_set_scalars(kern, CMRS_SPMM_ALPHA, p->precision, alpha, beta);
        if (err != CL_SUCCESS) {
            st = cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg for the block product failed");
            break;
        }
        size_t local = (size_t)s.work_group_size, warps = local / (size_t)s.warp;
        size_t global = ((size_t)p->strips + warps - 1) / warps * local;
        bool is_first = begin == 0;
        begin = (int)range[1];
        bool is_last = begin == b->k;
        /* one queue, in order or not: each launch waits for the one before (they write
         * different vectors, but the event chain keeps first..last one product) */
        cl_event done = NULL;
        err = clEnqueueNDRangeKernel(queue, kern, 1, NULL, &global, &local,
                                     is_first ? num_wait : (prev ? 1 : 0),
                                     is_first ? wait_list : (prev ? &prev : NULL), &done);
        if (err != CL_SUCCESS) {
            st = cmrscl_fail_cl(err, "clEnqueueNDRangeKernel (cmrs_spmm)");
            break;
        }
        if (is_first && first) {
            clRetainEvent(done);
            *first = done;
        }
        if (prev)
            clReleaseEvent(prev);
        prev = done;
        if (is_last && last) {
            *last = prev;
            prev = NULL;
        }
    }
    if (prev)
        clReleaseEvent(prev);
    return st;
}

cmrscl_status cmrscl_spmm(cmrscl_matrix m, cmrscl_dense_order order, int k, double alpha, cl_mem x,
                          size_t ldx, double beta, cl_mem y, size_t ldy, cl_command_queue queue,
                          cl_uint num_wait, const cl_event *wait_list, cl_event *event)
{
    if (event)
        *event = NULL;
    block_args b = {0};
    cmrscl_status st = check_block(m, order, k, ldx, ldy, &b);
    if (st == CMRSCL_OK)
        st = check_buffers(m, &b, x, y, queue, num_wait, wait_list);
    if (st != CMRSCL_OK)
        return st;
    pthread_mutex_lock(&m->lock);
    st = spmm_enqueue(m, &b, alpha, x, beta, y, queue ? queue : m->ctx->queue, num_wait, wait_list,
                      NULL, event);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* One timed or untimed block product, for time_products. */
typedef struct spmm_job {
    cmrscl_matrix m;
    block_args b;
    double alpha, beta;
    cl_mem x, y;
} spmm_job;

static cmrscl_status spmm_product(void *job, cl_event *first, cl_event *last)
{
    spmm_job *j = job;
    pthread_mutex_lock(&j->m->lock);
    cmrscl_status st = spmm_enqueue(j->m, &j->b, j->alpha, j->x, j->beta, j->y, j->m->ctx->queue, 0,
                                    NULL, first, last);
    pthread_mutex_unlock(&j->m->lock);
    return st;
}

cmrscl_status cmrscl_spmm_time(cmrscl_matrix m, cmrscl_dense_order order, int k, double alpha,
                               cl_mem x, size_t ldx, double beta, cl_mem y, size_t ldy, int warmup,
                               int repetitions, cmrscl_timing *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    spmm_job job = {m, {0}, alpha, beta, x, y};
    cmrscl_status st = check_block(m, order, k, ldx, ldy, &job.b);
    if (st == CMRSCL_OK)
        st = check_buffers(m, &job.b, x, y, NULL, 0, NULL);
    if (st != CMRSCL_OK)
        return st;
    return time_products(m, spmm_product, &job, warmup, repetitions, out);
}

cmrscl_status cmrscl_spmm_host(cmrscl_matrix m, cmrscl_dense_order order, int k, double alpha,
                               const void *x, size_t ldx, double beta, void *y, size_t ldy)
{
    block_args b = {0};
    cmrscl_status st = check_block(m, order, k, ldx, ldy, &b);
    if (st != CMRSCL_OK)
        return st;
    size_t vs = cmrscl_precision_size(m->params.precision);
    if (b.x_elements > SIZE_MAX / vs || b.y_elements > SIZE_MAX / vs)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "the blocks' sizes overflow size_t");
    size_t xbytes = vs * b.x_elements, ybytes = vs * b.y_elements;
    if (ybytes == 0)
        return CMRSCL_OK;
    if ((xbytes && !x) || !y)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "X or Y is NULL");
    cl_context context = m->ctx->context;
    cl_int err = CL_SUCCESS;
    cl_mem xbuf = NULL, ybuf = NULL;
    if (xbytes)
        xbuf = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, xbytes, (void *)x,
                              &err);
    /* Y goes in unless it is written whole without being read: the elements between its
     * rows or vectors (ld above the packed one) come back as they were */
    bool y_in = beta != 0.0 || b.y_elements != (size_t)m->params.rows * (size_t)k;
    if (err == CL_SUCCESS)
        ybuf = clCreateBuffer(context, CL_MEM_READ_WRITE | (y_in ? CL_MEM_COPY_HOST_PTR : 0),
                              ybytes, y_in ? y : NULL, &err);
    st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clCreateBuffer (X/Y)");
    cl_event done = NULL;
    if (st == CMRSCL_OK)
        st = cmrscl_spmm(m, order, k, alpha, xbuf, b.ldx, beta, ybuf, b.ldy, NULL, 0, NULL, &done);
    if (st == CMRSCL_OK) {
        err = clEnqueueReadBuffer(m->ctx->queue, ybuf, CL_TRUE, 0, ybytes, y, 1, &done, NULL);
        if (err != CL_SUCCESS)
            st = cmrscl_fail_cl(err, "clEnqueueReadBuffer (Y)");
    }
    if (done)
        clReleaseEvent(done);
    if (xbuf)
        clReleaseMemObject(xbuf);
    if (ybuf)
        clReleaseMemObject(ybuf);
    return st;
}
