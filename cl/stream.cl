/* stream.cl - the device's achievable memory bandwidth (host/exec/bandwidth.c): read, copy and
 * triad over buffers many times the last-level cache, 16-byte accesses. On a GPU, grid-stride
 * loops: neighbouring work-items touch neighbouring elements at every step, so each warp's
 * loads coalesce and a modest grid keeps every compute unit streaming. On a CPU
 * (-DCONTIGUOUS=1), each work-item streams its own contiguous block instead: a CPU runs a
 * work-item's whole loop at a time, and a grid stride would send every one of its loads to
 * another page (PoCL: 2 GB/s where a plain loop reads 10). */
#ifndef CONTIGUOUS
#define CONTIGUOUS 0
#endif
#if CONTIGUOUS
#define FOR_MY_ELEMENTS(i, n)                                                                      \
    const uint chunk_ = (n + get_global_size(0) - 1) / get_global_size(0);                        \
    const uint end_ = min(n, (uint)(get_global_id(0) + 1) * chunk_);                               \
    for (uint i = get_global_id(0) * chunk_; i < end_; ++i)
#else
#define FOR_MY_ELEMENTS(i, n) for (uint i = get_global_id(0); i < n; i += get_global_size(0))
#endif

/* Each work-item keeps its own sum and writes it once: the reads cannot be optimised away,
 * and the output is a negligible fraction of the bytes read. */
__kernel void stream_read(__global const float4 *restrict a, const uint n,
                          __global float *restrict out)
{
    float4 s = (float4)(0.0f);
    FOR_MY_ELEMENTS(i, n)
    s += a[i];
    out[get_global_id(0)] = s.x + s.y + s.z + s.w;
}

__kernel void stream_copy(__global const float4 *restrict a, __global float4 *restrict b,
                          const uint n)
{
    FOR_MY_ELEMENTS(i, n)
    b[i] = a[i];
}

__kernel void stream_triad(__global const float4 *restrict a, __global const float4 *restrict b,
                           __global float4 *restrict c, const float scalar, const uint n)
{
    FOR_MY_ELEMENTS(i, n)
    c[i] = a[i] + scalar * b[i];
}

/* Scattered loads, as x's loads are for a matrix with scattered columns: each work-item
 * draws LOADS positions in a buffer of n floats from its own linear congruential sequence
 * (no index array, so no other traffic), and no two loads of a warp share a 32-byte sector
 * but by chance. The positions do not depend on the loaded values, so the loads overlap. */
__kernel void stream_gather(__global const float *restrict a, const uint n, const uint loads,
                            __global float *restrict out)
{
    uint s = get_global_id(0) * 2654435761u + 12345u;
    float sum = 0.0f;
#pragma unroll 8
    for (uint i = 0; i < loads; ++i) {
        s = s * 1664525u + 1013904223u;
        sum += a[mul_hi(s, n)]; /* uniform in [0, n) */
    }
    out[get_global_id(0)] = sum;
}
