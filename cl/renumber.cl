/* renumber.cl - a renumbered matrix's products in the caller's numbering (host/exec/
 * matrix_renumber.c): x gathered into the device's order before the product, y scattered back
 * after it with the product's alpha and beta, in store_row's expression (spmv_common.cl).
 * After the prelude of every program; built per precision with -DHEIGHT=1 -DWARP=1
 * -DWG_SIZE=... -DVALUE_DOUBLE=... order[i]: the caller's index of the device's unknown i. */

__kernel void renumber_gather(const uint n, __global const int *restrict order,
                              __global const real_t *restrict src, __global real_t *restrict dst)
{
    const uint i = get_global_id(0);
    if (i < n)
        dst[i] = src[order[i]];
}

/* y[order[i]] = alpha t[i] + beta y[order[i]]; with beta == 0, y is not read (BLAS). */
__kernel void renumber_scatter(const uint n, __global const int *restrict order,
                               const real_t alpha, __global const real_t *restrict t,
                               const real_t beta, __global real_t *restrict y)
{
    const uint i = get_global_id(0);
    if (i < n) {
        const int to = order[i];
        y[to] = beta == (real_t)0 ? alpha * t[i] : alpha * t[i] + beta * y[to];
    }
}
