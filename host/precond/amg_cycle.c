/* amg_cycle.c - the AMG V-cycle on the host and CG preconditioned by it (issue 57): the ground
 * truth the device cycle will be checked against, and the way to see now that a hierarchy
 * converges. The smoother is damped Jacobi, one sweep before and one after the coarse
 * correction, omega = jacobi_scale / rho(D^-1 A) (4/3 / rho: 2/3 on a Poisson matrix, as
 * amgcl's damped_jacobi and PyAMG's ('jacobi', {'omega': 4/3}) with its withrho default):
 * the same sweep before and after keeps the cycle symmetric, and on the device it is a
 * product and a vector update, with no ordering between rows as Gauss-Seidel's. */
#include "precond/precond.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* x += omega D^-1 (b - A x); r is scratch. */
static void jacobi_sweep(const cmrs_amg_level *lv, const double *b, double *x, double *r)
{
    memcpy(r, b, (size_t)lv->A.rows * sizeof(double));
    cmrscl_csr_spmv(&lv->A, -1.0, x, 1.0, r);
    for (int32_t i = 0; i < lv->A.rows; ++i)
        x[i] += lv->jacobi_omega * lv->diag_inv[i] * r[i];
}

/* The vectors of one cycle: on level l, b[l], x[l] and r[l] of that level's rows (level 0's
 * b and x are the caller's). */
typedef struct cycle_work {
    double **b, **x, **r;
} cycle_work;

static void vcycle_level(const cmrs_amg_hierarchy *h, int l, const cycle_work *w)
{
    const cmrs_amg_level *lv = &h->level[l];
    double *b = w->b[l], *x = w->x[l], *r = w->r[l];
    if (l == h->levels - 1) {
        cmrs_amg_coarse_solve(h->coarse_inverse, h->coarse_rows, b, x);
        return;
    }
    /* Pre-smoothing from x = 0 is x = omega D^-1 b. */
    for (int32_t i = 0; i < lv->A.rows; ++i)
        x[i] = lv->jacobi_omega * lv->diag_inv[i] * b[i];
    memcpy(r, b, (size_t)lv->A.rows * sizeof(double));
    cmrscl_csr_spmv(&lv->A, -1.0, x, 1.0, r);
    cmrscl_csr_spmv(&lv->R, 1.0, r, 0.0, w->b[l + 1]);
    vcycle_level(h, l + 1, w);
    cmrscl_csr_spmv(&lv->P, 1.0, w->x[l + 1], 1.0, x);
    jacobi_sweep(lv, b, x, r);
}

static void free_work(cycle_work *w, int levels)
{
    for (int l = 0; l < levels; ++l) {
        if (l > 0) {
            free(w->b[l]);
            free(w->x[l]);
        }
        free(w->r[l]);
    }
    free(w->b);
    free(w->x);
    free(w->r);
}

void cmrs_amg_vcycle_levels(const cmrs_amg_hierarchy *h, double **b, double **x, double **r)
{
    cycle_work w = {b, x, r};
    vcycle_level(h, 0, &w);
}

cmrscl_status cmrs_amg_vcycle(const cmrs_amg_hierarchy *h, const double *b, double *x)
{
    int n = h->levels;
    cycle_work w = {calloc((size_t)n, sizeof(double *)), calloc((size_t)n, sizeof(double *)),
                    calloc((size_t)n, sizeof(double *))};
    bool ok = w.b && w.x && w.r;
    for (int l = 0; ok && l < n; ++l) {
        size_t rows = (size_t)h->level[l].A.rows;
        w.b[l] = l ? cmrscl_alloc(rows, sizeof(double)) : (double *)b;
        w.x[l] = l ? cmrscl_alloc(rows, sizeof(double)) : x;
        w.r[l] = cmrscl_alloc(rows, sizeof(double));
        ok = w.b[l] && w.x[l] && w.r[l];
    }
    if (ok)
        cmrs_amg_vcycle_levels(h, w.b, w.x, w.r);
    if (w.b && w.x && w.r)
        free_work(&w, n);
    else {
        free(w.b);
        free(w.x);
        free(w.r);
    }
    return ok ? CMRSCL_OK
              : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG V-cycle: vectors of %d levels",
                            n);
}

static double dot(const double *x, const double *y, int32_t n)
{
    double s = 0;
    for (int32_t i = 0; i < n; ++i)
        s += x[i] * y[i];
    return s;
}

/* z = M^-1 r: one V-cycle, or a copy without a hierarchy. */
static cmrscl_status precondition(const cmrs_amg_hierarchy *h, const double *r, double *z,
                                  int32_t n)
{
    if (h)
        return cmrs_amg_vcycle(h, r, z);
    memcpy(z, r, (size_t)n * sizeof(double));
    return CMRSCL_OK;
}

cmrscl_status cmrs_amg_pcg(const cmrscl_csr *a, const cmrs_amg_hierarchy *h, const double *b,
                           double *x, double rtol, int max_iterations, int *iterations,
                           double *relres)
{
    int32_t n = a->rows;
    double *r = cmrscl_alloc((size_t)n, sizeof(double)),
           *z = cmrscl_alloc((size_t)n, sizeof(double));
    double *p = cmrscl_alloc((size_t)n, sizeof(double)),
           *q = cmrscl_alloc((size_t)n, sizeof(double));
    cmrscl_status st = r && z && p && q ? CMRSCL_OK
                                        : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                                      "AMG PCG: vectors of %d rows", (int)n);
    int it = 0;
    double bnorm = 0, rnorm = 0;
    if (st == CMRSCL_OK) {
        memcpy(r, b, (size_t)n * sizeof(double));
        cmrscl_csr_spmv(a, -1.0, x, 1.0, r);
        bnorm = sqrt(dot(b, b, n));
        rnorm = sqrt(dot(r, r, n));
        st = precondition(h, r, z, n);
        memcpy(p, z, (size_t)n * sizeof(double));
    }
    double rz = st == CMRSCL_OK ? dot(r, z, n) : 0;
    while (st == CMRSCL_OK && rnorm > rtol * bnorm && it < max_iterations) {
        cmrscl_csr_spmv(a, 1.0, p, 0.0, q);
        double pq = dot(p, q, n);
        if (!(pq > 0)) {
            st = cmrscl_fail(CMRSCL_ERROR_BREAKDOWN, "AMG PCG: p^T A p = %g in iteration %d", pq,
                             it + 1);
            break;
        }
        double alpha = rz / pq;
        for (int32_t i = 0; i < n; ++i) {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        ++it;
        rnorm = sqrt(dot(r, r, n));
        st = precondition(h, r, z, n);
        double rz_next = dot(r, z, n);
        for (int32_t i = 0; i < n; ++i)
            p[i] = z[i] + rz_next / rz * p[i];
        rz = rz_next;
    }
    free(r);
    free(z);
    free(p);
    free(q);
    if (iterations)
        *iterations = it;
    if (relres)
        *relres = bnorm > 0 ? rnorm / bnorm : rnorm;
    return st;
}
