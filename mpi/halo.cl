/* halo.cl - the halo exchange's two small kernels: the x entries other ranks need, gathered
 * into one contiguous buffer (grouped by destination) that is read back in one copy; and the
 * remote block's results, computed for the rows with remote entries only, added into y.
 * REAL is float or double (-D REAL=...; double also needs -D USE_FP64). */
#ifndef REAL
#error "REAL must be defined (float or double)"
#endif
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void halo_gather(__global const REAL *x, __global const int *index,
                          __global REAL *out, int n)
{
    int i = (int)get_global_id(0);
    if (i < n)
        out[i] = x[index[i]];
}

/* y[row[i]] += part[i]: each row appears once in `row`, so no two items write one entry. */
__kernel void halo_scatter_add(__global REAL *y, __global const int *row,
                               __global const REAL *part, int n)
{
    int i = (int)get_global_id(0);
    if (i < n)
        y[row[i]] += part[i];
}
