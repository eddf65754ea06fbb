/* probe.cl - a trivial kernel whose CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE tells the
 * SIMD width of devices that report no warp or wavefront attribute (host/device.c). */
__kernel void probe(__global float *out)
{
    out[get_global_id(0)] = (float)get_local_id(0);
}
