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

/* x = A^-1 b on the coarsest level with its dense inverse, stored transposed (inv_t[k n + i]:
 * row i's k-th term, so that a warp's rows read one stretch of memory): a work-item a row,
 * its terms added in column order as the host's cmrs_amg_coarse_solve adds them. */
__kernel void amg_coarse(const uint n, __global const real_t *restrict inv_t,
                         __global const real_t *restrict b, __global real_t *restrict x)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    real_t s = 0;
    for (uint k = 0; k < n; ++k)
        s += inv_t[(size_t)k * n + i] * b[k];
    x[i] = s;
}
