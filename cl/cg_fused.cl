/* cg_fused.cl - a whole CG iteration in one kernel: a family's product built with
 * -DCG_FUSED=1 (2: with the Jacobi preconditioner), after dots.cl in every program (empty of
 * kernels without it; the arguments: cmrs_abi.h, cmrs_fused_arg).
 *
 * The two-kernel iteration (solve.cl's cg_step, then the product with its epilogue) pays a
 * launch for each; on a small matrix the launches are most of the iteration. Here the
 * product makes its direction as it gathers it: every work-group adds up the sums the kernel
 * before left (r.r, r.z, p.q, q.Dq), takes alpha and beta from them as cg_step does (Rupp et
 * al.'s pipelined CG) and gathers
 *   p'_c = D_c (r_c - alpha q_c) + beta p_c
 * at each column c of its rows - three loads (four with Jacobi) where the plain product has
 * one - so q' = A p' needs no p' written first. Each row then gets x += alpha p, r', p' and
 * q' written, and the sums of r'.r', r'.z', p'.q' and q'.Dq' by work-group: the next
 * iteration's. r, p and q are read at rows other work-groups write, so the iteration writes
 * r', p' and q' into a second set of buffers, the sets alternating (host/solve/solve_cg.c); x
 * is read and written at its own rows alone, in place. The three loads a column cost more
 * than the launch saved once the product outgrows the launch (docs/dev/PERFORMANCE.md,
 * CG_FUSED_ROWS). Sums in a fixed order, as everywhere: the same bits run after run.
 * The slice family updates a row in the work-item that summed it; the strip and MODULO
 * families after the barrier, as their epilogue (dots.cl; no strip split into tiles: the host
 * asks for none). The segment family gathers in a helper outside the kernel's scope, and is
 * not built so. */
#if CG_FUSED
#if DOTS
#error "CG_FUSED is a product of its own: built without DOTS"
#endif

#define DOTS_PARAMS                                                                                \
    , __global real_t *restrict ws, const uint rr_at, const uint rr_n, const uint pq_at,           \
        const uint pq_n, const uint rr_out, const uint pq_out,                                     \
        __global const real_t *restrict r_in, __global const real_t *restrict q_in,                \
        __global real_t *restrict r_out, __global real_t *restrict p_out,                          \
        __global real_t *restrict solution, __global const real_t *restrict dinv,                  \
        const uint history_at, const uint stop_slot
#define DOTS_SCRATCH __local real4_t dots_scratch[WG_SIZE];

/* z = D r: the preconditioner's row c applied to v */
#if CG_FUSED == 2
#define CG_PRECONDITION(c, v) (dinv[c] * (v))
#else
#define CG_PRECONDITION(c, v) (v)
#endif
/* the next direction at column c (GATHER, spmv_common.cl): x is the product's p */
#define CG_DIRECTION(c)                                                                            \
    (CG_PRECONDITION(c, r_in[c] - cg_alpha * q_in[c]) + cg_beta * x[c])

/* The sums the kernel before left, added up; the kernel returns once the solve has stopped, or
 * stops here (the same for the whole grid); else alpha and beta, as cg_step takes them. */
#define PRODUCT_BEGIN()                                                                            \
    const int seen_ = ws_stop_code(ws, stop_slot);                                                 \
    const real4_t sums_ = group_sum4(cg_share(ws, rr_at, rr_n, pq_at, pq_n, CG_FUSED == 2),        \
                                     dots_scratch, WG_SIZE);                                       \
    RETURN_IF_SEEN(seen_, stop_slot);                                                              \
    if (cg_test(ws, sums_, 0, history_at, stop_slot))                                              \
        return;                                                                                    \
    const real2_t scalars_ = cg_alpha_beta(sums_);                                                 \
    const real_t cg_alpha = scalars_.x, cg_beta = scalars_.y;                                      \
    const bool stopped = false;                                                                    \
    real4_t acc = (real4_t)0

/* Row `row`'s updates, q'_row = qv the product's: acc gains r'.r', r'.z', p'.q', q'.Dq'. */
INLINE real4_t cg_fused_row(real4_t acc, uint row, real_t qv, __global const real_t *x,
                            __global const real_t *r_in,
                            __global const real_t *q_in, __global real_t *r_out,
                            __global real_t *p_out, __global real_t *solution,
                            __global const real_t *dinv, real_t cg_alpha, real_t cg_beta)
{
    (void)dinv;
    const real_t rv = r_in[row] - cg_alpha * q_in[row], zv = CG_PRECONDITION(row, rv);
    const real_t pv = CG_DIRECTION(row);
    solution[row] += cg_alpha * x[row];
    r_out[row] = rv;
    p_out[row] = pv;
    return acc + (real4_t)(rv * rv, rv * zv, pv * qv, qv * CG_PRECONDITION(row, qv));
}
#define PRODUCT_ROW(row, sum)                                                                      \
    do {                                                                                           \
        y[row] = sum;                                                                              \
        acc = cg_fused_row(acc, row, sum, x, r_in, q_in, r_out, p_out, solution, dinv, cg_alpha,   \
                           cg_beta);                                                               \
    } while (0)

/* The work-group's sums: r'.r' and r'.z' where the next iteration reads r.r (s0, s1), p'.q'
 * and q'.Dq' where it reads p.q (s0, and s1 and s3: both where the product's epilogue leaves
 * q.q and q.Dq). */
#define PRODUCT_END()                                                                              \
    do {                                                                                           \
        (void)stopped;                                                                             \
        const real4_t sum_ = group_sum4(acc, dots_scratch, WG_SIZE);                               \
        if (get_local_id(0) == 0) {                                                                \
            vstore4((real4_t)(sum_.s0, sum_.s1, 0, 0), get_group_id(0), ws + rr_out);              \
            vstore4((real4_t)(sum_.s2, sum_.s3, 0, sum_.s3), get_group_id(0), ws + pq_out);        \
        }                                                                                          \
    } while (0)

/* The families that share out strips with find_work (strip, MODULO): the sums' fold at the kernel's start, and each row of the group's strips updated after the barrier
 * that makes the group's q' visible to it (strip s's row r at item s * HEIGHT + r, as
 * dots_of_group reads them; no tiles). */
#define DOTS_RETURN_IF_STOPPED() PRODUCT_BEGIN()
INLINE real4_t cg_fused_group(real4_t acc, uint strips, uint rows, __global const real_t *x,
                              __global const real_t *y, __global const real_t *r_in,
                              __global const real_t *q_in, __global real_t *r_out,
                              __global real_t *p_out, __global real_t *solution,
                              __global const real_t *dinv, real_t cg_alpha, real_t cg_beta)
{
    barrier(CLK_GLOBAL_MEM_FENCE);
    const uint first = get_group_id(0) * WARPS_PER_GROUP;
    for (uint i = get_local_id(0); i < WARPS_PER_GROUP * HEIGHT; i += WG_SIZE) {
        const uint s = first + i / HEIGHT, row = s * HEIGHT + i % HEIGHT;
        if (s < strips && row < rows)
            acc = cg_fused_row(acc, row, y[row], x, r_in, q_in, r_out, p_out, solution, dinv,
                               cg_alpha, cg_beta);
    }
    return acc;
}
#define DOTS_GROUP_BEGIN()
#define DOTS_GROUP_END()
#define DOTS_LANE_ROW(r, row, value) ((void)(r), (void)(value))
#define DOTS_OF_GROUP(w)                                                                           \
    do {                                                                                           \
        (void)(w), (void)first_tile_group, (void)tiles, (void)tile_strip;                          \
        acc = cg_fused_group(acc, strips, rows, x, y, r_in, q_in, r_out, p_out, solution, dinv,    \
                             cg_alpha, cg_beta);                                                   \
        PRODUCT_END();                                                                             \
    } while (0)
#endif
