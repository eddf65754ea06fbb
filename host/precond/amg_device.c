/* amg_device.c - the AMG cycle on the device (issue 57): the host hierarchy (amg_setup.c)
 * copied level by level, and the host cycle (amg_cycle.c) enqueued step for step in the same
 * order, so that the two agree to rounding and the tests can compare them level by level.
 * The products are the library's own (cmrs_spmv_enqueue on each operator's plan: y = alpha
 * A x + beta y); the rest is three small kernels of cl/amg.cl: the Jacobi updates, and the
 * coarsest level's product with its dense inverse. A cycle only enqueues; nothing is read back or
 * waited for, so a solver can put it between its own kernels. */
#include "precond/precond.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The vector kernels' work-group: 256 (or the most the device runs), a power of two. */
#define AMG_GROUP 256

/* v in the precision: v itself, or a float copy for the caller to free (*host != v). */
static cmrscl_status in_precision(const cmrs_amg_device *d, const double *v, size_t n, void **host)
{
    *host = (void *)v;
    if (d->precision != CMRSCL_FLOAT || !n)
        return CMRSCL_OK;
    float *f = cmrscl_alloc(n, sizeof(float));
    if (!f)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG device: %zu values", n);
    for (size_t i = 0; i < n; ++i)
        f[i] = (float)v[i];
    *host = f;
    return CMRSCL_OK;
}

/* v (n doubles, rounded for float) into the buffer `to`, there when this returns: through the
 * context's pinned ring where it is large (cmrs_upload) - level 0's inverse diagonal crossed
 * from pageable memory at a fraction of the ring's rate, on the set-up's path. */
static cmrscl_status write_values(const cmrs_amg_device *d, cl_mem to, const double *v, size_t n)
{
    void *host;
    cmrscl_status st = in_precision(d, v, n, &host);
    if (st != CMRSCL_OK)
        return st;
    st = cmrs_amg_upload(d->ctx, to, n * d->value_size, host);
    if (host != v)
        free(host);
    return st;
}

/* A read-only buffer of n values in the precision, from doubles (rounded for float). */
static cmrscl_status values_buffer(const cmrs_amg_device *d, const double *v, size_t n, cl_mem *out)
{
    cl_int err;
    *out =
        clCreateBuffer(d->ctx->context, CL_MEM_READ_ONLY, (n ? n : 1) * d->value_size, NULL, &err);
    return *out ? write_values(d, *out, v, n) : cmrscl_fail_cl(err, "clCreateBuffer (AMG level)");
}

/* A work vector of n values. */
static cmrscl_status vector(const cmrs_amg_device *d, size_t n, cl_mem *out)
{
    cl_int err;
    *out = clCreateBuffer(d->ctx->context, CL_MEM_READ_WRITE, n * d->value_size, NULL, &err);
    return *out ? CMRSCL_OK : cmrscl_fail_cl(err, "clCreateBuffer (AMG vector)");
}

/* The coarse solve's work-items a row (cl/amg.cl, amg_coarse): a warp's width, at most the
 * group (both powers of two); one a row left the loads of its long chain of additions exposed
 * (docs/dev/PERFORMANCE.md, COARSE_LANES). */
static size_t coarse_lanes(const cmrs_amg_device *d) { return d->local < 32 ? d->local : 32; }

/* cl/amg.cl's kernels for the precision, each run in groups of `local`. */
static cmrscl_status make_kernels(cmrs_amg_device *d)
{
    d->local = AMG_GROUP;
    while (d->local > 1 && d->local > d->ctx->info.max_work_group_size)
        d->local /= 2;
    char options[192];
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -DHEIGHT=1 -DWARP=1 -DWG_SIZE=%zu -DCOARSE_LANES=%zu -DVALUE_DOUBLE=%d "
             "-DAMG_MIXED=%d",
             d->local, coarse_lanes(d), d->precision == CMRSCL_DOUBLE, d->mixed);
    cl_program program; /* owned by the context's cache */
    double seconds;
    cmrscl_program_source from;
    cmrscl_status st = cmrs_program_get(d->ctx, "amg.cl", options, &program, &seconds, &from);
    const char *names[] = {"amg_presmooth", "amg_jacobi", "amg_coarse", "amg_cheb_first",
                           "amg_cheb",      "amg_narrow", "amg_widen"};
    cl_kernel *kernels[] = {&d->presmooth, &d->jacobi, &d->coarse, &d->cheb_first,
                            &d->cheb,      &d->narrow, &d->widen};
    for (int i = 0; i < (d->mixed ? 7 : 5) && st == CMRSCL_OK; ++i) {
        cl_int err;
        *kernels[i] = clCreateKernel(program, names[i], &err);
        if (!*kernels[i])
            return cmrscl_fail_cl(err, names[i]);
        size_t max_wg = 0;
        clGetKernelWorkGroupInfo(*kernels[i], d->ctx->device, CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof max_wg, &max_wg, NULL);
        if (max_wg && max_wg < d->local)
            return cmrscl_fail(CMRSCL_ERROR_DEVICE_LIMIT,
                               "AMG kernel %s runs at most %zu work-items per group on this "
                               "device, fewer than its %zu",
                               names[i], max_wg, d->local);
    }
    return st;
}

/* Whether level l's b and x are the cycle's own (level 0's are the caller's r and z, but under
 * a float cycle), and whether its A is (level 0's may be the caller's matrix). */
static bool own_vectors(const cmrs_amg_device *d, int l) { return l > 0 || d->mixed; }

static bool own_matrix(const cmrs_amg_device *d, int l) { return l > 0 || !d->borrowed_a0; }

/* Level l's operator `which` on the device: the builder's, or made now; a failure named. */
static cmrscl_status level_matrix(const cmrs_amg_device *d, cmrs_amg_builder *made, int l,
                                  cmrs_amg_operator which, const cmrscl_csr *csr,
                                  cmrscl_matrix *out)
{
    *out = cmrs_amg_builder_take(made, l, which);
    if (!*out && !csr->row_ptr) /* an R left on the device that neither its read nor P's
                                   transpose could bring to the host (amg_builder.c) */
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                           "AMG level %d's %c on the device: neither made there nor on the host "
                           "(out of memory reading it back and transposing P)",
                           l, "APR"[which]);
    cmrscl_status st =
        *out ? CMRSCL_OK : cmrscl_matrix_create_from_csr(d->ctx, d->precision, csr, NULL, out);
    if (st == CMRSCL_OK)
        return st;
    char *why = strdup(cmrscl_last_error()); /* not the message being written */
    st = cmrscl_fail(st, "AMG level %d's %c on the device: %s", l, "APR"[which],
                     why ? why : cmrscl_status_name(st));
    free(why);
    return st;
}

static cmrscl_status setup_level(cmrs_amg_device *d, const cmrs_amg_hierarchy *h, int l,
                                 cmrs_amg_builder *made)
{
    const cmrs_amg_level *hl = &h->level[l];
    cmrs_amg_device_level *lv = &d->level[l];
    lv->rows = (cl_uint)hl->A.rows;
    lv->omega = hl->jacobi_omega;
    lv->rho = hl->rho;
    cmrscl_status st = CMRSCL_OK;
    bool own = own_vectors(d, l);
    if (own)
        st = vector(d, lv->rows, &lv->b);
    if (st == CMRSCL_OK && own)
        st = vector(d, lv->rows, &lv->x);
    if (l == h->levels - 1) /* the dense inverse alone solves the last level */
        return st;
    if (st == CMRSCL_OK)
        st = vector(d, lv->rows, &lv->r);
    if (st == CMRSCL_OK && d->degree > 1)
        st = vector(d, lv->rows, &lv->d);
    if (st == CMRSCL_OK)
        st = values_buffer(d, hl->diag_inv, lv->rows, &lv->diag_inv);
    if (st == CMRSCL_OK && own_matrix(d, l))
        st = level_matrix(d, made, l, AMG_OPERATOR_A, &hl->A, &lv->A);
    if (st == CMRSCL_OK)
        st = level_matrix(d, made, l, AMG_OPERATOR_P, &hl->P, &lv->P);
    if (st == CMRSCL_OK)
        st = level_matrix(d, made, l, AMG_OPERATOR_R, &hl->R, &lv->R);
    return st;
}

cmrscl_status cmrs_amg_device_setup(cmrscl_context ctx, cmrscl_precision caller,
                                    cmrscl_precision precision, const cmrs_amg_hierarchy *h,
                                    cmrscl_matrix a0, cmrs_amg_builder *made, cmrs_amg_device *out)
{
    memset(out, 0, sizeof *out);
    if ((precision == CMRSCL_DOUBLE || caller == CMRSCL_DOUBLE) && !ctx->info.fp64)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED, "AMG device cycle: the device has no fp64");
    cl_command_queue_properties props = 0;
    clGetCommandQueueInfo(ctx->queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    *out = (cmrs_amg_device){.ctx = ctx,
                             .precision = precision,
                             .value_size = cmrscl_precision_size(precision),
                             .levels = h->levels,
                             .coarse_rows = (cl_uint)h->coarse_rows,
                             .mixed = caller != precision,
                             .borrowed_a0 = a0 != NULL,
                             .degree = h->degree,
                             .visits = h->visits,
                             .out_of_order = (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0};
    out->level = calloc((size_t)h->levels, sizeof *out->level);
    cmrscl_status st = out->level ? make_kernels(out)
                                  : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                                "AMG device: %d levels", h->levels);
    if (out->level)
        out->level[0].A = a0;
    for (int l = 0; l < h->levels && st == CMRSCL_OK; ++l)
        st = setup_level(out, h, l, made);
    if (st == CMRSCL_OK)
        st = values_buffer(out, h->coarse_inverse, (size_t)h->coarse_rows * h->coarse_rows,
                           &out->coarse_inverse);
    if (st != CMRSCL_OK)
        cmrs_amg_device_free(out);
    return st;
}

/* What every step of a cycle enqueues first on an out-of-order queue: each step reads what
 * the one before wrote. */
static cl_int order(const cmrs_amg_device *d)
{
    return d->out_of_order ? clEnqueueBarrierWithWaitList(d->ctx->queue, 0, NULL, NULL)
                           : CL_SUCCESS;
}

/* y = alpha M x + beta y with M's own kernels (the solvers' cmrs_solve_plain_product). */
static cmrscl_status product(const cmrs_amg_device *d, cmrscl_matrix m, double alpha, cl_mem x,
                             double beta, cl_mem y)
{
    cl_int err = order(d);
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clEnqueueBarrierWithWaitList (AMG)");
    pthread_mutex_lock(&m->lock);
    cmrscl_status st = cmrs_spmv_enqueue(m, alpha, x, beta, y, d->ctx->queue, 0, NULL, NULL, NULL);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* A vector kernel of cl/amg.cl over the level's rows: (n, the scalars in the precision, dinv,
 * then the buffers). */
static cmrscl_status level_kernel(const cmrs_amg_device *d, cl_kernel k,
                                  const cmrs_amg_device_level *lv, int scalars, const double *value,
                                  int buffers, const cl_mem *mem)
{
    cl_int err = clSetKernelArg(k, 0, sizeof(cl_uint), &lv->rows);
    cl_uint at = 1;
    for (int i = 0; i < scalars; ++i, ++at) {
        cl_float f = (cl_float)value[i];
        err |= d->precision == CMRSCL_DOUBLE ? clSetKernelArg(k, at, sizeof(double), &value[i])
                                             : clSetKernelArg(k, at, sizeof f, &f);
    }
    err |= clSetKernelArg(k, at++, sizeof(cl_mem), &lv->diag_inv);
    for (int i = 0; i < buffers; ++i)
        err |= clSetKernelArg(k, at++, sizeof(cl_mem), &mem[i]);
    size_t global = (lv->rows + d->local - 1) / d->local * d->local;
    if (err == CL_SUCCESS)
        err = order(d);
    if (err == CL_SUCCESS && global)
        err = clEnqueueNDRangeKernel(d->ctx->queue, k, 1, NULL, &global, &d->local, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "AMG smoother kernel");
}

/* Chebyshev's step `step` (amg_cycle.c, chebyshev_step): d = c1 d + c2 D^-1 r, x += d. */
static cmrscl_status chebyshev_step(const cmrs_amg_device *d, const cmrs_amg_device_level *lv,
                                    int step)
{
    double c[2];
    cmrs_amg_chebyshev(lv->rho, step, &c[0], &c[1]);
    cl_mem mem[] = {lv->r, lv->d, lv->x};
    return level_kernel(d, d->cheb, lv, 2, c, 3, mem);
}

/* The steps after the first, each r -= A d then a step (amg_cycle.c, chebyshev_rest). */
static cmrscl_status chebyshev_rest(const cmrs_amg_device *d, const cmrs_amg_device_level *lv)
{
    cmrscl_status st = CMRSCL_OK;
    for (int step = 1; step < d->degree && st == CMRSCL_OK; ++step) {
        st = product(d, lv->A, -1.0, lv->d, 1.0, lv->r);
        if (st == CMRSCL_OK)
            st = chebyshev_step(d, lv, step);
    }
    return st;
}

/* Pre-smoothing from x = 0, leaving r = b - A x (amg_cycle.c, presmooth). */
static cmrscl_status presmooth(const cmrs_amg_device *d, const cmrs_amg_device_level *lv)
{
    if (d->degree <= 1) { /* x = omega D^-1 b, r = b, r -= A x */
        cl_mem mem[] = {lv->b, lv->x, lv->r};
        cmrscl_status st = level_kernel(d, d->presmooth, lv, 1, &lv->omega, 3, mem);
        return st == CMRSCL_OK ? product(d, lv->A, -1.0, lv->x, 1.0, lv->r) : st;
    }
    double c[2];
    cmrs_amg_chebyshev(lv->rho, 0, &c[0], &c[1]);
    cl_mem mem[] = {lv->b, lv->x, lv->r, lv->d};
    cmrscl_status st = level_kernel(d, d->cheb_first, lv, 1, &c[1], 4, mem);
    if (st == CMRSCL_OK)
        st = chebyshev_rest(d, lv);
    return st == CMRSCL_OK ? product(d, lv->A, -1.0, lv->d, 1.0, lv->r) : st;
}

/* r = b - A x: a copy and a product. */
static cmrscl_status residual(const cmrs_amg_device *d, const cmrs_amg_device_level *lv)
{
    cl_int err = order(d);
    if (err == CL_SUCCESS && lv->rows)
        err = clEnqueueCopyBuffer(d->ctx->queue, lv->b, lv->r, 0, 0, lv->rows * d->value_size, 0,
                                  NULL, NULL);
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clEnqueueCopyBuffer (AMG)");
    return product(d, lv->A, -1.0, lv->x, 1.0, lv->r);
}

/* Post-smoothing from x: r = b - A x, then Jacobi's sweep or Chebyshev's steps. */
static cmrscl_status postsmooth(const cmrs_amg_device *d, const cmrs_amg_device_level *lv)
{
    cmrscl_status st = residual(d, lv);
    if (st != CMRSCL_OK)
        return st;
    if (d->degree <= 1) { /* x += omega D^-1 r */
        cl_mem mem[] = {lv->r, lv->x};
        return level_kernel(d, d->jacobi, lv, 1, &lv->omega, 2, mem);
    }
    st = chebyshev_step(d, lv, 0);
    return st == CMRSCL_OK ? chebyshev_rest(d, lv) : st;
}

static cmrscl_status coarse_solve(const cmrs_amg_device *d, cl_mem b, cl_mem x)
{
    cl_kernel k = d->coarse;
    cl_int err = clSetKernelArg(k, 0, sizeof(cl_uint), &d->coarse_rows);
    err |= clSetKernelArg(k, 1, sizeof(cl_mem), &d->coarse_inverse);
    err |= clSetKernelArg(k, 2, sizeof(cl_mem), &b);
    err |= clSetKernelArg(k, 3, sizeof(cl_mem), &x);
    err |= clSetKernelArg(k, 4, d->local * d->value_size, NULL);
    size_t rows_per_group = d->local / coarse_lanes(d),
           global = (d->coarse_rows + rows_per_group - 1) / rows_per_group * d->local;
    if (err == CL_SUCCESS)
        err = order(d);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(d->ctx->queue, k, 1, NULL, &global, &d->local, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "AMG coarse solve");
}

/* Level l of the cycle: amg_cycle.c's cycle_level, step for step. */
static cmrscl_status cycle_level(const cmrs_amg_device *d, int l)
{
    const cmrs_amg_device_level *lv = &d->level[l];
    if (l == d->levels - 1)
        return coarse_solve(d, lv->b, lv->x);
    const cmrs_amg_device_level *next = &d->level[l + 1];
    cmrscl_status st = presmooth(d, lv);
    const int visits = cmrs_amg_visits(d->visits, d->levels, l);
    for (int visit = 0; visit < visits && st == CMRSCL_OK; ++visit) {
        if (visit) /* r = b - A x after the correction before */
            st = residual(d, lv);
        if (st == CMRSCL_OK)
            st = product(d, lv->R, 1.0, lv->r, 0.0, next->b);
        if (st == CMRSCL_OK)
            st = cycle_level(d, l + 1);
        if (st == CMRSCL_OK)
            st = product(d, lv->P, 1.0, next->x, 1.0, lv->x);
    }
    return st == CMRSCL_OK ? postsmooth(d, lv) : st;
}

/* Matrix m's values from the CSR c of the same pattern. */
static cmrscl_status update_matrix(cmrscl_matrix m, const cmrscl_csr *c, int l, const char *which)
{
    if (m->params.nnz != c->nnz)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                           "AMG update: level %d's %s has %lld entries, %lld at set-up: A's "
                           "pattern changed (make a new preconditioner)",
                           l, which, (long long)c->nnz, (long long)m->params.nnz);
    return cmrscl_matrix_update_values(m, c->values, CMRSCL_DOUBLE);
}

cmrscl_status cmrs_amg_device_update(cmrs_amg_device *d, const cmrs_amg_hierarchy *h)
{
    if (h->levels != d->levels || (cl_uint)h->coarse_rows != d->coarse_rows)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                           "AMG update: %d levels (coarsest %d rows), %d (%u) at set-up", h->levels,
                           (int)h->coarse_rows, d->levels, d->coarse_rows);
    cmrscl_status st = CMRSCL_OK;
    for (int l = 0; l + 1 < h->levels && st == CMRSCL_OK; ++l) {
        const cmrs_amg_level *hl = &h->level[l];
        cmrs_amg_device_level *lv = &d->level[l];
        lv->omega = hl->jacobi_omega, lv->rho = hl->rho;
        st = write_values(d, lv->diag_inv, hl->diag_inv, lv->rows);
        if (st == CMRSCL_OK && own_matrix(d, l))
            st = update_matrix(lv->A, &hl->A, l, "A");
        if (st == CMRSCL_OK)
            st = update_matrix(lv->P, &hl->P, l, "P");
        if (st == CMRSCL_OK)
            st = update_matrix(lv->R, &hl->R, l, "R");
    }
    return st == CMRSCL_OK ? write_values(d, d->coarse_inverse, h->coarse_inverse,
                                          (size_t)h->coarse_rows * h->coarse_rows)
                           : st;
}

/* A product's launches: the matrix's kernel, and its combine where its strips are split. */
static int launches(cmrscl_matrix m) { return 1 + (m && m->combine != NULL); }

int cmrs_amg_device_commands(const cmrs_amg_device *d)
{
    /* a visit of a level of v corrections: its A's products (the smoothers' 2 k, k the degree,
     * Jacobi's 1, and the residuals of the corrections after the first), v of R's and P's, and
     * the smoothers' 2 k + 1 vector kernels and copies with a copy a residual; a visit of the
     * coarsest level its solve's one; the conversions' two */
    int commands = 2 * d->mixed, runs = 1; /* (runs: the visits of level l) */
    for (int l = 0; l + 1 < d->levels; ++l) {
        const cmrs_amg_device_level *lv = &d->level[l];
        int v = cmrs_amg_visits(d->visits, d->levels, l), k = d->degree;
        commands += runs * ((2 * k + v - 1) * launches(lv->A) +
                            v * (launches(lv->R) + launches(lv->P)) + 2 * k + v);
        runs *= v;
    }
    return commands + runs;
}

/* A conversion kernel (n, from, to) over level 0's rows. */
static cmrscl_status convert(const cmrs_amg_device *d, cl_kernel k, cl_mem from, cl_mem to)
{
    cl_int err = clSetKernelArg(k, 0, sizeof(cl_uint), &d->level[0].rows);
    err |= clSetKernelArg(k, 1, sizeof(cl_mem), &from);
    err |= clSetKernelArg(k, 2, sizeof(cl_mem), &to);
    size_t global = (d->level[0].rows + d->local - 1) / d->local * d->local;
    if (err == CL_SUCCESS)
        err = order(d);
    if (err == CL_SUCCESS && global)
        err = clEnqueueNDRangeKernel(d->ctx->queue, k, 1, NULL, &global, &d->local, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "AMG precision conversion");
}

cmrscl_status cmrs_amg_device_apply(cmrs_amg_device *d, cl_mem r, cl_mem z)
{
    if (!d->mixed) {
        d->level[0].b = r;
        d->level[0].x = z;
        return cycle_level(d, 0);
    }
    cmrscl_status st = convert(d, d->narrow, r, d->level[0].b);
    if (st == CMRSCL_OK)
        st = cycle_level(d, 0);
    return st == CMRSCL_OK ? convert(d, d->widen, d->level[0].x, z) : st;
}

uint64_t cmrs_amg_device_bytes(const cmrs_amg_device *d)
{
    uint64_t bytes = (uint64_t)d->coarse_rows * d->coarse_rows * d->value_size;
    for (int l = 0; l < d->levels; ++l) {
        const cmrs_amg_device_level *lv = &d->level[l];
        cmrscl_matrix m[] = {own_matrix(d, l) ? lv->A : NULL, lv->P, lv->R};
        for (int i = 0; i < 3; ++i)
            bytes += m[i] ? m[i]->params.device_bytes : 0;
        int vectors = (own_vectors(d, l) ? 2 : 0) + (lv->r != NULL) + (lv->d != NULL) +
                      (lv->diag_inv != NULL);
        bytes += (uint64_t)vectors * lv->rows * d->value_size;
    }
    return bytes;
}

cmrscl_status cmrs_amg_device_read(const cmrs_amg_device *d, int l, char which, double *out)
{
    const cmrs_amg_device_level *lv = &d->level[l];
    cl_mem from = which == 'b' ? lv->b : which == 'x' ? lv->x : which == 'r' ? lv->r : NULL;
    if (l < 0 || l >= d->levels || !from)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "AMG device: no vector %c on level %d",
                           which, l);
    void *host = cmrscl_alloc(lv->rows ? lv->rows : 1, d->value_size);
    if (!host)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG device: read of %u values",
                           lv->rows);
    cl_int err = clFinish(d->ctx->queue);
    if (err == CL_SUCCESS && lv->rows)
        err = clEnqueueReadBuffer(d->ctx->queue, from, CL_TRUE, 0, lv->rows * d->value_size, host,
                                  0, NULL, NULL);
    for (cl_uint i = 0; err == CL_SUCCESS && i < lv->rows; ++i)
        out[i] = d->precision == CMRSCL_DOUBLE ? ((double *)host)[i] : ((float *)host)[i];
    free(host);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueReadBuffer (AMG)");
}

void cmrs_amg_device_free(cmrs_amg_device *d)
{
    for (int l = 0; d->level && l < d->levels; ++l) {
        cmrs_amg_device_level *lv = &d->level[l];
        if (own_matrix(d, l))
            cmrscl_matrix_free(lv->A);
        cmrscl_matrix_free(lv->P);
        cmrscl_matrix_free(lv->R);
        bool own = own_vectors(d, l);
        cl_mem mem[] = {own ? lv->b : NULL, own ? lv->x : NULL, lv->r, lv->d, lv->diag_inv};
        for (int i = 0; i < 5; ++i)
            if (mem[i])
                clReleaseMemObject(mem[i]);
    }
    free(d->level);
    cl_kernel k[] = {d->presmooth, d->jacobi, d->coarse, d->cheb_first,
                     d->cheb,      d->narrow, d->widen};
    for (int i = 0; i < 7; ++i)
        if (k[i])
            clReleaseKernel(k[i]);
    if (d->coarse_inverse)
        clReleaseMemObject(d->coarse_inverse);
    memset(d, 0, sizeof *d);
}
