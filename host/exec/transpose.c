/* transpose.c - the transposed product y = alpha*A^T*x + beta*y (cmrscl_spmv_op and its host
 * and timing forms).
 *
 * A^T is kept as a CMRS matrix of its own. CMRS walks rows; a kernel on A's strips that
 * scattered into y[column] would need atomic additions, whose order - and so whose
 * rounding - changes from run to run. A second matrix costs as much device memory again
 * (the user sees it in cmrscl_params.transpose_device_bytes and decides: prepare, release),
 * and buys what every other product has: its own plan for A^T's rows (a matrix with short
 * rows can have long columns), the same kernels, the same bits every run.
 *
 * It is built from A's arrays read back (cmrscl_matrix_read_cmrs: whatever layout, codecs
 * or device path made A), turned into CSR and transposed on the host - one path for every
 * way a matrix is created. A values update drops it (cmrs_matrix_transpose_outdated), and the
 * next transposed product builds it again from the updated arrays. */
#include "exec/exec.h"

#include <stdlib.h>
#include <string.h>

/* What a matrix keeps for its transposed product (m->transposed), made with the matrix. */
struct transposed {
    pthread_mutex_t lock;
    cmrscl_matrix matrix; /* A^T: NULL until a transposed product or a prepare builds it, and
                             after an update */
    bool opt_set;         /* the options of its plan, when the user gave them */
    cmrscl_options opt;
};

cmrscl_status cmrs_transpose_init(cmrscl_matrix m)
{
    struct transposed *t = calloc(1, sizeof *t);
    if (!t)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a matrix");
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "cannot create a mutex");
    }
    m->transposed = t;
    return CMRSCL_OK;
}

void cmrs_transpose_release(cmrscl_matrix m)
{
    if (!m->transposed)
        return;
    cmrscl_matrix_free(m->transposed->matrix);
    pthread_mutex_destroy(&m->transposed->lock);
    free(m->transposed);
    m->transposed = NULL;
}

size_t cmrs_transpose_device_bytes(cmrscl_matrix m)
{
    pthread_mutex_lock(&m->transposed->lock);
    size_t bytes = m->transposed->matrix ? m->transposed->matrix->params.device_bytes : 0;
    pthread_mutex_unlock(&m->transposed->lock);
    return bytes;
}

/* A^T from A's device arrays, planned with opt (NULL: automatic). */
static cmrscl_status build_transpose(cmrscl_matrix m, const cmrscl_options *opt, cmrscl_matrix *out)
{
    cmrscl_cmrs cmrs;
    cmrscl_csr a = {0}, t = {0};
    /* Under m->lock: a first update of a coded matrix replaces its arrays and parameters.
     * The barrier orders the reads after every update enqueued before, also on an
     * out-of-order queue. */
    pthread_mutex_lock(&m->lock);
    cl_int err = clEnqueueBarrierWithWaitList(m->ctx->queue, 0, NULL, NULL);
    cmrscl_status st = err == CL_SUCCESS ? cmrscl_matrix_read_cmrs(m, &cmrs)
                                         : cmrscl_fail_cl(err, "clEnqueueBarrierWithWaitList");
    pthread_mutex_unlock(&m->lock);
    if (st != CMRSCL_OK)
        return st;
    st = cmrscl_cmrs_to_csr(&cmrs, &a);
    cmrscl_cmrs_free(&cmrs);
    if (st == CMRSCL_OK)
        st = cmrscl_csr_transpose(&a, &t);
    cmrscl_csr_free(&a);
    /* The values came back as doubles; a float matrix's round exactly to themselves. */
    if (st == CMRSCL_OK)
        st = cmrscl_matrix_create_from_csr(m->ctx, m->params.precision, &t, opt, out);
    cmrscl_csr_free(&t);
    return st;
}

/* The current transpose of m, built if there is none; the caller holds transpose_lock. */
static cmrscl_status current_transpose(cmrscl_matrix m, cmrscl_matrix *out)
{
    if (!m->transposed->matrix) {
        cmrscl_status st = build_transpose(m, m->transposed->opt_set ? &m->transposed->opt : NULL,
                                           &m->transposed->matrix);
        if (st != CMRSCL_OK)
            return st;
    }
    *out = m->transposed->matrix;
    return CMRSCL_OK;
}

void cmrs_matrix_transpose_outdated(cmrscl_matrix m)
{
    pthread_mutex_lock(&m->transposed->lock);
    /* Products enqueued on it still run: OpenCL frees its buffers after them. */
    cmrscl_matrix_free(m->transposed->matrix);
    m->transposed->matrix = NULL;
    pthread_mutex_unlock(&m->transposed->lock);
}

cmrscl_status cmrscl_matrix_prepare_transpose(cmrscl_matrix m, const cmrscl_options *opt,
                                              cmrscl_params *out)
{
    size_t room = 0;
    if (out && cmrs_params_room(out, &room) != CMRSCL_OK)
        return CMRSCL_ERROR_INVALID_ARGUMENT; /* nothing written */
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    pthread_mutex_lock(&m->transposed->lock);
    bool same_options =
        opt ? m->transposed->opt_set && !memcmp(opt, &m->transposed->opt, sizeof *opt)
            : !m->transposed->opt_set;
    cmrscl_status st = CMRSCL_OK;
    if (!same_options) {
        /* A new plan replaces the transpose and its options only once it is built: options
         * that fail leave the transpose as it was. */
        cmrscl_matrix t = NULL;
        st = build_transpose(m, opt, &t);
        if (st == CMRSCL_OK) {
            cmrscl_matrix_free(m->transposed->matrix);
            m->transposed->matrix = t;
            m->transposed->opt_set = opt != NULL;
            if (opt)
                m->transposed->opt = *opt;
        }
    }
    cmrscl_matrix t = NULL;
    if (st == CMRSCL_OK)
        st = current_transpose(m, &t);
    if (st == CMRSCL_OK && out)
        st = cmrscl_matrix_params(t, out);
    else if (out) { /* a failed plan: none */
        const cmrscl_params none = {0};
        cmrs_params_deliver(&none, out, room);
    }
    pthread_mutex_unlock(&m->transposed->lock);
    return st;
}

cmrscl_status cmrscl_matrix_release_transpose(cmrscl_matrix m)
{
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    cmrs_matrix_transpose_outdated(m);
    return CMRSCL_OK;
}

/* ---- the products with an operation ---- */

static cmrscl_status check_operation(cmrscl_matrix m, cmrscl_operation op)
{
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    if (op != CMRSCL_NON_TRANSPOSE && op != CMRSCL_TRANSPOSE)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "operation %d is neither CMRSCL_NON_TRANSPOSE nor CMRSCL_TRANSPOSE",
                           (int)op);
    return CMRSCL_OK;
}

/* The vectors of a transposed product against A's shape (x: rows elements, y: cols), before
 * A^T is built for a call that would fail anyway; the product on A^T checks the rest. */
static cmrscl_status check_transposed_vectors(cmrscl_matrix m, cl_mem x, cl_mem y)
{
    const cmrscl_params *p = &m->params;
    size_t vsize = cmrscl_precision_size(p->precision);
    cl_context context = m->ctx->context;
    cmrscl_status st =
        cmrs_buffer_check(context, x, p->cols > 0 ? vsize * (size_t)p->rows : 0, "x");
    return st != CMRSCL_OK ? st : cmrs_buffer_check(context, y, vsize * (size_t)p->cols, "y");
}

/* Each call below runs its product on A^T between these two, under transpose_lock, so an
 * update on another thread cannot free A^T between its lookup and its use: a blocking call
 * (host, timing) holds it until it returns. On failure the lock is not held. */
static cmrscl_status lock_transpose(cmrscl_matrix m, cmrscl_matrix *t)
{
    pthread_mutex_lock(&m->transposed->lock);
    cmrscl_status st = current_transpose(m, t);
    if (st != CMRSCL_OK)
        pthread_mutex_unlock(&m->transposed->lock);
    return st;
}

static cmrscl_status unlock_transpose(cmrscl_matrix m, cmrscl_status st)
{
    pthread_mutex_unlock(&m->transposed->lock);
    return st;
}
cmrscl_status cmrscl_spmv_op(cmrscl_matrix m, cmrscl_operation op, double alpha, cl_mem x,
                             double beta, cl_mem y, cl_command_queue queue, cl_uint num_wait,
                             const cl_event *wait_list, cl_event *event)
{
    if (event)
        *event = NULL;
    cmrscl_status st = check_operation(m, op);
    if (st != CMRSCL_OK)
        return st;
    if (op == CMRSCL_NON_TRANSPOSE)
        return cmrscl_spmv(m, alpha, x, beta, y, queue, num_wait, wait_list, event);
    if ((st = check_transposed_vectors(m, x, y)) != CMRSCL_OK)
        return st;
    cmrscl_matrix t = NULL;
    if ((st = lock_transpose(m, &t)) != CMRSCL_OK)
        return st;
    return unlock_transpose(m,
                            cmrscl_spmv(t, alpha, x, beta, y, queue, num_wait, wait_list, event));
}

cmrscl_status cmrscl_spmv_host_op(cmrscl_matrix m, cmrscl_operation op, double alpha, const void *x,
                                  double beta, void *y)
{
    cmrscl_status st = check_operation(m, op);
    if (st != CMRSCL_OK)
        return st;
    if (op == CMRSCL_NON_TRANSPOSE)
        return cmrscl_spmv_host(m, alpha, x, beta, y);
    if ((m->params.rows > 0 && !x) || (m->params.cols > 0 && !y))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "x or y is NULL");
    cmrscl_matrix t = NULL;
    if ((st = lock_transpose(m, &t)) != CMRSCL_OK)
        return st;
    return unlock_transpose(m, cmrscl_spmv_host(t, alpha, x, beta, y));
}

cmrscl_status cmrscl_spmv_time_op(cmrscl_matrix m, cmrscl_operation op, double alpha, cl_mem x,
                                  double beta, cl_mem y, int warmup, int repetitions,
                                  cmrscl_timing *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    cmrscl_status st = check_operation(m, op);
    if (st != CMRSCL_OK)
        return st;
    if (op == CMRSCL_NON_TRANSPOSE)
        return cmrscl_spmv_time(m, alpha, x, beta, y, warmup, repetitions, out);
    if (!out || warmup < 0 || repetitions < 1)
        return cmrscl_spmv_time(m, alpha, x, beta, y, warmup, repetitions, out); /* its message */
    if ((st = check_transposed_vectors(m, x, y)) != CMRSCL_OK)
        return st;
    cmrscl_matrix t = NULL;
    if ((st = lock_transpose(m, &t)) != CMRSCL_OK)
        return st;
    return unlock_transpose(m, cmrscl_spmv_time(t, alpha, x, beta, y, warmup, repetitions, out));
}
