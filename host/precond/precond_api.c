/* precond_api.c - the preconditioner objects of include/cmrscl_precond.h: AMG's options
 * checked and read as a versioned view, the hierarchy set up on the host (amg_setup.c), put on
 * the device (amg_device.c) and described, then the host's copy dropped - a solve needs only
 * the device's. */
#include "precond/precond.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The caller's options over the defaults: the bytes it knows of them (struct_size; 0 reads
 * as the first version, which is the whole struct today). */
static cmrscl_status amg_options(const cmrscl_amg_options *in, cmrs_amg_options *out,
                                 cmrscl_matrix *level0)
{
    *level0 = NULL;
    cmrs_amg_options_default(out);
    if (!in)
        return CMRSCL_OK;
    cmrscl_amg_options o = CMRSCL_AMG_OPTIONS_INIT;
    size_t size = in->struct_size ? in->struct_size : sizeof o;
    memcpy(&o, in, size < sizeof o ? size : sizeof o);
    if (size < sizeof o.struct_size + sizeof o.theta)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "AMG options: struct_size %zu is smaller than any version's", size);
    if (o.max_coarse < 0 || o.max_levels < 0 || o.max_levels == 1 ||
        o.max_levels > CMRSCL_AMG_MAX_LEVELS || (unsigned)o.unsmoothed > 1 ||
        (unsigned)o.float_cycle > 1)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "AMG options: max_coarse %d (>= 0), max_levels %d (0 or 2..%d), "
                           "unsmoothed %d, float_cycle %d (0 or 1)",
                           o.max_coarse, o.max_levels, CMRSCL_AMG_MAX_LEVELS, o.unsmoothed,
                           o.float_cycle);
    out->theta = o.theta;
    out->float_cycle = o.float_cycle != 0;
    if (size >= offsetof(cmrscl_amg_options, matrix) + sizeof o.matrix)
        *level0 = o.matrix;
    if (size >= offsetof(cmrscl_amg_options, chebyshev) + sizeof o.chebyshev) {
        if (o.chebyshev == 1 || o.chebyshev < 0 || o.chebyshev > CMRSCL_AMG_MAX_DEGREE)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "AMG options: chebyshev %d (0: Jacobi, or a degree 2..%d)",
                               o.chebyshev, CMRSCL_AMG_MAX_DEGREE);
        out->degree = o.chebyshev ? o.chebyshev : 1;
    }
    if (size >= offsetof(cmrscl_amg_options, block_size) + sizeof o.block_size) {
        if (o.near_null_count < 0 || o.near_null_count > CMRSCL_AMG_MAX_CANDIDATES ||
            (o.near_null_count > 1 && !o.near_null) || (o.near_null && !o.near_null_count) ||
            o.block_size < 0)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "AMG options: near_null_count %d (0..%d, with near_null given "
                               "past 1), block_size %d (>= 0)",
                               o.near_null_count, CMRSCL_AMG_MAX_CANDIDATES, o.block_size);
        out->near_null_count = o.near_null_count ? o.near_null_count : 1;
        out->near_null = o.near_null;
        out->block_size = o.block_size ? o.block_size : 1;
    }
    if (size >= offsetof(cmrscl_amg_options, cycle) + sizeof o.cycle) {
        if (o.cycle != CMRSCL_AMG_CYCLE_V && o.cycle != CMRSCL_AMG_CYCLE_W)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "AMG options: cycle %d (CMRSCL_AMG_CYCLE_V 0 or _W 1)", o.cycle);
        out->visits = o.cycle == CMRSCL_AMG_CYCLE_W ? 2 : 1;
    }
    out->smooth = !o.unsmoothed;
    if (o.max_coarse)
        out->max_coarse = o.max_coarse;
    if (o.max_levels)
        out->max_levels = o.max_levels;
    return CMRSCL_OK;
}

/* A borrowed level-0 matrix must be a's, in the precision and context. */
static cmrscl_status check_level0(cmrscl_context ctx, cmrscl_precision precision,
                                  const cmrscl_csr *a, cmrscl_matrix m)
{
    if (m->ctx != ctx || m->params.precision != precision || m->params.rows != a->rows ||
        m->params.cols != a->cols || m->params.nnz != a->nnz)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "AMG options: matrix is %lld x %lld with %lld entries in %s%s; A is "
                           "%d x %d with %lld entries in %s",
                           (long long)m->params.rows, (long long)m->params.cols,
                           (long long)m->params.nnz, cmrscl_precision_name(m->params.precision),
                           m->ctx != ctx ? " on another context" : "", (int)a->rows, (int)a->cols,
                           (long long)a->nnz, cmrscl_precision_name(precision));
    return CMRSCL_OK;
}

/* A hash of a's pattern (rows, row_ptr, col_ind) over pieces of PATTERN_PIECE on the host's
 * threads, the pieces' hashes then hashed in order - the same whatever the threads. A word a
 * step (FNV-1a's multiply on whole values, then a final mix): a pass that every set-up pays. */
#define PATTERN_PIECE ((int64_t)1 << 20)
typedef struct pattern_job {
    const cmrscl_csr *a;
    uint64_t *hash; /* a piece's */
} pattern_job;

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static uint64_t finish(uint64_t h)
{
    h ^= h >> 33, h *= 0xff51afd7ed558ccdull, h ^= h >> 33;
    return h;
}

static void pattern_piece(void *ctx, int64_t piece)
{
    const pattern_job *j = ctx;
    int64_t begin = piece * PATTERN_PIECE, end = begin + PATTERN_PIECE;
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t k = begin; k < end && k < j->a->nnz; ++k)
        h = mix(h, (uint64_t)(uint32_t)j->a->col_ind[k]);
    for (int64_t i = begin; i < end && i <= j->a->rows; ++i)
        h = mix(h, (uint64_t)j->a->row_ptr[i]);
    j->hash[piece] = finish(h);
}

static cmrscl_status pattern_hash(const cmrscl_csr *a, uint64_t *out)
{
    int64_t longest = a->nnz > a->rows + 1 ? a->nnz : a->rows + 1;
    int64_t pieces = (longest + PATTERN_PIECE - 1) / PATTERN_PIECE;
    uint64_t *hash = cmrscl_alloc((size_t)pieces + 1, sizeof(uint64_t));
    if (!hash)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG: a pattern's hash");
    pattern_job job = {a, hash};
    cmrs_parallel_pieces(cmrs_parallel_threads(), pieces, pattern_piece, &job);
    uint64_t h = mix(0xcbf29ce484222325ull, (uint64_t)a->rows);
    for (int64_t p = 0; p < pieces; ++p)
        h = mix(h, hash[p]);
    free(hash);
    *out = finish(h);
    return CMRSCL_OK;
}

/* The hierarchy's device memory: its levels' and a float cycle's level 0. */
static uint64_t device_bytes(const struct cmrscl_precond_s *p)
{
    return cmrs_amg_device_bytes(&p->device) + (p->float_a0 ? p->float_a0->params.device_bytes : 0);
}

static void describe(const cmrs_amg_hierarchy *h, cmrscl_amg_info *info)
{
    info->levels = h->levels;
    for (int l = 0; l < h->levels && l < CMRSCL_AMG_MAX_LEVELS; ++l)
        info->rows[l] = h->level[l].A.rows, info->entries[l] = h->level[l].A.nnz,
        info->rho[l] = h->level[l].rho;
    info->operator_complexity = h->operator_complexity;
    info->grid_complexity = h->grid_complexity;
    info->theta = h->theta;
    info->seconds_smoother = h->times.smoother;
    info->seconds_strength = h->times.strength;
    info->seconds_aggregation = h->times.aggregation;
    info->seconds_prolongator = h->times.prolongator;
    info->seconds_rap = h->times.rap;
    info->seconds_coarse = h->times.coarse_inverse;
}

cmrscl_status cmrscl_precond_create_amg(cmrscl_context ctx, cmrscl_precision precision,
                                        const cmrscl_csr *a, const cmrscl_amg_options *opt,
                                        cmrscl_precond *out)
{
    if (out)
        *out = NULL;
    if (!ctx || !a || !out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "context, matrix or out is NULL");
    if (precision != CMRSCL_FLOAT && precision != CMRSCL_DOUBLE)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "AMG: precision %d is neither float nor double", (int)precision);
    double t0 = cmrscl_seconds();
    cmrs_amg_options o;
    cmrscl_matrix level0;
    cmrscl_status st = amg_options(opt, &o, &level0);
    if (st == CMRSCL_OK && level0)
        st = check_level0(ctx, precision, a, level0);
    if (st == CMRSCL_OK && level0 && level0->renumbering)
        level0 = NULL; /* the cycle runs its products in the caller's numbering */
    /* the float cycle's level 0: the caller's matrix rounded where it lies (where it cannot
     * be, the builder makes a float copy from the host's CSR as for no matrix given) */
    cmrscl_matrix float_a0 = NULL;
    if (st == CMRSCL_OK && level0 && o.float_cycle && precision == CMRSCL_DOUBLE)
        level0 = cmrs_matrix_float_twin(level0, &float_a0) == CMRSCL_OK ? float_a0 : NULL;
    cmrscl_precision cycle = o.float_cycle ? CMRSCL_FLOAT : precision;
    /* the device's matrices made beside the host's set-up where it has threads to spare, and
     * its Galerkin products on the device (without a builder, the host makes them all) */
    cmrs_amg_builder *builder = NULL;
    if (st == CMRSCL_OK &&
        cmrs_amg_builder_create(ctx, cycle, level0 != NULL, a->rows, &builder) != CMRSCL_OK)
        builder = NULL;
    cmrs_amg_sink sink = cmrs_amg_builder_sink(builder);
    cmrs_amg_hierarchy h = {0};
    if (st == CMRSCL_OK)
        st = cmrs_amg_setup_to(a, &o, builder ? &sink : NULL, &h);
    cmrscl_precond p = st == CMRSCL_OK ? calloc(1, sizeof *p) : NULL;
    if (st == CMRSCL_OK && !p)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a preconditioner");
    double t1 = cmrscl_seconds();
    cmrs_amg_builder_finish(builder);
    double t2 = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = cmrs_amg_device_setup(ctx, precision, cycle, &h, level0, builder, &p->device);
    cmrs_amg_builder_free(builder);
    double t3 = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = pattern_hash(a, &p->pattern);
    cmrscl_trace(
        "AMG after the host's set-up: the builder joined %.3f s, the cycle's device set-up "
        "%.3f, the pattern's hash %.3f (ends at %.3f)",
        t2 - t1, t3 - t2, cmrscl_seconds() - t3, cmrscl_seconds());
    if (st == CMRSCL_OK)
        st = cmrs_amg_take_aggregates(&h, &p->aggregates);
    size_t candidates = o.near_null ? (size_t)a->rows * (size_t)o.near_null_count : 0;
    if (st == CMRSCL_OK && candidates) { /* kept for an update: the caller's may go */
        p->near_null = cmrs_parallel_alloc(candidates, sizeof(double));
        if (p->near_null)
            cmrs_parallel_copy(p->near_null, o.near_null, candidates * sizeof(double));
        else
            st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG: the near-null space");
        o.near_null = p->near_null;
    }
    if (st == CMRSCL_OK) {
        p->ctx = ctx, p->precision = precision, p->rows = a->rows, p->entries = a->nnz;
        p->float_a0 = float_a0, float_a0 = NULL;
        p->options = o;
        describe(&h, &p->info);
        p->info.seconds_device = cmrscl_seconds() - t1;
        p->info.device_bytes = device_bytes(p);
        p->info.cycle_precision = p->device.precision;
        p->info.seconds_total = cmrscl_seconds() - t0;
        *out = p;
    } else if (p) {
        cmrs_amg_device_free(&p->device);
        cmrs_amg_aggregates_free(&p->aggregates);
        free(p->near_null);
        free(p);
    }
    cmrs_amg_free(&h);
    cmrscl_matrix_free(float_a0); /* (taken by p, or a failed set-up's) */
    return st;
}

cmrscl_status cmrscl_precond_amg_update(cmrscl_precond p, const cmrscl_csr *a)
{
    if (!p || !a)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "preconditioner or matrix is NULL");
    double t0 = cmrscl_seconds();
    uint64_t hash = 0;
    cmrscl_status st = a->rows == p->rows && a->cols == p->rows && a->nnz == p->entries
                           ? pattern_hash(a, &hash)
                           : CMRSCL_OK;
    if (st == CMRSCL_OK && hash != p->pattern)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                           "AMG update: A's pattern (%d x %d, %lld entries) is not the set-up's "
                           "(%d rows, %lld entries): make a new preconditioner",
                           (int)a->rows, (int)a->cols, (long long)a->nnz, (int)p->rows,
                           (long long)p->entries);
    cmrs_amg_hierarchy h = {0};
    if (st == CMRSCL_OK)
        st = cmrs_amg_setup_again(a, &p->options, &p->aggregates, &h);
    double t1 = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = cmrs_amg_device_update(&p->device, &h);
    if (st == CMRSCL_OK && p->float_a0) /* level 0 the caller's matrix rounded: rounded again */
        st = cmrscl_matrix_update_values(p->float_a0, a->values, CMRSCL_DOUBLE);
    if (st == CMRSCL_OK) {
        describe(&h, &p->info);
        p->info.device_bytes = device_bytes(p); /* (updates may add arrays: a permutation) */
        p->info.seconds_device = cmrscl_seconds() - t1;
        p->info.seconds_total = cmrscl_seconds() - t0;
    }
    cmrs_amg_free(&h);
    return st;
}

cmrscl_status cmrscl_precond_amg_info(cmrscl_precond p, cmrscl_amg_info *out)
{
    if (!p || !out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "preconditioner or out is NULL");
    *out = p->info;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_precond_amg_aggregates(cmrscl_precond p, int level, int32_t *out)
{
    if (!p || !out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "preconditioner or out is NULL");
    if (level < 0 || level + 1 >= p->aggregates.levels)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "AMG aggregates: level %d of a hierarchy of %d levels (0..%d have "
                           "aggregates)",
                           level, p->aggregates.levels, p->aggregates.levels - 2);
    memcpy(out, p->aggregates.aggregate[level], (size_t)p->info.rows[level] * sizeof(int32_t));
    return CMRSCL_OK;
}

cmrscl_status cmrscl_precond_check(cmrscl_precond p, cmrscl_context ctx, cmrscl_precision precision,
                                   int32_t rows)
{
    if (!p || !ctx)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "preconditioner or context is NULL");
    if (p->ctx != ctx)
        return cmrscl_fail(CMRSCL_ERROR_CONTEXT_MISMATCH,
                           "the preconditioner belongs to another context than the matrix");
    if (p->precision != precision || p->rows != rows)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "the preconditioner was made for %d rows in %s; the matrix has %d rows "
                           "in %s",
                           (int)p->rows, cmrscl_precision_name(p->precision), (int)rows,
                           cmrscl_precision_name(precision));
    return CMRSCL_OK;
}

cmrscl_status cmrscl_precond_apply(cmrscl_precond p, cl_mem r, cl_mem z)
{
    if (!p)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "preconditioner is NULL");
    size_t bytes = (size_t)p->rows * cmrscl_precision_size(p->precision);
    cmrscl_status st = cmrs_buffer_check(p->ctx->context, r, bytes, "r");
    if (st == CMRSCL_OK)
        st = cmrs_buffer_check(p->ctx->context, z, bytes, "z");
    if (st == CMRSCL_OK && r == z)
        st = cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "r and z must be different buffers");
    return st == CMRSCL_OK ? cmrs_amg_device_apply(&p->device, r, z) : st;
}

void cmrscl_precond_free(cmrscl_precond p)
{
    if (!p)
        return;
    cmrs_amg_device_free(&p->device);
    cmrscl_matrix_free(p->float_a0);
    cmrs_amg_aggregates_free(&p->aggregates);
    free(p->near_null);
    free(p);
}

cmrscl_status cmrscl_rigid_body_modes(int32_t nodes, const double *xyz, double *modes)
{
    if (nodes < 0 || (nodes && (!xyz || !modes)))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "rigid-body modes: %d nodes, coordinates or modes NULL", (int)nodes);
    double c[3] = {0, 0, 0};
    for (int32_t n = 0; n < nodes; ++n)
        for (int d = 0; d < 3; ++d)
            c[d] += xyz[3 * (size_t)n + d] / nodes;
    size_t rows = 3 * (size_t)nodes;
    for (int32_t n = 0; n < nodes; ++n) {
        double x = xyz[3 * (size_t)n] - c[0], y = xyz[3 * (size_t)n + 1] - c[1],
               z = xyz[3 * (size_t)n + 2] - c[2];
        /* the displacement (u, v, w) of each mode at the point: three translations, then the
         * rotations about x (0, -z, y), y (z, 0, -x) and z (-y, x, 0) */
        const double mode[6][3] = {{1, 0, 0},  {0, 1, 0},  {0, 0, 1},
                                   {0, -z, y}, {z, 0, -x}, {-y, x, 0}};
        for (int m = 0; m < 6; ++m)
            for (int d = 0; d < 3; ++d)
                modes[m * rows + 3 * (size_t)n + d] = mode[m][d];
    }
    return CMRSCL_OK;
}
