/* amg_cycle.c - the AMG cycle on the host and CG preconditioned by it: the ground truth the
 * device cycle is checked against, and the way to see that a hierarchy converges. A V-cycle
 * corrects each level once from the next; a W-cycle twice, the second time from the residual
 * the first left, where the next level is not the coarsest (whose exact solve leaves nothing for
 * a second). The
 * smoother is damped Jacobi, one sweep before and one after the coarse correction, omega =
 * jacobi_scale / rho(D^-1 A) (4/3 / rho: 2/3 on a Poisson matrix, as amgcl's damped_jacobi
 * and PyAMG's ('jacobi', {'omega': 4/3}) with its withrho default); or a Chebyshev polynomial
 * in D^-1 A of degree k (PyAMG's 'chebyshev', its bounds [b / 30, b], b = 1.1 rho): k
 * products a sweep where Jacobi takes one, a smoother whose damping of the high frequencies
 * grows with k. The same sweep before and after keeps the cycle symmetric, and on the device
 * each step is a product and a vector update, with no ordering between rows as
 * Gauss-Seidel's. */
#include "precond/precond.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* r = b - A x. */
static void residual(const cmrs_amg_level *lv, const double *b, const double *x, double *r)
{
    memcpy(r, b, (size_t)lv->A.rows * sizeof(double));
    cmrscl_csr_spmv(&lv->A, -1.0, x, 1.0, r);
}

void cmrs_amg_chebyshev(double rho, int step, double *c1, double *c2)
{
    double upper = 1.1 * rho, lower = upper / 30, theta = (upper + lower) / 2,
           delta = (upper - lower) / 2, sigma = theta / delta, r = 1 / sigma;
    *c1 = 0, *c2 = 1 / theta;
    for (int k = 1; k <= step; ++k) { /* Saad's rho_k = 1 / (2 sigma - rho_(k-1)) */
        double next = 1 / (2 * sigma - r);
        *c1 = next * r, *c2 = 2 * next / delta;
        r = next;
    }
}

/* A Chebyshev step: d = c1 d + c2 D^-1 r (d = c2 D^-1 r at the first), x += d. */
static void chebyshev_step(const cmrs_amg_level *lv, int step, const double *r, double *d,
                           double *x)
{
    double c1, c2;
    cmrs_amg_chebyshev(lv->rho, step, &c1, &c2);
    for (int32_t i = 0; i < lv->A.rows; ++i) {
        d[i] = step == 0 ? c2 * lv->diag_inv[i] * r[i] : c1 * d[i] + c2 * lv->diag_inv[i] * r[i];
        x[i] += d[i];
    }
}

/* The steps after the first, each r -= A d then a step. */
static void chebyshev_rest(const cmrs_amg_hierarchy *h, const cmrs_amg_level *lv, double *r,
                           double *d, double *x)
{
    for (int step = 1; step < h->degree; ++step) {
        cmrscl_csr_spmv(&lv->A, -1.0, d, 1.0, r);
        chebyshev_step(lv, step, r, d, x);
    }
}

/* The vectors of one cycle: on level l, b[l], x[l], r[l] and d[l] (Chebyshev's direction) of
 * that level's rows (level 0's b and x are the caller's). */
typedef struct cycle_work {
    double **b, **x, **r, **d;
} cycle_work;

/* Pre-smoothing from x = 0, leaving r = b - A x: Jacobi's x = omega D^-1 b; Chebyshev's first
 * step from r = b, the rest, and r -= A d. */
static void presmooth(const cmrs_amg_hierarchy *h, const cmrs_amg_level *lv, const double *b,
                      double *x, double *r, double *d)
{
    if (h->degree > 1) {
        memset(x, 0, (size_t)lv->A.rows * sizeof(double));
        memcpy(r, b, (size_t)lv->A.rows * sizeof(double));
        chebyshev_step(lv, 0, r, d, x);
        chebyshev_rest(h, lv, r, d, x);
        cmrscl_csr_spmv(&lv->A, -1.0, d, 1.0, r);
        return;
    }
    for (int32_t i = 0; i < lv->A.rows; ++i)
        x[i] = lv->jacobi_omega * lv->diag_inv[i] * b[i];
    memcpy(r, b, (size_t)lv->A.rows * sizeof(double));
    cmrscl_csr_spmv(&lv->A, -1.0, x, 1.0, r);
}

/* Post-smoothing from x: r = b - A x, then Jacobi's sweep or Chebyshev's steps. */
static void postsmooth(const cmrs_amg_hierarchy *h, const cmrs_amg_level *lv, const double *b,
                       double *x, double *r, double *d)
{
    residual(lv, b, x, r);
    if (h->degree <= 1) { /* x += omega D^-1 r */
        for (int32_t i = 0; i < lv->A.rows; ++i)
            x[i] += lv->jacobi_omega * lv->diag_inv[i] * r[i];
        return;
    }
    chebyshev_step(lv, 0, r, d, x);
    chebyshev_rest(h, lv, r, d, x);
}

int cmrs_amg_visits(int visits, int levels, int l) { return l + 2 < levels ? visits : 1; }

static void cycle_level(const cmrs_amg_hierarchy *h, int l, const cycle_work *w)
{
    const cmrs_amg_level *lv = &h->level[l];
    double *b = w->b[l], *x = w->x[l], *r = w->r[l], *d = w->d[l];
    if (l == h->levels - 1) {
        cmrs_amg_coarse_solve(h->coarse_inverse, h->coarse_rows, b, x);
        return;
    }
    presmooth(h, lv, b, x, r, d);
    for (int visit = 0; visit < cmrs_amg_visits(h->visits, h->levels, l); ++visit) {
        if (visit) /* r = b - A x after the correction before */
            residual(lv, b, x, r);
        cmrscl_csr_spmv(&lv->R, 1.0, r, 0.0, w->b[l + 1]);
        cycle_level(h, l + 1, w);
        cmrscl_csr_spmv(&lv->P, 1.0, w->x[l + 1], 1.0, x);
    }
    postsmooth(h, lv, b, x, r, d);
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

cmrscl_status cmrs_amg_cycle_levels(const cmrs_amg_hierarchy *h, double **b, double **x, double **r)
{
    int n = h->levels;
    cycle_work w = {b, x, r, calloc((size_t)n, sizeof(double *))};
    bool ok = w.d != NULL;
    for (int l = 0; ok && l < n && h->degree > 1; ++l)
        ok = (w.d[l] = cmrscl_alloc((size_t)h->level[l].A.rows + 1, sizeof(double))) != NULL;
    if (ok)
        cycle_level(h, 0, &w);
    for (int l = 0; w.d && l < n; ++l)
        free(w.d[l]);
    free(w.d);
    return ok ? CMRSCL_OK
              : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                            "AMG cycle: Chebyshev's vectors of %d levels", n);
}

cmrscl_status cmrs_amg_cycle(const cmrs_amg_hierarchy *h, const double *b, double *x)
{
    int n = h->levels;
    cycle_work w = {calloc((size_t)n, sizeof(double *)), calloc((size_t)n, sizeof(double *)),
                    calloc((size_t)n, sizeof(double *)), NULL};
    bool ok = w.b && w.x && w.r;
    for (int l = 0; ok && l < n; ++l) {
        size_t rows = (size_t)h->level[l].A.rows;
        w.b[l] = l ? cmrscl_alloc(rows, sizeof(double)) : (double *)b;
        w.x[l] = l ? cmrscl_alloc(rows, sizeof(double)) : x;
        w.r[l] = cmrscl_alloc(rows, sizeof(double));
        ok = w.b[l] && w.x[l] && w.r[l];
    }
    cmrscl_status st =
        ok ? cmrs_amg_cycle_levels(h, w.b, w.x, w.r)
           : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG cycle: vectors of %d levels", n);
    if (w.b && w.x && w.r)
        free_work(&w, n);
    else {
        free(w.b);
        free(w.x);
        free(w.r);
    }
    return st;
}

static double dot(const double *x, const double *y, int32_t n)
{
    double s = 0;
    for (int32_t i = 0; i < n; ++i)
        s += x[i] * y[i];
    return s;
}

/* z = M^-1 r: one cycle, or a copy without a hierarchy. */
static cmrscl_status precondition(const cmrs_amg_hierarchy *h, const double *r, double *z,
                                  int32_t n)
{
    if (h)
        return cmrs_amg_cycle(h, r, z);
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
