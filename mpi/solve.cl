/* solve.cl - the distributed conjugate gradients' vector kernels (mpi/solve.c): each runs a
 * fixed grid of GROUPS work-groups of WG work-items over this rank's rows, a work-item taking
 * rows i, i + global size, ... in turn, and leaves one real4 of partial sums per work-group,
 * added up in a tree of fixed shape: the host adds the work-groups' sums in order, and the
 * ranks' in rank order, so a solve gives the same bits run after run.
 * REAL is float or double (-D REAL=...; double also needs -D USE_FP64), WG a power of two. */
#ifndef REAL
#error "REAL must be defined (float or double)"
#endif
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define REAL4 CONCAT(REAL, 4)
#define CONCAT(a, b) CONCAT_(a, b)
#define CONCAT_(a, b) a##b

/* The work-group's sum of each item's acc, written by its first item to out[group]. */
void store_sums(REAL4 acc, __local REAL4 *s, __global REAL4 *out)
{
    const uint l = get_local_id(0);
    s[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint width = WG / 2; width > 0; width /= 2) {
        if (l < width)
            s[l] += s[l + width];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        out[get_group_id(0)] = s[0];
}

/* The start, r = b - A x0 computed: z = D r, p = z; sums (r.r, r.z, b.b, 0). dinv may be NULL
 * (no preconditioner: z = r). */
__kernel void dcg_start(const uint n, __global const REAL *b, __global const REAL *r,
                        __global REAL *p, __global const REAL *dinv, __global REAL4 *sums,
                        const uint at)
{
    __local REAL4 s[WG];
    REAL4 acc = (REAL4)(0);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        const REAL rv = r[i], zv = dinv ? dinv[i] * rv : rv;
        p[i] = zv;
        acc += (REAL4)(rv * rv, rv * zv, b[i] * b[i], 0);
    }
    store_sums(acc, s, sums + at);
}

/* One step: x += alpha p, r -= alpha q, z = D r, p = z + beta p; sums (r.r, r.z, 0, 0). */
__kernel void dcg_update(const uint n, __global REAL *x, __global REAL *r, __global REAL *p,
                         __global const REAL *q, __global const REAL *dinv, const REAL alpha,
                         const REAL beta, __global REAL4 *sums, const uint at)
{
    __local REAL4 s[WG];
    REAL4 acc = (REAL4)(0);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        const REAL pv = p[i], rv = r[i] - alpha * q[i], zv = dinv ? dinv[i] * rv : rv;
        x[i] += alpha * pv;
        r[i] = rv;
        p[i] = zv + beta * pv;
        acc += (REAL4)(rv * rv, rv * zv, 0, 0);
    }
    store_sums(acc, s, sums + at);
}

/* After q = A p: sums (p.q, q.Dq, 0, 0) (q.q without dinv). */
__kernel void dcg_dots(const uint n, __global const REAL *p, __global const REAL *q,
                       __global const REAL *dinv, __global REAL4 *sums, const uint at)
{
    __local REAL4 s[WG];
    REAL4 acc = (REAL4)(0);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        const REAL qv = q[i];
        acc += (REAL4)(p[i] * qv, (dinv ? dinv[i] * qv : qv) * qv, 0, 0);
    }
    store_sums(acc, s, sums + at);
}

/* The true residual's rounding (mpi/solve.c, cmrs_dsolve_residual_rr): y, 3 b - A (3 x) from 3 x
 * rounded anew, less 3 r, r = b - A x: how far two evaluations of r part. Sums (r.r, y.y, 0, 0). */
__kernel void dres_rounding(const uint n, __global const REAL *r, __global REAL *y,
                            __global REAL4 *sums, const uint at)
{
    __local REAL4 s[WG];
    REAL4 acc = (REAL4)(0);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        const REAL rv = r[i], d = y[i] - 3 * rv;
        acc += (REAL4)(rv * rv, d * d, 0, 0);
    }
    store_sums(acc, s, sums + at);
}

/* CG preconditioned by each rank's AMG (mpi/solve_pcg.c): x += alpha p, r -= alpha q; sums
 * (r.r, 0, 0, 0). z = M r comes next, from the preconditioner, then p = z + beta p (dbicg_p). */
__kernel void dpcg_step(const uint n, __global REAL *x, __global REAL *r, __global const REAL *p,
                        __global const REAL *q, const REAL alpha, __global REAL4 *sums,
                        const uint at)
{
    __local REAL4 s[WG];
    REAL4 acc = (REAL4)(0);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        x[i] += alpha * p[i];
        const REAL rv = r[i] - alpha * q[i];
        r[i] = rv;
        acc.x += rv * rv;
    }
    store_sums(acc, s, sums + at);
}

/* ---- BiCGStab (mpi/solve_bicgstab.c): van der Vorst's, r0* = r0, as the single-device
 * solver has it (cl/solve.cl). ---- */

/* p = r + beta (p - omega v) */
__kernel void dbicg_p(const uint n, __global const REAL *r, __global REAL *p,
                      __global const REAL *v, const REAL beta, const REAL omega)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        p[i] = r[i] + beta * (p[i] - omega * v[i]);
}

/* s = r - alpha v; sums (s.s, 0, 0, 0) */
__kernel void dbicg_s(const uint n, __global const REAL *r, __global const REAL *v,
                      __global REAL *s_vec, const REAL alpha, __global REAL4 *sums, const uint at)
{
    __local REAL4 s[WG];
    REAL4 acc = (REAL4)(0);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        const REAL sv = r[i] - alpha * v[i];
        s_vec[i] = sv;
        acc.x += sv * sv;
    }
    store_sums(acc, s, sums + at);
}

/* x += alpha p + omega s, r = s - omega t (omega 0: the half step, r = s); sums (r.r, r0*.r) */
__kernel void dbicg_step(const uint n, __global REAL *x, __global REAL *r, __global const REAL *p,
                         __global const REAL *s_vec, __global const REAL *t,
                         __global const REAL *rs, const REAL alpha, const REAL omega,
                         __global REAL4 *sums, const uint at)
{
    __local REAL4 s[WG];
    REAL4 acc = (REAL4)(0);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        const REAL sv = s_vec[i], rv = sv - omega * t[i];
        x[i] += alpha * p[i] + omega * sv;
        r[i] = rv;
        acc += (REAL4)(rv * rv, rs[i] * rv, 0, 0);
    }
    store_sums(acc, s, sums + at);
}

/* ---- GMRES(m) (mpi/solve_gmres.c): classical Gram-Schmidt in one pass over a basis of
 * vectors `stride` values apart, as the single-device solver's (cl/solve_gmres.cl). ---- */

/* The dots of w with basis vectors 0..count-1, four at a time: chunk k's (v_4k.w, ...,
 * v_4k+3.w) per work-group at sums[k * groups + group]. */
__kernel void dgm_dots(const uint n, __global const REAL *basis, const ulong stride,
                       const uint count, __global const REAL *w, __global REAL4 *sums)
{
    __local REAL4 s[WG];
    for (uint c = 0; c < count; c += 4) {
        __global const REAL *v = basis + c * stride;
        const uint more = count - c;
        REAL4 acc = (REAL4)(0);
        for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
            const REAL wv = w[i];
            acc.x += v[i] * wv;
            if (more > 1)
                acc.y += v[i + stride] * wv;
            if (more > 2)
                acc.z += v[i + 2 * stride] * wv;
            if (more > 3)
                acc.w += v[i + 3 * stride] * wv;
        }
        store_sums(acc, s, sums + (c / 4) * get_num_groups(0));
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* w -= sum_c coef[c] v_c over count basis vectors; sums (w.w, 0, 0, 0). With w = x and
 * coef = -y: a cycle applied, x += V y. */
__kernel void dgm_orth(const uint n, __global const REAL *basis, const ulong stride,
                       const uint count, __global const REAL *coef, __global REAL *w,
                       __global REAL4 *sums, const uint at)
{
    __local REAL4 s[WG];
    REAL4 acc = (REAL4)(0);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        REAL wv = w[i];
        for (uint c = 0; c < count; ++c)
            wv -= coef[c] * basis[c * stride + i];
        w[i] = wv;
        acc.x += wv * wv;
    }
    store_sums(acc, s, sums + at);
}

/* out = scale in */
__kernel void dgm_scale(const uint n, __global const REAL *in, __global REAL *out, const REAL scale)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        out[i] = in[i] * scale;
}
