/* dots.cl - what the solvers add to a product, and the sums of a work-group that their own
 * kernels share (after spmv_common.cl and warp.cl in every program; empty of kernels).
 *
 * A Krylov solver needs dot products of the vectors its product reads and writes - CG p.Ap
 * and Ap.Ap, BiCGStab r0*.v - and reading y back in a kernel of its own would move the whole
 * vector again and pay one more launch. Built with -DDOTS=1, 2 or 4 (cmrs_abi.h), every
 * family's cmrs_spmv therefore ends with an epilogue: the terms x_i y_i and y_i^2 (DOTS 4: also
 * w_i y_i and w_i y_i^2, for a vector w such as r0* or the inverse diagonal; DOTS 1: w_i y_i
 * alone, BiCGStab's r0*.v, which reads neither x again nor sums what no one reads) of the rows
 * its work-group wrote, summed into one real4 per work-group in the solver's workspace; the
 * solver's next kernel adds the work-groups' real4s up (solve.cl). No atomics: each work-item
 * sums its rows in a fixed stride, the group in a fixed tree, so a solve gives the same bits
 * run after run (the last tile's combine counts with one, to choose which group adds a strip's
 * tiles; that group puts the strip's terms in a real4 of the strip's own). A kernel built so
 * also does nothing once the solve has stopped (a stop slot of the workspace set): the
 * iterations enqueued after convergence cost a launch.
 *
 * Which rows a work-group wrote (the same whatever the backend of the warp layer): the strips
 * of its strip role but the long ones, whose tiles' work-group (GROUP_COMBINE), cmrs_combine or
 * the group of a strip's last tile (LAST_COMBINE) writes them - and then adds their terms
 * itself (the last: in a real4 a tile after the work-groups', combine.cl). The lanes that wrote
 * a row are seldom the work-item that takes it here, so the rows are read back after a barrier
 * that makes the group's writes visible to the group; the slice family, whose work-item of a
 * row is the one that wrote it, passes the row's value instead.
 */
#ifndef DOTS
#define DOTS 0
#endif
#if DOTS != 0 && DOTS != 1 && DOTS != 2 && DOTS != 4
#error "DOTS is 0, 1, 2 or 4"
#endif

/* The solve's stop code from every stop slot of the workspace but `own` (cmrs_abi.h; pass
 * CMRS_WS_STOP_SLOTS to read them all): 0 while the solve runs. Without a branch between the
 * loads: all go out at once, one round trip (a loop that returned at the first set slot
 * waited for each load in turn, at the start of every warp of every kernel). */
INLINE int ws_stop_code(__global const real_t *ws, uint own)
{
    real_t code = 0;
#pragma unroll
    for (uint j = 0; j < CMRS_WS_STOP_SLOTS; ++j) {
        const real_t v = j != own ? ws[CMRS_WS_STOP + j] : (real_t)0; /* never its own */
        code = code == (real_t)0 ? v : code;
    }
    return (int)code;
}

#ifndef CG_FUSED
#define CG_FUSED 0
#endif
#if defined(SOLVE) || CG_FUSED
/* The solvers' own kernels (solve.cl, solve_gmres.cl) and the fused CG iteration
 * (cg_fused.cl). Work-group 0's first item writes what a kernel leaves in the workspace's
 * header. */
#define LEADER() (get_group_id(0) == 0 && get_local_id(0) == 0)
/* a kernel that stops nothing: has the solve stopped? */
#define STOPPED() (ws_stop_code(ws, CMRS_WS_STOP_SLOTS) != 0)
/* A kernel that can stop the solve, with its own stop slot: once another slot is set
 * (`seen`, its ws_stop_code), the code copied into its own (for the kernels that read only
 * that one's) and return. The kernels read the stop with their first loads and test it after
 * their first sums: one round trip for both. */
#define RETURN_IF_SEEN(seen, slot)                                                                 \
    do {                                                                                           \
        if (seen) {                                                                                \
            if (LEADER())                                                                          \
                ws[CMRS_WS_STOP + (slot)] = (real_t)(seen);                                        \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* This work-item's share of the sum of the n real4s at ws + at (of the n work-groups that
 * wrote them); group_sum4 of the shares is the sum. Every work-group of a kernel reads them
 * all: share_of2 reads only the first two of each, where those are the sums the kernel needs. */
INLINE real4_t share_of(__global const real_t *ws, uint at, uint n)
{
    real4_t acc = (real4_t)0;
    for (uint i = get_local_id(0); i < n; i += WG_SIZE)
        acc += vload4(i, ws + at);
    return acc;
}
INLINE real4_t share_of2(__global const real_t *ws, uint at, uint n)
{
    real2_t acc = (real2_t)0;
    for (uint i = get_local_id(0); i < n; i += WG_SIZE)
        acc += *(__global const real2_t *)(ws + at + 4 * i);
    return (real4_t)(acc, 0, 0);
}

/* Work-group 0 records in the kernel's stop slot why the solve stopped, the value that
 * stopped it and (a method's own code, 0: none) which quantity it was. */
INLINE void stop_solve(__global real_t *ws, uint slot, int code, real_t value, int cause)
{
    if (LEADER()) {
        ws[CMRS_WS_STOP + slot] = (real_t)code;
        ws[CMRS_WS_VALUE] = value;
        ws[CMRS_WS_CAUSE] = (real_t)cause;
    }
}

INLINE bool finite2(real_t a, real_t b) { return isfinite(a) && isfinite(b); }

/* This work-item's share of CG's four sums, (r.r, r.z, p.q, q.Dq), from what the kernels
 * before left: r.r and r.z at rr_at (s0, s1), p.q at pq_at (s0) beside q.q (s1) or, with Jacobi,
 * q.Dq (s3); group_sum4 of the shares is the sums (cg_step, the fused iteration). */
INLINE real4_t cg_share(__global const real_t *ws, uint rr_at, uint rr_n, uint pq_at, uint pq_n,
                        bool jacobi)
{
    const real4_t a = share_of2(ws, rr_at, rr_n);
    const real4_t c = jacobi ? share_of(ws, pq_at, pq_n) : share_of2(ws, pq_at, pq_n);
    return (real4_t)(a.s0, a.s1, c.s0, jacobi ? c.s3 : c.s1);
}

/* The pipelined CG's scalars from those sums (solve.cl, cg_step): alpha = r.z / p.q and
 * beta = alpha^2 q.Dq / r.z - 1. */
INLINE real2_t cg_alpha_beta(real4_t sum)
{
    const real_t alpha = sum.s1 / sum.s2;
    return (real2_t)(alpha, alpha * alpha * sum.s3 / sum.s1 - (real_t)1);
}

/* r.r of iteration `it` into the history, where the history has room for it */
#define HISTORY_PUT(ws, history_at, it, rr)                                                        \
    do {                                                                                           \
        if ((it) < (uint)(ws)[CMRS_WS_HISTORY_CAP])                                                \
            (ws)[(history_at) + (it)] = (rr);                                                      \
    } while (0)

/* CG's test before a step, from sum = (r.r, r.z, p.q, q.Dq): converged, NaN or Inf, or p.q
 * not positive (check_only: the test of r alone). Work-group 0 records r.r in the history
 * and the header and counts the step it lets go on. The stop code, 0 to go on. */
INLINE int cg_test(__global real_t *ws, real4_t sum, uint check_only, uint history_at,
                   uint stop_slot)
{
    const real_t rr = sum.s0, pq = sum.s2, qdq = sum.s3;
    int stop = 0;
    if (!isfinite(rr))
        stop = CMRS_STOP_NONFINITE;
    else if (rr <= ws[CMRS_WS_THRESHOLD])
        stop = CMRS_STOP_CONVERGED;
    else if (!check_only && !finite2(pq, qdq))
        stop = CMRS_STOP_NONFINITE;
    else if (!check_only && !(pq > 0))
        stop = CMRS_STOP_BREAKDOWN;
    if (LEADER()) {
        const uint it = (uint)ws[CMRS_WS_ITER];
        HISTORY_PUT(ws, history_at, it, rr);
        ws[CMRS_WS_RR] = rr;
        if (!stop && !check_only)
            ws[CMRS_WS_ITER] = (real_t)(it + 1);
    }
    if (stop)
        stop_solve(ws, stop_slot, stop, stop == CMRS_STOP_NONFINITE && !isfinite(rr) ? rr : pq, 0);
    return stop;
}
#endif

#ifndef GROUP_SHUFFLE
#define GROUP_SHUFFLE 0
#endif

/* The sum of v over the n work-items of the group (n a constant), in the same order every
 * time. Every work-item of the group calls it and gets the sum; s (n real4s of local
 * memory) is free again when it returns.
 * GROUP_SHUFFLE (NVIDIA, whose OpenCL has inline PTX; n a multiple of 32): each hardware warp
 * sums its 32 values by a butterfly of shfl.sync - every lane ends with the same bits, since
 * each step adds the same two numbers on both sides - and one barrier later every work-item
 * adds the warps' sums in warp order: a tree in local memory takes a barrier and a round
 * trip through local memory at each of its log2(n) levels, which cost a product with the
 * epilogue more than the epilogue's own loads (docs/dev/PERFORMANCE.md, GROUP_SHUFFLE). */
#ifndef DOTS_WARP_SUMS
#define DOTS_WARP_SUMS 0
#endif
#if DOTS_WARP_SUMS && !GROUP_SHUFFLE
#error "DOTS_WARP_SUMS needs GROUP_SHUFFLE"
#endif

#if GROUP_SHUFFLE
INLINE float shfl_bfly_f32(float v, uint m)
{
    float r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(m));
    return r;
}
#if VALUE_DOUBLE
INLINE double shfl_bfly(double v, uint m)
{
    const float2 h = as_float2(v);
    return as_double((float2)(shfl_bfly_f32(h.x, m), shfl_bfly_f32(h.y, m)));
}
#else
#define shfl_bfly shfl_bfly_f32
#endif
/* The sum over the hardware warp, in every lane (in a product's epilogue, of the sums it
 * makes alone: the others stay 0). */
INLINE real4_t warp_sum4(real4_t v)
{
    for (uint m = 16; m > 0; m >>= 1) {
#if DOTS != 1
        v.s0 += shfl_bfly(v.s0, m);
        v.s1 += shfl_bfly(v.s1, m);
#endif
#if DOTS != 2
        v.s2 += shfl_bfly(v.s2, m);
#endif
#if DOTS != 1 && DOTS != 2
        v.s3 += shfl_bfly(v.s3, m);
#endif
    }
    return v;
}
INLINE real4_t group_sum4(real4_t v, __local real4_t *s, const uint n)
{
    v = warp_sum4(v);
    const uint l = get_local_id(0);
    if (l % 32 == 0)
        s[l / 32] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    real4_t sum = s[0];
    for (uint w = 1; w < n / 32; ++w)
        sum += s[w];
    barrier(CLK_LOCAL_MEM_FENCE);
    return sum;
}
#else
INLINE real4_t group_sum4(real4_t v, __local real4_t *s, const uint n)
{
    const uint l = get_local_id(0);
    const uint top = 1u << (31 - clz(n)); /* the largest power of two <= n */
    s[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < n - top)
        s[l] += s[l + top];
    for (uint h = top / 2; h > 0; h >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < h)
            s[l] += s[l + h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const real4_t sum = s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return sum;
}
#endif

#if DOTS
/* The epilogue's arguments, after the kernel's own (enum cmrs_dots_arg); w is NULL with DOTS
 * 2. cmrs_combine takes three more after them (enum cmrs_combine_dots_arg). */
#define DOTS_PARAMS                                                                                \
    , __global real_t *restrict ws, const uint dots_at, __global const real_t *restrict dot_w
/* cmrs_combine's last arguments: the product's x, whose rows its terms read, and where the
 * first kernel's real4s lie, which it adds up (combine.cl, COMBINE_FOLDS) */
#define COMBINE_DOTS_PARAMS                                                                        \
    , __global const real_t *restrict x, const uint fold_at, const uint fold_n
#if DOTS_WARP_SUMS
#define DOTS_SCRATCH __local real4_t *const dots_scratch = 0;
#else
#define DOTS_SCRATCH __local real4_t dots_scratch[WG_SIZE];
#endif
#define DOTS_RETURN_IF_STOPPED()                                                                   \
    if (ws_stop_code(ws, CMRS_WS_STOP_SLOTS) != 0)                                                 \
    return
/* The stop read as the kernel begins and heeded as it ends (the slice family): the flag's
 * load then overlaps the product's instead of delaying every warp's first, at the price of
 * the product's loads in the iterations enqueued past convergence (docs/dev/PERFORMANCE.md, session
 * 25: the stop, a slot per kernel). */
#define DOTS_STOPPED() (ws_stop_code(ws, CMRS_WS_STOP_SLOTS) != 0)
/* The slice family's hooks (its work-item of a row is the one that wrote it: no read back):
 * the stop read as the kernel begins, each row's terms as the row is written, the sums stored
 * once the walk is done. The fused CG iteration has its own (cg_fused.cl).
 * With -DDOTS_LOCAL_SUMS=1 (a capped grid, whose warps walk many strips: the host asks for it,
 * host/exec/spmv_dots.c) each work-item keeps its sums in a slot of local memory instead of
 * registers, read and written once a row: sums held in registers across the walk take the
 * registers that the walk's loads in flight need, and a long walk that waits on memory then
 * slows (docs/dev/PERFORMANCE.md, SOLVE_LOCAL_SUMS_ROUNDS). The same additions in the same order:
 * the same bits either way. The slot is volatile so that the compiler keeps it there. */
#ifndef DOTS_LOCAL_SUMS
#define DOTS_LOCAL_SUMS 0
#endif
#if DOTS_LOCAL_SUMS && DOTS_WARP_SUMS
#error "DOTS_LOCAL_SUMS is for a work-group's sums (a capped grid), not DOTS_WARP_SUMS"
#endif
#if DOTS_LOCAL_SUMS
#define PRODUCT_BEGIN()                                                                            \
    const bool stopped = DOTS_STOPPED();                                                           \
    __local real4_t dots_sums[WG_SIZE];                                                            \
    volatile __local real4_t *const acc = dots_sums + get_local_id(0);                             \
    *acc = (real4_t)0
#define PRODUCT_ROW(row, sum)                                                                      \
    do {                                                                                           \
        const real4_t before = *acc;                                                               \
        *acc = dots_terms(before, x, dot_w, row, store_row(y, row, sum, alpha, beta));             \
    } while (0)
#define PRODUCT_SUMS() (*acc)
#else
#define PRODUCT_BEGIN()                                                                            \
    const bool stopped = DOTS_STOPPED();                                                           \
    real4_t acc = (real4_t)0
#define PRODUCT_ROW(row, sum)                                                                      \
    acc = dots_terms(acc, x, dot_w, row, store_row(y, row, sum, alpha, beta))
#define PRODUCT_SUMS() acc
#endif
#define PRODUCT_END()                                                                              \
    do {                                                                                           \
        if (!stopped) /* the same for the whole grid */                                            \
            dots_store(PRODUCT_SUMS(), ws, dots_at, dots_scratch, WG_SIZE, 0);                     \
    } while (0)

/* Row `row`'s terms: x.y, y.y, and with DOTS 4 w.y and y.(w y); with DOTS 1 w.y alone. */
INLINE real4_t dots_terms(real4_t acc, __global const real_t *x, __global const real_t *dot_w,
                          uint row, real_t yv)
{
#if DOTS != 1
    acc.s0 += x[row] * yv;
    acc.s1 += yv * yv;
#endif
#if DOTS != 2
    const real_t wy = dot_w[row] * yv;
    acc.s2 += wy;
#endif
#if DOTS == 4
    acc.s3 += wy * yv;
#endif
    return acc;
}

/* ---- the chain: a product whose last units add its partial sums up ----
 * Built with -DDOTS_CHAIN=C, the product's units (its work-groups, or its warps with
 * DOTS_WARP_SUMS) also add their real4s up, so that the solver's next kernel reads one real4
 * and no reduction kernel runs between them: a launch less a product, where a launch costs
 * more than the reduction's work (NVIDIA's OpenCL). Each unit, its real4 stored, counts
 * itself in its chunk of C units (an atomic counter); the unit that counts a chunk full adds
 * the chunk's real4s up, in index order, and counts the chunk in the second level's counter;
 * the unit that counts that full adds the chunk sums up, in index order. The order of every
 * addition is fixed by the indices, never by which unit came last: the same bits run after
 * run. The last units reset the counters, so each launch finds them 0.
 * The region after the units' real4s (n units, chunks = ceil(n / C); and, with the last tile's
 * combine, the tiles' real4s, which the last unit adds after the chunks'): the sum (4 reals),
 * the chunk sums (4 chunks), the counters (chunks + 1 uints, a real each).
 * It needs a unit's stores visible to another work-group's loads within one launch, which
 * OpenCL 1.2 does not promise: the host builds it only where it holds - NVIDIA (membar.gl,
 * PTX's device-wide fence, with loads that bypass the non-coherent L1) and CPUs, whose
 * caches are coherent - and takes solve_reduce elsewhere (host/solve/solver.c). */
#ifndef DOTS_CHAIN
#define DOTS_CHAIN 0
#endif
#if DOTS_CHAIN
#ifndef DOTS_CHAIN_ACQREL
#define DOTS_CHAIN_ACQREL 0 /* PTX's acq_rel atomic (sm_70 on), else membar.gl around it */
#endif
#if GROUP_SHUFFLE
#define CHAIN_FENCE() asm volatile("membar.gl;" ::: "memory")
INLINE uint shfl_first(uint v)
{
    uint r;
    asm volatile("shfl.sync.idx.b32 %0, %1, 0, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v));
    return r;
}
#else
#define CHAIN_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif
/* Counts a unit in a counter, after its stores and before its loads: the count before it. */
INLINE uint chain_arrive(__global real_t *counters, uint which)
{
#if GROUP_SHUFFLE && DOTS_CHAIN_ACQREL
    uint before;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                 : "=r"(before)
                 : "l"((ulong)(counters + which))
                 : "memory");
    return before;
#else
    CHAIN_FENCE();
    const uint before = atomic_inc((volatile __global uint *)(counters + which));
    CHAIN_FENCE();
    return before;
#endif
}
INLINE void chain_reset(__global real_t *counters, uint which)
{
    *(volatile __global uint *)(counters + which) = 0;
}
/* A share of the sum of the n real4s at v, `stride` real4s apart, item of items, read past any
 * cache another unit's stores may not have reached. */
INLINE real4_t chain_share(__global const real_t *v_, uint n, uint stride, uint item, uint items)
{
    volatile __global const real_t *v = v_;
    real4_t acc = (real4_t)0;
    for (uint i = item; i < n; i += items) {
        const uint k = 4 * i * stride;
        acc += (real4_t)(v[k], v[k + 1], v[k + 2], v[k + 3]);
    }
    return acc;
}
/* The group's work-item 0's v, in every work-item of the group (s: the group's scratch). */
INLINE uint chain_share_in_group(uint v, __local real4_t *s)
{
    if (get_local_id(0) == 0)
        s[0].s0 = (real_t)v; /* a count of units: exact in either precision */
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const uint r = (uint)s[0].s0;
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
#endif

/* The group's real4 at ws[at + 4 * group], whatever the product's units: cmrs_combine's, whose
 * work-groups the solver counts even where the product beside it sums by warps. */
INLINE void dots_store_group(real4_t acc, __global real_t *ws, uint at, __local real4_t *scratch,
                             const uint n)
{
    const real4_t sum = group_sum4(acc, scratch, n);
    if (get_local_id(0) == 0)
        vstore4(sum, get_group_id(0), ws + at);
}

/* The group's real4 into the workspace: the group's sum at ws[at + 4 * group], `extra` real4s
 * that others write after the units' (the last tile's combine: a tile's, cl/combine.cl). With
 * DOTS_WARP_SUMS (the slice and strip families on NVIDIA, where the host asks), each hardware
 * warp's sum at ws[at + 4 * warp] instead, warps numbered across the grid: the product then needs
 * no barrier at all - a barrier holds each work-group until its slowest warp is done - and the
 * solver's reduction (or the chain) adds the warps' sums up. */
INLINE void dots_store(real4_t acc, __global real_t *ws, uint at, __local real4_t *scratch,
                       const uint n, uint extra)
{
#if DOTS_WARP_SUMS
    (void)scratch, (void)n;
    const uint unit = get_global_id(0) / 32, units = get_global_size(0) / 32;
    const uint item = get_local_id(0) % 32, items = 32;
    const bool leader = item == 0;
    real4_t sum = warp_sum4(acc);
#define CHAIN_SUM(share) warp_sum4(share)
#define CHAIN_SHARE(v) shfl_first(v)
#else
    const uint unit = get_group_id(0), units = get_num_groups(0);
    const uint item = get_local_id(0), items = n;
    const bool leader = item == 0;
    real4_t sum = group_sum4(acc, scratch, n);
#define CHAIN_SUM(share) group_sum4(share, scratch, n)
#define CHAIN_SHARE(v) chain_share_in_group(v, scratch)
#endif
    if (leader)
        vstore4(sum, unit, ws + at);
#if DOTS_CHAIN
    const uint chunks = (units + DOTS_CHAIN - 1) / DOTS_CHAIN;
    __global real_t *total = ws + at + 4 * (units + extra), *sums = total + 4,
                    *counters = sums + 4 * chunks;
    /* unit u in chunk u % chunks: the units running at once count on different counters (in
     * chunks of consecutive units they waited on one another's atomics) */
    const uint chunk = unit % chunks, first = chunk, stride = chunks;
    const uint in_chunk = (units - chunk + chunks - 1) / chunks;
    uint before = leader ? chain_arrive(counters, chunk) : 0;
    if (CHAIN_SHARE(before) != in_chunk - 1)
        return; /* the same for the unit's every work-item */
    sum = CHAIN_SUM(chain_share(ws + at + 4 * first, in_chunk, stride, item, items));
    if (leader) {
        vstore4(sum, chunk, sums);
        chain_reset(counters, chunk);
        before = chain_arrive(counters, chunks);
    }
    if (CHAIN_SHARE(before) != chunks - 1)
        return;
    sum = CHAIN_SUM(chain_share(sums, chunks, 1, item, items));
    if (extra) /* written before their writers' units arrived */
        sum += CHAIN_SUM(chain_share(ws + at + 4 * units, extra, 1, item, items));
    if (leader) {
        vstore4(sum, 0, total);
        chain_reset(counters, chunks);
    }
#endif
#undef CHAIN_SUM
#undef CHAIN_SHARE
}

/* The epilogue of the families that share out strips and tiles with find_work (strip,
 * segment, MODULO): after the barrier, the rows of the group's round read back - strip s's row
 * r at item s * HEIGHT + r of the group's items, in the order combine_in_group walks its tiles -
 * and their terms added to acc; the group's sum stored once its rounds are done
 * (DOTS_GROUP_END). The barrier also keeps a round's local memory from the next's. */
INLINE real4_t dots_of_group(real4_t acc, const work *w, uint first_tile_group, uint strips,
                             uint tiles, uint rows, __global const index_t *strip_ptr,
                             __global const uint *tile_strip, __global const real_t *x,
                             __global const real_t *y, __global const real_t *dot_w)
{
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    const uint group = w->group;
    const uint tile_groups = (tiles + WARPS_PER_GROUP - 1) / WARPS_PER_GROUP;
    const uint role_group = w->tile                    ? group - first_tile_group
                            : group < first_tile_group ? group
                                                       : group - tile_groups;
    const uint first = role_group * WARPS_PER_GROUP;
    const uint end = min(first + WARPS_PER_GROUP, w->tile ? tiles : strips);
    for (uint i = get_local_id(0); i < WARPS_PER_GROUP * HEIGHT; i += WG_SIZE) {
        const uint s = first + i / HEIGHT, r = i % HEIGHT;
        uint strip = CMRS_NO_STRIP;
        if (s < end && !w->tile && (strip_ptr[s] & LONG_STRIP) == 0)
            strip = s;
#if GROUP_COMBINE
        if (s < end && w->tile && !(s > first && tile_strip[s - 1] == tile_strip[s]))
            strip = tile_strip[s]; /* CMRS_NO_STRIP for a slot that pads the group */
#endif
        if (strip != CMRS_NO_STRIP && strip * HEIGHT + r < rows)
            acc = dots_terms(acc, x, dot_w, strip * HEIGHT + r, y[strip * HEIGHT + r]);
    }
    return acc;
}
#define DOTS_GROUP_BEGIN() real4_t dots_acc_ = (real4_t)0
/* With DOTS_WARP_SUMS (the strip family on a full grid, a lane a row, NVIDIA's shuffles; tiles
 * combined by cmrs_combine: host/exec/spmv_dots.c) the lane that wrote a row adds its terms
 * (DOTS_LANE_ROW: r, the row in its strip, HEIGHT where the lane wrote none) and the warps store
 * the sums: no barrier holds a work-group until its longest strip is done. Else the group reads
 * its rows back after one (DOTS_OF_GROUP). */
#if DOTS_WARP_SUMS
#define DOTS_OF_GROUP(w) (void)(w)
#define DOTS_LANE_ROW(r, row, value)                                                               \
    do {                                                                                           \
        if ((r) < HEIGHT)                                                                          \
            dots_acc_ = dots_terms(dots_acc_, x, dot_w, row, value);                               \
    } while (0)
#else
#define DOTS_OF_GROUP(w)                                                                           \
    dots_acc_ = dots_of_group(dots_acc_, w, first_tile_group, strips, tiles, rows, strip_ptr,      \
                              tile_strip, x, y, dot_w)
#define DOTS_LANE_ROW(r, row, value) ((void)(r), (void)(value))
#endif
#define DOTS_GROUP_END()                                                                           \
    dots_store(dots_acc_, ws, dots_at, dots_scratch, WG_SIZE, LAST_COMBINE ? tiles : 0)
#elif !CG_FUSED
#define DOTS_PARAMS
#define COMBINE_DOTS_PARAMS
#define DOTS_SCRATCH
#define DOTS_RETURN_IF_STOPPED()
#define DOTS_STOPPED() false
#define DOTS_GROUP_BEGIN()
#define DOTS_OF_GROUP(w)
#define DOTS_LANE_ROW(r, row, value) ((void)(r), (void)(value))
#define DOTS_GROUP_END()
#define PRODUCT_BEGIN() const bool stopped = false
#define PRODUCT_ROW(row, sum) store_row(y, row, sum, alpha, beta)
#define PRODUCT_END() (void)stopped
#endif

/* The groups a work-group of the families that share out strips with find_work takes: its
 * own, one round; in a solver's product (DOTS), whose grid the host may cap at the groups the
 * device keeps resident (host/exec/spmv_dots.c, SOLVE_PRODUCT_RESIDENT) so that its partial
 * sums stay few enough for the next kernel to add up, group after group, the grid's apart.
 * Never where strips are split into tiles - their roles go by the group's number, and that
 * grid is not capped: one round a group there. */
#if DOTS
#define FOR_GROUPS(g)                                                                              \
    for (uint g = get_group_id(0),                                                                 \
              g##_count = tiles ? get_num_groups(0) : (strips + WARPS_PER_GROUP - 1) / WARPS_PER_GROUP; \
         g < g##_count; g += get_num_groups(0))
#else
#define FOR_GROUPS(g) for (uint g = get_group_id(0), g##_once = 1; g##_once; g##_once = 0)
#endif
