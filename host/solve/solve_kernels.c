/* solve_kernels.c - what every method's solve uses: the vector kernels (cl/solve.cl) built
 * for the precision and a work-group the device runs, their grid, the workspace and its
 * layout, how the kernels after a product find its sums, launches and products, the common
 * start and the Jacobi diagonal. */
#include "solve/solve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cmrscl_status cmrs_solve_set_args(cl_kernel k, cl_uint at, int n, const solve_arg *args)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < n; ++i)
        err |= clSetKernelArg(k, at + (cl_uint)i, args[i].size, args[i].value);
    return err == CL_SUCCESS ? CMRSCL_OK
                             : cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg (solver) failed");
}

cl_int cmrs_solve_set_real(cmrscl_solver s, cl_kernel k, cl_uint index, double v)
{
    if (s->precision == CMRSCL_DOUBLE)
        return clSetKernelArg(k, index, sizeof v, &v);
    cl_float f = (cl_float)v;
    return clSetKernelArg(k, index, sizeof f, &f);
}

cmrscl_status cmrs_solve_launch(cmrscl_solver s, cl_kernel k, size_t groups)
{
    size_t global = groups ? groups * s->local : s->global;
    cl_int err = CL_SUCCESS;
    if (s->out_of_order) /* every kernel of a solve reads what the one before wrote */
        err = clEnqueueBarrierWithWaitList(s->queue, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueNDRangeKernel(s->queue, k, 1, NULL, &global, &s->local, 0, NULL, NULL);
    ++s->launches;
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueNDRangeKernel (solver)");
}

cmrscl_status cmrs_solve_product_kernels(cmrscl_solver s, const product_kernels *k)
{
    cl_int err = s->out_of_order ? clEnqueueBarrierWithWaitList(s->queue, 0, NULL, NULL) : 0;
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clEnqueueBarrierWithWaitList");
    s->launches += 1 + (k->combine != NULL);
    return cmrs_product_kernels_enqueue(k, s->queue, s->out_of_order);
}

cmrscl_status cmrs_solve_product(cmrscl_solver s, int which)
{
    return cmrs_solve_product_kernels(s, &s->product[which]);
}

cmrscl_status cmrs_solve_renumber(cmrscl_solver s, bool to_device, cl_mem src, cl_mem dst)
{
    cl_int err = s->out_of_order ? clEnqueueBarrierWithWaitList(s->queue, 0, NULL, NULL) : 0;
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clEnqueueBarrierWithWaitList");
    ++s->launches;
    cmrs_renumber_hold(s->m);
    cmrscl_status st =
        to_device ? cmrs_renumber_gather(s->m, s->queue, src, dst, 0, NULL, NULL)
                  : cmrs_renumber_scatter(s->m, s->queue, 1.0, src, 0.0, dst, 0, NULL, NULL);
    cmrs_renumber_let_go(s->m);
    return st;
}

cmrscl_status cmrs_solve_plain_product(cmrscl_solver s, double alpha, cl_mem x, double beta,
                                       cl_mem y)
{
    cmrscl_matrix m = s->m;
    cl_int err = s->out_of_order ? clEnqueueBarrierWithWaitList(s->queue, 0, NULL, NULL) : 0;
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clEnqueueBarrierWithWaitList");
    pthread_mutex_lock(&m->lock);
    cmrscl_status st = cmrs_spmv_enqueue(m, alpha, x, beta, y, s->queue, 0, NULL, NULL, NULL);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* How the kernel after a product finds the product's real4s (solve.h, solve_sums). While
 * they are few (SOLVE_CHAIN_LIMIT), the product's own last units add them up where that pays
 * (the chain, cl/dots.cl), else each work-group of the next kernel adds them all
 * (SOLVE_FOLD_LIMIT); past that solve_reduce cuts them to a few first. A chunk of the chain
 * is about the square root of the units: the last unit of the last chunk adds up a chunk,
 * then the chunks' sums, about as many. */
void cmrs_solve_choose_sums(cmrscl_solver s)
{
    /* for measuring the limits and for the tests of each path: CMRSCL_SOLVE_FOLD_LIMIT,
     * _CHAIN_LIMIT, _REDUCE_SHARE, and CMRSCL_SOLVE_SUMS=fold|reduce|chain (chain: where the
     * device lets it) */
    const char *fold = getenv("CMRSCL_SOLVE_FOLD_LIMIT"),
               *chain = getenv("CMRSCL_SOLVE_CHAIN_LIMIT");
    const char *per_item = getenv("CMRSCL_SOLVE_REDUCE_SHARE"), *sums = getenv("CMRSCL_SOLVE_SUMS");
    size_t fold_limit = fold && *fold ? strtoull(fold, NULL, 10) : SOLVE_FOLD_LIMIT;
    /* the method's cap (solve.h), kept: the products made later take the same */
    s->fold_cap = s->method->chain_sums ? 0 : fold_limit;
    bool can_chain, capped;
    cmrs_product_kernels_shape(s->m, s->method->product_options(s, 0), s->fold_cap,
                               &s->product_groups, &s->product_space, &can_chain, &capped);
    size_t units = s->product_groups;
    size_t chain_limit = chain && *chain ? strtoull(chain, NULL, 10) : SOLVE_CHAIN_LIMIT;
    /* the chain paid on NVIDIA, for the methods whose kernels wait for the sums (solve.h),
     * where a product's units are its warps; on a capped grid's work-groups, each unit after a
     * barrier, it lost to the fold (docs/dev/PERFORMANCE.md, SOLVE_PRODUCT_RESIDENT); on CPUs
     * (PoCL) it was slower than the fold, and is taken there only when asked for */
    bool chain_pays = can_chain && !capped && s->ctx->info.warp_shuffle && s->method->chain_sums;
    s->sums = chain_pays && units <= chain_limit ? SUMS_CHAIN
              : units <= fold_limit              ? SUMS_FOLD
                                                 : SUMS_REDUCE;
    if (sums && !strcmp(sums, "fold"))
        s->sums = SUMS_FOLD;
    else if (sums && !strcmp(sums, "reduce"))
        s->sums = SUMS_REDUCE;
    else if (sums && !strcmp(sums, "chain"))
        s->sums = can_chain ? SUMS_CHAIN : SUMS_REDUCE;
    s->chain = 1;
    while (s->chain * s->chain < units)
        s->chain *= 2;
    size_t share =
        (per_item && atoi(per_item) > 0 ? (size_t)atoi(per_item) : SOLVE_REDUCE_SHARE) * s->local;
    s->reduce_groups = (units + share - 1) / share;
    s->reduce_groups = s->reduce_groups < 1           ? 1
                       : s->reduce_groups > s->groups ? s->groups
                                                      : s->reduce_groups;
}

void cmrs_solve_product_region(const cmrscl_solver s, cl_uint *at, cl_uint *count)
{
    /* the chain's sum follows the units' real4s (cl/dots.cl) */
    *at = s->sums == SUMS_REDUCE  ? s->at.reduced
          : s->sums == SUMS_CHAIN ? s->at.product + 4 * (cl_uint)s->product_groups
                                  : s->at.product;
    *count = (cl_uint)(s->sums == SUMS_REDUCE  ? s->reduce_groups
                       : s->sums == SUMS_CHAIN ? 1
                                               : s->product_groups);
}

cmrscl_status cmrs_solve_product_sums(cmrscl_solver s)
{
    return s->sums == SUMS_REDUCE ? cmrs_solve_launch(s, s->reduce, s->reduce_groups) : CMRSCL_OK;
}

cmrscl_status cmrs_solve_copy(cmrscl_solver s, cl_mem from, cl_mem to)
{
    cl_int err = s->out_of_order ? clEnqueueBarrierWithWaitList(s->queue, 0, NULL, NULL) : 0;
    if (err == CL_SUCCESS && s->n)
        err = clEnqueueCopyBuffer(s->queue, from, to, 0, 0, s->n * s->value_size, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueCopyBuffer (solver)");
}

cmrscl_status cmrs_solve_fill_zero(cmrscl_solver s, cl_mem v)
{
    const cl_double zero = 0; /* as many zero bytes as a value has */
    cl_int err = s->out_of_order ? clEnqueueBarrierWithWaitList(s->queue, 0, NULL, NULL) : 0;
    if (err == CL_SUCCESS && s->n)
        err = clEnqueueFillBuffer(s->queue, v, &zero, s->value_size, 0, s->n * s->value_size, 0,
                                  NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueFillBuffer (solver)");
}

static size_t kernel_group_limit(cmrscl_solver s, cl_kernel k);

cmrscl_status cmrs_solve_kernel(cmrscl_solver s, bool gmres, const char *name, cl_kernel *out)
{
    cl_int err;
    *out = clCreateKernel(gmres ? s->gmres_program : s->program, name, &err);
    if (!*out)
        return cmrscl_fail_cl(err, name);
    size_t max_wg = kernel_group_limit(s, *out);
    if (max_wg && max_wg < s->local)
        return cmrscl_fail(CMRSCL_ERROR_DEVICE_LIMIT,
                           "the solver's kernel %s runs at most %zu work-items per group on "
                           "this device, fewer than its %zu",
                           name, max_wg, s->local);
    return CMRSCL_OK;
}

unsigned cmrs_solve_gmres_blocks(const cmrscl_solver s)
{
    const char *forced = getenv("CMRSCL_GMRES_BLOCKS");
    if (forced && *forced)
        return atoi(forced) != 0;
    return (s->ctx->info.type & CL_DEVICE_TYPE_CPU) ? 1u : 0u;
}

/* cl/solve.cl (and cl/solve_gmres.cl) for the precision and a work-group of `local`. */
static cmrscl_status build(cmrscl_solver s, const char *file, cl_program *out)
{
    char options[240];
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -DSOLVE=1 -DHEIGHT=1 -DWARP=1 -DWG_SIZE=%zu -DVALUE_DOUBLE=%d "
             "-DGROUP_SHUFFLE=%d -DGMRES_DOTS_PER=%u -DGMRES_BLOCKS=%u",
             s->local, s->precision == CMRSCL_DOUBLE,
             s->ctx->info.warp_shuffle && s->local % 32 == 0, GMRES_DOTS_PER(s), s->gmres_blocks);
    double seconds;
    cmrscl_program_source from;
    return cmrs_program_get(s->ctx, file, options, out, &seconds, &from);
}

/* The solver's grid. Each work-group of a kernel adds up all the real4s of partial sums the
 * kernel before it left, one per work-group of that kernel: the cost of that grows with the
 * square of the work-groups, so they are few and wide - SOLVE_GROUP work-items (or the most
 * the device runs; a power of two, for the trees), SOLVE_OCCUPANCY of the work-items the
 * device keeps resident (streaming kernels keep the memory busy from there), fewer for short
 * vectors: at least SOLVE_ROWS rows a work-item (the kernels take rows in pairs). A fixed grid, so
 * that every partial sum holds the same rows every run. */
static void choose_grid(cmrscl_solver s)
{
    const cmrscl_device_info *d = &s->ctx->info;
    /* CMRSCL_SOLVE_GROUP, CMRSCL_SOLVE_OCCUPANCY: for measuring the choice */
    const char *group = getenv("CMRSCL_SOLVE_GROUP"), *occupancy = getenv("CMRSCL_SOLVE_OCCUPANCY");
    const char *rows = getenv("CMRSCL_SOLVE_ROWS");
    size_t local = group && atoi(group) > 0 ? (size_t)atoi(group) : SOLVE_GROUP;
    size_t share = occupancy && atoi(occupancy) > 0 ? (size_t)atoi(occupancy) : SOLVE_OCCUPANCY;
    size_t per_item = rows && atoi(rows) > 0 ? (size_t)atoi(rows) : SOLVE_ROWS;
    while (local > 1 && local > d->max_work_group_size)
        local /= 2;
    s->local = local;
    size_t resident = (size_t)d->compute_units * d->resident_items_per_cu / share / local;
    size_t needed = ((size_t)s->n + per_item * local - 1) / (per_item * local);
    s->groups = needed < resident ? needed : resident;
    if (s->groups == 0)
        s->groups = 1;
    s->global = s->groups * local;
}

/* The work-items a group of kernel k may have on the device (0: not known). */
static size_t kernel_group_limit(cmrscl_solver s, cl_kernel k)
{
    size_t max_wg = 0;
    clGetKernelWorkGroupInfo(k, s->ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg, &max_wg,
                             NULL);
    return max_wg;
}

cmrscl_status cmrs_solve_kernels_make(cmrscl_solver s)
{
    choose_grid(s);
    s->gmres_blocks = cmrs_solve_gmres_blocks(s);
    cmrscl_status st;
    /* a device may run the solver's kernels in smaller groups than it reports for any kernel
     * (Mesa's llvmpipe: 32): then the most they run, built again */
    for (;;) {
        st = build(s, "solve.cl", &s->program);
        cl_int err = CL_SUCCESS;
        if (st == CMRSCL_OK && !(s->start = clCreateKernel(s->program, "solve_start", &err)))
            st = cmrscl_fail_cl(err, "clCreateKernel (solve_start)");
        size_t max_wg = st == CMRSCL_OK ? kernel_group_limit(s, s->start) : 0;
        if (max_wg == 0 || max_wg >= s->local)
            break;
        clReleaseKernel(s->start), s->start = NULL;
        size_t items = s->global;
        while (s->local > max_wg)
            s->local /= 2;
        size_t needed = ((size_t)s->n + s->local - 1) / s->local;
        s->groups = items / s->local < needed ? items / s->local : needed;
        s->groups = s->groups ? s->groups : 1;
        s->global = s->groups * s->local;
    }
    if (st == CMRSCL_OK && s->method->id == CMRSCL_METHOD_GMRES)
        st = build(s, "solve_gmres.cl", &s->gmres_program);
    if (st == CMRSCL_OK)
        st = cmrs_solve_kernel(s, false, "solve_init", &s->init);
    if (st == CMRSCL_OK)
        st = cmrs_solve_kernel(s, false, "solve_reduce", &s->reduce);
    if (st == CMRSCL_OK)
        st = cmrs_solve_kernel(s, false, "solve_norm", &s->norm);
    if (st == CMRSCL_OK)
        st = cmrs_solve_kernel(s, false, "solve_triple", &s->triple);
    return st;
}

cmrscl_status cmrs_solve_workspace_make(cmrscl_solver s, cl_uint method_reals)
{
    solve_layout *a = &s->at;
    size_t grid = 4 * s->groups;
    size_t at = CMRS_WS_HEADER;
    a->product = (cl_uint)at;
    at += 4 * (s->product_space ? s->product_space : 1);
    if (s->sums == SUMS_CHAIN) { /* the sum, the chunks' sums and their counters, the last's */
        size_t chunks = (s->product_groups + s->chain - 1) / s->chain;
        at += (4 + 4 * chunks + chunks + 1 + 3) / 4 * 4; /* every region starts at a real4 */
    }
    a->reduced = (cl_uint)at;
    at += grid;
    a->rr[0] = (cl_uint)at;
    a->rr[1] = (cl_uint)(at + grid);
    a->start = (cl_uint)(at + 2 * grid);
    a->second = (cl_uint)(at + 3 * grid);
    at += 4 * grid;
    a->method = (cl_uint)at;
    at += ((size_t)method_reals + 3) / 4 * 4;
    a->history = (cl_uint)at;
    /* the residual of every iteration and of the last test, up to a bound that keeps the
     * workspace small beside the vectors */
    size_t cap = (size_t)s->opt.max_iterations + 2, bound = (size_t)1 << 20;
    a->history_cap = (cl_uint)(cap < bound ? cap : bound);
    a->reals = at + a->history_cap;
    if (a->reals > UINT32_MAX / 2)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                           "the solver's workspace of %zu values is too "
                           "large",
                           a->reals);
    cl_int err;
    s->ws =
        clCreateBuffer(s->ctx->context, CL_MEM_READ_WRITE, a->reals * s->value_size, NULL, &err);
    if (!s->ws)
        return cmrscl_fail_cl(err, "clCreateBuffer (the solver's workspace)");
    /* the common kernels' fixed arguments (cl/solve.cl) */
    cl_uint n = s->n, groups = (cl_uint)s->groups, pg = (cl_uint)s->product_groups;
    solve_arg reduce[] = {SOLVE_MEM(s->ws), SOLVE_UINT(pg), SOLVE_UINT(a->product),
                          SOLVE_UINT(a->reduced)};
    solve_arg init[] = {SOLVE_MEM(s->ws), SOLVE_UINT(groups), SOLVE_UINT(a->rr[0]),
                        SOLVE_UINT(a->start)};
    cl_mem none = NULL; /* solve_norm's w: given by true_residual where it measures rounding */
    solve_arg norm[] = {SOLVE_UINT(n), SOLVE_MEM(s->vec[1]), SOLVE_MEM(none), SOLVE_MEM(s->ws),
                        SOLVE_UINT(a->second)};
    cmrscl_status st = cmrs_solve_set_args(s->reduce, 0, 4, reduce);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->init, 0, 4, init);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(s->norm, 0, 5, norm);
    return st;
}

cmrscl_status cmrs_solve_start_common(cmrscl_solver s, cl_mem b, cl_mem x, cl_mem p, cl_mem rs,
                                      cl_mem dinv)
{
    cl_uint n = s->n;
    solve_arg start[] = {SOLVE_UINT(n),          SOLVE_MEM(b),     SOLVE_MEM(x),
                         SOLVE_MEM(s->vec[0]),   SOLVE_MEM(p),     SOLVE_MEM(rs),
                         SOLVE_MEM(dinv),        SOLVE_MEM(s->ws), SOLVE_UINT(s->at.rr[0]),
                         SOLVE_UINT(s->at.start)};
    cmrscl_status st = cmrs_solve_set_args(s->start, 0, 10, start);
    cl_uint done = (cl_uint)s->done;
    cl_int err = cmrs_solve_set_real(s, s->init, 4, s->target * s->opt.rtol);
    err |= cmrs_solve_set_real(s, s->init, 5, s->target * s->opt.atol);
    err |= clSetKernelArg(s->init, 6, sizeof done, &done);
    err |= clSetKernelArg(s->init, 7, sizeof s->at.history_cap, &s->at.history_cap);
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg (solve_init) failed");
    if (st == CMRSCL_OK)
        st = cmrs_solve_launch(s, s->start, 0);
    if (st == CMRSCL_OK)
        st = cmrs_solve_launch(s, s->init, 1);
    return st;
}

cmrscl_status cmrs_solve_jacobi(cmrscl_solver s)
{
    cmrscl_matrix m = s->m;
    if (s->dinv && s->values_version == m->values_version)
        return CMRSCL_OK;
    cl_int err = CL_SUCCESS;
    if (!s->dinv)
        s->dinv = clCreateBuffer(s->ctx->context, CL_MEM_READ_WRITE,
                                 (s->n ? s->n : 1) * s->value_size, NULL, &err);
    if (!s->dinv)
        return cmrscl_fail_cl(err, "clCreateBuffer (the Jacobi diagonal)");
    if (s->n == 0)
        return CMRSCL_OK;
    /* diag(A): the matrix's own product with the identity's rows (spmv_common.cl, GATHER) */
    product_kernels diag;
    cl_kernel invert = NULL;
    cl_mem none = NULL;
    cl_uint n = s->n, at = s->at.second;
    cmrscl_status st = cmrs_product_kernels_make(m, "-DDIAGONAL=1", 0, &diag);
    if (st == CMRSCL_OK)
        st = cmrs_product_kernels_bind(&diag, s->precision, 1.0, none, 0.0, s->dinv, false, NULL, 0,
                                       NULL);
    if (st == CMRSCL_OK) {
        pthread_mutex_lock(&m->lock); /* the split path's partial sums are the matrix's */
        st = cmrs_product_kernels_enqueue(&diag, s->queue, s->out_of_order);
        pthread_mutex_unlock(&m->lock);
    }
    solve_arg args[] = {SOLVE_UINT(n), SOLVE_MEM(s->dinv), SOLVE_MEM(s->ws), SOLVE_UINT(at)};
    if (st == CMRSCL_OK)
        st = cmrs_solve_kernel(s, false, "solve_invert", &invert);
    if (st == CMRSCL_OK)
        st = cmrs_solve_set_args(invert, 0, 4, args);
    if (st == CMRSCL_OK)
        st = cmrs_solve_launch(s, invert, 0);
    /* rows without a usable diagonal: counted by the work-groups, added here */
    double bad = 0;
    size_t count = 4 * s->groups;
    double *sums = st == CMRSCL_OK ? cmrscl_alloc(count, sizeof(double)) : NULL;
    if (st == CMRSCL_OK && !sums)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the solver");
    if (st == CMRSCL_OK) {
        err = clEnqueueReadBuffer(s->queue, s->ws, CL_TRUE, at * s->value_size,
                                  count * s->value_size, sums, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            st = cmrscl_fail_cl(err, "clEnqueueReadBuffer (the Jacobi diagonal)");
    }
    for (size_t g = 0; st == CMRSCL_OK && g < s->groups; ++g)
        bad += s->precision == CMRSCL_DOUBLE ? sums[4 * g] : ((const float *)sums)[4 * g];
    free(sums);
    if (invert)
        clReleaseKernel(invert);
    cmrs_product_kernels_release(&diag);
    if (st == CMRSCL_OK && bad > 0)
        st = cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                         "the Jacobi preconditioner needs a nonzero, finite diagonal: %.0f of "
                         "the %u rows have none",
                         bad, s->n);
    if (st == CMRSCL_OK)
        s->values_version = m->values_version;
    return st;
}
