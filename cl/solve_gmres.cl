/* solve_gmres.cl - restarted GMRES(m) on the device (host/solve/solve_gmres.c), after the
 * prelude of every program; built as cl/solve.cl is (-DSOLVE=1 ...).
 *
 * A cycle starts from r = b - A x (the host's product): gmres_begin tests ||r|| and makes
 * v0 = r / ||r||. Arnoldi step j is four launches: w = A v_j (the matrix's product),
 * gmres_dots (v_i.w, i <= j, one work-group a chunk of rows of one v_i), gmres_orth (the
 * dots added up into H's column j, w -= sum h_ij v_i: classical Gram-Schmidt, PETSc's
 * default, one pass) and gmres_norm (||w||, v_{j+1} = w / ||w||, and the Givens rotations
 * that keep H's QR factors, whose last right-hand side entry is the residual's norm: the
 * convergence test of every step). At the cycle's end, or once converged, gmres_solve (one
 * work-group: R y = g) and gmres_update (x += V y) apply the cycle - run whatever the stop,
 * so that a solve that converged mid-cycle still gets its x, and once only (the columns are
 * counted down).
 *
 * The method's region of the workspace, in reals from `at` (m = the restart length):
 *   [0] columns of the cycle not yet applied to x, [1] columns gmres_update applies,
 *   then H (m + 1 rows, m columns, by column: gmres_orth's), R (m x m, by column: H's columns
 *   rotated, gmres_norm's), cs[m], sn[m], g[m + 1] (the right-hand side before each
 *   rotation), gr[m] (after it: R's), y[m], and the dots' partial sums (m + 1 vectors x
 *   chunks). Each kernel writes slots no other work-group of it reads. */
#ifndef SOLVE
#error "solve_gmres.cl is built with -DSOLVE=1"
#endif

/* LEADER, STOPPED and RETURN_IF_SEEN: dots.cl */
/* stopped by an error: the cycle is not applied (x stays the last iterate) */
#define FAILED() (STOPPED() && ws_stop_code(ws, CMRS_WS_STOP_SLOTS) != CMRS_STOP_CONVERGED)
/* The rows a work-item takes. On a GPU (GMRES_BLOCKS 0) the grid's stride apart, so that a
 * warp's loads are adjacent; on a CPU (GMRES_BLOCKS 1) one block of consecutive rows, so that
 * the compiler's vector loop runs along the rows - where the CPU compilers run a work-group as
 * a loop over its work-items, the loop innermost in the kernel is the one they vectorise
 * (host/solve/solve.h, GMRES_BLOCKS). */
#if GMRES_BLOCKS
#define ROW_BLOCK(n, begin, end)                                                                   \
    const uint per_item_ = ((n) + get_global_size(0) - 1) / get_global_size(0);                   \
    const uint begin = min((uint)(n), (uint)get_global_id(0) * per_item_);                         \
    const uint end = min((uint)(n), begin + per_item_)
#define FOR_ROWS(i)                                                                                \
    ROW_BLOCK(n, i##_begin, i##_end);                                                              \
    for (uint i = i##_begin; i < i##_end; ++i)
#else
#define FOR_ROWS(i) for (uint i = get_global_id(0); i < n; i += get_global_size(0))
#endif

#define G_COLS 0
#define G_USE 1
#define G_H 4
#define G_R(m) (G_H + ((m) + 1) * (m))
#define G_CS(m) (G_R(m) + (m) * (m))
#define G_SN(m) (G_CS(m) + (m))
#define G_G(m) (G_SN(m) + (m))
#define G_GR(m) (G_G(m) + (m) + 1)
#define G_Y(m) (G_GR(m) + (m))
#define G_DOTS(m) (G_Y(m) + (m))

/* ||r||^2 from the partial sums at rr_at (rr_n work-groups'): the test of the cycle's start;
 * v0 = r / ||r||, g = (||r||, 0, ...). */
__kernel void gmres_begin(const uint n, __global const real_t *restrict r,
                          __global real_t *restrict basis, __global real_t *restrict ws,
                          const uint rr_at, const uint rr_n, const uint at, const uint m,
                          const uint history_at, const uint stop_slot)
{
    __local real4_t s[WG_SIZE];
    const int seen = ws_stop_code(ws, stop_slot);
    real4_t acc = (real4_t)0;
    for (uint i = get_local_id(0); i < rr_n; i += WG_SIZE)
        acc += vload4(i, ws + rr_at);
    const real_t rr = group_sum4(acc, s, WG_SIZE).s0;
    RETURN_IF_SEEN(seen, stop_slot);
    const bool done = !(rr > ws[CMRS_WS_THRESHOLD]); /* converged, or NaN */
    if (LEADER()) {
        HISTORY_PUT(ws, history_at, (uint)ws[CMRS_WS_ITER], rr);
        ws[CMRS_WS_RR] = rr;
        ws[at + G_G(m)] = sqrt(rr);
        ws[at + G_COLS] = 0;
        if (done) {
            ws[CMRS_WS_STOP + stop_slot] = isfinite(rr) ? CMRS_STOP_CONVERGED : CMRS_STOP_NONFINITE;
            ws[CMRS_WS_VALUE] = rr;
        }
    }
    if (done)
        return;
    const real_t scale = (real_t)1 / sqrt(rr);
    FOR_ROWS(i)
    basis[i] = r[i] * scale;
}

#ifndef GMRES_DOTS_PER
#define GMRES_DOTS_PER 1
#endif
#if GMRES_DOTS_PER < 1 || GMRES_DOTS_PER > 4
#error "GMRES_DOTS_PER is 1 to 4: the dots of a work-group fill one real4"
#endif

/* v_i.w for i = 0..j, GMRES_DOTS_PER vectors a work-group (host/solve/solve.h): group g takes
 * v_{pb} .. v_{pb+p-1} (those up to j), b = g / chunks, over the rows of chunk g % chunks - each
 * load of w serves p dots, so w is read (j + 1) / p times instead of j + 1. */
__kernel void gmres_dots(const uint n, __global const real_t *restrict basis, const uint stride,
                         __global const real_t *restrict w, __global real_t *restrict ws,
                         const uint at, const uint m, const uint chunks, const uint j)
{
    __local real4_t s[WG_SIZE];
    if (STOPPED())
        return;
#if GMRES_DOTS_PER == 1 /* a GPU's: the loop as lean as it can be */
    (void)j;
    const uint v = get_group_id(0) / chunks, c = get_group_id(0) % chunks;
    __global const real_t *vi = basis + (size_t)v * stride;
    real4_t acc = (real4_t)0;
    for (uint i = c * WG_SIZE + get_local_id(0); i < n; i += chunks * WG_SIZE)
        acc.s0 += vi[i] * w[i];
    const real4_t sum = group_sum4(acc, s, WG_SIZE);
    if (get_local_id(0) == 0)
        ws[at + G_DOTS(m) + v * chunks + c] = sum.s0;
#else
    const uint v = get_group_id(0) / chunks * GMRES_DOTS_PER, c = get_group_id(0) % chunks;
    const uint count = j + 1 - v < GMRES_DOTS_PER ? j + 1 - v : GMRES_DOTS_PER;
    __global const real_t *v0 = basis + (size_t)v * stride;
    real_t acc[4] = {0, 0, 0, 0};
#if GMRES_BLOCKS /* chunk c's block of rows, a block of it a work-item, a vector at a time */
    const uint per_chunk = (n + chunks - 1) / chunks;
    const uint chunk_begin = min(n, c * per_chunk), chunk_end = min(n, chunk_begin + per_chunk);
    const uint per_item = (chunk_end - chunk_begin + WG_SIZE - 1) / WG_SIZE;
    const uint begin = min(chunk_end, chunk_begin + (uint)get_local_id(0) * per_item);
    const uint end = min(chunk_end, begin + per_item);
    for (uint k = 0; k < count; ++k) {
        __global const real_t *vk = v0 + k * (size_t)stride;
        real_t a = 0;
        for (uint i = begin; i < end; ++i)
            a += vk[i] * w[i];
        acc[k] = a;
    }
#else
    for (uint i = c * WG_SIZE + get_local_id(0); i < n; i += chunks * WG_SIZE) {
        const real_t wi = w[i];
#pragma unroll
        for (uint k = 0; k < GMRES_DOTS_PER; ++k)
            if (k < count)
                acc[k] += v0[k * (size_t)stride + i] * wi;
    }
#endif
    const real4_t sum = group_sum4((real4_t)(acc[0], acc[1], acc[2], acc[3]), s, WG_SIZE);
    if (get_local_id(0) == 0) {
        const real_t dots[4] = {sum.s0, sum.s1, sum.s2, sum.s3};
        for (uint k = 0; k < count; ++k)
            ws[at + G_DOTS(m) + (v + k) * chunks + c] = dots[k];
    }
#endif
}

/* H's column j from the dots (each work-group adds them up alike), w -= sum_i h_ij v_i, and
 * the partial sums of w.w at out_at. */
__kernel void gmres_orth(const uint n, __global const real_t *restrict basis, const uint stride,
                         __global real_t *restrict w, __global real_t *restrict ws, const uint at,
                         const uint m, const uint chunks, const uint j, const uint out_at)
{
    __local real4_t s[WG_SIZE];
    __local real_t h[CMRS_GMRES_MAX + 1];
    if (STOPPED())
        return;
    for (uint i = get_local_id(0); i <= j; i += WG_SIZE) {
        real_t sum = 0;
        for (uint c = 0; c < chunks; ++c)
            sum += ws[at + G_DOTS(m) + i * chunks + c];
        h[i] = sum;
        if (get_group_id(0) == 0)
            ws[at + G_H + j * (m + 1) + i] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    real4_t acc = (real4_t)0;
#if GMRES_BLOCKS /* a vector at a time along the block: each row's terms in the same order */
    ROW_BLOCK(n, begin, end);
    for (uint k = 0; k <= j; ++k) {
        const real_t hk = h[k];
        __global const real_t *vk = basis + (size_t)k * stride;
        for (uint i = begin; i < end; ++i)
            w[i] -= hk * vk[i];
    }
    for (uint i = begin; i < end; ++i)
        acc.s0 += w[i] * w[i];
#else
    FOR_ROWS(i)
    {
        real_t wv = w[i];
        for (uint k = 0; k <= j; ++k)
            wv -= h[k] * basis[(size_t)k * stride + i];
        w[i] = wv;
        acc.s0 += wv * wv;
    }
#endif
    const real4_t sum = group_sum4(acc, s, WG_SIZE);
    if (get_local_id(0) == 0)
        vstore4(sum, get_group_id(0), ws + out_at);
}

/* h_{j+1,j} = ||w|| from the partial sums at w_at; the rotations so far applied to column j,
 * rotation j made and applied to g; |g_{j+1}| is the residual's norm: the test. Then
 * v_{j+1} = w / ||w||. */
__kernel void gmres_norm(const uint n, __global const real_t *restrict w,
                         __global real_t *restrict basis, const uint stride,
                         __global real_t *restrict ws, const uint at, const uint m, const uint j,
                         const uint w_at, const uint w_n, const uint history_at,
                         const uint stop_slot)
{
    __local real4_t s[WG_SIZE];
    __local real_t verdict[2];
    const int seen = ws_stop_code(ws, stop_slot);
    real4_t acc = (real4_t)0;
    for (uint i = get_local_id(0); i < w_n; i += WG_SIZE)
        acc += vload4(i, ws + w_at);
    const real_t hn = sqrt(group_sum4(acc, s, WG_SIZE).s0);
    RETURN_IF_SEEN(seen, stop_slot);
    if (get_local_id(0) == 0) {
        /* H's column j through the rotations 0..j-1 into R's */
        __global const real_t *col = ws + at + G_H + j * (m + 1);
        real_t c_i = col[0];
        for (uint i = 0; i < j; ++i) {
            const real_t cs = ws[at + G_CS(m) + i], sn = ws[at + G_SN(m) + i], c_next = col[i + 1];
            if (get_group_id(0) == 0)
                ws[at + G_R(m) + j * m + i] = cs * c_i + sn * c_next;
            c_i = -sn * c_i + cs * c_next;
        }
        const real_t d = hypot(c_i, hn), g = ws[at + G_G(m) + j];
        const real_t cs = d > 0 ? c_i / d : (real_t)1, sn = d > 0 ? hn / d : (real_t)0;
        const real_t next = -sn * g, rr = next * next;
        /* d = 0: R singular, the cycle's y has no solution (before the test: g's next entry is
         * 0 then too); hn = 0 with d > 0: the solution is in the Krylov space, converged */
        /* hn NaN makes d NaN and the rotation the identity (rr 0): NaN before convergence */
        const int stop = !isfinite(rr) || !isfinite(hn) ? CMRS_STOP_NONFINITE
                         : d == 0                       ? CMRS_STOP_BREAKDOWN
                         : rr <= ws[CMRS_WS_THRESHOLD]  ? CMRS_STOP_CONVERGED
                         : hn == 0                      ? CMRS_STOP_BREAKDOWN
                                                        : 0;
        if (get_group_id(0) == 0) {
            const uint it = (uint)ws[CMRS_WS_ITER] + 1;
            ws[at + G_R(m) + j * m + j] = d;
            ws[at + G_CS(m) + j] = cs;
            ws[at + G_SN(m) + j] = sn;
            ws[at + G_GR(m) + j] = cs * g;
            ws[at + G_G(m) + j + 1] = next;
            ws[at + G_COLS] = j + 1;
            ws[CMRS_WS_ITER] = it;
            ws[CMRS_WS_RR] = rr;
            HISTORY_PUT(ws, history_at, it, rr);
            if (stop) {
                ws[CMRS_WS_STOP + stop_slot] = stop;
                ws[CMRS_WS_VALUE] = stop == CMRS_STOP_BREAKDOWN ? d : isfinite(hn) ? rr : hn;
            }
        }
        verdict[0] = stop;
        verdict[1] = hn;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (verdict[0] != 0)
        return;
    const real_t scale = (real_t)1 / verdict[1];
    __global real_t *next_v = basis + (size_t)(j + 1) * stride;
    /* the grid's stride on CPUs too: PoCL 3.1 built this kernel with the block form into one
     * that faulted on every run (the cause not found; a single pass, its cost small) */
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        next_v[i] = w[i] * scale;
}

/* One work-group: R y = gr over the cycle's columns not yet applied (none: nothing), and
 * those columns handed to gmres_update. Not after an error: x stays the last iterate. */
__kernel void gmres_solve(__global real_t *restrict ws, const uint at, const uint m)
{
    if (FAILED() || get_local_id(0) != 0)
        return;
    const uint cols = (uint)ws[at + G_COLS];
    ws[at + G_USE] = cols;
    ws[at + G_COLS] = 0;
    for (uint k = cols; k-- > 0;) {
        real_t v = ws[at + G_GR(m) + k];
        for (uint i = k + 1; i < cols; ++i)
            v -= ws[at + G_R(m) + i * m + k] * ws[at + G_Y(m) + i];
        ws[at + G_Y(m) + k] = v / ws[at + G_R(m) + k * m + k];
    }
}

/* x += sum_k y_k v_k over the columns gmres_solve handed over. */
__kernel void gmres_update(const uint n, __global real_t *restrict x,
                           __global const real_t *restrict basis, const uint stride,
                           __global const real_t *restrict ws, const uint at, const uint m)
{
    if (FAILED())
        return;
    const uint cols = (uint)ws[at + G_USE];
#if GMRES_BLOCKS /* a vector at a time along the block, as gmres_orth */
    ROW_BLOCK(n, begin, end);
    for (uint k = 0; k < cols; ++k) {
        const real_t yk = ws[at + G_Y(m) + k];
        __global const real_t *vk = basis + (size_t)k * stride;
        for (uint i = begin; i < end; ++i)
            x[i] += yk * vk[i];
    }
#else
    FOR_ROWS(i)
    {
        real_t xv = x[i];
        for (uint k = 0; k < cols; ++k)
            xv += ws[at + G_Y(m) + k] * basis[(size_t)k * stride + i];
        x[i] = xv;
    }
#endif
}

/* x += z: with a preconditioner on the right, z = M (V y) (host/solve/solve_gmres.c). Not after
 * an error: x stays the last iterate. */
__kernel void gmres_add(const uint n, __global real_t *restrict x, __global const real_t *restrict z,
                        __global const real_t *restrict ws)
{
    if (FAILED())
        return;
    FOR_ROWS(i)
    x[i] += z[i];
}
