/* stream.cl - the device's achievable memory bandwidth (src/exec/bandwidth.c): read, copy and
 * triad over buffers many times the last-level cache, 16-byte accesses, grid-stride loops
 * so a modest grid keeps every compute unit streaming. */

/* Each work-item keeps its own sum and writes it once: the reads cannot be optimised away,
 * and the output is a negligible fraction of the bytes read. */
__kernel void stream_read(__global const float4 *restrict a, const uint n,
                          __global float *restrict out)
{
    float4 s = (float4)(0.0f);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        s += a[i];
    out[get_global_id(0)] = s.x + s.y + s.z + s.w;
}

__kernel void stream_copy(__global const float4 *restrict a, __global float4 *restrict b,
                          const uint n)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        b[i] = a[i];
}

__kernel void stream_triad(__global const float4 *restrict a, __global const float4 *restrict b,
                           __global float4 *restrict c, const float scalar, const uint n)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
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
