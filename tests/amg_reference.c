/* amg_reference.c - the methods AMG preconditions on the right, with the host's V-cycle
 * (cmrs_amg_cycle) in double: what the device's BiCGStab and GMRES with AMG are checked
 * against (test_solve_amg.c). */
#include "amg_reference.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* BiCGStab preconditioned on the right by the host cycle (cmrs_amg_cycle): the ground truth
 * of the device's, `iterations` of them from x = 0 (bicg_p's first p = r). */
void ref_amg_bicgstab(const cmrscl_csr *a, const cmrs_amg_hierarchy *h, const double *b, double *x,
                      int iterations)
{
    size_t n = (size_t)a->rows;
    double *r = malloc(n * 8), *rs = malloc(n * 8), *p = calloc(n, 8), *v = calloc(n, 8),
           *ph = malloc(n * 8), *sv = malloc(n * 8), *sh = malloc(n * 8), *t = malloc(n * 8);
    memcpy(r, b, n * 8);
    memset(x, 0, n * 8);
    memcpy(rs, r, n * 8);
    double rho = 1, alpha = 1, omega = 1;
    for (int k = 0; k < iterations; ++k) {
        double rho_next = 0, rv = 0, ts = 0, tt = 0;
        for (size_t i = 0; i < n; ++i)
            rho_next += rs[i] * r[i];
        double beta = k == 0 ? 0 : rho_next / rho * (alpha / omega);
        for (size_t i = 0; i < n; ++i)
            p[i] = k == 0 ? r[i] : r[i] + beta * (p[i] - omega * v[i]);
        CHECK_OK(cmrs_amg_cycle(h, p, ph));
        cmrscl_csr_spmv(a, 1.0, ph, 0.0, v);
        for (size_t i = 0; i < n; ++i)
            rv += rs[i] * v[i];
        alpha = rho_next / rv;
        for (size_t i = 0; i < n; ++i)
            sv[i] = r[i] - alpha * v[i];
        CHECK_OK(cmrs_amg_cycle(h, sv, sh));
        cmrscl_csr_spmv(a, 1.0, sh, 0.0, t);
        for (size_t i = 0; i < n; ++i)
            ts += t[i] * sv[i], tt += t[i] * t[i];
        omega = ts / tt;
        for (size_t i = 0; i < n; ++i) {
            x[i] += alpha * ph[i] + omega * sh[i];
            r[i] = sv[i] - omega * t[i];
        }
        rho = rho_next;
    }
    free(r), free(rs), free(p), free(v), free(ph), free(sv), free(sh), free(t);
}

static double dot(const double *u, const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; ++i)
        s += u[i] * v[i];
    return s;
}

/* GMRES preconditioned on the right by the host cycle, `k` Arnoldi steps from x = 0 (classical
 * Gram-Schmidt, the least-squares problem by Givens rotations): x = M V y, the minimiser of
 * ||b - A x|| over M times the Krylov space of A M - the device's x after k steps, whatever its
 * rounding. */
void ref_amg_gmres(const cmrscl_csr *a, const cmrs_amg_hierarchy *h, const double *b, double *x,
                   int k)
{
    size_t n = (size_t)a->rows;
    double *v = calloc(n * (size_t)(k + 1), 8), *z = malloc(n * 8), *w = malloc(n * 8);
    double hess[9][8] = {{0}}, g[9] = {0}, cs[8], sn[8], y[8];
    double beta = sqrt(dot(b, b, n));
    for (size_t i = 0; i < n; ++i)
        v[i] = b[i] / beta;
    g[0] = beta;
    for (int j = 0; j < k; ++j) {
        CHECK_OK(cmrs_amg_cycle(h, v + n * (size_t)j, z));
        cmrscl_csr_spmv(a, 1.0, z, 0.0, w);
        for (int i = 0; i <= j; ++i)
            hess[i][j] = dot(w, v + n * (size_t)i, n);
        for (int i = 0; i <= j; ++i)
            for (size_t r = 0; r < n; ++r)
                w[r] -= hess[i][j] * v[n * (size_t)i + r];
        hess[j + 1][j] = sqrt(dot(w, w, n));
        for (size_t r = 0; r < n; ++r)
            v[n * (size_t)(j + 1) + r] = w[r] / hess[j + 1][j];
        for (int i = 0; i < j; ++i) { /* the earlier rotations on the new column */
            double t = cs[i] * hess[i][j] + sn[i] * hess[i + 1][j];
            hess[i + 1][j] = -sn[i] * hess[i][j] + cs[i] * hess[i + 1][j];
            hess[i][j] = t;
        }
        double d = hypot(hess[j][j], hess[j + 1][j]);
        cs[j] = hess[j][j] / d, sn[j] = hess[j + 1][j] / d;
        hess[j][j] = d, hess[j + 1][j] = 0;
        g[j + 1] = -sn[j] * g[j], g[j] *= cs[j];
    }
    for (int j = k; j-- > 0;) {
        y[j] = g[j];
        for (int i = j + 1; i < k; ++i)
            y[j] -= hess[j][i] * y[i];
        y[j] /= hess[j][j];
    }
    memset(w, 0, n * 8);
    for (int j = 0; j < k; ++j)
        for (size_t r = 0; r < n; ++r)
            w[r] += y[j] * v[n * (size_t)j + r];
    CHECK_OK(cmrs_amg_cycle(h, w, x));
    free(v), free(z), free(w);
}
