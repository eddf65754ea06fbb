/* probe.cl - a trivial kernel whose CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE tells the
 * SIMD width of devices that report no warp or wavefront attribute (host/device.c). */
__kernel void probe(__global float *out)
{
    out[get_global_id(0)] = (float)get_local_id(0);
}

/* Sub-group layout (host/device.c): size and lane of every work-item of one group. Built
 * only with the -cl-std under which the device declares cl_khr_subgroups. */
#ifdef cl_khr_subgroups
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
__kernel void probe_subgroups(__global uint *out)
{
    const uint i = get_local_id(0);
    out[2 * i] = get_sub_group_size();
    out[2 * i + 1] = get_sub_group_local_id();
}
#endif
