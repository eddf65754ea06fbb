/* solve_reference.c - see solve_reference.h. Plain loops in double; the order of the
 * tests is the device's (cl/solve.cl, cl/solve_gmres.cl). */
#include "solve_reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void spmv(const cmrscl_csr *a, const double *x, double *y)
{
    for (int32_t i = 0; i < a->rows; ++i) {
        double s = 0;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            s += a->values[k] * x[a->col_ind[k]];
        y[i] = s;
    }
}

static double dot(const double *x, const double *y, int n)
{
    double s = 0;
    for (int i = 0; i < n; ++i)
        s += x[i] * y[i];
    return s;
}

double ref_residual(const cmrscl_csr *a, const double *b, const double *x)
{
    int n = a->rows;
    double *r = malloc(sizeof(double) * ((size_t)n + 1));
    spmv(a, x, r);
    for (int i = 0; i < n; ++i)
        r[i] = b[i] - r[i];
    double norm = sqrt(dot(r, r, n));
    free(r);
    return norm;
}

static double *vec(int n) { return calloc((size_t)n + 1, sizeof(double)); }

ref_outcome ref_cg(const cmrscl_csr *a, const double *b, double *x, double threshold, int max,
                   bool jacobi, ref_form form)
{
    int n = a->rows;
    double *r = vec(n), *p = vec(n), *q = vec(n), *d = vec(n), *z = vec(n);
    for (int32_t i = 0; i < n; ++i) {
        d[i] = 1;
        for (int64_t k = a->row_ptr[i]; jacobi && k < a->row_ptr[i + 1]; ++k)
            if (a->col_ind[k] == i)
                d[i] = 1 / a->values[k];
    }
    spmv(a, x, r);
    for (int i = 0; i < n; ++i)
        r[i] = b[i] - r[i], z[i] = d[i] * r[i], p[i] = z[i];
    ref_outcome o = {0};
    double rz = dot(r, z, n);
    for (;;) {
        double rr = dot(r, r, n);
        o.residual = sqrt(rr);
        if (rr <= threshold * threshold) {
            o.converged = true;
            break;
        }
        if (o.iterations == max)
            break;
        spmv(a, p, q);
        double pq = dot(p, q, n);
        if (!(pq > 0)) {
            o.broke_down = true;
            break;
        }
        double alpha = rz / pq, beta = 0;
        if (form == REF_DEVICE) {
            double qdq = 0;
            for (int i = 0; i < n; ++i)
                qdq += q[i] * d[i] * q[i];
            beta = alpha * alpha * qdq / rz - 1;
        }
        for (int i = 0; i < n; ++i)
            x[i] += alpha * p[i], r[i] -= alpha * q[i], z[i] = d[i] * r[i];
        double rz_next = dot(r, z, n);
        if (form == REF_TEXTBOOK)
            beta = rz_next / rz;
        for (int i = 0; i < n; ++i)
            p[i] = z[i] + beta * p[i];
        rz = rz_next; /* both forms compute r.z itself (the device for alpha's use) */
        ++o.iterations;
    }
    free(r), free(p), free(q), free(d), free(z);
    return o;
}

ref_outcome ref_bicgstab(const cmrscl_csr *a, const double *b, double *x, double threshold, int max,
                         ref_form form)
{
    (void)form; /* the device's is the textbook's */
    int n = a->rows;
    double *r = vec(n), *rs = vec(n), *p = vec(n), *v = vec(n), *s = vec(n), *t = vec(n);
    spmv(a, x, r);
    for (int i = 0; i < n; ++i)
        r[i] = b[i] - r[i], rs[i] = r[i];
    double rho_prev = 1, alpha = 0, omega = 0, thr = threshold * threshold;
    ref_outcome o = {0};
    for (;;) {
        double rr = dot(r, r, n), rho = dot(rs, r, n);
        o.residual = sqrt(rr);
        if (rr <= thr) {
            o.converged = true;
            break;
        }
        if (o.iterations == max)
            break;
        if (rho == 0) {
            o.broke_down = true;
            break;
        }
        double beta = o.iterations ? rho / rho_prev * (alpha / omega) : 0;
        for (int i = 0; i < n; ++i)
            p[i] = o.iterations ? r[i] + beta * (p[i] - omega * v[i]) : r[i];
        spmv(a, p, v);
        double rsv = dot(rs, v, n);
        if (rsv == 0) {
            o.broke_down = true;
            break;
        }
        alpha = rho / rsv;
        for (int i = 0; i < n; ++i)
            s[i] = r[i] - alpha * v[i];
        double ss = dot(s, s, n);
        spmv(a, s, t);
        ++o.iterations;
        if (ss <= thr) { /* the half step: x += alpha p, r = s, then the test */
            for (int i = 0; i < n; ++i)
                x[i] += alpha * p[i], r[i] = s[i];
            continue;
        }
        omega = dot(t, s, n) / dot(t, t, n);
        if (omega == 0) {
            o.broke_down = true;
            break;
        }
        for (int i = 0; i < n; ++i)
            x[i] += alpha * p[i] + omega * s[i], r[i] = s[i] - omega * t[i];
        rho_prev = rho;
    }
    free(r), free(rs), free(p), free(v), free(s), free(t);
    return o;
}

ref_outcome ref_gmres(const cmrscl_csr *a, const double *b, double *x, double threshold, int max,
                      int m)
{
    int n = a->rows;
    double *r = vec(n), *w = vec(n), *basis = calloc((size_t)(m + 1) * n + 1, sizeof(double));
    double *h = calloc((size_t)(m + 1) * m, sizeof(double)), *cs = vec(m), *sn = vec(m);
    double *g = vec(m + 1), *y = vec(m);
    ref_outcome o = {0};
    for (bool done = false; !done;) {
        spmv(a, x, r);
        for (int i = 0; i < n; ++i)
            r[i] = b[i] - r[i];
        double beta = sqrt(dot(r, r, n));
        o.residual = beta;
        if (beta <= threshold) {
            o.converged = true;
            break;
        }
        for (int i = 0; i < n; ++i)
            basis[i] = r[i] / beta;
        memset(g, 0, sizeof(double) * (size_t)(m + 1));
        g[0] = beta;
        int cols = 0;
        for (int j = 0; j < m && !done; ++j) {
            spmv(a, basis + (size_t)j * n, w);
            double *col = h + (size_t)j * (m + 1);
            for (int i = 0; i <= j; ++i) /* classical: every dot before any subtraction */
                col[i] = dot(basis + (size_t)i * n, w, n);
            for (int i = 0; i <= j; ++i)
                for (int k = 0; k < n; ++k)
                    w[k] -= col[i] * basis[(size_t)i * n + k];
            double hn = sqrt(dot(w, w, n));
            for (int i = 0; i < j; ++i) {
                double c = cs[i] * col[i] + sn[i] * col[i + 1];
                col[i + 1] = -sn[i] * col[i] + cs[i] * col[i + 1];
                col[i] = c;
            }
            double d = hypot(col[j], hn);
            cs[j] = d > 0 ? col[j] / d : 1, sn[j] = d > 0 ? hn / d : 0;
            col[j] = d;
            g[j + 1] = -sn[j] * g[j], g[j] = cs[j] * g[j];
            cols = j + 1;
            ++o.iterations;
            o.residual = fabs(g[j + 1]);
            if (d == 0 || (o.residual > threshold && hn == 0))
                o.broke_down = done = true;
            else if (o.residual <= threshold)
                o.converged = done = true;
            else if (o.iterations == max)
                done = true;
            else
                for (int k = 0; k < n; ++k)
                    basis[(size_t)(j + 1) * n + k] = w[k] / hn;
        }
        if (o.broke_down)
            break;
        for (int k = cols; k-- > 0;) {
            double v = g[k];
            for (int i = k + 1; i < cols; ++i)
                v -= h[(size_t)i * (m + 1) + k] * y[i];
            y[k] = v / h[(size_t)k * (m + 1) + k];
        }
        for (int k = 0; k < cols; ++k)
            for (int i = 0; i < n; ++i)
                x[i] += y[k] * basis[(size_t)k * n + i];
    }
    free(r), free(w), free(basis), free(h), free(cs), free(sn), free(g), free(y);
    return o;
}
