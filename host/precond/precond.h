/* precond.h - the preconditioners stage (issue 57): for now smoothed-aggregation AMG set up
 * on the host (amg_setup.c drives the phases: diagonals and rho(D^-1 A) in amg_rho.c, strength
 * and aggregation in amg_aggregate.c, the sparse products in amg_spgemm.c, the coarsest
 * level's dense inverse in amg_coarse.c) and a host cycle (V or W) with a preconditioned CG on it
 * (amg_cycle.c), the ground truth for the same cycle on the device (amg_device.c, cl/amg.cl).
 * Internal: nothing here is public API yet.
 *
 * Every level keeps its operators as host CSR in double (A, P, R = P^T), the diagonal's
 * inverse and its smoother's weight: what the device cycle will copy level by level. */
#ifndef CMRSCL_PRECOND_STAGE_H
#define CMRSCL_PRECOND_STAGE_H

#include "base/base.h"
#include "exec/exec.h"
#include "io/io.h"

/* ---- amg_setup.c: the hierarchy ---- */

/* The choices of the setup; cmrs_amg_options_default gives PyAMG's smoothed_aggregation_solver
 * defaults (but max_coarse, 500: the coarsest level is solved densely). */
typedef struct cmrs_amg_options {
    double theta;        /* strong: |a_ij| >= theta sqrt(|a_ii a_jj|); 0: every coupling */
    bool smooth;         /* P = (I - omega D^-1 A) T; false: plain aggregation, P = T */
    double smooth_scale; /* P's omega = smooth_scale / rho(D^-1 A), PyAMG's 4/3 */
    double jacobi_scale; /* the cycle's damped Jacobi: omega = jacobi_scale / rho, 4/3 */
    int rho_steps; /* steps of the estimate of rho(D^-1 A) (amg_rho.c), 15, 1..AMG_MAX_RHO_STEPS */
    int32_t max_coarse;    /* stop when a level has at most this many rows, 500 */
    int degree;            /* the smoother: 1 damped Jacobi, 2.. Chebyshev of that degree */
    bool float_cycle;      /* the device's hierarchy in float under a double solve */
    int max_levels;        /* at most this many levels (the finest counted), 10 */
    double min_coarsening; /* stop when the coarse level keeps more than this share, 0.9 */
    /* Near-null-space vectors, near_null_count columns of rows values each (column-major);
     * NULL with count 1 is the constant vector. */
    int near_null_count;
    const double *near_null;
    /* unknowns a node of level 0 (consecutive rows), aggregated together: 1 each row alone */
    int block_size;
    int visits; /* the cycle: each level's coarse corrections, 1 a V-cycle, 2 a W-cycle */
} cmrs_amg_options;

typedef struct cmrs_amg_level {
    cmrscl_csr A;        /* the operator; level 0's is the caller's matrix, borrowed */
    cmrscl_csr T;        /* tentative prolongator (rows x aggregates), empty on the last */
    cmrscl_csr P, R;     /* prolongator and its transpose, empty on the last level */
    int32_t *aggregate;  /* each row's aggregate, -1 for an isolated row; NULL on the last */
    int32_t aggregates;  /* how many (the next level's rows with one candidate; with k, up to
                            k rows each) */
    double *diag_inv;    /* 1 / a_ii */
    bool zero_couplings; /* an entry off A's diagonal stored as 0 (found with the diagonal) */
    double *near_null;   /* the level's candidates (rows x count), T's of the level above;
                            level 0's the options' (borrowed; NULL: ones) */
    int64_t *node_ptr;   /* nodes' rows, as cmrs_amg_coarse's; NULL: each row a node */
    int32_t nodes;
    double rho;          /* the estimate of rho(D^-1 A) */
    double jacobi_omega; /* the smoother's weight, jacobi_scale / rho */
    double theta;        /* the strength threshold its aggregates took (amg_setup.c) */
    /* its strong couplings' pattern at theta > 0 where some are weak: the prolongator is then
     * smoothed with the filtered matrix on it (amg_smooth.c), kept with the aggregates so that
     * new values of A give P, R and the next level the same patterns; empty otherwise */
    cmrscl_csr strong;
} cmrs_amg_level;

/* Seconds of each phase, summed over the levels (cmrscl_seconds). */
typedef struct cmrs_amg_times {
    double smoother, strength, aggregation, prolongator, rap, coarse_inverse, total;
} cmrs_amg_times;

typedef struct cmrs_amg_hierarchy {
    int levels;
    bool borrowed_aggregates; /* set up again from aggregates kept elsewhere */
    bool owned_a0;            /* level 0's A a canonical copy of the caller's (amg_setup.c) */
    cmrs_amg_level *level;
    /* The coarsest level's dense inverse (row-major, coarse_rows^2), from its Cholesky factor
     * when its A is SPD, else from LU with partial pivoting (coarse_lu). */
    int32_t coarse_rows;
    double *coarse_inverse;
    bool coarse_lu;
    int degree;                 /* the cycle's smoother (the options'): 1 Jacobi, 2.. Chebyshev */
    int visits;                 /* the cycle's coarse corrections a level (the options') */
    bool symmetric;             /* level 0 is: rho estimated by Lanczos, not the power method */
    double theta;               /* the largest strength threshold a level took */
    double operator_complexity; /* sum of the levels' entries / entries of A */
    double grid_complexity;     /* sum of the levels' rows / rows of A */
    cmrs_amg_times times;
} cmrs_amg_hierarchy;

/* Told of each operator of the device's cycle as soon as the set-up has finished it: level l's
 * A once its aggregates coarsen it, then its P and R when they are made. It stays unchanged at
 * that address until the hierarchy is freed, so its device copy can be made while the host goes
 * on (amg_builder.c). wait returns once nothing reads the operators told: the set-up calls it
 * before it frees a hierarchy that failed. Any hook may be NULL: the set-up then does without. */
typedef enum cmrs_amg_operator { AMG_OPERATOR_A, AMG_OPERATOR_P, AMG_OPERATOR_R } cmrs_amg_operator;
typedef struct cmrs_amg_sink {
    void (*ready)(void *ctx, int level, cmrs_amg_operator which, const cmrscl_csr *m);
    void (*wait)(void *ctx);
    /* may be NULL: level l's smoothed prolongator p = t - omega D^-1 (a t), made elsewhere (a
     * device) and the same bits as the host's; called once the level's estimate of rho is in,
     * for levels of device_rows rows or device_entries entries or more. On failure (p empty) the
     * set-up makes it itself */
    cmrscl_status (*prolongator)(void *ctx, int level, const cmrscl_csr *a, const cmrscl_csr *t,
                                 const double *diag_inv, double omega, cmrscl_csr *p);
    /* may be NULL: level l's r = p^T and c = r a p, made elsewhere (a device) and the same
     * bits as cmrscl_csr_transpose's and cmrs_amg_galerkin's. On failure (c empty) the set-up
     * makes c itself, and r too where it is empty and not *r_later. *r_later: r is written
     * later, beside the set-up, by the time wait returns (once told, ready) - the set-up reads
     * it no sooner */
    cmrscl_status (*galerkin)(void *ctx, int level, const cmrscl_csr *a, const cmrscl_csr *p,
                              cmrscl_csr *r, cmrscl_csr *c, bool *r_later);
    /* may be NULL: level l's estimate of rho(D^-1 A), made elsewhere (a device) and the same
     * bits as cmrs_amg_spectral_radius's; on failure the set-up makes it itself. Called from
     * the estimate's thread, beside the set-up's. */
    cmrscl_status (*rho)(void *ctx, int level, const cmrscl_csr *a, bool symmetric, int steps,
                         double *rho);
    /* may be NULL: level l's A sent ahead to where rho will estimate it, while the set-up
     * decides whether the hierarchy is symmetric (from the same thread as rho, before it) */
    void (*send_ahead)(void *ctx, int level, const cmrscl_csr *a);
    /* may be NULL: whether level l's A, sent ahead, is symmetric - cmrs_amg_symmetric's
     * verdict, decided where it was sent (called after send_ahead, from the same thread); on
     * failure the set-up decides it itself */
    cmrscl_status (*symmetric)(void *ctx, int level, const cmrscl_csr *a, bool *symmetric);
    void *ctx;
    /* the levels whose prolongator the sink makes: this many rows or more, or this many
     * entries (INT64_MAX: none), where the level's estimate of rho is in once T is made (else
     * the host makes A T in the estimate's shadow) - or, with wait_for_rho, always, once the
     * estimate is in */
    int64_t device_rows, device_entries;
    bool wait_for_rho;
} cmrs_amg_sink;

/* Whether level matrix a is the device's to work on: rows_from rows or entries_from entries or
 * more (amg_builder.c, GALERKIN_DEVICE_ROWS and _ENTRIES) - the builder's rule and the set-up's
 * for its prolongator, one rule. */
static inline bool cmrs_amg_on_device(int64_t rows_from, int64_t entries_from, const cmrscl_csr *a)
{
    return (int64_t)a->rows >= rows_from || a->nnz >= entries_from;
}

CMRSCL_HIDDEN void cmrs_amg_options_default(cmrs_amg_options *opt);
/* Builds the hierarchy of a (square, every diagonal entry positive; a row's columns in any
 * order, repeats summed: the set-up takes a canonical copy where a's is not); opt NULL
 * takes the defaults. a and opt->near_null must outlive *out (level 0 borrows them). The same
 * matrix and options give the same hierarchy bit for bit. Errors: ERROR_INVALID_MATRIX for a
 * non-square matrix or a zero, missing or negative diagonal entry (named), ERROR_INVALID_ARGUMENT
 * for bad options, ERROR_UNSUPPORTED for more than one near-null-space vector, ERROR_BREAKDOWN when
 * the coarsest level is singular, ERROR_OUT_OF_HOST_MEMORY. On failure *out is empty. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_setup(const cmrscl_csr *a, const cmrs_amg_options *opt,
                                           cmrs_amg_hierarchy *out);
/* The same, telling sink (may be NULL) of each operator as it is finished. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_setup_to(const cmrscl_csr *a, const cmrs_amg_options *opt,
                                              const cmrs_amg_sink *sink, cmrs_amg_hierarchy *out);
CMRSCL_HIDDEN void cmrs_amg_free(cmrs_amg_hierarchy *h);

/* A hierarchy's aggregates, kept to set it up again for new values of the same pattern:
 * aggregate[l] of level l's rows and count[l] aggregates, for the levels - 1 coarsened. */
typedef struct cmrs_amg_aggregates {
    int levels;
    int32_t **aggregate, *count;
    double *theta; /* each level's (its prolongator is smoothed on the matrix filtered at it) */
    cmrscl_csr *strong; /* each level's kept strong pattern (cmrs_amg_level.strong) */
} cmrs_amg_aggregates;
/* Moves h's aggregates into *out (h no longer frees them). */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_take_aggregates(cmrs_amg_hierarchy *h,
                                                     cmrs_amg_aggregates *out);
CMRSCL_HIDDEN void cmrs_amg_aggregates_free(cmrs_amg_aggregates *g);
/* cmrs_amg_setup with g's aggregates (borrowed) instead of strength and aggregation: a's
 * values anew on the hierarchy's levels - diagonals, spectral radii, P, R, the Galerkin
 * operators, the coarse inverse. With a's pattern unchanged, every level's pattern is too. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_setup_again(const cmrscl_csr *a, const cmrs_amg_options *opt,
                                                 const cmrs_amg_aggregates *g,
                                                 cmrs_amg_hierarchy *out);

/* ---- amg_rho.c: the diagonal and the estimate of rho(D^-1 A) ---- */

/* The host-side passes go over rows in pieces of AMG_PIECE, a piece a task on the host's
 * threads; sums are kept a piece and added in the pieces' order (bits independent of the
 * threads). */
#define AMG_PIECE 8192
/* The most steps the estimate of rho takes (Lanczos keeps a tridiagonal of that order). */
#define AMG_MAX_RHO_STEPS 64
static inline int64_t cmrs_amg_pieces(int64_t rows) { return (rows + AMG_PIECE - 1) / AMG_PIECE; }
/* Piece `piece`'s rows [begin, end) of `rows`. */
static inline void cmrs_amg_piece_rows(int64_t piece, int64_t rows, int64_t *begin, int64_t *end)
{
    *begin = piece * AMG_PIECE;
    *end = *begin + AMG_PIECE < rows ? *begin + AMG_PIECE : rows;
}
/* Passes over items that hold many rows each (nodes, aggregates) take spans of items of
 * about `per_piece` units of work each, `work` units over all n items: a piece of AMG_PIECE
 * such items could hold most of a level, left to one thread. */
static inline int64_t cmrs_amg_span(int64_t n, int64_t work, int64_t per_piece)
{
    const int64_t span =
        work > per_piece ? (int64_t)((double)n * (double)per_piece / (double)work) : n;
    return span > 0 ? span : 1;
}
/* 1 / a_ii of every row (*out malloc'ed); ERROR_INVALID_MATRIX naming the first row (of
 * `level`) whose diagonal is missing, zero or negative. *zero_couplings (may be NULL): whether
 * an entry off the diagonal is stored as 0 - noted in the same pass, where cmrs_amg_all_strong
 * would read the matrix again. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_inverse_diagonal(const cmrscl_csr *a, int level, double **out,
                                                      bool *zero_couplings);
/* Whether a (canonical CSR) equals its transpose exactly. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_symmetric(const cmrscl_csr *a, bool *symmetric);
/* The same, while sink (may be NULL) sends A ahead for level 0's estimate of rho. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_symmetric_sending(const cmrscl_csr *a,
                                                       const cmrs_amg_sink *sink, bool *symmetric);
/* An estimate of rho(D^-1 A) from below, `steps` steps from a fixed start: the largest Ritz
 * value of Lanczos in the D inner product for symmetric A, else the power method's Rayleigh
 * quotient; 1 when the estimate is not positive. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_spectral_radius(const cmrscl_csr *a, const double *diag_inv,
                                                     bool symmetric, int steps, double *rho);
/* The estimate's steps over passes that run elsewhere (the host's pieces, a device's kernels).
 * Three vectors of the rows, each kept unnormalised with a scale; which holds v, p (Lanczos'
 * previous) and u (the product) moves from step to step. */
typedef struct cmrs_rho_state {
    int v, p, u; /* 0, 1, 2 in some order */
    double sv, sp, su, alpha, beta;
} cmrs_rho_state;
typedef struct cmrs_rho_passes {
    /* u = D^-1 A (sv v); sum = {(sv v)^T A (sv v), (sv v)^T D (sv v), u^T u} */
    cmrscl_status (*product)(void *ctx, const cmrs_rho_state *s, double sum[3]);
    /* p = su u - alpha sv v - beta sp p; sum[0] = p^T D p */
    cmrscl_status (*update)(void *ctx, const cmrs_rho_state *s, double sum[3]);
    void *ctx;
} cmrs_rho_passes;
/* Each sum of every row is added in pieces of AMG_PIECE rows from 0, in the rows' order, and
 * the pieces' sums (3 a piece) in theirs: cmrs_amg_rho_add. The estimate is then the same
 * bits wherever the passes ran. Vectors 0 and 1 start as cmrs_amg_rho_start makes them. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_rho_run(const cmrs_rho_passes *passes, bool symmetric,
                                             int steps, double *rho);
/* The start vector v (rows) and, where p is not NULL, Lanczos' p = 0. */
CMRSCL_HIDDEN void cmrs_amg_rho_start(double *v, double *p, int64_t rows);
CMRSCL_HIDDEN void cmrs_amg_rho_add(const double *sums, int64_t pieces, double sum[3]);

/* ---- amg_smooth.c: the smoothed prolongator ---- */

/* Level l's P = T - omega D^-1 (A T): the sink's where `elsewhere` (a device), or - where it
 * fails, or not elsewhere - the host's; A T is in lv->P already where the host made it beside
 * rho. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_smoothed(const cmrs_amg_sink *sink, int l, cmrs_amg_level *lv,
                                              double omega, bool elsewhere);
/* Level l's P = T - omega_f D_f^-1 (A_f T) with the filtered matrix A_f on lv->strong
 * (cmrs_amg_filter_on) and omega_f from rho(D_f^-1 A_f), on the host. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_filtered_prolongator(cmrs_amg_hierarchy *h, int l,
                                                          const cmrs_amg_options *o);
/* Plain aggregation's prolongator: lv's P a copy of its T. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_unsmoothed(cmrs_amg_level *lv);

/* ---- amg_aggregate.c: strength of connection, aggregation, tentative prolongator ---- */

/* The strong off-diagonal couplings of a (PyAMG's 'symmetric' measure) as a pattern (values
 * NULL): |a_ij| >= theta sqrt(|a_ii a_jj|), explicit zeros never strong. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_strength(const cmrscl_csr *a, double theta, cmrscl_csr *s);
/* The filtered matrix A_f at theta > 0 (amgcl's, PyAMG's 'filter'): a's strong couplings, and
 * its diagonal with every weak off-diagonal entry added to it - row sums kept, so A_f treats
 * the near-null space as A does (a row where that sum is not positive keeps a_ii). The prolongator
 * is smoothed with A_f, so that it does not spread along weak couplings: through a hub's thousands
 * of weak ones it would fill R A P. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_filter(const cmrscl_csr *a, double theta, cmrscl_csr *f);
/* The same on a strong pattern (cmrs_amg_strength's, made once): a's entries at its places,
 * every other one added to the diagonal - new values of a filtered as the first were. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_filter_on(const cmrscl_csr *a, const cmrscl_csr *strong,
                                               cmrscl_csr *f);
/* Whether every off-diagonal entry of a is strong at theta (theta 0, none stored as zero):
 * then a itself serves cmrs_amg_aggregate as the strength's pattern, the same aggregates, and
 * strength need not be made (a pass over a's values, where strength takes three and writes
 * a pattern of its size). */
CMRSCL_HIDDEN bool cmrs_amg_all_strong(const cmrscl_csr *a, double theta);
/* Graphs with hubs (power-law degrees: a few rows thousands of times the mean) and graphs
 * that expand (uniform random graphs: a row's neighbours far apart) defeat theta 0: with every
 * coupling strong the smoothed prolongator spreads along each row, and R A P fills - a level
 * of 15 K rows and 219 M entries under a 262 K-row R-MAT Laplacian, 2.6 G entries under a 2 M-row
 * random graph's. Where theta is left 0 and a level has a row of AMG_HUB_ROWS times its mean
 * or longer, or its aggregates at theta 0 leave a row's entries in AMG_SPREAD as many
 * aggregates as entries (rows sampled), the level takes AMG_HUB_THETA (amg_setup.c): there a hub's
 * and an expander's couplings are weak (1 / sqrt(d_i d_j)), and its prolongator is smoothed with
 * them filtered out. Stencils, FEM, elasticity and mesh-like graphs keep theta 0, their hierarchies
 * unchanged (docs/dev/PERFORMANCE.md, AMG_HUB_ROWS). */
#define AMG_HUB_THETA 0.25
/* Whether a has a row of AMG_HUB_ROWS times its mean row or longer. */
CMRSCL_HIDDEN bool cmrs_amg_has_hubs(const cmrscl_csr *a);
/* Whether a's rows, every 16th (the same rows on every run), touch at least AMG_SPREAD as many
 * of the count aggregates as they have entries. */
CMRSCL_HIDDEN bool cmrs_amg_spreads(const cmrscl_csr *a, const int32_t *aggregate, int32_t count);
/* Its counts: the sampled rows' entries, and the aggregates each of them touches, added up;
 * false where they could not be made (no aggregate, no memory). */
CMRSCL_HIDDEN bool cmrs_amg_spread_counts(const cmrscl_csr *a, const int32_t *aggregate,
                                          int32_t count, int64_t *entries, int64_t *touched);
/* PyAMG's standard aggregation on the pattern s, three greedy passes over the rows in order:
 * (1) a row whose neighbours are all free roots an aggregate of itself and them; (2) a free
 * row joins the aggregate of its first neighbour aggregated in pass 1; (3) a row still free
 * roots an aggregate of itself and its free neighbours. Rows without neighbours stay out
 * (-1). A row's own column, where s stores it, is no neighbour. Past AGGREGATE_BLOCK_ROWS rows
 * pass 1 first roots within blocks of rows on the host's threads, then at the blocks' edges in
 * order (amg_aggregate.c). aggregate[rows]; *count the number of aggregates. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_aggregate(const cmrscl_csr *s, int32_t *aggregate,
                                               int32_t *count);
/* ---- amg_tentative.c: the candidates carried to the coarse level, nodes ---- */

/* What the tentative prolongator makes of a level: T (rows x coarse rows), the coarse level's
 * candidates (rows x k, column-major) and its nodes (each aggregate's unknowns, consecutive:
 * node n's are node_ptr[n]..node_ptr[n + 1] - 1). */
typedef struct cmrs_amg_coarse {
    cmrscl_csr t;
    int32_t rows, nodes;
    double *b;
    int64_t *node_ptr;
} cmrs_amg_coarse;
/* The tentative prolongator of k near-null candidates b (rows x k, column-major; NULL: the
 * constant vector, k 1): on each aggregate, its block of the candidates made orthonormal
 * (modified Gram-Schmidt; PyAMG's fit_candidates), B_J = Q_J R_J, Q_J T's columns of J and R_J
 * the coarse candidates' rows; a candidate dependent on those before it on an aggregate
 * (CANDIDATE_DROP) has no column there. Rows out of every aggregate are empty. With one
 * candidate: T[i][J] = b_i / ||b_J||, the coarse candidate ||b_J||. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_tentative(const int32_t *aggregate, int32_t rows,
                                               int32_t count, const double *b, int k,
                                               cmrs_amg_coarse *out);
CMRSCL_HIDDEN void cmrs_amg_coarse_free(cmrs_amg_coarse *c);
/* The matrix of the nodes (nodes x nodes): entry (m, n) the Frobenius norm of A's block of
 * node m's rows and node n's columns, where any is stored; columns ascending. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_amalgamate(const cmrscl_csr *a, const int64_t *node_ptr,
                                                int32_t nodes, cmrscl_csr *out);

/* ---- amg_spgemm.c: sparse products ---- */

/* c = a * b in canonical CSR (a two-pass product: the entries of each row counted with a
 * marker, then summed in a dense accumulator, columns sorted). Structural products are kept
 * even when their sum is zero, so c's pattern is the product of the patterns. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_spgemm(const cmrscl_csr *a, const cmrscl_csr *b,
                                            cmrscl_csr *c);
/* The same, given up (c empty, *stopped, CMRSCL_OK) once *stop is set (stop may be NULL). */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_spgemm_unless(const cmrscl_csr *a, const cmrscl_csr *b,
                                                   cmrscl_csr *c, const atomic_bool *stop,
                                                   bool *stopped);
/* The Galerkin operator r * a * p. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_galerkin(const cmrscl_csr *r, const cmrscl_csr *a,
                                              const cmrscl_csr *p, cmrscl_csr *c);

/* ---- device_csr.c: CSR matrices on the device, an AMG program's kernels ---- */

/* A CSR matrix in device buffers: int32 row pointers and columns, double values. */
typedef struct cmrs_device_csr {
    int32_t rows, cols;
    int64_t nnz;
    cl_mem ptr, col, val;
} cmrs_device_csr;
/* a on ctx's device, there when this returns; ERROR_UNSUPPORTED beyond 2^31 - 1 entries. On
 * failure *out is empty. */
CMRSCL_HIDDEN cmrscl_status cmrs_device_csr_upload(cmrscl_context ctx, const cmrscl_csr *a,
                                                   cmrs_device_csr *out);
CMRSCL_HIDDEN void cmrs_device_csr_release(cmrs_device_csr *m);
/* c read back into host CSR (int64 row pointers), through the context's pinned ring. */
CMRSCL_HIDDEN cmrscl_status cmrs_device_csr_download(cmrscl_context ctx, const cmrs_device_csr *c,
                                                     cmrscl_csr *out);
/* The kernels `names` of the program `file` built with `options` for ctx's device; *local (a
 * power of two) halved to what every one of them runs. On failure none is kept. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_kernels(cmrscl_context ctx, const char *file,
                                             const char *options, int count,
                                             const char *const *names, cl_kernel *out,
                                             size_t *local);
/* A read-write buffer of `bytes` (1 at least) on ctx's device. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_buffer(cmrscl_context ctx, size_t bytes, cl_mem *out);
/* `bytes` of src into dst, there when this returns. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_upload(cmrscl_context ctx, cl_mem dst, size_t bytes,
                                            const void *src);

/* ---- amg_galerkin.c: the Galerkin operator and sparse products on the device ---- */

/* c = r * a * p (cmrs_amg_galerkin's, bit for bit) made on ctx's device, `batch` rows a launch
 * (0: as many as the tables' memory allows; the tests ask for a few). r NULL: p's transpose,
 * made there (cmrscl_csr_transpose's, bit for bit) and read back into r_made (may be NULL;
 * left empty where it was not made or its read failed, even if c was). a_on_device,
 * p_on_device (may be NULL): a, p already there, not uploaded again. c_keep (may be NULL): c's
 * copy on the device, now the caller's - the next level's A, for its estimate of rho (empty on
 * failure); r_keep (may be NULL) likewise R's, where it was made there. ERROR_UNSUPPORTED where the
 * device has no fp64, a row of a product has more columns than its table holds or a product more
 * than 2^31 - 1 entries; the device's errors otherwise. On failure c is empty. */
CMRSCL_HIDDEN cmrscl_status
cmrs_amg_galerkin_device(cmrscl_context ctx, const cmrscl_csr *r, const cmrscl_csr *a,
                         const cmrs_device_csr *a_on_device, const cmrscl_csr *p,
                         const cmrs_device_csr *p_on_device, size_t batch, cmrscl_csr *c,
                         cmrscl_csr *r_made, cmrs_device_csr *c_keep, cmrs_device_csr *r_keep);
/* The rows' counts (rows[1..n]) into their starts (rows[0..n]) on the host's threads, *nnz the
 * last, *longest the longest row; ERROR_UNSUPPORTED for a row counted -1 (more than `table`
 * columns: its table overflowed) or more than 2^31 - 1 entries (row_starts.c). */
CMRSCL_HIDDEN cmrscl_status cmrs_row_starts(int32_t *rows, int32_t n, int table, int64_t *nnz,
                                            int32_t *longest);
/* c = a b (cmrs_amg_spgemm's, bit for bit) made on ctx's device and left there, the caller's
 * (cmrscl_csr_multiply's product): a and b uploaded (once where b is a; *upload_seconds, after
 * the kernels are built), `batch` as for the Galerkin product; b_distinct: each of b's rows of
 * distinct columns (what a GPU's group fill needs). Its errors; on failure c is empty. */
CMRSCL_HIDDEN cmrscl_status cmrs_device_multiply(cmrscl_context ctx, const cmrscl_csr *a,
                                                 const cmrscl_csr *b, bool b_distinct, size_t batch,
                                                 cmrs_device_csr *c, double *upload_seconds);
/* p = t - omega D^-1 (a t), the smoothed prolongator (the host's, bit for bit: a t as
 * cmrs_amg_spgemm makes it, then amg_setup.c's smoothing), made on ctx's device and read back;
 * diag_inv: D^-1, rows of a. a_on_device and batch as for the Galerkin product; keep (may be
 * NULL): p's copy on the device, now the caller's, for that product (empty on failure). The
 * Galerkin product's errors; on failure p is empty. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_prolongator_device(cmrscl_context ctx, const cmrscl_csr *a,
                                                        const cmrs_device_csr *a_on_device,
                                                        const cmrscl_csr *t, const double *diag_inv,
                                                        double omega, size_t batch, cmrscl_csr *p,
                                                        cmrs_device_csr *keep);

/* ---- amg_rho_device.c: the estimate of rho on the device ---- */

/* cmrs_amg_spectral_radius's estimate, bit for bit, its passes on ctx's device (D^-1 made
 * there from a, as cmrs_amg_inverse_diagonal makes it); ERROR_UNSUPPORTED without fp64 or
 * beyond 2^31 - 1 entries. a_device (may be NULL): a's copy on the device - taken as it is
 * where it holds one already (a Galerkin product left it), else made there - the caller's
 * after the call (empty on failure); NULL: made for the call alone. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_spectral_radius_device(cmrscl_context ctx, const cmrscl_csr *a,
                                                            bool symmetric, int steps, double *rho,
                                                            cmrs_device_csr *a_device);
/* cmrs_amg_symmetric's verdict on a's copy on ctx's device (a canonical CSR); ERROR_UNSUPPORTED
 * without fp64. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_symmetric_device(cmrscl_context ctx, const cmrs_device_csr *a,
                                                      bool *symmetric);

/* ---- amg_coarse.c: the coarsest level's dense inverse ---- */

/* Inverts a (n x n, sparse) densely, from its Cholesky factor when it is SPD, else from LU
 * with partial pivoting (*lu_used); *inverse row-major, malloc'ed. ERROR_BREAKDOWN naming the
 * pivot if singular. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_coarse_inverse(const cmrscl_csr *a, double **inverse,
                                                    bool *lu_used);
/* x = A^-1 b with that inverse, row i's terms added in column order (x and b differ). */
CMRSCL_HIDDEN void cmrs_amg_coarse_solve(const double *inverse, int32_t n, const double *b,
                                         double *x);

/* ---- amg_cycle.c: the host cycle and CG preconditioned by it ---- */

/* One cycle for A x = b from x = 0: on each level the smoother before and after the coarse
 * correction (damped Jacobi: omega = jacobi_scale / rho(D^-1 A), 2/3 on a Poisson matrix; or
 * Chebyshev), h->visits corrections a level (a V- or a W-cycle), the coarsest level solved with
 * its dense inverse. A symmetric operator for symmetric A, so CG may use it. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_cycle(const cmrs_amg_hierarchy *h, const double *b, double *x);
/* The same cycle on vectors the caller keeps, to look at each level's after it: b[l], x[l]
 * and r[l] of level l's rows (b[0] the right-hand side, x[0] the result; the last level's
 * r[l] is not used). ERROR_OUT_OF_HOST_MEMORY for Chebyshev's vectors. */
/* The coarse corrections level l of `levels` makes in a cycle of `visits` (1: V, 2: W): one
 * where the next level is the coarsest, solved exactly. */
CMRSCL_HIDDEN int cmrs_amg_visits(int visits, int levels, int l);
CMRSCL_HIDDEN cmrscl_status cmrs_amg_cycle_levels(const cmrs_amg_hierarchy *h, double **b,
                                                  double **x, double **r);
/* Chebyshev's step `step` (0 the first) for rho(D^-1 A) = rho: d = c1 d + c2 D^-1 r (c1 0 at
 * the first), over PyAMG's interval [b / 30, b], b = 1.1 rho (Saad's Chebyshev iteration). */
CMRSCL_HIDDEN void cmrs_amg_chebyshev(double rho, int step, double *c1, double *c2);
/* CG on A x = b from the x given, preconditioned by one cycle of h (h NULL: plain CG),
 * until ||b - A x|| <= rtol ||b|| or max_iterations. *iterations and *relres (may be NULL)
 * say where it stopped; ERROR_BREAKDOWN when p^T A p <= 0. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_pcg(const cmrscl_csr *a, const cmrs_amg_hierarchy *h,
                                         const double *b, double *x, double rtol,
                                         int max_iterations, int *iterations, double *relres);

/* ---- amg_device.c: the cycle on the device ---- */

/* A level on the device: its operators as matrices of the library (each with its own plan),
 * its vectors and the smoother's diagonal. The last level keeps only b and x: the dense
 * inverse solves it. Level 0's b and x are the caller's r and z of the cycle running (borrowed,
 * never released here), or its own in a mixed-precision cycle. */
typedef struct cmrs_amg_device_level {
    cmrscl_matrix A, P, R; /* NULL on the last level */
    cl_mem b, x, r;        /* rows values each; r NULL on the last level */
    cl_mem d;              /* Chebyshev's direction; NULL with Jacobi and on the last level */
    cl_mem diag_inv;       /* NULL on the last level */
    double omega, rho;     /* Jacobi's weight; rho(D^-1 A), Chebyshev's interval */
    cl_uint rows;
} cmrs_amg_device_level;

typedef struct cmrs_amg_device {
    cmrscl_context ctx;
    cmrscl_precision precision;
    size_t value_size;
    int levels;
    cmrs_amg_device_level *level;
    cl_mem coarse_inverse; /* row-major */
    cl_uint coarse_rows;
    cl_kernel presmooth, jacobi, coarse; /* cl/amg.cl */
    cl_kernel cheb_first, cheb;          /* Chebyshev's steps */
    cl_kernel narrow, widen;             /* the caller's r in, z out: mixed precision only */
    int degree;                          /* the smoother: 1 Jacobi, 2.. Chebyshev */
    int visits;                          /* coarse corrections a level: 1 V, 2 W */
    bool mixed;                          /* a float cycle for double r and z */
    bool borrowed_a0;                    /* level 0's A is the caller's */
    size_t local;                        /* their work-group */
    bool out_of_order;                   /* the context's queue: barriers between steps */
} cmrs_amg_device;

/* ---- amg_builder.c: the device's matrices made beside the host's set-up ---- */

typedef struct cmrs_amg_builder cmrs_amg_builder;
/* A builder of matrices in `precision` on ctx; skip_a0: level 0's A is on the device already;
 * rows: level 0's. Where its sink makes the Galerkin products and the estimates of rho (the
 * device or the host) is decided here, CMRSCL_AMG_GALERKIN read once. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_builder_create(cmrscl_context ctx, cmrscl_precision precision,
                                                    bool skip_a0, int32_t rows,
                                                    cmrs_amg_builder **out);
/* The sink to give cmrs_amg_setup_to: each operator told is made on a thread of its own, in
 * the order told, one at a time. */
CMRSCL_HIDDEN cmrs_amg_sink cmrs_amg_builder_sink(cmrs_amg_builder *b);
/* Waits for every operator told (before any take); b may be NULL. */
CMRSCL_HIDDEN void cmrs_amg_builder_finish(cmrs_amg_builder *b);
/* The matrix made of level l's operator `which`, now the caller's; NULL where none was made
 * (b NULL, not finished, never told, failed, or not run after a failure). */
CMRSCL_HIDDEN cmrscl_matrix cmrs_amg_builder_take(cmrs_amg_builder *b, int level,
                                                  cmrs_amg_operator which);
/* How many of the set-up's Galerkin products b's device made (the others the host did). */
CMRSCL_HIDDEN int cmrs_amg_builder_galerkins(const cmrs_amg_builder *b);
/* How many of the set-up's smoothed prolongators b's device made. */
CMRSCL_HIDDEN int cmrs_amg_builder_prolongators(const cmrs_amg_builder *b);
/* How many of the set-up's estimates of rho b's device made (once the set-up has returned). */
CMRSCL_HIDDEN int cmrs_amg_builder_rhos(const cmrs_amg_builder *b);
/* How many of the matrices b made were converted from the device's own copies (a level's R and
 * the next level's A, where its Galerkin product was made there), once finished. */
CMRSCL_HIDDEN int cmrs_amg_builder_made_there(const cmrs_amg_builder *b);
/* Waits, then frees b and the matrices not taken. */
CMRSCL_HIDDEN void cmrs_amg_builder_free(cmrs_amg_builder *b);

/* Copies hierarchy h to ctx's device in `cycle` precision (values rounded to float for
 * CMRSCL_FLOAT): every level's A, P, R, diagonal and vectors, and the coarse inverse; r and z
 * of an apply are in `caller` precision (double around a float cycle: level 0 has vectors of
 * its own, converted to and from). a0: level 0's A already on the device (borrowed), or NULL
 * for a copy of h's. made (may be NULL): a finished builder of h's operators in `cycle`
 * precision, whose matrices are taken instead of made again. h may be freed afterwards. On
 * failure *out is empty. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_device_setup(cmrscl_context ctx, cmrscl_precision caller,
                                                  cmrscl_precision cycle,
                                                  const cmrs_amg_hierarchy *h, cmrscl_matrix a0,
                                                  cmrs_amg_builder *made, cmrs_amg_device *out);
/* New values for d from h, a hierarchy set up again on d's aggregates (cmrs_amg_setup_again):
 * the diagonals, weights, every level's matrices (not a borrowed level-0 A: its owner's) and
 * the coarse inverse; ERROR_INVALID_MATRIX where a level's pattern differs from d's. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_device_update(cmrs_amg_device *d, const cmrs_amg_hierarchy *h);
/* The device memory the hierarchy holds. */
CMRSCL_HIDDEN uint64_t cmrs_amg_device_bytes(const cmrs_amg_device *d);
/* Enqueues one cycle z = M r on the context's queue (r and z: level 0's rows, buffers of
 * the caller's precision): the host cycle's steps in its order; nothing is read back or
 * waited for. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_device_apply(cmrs_amg_device *d, cl_mem r, cl_mem z);
/* The commands (kernels and copies) a cycle enqueues, for a solver's count of its launches. */
CMRSCL_HIDDEN int cmrs_amg_device_commands(const cmrs_amg_device *d);
/* Reads level l's vector which ('b', 'x' or 'r') into out (double), after the queue's work:
 * for the tests, which compare the cycle level by level with the host's. */
CMRSCL_HIDDEN cmrscl_status cmrs_amg_device_read(const cmrs_amg_device *d, int l, char which,
                                                 double *out);
CMRSCL_HIDDEN void cmrs_amg_device_free(cmrs_amg_device *d);

/* ---- precond_api.c: the public preconditioner objects (include/cmrscl_precond.h) ---- */

struct cmrscl_precond_s {
    cmrscl_context ctx;
    cmrscl_precision precision;
    int32_t rows;
    int64_t entries;                /* A's at set-up */
    uint64_t pattern;               /* a hash of A's pattern at set-up */
    cmrs_amg_options options;       /* the set-up's, for an update */
    double *near_null;              /* options.near_null's copy */
    cmrs_amg_aggregates aggregates; /* kept for an update */
    cmrs_amg_device device;         /* the hierarchy on the device: what a solve applies */
    /* a float cycle's level 0: the caller's double matrix rounded on the device (or NULL) */
    cmrscl_matrix float_a0;
    cmrscl_amg_info info;
};

#endif /* CMRSCL_PRECOND_STAGE_H */
