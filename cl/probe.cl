/* probe.cl - small kernels that tell the host what a device does (host/runtime/device.c,
 * host/runtime/subgroups.c).
 *
 * probe: its CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE tells the SIMD width of devices
 * that report no warp or wavefront attribute. */
__kernel void probe(__global float *out)
{
    out[get_global_id(0)] = (float)get_local_id(0);
}

/* Sub-groups: each work-item of one group writes its sub-group's size, its lane and sub-group,
 * and, with PROBE_SHUFFLE, what the shuffles the families use (cl/warp.cl) bring it: the
 * value of lane ^ 1, of lane - 1 and of lane + 1 (its own at the ends). probe_subgroups asks
 * for no width; probe_subgroups_W asks for W lanes (intel_reqd_sub_group_size), for each
 * width W in PROBE_WIDTHS (the OR of the widths the device lists). Built under the OpenCL C
 * version where the device has sub-groups (the extension, or OpenCL C 3.0's feature). */
#if defined(cl_khr_subgroups) || defined(__opencl_c_subgroups)
#ifdef cl_khr_subgroups
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif
#ifndef PROBE_WIDTHS
#define PROBE_WIDTHS 0
#endif
static inline void probe_body(__global uint *out)
{
    const uint i = get_local_id(0), lane = get_sub_group_local_id();
    const uint size = get_sub_group_size();
    out[4 * i] = size;
    out[4 * i + 1] = lane | get_sub_group_id() << 16;
#if PROBE_SHUFFLE
    const uint swapped = sub_group_shuffle_xor(i, 1u);
#if SG_RELATIVE
    const uint up = sub_group_shuffle_up(i, 1u), down = sub_group_shuffle_down(i, 1u);
#else
    const uint up = sub_group_shuffle(i, lane > 0 ? lane - 1 : lane);
    const uint down = sub_group_shuffle(i, lane + 1 < size ? lane + 1 : lane);
#endif
    out[4 * i + 2] = swapped;
    out[4 * i + 3] = (lane > 0 ? up : i) | (lane + 1 < size ? down : i) << 16;
#endif
}
__kernel void probe_subgroups(__global uint *out) { probe_body(out); }
/* Sub-groups of one group parting ways: sub-group g makes g + 1 rounds of shuffles (every
 * lane adding its xor-1 partner's lane and the round), so the sub-groups of a group take
 * different paths, as the segment and MODULO families' warps do. An implementation that runs
 * sub-group functions as work-group barriers gets these sums wrong (PoCL 5). */
static inline void probe_apart_body(__global uint *out)
{
    uint sum = 0;
#if PROBE_SHUFFLE
    const uint lane = get_sub_group_local_id();
    for (uint r = 0; r <= get_sub_group_id(); ++r)
        sum += sub_group_shuffle_xor(lane, 1u) + r;
#endif
    out[get_local_id(0)] = sum;
}
__kernel void probe_subgroups_apart(__global uint *out) { probe_apart_body(out); }
#define PROBE_FIXED(w)                                                                             \
    __kernel __attribute__((intel_reqd_sub_group_size(w))) void probe_subgroups_##w(               \
        __global uint *out)                                                                        \
    {                                                                                              \
        probe_body(out);                                                                           \
    }                                                                                              \
    __kernel __attribute__((intel_reqd_sub_group_size(w))) void probe_subgroups_apart_##w(         \
        __global uint *out)                                                                        \
    {                                                                                              \
        probe_apart_body(out);                                                                     \
    }
#if PROBE_WIDTHS & 2
PROBE_FIXED(2)
#endif
#if PROBE_WIDTHS & 4
PROBE_FIXED(4)
#endif
#if PROBE_WIDTHS & 8
PROBE_FIXED(8)
#endif
#if PROBE_WIDTHS & 16
PROBE_FIXED(16)
#endif
#if PROBE_WIDTHS & 32
PROBE_FIXED(32)
#endif
#if PROBE_WIDTHS & 64
PROBE_FIXED(64)
#endif
#endif
