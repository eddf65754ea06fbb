/* spmm.c - launching Y = alpha*A*X + beta*Y for a block of k vectors (cl/cmrs_spmm.cl;
 * product.c describes and checks it): the launch's shape from the vectors and the device's
 * local memory, its kernels built on first use and kept per shape, and launches of up to
 * cmrscl_params.block_vectors vectors each (cmrs_plan_block_vectors). One plain vector goes to
 * the single product (spmv.c). */
#include "exec/exec.h"

#include <stdlib.h>
#include <string.h>

#define SPMM_WARP 32     /* lanes per strip: the width of NVIDIA's warp */
#define SPMM_MAX_WARPS 4 /* warps per work-group at most */
/* CPUs whose sub-groups part ways (Intel's runtime: work-items on SIMD lanes of their own):
 * a strip's 32 lanes meeting at group barriers cost them far more than a GPU - 4 lanes a
 * strip, up to 16 strips a group. Measured on Intel's CPU runtime 2026.2 on 2 cores
 * (docs/dev/PERFORMANCE.md), double / float at k = 8 and 32 against 32 lanes and 4 strips a group:
 * random:400000:4 7.8 / 1.7x and 5.4 / 7.0x, random:200000:8 5.8 / 1.6x and 3.9 / 6.9x,
 * stencil27:40 4.3 / 1.4x and 6.9 / 1.6x faster; 2 lanes and 32 strips close behind. PoCL 3.1
 * (no sub-groups) keeps the GPU's shape: there k = 32 in float ran 0.66-0.89x as fast with it
 * (random:200000:4, stencil27:30), and sums went wrong from 9 runs a lane (k = 33; Oclgrind's
 * checks and Intel's runtime ran that shape correctly). */
#define SPMM_CPU_WARP 4
#define SPMM_CPU_MAX_WARPS 16

/* The shape of one launch: the warp layer's backend, lanes per strip, lanes sharing one entry
 * (each taking vec_per_lane runs of vec_width consecutive vectors), work-group size. */
typedef struct spmm_shape {
    int reduce, warp, vec_lanes, vec_per_lane, vec_width, work_group_size;
} spmm_shape;

struct spmm_kernel {
    char options[320]; /* the -D string: the matrix's layout (an update may change it) + shape */
    cl_kernel kernel, combine;
    struct spmm_kernel *next;
};

/* What the block product keeps with a matrix, under m->lock, made by its first launch. */
struct spmm_state {
    matrix_part_release release; /* first: cmrscl_matrix_free calls it */
    struct spmm_kernel *kernels; /* one pair per launch shape and layout */
    cl_mem partial;              /* the long strips' tiles' partial sums, grown as launches ask */
    size_t partial_bytes;
};

static void spmm_release(cmrscl_matrix m)
{
    struct spmm_state *s = m->spmm;
    for (struct spmm_kernel *k = s->kernels, *next; k; k = next) {
        next = k->next;
        clReleaseKernel(k->kernel);
        clReleaseKernel(k->combine);
        free(k);
    }
    if (s->partial)
        clReleaseMemObject(s->partial);
    free(s);
    m->spmm = NULL;
}

/* The block product's state, made on first need (NULL: no memory). Under m->lock. */
static struct spmm_state *spmm_state(cmrscl_matrix m)
{
    if (!m->spmm && (m->spmm = calloc(1, sizeof *m->spmm)))
        m->spmm->release = spmm_release;
    return m->spmm;
}

/* The long strips' tiles' partial sums for a launch of `vectors`: the matrix's buffer for
 * them, made (or grown) now. Under m->lock. */
static cmrscl_status spmm_partial(cmrscl_matrix m, int vectors)
{
    size_t bytes = (size_t)m->params.tiles * (size_t)m->params.height * (size_t)vectors *
                   cmrscl_precision_size(m->params.precision);
    struct spmm_state *s = m->spmm; /* made with the launch's kernel */
    if (bytes <= s->partial_bytes)
        return CMRSCL_OK;
    if (s->partial)
        clReleaseMemObject(s->partial);
    cl_int err;
    s->partial = clCreateBuffer(m->ctx->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    s->partial_bytes = err == CL_SUCCESS ? bytes : 0;
    return err == CL_SUCCESS ? CMRSCL_OK
                             : cmrscl_fail_cl(err, "clCreateBuffer (the block product's partial "
                                                   "sums of long strips)");
}

/* Consecutive vectors a lane loads as one (16 bytes: 4 floats, 2 doubles) from a row-major
 * block whose runs stay aligned (leading dimensions multiples of it), when the launch has
 * at least 4 such runs: each entry then costs a lane one wide load and its sums a few
 * instructions instead of a few per vector. Else 1. */
static int spmm_vec_width(const cmrscl_params *p, const block_args *b, int begin, int n)
{
    int w = p->precision == CMRSCL_FLOAT ? 4 : 2;
    while (w > 1 && (b->order != CMRSCL_ROW_MAJOR || b->ldx % (size_t)w || b->ldy % (size_t)w ||
                     begin % w || n < 4 * w))
        w /= 2;
    return w;
}

/* The shape for vectors begin .. begin + n - 1 (n <= PLAN_BLOCK_VECTORS_MAX): runs of vec_width
 * vectors, as many of them as lanes allow (in slices two runs a lane), the sums of each warp (local
 * slots: HEIGHT x runs per lane x lanes) within half the local memory of a work-group, so two
 * groups can share a compute unit. The launch then covers vec_lanes x vec_per_lane x vec_width of
 * the n vectors, maybe fewer (whole runs only). */
static cmrscl_status spmm_shape_for(cmrscl_matrix m, const block_args *b, int begin, int n,
                                    spmm_shape *out)
{
    const cmrscl_device_info *dev = &m->ctx->info;
    const cmrscl_params *p = &m->params;
    bool cpu = (dev->type & CL_DEVICE_TYPE_CPU) && dev->subgroup_apart;
    spmm_shape s = {dev->warp_shuffle ? CMRS_REDUCE_SHUFFLE : CMRS_REDUCE_LOCAL,
                    cpu ? SPMM_CPU_WARP : SPMM_WARP,
                    0,
                    0,
                    spmm_vec_width(p, b, begin, n),
                    0};
    size_t elt = cmrscl_precision_size(p->precision) * (size_t)s.vec_width,
           budget = dev->local_mem_bytes / 2;
    int runs = n / s.vec_width;
    while (s.warp > 1 && (unsigned)s.warp > dev->max_work_group_size)
        s.warp /= 2;
    /* The slice layout's row walk: a lane takes two runs (32 bytes of X's row an entry) where
     * there are 4 or more - the word, value and index work of an entry shared by twice the
     * vectors. Measured on an H100 (stencil27:100, fem:50:3, stencil7:160, stencil5:2000;
     * docs/dev/PERFORMANCE.md) at k = 16 and 32, both precisions: 1.14-1.62x faster than
     * one run a lane; four runs a lane slower again but for fem:50:3 in float. */
    int lanes_cap = plan_family(p)->lane_per_row && s.vec_width > 1 /* then runs >= 4 */
                        ? cmrs_pow2_at_least(runs) / 2
                        : cmrs_pow2_at_least(runs);
    for (;;) {
        s.vec_lanes = lanes_cap < s.warp ? lanes_cap : s.warp;
        s.vec_per_lane = s.vec_per_lane ? s.vec_per_lane : (runs + s.vec_lanes - 1) / s.vec_lanes;
        bool slots = !plan_family(p)->lane_per_row && (p->height > 1 || s.vec_lanes < s.warp);
        size_t warp_bytes =
            slots ? (size_t)p->height * (size_t)s.vec_per_lane * (size_t)s.warp * elt : 0;
        if (warp_bytes <= budget || (warp_bytes <= dev->local_mem_bytes && s.warp == 1)) {
            int warps = cpu ? SPMM_CPU_MAX_WARPS : SPMM_MAX_WARPS;
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

/* The kernels of shape s for the matrix's current layout: kept, or built now. Under m->lock. */
static cmrscl_status spmm_kernel(cmrscl_matrix m, const spmm_shape *s, struct spmm_kernel **out)
{
    char options[320];
    int n = cmrs_plan_spmm_options(&m->params, s->reduce, s->warp, s->work_group_size, s->vec_lanes,
                                   s->vec_per_lane, s->vec_width, options, sizeof options);
    if (n < 0 || (size_t)n >= sizeof options)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                           "the block product's build options are too long");
    if (!spmm_state(m))
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the block product");
    for (struct spmm_kernel *k = m->spmm->kernels; k; k = k->next)
        if (!strcmp(k->options, options)) {
            *out = k;
            return CMRSCL_OK;
        }
    cl_program prog;
    double seconds;
    cmrscl_program_source from;
    cmrscl_status st = cmrs_program_get(m->ctx, "cmrs_spmm.cl", options, &prog, &seconds, &from);
    if (st != CMRSCL_OK)
        return st;
    cl_int err, err2 = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(prog, "cmrs_spmm", &err);
    cl_kernel combine = err == CL_SUCCESS ? clCreateKernel(prog, "cmrs_spmm_combine", &err2) : NULL;
    if (err != CL_SUCCESS || err2 != CL_SUCCESS) {
        if (kernel)
            clReleaseKernel(kernel);
        return cmrscl_fail_cl(err != CL_SUCCESS ? err : err2, "clCreateKernel (cmrs_spmm)");
    }
    size_t max_wg = 0;
    clGetKernelWorkGroupInfo(kernel, m->ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg,
                             &max_wg, NULL);
    struct spmm_kernel *k = calloc(1, sizeof *k);
    if (!k || (max_wg && max_wg < (size_t)s->work_group_size)) {
        clReleaseKernel(kernel);
        clReleaseKernel(combine);
        free(k);
        return k ? cmrscl_fail(CMRSCL_ERROR_DEVICE_LIMIT,
                               "the block product's kernel runs at most %zu work-items per "
                               "group on this device, fewer than its %d",
                               max_wg, s->work_group_size)
                 : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a kernel");
    }
    memcpy(k->options, options, sizeof options);
    k->kernel = kernel;
    k->combine = combine;
    k->next = m->spmm->kernels;
    m->spmm->kernels = k;
    *out = k;
    return CMRSCL_OK;
}

/* Vector j of a block, contiguous: k == 1 laid out as one plain vector. */
static bool plain_vector(const block_args *b)
{
    return b->k == 1 && (b->order == CMRSCL_COLUMN_MAJOR || (b->ldx == 1 && b->ldy == 1));
}

/* The launches of one block product in order on one queue: on an in-order queue the
 * caller's wait list goes to the first and the queue orders the rest (an event wait between
 * kernels costs microseconds on NVIDIA); on an out-of-order one each waits for the one
 * before. The first and last events are kept when asked for. */
typedef struct launch_chain {
    cl_command_queue queue;
    bool in_order, keep;
    cl_uint num_wait;
    const cl_event *wait_list;
    cl_event first, last;
} launch_chain;

static cl_int chain_enqueue(launch_chain *c, cl_kernel k, size_t global, size_t local)
{
    bool first = !c->first && !c->last;
    cl_uint n = first ? c->num_wait : c->in_order ? 0 : 1;
    const cl_event *list = first ? c->wait_list : c->in_order ? NULL : &c->last;
    cl_event done = NULL;
    bool want = c->keep || !c->in_order;
    cl_int err = clEnqueueNDRangeKernel(c->queue, k, 1, NULL, &global, &local, n, n ? list : NULL,
                                        want ? &done : NULL);
    if (err != CL_SUCCESS || !want)
        return err;
    if (first)
        c->first = done, clRetainEvent(done);
    if (c->last)
        clReleaseEvent(c->last);
    c->last = done;
    return CL_SUCCESS;
}

/* The arguments of one launch of shape s over vectors range[0] .. range[1] - 1. */
static cl_int set_launch_args(cmrscl_matrix m, const block_args *b, const struct spmm_kernel *k,
                              double alpha, cl_mem x, double beta, cl_mem y, const cl_uint range[2])
{
    const cmrscl_params *p = &m->params;
    bool rm = b->order == CMRSCL_ROW_MAJOR;
    cl_ulong stride[4] = {rm ? b->ldx : 1, rm ? 1 : b->ldx, rm ? b->ldy : 1, rm ? 1 : b->ldy};
    cl_mem xarg = p->cols > 0 ? x : NULL;
    cl_uint u[4] = {(cl_uint)p->rows, (cl_uint)p->strips, (cl_uint)p->tiles, (cl_uint)p->tile};
    cl_kernel kern = k->kernel;
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < 4; ++i)
        err |= clSetKernelArg(kern, (cl_uint)(CMRS_SPMM_ROWS + i), sizeof(cl_uint), &u[i]);
    /* the matrix's buffers, every launch: an update may replace them */
    for (int i = 0; i < 4; ++i)
        err |= clSetKernelArg(kern, (cl_uint)(CMRS_SPMM_STRIP_PTR + i), sizeof(cl_mem),
                              &m->buf[BUF_STRIP_PTR + i]);
    for (int i = 0; i < 2; ++i)
        err |= clSetKernelArg(kern, (cl_uint)(CMRS_SPMM_TILE_START + i), sizeof(cl_mem),
                              &m->buf[BUF_TILE_START + i]);
    err |= clSetKernelArg(kern, CMRS_SPMM_PARTIAL, sizeof(cl_mem), &m->spmm->partial);
    err |= clSetKernelArg(kern, CMRS_SPMM_X, sizeof xarg, &xarg);
    err |= clSetKernelArg(kern, CMRS_SPMM_Y, sizeof y, &y);
    for (int i = 0; i < 2; ++i) {
        err |= clSetKernelArg(kern, (cl_uint)(CMRS_SPMM_X_ROW + i), sizeof(cl_ulong), &stride[i]);
        err |=
            clSetKernelArg(kern, (cl_uint)(CMRS_SPMM_Y_ROW + i), sizeof(cl_ulong), &stride[2 + i]);
        err |= clSetKernelArg(kern, (cl_uint)(CMRS_SPMM_VEC_BEGIN + i), sizeof(cl_uint), &range[i]);
    }
    err |= cmrs_spmv_set_scalars(kern, CMRS_SPMM_ALPHA, p->precision, alpha, beta);
    if (!p->tiles)
        return err;
    cl_kernel comb = k->combine;
    err |= clSetKernelArg(comb, CMRS_SPMM_COMBINE_ROWS, sizeof(cl_uint), &u[0]);
    err |= clSetKernelArg(comb, CMRS_SPMM_COMBINE_TILES, sizeof(cl_uint), &u[2]);
    err |=
        clSetKernelArg(comb, CMRS_SPMM_COMBINE_TILE_STRIP, sizeof(cl_mem), &m->buf[BUF_TILE_STRIP]);
    err |= clSetKernelArg(comb, CMRS_SPMM_COMBINE_PARTIAL, sizeof(cl_mem), &m->spmm->partial);
    err |= clSetKernelArg(comb, CMRS_SPMM_COMBINE_Y, sizeof y, &y);
    for (int i = 0; i < 2; ++i) {
        err |= clSetKernelArg(comb, (cl_uint)(CMRS_SPMM_COMBINE_Y_ROW + i), sizeof(cl_ulong),
                              &stride[2 + i]);
        err |= clSetKernelArg(comb, (cl_uint)(CMRS_SPMM_COMBINE_VEC_BEGIN + i), sizeof(cl_uint),
                              &range[i]);
    }
    return err | cmrs_spmv_set_scalars(comb, CMRS_SPMM_COMBINE_ALPHA, p->precision, alpha, beta);
}

cmrscl_status cmrs_spmm_enqueue(cmrscl_matrix m, const block_args *b, double alpha, cl_mem x,
                                double beta, cl_mem y, cl_command_queue queue, cl_uint num_wait,
                                const cl_event *wait_list, cl_event *first, cl_event *last)
{
    const cmrscl_params *p = &m->params;
    if (plain_vector(b) || p->rows == 0)
        return cmrs_spmv_enqueue(m, alpha, x, beta, y, queue, num_wait, wait_list, first, last);
    cl_command_queue_properties qprops = 0;
    clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof qprops, &qprops, NULL);
    launch_chain c = {queue,         !(qprops & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
                      first || last, num_wait,
                      wait_list,     NULL,
                      NULL};
    cmrscl_status st = CMRSCL_OK;
    for (int begin = 0; st == CMRSCL_OK && begin < b->k;) {
        int n = b->k - begin < p->block_vectors ? b->k - begin : p->block_vectors;
        spmm_shape s = {0};
        struct spmm_kernel *k = NULL;
        st = spmm_shape_for(m, b, begin, n, &s);
        int width = s.vec_lanes * s.vec_per_lane * s.vec_width; /* the partial sums' width */
        int covered = n / s.vec_width * s.vec_width;            /* whole runs */
        if (st == CMRSCL_OK)
            st = spmm_kernel(m, &s, &k);
        if (st == CMRSCL_OK && p->tiles)
            st = spmm_partial(m, width);
        if (st != CMRSCL_OK)
            break;
        cl_uint range[2] = {(cl_uint)begin, (cl_uint)(begin + (covered < width ? covered : width))};
        if (set_launch_args(m, b, k, alpha, x, beta, y, range) != CL_SUCCESS) {
            st = cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg for the block product failed");
            break;
        }
        size_t local = (size_t)s.work_group_size, warps = local / (size_t)s.warp;
        size_t items = (size_t)p->tiles + (size_t)p->strips;
        cl_int err = chain_enqueue(&c, k->kernel, (items + warps - 1) / warps * local, local);
        if (err != CL_SUCCESS) {
            st = cmrscl_fail_cl(err, "clEnqueueNDRangeKernel (cmrs_spmm)");
            break;
        }
        if (p->tiles) {
            size_t cl = 64, citems = (size_t)p->tiles * (size_t)p->height * (size_t)width;
            err = chain_enqueue(&c, k->combine, (citems + cl - 1) / cl * cl, cl);
            if (err != CL_SUCCESS) {
                st = cmrscl_fail_cl(err, "clEnqueueNDRangeKernel (cmrs_spmm_combine)");
                break;
            }
        }
        begin = (int)range[1];
    }
    if (first && st == CMRSCL_OK)
        *first = c.first, c.first = NULL;
    if (last && st == CMRSCL_OK)
        *last = c.last, c.last = NULL;
    if (c.first)
        clReleaseEvent(c.first);
    if (c.last)
        clReleaseEvent(c.last);
    return st;
}
