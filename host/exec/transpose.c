/* transpose.c - A^T for the transposed product y = alpha*A^T*x + beta*y (cmrscl_spmv_op and
 * its host and timing forms: product.c).
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
 * way a matrix is created. A values update drops it (transpose_outdated, through the part's
 * transposed_head: exec.h says why), and the
 * next transposed product builds it again from the updated arrays. */
#include "exec/exec.h"

#include <stdlib.h>
#include <string.h>

/* What a matrix keeps for its transposed product (m->transposed), made on first need. */
struct transposed {
    transposed_head head; /* first: cmrscl_matrix_free calls its release, an update outdated */
    pthread_mutex_t lock;
    cmrscl_matrix matrix; /* A^T: NULL until a transposed product or a prepare builds it, and
                             after an update */
    bool opt_set;         /* the options of its plan, when the user gave them */
    cmrscl_options opt;
};

static void transpose_outdated(cmrscl_matrix m);

static void transposed_release(cmrscl_matrix m)
{
    cmrscl_matrix_free(m->transposed->matrix);
    pthread_mutex_destroy(&m->transposed->lock);
    free(m->transposed);
    m->transposed = NULL;
}

/* The state, made (make) on first need; its pointer under m->lock, as an update on another
 * thread looks for it. NULL: none (or, when made, no memory). */
static struct transposed *transposed(cmrscl_matrix m, bool make)
{
    pthread_mutex_lock(&m->lock);
    struct transposed *t = m->transposed;
    if (!t && make && (t = calloc(1, sizeof *t))) {
        if (pthread_mutex_init(&t->lock, NULL) == 0)
            t->head = (transposed_head){transposed_release, transpose_outdated}, m->transposed = t;
        else
            free(t), t = NULL;
    }
    pthread_mutex_unlock(&m->lock);
    return t;
}

/* A^T replaced by at (NULL: dropped; products enqueued on the old one still run: OpenCL
 * frees its buffers after them), its bytes in the matrix's view. The caller holds t->lock. */
static void replace_transpose(cmrscl_matrix m, struct transposed *t, cmrscl_matrix at)
{
    cmrscl_matrix_free(t->matrix);
    t->matrix = at;
    pthread_mutex_lock(&m->lock);
    m->params.transpose_device_bytes = at ? at->params.device_bytes : 0;
    pthread_mutex_unlock(&m->lock);
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
    /* A's numbering is A^T's: a renumbered A's products move x and y (product.c) */
    cmrscl_options plain = opt ? *opt : (cmrscl_options){0};
    plain.renumber = CMRSCL_RENUMBER_NONE;
    /* The values came back as doubles; a float matrix's round exactly to themselves. */
    if (st == CMRSCL_OK)
        st = cmrscl_matrix_create_from_csr(m->ctx, m->params.precision, &t, &plain, out);
    cmrscl_csr_free(&t);
    return st;
}

/* The current A^T, built if there is none; the caller holds t->lock. */
static cmrscl_status current_transpose(cmrscl_matrix m, struct transposed *t, cmrscl_matrix *out)
{
    if (!t->matrix) {
        cmrscl_matrix at = NULL;
        cmrscl_status st = build_transpose(m, t->opt_set ? &t->opt : NULL, &at);
        if (st != CMRSCL_OK)
            return st;
        replace_transpose(m, t, at);
    }
    *out = t->matrix;
    return CMRSCL_OK;
}

/* A values update of m (or a release): its transpose (if built) is freed, to be built again
 * from the new values by the next transposed product. */
static void transpose_outdated(cmrscl_matrix m)
{
    struct transposed *t = transposed(m, false);
    if (!t) /* never built */
        return;
    pthread_mutex_lock(&t->lock);
    replace_transpose(m, t, NULL);
    pthread_mutex_unlock(&t->lock);
}

static cmrscl_status no_memory(void)
{
    return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the transposed product");
}

cmrscl_status cmrscl_matrix_prepare_transpose(cmrscl_matrix m, const cmrscl_options *opt,
                                              cmrscl_params *out)
{
    size_t room = 0;
    if (out && cmrs_params_room(out, &room) != CMRSCL_OK)
        return CMRSCL_ERROR_INVALID_ARGUMENT; /* nothing written */
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    struct transposed *t = transposed(m, true);
    cmrscl_status st = t ? CMRSCL_OK : no_memory();
    if (t)
        pthread_mutex_lock(&t->lock);
    bool same_options =
        !t || (opt ? t->opt_set && !memcmp(opt, &t->opt, sizeof *opt) : !t->opt_set);
    if (!same_options) {
        /* A new plan replaces the transpose and its options only once it is built: options
         * that fail leave the transpose as it was. */
        cmrscl_matrix at = NULL;
        st = build_transpose(m, opt, &at);
        if (st == CMRSCL_OK) {
            replace_transpose(m, t, at);
            t->opt_set = opt != NULL;
            if (opt)
                t->opt = *opt;
        }
    }
    cmrscl_matrix at = NULL;
    if (st == CMRSCL_OK)
        st = current_transpose(m, t, &at);
    if (st == CMRSCL_OK && out)
        st = cmrscl_matrix_params(at, out);
    else if (out) { /* a failed plan: none */
        const cmrscl_params none = {0};
        cmrs_params_deliver(&none, out, room);
    }
    if (t)
        pthread_mutex_unlock(&t->lock);
    return st;
}

cmrscl_status cmrscl_matrix_release_transpose(cmrscl_matrix m)
{
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    transpose_outdated(m);
    return CMRSCL_OK;
}

/* ---- the products on A^T (product.c) ---- */

cmrscl_status cmrs_transpose_hold(cmrscl_matrix m, cmrscl_matrix *at)
{
    struct transposed *t = transposed(m, true);
    if (!t)
        return no_memory();
    pthread_mutex_lock(&t->lock);
    cmrscl_status st = current_transpose(m, t, at);
    if (st != CMRSCL_OK)
        pthread_mutex_unlock(&t->lock);
    return st;
}

void cmrs_transpose_let_go(cmrscl_matrix m)
{
    pthread_mutex_unlock(&m->transposed->lock); /* made by hold, never freed before the matrix */
}
