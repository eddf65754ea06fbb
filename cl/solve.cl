/* solve.cl - the solvers' vector work (host/solve/), after the prelude of every program (the
 * workspace's layout is in cmrs_abi.h; group_sum4 in dots.cl). Built per precision and
 * work-group size with -DSOLVE=1 -DHEIGHT=1 -DWARP=1 -DWG_SIZE=... -DVALUE_DOUBLE=...
 *
 * Each iteration of a method is its product (a family's kernel built with the epilogue of
 * dot products, dots.cl) and one or two kernels of this file that fuse everything else: they
 * add up the partial sums the kernels before them left in the workspace - every work-group
 * the same sums in the same order, so they all agree, bit for bit - compute the method's
 * scalars from them, test for convergence and breakdown, update the vectors and leave the
 * partial sums the next kernel needs. Nothing comes back to the host between the checks
 * the host reads (a few reals of the workspace's header); once a kernel has stopped the
 * solve (in its stop slot, cmrs_abi.h), every kernel after it returns at once.
 *
 * A launch is a fixed grid of work-groups (host/solve/ chooses it from the device alone),
 * each work-item striding over the vectors, so each partial sum holds the same rows in the
 * same order every run: a solve gives the same bits run after run. Work-group 0 alone
 * writes the header slots a kernel sets, and never a slot that kernel reads (cmrs_abi.h). */
#ifndef SOLVE
#error "solve.cl is built with -DSOLVE=1"
#endif

/* LEADER, STOPPED, RETURN_IF_SEEN, share_of, stop_solve and cg_test: dots.cl */
/* i over the n rows, strided by the grid */
#define FOR_ROWS(i) for (uint i = get_global_id(0); i < n; i += get_global_size(0))

/* Rows 2k and 2k + 1 of a vector, as one 2-vector load or store: the vector kernels walk their
 * rows in pairs (and the last row of an odd count alone), half the memory instructions. The
 * cast, not vload2, tells the compiler the pair's alignment.
 * They walk them from the last down, while the products walk theirs up: the rows a kernel
 * touched last are those the next one reads first, in the last-level cache still, where
 * vectors outgrow it (docs/dev/PERFORMANCE.md, "walking down"). */
#define PAIR(v, k) (*(__global real2_t *)((v) + 2 * (size_t)(k)))
/* A work-item's first pair (J0, K0) is loaded while the kernel adds up the sums it starts
 * with, before the tree's barrier - a short vector's one pair an item then costs no round trip
 * of its own after the scalars - and FOR_LATER_PAIRS walks the rest. */
#define J0 ((uint)get_global_id(0))
#define K0 (n / 2 - 1 - J0)
#define HAS_FIRST_PAIR (J0 < n / 2)
#define FOR_LATER_PAIRS(k)                                                                         \
    for (uint j_ = J0 + get_global_size(0), k = n / 2 - 1 - j_; j_ < n / 2;                        \
         j_ += get_global_size(0), k = n / 2 - 1 - j_)
/* the work-item that takes the odd row out (the last row: where the walk begins) */
#define ODD_ROW() (n % 2 && get_global_id(0) == 0)

/* The work-group's real4 of partial sums at ws + at. */
INLINE void store_share(real4_t acc, __global real_t *ws, uint at, __local real4_t *s)
{
    const real4_t sum = group_sum4(acc, s, WG_SIZE);
    if (get_local_id(0) == 0)
        vstore4(sum, get_group_id(0), ws + at);
}

/* r holds b - A x0 (the host's product before). p = D r with the Jacobi preconditioner's
 * inverse diagonal D (NULL: none), rs = r, each where not NULL; partial sums of r.r and r.Dr at
 * rr_at, of b.b and the entries of b and x0 that are NaN or Inf at start_at. */
__kernel void solve_start(const uint n, __global const real_t *restrict b,
                          __global const real_t *restrict x, __global const real_t *restrict r,
                          __global real_t *restrict p, __global real_t *restrict rs,
                          __global const real_t *restrict dinv, __global real_t *restrict ws,
                          const uint rr_at, const uint start_at)
{
    __local real4_t s[WG_SIZE];
    real4_t acc = (real4_t)0, input = (real4_t)0;
    FOR_ROWS(i)
    {
        const real_t rv = r[i], zv = dinv ? dinv[i] * rv : rv, bv = b[i];
        if (p)
            p[i] = zv;
        if (rs)
            rs[i] = rv;
        acc.s0 += rv * rv;
        acc.s1 += rv * zv;
        input.s0 += bv * bv;
        input.s1 += isfinite(bv) ? (real_t)0 : (real_t)1;
        input.s2 += isfinite(x[i]) ? (real_t)0 : (real_t)1;
    }
    store_share(acc, ws, rr_at, s);
    store_share(input, ws, start_at, s);
}

/* One work-group, after solve_start: ||b||^2, the threshold (max(rtol ||b||, atol))^2, the
 * inputs' NaN and Inf, and rho = r0.r0 (BiCGStab's, with r0* = r0); the iterations counted
 * from `done` (a restart from the true residual goes on counting, its history after the
 * earlier passes'). b = 0: x = 0 is the answer, as scipy's solvers take it (the host zeroes
 * x). */
__kernel void solve_init(__global real_t *restrict ws, const uint groups, const uint rr_at,
                         const uint start_at, const real_t rtol, const real_t atol, const uint done,
                         const uint history_cap)
{
    __local real4_t s[WG_SIZE];
    const real4_t input = group_sum4(share_of(ws, start_at, groups), s, WG_SIZE);
    const real4_t rr = group_sum4(share_of(ws, rr_at, groups), s, WG_SIZE);
    if (!LEADER())
        return;
    const real_t bb = input.s0, scaled = rtol * rtol * bb;
    ws[CMRS_WS_BB] = bb;
    ws[CMRS_WS_THRESHOLD] = scaled > atol * atol ? scaled : atol * atol;
    ws[CMRS_WS_BAD_B] = input.s1;
    ws[CMRS_WS_BAD_X] = input.s2;
    ws[CMRS_WS_RR] = rr.s0;
    ws[CMRS_WS_RHO] = rr.s0;
    ws[CMRS_WS_ITER] = (real_t)done;
    ws[CMRS_WS_HISTORY_CAP] = (real_t)history_cap;
    ws[CMRS_WS_ZERO_B] = bb == (real_t)0;
    for (uint j = 1; j < CMRS_WS_STOP_SLOTS; ++j) /* a solve before's */
        ws[CMRS_WS_STOP + j] = 0;
    ws[CMRS_WS_STOP] = input.s1 != 0 || input.s2 != 0 ? CMRS_STOP_BAD_INPUT
                       : bb == (real_t)0              ? CMRS_STOP_CONVERGED
                                                      : 0;
}

/* The real4s of the n work-groups at in_at summed in this launch's work-groups, each one's
 * real4 at out_at: for products of many work-groups, whose real4s would be too many for every
 * work-group of the next kernel to add up. */
__kernel void solve_reduce(__global real_t *restrict ws, const uint n, const uint in_at,
                           const uint out_at)
{
    __local real4_t s[WG_SIZE];
    if (STOPPED())
        return;
    real4_t acc = (real4_t)0;
    FOR_ROWS(i)
    acc += vload4(i, ws + in_at);
    store_share(acc, ws, out_at, s);
}

/* Partial sums of v.v at `at` and, where w is given, of (w - 3 v).(w - 3 v) beside them: the
 * true residual's norm, v = b - A x, and how far w = 3 b - A (3 x), the same residual from x
 * rounded anew (solve_triple), strays from 3 v - the rounding of v (host/solve/solve_run.c).
 * The host adds the sums in double. */
__kernel void solve_norm(const uint n, __global const real_t *restrict v,
                         __global const real_t *restrict w, __global real_t *restrict ws,
                         const uint at)
{
    __local real4_t s[WG_SIZE];
    real4_t acc = (real4_t)0;
    FOR_ROWS(i)
    {
        acc.s0 += v[i] * v[i];
        if (w) {
            const real_t d = w[i] - 3 * v[i];
            acc.s1 += d * d;
        }
    }
    store_share(acc, ws, at, s);
}

/* out = 3 v, each rounded: x for the second residual of solve_norm. */
__kernel void solve_triple(const uint n, __global const real_t *restrict v,
                           __global real_t *restrict out)
{
    FOR_ROWS(i)
    out[i] = 3 * v[i];
}

/* d = 1 / d in place (the Jacobi preconditioner), with partial counts of the rows whose
 * diagonal is 0, NaN or Inf at `at` (d keeps those rows' 1 / d: the host refuses them). */
__kernel void solve_invert(const uint n, __global real_t *restrict d, __global real_t *restrict ws,
                           const uint at)
{
    __local real4_t s[WG_SIZE];
    real4_t acc = (real4_t)0;
    FOR_ROWS(i)
    {
        const real_t v = d[i];
        acc.s0 += v != (real_t)0 && isfinite(v) ? (real_t)0 : (real_t)1;
        d[i] = (real_t)1 / v;
    }
    store_share(acc, ws, at, s);
}

/* ---- conjugate gradients ----
 * Rupp et al.'s pipelined CG (ACM TOMS 2016): the product q = A p leaves p.q and q.q (with
 * Jacobi q.Dq), this kernel leaves r.r (and r.Dr), and from these alone come both scalars:
 *   alpha = r.z / p.q,  beta = alpha^2 q.Dq / r.z - 1   (z = D r; D = I without Jacobi)
 * - the second from r'.z' = r.z - 2 alpha q.z + alpha^2 q.Dq, where q.z = p.q because p is
 * A-conjugate to the direction before it - so the three vector updates and the next r.r are
 * one pass. An iteration: [the reduction of a large product's real4s], this, the product. */
/* cg_step's updates of rows 2k and 2k + 1 from their x, p, r and q; acc gains r.r and r.z.
 * (No restrict here: inlined, Oclgrind 21.10 cannot run the scope declarations it leaves.) */
INLINE real4_t cg_pair(__global real_t *x, __global real_t *r, __global real_t *p,
                       __global const real_t *dinv, uint k, real2_t xv, real2_t pv, real2_t rv,
                       real2_t qv, real_t alpha, real_t beta, real4_t acc)
{
    rv -= alpha * qv;
    const real2_t zv = dinv ? PAIR(dinv, k) * rv : rv;
    PAIR(x, k) = xv + alpha * pv;
    PAIR(r, k) = rv;
    PAIR(p, k) = zv + beta * pv;
    acc.s0 += rv.x * rv.x + rv.y * rv.y;
    acc.s1 += rv.x * zv.x + rv.y * zv.y;
    return acc;
}

__kernel void cg_step(const uint n, __global real_t *restrict x, __global real_t *restrict r,
                      __global real_t *restrict p, __global const real_t *restrict q,
                      __global const real_t *restrict dinv, __global real_t *restrict ws,
                      const uint rr_at, const uint rr_n, const uint pq_at, const uint pq_n,
                      const uint out_at, const uint history_at, const uint check_only,
                      const uint stop_slot)
{
    __local real4_t s[WG_SIZE];
    const int seen = ws_stop_code(ws, stop_slot);
    const real4_t share = cg_share(ws, rr_at, rr_n, pq_at, pq_n, dinv != 0);
    real2_t x0 = 0, p0 = 0, r0 = 0, q0 = 0;
    if (HAS_FIRST_PAIR)
        x0 = PAIR(x, K0), p0 = PAIR(p, K0), r0 = PAIR(r, K0), q0 = PAIR(q, K0);
    /* r.r, r.z, p.q, q.Dq: one tree */
    const real4_t sum = group_sum4(share, s, WG_SIZE);
    RETURN_IF_SEEN(seen, stop_slot);
    if (cg_test(ws, sum, check_only, history_at, stop_slot) || check_only)
        return;
    const real2_t scalars = cg_alpha_beta(sum);
    const real_t alpha = scalars.x, beta = scalars.y;
    real4_t acc = (real4_t)0;
    if (HAS_FIRST_PAIR)
        acc = cg_pair(x, r, p, dinv, K0, x0, p0, r0, q0, alpha, beta, acc);
    FOR_LATER_PAIRS(k)
    acc =
        cg_pair(x, r, p, dinv, k, PAIR(x, k), PAIR(p, k), PAIR(r, k), PAIR(q, k), alpha, beta, acc);
    if (ODD_ROW()) {
        const uint i = n - 1;
        const real_t pv = p[i], rv = r[i] - alpha * q[i], zv = dinv ? dinv[i] * rv : rv;
        x[i] += alpha * pv;
        r[i] = rv;
        p[i] = zv + beta * pv;
        acc.s0 += rv * rv;
        acc.s1 += rv * zv;
    }
    store_share(acc, ws, out_at, s);
}

/* ---- BiCGStab ----
 * van der Vorst's BiCGStab, r0* = r0, as the textbook has it: rho' = (r0*, r') computed from
 * r' itself. (Taking it as (r0*, s) - omega (r0*, t), which would let the p update join the x
 * and r updates, cancels in just the iterations where the stabilising step works - omega t
 * near s - and the residual parted from b - A x by orders of magnitude on convdiff:160-200.)
 * An iteration is five launches: bicg_p (the test, beta, p), v = A p (leaving r0*.v), bicg_s
 * (alpha, s), t = A s (leaving t.s and t.t), bicg_step (omega, x, r, and r.r and r0*.r) - and
 * the reductions of a large product's real4s before bicg_s and bicg_step. */

/* p at rows 2k, 2k + 1: r + beta (p - omega v), or r in the first iteration */
INLINE real2_t bicg_p_pair(real2_t rv, real2_t pv, real2_t vv, real_t beta, real_t omega,
                           uint first)
{
    return first ? rv : rv + beta * (pv - omega * vv);
}

/* The test of r (r.r and rho' = r0*.r from bicg_step, or solve_start), then p = r + beta
 * (p - omega v), beta = (rho' / rho) (alpha / omega); the first iteration: p = r. check_only:
 * the test alone (the last check). */
__kernel void bicg_p(const uint n, __global const real_t *restrict r, __global real_t *restrict p,
                     __global const real_t *restrict v, __global real_t *restrict ws,
                     const uint rr_at, const uint rr_n, const uint history_at, const uint first,
                     const uint check_only, const uint stop_slot)
{
    __local real4_t s[WG_SIZE];
    const int seen = ws_stop_code(ws, stop_slot);
    const real4_t share = share_of2(ws, rr_at, rr_n);
    real2_t r0 = 0, p0 = 0, v0 = 0;
    if (HAS_FIRST_PAIR && !check_only)
        r0 = PAIR(r, K0), p0 = first ? r0 : PAIR(p, K0), v0 = first ? r0 : PAIR(v, K0);
    const real4_t sum = group_sum4(share, s, WG_SIZE);
    RETURN_IF_SEEN(seen, stop_slot);
    const real_t rr = sum.s0, rho = sum.s1, rho_prev = ws[CMRS_WS_RHO_PREV];
    const real_t alpha = ws[CMRS_WS_ALPHA], omega = ws[CMRS_WS_OMEGA];
    const real_t beta = first ? 0 : rho / rho_prev * (alpha / omega);
    int stop = 0;
    if (!isfinite(rr))
        stop = CMRS_STOP_NONFINITE;
    else if (rr <= ws[CMRS_WS_THRESHOLD])
        stop = CMRS_STOP_CONVERGED;
    else if (!check_only && rho == 0)
        stop = CMRS_STOP_BREAKDOWN;
    else if (!check_only && !(isfinite(rho) && isfinite(beta)))
        stop = CMRS_STOP_NONFINITE;
    if (LEADER()) {
        HISTORY_PUT(ws, history_at, (uint)ws[CMRS_WS_ITER], rr);
        ws[CMRS_WS_RR] = rr;
        ws[CMRS_WS_RHO] = rho;
    }
    if (stop)
        stop_solve(ws, stop_slot, stop, stop == CMRS_STOP_NONFINITE && !isfinite(rr) ? rr : rho,
                   1); /* 1: rho (host/solve/solve_bicgstab.c) */
    if (stop || check_only)
        return;
    if (HAS_FIRST_PAIR)
        PAIR(p, K0) = bicg_p_pair(r0, p0, v0, beta, omega, first);
    FOR_LATER_PAIRS(k)
    PAIR(p, k) =
        first ? PAIR(r, k) : bicg_p_pair(PAIR(r, k), PAIR(p, k), PAIR(v, k), beta, omega, 0);
    if (ODD_ROW())
        p[n - 1] = first ? r[n - 1] : r[n - 1] + beta * (p[n - 1] - omega * v[n - 1]);
}

/* s = r - alpha v at rows 2k, 2k + 1; acc gains s.s */
INLINE real4_t bicg_s_pair(__global real_t *s_vec, uint k, real2_t rv, real2_t vv, real_t alpha,
                           real4_t acc)
{
    const real2_t sv = rv - alpha * vv;
    PAIR(s_vec, k) = sv;
    acc.s0 += sv.x * sv.x + sv.y * sv.y;
    return acc;
}

/* alpha = rho / r0*.v, s = r - alpha v, partial sums of s.s at ss_at. */
__kernel void bicg_s(const uint n, __global const real_t *restrict r,
                     __global const real_t *restrict v, __global real_t *restrict s_vec,
                     __global real_t *restrict ws, const uint rv_at, const uint rv_n,
                     const uint ss_at, const uint stop_slot)
{
    __local real4_t s[WG_SIZE];
    const int seen = ws_stop_code(ws, stop_slot);
    const real4_t share = share_of(ws, rv_at, rv_n);
    real2_t r0 = 0, v0 = 0;
    if (HAS_FIRST_PAIR)
        r0 = PAIR(r, K0), v0 = PAIR(v, K0);
    const real_t rsv = group_sum4(share, s, WG_SIZE).s2;
    RETURN_IF_SEEN(seen, stop_slot);
    const real_t rho = ws[CMRS_WS_RHO], alpha = rho / rsv;
    if (LEADER())
        ws[CMRS_WS_ALPHA] = alpha;
    if (!(rsv != 0 && isfinite(alpha))) {
        stop_solve(ws, stop_slot, rsv == 0 ? CMRS_STOP_BREAKDOWN : CMRS_STOP_NONFINITE, rsv,
                   2); /* 2: r0*.v */
        return;
    }
    real4_t acc = (real4_t)0;
    if (HAS_FIRST_PAIR)
        acc = bicg_s_pair(s_vec, K0, r0, v0, alpha, acc);
    FOR_LATER_PAIRS(k)
    acc = bicg_s_pair(s_vec, k, PAIR(r, k), PAIR(v, k), alpha, acc);
    if (ODD_ROW()) {
        const real_t sv = r[n - 1] - alpha * v[n - 1];
        s_vec[n - 1] = sv;
        acc.s0 += sv * sv;
    }
    store_share(acc, ws, ss_at, s);
}

/* bicg_step's updates of rows 2k and 2k + 1 from their x, p, s, t, r0* and the s that x takes
 * (sx: M s with a preconditioner, else s); acc gains r.r and r0*.r */
INLINE real4_t bicg_step_pair(__global real_t *x, __global real_t *r, uint k, real2_t xv,
                              real2_t pv, real2_t sv, real2_t tv, real2_t rsv, real2_t sxv,
                              real_t alpha, real_t omega, bool early, real4_t acc)
{
    const real2_t rv = early ? sv : sv - omega * tv;
    PAIR(x, k) = xv + (early ? alpha * pv : alpha * pv + omega * sxv);
    PAIR(r, k) = rv;
    acc.s0 += rv.x * rv.x + rv.y * rv.y;
    acc.s1 += rsv.x * rv.x + rsv.y * rv.y;
    return acc;
}

/* omega = t.s / t.t, x += alpha p + omega sx, r = s - omega t, partial sums of r.r and r0*.r
 * at out_at. When s is small enough already, the textbook's half step: x += alpha p and
 * r = s, and the next bicg_p finds the solve converged: the one test of r stays bicg_p's.
 * Right-preconditioned (ts_w 1: host/solve/solve_bicgstab.c), p is M p, sx is M s, t = A M s,
 * and t.s is the product's w.y (w = s), not its x.y. */
__kernel void bicg_step(const uint n, __global real_t *restrict x, __global real_t *restrict r,
                        __global const real_t *restrict p, __global const real_t *restrict s_vec,
                        __global const real_t *restrict t, __global const real_t *restrict rs,
                        __global real_t *restrict ws, const uint ts_at, const uint ts_n,
                        const uint ss_at, const uint ss_n, const uint out_at, const uint stop_slot,
                        __global const real_t *restrict sx, const uint ts_w)
{
    __local real4_t s[WG_SIZE];
    const int seen = ws_stop_code(ws, stop_slot);
    /* t.s, t.t, s.s: one tree */
    const real4_t a = ts_w ? share_of(ws, ts_at, ts_n) : share_of2(ws, ts_at, ts_n),
                  c = share_of2(ws, ss_at, ss_n);
    real2_t x0 = 0, p0 = 0, s0 = 0, t0 = 0, rs0 = 0, sx0 = 0;
    if (HAS_FIRST_PAIR)
        x0 = PAIR(x, K0), p0 = PAIR(p, K0), s0 = PAIR(s_vec, K0), t0 = PAIR(t, K0),
        rs0 = PAIR(rs, K0), sx0 = PAIR(sx, K0);
    const real4_t sum = group_sum4((real4_t)(ts_w ? a.s2 : a.s0, a.s1, c.s0, 0), s, WG_SIZE);
    RETURN_IF_SEEN(seen, stop_slot);
    const real_t ts = sum.s0, tt = sum.s1, ss = sum.s2, alpha = ws[CMRS_WS_ALPHA];
    const bool early = ss <= ws[CMRS_WS_THRESHOLD];
    const real_t omega = early ? 0 : ts / tt;
    if (LEADER()) {
        ws[CMRS_WS_ITER] = ws[CMRS_WS_ITER] + 1;
        ws[CMRS_WS_OMEGA] = omega;
        ws[CMRS_WS_RHO_PREV] = ws[CMRS_WS_RHO];
    }
    if (!early && !(omega != 0 && isfinite(omega))) {
        stop_solve(ws, stop_slot, omega == 0 ? CMRS_STOP_BREAKDOWN : CMRS_STOP_NONFINITE, omega,
                   3); /* 3: omega */
        return;
    }
    real4_t acc = (real4_t)0;
    if (HAS_FIRST_PAIR)
        acc = bicg_step_pair(x, r, K0, x0, p0, s0, t0, rs0, sx0, alpha, omega, early, acc);
    FOR_LATER_PAIRS(k)
    acc = bicg_step_pair(x, r, k, PAIR(x, k), PAIR(p, k), PAIR(s_vec, k), PAIR(t, k), PAIR(rs, k),
                         PAIR(sx, k), alpha, omega, early, acc);
    if (ODD_ROW()) {
        const uint i = n - 1;
        const real_t pv = p[i], sv = s_vec[i], rv = early ? sv : sv - omega * t[i];
        x[i] += early ? alpha * pv : alpha * pv + omega * sx[i];
        r[i] = rv;
        acc.s0 += rv * rv;
        acc.s1 += rs[i] * rv;
    }
    store_share(acc, ws, out_at, s);
}

/* ---- CG with a preconditioner run between its kernels (host/solve/solve_pcg.c) ----
 * The textbook's preconditioned CG, M an operator of launches of its own (an AMG V-cycle): an
 * iteration is pcg_p (the test of r.r, beta = r.z / the r.z before, p = z + beta p), q = A p
 * (leaving p.q), pcg_x (alpha = r.z / p.q, x and r, the partial sums of r.r), z = M r, and
 * pcg_rz (the partial sums of r.z). r.z is kept in the header between them: pcg_p writes it
 * (CMRS_WS_RHO) and pcg_x, which reads it, hands it on as the one before (CMRS_WS_RHO_PREV). */

/* The test of r.r (at rr_at) and r.z (at rz_at) before an iteration, then p = z + beta p (the
 * first: p = z). check_only: the test alone (after the last iteration). */
__kernel void pcg_p(const uint n, __global const real_t *restrict z, __global real_t *restrict p,
                    __global real_t *restrict ws, const uint rr_at, const uint rz_at,
                    const uint groups, const uint history_at, const uint first,
                    const uint check_only, const uint stop_slot)
{
    __local real4_t s[WG_SIZE];
    const int seen = ws_stop_code(ws, stop_slot);
    const real4_t share =
        (real4_t)(share_of(ws, rr_at, groups).s0, share_of(ws, rz_at, groups).s0, 0, 0);
    const real4_t sum = group_sum4(share, s, WG_SIZE);
    RETURN_IF_SEEN(seen, stop_slot);
    const real_t rr = sum.s0, rz = sum.s1;
    const real_t beta = first ? (real_t)0 : rz / ws[CMRS_WS_RHO_PREV];
    int stop = 0;
    if (!isfinite(rr))
        stop = CMRS_STOP_NONFINITE;
    else if (rr <= ws[CMRS_WS_THRESHOLD])
        stop = CMRS_STOP_CONVERGED;
    else if (!check_only && !finite2(rz, beta))
        stop = CMRS_STOP_NONFINITE;
    else if (!check_only && !(rz > 0))
        stop = CMRS_STOP_BREAKDOWN;
    if (LEADER()) {
        const uint it = (uint)ws[CMRS_WS_ITER];
        HISTORY_PUT(ws, history_at, it, rr);
        ws[CMRS_WS_RR] = rr;
        ws[CMRS_WS_RHO] = rz;
        if (!stop && !check_only)
            ws[CMRS_WS_ITER] = (real_t)(it + 1);
    }
    if (stop)
        stop_solve(ws, stop_slot, stop, stop == CMRS_STOP_NONFINITE && !isfinite(rr) ? rr : rz,
                   1); /* 1: r.z (host/solve/solve_pcg.c) */
    if (stop || check_only)
        return;
    FOR_ROWS(i)
    p[i] = first ? z[i] : z[i] + beta * p[i];
}

/* alpha = r.z / p.q (p.q from the product's partial sums at pq_at), x += alpha p, r -= alpha q,
 * and the partial sums of the new r.r at rr_out. */
__kernel void pcg_x(const uint n, __global real_t *restrict x, __global real_t *restrict r,
                    __global const real_t *restrict p, __global const real_t *restrict q,
                    __global real_t *restrict ws, const uint pq_at, const uint pq_n,
                    const uint rr_out, const uint stop_slot)
{
    __local real4_t s[WG_SIZE];
    const int seen = ws_stop_code(ws, stop_slot);
    const real_t pq = group_sum4(share_of(ws, pq_at, pq_n), s, WG_SIZE).s0;
    RETURN_IF_SEEN(seen, stop_slot);
    const real_t rz = ws[CMRS_WS_RHO], alpha = rz / pq;
    const int stop = !isfinite(pq) ? CMRS_STOP_NONFINITE : !(pq > 0) ? CMRS_STOP_BREAKDOWN : 0;
    if (LEADER())
        ws[CMRS_WS_RHO_PREV] = rz;
    if (stop) {
        stop_solve(ws, stop_slot, stop, pq, 2); /* 2: p.Ap */
        return;
    }
    real4_t acc = (real4_t)0;
    FOR_ROWS(i)
    {
        x[i] += alpha * p[i];
        const real_t rv = r[i] - alpha * q[i];
        r[i] = rv;
        acc.s0 += rv * rv;
    }
    store_share(acc, ws, rr_out, s);
}

/* The partial sums of r.z at rz_out (z = M r just made). */
__kernel void pcg_rz(const uint n, __global const real_t *restrict r,
                     __global const real_t *restrict z, __global real_t *restrict ws,
                     const uint rz_out)
{
    __local real4_t s[WG_SIZE];
    if (STOPPED())
        return;
    real4_t acc = (real4_t)0;
    FOR_ROWS(i)
    acc.s0 += r[i] * z[i];
    store_share(acc, ws, rz_out, s);
}
