/* amg.cl - the AMG V-cycle's own kernels (host/precond/amg_device.c), after the prelude of
 * every program; built per precision and work-group size with -DHEIGHT=1 -DWARP=1
 * -DWG_SIZE=... -DVALUE_DOUBLE=... The cycle's products are the matrices' own kernels; these
 * are the smoother's vector updates and the coarsest level's dense product with its inverse.
 *
 * Each expression is the host cycle's (host/precond/amg_cycle.c, amg_coarse.c) in the same
 * order, and contraction into fma is off, so in double the device's cycle differs from the
 * host's only where the products (and the backward solve's order, below) round differently. */
#pragma OPENCL FP_CONTRACT OFF

/* Pre-smoothing from x = 0: x = omega D^-1 b, and r = b for the residual's product
 * (r = b - A x) that follows. */
__kernel void amg_presmooth(const uint n, const real_t omega, __global const real_t *restrict dinv,
                            __global const real_t *restrict b, __global real_t *restrict x,
                            __global real_t *restrict r)
{
    const uint i = get_global_id(0);
    if (i < n) {
        x[i] = omega * dinv[i] * b[i];
        r[i] = b[i];
    }
}

/* The rest of a Jacobi sweep once r = b - A x: x += omega D^-1 r. */
__kernel void amg_jacobi(const uint n, const real_t omega, __global const real_t *restrict dinv,
                         __global const real_t *restrict r, __global real_t *restrict x)
{
    const uint i = get_global_id(0);
    if (i < n)
        x[i] += omega * dinv[i] * r[i];
}

/* Chebyshev's first step from x = 0 (amg_cycle.c, presmooth): x = d = c D^-1 b, and r = b for
 * the products that follow. */
__kernel void amg_cheb_first(const uint n, const real_t c, __global const real_t *restrict dinv,
                             __global const real_t *restrict b, __global real_t *restrict x,
                             __global real_t *restrict r, __global real_t *restrict d)
{
    const uint i = get_global_id(0);
    if (i < n) {
        const real_t v = c * dinv[i] * b[i];
        x[i] = v;
        d[i] = v;
        r[i] = b[i];
    }
}

/* A Chebyshev step once r is up to date: d = c1 d + c2 D^-1 r (d = c2 D^-1 r when c1 is 0:
 * the first step, whatever d held), x += d. */
__kernel void amg_cheb(const uint n, const real_t c1, const real_t c2,
                       __global const real_t *restrict dinv, __global const real_t *restrict r,
                       __global real_t *restrict d, __global real_t *restrict x)
{
    const uint i = get_global_id(0);
    if (i < n) {
        const real_t v = c1 == (real_t)0 ? c2 * dinv[i] * r[i] : c1 * d[i] + c2 * dinv[i] * r[i];
        d[i] = v;
        x[i] += v;
    }
}

/* x = A^-1 b on the coarsest level with its dense inverse (row-major): COARSE_LANES work-items
 * a row, each adding every COARSE_LANES-th term (a warp reads one stretch of the row), then
 * their sums in a fixed tree - the same order every run. One work-item a row left the loads
 * of its long chain of additions exposed. */
__kernel void amg_coarse(const uint n, __global const real_t *restrict inv,
                         __global const real_t *restrict b, __global real_t *restrict x,
                         __local real_t *part)
{
    const uint id = get_local_id(0), lane = id % COARSE_LANES,
               row = get_group_id(0) * (WG_SIZE / COARSE_LANES) + id / COARSE_LANES;
    real_t s = 0;
    if (row < n)
        for (uint k = lane; k < n; k += COARSE_LANES)
            s += inv[(size_t)row * n + k] * b[k];
    part[id] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = COARSE_LANES / 2; w > 0; w /= 2) {
        if (lane < w)
            part[id] += part[id + w];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && row < n)
        x[row] = part[id];
}

#if AMG_MIXED
/* A float cycle under a double solve: r narrowed to the cycle's b, its x widened to z. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void amg_narrow(const uint n, __global const double *restrict from,
                         __global float *restrict to)
{
    const uint i = get_global_id(0);
    if (i < n)
        to[i] = (float)from[i];
}

__kernel void amg_widen(const uint n, __global const float *restrict from,
                        __global double *restrict to)
{
    const uint i = get_global_id(0);
    if (i < n)
        to[i] = (double)from[i];
}
#endif
