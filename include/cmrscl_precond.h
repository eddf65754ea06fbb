/* cmrscl_precond.h - preconditioners applied on the device, for the solvers of cmrscl_solve.h
 * (host/precond/). Included by cmrscl.h; include that, not this file.
 *
 * Smoothed-aggregation algebraic multigrid (AMG), as PyAMG's smoothed_aggregation_solver
 * defines it: symmetric strength of connection, standard (greedy, deterministic) aggregation,
 * a tentative prolongator from the constant vector, smoothed by damped Jacobi with an
 * estimated spectral radius, Galerkin coarse operators R A P with R = P^T, levels until a
 * coarse size, the coarsest level inverted densely. The hierarchy is set up on the host (its
 * phases timed), then every level's A, P and R becomes a matrix of the library on the device
 * with a plan of its own. A V-cycle (or a W-cycle) - one damped-Jacobi sweep before and after
 * the coarse correction - runs on the device with no host read inside it: z = M r. The same matrix
 * and options give the same hierarchy and the same bits run after run. */
#ifndef CMRSCL_PRECOND_H
#define CMRSCL_PRECOND_H

#include "cmrscl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* AMG's options. A versioned view, as cmrscl_params: struct_size says how much of it the
 * caller knows (CMRSCL_AMG_OPTIONS_INIT; 0 reads as the first version). Zeros are the
 * defaults; NULL is the same. */
typedef struct cmrscl_amg_options {
    size_t struct_size;
    /* strong: |a_ij| >= theta sqrt(|a_ii a_jj|), and at theta > 0 the prolongator smoothed
     * without the weak couplings (their values added to the diagonal: amgcl's filtered matrix;
     * not where block_size > 1, whose nodes are smoothed with A itself).
     * 0: every coupling (PyAMG's default) - unless a level has rows many times its mean (the
     * hubs of power-law graphs) or its aggregates spread each row over nearly as many of them
     * (random graphs, which expand), where every coupling strong fills the coarse levels:
     * such a level takes 0.25 (cmrscl_amg_info.theta gives the largest a level took; a tiny
     * theta such as 1e-12 keeps every coupling strong on any matrix) */
    double theta;
    int unsmoothed; /* 1: plain aggregation, P the tentative prolongator (cheaper set-up) */
    /* stop coarsening at this many rows or fewer; 0: 500. The coarsest level is inverted
     * densely: a hierarchy that stops coarsening (levels run out, or theta leaves too few
     * couplings strong) above max(max_coarse, 2048) rows fails with ERROR_INVALID_ARGUMENT
     * and the reason, rather than inverting thousands of rows for minutes */
    int max_coarse;
    int max_levels; /* levels at most, the finest counted, 2..CMRSCL_AMG_MAX_LEVELS; 0: 10 */
    /* 1: the hierarchy and its cycle in float under a double solve (mixed precision: half the
     * bytes a cycle streams; r and z stay double, converted at the cycle's ends). The cycle
     * only preconditions, so its rounding changes the iterations, not the answer's accuracy */
    int float_cycle;
    /* A already on the device (the matrix a solver takes, made from the same CSR in the same
     * precision and context): level 0 multiplies by it instead of a copy of its own - less
     * set-up and device memory. Borrowed: free it after the preconditioner. NULL: a copy. A
     * float cycle under a double matrix rounds it on the device: its plan, its index arrays
     * shared, values of its own in float - refreshed by cmrscl_precond_amg_update, not by an
     * update of the matrix. */
    cmrscl_matrix matrix;
    /* The smoother: 0 one damped-Jacobi sweep before and after the coarse correction; k in
     * 2..CMRSCL_AMG_MAX_DEGREE a Chebyshev polynomial of degree k in D^-1 A (PyAMG's bounds,
     * [1/30, 1.1] x rho): k products a sweep, fewer iterations */
    int chebyshev;
    /* The near-null space: near_null_count vectors (1..CMRSCL_AMG_MAX_CANDIDATES) of the
     * matrix's rows each, column-major in near_null (copied). 0 and NULL: the constant vector.
     * For 3-D elasticity, the six rigid-body modes (cmrscl_rigid_body_modes) with block_size
     * 3: each aggregate then carries all six to the coarse level, where the constant alone
     * cannot represent rotations - far fewer iterations. */
    int near_null_count;
    const double *near_null;
    /* unknowns a node (consecutive rows: a point's x, y, z), aggregated together; 0 or 1: each
     * row alone. The rows must be whole nodes. */
    int block_size;
    /* The first version's tail padding, named so that the fields after it lie past the size
     * its callers give (struct_size): never read. */
    int reserved_v1;
    /* The cycle (cmrscl_amg_cycle): the V-cycle, each level corrected once from the next; or the
     * W-cycle, twice - the second time from the residual the first left - on every level whose
     * next is not the coarsest: fewer iterations, each dearer (level l visited up to 2^l
     * times). Callers of the first version get the V-cycle. */
    int cycle;
} cmrscl_amg_options;
typedef enum cmrscl_amg_cycle { CMRSCL_AMG_CYCLE_V = 0, CMRSCL_AMG_CYCLE_W = 1 } cmrscl_amg_cycle;
#define CMRSCL_AMG_OPTIONS_INIT                                                                    \
    {                                                                                              \
        sizeof(cmrscl_amg_options), 0.0, 0, 0, 0, 0, NULL, 0, 0, NULL, 0, 0, 0                     \
    }
/* The first version's size (to the cycle, which it lacks): what its callers give as struct_size. */
#define CMRSCL_AMG_OPTIONS_SIZE_V1 (offsetof(cmrscl_amg_options, cycle))
#define CMRSCL_AMG_MAX_LEVELS 16
#define CMRSCL_AMG_MAX_DEGREE 8
#define CMRSCL_AMG_MAX_CANDIDATES 16

/* What a hierarchy is: its levels' sizes, complexities and set-up times by phase. */
typedef struct cmrscl_amg_info {
    int levels;
    int32_t rows[CMRSCL_AMG_MAX_LEVELS];
    int64_t entries[CMRSCL_AMG_MAX_LEVELS];
    double operator_complexity; /* the levels' entries over A's */
    double grid_complexity;     /* the levels' rows over A's */
    /* seconds: strength, aggregation, prolongators, Galerkin products (with the transposes
     * R = P^T, made on the GPU with the product where a GPU makes it), the coarse inverse (on the
     * host), the upload and the levels' plans (device), and all of it. With more than one
     * host thread (CMRSCL_THREADS) the levels' operators go to the device beside the host's
     * phases, each as soon as it is made: seconds_device is then what is left after them */
    double seconds_strength, seconds_aggregation, seconds_prolongator, seconds_rap, seconds_coarse,
        seconds_device, seconds_total;
    uint64_t
        device_bytes; /* device memory of the hierarchy: operators, vectors (not a borrowed A) */
    cmrscl_precision cycle_precision; /* the hierarchy's values (float with float_cycle) */
    /* the levels' diagonals, level 0's symmetry check and the spectral radii (on the host, or
     * the radii of large levels on a GPU). A level's radius is estimated beside its strength
     * and aggregation, so the phases may add up to more than seconds_total; the prolongator's
     * phase includes any wait for it */
    double seconds_smoother;
    /* each level's estimate of rho(D^-1 A), from below (Lanczos for a symmetric A, else the
     * power method), which weighs its smoothers (Jacobi: 4/3 / rho; Chebyshev: [1/30, 1.1] x
     * rho) */
    double rho[CMRSCL_AMG_MAX_LEVELS];
    /* the largest strength threshold a level took: the options', or - theta left 0 on a level
     * with hubs or whose aggregates spread - the one that keeps R A P sparse there (above) */
    double theta;
} cmrscl_amg_info;

typedef struct cmrscl_precond_s *cmrscl_precond;

/* AMG for the square matrix a (CSR in double on the host, every diagonal entry positive; a
 * row's columns in any order, repeats summed - the set-up works on a canonical copy then), on
 * ctx's device in `precision`. The solver takes it through cmrscl_solve_options (preconditioner
 * CMRSCL_PRECONDITIONER_AMG, precond). ERROR_INVALID_MATRIX names a zero or negative diagonal
 * entry or a matrix that is not square; ERROR_BREAKDOWN a singular coarsest level. */
CMRSCL_API cmrscl_status cmrscl_precond_create_amg(cmrscl_context ctx, cmrscl_precision precision,
                                                   const cmrscl_csr *a,
                                                   const cmrscl_amg_options *opt,
                                                   cmrscl_precond *out);
CMRSCL_API cmrscl_status cmrscl_precond_amg_info(cmrscl_precond p, cmrscl_amg_info *out);
/* The six rigid-body modes of 3-D elasticity at `nodes` points (xyz: x, y, z of each) into
 * modes (3 nodes x 6, column-major; a node's unknowns x, y, z consecutive): the translations
 * along x, y and z, then the rotations about them, about the points' centroid - the near-null
 * space AMG needs for elasticity (cmrscl_amg_options.near_null, block_size 3). */
CMRSCL_API cmrscl_status cmrscl_rigid_body_modes(int32_t nodes, const double *xyz, double *modes);
/* New values of A, its pattern unchanged (a time step, a Newton step): the hierarchy computed
 * again on the same aggregates - diagonals, smoothers, prolongators, Galerkin operators, the
 * coarse inverse - and its device matrices updated in place; cheaper than a new one by the
 * strength and aggregation phases and the device matrices' plans. A level-0 matrix borrowed
 * through cmrscl_amg_options.matrix is its owner's to update (cmrscl_matrix_update_values);
 * a float cycle's level 0, that matrix rounded, is the preconditioner's, updated here.
 * The info's times become the update's. ERROR_INVALID_MATRIX when the pattern differs. */
CMRSCL_API cmrscl_status cmrscl_precond_amg_update(cmrscl_precond p, const cmrscl_csr *a);
/* Level l's aggregates (0 <= l < levels - 1) into out[rows of level l]: each row's aggregate,
 * a row of level l + 1, or -1 for a row in none (its row of P is zero). To look at the
 * hierarchy, or to build another library's from the same aggregates (PyAMG's 'predefined'
 * aggregation). ERROR_INVALID_ARGUMENT for a level out of range. */
CMRSCL_API cmrscl_status cmrscl_precond_amg_aggregates(cmrscl_precond p, int level, int32_t *out);
/* Whether p can precondition a solve on ctx of a square matrix of `rows` rows in `precision`:
 * CMRSCL_OK, else ERROR_INVALID_ARGUMENT (ERROR_CONTEXT_MISMATCH for another context) with a
 * message naming what differs. The solvers check a preconditioner so before they take it;
 * for a caller that hands one on (a rank's own block, say). */
CMRSCL_API cmrscl_status cmrscl_precond_check(cmrscl_precond p, cmrscl_context ctx,
                                              cmrscl_precision precision, int32_t rows);
/* z = M r, enqueued on the context's queue (buffers of the precision, of the matrix's rows);
 * returns when enqueued. */
CMRSCL_API cmrscl_status cmrscl_precond_apply(cmrscl_precond p, cl_mem r, cl_mem z);
CMRSCL_API void cmrscl_precond_free(cmrscl_precond p);

/* ---- C = A B: the Galerkin products' sparse product, for any two matrices -------------- */

/* Where cmrscl_csr_multiply made C, and in how long. */
typedef struct cmrscl_multiply_info {
    int on_device;          /* 1: on the context's device; 0: on the host's threads */
    char reason[160];       /* where on_device is 0: why the device did not make it */
    double product_seconds; /* the product: A and B up, C's rows counted, placed, summed and
                               sorted - C on the device (or made on the host), host clock */
    double upload_seconds;  /* of which A and B up (0 on the host) */
    double seconds;         /* the whole call: the product, then C read back and/or made a matrix */
} cmrscl_multiply_info;

/* C = A B (a: m x k, b: k x n, valid CSR; b may be a) in double, on ctx's device - each row of
 * C's columns counted in a table of its own (on a GPU, a work-group a row with its table in
 * local memory for rows of many products or columns), the rows placed, the products summed,
 * the row sorted - as AMG's Galerkin products are made. C is canonical (columns ascending) and
 * keeps every structural product: an entry whose products cancel is stored, as 0. Each entry
 * is summed in the order of A's row and then B's rows, without fma: the same bits whichever
 * made it, run after run. The host's threads make C instead where the device cannot - no fp64,
 * a row of C of more than 1024 columns, more than 2^31 - 1 entries, an error of the device's
 * (info->reason says which) - or where ctx is NULL (the reference). Out: c_matrix (may be NULL) a
 * matrix of ctx in `precision` at the plan's defaults, made on the device from C's copy there;
 * c_csr (may be NULL) C read back; not both NULL (c_matrix needs ctx). info may be NULL.
 * ERROR_INVALID_ARGUMENT for shapes that do not match or a bad argument, ERROR_INVALID_MATRIX
 * for an invalid CSR (the message names it). */
CMRSCL_API cmrscl_status cmrscl_csr_multiply(cmrscl_context ctx, const cmrscl_csr *a,
                                             const cmrscl_csr *b, cmrscl_precision precision,
                                             cmrscl_matrix *c_matrix, cmrscl_csr *c_csr,
                                             cmrscl_multiply_info *info);

#ifdef __cplusplus
}
#endif
#endif /* CMRSCL_PRECOND_H */
