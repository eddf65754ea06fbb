/* amg.cl - the AMG V-cycle's own kernels (host/precond/amg_device.c), after the prelude of
 * every program; built per precision and work-group size with -DHEIGHT=1 -DWARP=1
 * -DWG_SIZE=... -DVALUE_DOUBLE=... The cycle's products are the matrices' own kernels; these
 * are the smoother's vector updates and the coarsest level's dense solve.
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

/* x = A^-1 b on the coarsest level with its dense factor f (row-major n x n): one work-group,
 * each work-item a stride of the rows, x in local memory between barriers (xs: n values) and
 * written out at the end. pivot NULL (lu 0): Cholesky, L y = b then L^T x = y; lu 1: the rows
 * swapped as the factorisation did, then L (unit diagonal) and U. Column by column: when x[k]
 * is final every later row takes its term at once, so row i subtracts its terms in the host's
 * order (k ascending) in the forward solve; in the backward solve in k descending, the host's
 * reversed. */
__kernel void amg_coarse(const uint n, const uint lu, __global const real_t *restrict f,
                         __global const int *restrict pivot, __global const real_t *restrict b,
                         __global real_t *restrict x, __local real_t *xs)
{
    const uint id = get_local_id(0);
    for (uint i = id; i < n; i += WG_SIZE)
        xs[i] = b[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lu && id == 0) /* the swaps in sequence, as the factorisation made them */
        for (uint k = 0; k < n; ++k) {
            const real_t t = xs[k];
            xs[k] = xs[pivot[k]];
            xs[pivot[k]] = t;
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < n; ++k) {
        if (!lu && id == 0)
            xs[k] = xs[k] / f[(size_t)k * n + k];
        barrier(CLK_LOCAL_MEM_FENCE);
        const real_t xk = xs[k];
        for (uint i = k + 1 + id; i < n; i += WG_SIZE)
            xs[i] -= f[(size_t)i * n + k] * xk;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint k = n; k-- > 0;) {
        if (id == 0)
            xs[k] = xs[k] / f[(size_t)k * n + k];
        barrier(CLK_LOCAL_MEM_FENCE);
        const real_t xk = xs[k];
        /* U's column k (rows above), or L^T's: L's row k */
        for (uint i = id; i < k; i += WG_SIZE)
            xs[i] -= (lu ? f[(size_t)i * n + k] : f[(size_t)k * n + i]) * xk;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint i = id; i < n; i += WG_SIZE)
        x[i] = xs[i];
}
