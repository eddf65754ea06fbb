/* warp.cl - the warp layer: what the WARP lanes that share one strip do together, behind one
 * interface with three backends (-DREDUCE, codes in cmrs_abi.h):
 *   LOCAL     local memory and work-group barriers, on any device. A warp is WARP consecutive
 *             work-items. A barrier orders the whole work-group, so every work-item of the
 *             group must make the same calls: the families call the layer where control flow
 *             is uniform over the group, or run one warp per work-group (the variant table's
 *             "one warp per group", host/plan/variants.c).
 *   SHUFFLE   NVIDIA's shfl.sync / vote.sync / bar.warp.sync through inline PTX (NVIDIA's
 *             OpenCL C 1.2 has no sub-groups): WARP <= 32 lanes within one hardware warp.
 *   SUBGROUP  OpenCL sub-groups (cl_khr_subgroups, or OpenCL C 3.0's __opencl_c_subgroups):
 *             a warp is one sub-group, which the host makes exactly WARP lanes wide
 *             (intel_reqd_sub_group_size where the device offers it, else the built kernel's
 *             sub-group size is checked - host/runtime/subgroups.c). Shuffles come from
 *             cl_khr_subgroup_shuffle, and cl_khr_subgroup_shuffle_relative where the device
 *             lists it (-DSG_RELATIVE=1).
 * None relies on implicit warp synchrony, which OpenCL does not define.
 *
 * The interface. Every lane of the warp makes each call together (LOCAL: every work-item of
 * the group), with arguments that may differ per lane:
 *   warp_lane(), warp_index()     this work-item's lane in its warp, its warp in the group
 *   warp_sync()                   the warp's writes to local memory visible to all its lanes
 *   warp_shuffle_xor(v, m)        real_t v of lane ^ m (m < WARP)
 *   warp_shuffle_up(v, d), _u32   v of lane - d; the caller uses it only where lane >= d
 *   warp_shuffle_down_u32(v, d)   v of lane + d; the caller uses it only where lane + d < WARP
 *   warp_shuffle_idx(v, s), _u32  v of lane s
 *   warp_last_head(head)          the highest lane <= this one whose head is true (lane 0's
 *                                 must be)
 *   WARP_HAS_SHUFFLE              1 where shuffles are the hardware's, 0 where the LOCAL backend
 *                                 emulates them through local memory (correct, slow: the
 *                                 families prefer other paths there)
 * Emulated shuffles need local memory: a kernel declares WARP_SCRATCH at its own scope (OpenCL
 * C 1.2 allows __local variables nowhere else), and functions that reach the layer take
 * WARP_SCRATCH_PARAMS and pass WARP_SCRATCH_ARGS; all three are empty elsewhere. */
#if WARP < 1 || (WARP & (WARP - 1)) != 0 || WG_SIZE % WARP != 0
#error "WARP must be a power of two dividing WG_SIZE"
#endif

/* ---- SHUFFLE: NVIDIA inline PTX ---- */
#if REDUCE == CMRS_REDUCE_SHUFFLE
#if WARP > 32 || WG_SIZE % 32 != 0
#error "NVIDIA warp shuffles need WARP <= 32 and whole hardware warps per group"
#endif
#define WARP_HAS_SHUFFLE 1
#define WARP_SCRATCH
#define WARP_SCRATCH_PARAMS
#define WARP_SCRATCH_ARGS
INLINE uint warp_lane(void) { return get_local_id(0) % WARP; }
INLINE uint warp_index(void) { return get_local_id(0) / WARP; }
/* This warp's lanes within the hardware warp of 32 (WARP may be narrower): the member mask
 * of the .sync instructions, so a strip never waits for another strip's lanes. */
INLINE uint warp_mask(void)
{
    return WARP == 32 ? 0xffffffffu
                      : ((1u << WARP) - 1u) << (get_local_id(0) % 32u & ~(uint)(WARP - 1));
}
#define warp_sync() asm volatile("bar.warp.sync %0;" ::"r"(warp_mask()) : "memory")
/* shfl.sync with the full member mask: every lane of the hardware warp executes them (the
 * families keep them out of divergent code). The clamp 0x1f lets xor and down stay within
 * the hardware warp; callers keep within their WARP lanes. */
INLINE uint warp_shuffle_xor_u32(uint v, uint m)
{
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(m));
    return r;
}
INLINE uint warp_shuffle_down_u32(uint v, uint d)
{
    uint r;
    asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(d));
    return r;
}
INLINE uint warp_shuffle_up_u32(uint v, uint d)
{
    uint r;
    asm volatile("shfl.sync.up.b32 %0, %1, %2, 0x0, 0xffffffff;" : "=r"(r) : "r"(v), "r"(d));
    return r;
}
INLINE uint warp_shuffle_idx_u32(uint v, uint s)
{
    uint r, src = (get_local_id(0) % 32u & ~(uint)(WARP - 1)) + s; /* lane s of this warp */
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(src));
    return r;
}
INLINE uint warp_last_head(bool head)
{
    uint heads;
    asm volatile("{ .reg .pred q; setp.ne.u32 q, %1, 0; vote.sync.ballot.b32 %0, q, "
                 "0xffffffff; }"
                 : "=r"(heads)
                 : "r"((uint)head));
    const uint lane = warp_lane();
    heads = (heads >> (get_local_id(0) % 32u & ~(uint)(WARP - 1))) & ((2u << lane) - 1u);
    return 31 - clz(heads);
}
#if VALUE_DOUBLE
#define SHUFFLE_REAL(op, v, arg)                                                                   \
    as_double((uint2)(op(as_uint2(v).x, arg), op(as_uint2(v).y, arg)))
#else
#define SHUFFLE_REAL(op, v, arg) as_float(op(as_uint(v), arg))
#endif
INLINE real_t warp_shuffle_xor(real_t v, uint m) { return SHUFFLE_REAL(warp_shuffle_xor_u32, v, m); }
INLINE real_t warp_shuffle_up(real_t v, uint d) { return SHUFFLE_REAL(warp_shuffle_up_u32, v, d); }
INLINE real_t warp_shuffle_idx(real_t v, uint s)
{
    return SHUFFLE_REAL(warp_shuffle_idx_u32, v, s);
}

/* ---- SUBGROUP: OpenCL sub-groups, one per warp ---- */
#elif REDUCE == CMRS_REDUCE_SUBGROUP
#ifdef cl_khr_subgroups
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif
#ifndef SG_RELATIVE
#define SG_RELATIVE 0
#endif
#define WARP_HAS_SHUFFLE 1
#define WARP_SCRATCH
#define WARP_SCRATCH_PARAMS
#define WARP_SCRATCH_ARGS
INLINE uint warp_lane(void) { return get_sub_group_local_id(); }
INLINE uint warp_index(void) { return get_sub_group_id(); }
#define warp_sync() sub_group_barrier(CLK_LOCAL_MEM_FENCE)
#if SG_RELATIVE
#define SG_UP(v, d) sub_group_shuffle_up(v, d)
#define SG_DOWN(v, d) sub_group_shuffle_down(v, d)
#else /* cl_khr_subgroup_shuffle alone: by lane index (the caller keeps within the warp) */
#define SG_UP(v, d) sub_group_shuffle(v, warp_lane() >= (d) ? warp_lane() - (d) : warp_lane())
#define SG_DOWN(v, d) sub_group_shuffle(v, warp_lane() + (d) < WARP ? warp_lane() + (d) : warp_lane())
#endif
INLINE uint warp_shuffle_up_u32(uint v, uint d) { return SG_UP(v, d); }
INLINE uint warp_shuffle_down_u32(uint v, uint d) { return SG_DOWN(v, d); }
INLINE uint warp_shuffle_idx_u32(uint v, uint s) { return sub_group_shuffle(v, s); }
INLINE real_t warp_shuffle_xor(real_t v, uint m) { return sub_group_shuffle_xor(v, m); }
INLINE real_t warp_shuffle_up(real_t v, uint d) { return SG_UP(v, d); }
INLINE real_t warp_shuffle_idx(real_t v, uint s) { return sub_group_shuffle(v, s); }
INLINE uint warp_last_head(bool head) { return sub_group_scan_inclusive_max(head ? warp_lane() : 0u); }

/* ---- LOCAL: local memory and work-group barriers ---- */
#elif REDUCE == CMRS_REDUCE_LOCAL
#define WARP_HAS_SHUFFLE 0
INLINE uint warp_lane(void) { return get_local_id(0) % WARP; }
INLINE uint warp_index(void) { return get_local_id(0) / WARP; }
#define warp_sync() barrier(CLK_LOCAL_MEM_FENCE)
#if WARP == 1
/* One lane: nobody to talk to. */
#define WARP_SCRATCH
#define WARP_SCRATCH_PARAMS
#define WARP_SCRATCH_ARGS
#define warp_shuffle_xor(v, m) (v)
#define warp_shuffle_up(v, d) (v)
#define warp_shuffle_up_u32(v, d) (v)
#define warp_shuffle_down_u32(v, d) (v)
#define warp_shuffle_idx(v, s) (v)
#define warp_shuffle_idx_u32(v, s) (v)
#define warp_last_head(head) 0u
#else
/* Emulated: write, barrier, read the partner's, barrier. */
#define WARP_SCRATCH                                                                               \
    __local uint warp_scratch_u_[WG_SIZE];                                                         \
    __local real_t warp_scratch_r_[WG_SIZE];                                                       \
    __local uint *const wsu = warp_scratch_u_ + warp_index() * WARP;                               \
    __local real_t *const wsr = warp_scratch_r_ + warp_index() * WARP;
#define WARP_SCRATCH_PARAMS , __local uint *const wsu, __local real_t *const wsr
#define WARP_SCRATCH_ARGS , wsu, wsr
#define WARP_EMULATE(name, T)                                                                      \
    INLINE T name(__local T *s, T v, uint from)                                                    \
    {                                                                                              \
        s[warp_lane()] = v;                                                                        \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        const T r = s[from];                                                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
        return r;                                                                                  \
    }
WARP_EMULATE(warp_emulate_u32, uint)
WARP_EMULATE(warp_emulate_real, real_t)
#define warp_shuffle_xor(v, m) warp_emulate_real(wsr, v, warp_lane() ^ (m))
#define warp_shuffle_up(v, d) warp_emulate_real(wsr, v, warp_lane() >= (d) ? warp_lane() - (d) : 0u)
#define warp_shuffle_up_u32(v, d)                                                                  \
    warp_emulate_u32(wsu, v, warp_lane() >= (d) ? warp_lane() - (d) : 0u)
#define warp_shuffle_down_u32(v, d)                                                                \
    warp_emulate_u32(wsu, v, warp_lane() + (d) < WARP ? warp_lane() + (d) : 0u)
#define warp_shuffle_idx(v, s) warp_emulate_real(wsr, v, s)
#define warp_shuffle_idx_u32(v, s) warp_emulate_u32(wsu, v, s)
INLINE uint warp_emulate_last_head(__local uint *s, bool head)
{
    s[warp_lane()] = head;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint h = warp_lane();
    while (h > 0 && !s[h])
        --h;
    barrier(CLK_LOCAL_MEM_FENCE);
    return h;
}
#define warp_last_head(head) warp_emulate_last_head(wsu, head)
#endif

#else
#error "REDUCE must be 1 (local), 2 (NVIDIA shuffles) or 3 (sub-groups)"
#endif
