/* solve.c - the distributed solver's common part (dist_solve.h): the kernels of mpi/solve.cl,
 * the work vectors and the partial sums, made once per matrix; the collective that turns the
 * work-groups' sums into the whole problem's - one read of a few KB and one MPI_Allgather of
 * each rank's sums, added in rank order on every rank, so that every rank computes the same
 * scalars bit for bit (an MPI_Allreduce may add in an order of its own) and takes the same
 * decisions; the checks before a solve, the true residual after it, and the public calls,
 * which hand the iterations to a method (solve_cg.c, solve_bicgstab.c). */
#include "dist_solve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct embedded_kernel {
    const char *name;
    const char *text;
    size_t size;
};
extern const struct embedded_kernel cmrscl_mpi_kernels[]; /* [1]: mpi/solve.cl */

#define MEM sizeof(cl_mem)

cmrscl_status cmrs_dsolve_fail_cl(cl_int err, const char *what)
{
    return cmrs_dist_fail(err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES
                              ? CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY
                              : CMRSCL_ERROR_OPENCL,
                          "%s failed: OpenCL error %d", what, (int)err);
}

void cmrs_dist_solver_free(struct dist_solver *sv)
{
    if (!sv)
        return;
    for (int i = 0; i < VECTORS; ++i)
        if (sv->vec[i])
            clReleaseMemObject(sv->vec[i]);
    cmrscl_precond_free(sv->amg); /* before the matrix whose local block it borrows */
    cl_mem bufs[] = {sv->dinv, sv->sums, sv->pinned};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; ++i)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    cl_kernel ks[] = {sv->start,    sv->update,    sv->dots,    sv->bicg_p,
                      sv->bicg_s,   sv->bicg_step, sv->gm_dots, sv->gm_orth,
                      sv->gm_scale, sv->rounding,  sv->pcg_step};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; ++i)
        if (ks[i])
            clReleaseKernel(ks[i]);
    if (sv->program)
        clReleaseProgram(sv->program);
    free(sv->all);
    free(sv);
}

static cmrscl_status build(cmrscl_dist_matrix m, struct dist_solver *sv, cl_device_id device)
{
    cl_int err = CL_SUCCESS;
    char options[128];
    snprintf(options, sizeof options, "-D REAL=%s -D WG=%zu",
             m->plan.precision == CMRSCL_DOUBLE ? "double -D USE_FP64" : "float", sv->wg);
    cmrscl_status st = cmrs_dist_build(m->cl, device, "solve.cl", cmrscl_mpi_kernels[1].text,
                                       options, &sv->program);
    if (st != CMRSCL_OK)
        return st;
    const char *names[] = {"dcg_start", "dcg_update",    "dcg_dots", "dbicg_p",
                           "dbicg_s",   "dbicg_step",    "dgm_dots", "dgm_orth",
                           "dgm_scale", "dres_rounding", "dpcg_step"};
    cl_kernel *ks[] = {&sv->start,    &sv->update,    &sv->dots,    &sv->bicg_p,
                       &sv->bicg_s,   &sv->bicg_step, &sv->gm_dots, &sv->gm_orth,
                       &sv->gm_scale, &sv->rounding,  &sv->pcg_step};
    for (size_t i = 0; err == CL_SUCCESS && i < sizeof ks / sizeof *ks; ++i)
        *ks[i] = clCreateKernel(sv->program, names[i], &err);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrs_dsolve_fail_cl(err, "clCreateKernel (solve.cl)");
}

/* The solver's kernels and sums, made once per matrix, and the first `vectors` work vectors
 * (local work). */
static cmrscl_status make(cmrscl_dist_matrix m, int vectors)
{
    struct dist_solver *sv = m->solver;
    cmrscl_status st = CMRSCL_OK;
    cl_int err = CL_SUCCESS;
    if (!sv) {
        if (!(sv = calloc(1, sizeof *sv)))
            return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory");
        cl_device_id device = NULL;
        cl_uint units = 1;
        size_t max_wg = 1;
        err = clGetCommandQueueInfo(m->queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL);
        if (err == CL_SUCCESS)
            err = clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
        if (err == CL_SUCCESS)
            err = clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg, &max_wg,
                                  NULL);
        sv->n = (cl_uint)m->plan.local_rows;
        for (sv->wg = DIST_CG_WG; sv->wg > max_wg; sv->wg /= 2)
            ;
        size_t wanted = ((size_t)sv->n + sv->wg - 1) / sv->wg;
        size_t most = (size_t)units * DIST_CG_GROUPS_PER_UNIT;
        sv->groups = wanted < 1 ? 1 : wanted < most ? wanted : most;
        sv->all = malloc(sizeof *sv->all * SUMS * (size_t)m->plan.ranks);
        st = !sv->all            ? cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory")
             : err == CL_SUCCESS ? build(m, sv, device)
                                 : cmrs_dsolve_fail_cl(err, "device queries");
        size_t sums = 2 * 4 * cmrs_dist_value_size(m->plan.precision) * sv->groups;
        if (st == CMRSCL_OK) {
            sv->sums = clCreateBuffer(m->cl, CL_MEM_READ_WRITE, sums, NULL, &err);
            if (err == CL_SUCCESS)
                sv->pinned = clCreateBuffer(m->cl, CL_MEM_ALLOC_HOST_PTR, sums, NULL, &err);
            if (err == CL_SUCCESS)
                sv->sums_host =
                    clEnqueueMapBuffer(m->queue, sv->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                       sums, 0, NULL, NULL, &err);
            st = err == CL_SUCCESS ? CMRSCL_OK : cmrs_dsolve_fail_cl(err, "the solver's sums");
        }
        if (st != CMRSCL_OK) {
            cmrs_dist_solver_free(sv);
            return st;
        }
        m->solver = sv;
    }
    size_t bytes = cmrs_dist_value_size(m->plan.precision) * ((size_t)sv->n + 1);
    for (int i = 0; st == CMRSCL_OK && i < vectors; ++i)
        if (!sv->vec[i]) {
            sv->vec[i] = clCreateBuffer(m->cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
            st = err == CL_SUCCESS ? CMRSCL_OK : cmrs_dsolve_fail_cl(err, "the solver's vectors");
        }
    return st;
}

/* Jacobi's inverse diagonal on the device, once per matrix; ERROR_INVALID_MATRIX naming the
 * first row (global) whose diagonal is zero or missing. */
static cmrscl_status make_dinv(cmrscl_dist_matrix m)
{
    struct dist_solver *sv = m->solver;
    if (sv->dinv)
        return CMRSCL_OK;
    size_t n = sv->n, vs = cmrs_dist_value_size(m->plan.precision);
    void *host = malloc(vs * (n + 1));
    if (!host)
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the diagonal");
    for (size_t i = 0; i < n; ++i) {
        double d = m->diagonal[i];
        if (d == 0 || !isfinite(d)) {
            free(host);
            return cmrs_dist_fail(CMRSCL_ERROR_INVALID_MATRIX,
                                  "row %lld's diagonal is %g: Jacobi needs a nonzero finite one",
                                  (long long)m->plan.first_row + (long long)i, d);
        }
        if (m->plan.precision == CMRSCL_DOUBLE)
            ((double *)host)[i] = 1.0 / d;
        else
            ((float *)host)[i] = (float)(1.0 / d);
    }
    cl_int err;
    sv->dinv =
        clCreateBuffer(m->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, vs * (n + 1), host, &err);
    free(host);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrs_dsolve_fail_cl(err, "the inverse diagonal");
}

/* AMG of this rank's diagonal block, from its arrays read back (the block Jacobi of
 * solve_pcg.c), level 0 the block itself; default options. */
static cmrscl_status make_amg(cmrscl_dist_matrix m)
{
    struct dist_solver *sv = m->solver;
    if (sv->amg || m->plan.local_rows == 0) /* a rank of no rows has no block to precondition */
        return CMRSCL_OK;
    cmrscl_cmrs cmrs = {0};
    cmrscl_csr block = {0};
    cmrscl_status st = cmrscl_matrix_read_cmrs(m->local, &cmrs);
    if (st == CMRSCL_OK)
        st = cmrscl_cmrs_to_csr(&cmrs, &block);
    cmrscl_cmrs_free(&cmrs);
    cmrscl_amg_options opt = CMRSCL_AMG_OPTIONS_INIT;
    opt.matrix = m->local;
    if (st == CMRSCL_OK)
        st = cmrscl_precond_create_amg(m->ctx, m->plan.precision, &block, &opt, &sv->amg);
    cmrscl_csr_free(&block);
    return st == CMRSCL_OK
               ? st
               : cmrs_dist_fail(st, "AMG of rows %d..%d's block: %s", m->plan.first_row,
                                m->plan.first_row + m->plan.local_rows - 1, cmrscl_last_error());
}

cl_int cmrs_dsolve_args(cl_kernel k, cl_uint at, int n, const size_t *size,
                        const void *const *value)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < n && err == CL_SUCCESS; ++i)
        err = clSetKernelArg(k, at + (cl_uint)i, size[i], value[i]);
    return err;
}

real_arg cmrs_dsolve_real(cmrscl_dist_matrix m, double v)
{
    real_arg a;
    if (m->plan.precision == CMRSCL_DOUBLE)
        a.d = v;
    else
        a.f = (float)v;
    return a;
}

cmrscl_status cmrs_dsolve_launch(cmrscl_dist_matrix m, cl_kernel k)
{
    size_t local = m->solver->wg, global = local * m->solver->groups;
    cl_int err = clEnqueueNDRangeKernel(m->queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK
                             : cmrs_dsolve_fail_cl(err, "clEnqueueNDRangeKernel (solve.cl)");
}

cmrscl_status cmrs_dsolve_dots(cmrscl_dist_matrix m, cl_mem a, cl_mem b)
{
    struct dist_solver *sv = m->solver;
    cl_mem none = NULL;
    cl_uint second = (cl_uint)sv->groups;
    const size_t size[] = {sizeof(cl_uint), MEM, MEM, MEM, MEM, sizeof(cl_uint)};
    const void *value[] = {&sv->n, &a, &b, &none, &sv->sums, &second};
    cl_int err = cmrs_dsolve_args(sv->dots, 0, 6, size, value);
    return err == CL_SUCCESS ? cmrs_dsolve_launch(m, sv->dots)
                             : cmrs_dsolve_fail_cl(err, "clSetKernelArg (dcg_dots)");
}

cl_int cmrs_dsolve_read(cmrscl_dist_matrix m, cl_mem buf, size_t bytes, void *host)
{
    cl_event read = NULL;
    cl_int err = clEnqueueReadBuffer(m->queue, buf, CL_FALSE, 0, bytes, host, 0, NULL, &read);
    if (err == CL_SUCCESS)
        err = cmrs_dist_wait(m, 1, &read);
    if (err != CL_SUCCESS) /* the read may still run: host is not to be reused before it ends */
        clFinish(m->queue);
    if (read)
        clReleaseEvent(read);
    return err;
}

cmrscl_status cmrs_dsolve_sums(cmrscl_dist_matrix m, cmrscl_status st, double *out)
{
    struct dist_solver *sv = m->solver;
    size_t g = sv->groups, vs = cmrs_dist_value_size(m->plan.precision);
    double mine[SUMS] = {0};
    cl_int err = CL_SUCCESS;
    if (st == CMRSCL_OK)
        err = cmrs_dsolve_read(m, sv->sums, 2 * 4 * vs * g, sv->sums_host);
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrs_dsolve_fail_cl(err, "reading the partial sums");
    for (size_t i = 0; st == CMRSCL_OK && i < 2 * g; ++i) {
        double v[4];
        for (int c = 0; c < 4; ++c)
            v[c] = vs == sizeof(double) ? ((const double *)sv->sums_host)[4 * i + (size_t)c]
                                        : ((const float *)sv->sums_host)[4 * i + (size_t)c];
        if (i < g) /* the first kernel's */
            mine[SUM_FIRST0] += v[0], mine[SUM_FIRST1] += v[1], mine[SUM_FIRST2] += v[2];
        else /* the dots' */
            mine[SUM_DOTS0] += v[0], mine[SUM_DOTS1] += v[1];
    }
    /* A failed rank sends NaN: every rank then stops, and the agreement after says why. */
    if (st != CMRSCL_OK)
        for (int c = 0; c < SUMS; ++c)
            mine[c] = NAN;
    int ranks = m->plan.ranks;
    int rc = MPI_Allgather(mine, SUMS, MPI_DOUBLE, sv->all, SUMS, MPI_DOUBLE, m->comm);
    for (int c = 0; c < SUMS; ++c) {
        out[c] = 0;
        for (int r = 0; r < ranks; ++r)
            out[c] += sv->all[SUMS * r + c];
    }
    if (rc != MPI_SUCCESS)
        st = st == CMRSCL_OK ? cmrs_dist_fail_mpi(rc, "MPI_Allgather (the solver's sums)") : st;
    return st;
}

bool cmrs_dsolve_test(const cmrscl_solve_options *o, cmrscl_solve_result *out, int it, int max,
                      double rr)
{
    out->history[it] = out->residual = sqrt(rr);
    if (o->monitor)
        o->monitor(o->monitor_data, it, out->residual);
    if (!isfinite(rr))
        out->reason = CMRSCL_SOLVE_NONFINITE, out->breakdown = rr;
    else if (out->residual <= out->threshold)
        out->reason = CMRSCL_SOLVE_CONVERGED, out->converged = 1;
    else if (it == max)
        out->reason = CMRSCL_SOLVE_MAX_ITERATIONS;
    else
        return false;
    return true;
}

cmrscl_status cmrs_dsolve_copy(cmrscl_dist_matrix m, cmrscl_status st, cl_mem from, cl_mem to,
                               const char *what)
{
    size_t bytes = cmrs_dist_value_size(m->plan.precision) * (size_t)m->solver->n;
    cl_int err = st == CMRSCL_OK && bytes
                     ? clEnqueueCopyBuffer(m->queue, from, to, 0, 0, bytes, 0, NULL, NULL)
                     : CL_SUCCESS;
    return err == CL_SUCCESS ? st : cmrs_dsolve_fail_cl(err, what);
}

void cmrs_dsolve_begin(const cmrscl_solve_options *o, cmrscl_status st, const double *s,
                       cmrscl_solve_result *out)
{
    out->b_norm = sqrt(s[SUM_FIRST2]);
    out->threshold = fmax(o->rtol * out->b_norm, o->atol);
    if (st == CMRSCL_OK && !(isfinite(s[SUM_FIRST2]) && isfinite(s[SUM_FIRST0])))
        out->reason = CMRSCL_SOLVE_BAD_INPUT;
}

cmrscl_status cmrs_dsolve_residual(cmrscl_dist_matrix m, cl_mem b, cl_mem x)
{
    cl_mem r = m->solver->vec[V_R];
    cmrscl_status st = cmrs_dsolve_copy(m, CMRSCL_OK, b, r, "copying b");
    return cmrs_dist_product(m, st, -1.0, x, 1.0, r, true, NULL);
}

/* Checks every rank makes before a solve (local). */
static cmrscl_status check_solve(cmrscl_dist_matrix m, const cmrscl_solve_options *o, cl_mem b,
                                 cl_mem x, cmrscl_solve_result *out)
{
    if (!out)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    if (m->plan.rows != m->plan.cols)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                              "the matrix is %lld x %lld: a solve needs a square one",
                              (long long)m->plan.rows, (long long)m->plan.cols);
    if (o->method != CMRSCL_METHOD_CG && o->method != CMRSCL_METHOD_BICGSTAB &&
        o->method != CMRSCL_METHOD_GMRES)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "method %d is not known",
                              (int)o->method);
    if (o->method != CMRSCL_METHOD_CG && o->preconditioner != CMRSCL_PRECONDITIONER_NONE)
        return cmrs_dist_fail(CMRSCL_ERROR_UNSUPPORTED,
                              "%s: the preconditioners (Jacobi, AMG) are conjugate "
                              "gradients' only here",
                              cmrscl_method_name(o->method));
    if (o->method == CMRSCL_METHOD_GMRES && (o->restart < 0 || o->restart > CMRSCL_MAX_RESTART))
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                              "gmres: restart %d: expected 1..%d (0: 20)", o->restart,
                              CMRSCL_MAX_RESTART);
    if (o->preconditioner == CMRSCL_PRECONDITIONER_AMG && o->precond) {
        cmrscl_status st =
            cmrscl_precond_check(o->precond, m->ctx, m->plan.precision, m->plan.local_rows);
        if (st != CMRSCL_OK)
            return cmrs_dist_fail(st,
                                  "AMG: this rank's preconditioner does not fit its block (build "
                                  "it from cmrscl_dist_blocks' local block on the matrix's "
                                  "context): %s",
                                  cmrscl_last_error());
    }
    if (o->preconditioner != CMRSCL_PRECONDITIONER_NONE &&
        o->preconditioner != CMRSCL_PRECONDITIONER_JACOBI &&
        o->preconditioner != CMRSCL_PRECONDITIONER_AMG)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "preconditioner %d is not known",
                              (int)o->preconditioner);
    if (!(o->rtol >= 0) || !(o->atol >= 0) || o->max_iterations < 0)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                              "rtol %g, atol %g, max_iterations %d: none may be negative or NaN",
                              o->rtol, o->atol, o->max_iterations);
    if (b && b == x)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "b and x must be different buffers");
    size_t need = cmrs_dist_value_size(m->plan.precision) * (size_t)m->plan.local_rows;
    cl_mem v[] = {b, x};
    const char *name[] = {"b", "x"};
    for (int i = 0; i < 2 && need > 0; ++i) {
        size_t size = 0;
        cl_context owner = NULL;
        if (!v[i])
            return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                                  "%s is NULL but holds %d entries here", name[i],
                                  m->plan.local_rows);
        cl_int err = clGetMemObjectInfo(v[i], CL_MEM_SIZE, sizeof size, &size, NULL);
        if (err == CL_SUCCESS)
            err = clGetMemObjectInfo(v[i], CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
        if (err != CL_SUCCESS || owner != m->cl)
            return cmrs_dist_fail(CMRSCL_ERROR_CONTEXT_MISMATCH,
                                  "%s is not a buffer of the matrix's OpenCL context", name[i]);
        if (size < need)
            return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                                  "%s holds %zu bytes; this rank's %d rows need %zu", name[i], size,
                                  m->plan.local_rows, need);
    }
    return CMRSCL_OK;
}

cmrscl_status cmrs_dsolve_residual_rr(cmrscl_dist_matrix m, cl_mem b, cl_mem x, cmrscl_status st,
                                      double *rr, double *rounding)
{
    struct dist_solver *sv = m->solver;
    cmrscl_status product = cmrs_dsolve_residual(m, b, x); /* collective: every rank runs it */
    if (st == CMRSCL_OK)
        st = product;
    cl_mem r = sv->vec[V_R], x3 = sv->vec[V_P], y = sv->vec[V_Q];
    if (rounding) {
        real_arg three = cmrs_dsolve_real(m, 3.0);
        const size_t size[] = {sizeof(cl_uint), MEM, MEM, cmrs_dist_value_size(m->plan.precision)};
        const void *value[] = {&sv->n, &x, &x3, &three};
        cl_int err = cmrs_dsolve_args(sv->gm_scale, 0, 4, size, value);
        if (st == CMRSCL_OK)
            st = err == CL_SUCCESS ? cmrs_dsolve_launch(m, sv->gm_scale)
                                   : cmrs_dsolve_fail_cl(err, "clSetKernelArg (dgm_scale)");
        st = cmrs_dsolve_copy(m, st, b, y, "copying b");
        st = cmrs_dist_product(m, st, -1.0, x3, 3.0, y, true, NULL); /* collective */
        cl_uint second = (cl_uint)sv->groups;
        const size_t sizes[] = {sizeof(cl_uint), MEM, MEM, MEM, sizeof(cl_uint)};
        const void *values[] = {&sv->n, &r, &y, &sv->sums, &second};
        err = cmrs_dsolve_args(sv->rounding, 0, 5, sizes, values);
        if (st == CMRSCL_OK)
            st = err == CL_SUCCESS ? cmrs_dsolve_launch(m, sv->rounding)
                                   : cmrs_dsolve_fail_cl(err, "clSetKernelArg (dres_rounding)");
    } else if (st == CMRSCL_OK) {
        st = cmrs_dsolve_dots(m, r, r);
    }
    double s[SUMS];
    st = cmrs_dsolve_sums(m, st, s);
    *rr = s[SUM_DOTS0];
    if (rounding)
        *rounding = sqrt(fmax(s[SUM_DOTS1], 0)) / 3;
    return st;
}

int cmrs_dsolve_product_launches(cmrscl_dist_matrix m)
{
    return 1 + (m->plan.halo > 0) + (m->scatter != NULL) + (m->plan.sent > 0);
}

cmrscl_status cmrscl_dist_solve(cmrscl_dist_matrix m, const cmrscl_solve_options *opt, cl_mem b,
                                cl_mem x, cmrscl_solve_result *out)
{
    if (!m)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    /* One rank: the local block is the whole matrix, and the single-device solver (every
     * method, the product fused with the dot products, no host read between checks) is the
     * faster way. */
    if (m->plan.ranks == 1 && m->plan.rows == m->plan.cols) {
        cmrscl_solve_options one = opt ? *opt : (cmrscl_solve_options){0};
        cmrscl_status st = CMRSCL_OK;
        if (one.preconditioner == CMRSCL_PRECONDITIONER_AMG && !one.precond &&
            (st = make(m, 0)) == CMRSCL_OK && (st = make_amg(m)) == CMRSCL_OK)
            one.precond = m->solver->amg; /* the block is the whole matrix */
        return st == CMRSCL_OK ? cmrscl_solve(m->local, &one, b, x, out) : st;
    }
    double t_start = cmrs_dist_seconds();
    cmrscl_solve_options o = opt ? *opt : (cmrscl_solve_options){0};
    if (out)
        memset(out, 0, sizeof *out);
    bool bicgstab = o.method == CMRSCL_METHOD_BICGSTAB;
    cmrscl_status st = check_solve(m, &o, b, x, out);
    bool amg = o.preconditioner == CMRSCL_PRECONDITIONER_AMG;
    if (st == CMRSCL_OK)
        st = make(m, bicgstab || amg ? VECTORS : V_Q + 1);
    if (st == CMRSCL_OK && o.preconditioner == CMRSCL_PRECONDITIONER_JACOBI)
        st = make_dinv(m);
    if (st == CMRSCL_OK && amg && !o.precond)
        st = make_amg(m);
    if ((st = cmrs_dist_agree(m->comm, st)) != CMRSCL_OK)
        return st;
    if (o.rtol == 0 && o.atol == 0)
        o.rtol = 1e-5;
    int64_t max_default = 10 * m->plan.rows;
    int max = o.max_iterations > 0 ? o.max_iterations
                                   : (int)(max_default < (1 << 24) ? max_default : 1 << 24);
    out->history = malloc(sizeof *out->history * ((size_t)max + 1));
    st = cmrs_dist_agree(m->comm, out->history
                                      ? CMRSCL_OK
                                      : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                                       "no memory for %d residuals", max + 1));
    if (st != CMRSCL_OK)
        return st;
    char why[256] = "";
    dist_method_run run = bicgstab                          ? cmrs_dsolve_bicgstab
                          : o.method == CMRSCL_METHOD_GMRES ? cmrs_dsolve_gmres
                          : amg                             ? cmrs_dsolve_pcg
                                                            : cmrs_dsolve_cg;
    m->in_solve = true;
    st = cmrs_dist_agree(m->comm, run(m, &o, b, x, max, out, why, sizeof why));
    m->in_solve = false;
    out->history_length = out->iterations + 1;
    out->checks = out->iterations + 1;
    out->check_interval = 1;
    /* ||b - A x||, in r (the solve is over; the next one sets the kernels' arguments again) */
    double rr = 0;
    if (st == CMRSCL_OK)
        st = cmrs_dsolve_residual_rr(
            m, b, x, st, &rr,
            out->reason == CMRSCL_SOLVE_CONVERGED ? &out->true_residual_rounding : NULL);
    out->true_residual = sqrt(rr);
    /* Residual replacement as the single-device solver's (host/solve/solve_run.c,
     * replace_residual): where the recurrence met the threshold and b - A x, with room for its
     * rounding, did not, the method starts again from x, aiming lower by the rounding, while
     * iterations remain and each pass cuts the true residual to REPLACE_PROGRESS or less;
     * CONVERGED only where the true residual meets the threshold by more than its rounding. */
    for (double before = INFINITY;
         st == CMRSCL_OK && out->reason == CMRSCL_SOLVE_CONVERGED &&
         out->true_residual + out->true_residual_rounding > out->threshold &&
         out->iterations < max && out->true_residual <= REPLACE_PROGRESS * before;) {
        bool room = out->true_residual_rounding < ROUNDING_ROOM * out->threshold;
        if (out->true_residual <= out->threshold && !room)
            break;
        double target = room ? 0.5 * (1 - out->true_residual_rounding / out->threshold) : 1;
        cmrscl_solve_options aim = o;
        aim.rtol *= target, aim.atol *= target;
        before = out->true_residual;
        cmrscl_solve_result pass = {0};
        pass.history = out->history + out->iterations;
        m->in_solve = true;
        st = cmrs_dist_agree(m->comm,
                             run(m, &aim, b, x, max - out->iterations, &pass, why, sizeof why));
        m->in_solve = false;
        out->iterations += pass.iterations, out->reason = pass.reason;
        out->residual = pass.residual, out->breakdown = pass.breakdown;
        out->iterate_seconds += pass.iterate_seconds, ++out->replacements;
        out->history_length = out->iterations + 1, out->checks = out->iterations + 1;
        out->true_residual_rounding = 0;
        if (st == CMRSCL_OK)
            st = cmrs_dsolve_residual_rr(
                m, b, x, st, &rr,
                out->reason == CMRSCL_SOLVE_CONVERGED ? &out->true_residual_rounding : NULL);
        out->true_residual = sqrt(rr);
    }
    if (out->reason == CMRSCL_SOLVE_CONVERGED &&
        !(out->true_residual + out->true_residual_rounding <= out->threshold))
        out->reason = CMRSCL_SOLVE_DRIFTED;
    out->converged = out->reason == CMRSCL_SOLVE_CONVERGED;
    out->seconds = cmrs_dist_seconds() - t_start;
    if (st != CMRSCL_OK)
        return st;
    switch (out->reason) {
    case CMRSCL_SOLVE_BAD_INPUT: return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "%s", why);
    case CMRSCL_SOLVE_BREAKDOWN:
    case CMRSCL_SOLVE_NONFINITE: return cmrs_dist_fail(CMRSCL_ERROR_BREAKDOWN, "%s", why);
    default: return CMRSCL_OK;
    }
}

/* A device copy of this rank's n values (NULL for n == 0). */
static cl_mem device_copy(cmrscl_dist_matrix m, const void *host, cl_int *err)
{
    *err = CL_SUCCESS;
    size_t bytes = cmrs_dist_value_size(m->plan.precision) * (size_t)m->plan.local_rows;
    return bytes ? clCreateBuffer(m->cl, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                                  (void *)host, err)
                 : NULL;
}

cmrscl_status cmrscl_dist_solve_host(cmrscl_dist_matrix m, const cmrscl_solve_options *opt,
                                     const void *b, void *x, cmrscl_solve_result *out)
{
    if (!m)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    int32_t n = m->plan.local_rows;
    cl_int eb = CL_SUCCESS, ex = CL_SUCCESS;
    cmrscl_status st = n > 0 && (!b || !x)
                           ? cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "b or x is NULL")
                           : CMRSCL_OK;
    cl_mem db = st == CMRSCL_OK ? device_copy(m, b, &eb) : NULL;
    cl_mem dx = st == CMRSCL_OK ? device_copy(m, x, &ex) : NULL;
    if (st == CMRSCL_OK && (eb != CL_SUCCESS || ex != CL_SUCCESS))
        st = cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY,
                            "b or x on the device: OpenCL error %d",
                            (int)(eb != CL_SUCCESS ? eb : ex));
    if ((st = cmrs_dist_agree(m->comm, st)) == CMRSCL_OK) {
        st = cmrscl_dist_solve(m, opt, db, dx, out);
        /* x holds the last iterate whatever the outcome, as the single-device solver's */
        if (n > 0 && (st == CMRSCL_OK || (out && out->history))) {
            size_t bytes = cmrs_dist_value_size(m->plan.precision) * (size_t)n;
            cl_int err = clEnqueueReadBuffer(m->queue, dx, CL_TRUE, 0, bytes, x, 0, NULL, NULL);
            if (err != CL_SUCCESS && st == CMRSCL_OK)
                st = cmrs_dist_fail(CMRSCL_ERROR_OPENCL, "reading x: OpenCL error %d", (int)err);
        }
    }
    if (db)
        clReleaseMemObject(db);
    if (dx)
        clReleaseMemObject(dx);
    return st;
}
