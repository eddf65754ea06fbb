/* solve.c - conjugate gradients (with or without Jacobi) on a distributed matrix, with one
 * MPI collective an iteration: the single-GPU solver's recurrences (host/solve/solve_cg.c,
 * Rupp et al.'s pipelined form), so that an iteration needs r.r, r.z (left by the update of
 * the vectors), p.q and q.Dq (left after the product q = A p), all four known at once:
 *
 *   alpha = r.z / p.q,  beta = alpha^2 q.Dq / r.z - 1  (= r'.z' / r.z in exact arithmetic)
 *   x += alpha p, r -= alpha q, z = D r, p = z + beta p     (dcg_update, leaving r.r, r.z)
 *   q = A p                                                  (cmrscl_dist_spmv's steps)
 *   p.q, q.Dq                                                (dcg_dots)
 *
 * then one read of the work-groups' partial sums and one MPI_Allgather of each rank's four
 * sums, added in rank order on every rank: every rank computes the same scalars bit for bit
 * (an MPI_Allreduce may add in an order of its own), and so takes the same decisions. The
 * host does the scalar work between the two halves of an iteration, as it must wait for the
 * collective anyway. */
#include "dist_internal.h"

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

/* The kernels' work-group (a power of two) and grid: at most DIST_CG_GROUPS_PER_UNIT
 * work-groups a compute unit - the single-device solver's grid (half of a GPU's resident
 * work-items), enough to stream the vectors, few enough that the partial sums read back
 * each iteration stay a few KB (docs/PERFORMANCE.md, DIST_CG_WG). */
#define DIST_CG_WG 256
#define DIST_CG_GROUPS_PER_UNIT 4

enum { SUMS = 5 }; /* r.r, r.z, p.q, q.Dq, b.b */

struct dist_cg {
    cl_program program;
    cl_kernel start, update, dots;
    cl_uint n;
    size_t groups, wg;
    cl_mem r, p, q, dinv; /* dinv: Jacobi's inverse diagonal, made by the first Jacobi solve */
    cl_mem sums;          /* 2 x groups real4s: the update's (or start's), then the dots' */
    cl_mem pinned;        /* their host copy */
    void *sums_host;
    double *all; /* every rank's sums */
};

static cmrscl_status cl_fail(cl_int err, const char *what)
{
    return cmrs_dist_fail(err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES
                              ? CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY
                              : CMRSCL_ERROR_OPENCL,
                          "%s failed: OpenCL error %d", what, (int)err);
}

void cmrs_dist_cg_free(struct dist_cg *cg)
{
    if (!cg)
        return;
    cl_mem bufs[] = {cg->r, cg->p, cg->q, cg->dinv, cg->sums, cg->pinned};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; ++i)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    cl_kernel ks[] = {cg->start, cg->update, cg->dots};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; ++i)
        if (ks[i])
            clReleaseKernel(ks[i]);
    if (cg->program)
        clReleaseProgram(cg->program);
    free(cg->all);
    free(cg);
}

static cmrscl_status build(cmrscl_dist_matrix m, struct dist_cg *cg, cl_device_id device)
{
    cl_int err;
    const char *source = cmrscl_mpi_kernels[1].text;
    cg->program = clCreateProgramWithSource(m->cl, 1, &source, NULL, &err);
    if (err != CL_SUCCESS)
        return cl_fail(err, "clCreateProgramWithSource (solve.cl)");
    char options[128];
    snprintf(options, sizeof options, "-D REAL=%s -D WG=%zu",
             m->plan.precision == CMRSCL_DOUBLE ? "double -D USE_FP64" : "float", cg->wg);
    err = clBuildProgram(cg->program, 1, &device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[2048] = "";
        clGetProgramBuildInfo(cg->program, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        return cmrs_dist_fail(CMRSCL_ERROR_BUILD, "solve.cl (%s): OpenCL error %d\n%s", options,
                              (int)err, log);
    }
    cg->start = clCreateKernel(cg->program, "dcg_start", &err);
    if (err == CL_SUCCESS)
        cg->update = clCreateKernel(cg->program, "dcg_update", &err);
    if (err == CL_SUCCESS)
        cg->dots = clCreateKernel(cg->program, "dcg_dots", &err);
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "clCreateKernel (solve.cl)");
}

/* The solver's kernels, vectors and sums, made once per matrix (local work). */
static cmrscl_status make(cmrscl_dist_matrix m)
{
    if (m->cg)
        return CMRSCL_OK;
    struct dist_cg *cg = calloc(1, sizeof *cg);
    if (!cg)
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory");
    cl_device_id device = NULL;
    cl_uint units = 1;
    size_t max_wg = 1;
    cl_int err = clGetCommandQueueInfo(m->queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL);
    if (err == CL_SUCCESS)
        err = clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    if (err == CL_SUCCESS)
        err = clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL);
    cg->n = (cl_uint)m->plan.local_rows;
    for (cg->wg = DIST_CG_WG; cg->wg > max_wg; cg->wg /= 2)
        ;
    size_t wanted = ((size_t)cg->n + cg->wg - 1) / cg->wg;
    size_t most = (size_t)units * DIST_CG_GROUPS_PER_UNIT;
    cg->groups = wanted < 1 ? 1 : wanted < most ? wanted : most;
    cg->all = malloc(sizeof *cg->all * SUMS * (size_t)m->plan.ranks);
    cmrscl_status st = !cg->all ? cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory")
                       : err == CL_SUCCESS ? build(m, cg, device)
                                           : cl_fail(err, "device queries");
    size_t vs = cmrs_dist_value_size(m->plan.precision), bytes = vs * ((size_t)cg->n + 1);
    size_t sums = 2 * 4 * vs * cg->groups;
    cl_mem *vec[] = {&cg->r, &cg->p, &cg->q};
    for (size_t i = 0; st == CMRSCL_OK && i < sizeof vec / sizeof *vec; ++i) {
        *vec[i] = clCreateBuffer(m->cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
        st = err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "the solver's vectors");
    }
    if (st == CMRSCL_OK) {
        cg->sums = clCreateBuffer(m->cl, CL_MEM_READ_WRITE, sums, NULL, &err);
        if (err == CL_SUCCESS)
            cg->pinned = clCreateBuffer(m->cl, CL_MEM_ALLOC_HOST_PTR, sums, NULL, &err);
        if (err == CL_SUCCESS)
            cg->sums_host =
                clEnqueueMapBuffer(m->queue, cg->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                   sums, 0, NULL, NULL, &err);
        st = err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "the solver's sums");
    }
    if (st == CMRSCL_OK)
        m->cg = cg;
    else
        cmrs_dist_cg_free(cg);
    return st;
}

/* Jacobi's inverse diagonal on the device, once per matrix; ERROR_INVALID_MATRIX naming the
 * first row (global) whose diagonal is zero or missing. */
static cmrscl_status make_dinv(cmrscl_dist_matrix m)
{
    struct dist_cg *cg = m->cg;
    if (cg->dinv)
        return CMRSCL_OK;
    size_t n = cg->n, vs = cmrs_dist_value_size(m->plan.precision);
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
    cg->dinv =
        clCreateBuffer(m->cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, vs * (n + 1), host, &err);
    free(host);
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "the inverse diagonal");
}

static cl_int set_args(cl_kernel k, int n, const size_t *size, const void *const *value)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < n && err == CL_SUCCESS; ++i)
        err = clSetKernelArg(k, (cl_uint)i, size[i], value[i]);
    return err;
}
#define MEM sizeof(cl_mem)

/* A scalar in the precision, as a kernel argument. */
typedef union real_arg {
    double d;
    float f;
} real_arg;
static real_arg real(cmrscl_dist_matrix m, double v)
{
    real_arg a;
    if (m->plan.precision == CMRSCL_DOUBLE)
        a.d = v;
    else
        a.f = (float)v;
    return a;
}

/* A kernel on the solver's grid. */
static cmrscl_status launch(cmrscl_dist_matrix m, cl_kernel k)
{
    size_t local = m->cg->wg, global = local * m->cg->groups;
    cl_int err = clEnqueueNDRangeKernel(m->queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "clEnqueueNDRangeKernel (solve.cl)");
}

/* The kernels' arguments for a solve of x (dinv NULL without Jacobi). */
static cmrscl_status bind(cmrscl_dist_matrix m, cl_mem b, cl_mem x, cl_mem dinv)
{
    struct dist_cg *cg = m->cg;
    cl_uint first = 0, second = (cl_uint)cg->groups; /* where each kernel's sums go */
    const size_t ss[] = {sizeof(cl_uint), MEM, MEM, MEM, MEM, MEM, sizeof(cl_uint)};
    const void *sv[] = {&cg->n, &b, &cg->r, &cg->p, &dinv, &cg->sums, &first};
    cl_int err = set_args(cg->start, 7, ss, sv);
    if (err == CL_SUCCESS) { /* alpha and beta (6, 7) per iteration */
        const size_t us[] = {sizeof(cl_uint), MEM, MEM, MEM, MEM, MEM};
        const void *uv[] = {&cg->n, &x, &cg->r, &cg->p, &cg->q, &dinv};
        err = set_args(cg->update, 6, us, uv);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(cg->update, 8, MEM, &cg->sums);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(cg->update, 9, sizeof first, &first);
    }
    if (err == CL_SUCCESS) {
        const size_t ds[] = {sizeof(cl_uint), MEM, MEM, MEM, MEM, sizeof(cl_uint)};
        const void *dv[] = {&cg->n, &cg->p, &cg->q, &dinv, &cg->sums, &second};
        err = set_args(cg->dots, 6, ds, dv);
    }
    return err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "clSetKernelArg (solve.cl)");
}

/* The whole problem's five sums: this rank's work-groups' added in order, then the ranks'
 * in rank order (one MPI_Allgather), the same bits on every rank. */
static cmrscl_status global_sums(cmrscl_dist_matrix m, cmrscl_status st, double *out)
{
    struct dist_cg *cg = m->cg;
    size_t g = cg->groups, vs = cmrs_dist_value_size(m->plan.precision);
    double mine[SUMS] = {0};
    cl_int err = CL_SUCCESS;
    if (st == CMRSCL_OK)
        err = clEnqueueReadBuffer(m->queue, cg->sums, CL_TRUE, 0, 2 * 4 * vs * g, cg->sums_host, 0,
                                  NULL, NULL);
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cl_fail(err, "reading the partial sums");
    for (size_t i = 0; st == CMRSCL_OK && i < 2 * g; ++i) {
        double v[4];
        for (int c = 0; c < 4; ++c)
            v[c] = vs == sizeof(double) ? ((const double *)cg->sums_host)[4 * i + (size_t)c]
                                        : ((const float *)cg->sums_host)[4 * i + (size_t)c];
        if (i < g) /* the start's or the update's: r.r, r.z, b.b */
            mine[0] += v[0], mine[1] += v[1], mine[4] += v[2];
        else /* the dots': p.q, q.Dq */
            mine[2] += v[0], mine[3] += v[1];
    }
    /* A failed rank sends NaN: every rank then stops, and the agreement after says why. */
    if (st != CMRSCL_OK)
        for (int c = 0; c < SUMS; ++c)
            mine[c] = NAN;
    int ranks = m->plan.ranks;
    int rc = MPI_Allgather(mine, SUMS, MPI_DOUBLE, cg->all, SUMS, MPI_DOUBLE, m->comm);
    for (int c = 0; c < SUMS; ++c) {
        out[c] = 0;
        for (int r = 0; r < ranks; ++r)
            out[c] += cg->all[SUMS * r + c];
    }
    if (rc != MPI_SUCCESS)
        st = st == CMRSCL_OK ? cmrs_dist_fail_mpi(rc, "MPI_Allgather (the solver's sums)") : st;
    return st;
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
    if (o->method != CMRSCL_METHOD_CG)
        return cmrs_dist_fail(
            CMRSCL_ERROR_UNSUPPORTED,
            "method %s: the distributed solver offers conjugate gradients (cg) only",
            cmrscl_method_name(o->method) ? cmrscl_method_name(o->method) : "?");
    if (o->preconditioner != CMRSCL_PRECONDITIONER_NONE &&
        o->preconditioner != CMRSCL_PRECONDITIONER_JACOBI)
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

/* ||b - A x||, with q as the scratch vector (the solve is over; the next one binds the
 * kernels' arguments again). */
static cmrscl_status true_residual(cmrscl_dist_matrix m, cl_mem b, cl_mem x, double *out)
{
    struct dist_cg *cg = m->cg;
    size_t bytes = cmrs_dist_value_size(m->plan.precision) * (size_t)cg->n;
    cl_int err =
        bytes ? clEnqueueCopyBuffer(m->queue, b, cg->q, 0, 0, bytes, 0, NULL, NULL) : CL_SUCCESS;
    cmrscl_status st = err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "copying b");
    st = cmrs_dist_product(m, st, -1.0, x, 1.0, cg->q, true, NULL);
    /* q.q from the dots kernel given q for p: its sums' first component */
    if (st == CMRSCL_OK)
        err = clSetKernelArg(cg->dots, 1, MEM, &cg->q);
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cl_fail(err, "clSetKernelArg (solve.cl)");
    if (st == CMRSCL_OK)
        st = launch(m, cg->dots);
    double s[SUMS];
    st = global_sums(m, st, s);
    *out = sqrt(s[2]);
    return st;
}

static double seconds_since(double t0) { return cmrs_dist_seconds() - t0; }

cmrscl_status cmrscl_dist_solve(cmrscl_dist_matrix m, const cmrscl_solve_options *opt, cl_mem b,
                                cl_mem x, cmrscl_solve_result *out)
{
    if (!m)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    /* One rank: the local block is the whole matrix, and the single-device solver (every
     * method, the product fused with the dot products, no host read between checks) is the
     * faster way. */
    if (m->plan.ranks == 1 && m->plan.rows == m->plan.cols)
        return cmrscl_solve(m->local, opt, b, x, out);
    double t_start = cmrs_dist_seconds();
    cmrscl_solve_options o = opt ? *opt : (cmrscl_solve_options){0};
    if (out)
        memset(out, 0, sizeof *out);
    cmrscl_status st = check_solve(m, &o, b, x, out);
    if (st == CMRSCL_OK)
        st = make(m);
    bool jacobi = o.preconditioner == CMRSCL_PRECONDITIONER_JACOBI;
    if (st == CMRSCL_OK && jacobi)
        st = make_dinv(m);
    if (st == CMRSCL_OK)
        st = bind(m, b, x, jacobi ? m->cg->dinv : NULL);
    if ((st = cmrs_dist_agree(m->comm, st)) != CMRSCL_OK)
        return st;
    if (o.rtol == 0 && o.atol == 0)
        o.rtol = 1e-5;
    int64_t max_default = 10 * m->plan.rows;
    int max = o.max_iterations > 0 ? o.max_iterations
                                   : (int)(max_default < (1 << 24) ? max_default : 1 << 24);
    struct dist_cg *cg = m->cg;
    out->history = malloc(sizeof *out->history * ((size_t)max + 1));
    st = cmrs_dist_agree(m->comm, out->history
                                      ? CMRSCL_OK
                                      : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                                       "no memory for %d residuals", max + 1));
    if (st != CMRSCL_OK)
        return st;
    /* r = b - A x0; z = D r, p = z; q = A p */
    size_t bytes = cmrs_dist_value_size(m->plan.precision) * (size_t)cg->n;
    cl_int err =
        bytes ? clEnqueueCopyBuffer(m->queue, b, cg->r, 0, 0, bytes, 0, NULL, NULL) : CL_SUCCESS;
    st = err == CL_SUCCESS ? CMRSCL_OK : cl_fail(err, "copying b");
    st = cmrs_dist_product(m, st, -1.0, x, 1.0, cg->r, true, NULL);
    if (st == CMRSCL_OK)
        st = launch(m, cg->start);
    st = cmrs_dist_product(m, st, 1.0, cg->p, 0.0, cg->q, true, NULL);
    if (st == CMRSCL_OK)
        st = launch(m, cg->dots);
    double s[SUMS];
    st = global_sums(m, st, s);
    out->b_norm = sqrt(s[4]);
    out->threshold = fmax(o.rtol * out->b_norm, o.atol);
    if (st == CMRSCL_OK && !(isfinite(s[4]) && isfinite(s[0])))
        out->reason = CMRSCL_SOLVE_BAD_INPUT;
    /* the iterations: the test of r, then the step */
    double t_iter = cmrs_dist_seconds();
    int it = 0;
    while (st == CMRSCL_OK && out->reason != CMRSCL_SOLVE_BAD_INPUT) {
        double rr = s[0], rz = s[1], pq = s[2], qdq = s[3];
        out->history[it] = out->residual = sqrt(rr);
        if (o.monitor)
            o.monitor(o.monitor_data, it, out->residual);
        if (!isfinite(rr)) {
            out->reason = CMRSCL_SOLVE_NONFINITE, out->breakdown = rr;
            break;
        }
        if (out->residual <= out->threshold) {
            out->reason = CMRSCL_SOLVE_CONVERGED, out->converged = 1;
            break;
        }
        if (it == max) {
            out->reason = CMRSCL_SOLVE_MAX_ITERATIONS;
            break;
        }
        if (!(isfinite(pq) && isfinite(qdq))) {
            out->reason = CMRSCL_SOLVE_NONFINITE, out->breakdown = isfinite(pq) ? qdq : pq;
            break;
        }
        if (!(pq > 0)) {
            out->reason = CMRSCL_SOLVE_BREAKDOWN, out->breakdown = pq;
            break;
        }
        double alpha = rz / pq, beta = alpha * alpha * qdq / rz - 1;
        real_arg a = real(m, alpha), bt = real(m, beta);
        size_t rs = cmrs_dist_value_size(m->plan.precision);
        err = clSetKernelArg(cg->update, 6, rs, &a);
        if (err == CL_SUCCESS)
            err = clSetKernelArg(cg->update, 7, rs, &bt);
        st = err == CL_SUCCESS ? launch(m, cg->update) : cl_fail(err, "clSetKernelArg (alpha)");
        st = cmrs_dist_product(m, st, 1.0, cg->p, 0.0, cg->q, true, NULL);
        if (st == CMRSCL_OK)
            st = launch(m, cg->dots);
        st = global_sums(m, st, s);
        ++it;
    }
    out->iterate_seconds = seconds_since(t_iter);
    out->iterations = it;
    out->history_length = it + 1;
    out->launches_per_iteration =
        3 + (m->plan.halo > 0) + (m->scatter != NULL) + (m->plan.sent > 0);
    out->checks = it + 1;
    out->check_interval = 1;
    if (st == CMRSCL_OK)
        st = true_residual(m, b, x, &out->true_residual);
    out->seconds = seconds_since(t_start);
    if (st != CMRSCL_OK)
        return st;
    switch (out->reason) {
    case CMRSCL_SOLVE_BAD_INPUT:
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "cg: NaN or Inf in b or x0");
    case CMRSCL_SOLVE_BREAKDOWN:
        return cmrs_dist_fail(CMRSCL_ERROR_BREAKDOWN,
                              "cg: p.Ap = %g <= 0 at iteration %d: the matrix is not positive "
                              "definite%s",
                              out->breakdown, it + 1,
                              jacobi ? " (or its diagonal is not: Jacobi needs a positive one)"
                                     : "");
    case CMRSCL_SOLVE_NONFINITE:
        return cmrs_dist_fail(CMRSCL_ERROR_BREAKDOWN, "cg: a scalar became %g at iteration %d",
                              out->breakdown, it + 1);
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
