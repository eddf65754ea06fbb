/* solve_gmres.c - distributed restarted GMRES(m), the single-device solver's algorithm
 * (host/solve/solve_gmres.c: classical Gram-Schmidt in one pass, the Hessenberg matrix's QR by
 * Givens rotations, the estimate |g_{j+1}| of the residual's norm tested every step, the cycle
 * applied at its end and at a stop but a breakdown) with the small work on the host, which
 * waits for each collective anyway. An Arnoldi step: the distributed product w = A v_j; the
 * dots of w with v_0..v_j (dgm_dots) and their collective; w orthogonalized, with its norm
 * (dgm_orth), and a second collective; v_{j+1} = w / ||w|| (dgm_scale). Two collectives an
 * iteration: the norm is the orthogonalized w's. Each rank adds the ranks' sums in rank order,
 * so every rank takes the same decisions and a solve gives the same bits run after run. */
#include "dist_solve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM sizeof(cl_mem)

/* A solve's basis and the rotations' state (restart m). R is column-major, m x m. */
typedef struct cycle {
    int m;
    size_t stride;       /* values between basis vectors: where a sub-buffer may start */
    cl_mem basis, *view; /* m + 1 vectors, and each as a sub-buffer (the product's x) */
    cl_mem coef;         /* dgm_orth's m + 1 coefficients */
    cl_mem sums, pinned; /* dgm_dots' partial sums, (m + 4) / 4 chunks of groups real4s */
    void *sums_host;
    double *col, *r, *cs, *sn, *g, *gr, *y, *all;
} cycle;

static void cycle_free(cmrscl_dist_matrix m, cycle *c)
{
    for (int j = 0; c->view && j <= c->m; ++j)
        if (c->view[j])
            clReleaseMemObject(c->view[j]);
    if (c->sums_host)
        clEnqueueUnmapMemObject(m->queue, c->pinned, c->sums_host, 0, NULL, NULL);
    cl_mem bufs[] = {c->basis, c->coef, c->sums, c->pinned};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; ++i)
        if (bufs[i])
            clReleaseMemObject(bufs[i]);
    free(c->view), free(c->col), free(c->all);
}

/* The basis at a stride every sub-buffer may start at, its views, the coefficients and the
 * dots' sums (local work). */
static cmrscl_status cycle_make(cmrscl_dist_matrix m, int restart, cycle *c)
{
    struct dist_solver *sv = m->solver;
    size_t vs = cmrs_dist_value_size(m->plan.precision);
    size_t m1 = (size_t)restart + 1, chunks = (m1 + 3) / 4;
    c->m = restart;
    cl_device_id device = NULL;
    cl_uint align_bits = 1024;
    cl_int err = clGetCommandQueueInfo(m->queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL);
    if (err == CL_SUCCESS)
        err = clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits,
                              NULL);
    size_t align = align_bits / 8 / vs > 0 ? align_bits / 8 / vs : 1;
    c->stride = ((size_t)sv->n + align - 1) / align * align;
    if (c->stride == 0)
        c->stride = align;
    c->view = calloc(m1, sizeof *c->view);
    /* col m + 1, r m x m, cs m, sn m, g m + 1, gr m, y m; every rank's m + 1 sums */
    c->col = malloc(sizeof *c->col * (m1 + m1 * m1 + 5 * m1));
    c->all = malloc(sizeof *c->all * m1 * (size_t)m->plan.ranks);
    if (!c->view || !c->col || !c->all)
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for GMRES(%d)", restart);
    c->r = c->col + m1, c->cs = c->r + m1 * m1, c->sn = c->cs + m1, c->g = c->sn + m1;
    c->gr = c->g + m1, c->y = c->gr + m1;
    size_t sums = chunks * sv->groups * 4 * vs;
    if (err == CL_SUCCESS)
        c->basis = clCreateBuffer(m->cl, CL_MEM_READ_WRITE, m1 * c->stride * vs, NULL, &err);
    for (size_t j = 0; err == CL_SUCCESS && j < m1; ++j) {
        cl_buffer_region region = {j * c->stride * vs, (sv->n > 0 ? sv->n : 1) * vs};
        c->view[j] = clCreateSubBuffer(c->basis, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                       &region, &err);
    }
    if (err == CL_SUCCESS)
        c->coef = clCreateBuffer(m->cl, CL_MEM_READ_ONLY, m1 * vs, NULL, &err);
    if (err == CL_SUCCESS)
        c->sums = clCreateBuffer(m->cl, CL_MEM_READ_WRITE, sums, NULL, &err);
    if (err == CL_SUCCESS)
        c->pinned = clCreateBuffer(m->cl, CL_MEM_ALLOC_HOST_PTR, sums, NULL, &err);
    if (err == CL_SUCCESS)
        c->sums_host = clEnqueueMapBuffer(m->queue, c->pinned, CL_TRUE, CL_MAP_READ, 0, sums, 0,
                                          NULL, NULL, &err);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrs_dsolve_fail_cl(err, "GMRES's basis");
}

/* h[0..count-1] = v_i . w over the whole problem: the work-groups' sums added in order, then
 * the ranks' in rank order (a failed rank sends NaN). */
static cmrscl_status basis_dots(cmrscl_dist_matrix m, cycle *c, cl_mem w, int count, double *h,
                                cmrscl_status st)
{
    struct dist_solver *sv = m->solver;
    size_t vs = cmrs_dist_value_size(m->plan.precision), g = sv->groups;
    size_t chunks = ((size_t)count + 3) / 4;
    cl_ulong stride = c->stride;
    cl_uint n = (cl_uint)count;
    const size_t size[] = {sizeof(cl_uint), MEM, sizeof stride, sizeof n, MEM, MEM};
    const void *value[] = {&sv->n, &c->basis, &stride, &n, &w, &c->sums};
    cl_int err = CL_SUCCESS;
    if (st == CMRSCL_OK && (err = cmrs_dsolve_args(sv->gm_dots, 0, 6, size, value)) != CL_SUCCESS)
        st = cmrs_dsolve_fail_cl(err, "clSetKernelArg (dgm_dots)");
    if (st == CMRSCL_OK)
        st = cmrs_dsolve_launch(m, sv->gm_dots);
    if (st == CMRSCL_OK &&
        (err = cmrs_dsolve_read(m, c->sums, chunks * g * 4 * vs, c->sums_host)) != CL_SUCCESS)
        st = cmrs_dsolve_fail_cl(err, "reading GMRES's dots");
    for (int i = 0; i < count; ++i) {
        double sum = 0;
        for (size_t k = 0; st == CMRSCL_OK && k < g; ++k) {
            size_t at = ((size_t)i / 4 * g + k) * 4 + (size_t)i % 4;
            sum += vs == sizeof(double) ? ((const double *)c->sums_host)[at]
                                        : ((const float *)c->sums_host)[at];
        }
        h[i] = st == CMRSCL_OK ? sum : NAN;
    }
    int rc = MPI_Allgather(h, count, MPI_DOUBLE, c->all, count, MPI_DOUBLE, m->comm);
    for (int i = 0; i < count; ++i) {
        h[i] = 0;
        for (int r = 0; r < m->plan.ranks; ++r)
            h[i] += c->all[(size_t)r * (size_t)count + (size_t)i];
    }
    if (rc != MPI_SUCCESS && st == CMRSCL_OK)
        st = cmrs_dist_fail_mpi(rc, "MPI_Allgather (GMRES's dots)");
    return st;
}

/* w -= sum coef[i] v_i over count vectors, leaving w.w's partial sums (dgm_orth). */
static cmrscl_status orthogonalize(cmrscl_dist_matrix m, cycle *c, const double *coef, int count,
                                   cl_mem w)
{
    struct dist_solver *sv = m->solver;
    size_t vs = cmrs_dist_value_size(m->plan.precision);
    float f[CMRSCL_MAX_RESTART + 1];
    for (int i = 0; vs == sizeof(float) && i < count; ++i)
        f[i] = (float)coef[i];
    cl_int err = clEnqueueWriteBuffer(m->queue, c->coef, CL_TRUE, 0, (size_t)count * vs,
                                      vs == sizeof(float) ? (const void *)f : coef, 0, NULL, NULL);
    cl_ulong stride = c->stride;
    cl_uint n = (cl_uint)count, at = 0;
    const size_t size[] = {sizeof(cl_uint), MEM, sizeof stride, sizeof n, MEM, MEM, MEM, sizeof at};
    const void *value[] = {&sv->n, &c->basis, &stride, &n, &c->coef, &w, &sv->sums, &at};
    if (err == CL_SUCCESS)
        err = cmrs_dsolve_args(sv->gm_orth, 0, 8, size, value);
    return err == CL_SUCCESS ? cmrs_dsolve_launch(m, sv->gm_orth)
                             : cmrs_dsolve_fail_cl(err, "dgm_orth's arguments");
}

/* out = in / norm */
static cmrscl_status scale(cmrscl_dist_matrix m, cl_mem in, cl_mem out, double norm)
{
    struct dist_solver *sv = m->solver;
    real_arg f = cmrs_dsolve_real(m, 1.0 / norm);
    const size_t size[] = {sizeof(cl_uint), MEM, MEM, cmrs_dist_value_size(m->plan.precision)};
    const void *value[] = {&sv->n, &in, &out, &f};
    cl_int err = cmrs_dsolve_args(sv->gm_scale, 0, 4, size, value);
    return err == CL_SUCCESS ? cmrs_dsolve_launch(m, sv->gm_scale)
                             : cmrs_dsolve_fail_cl(err, "clSetKernelArg (dgm_scale)");
}

/* Column j of H (col[0..j], hn below it) through the rotations into R; rotation j made and
 * applied to g. Returns d, R's new diagonal entry; *rr the residual's estimate squared. */
static double rotate(cycle *c, int j, double hn, double *rr)
{
    double ci = c->col[0];
    for (int i = 0; i < j; ++i) {
        double next = c->col[i + 1];
        c->r[(size_t)j * (size_t)c->m + (size_t)i] = c->cs[i] * ci + c->sn[i] * next;
        ci = -c->sn[i] * ci + c->cs[i] * next;
    }
    double d = hypot(ci, hn);
    c->cs[j] = d > 0 ? ci / d : 1.0, c->sn[j] = d > 0 ? hn / d : 0.0;
    c->r[(size_t)j * (size_t)c->m + (size_t)j] = d;
    c->gr[j] = c->cs[j] * c->g[j];
    c->g[j + 1] = -c->sn[j] * c->g[j];
    *rr = c->g[j + 1] * c->g[j + 1];
    return d;
}

/* x += V y with R y = gr over the cycle's cols columns. */
static cmrscl_status apply_cycle(cmrscl_dist_matrix m, cycle *c, int cols, cl_mem x)
{
    for (int k = cols - 1; k >= 0; --k) {
        double v = c->gr[k];
        for (int i = k + 1; i < cols; ++i)
            v -= c->r[(size_t)i * (size_t)c->m + (size_t)k] * c->y[i];
        c->y[k] = v / c->r[(size_t)k * (size_t)c->m + (size_t)k];
    }
    for (int k = 0; k < cols; ++k)
        c->y[k] = -c->y[k];
    return cols > 0 ? orthogonalize(m, c, c->y, cols, x) : CMRSCL_OK;
}

cmrscl_status cmrs_dsolve_gmres(cmrscl_dist_matrix m, const cmrscl_solve_options *o, cl_mem b,
                                cl_mem x, int max, cmrscl_solve_result *out, char *why,
                                size_t why_size)
{
    struct dist_solver *sv = m->solver;
    cycle c = {0};
    cmrscl_status st = cmrs_dist_agree(m->comm, cycle_make(m, o->restart ? o->restart : 20, &c));
    if (st != CMRSCL_OK) {
        cycle_free(m, &c);
        return st;
    }
    double s[SUMS], rr = 0, d = 1, hn = 1;
    st = cmrs_dsolve_sums(m, cmrs_dsolve_dots(m, b, b), s);
    out->b_norm = sqrt(s[SUM_DOTS0]);
    out->threshold = fmax(o->rtol * out->b_norm, o->atol);
    st = cmrs_dsolve_residual_rr(m, b, x, st, &rr, NULL);
    if (st == CMRSCL_OK && !(isfinite(s[SUM_DOTS0]) && isfinite(rr)))
        out->reason = CMRSCL_SOLVE_BAD_INPUT;
    double t_iter = cmrs_dist_seconds();
    int it = 0;
    bool stop = st != CMRSCL_OK || out->reason == CMRSCL_SOLVE_BAD_INPUT ||
                cmrs_dsolve_test(o, out, 0, max, rr);
    while (!stop) { /* a cycle, from r = b - A x */
        c.g[0] = sqrt(rr);
        st = scale(m, sv->vec[V_R], c.view[0], c.g[0]);
        int j = 0;
        for (; !stop && j < c.m; ++j) {
            st = cmrs_dist_product(m, st, 1.0, c.view[j], 0.0, sv->vec[V_Q], true, NULL);
            st = basis_dots(m, &c, sv->vec[V_Q], j + 1, c.col, st);
            if (st == CMRSCL_OK)
                st = orthogonalize(m, &c, c.col, j + 1, sv->vec[V_Q]);
            st = cmrs_dsolve_sums(m, st, s);
            hn = sqrt(s[SUM_FIRST0]);
            d = rotate(&c, j, hn, &rr);
            ++it;
            /* hn NaN makes d NaN and the rotation the identity, rr 0: test it first */
            if (st != CMRSCL_OK || !isfinite(rr) || !isfinite(hn)) {
                out->reason = CMRSCL_SOLVE_NONFINITE, stop = true;
                out->breakdown = isfinite(hn) ? rr : hn;
                out->history[it] = out->residual = sqrt(rr);
            } else if (d == 0) {
                out->reason = CMRSCL_SOLVE_BREAKDOWN, out->breakdown = d, stop = true;
            } else if (cmrs_dsolve_test(o, out, it, max, rr)) {
                stop = true;
            } else if (hn == 0) {
                out->reason = CMRSCL_SOLVE_BREAKDOWN, out->breakdown = hn, stop = true;
            } else if (j + 1 < c.m) {
                st = scale(m, sv->vec[V_Q], c.view[j + 1], hn);
            }
        }
        /* x += V y: at the cycle's end, and at a stop but a breakdown (x stays the last
         * iterate, as the single-device solver leaves it) */
        bool failed =
            out->reason == CMRSCL_SOLVE_BREAKDOWN || out->reason == CMRSCL_SOLVE_NONFINITE;
        if (st == CMRSCL_OK && !failed)
            st = apply_cycle(m, &c, j, x);
        st = cmrs_dist_agree(m->comm, st);
        if (!stop)
            st = cmrs_dsolve_residual_rr(m, b, x, st, &rr, NULL);
        stop = stop || st != CMRSCL_OK;
    }
    out->iterate_seconds = cmrs_dist_seconds() - t_iter;
    out->iterations = it;
    out->launches_per_iteration = 3 + cmrs_dsolve_product_launches(m);
    if (out->reason == CMRSCL_SOLVE_BAD_INPUT)
        snprintf(why, why_size, "gmres: NaN or Inf in b or x0");
    else if (out->reason == CMRSCL_SOLVE_BREAKDOWN)
        snprintf(why, why_size,
                 "gmres: the Arnoldi process broke down at iteration %d (a rotation of norm %g): "
                 "the matrix is singular on the Krylov space",
                 it, out->breakdown);
    else if (out->reason == CMRSCL_SOLVE_NONFINITE)
        snprintf(why, why_size, "gmres: a scalar became %g at iteration %d", out->breakdown, it);
    cycle_free(m, &c);
    return st;
}
