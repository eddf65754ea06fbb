/* amg_setup.c - the smoothed-aggregation AMG hierarchy on the host (issue 57), after PyAMG's
 * smoothed_aggregation_solver and amgcl's coarsening::smoothed_aggregation: level after level,
 * strong couplings -> aggregates -> tentative T -> P = (I - omega D^-1 A) T -> A_c = P^T A P,
 * until a level is small enough to factor densely, the levels run out, or aggregation stops
 * reducing. Each phase's time is kept, so the later device setup knows what it competes with. */
#include "precond/precond.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void cmrs_amg_options_default(cmrs_amg_options *opt)
{
    *opt = (cmrs_amg_options){.theta = 0.0,
                              .smooth = true,
                              .smooth_scale = 4.0 / 3.0,
                              .jacobi_scale = 4.0 / 3.0,
                              .rho_steps = 15,
                              .max_coarse = 500,
                              .degree = 1,
                              .max_levels = 10,
                              .min_coarsening = 0.9,
                              .near_null_count = 1,
                              .near_null = NULL,
                              .block_size = 1,
                              .visits = 1};
}

static cmrscl_status check_options(const cmrs_amg_options *o)
{
    if (!(o->theta >= 0 && o->theta <= 1) || !(o->smooth_scale > 0) || !(o->jacobi_scale > 0) ||
        o->rho_steps < 1 || o->rho_steps > AMG_MAX_RHO_STEPS || o->max_coarse < 1 ||
        o->max_levels < 1 || o->degree < 1 || o->degree > CMRSCL_AMG_MAX_DEGREE ||
        !(o->min_coarsening > 0 && o->min_coarsening <= 1) || o->visits < 1 || o->visits > 2)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "AMG options: theta %g (0..1), smooth_scale %g and jacobi_scale %g "
                           "(> 0), rho_steps %d (1..%d), max_coarse %d, max_levels %d (>= 1), "
                           "min_coarsening %g (0..1], degree %d (1..%d), visits %d (1 or 2)",
                           o->theta, o->smooth_scale, o->jacobi_scale, o->rho_steps,
                           AMG_MAX_RHO_STEPS, (int)o->max_coarse, o->max_levels, o->min_coarsening,
                           o->degree, CMRSCL_AMG_MAX_DEGREE, o->visits);
    if (o->near_null_count < 1 || o->near_null_count > CMRSCL_AMG_MAX_CANDIDATES ||
        (o->near_null_count > 1 && !o->near_null) || o->block_size < 1)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "AMG near-null space: %d vectors (1..%d; more than one must be given), "
                           "block size %d (>= 1)",
                           o->near_null_count, CMRSCL_AMG_MAX_CANDIDATES, o->block_size);
    return CMRSCL_OK;
}

/* Level l's estimate of rho(D^-1 A). Nothing needs it before the level's prolongator is
 * smoothed, so its Lanczos steps - bound by the host's memory bandwidth, each on the host's
 * threads - run on a thread of their own beside strength, aggregation (whose greedy passes
 * keep one core), T and the host's product A T, which needs no omega (build_level); the
 * level's phases may then add up to more than the set-up took.
 * The estimate is the same bits wherever it runs (amg_rho.c adds its sums in a fixed order),
 * on the host or - where the sink takes it - on a device (amg_rho_device.c). A thread that
 * cannot be started leaves the steps to the caller's. */
typedef struct rho_task {
    cmrs_amg_level *level;
    int index;                 /* the level's */
    const cmrs_amg_sink *sink; /* whose rho may make the estimate (NULL: the host) */
    bool decide; /* level 0: whether the hierarchy is symmetric is decided here first (R A P
                    with R = P^T is, up to the rounding of its sums) */
    bool symmetric, pending, applied;
    atomic_bool done;  /* the estimate is in (read before the join, so the set-up can tell) */
    atomic_bool there; /* ... and was the sink's (a host A T stops for the sink's P then) */
    int steps;
    double rho, seconds;
    cmrscl_status st;
    pthread_t id;
    char message[256];
} rho_task;

static void *rho_run(void *arg)
{
    rho_task *t = arg;
    double t0 = cmrscl_seconds();
    const cmrs_amg_level *lv = t->level;
    const cmrs_amg_sink *sink = t->sink;
    t->st = t->decide ? cmrs_amg_symmetric_sending(&lv->A, sink, &t->symmetric) : CMRSCL_OK;
    if (t->decide)
        cmrscl_trace("AMG level 0: symmetry decided (and A sent ahead) in %.3f s",
                     cmrscl_seconds() - t0);
    bool elsewhere =
        t->st == CMRSCL_OK && sink && sink->rho &&
        sink->rho(sink->ctx, t->index, &lv->A, t->symmetric, t->steps, &t->rho) == CMRSCL_OK;
    if (t->st == CMRSCL_OK && !elsewhere)
        t->st = cmrs_amg_spectral_radius(&lv->A, lv->diag_inv, t->symmetric, t->steps, &t->rho);
    if (t->st != CMRSCL_OK)
        snprintf(t->message, sizeof t->message, "%s", cmrscl_last_error());
    t->seconds = cmrscl_seconds() - t0;
    cmrscl_trace("AMG level %d: rho from %.3f to %.3f", t->index, t0, t0 + t->seconds);
    atomic_store(&t->there, elsewhere);
    atomic_store(&t->done, true);
    return NULL;
}

/* beside: on a thread of its own (the level will be coarsened, and the set-up may use more
 * than one thread: CMRSCL_THREADS=1 keeps it to one), else here and now. */
static void rho_start(rho_task *t, cmrs_amg_hierarchy *h, int l, int steps, bool beside,
                      const cmrs_amg_sink *sink)
{
    *t = (rho_task){.level = &h->level[l],
                    .index = l,
                    .sink = sink,
                    .decide = l == 0,
                    .symmetric = h->symmetric,
                    .steps = steps};
    atomic_init(&t->done, false);
    atomic_init(&t->there, false);
    t->pending = beside && pthread_create(&t->id, NULL, rho_run, t) == 0;
    if (!t->pending)
        rho_run(t);
}

static void rho_wait(rho_task *t)
{
    if (t->pending)
        pthread_join(t->id, NULL);
    t->pending = false;
}

/* Waits for the estimate and gives it (and Jacobi's weight) to its level, once; again after
 * that only returns its status. */
static cmrscl_status rho_finish(rho_task *t, cmrs_amg_hierarchy *h, const cmrs_amg_options *o)
{
    rho_wait(t);
    if (t->st != CMRSCL_OK)
        return cmrscl_fail(t->st, "%s", t->message);
    if (!t->applied) {
        if (t->decide)
            h->symmetric = t->symmetric;
        t->level->rho = t->rho;
        t->level->jacobi_omega = o->jacobi_scale / t->rho;
        h->times.smoother += t->seconds;
        t->applied = true;
    }
    return CMRSCL_OK;
}

/* Tells sink (may be NULL) of level l's operator `which`. */
static void tell(const cmrs_amg_sink *sink, int l, cmrs_amg_operator which, const cmrscl_csr *m)
{
    if (sink && sink->ready)
        sink->ready(sink->ctx, l, which, m);
}

/* Level l's R and level l + 1's A = R A P. Where the sink makes them (on a device, R the
 * transpose of P there, read back - or left there for the sink to read back beside the host's
 * next level, r_later), the host's threads are free meanwhile for the sink's own work; else, or
 * where the sink's fail, the host makes what is missing - the same bits either way. R is told
 * once made (or, r_later, once the sink has it). */
static cmrscl_status transpose_and_galerkin(const cmrs_amg_sink *sink, int l, cmrs_amg_level *lv,
                                            cmrscl_csr *c)
{
    bool r_later = false;
    cmrscl_status made = sink && sink->galerkin
                             ? sink->galerkin(sink->ctx, l, &lv->A, &lv->P, &lv->R, c, &r_later)
                             : CMRSCL_ERROR_UNSUPPORTED;
    r_later = r_later && made == CMRSCL_OK;
    cmrscl_status st = lv->R.row_ptr || r_later ? CMRSCL_OK : cmrscl_csr_transpose(&lv->P, &lv->R);
    if (st != CMRSCL_OK) {
        if (made == CMRSCL_OK)
            cmrscl_csr_free(c);
        return st;
    }
    tell(sink, l, AMG_OPERATOR_R, &lv->R);
    return made == CMRSCL_OK ? CMRSCL_OK : cmrs_amg_galerkin(&lv->R, &lv->A, &lv->P, c);
}

/* T, P and R of level l from its aggregates (count of them), and A of level l + 1; t2: when
 * the prolongator's phase began (which waits for rho). */
static cmrscl_status build_level(cmrs_amg_hierarchy *h, int l, const cmrs_amg_options *o,
                                 int32_t count, double t2, rho_task *rho, const cmrs_amg_sink *sink)
{
    cmrs_amg_level *lv = &h->level[l], *next = &h->level[l + 1];
    tell(sink, l, AMG_OPERATOR_A, &lv->A);
    cmrs_amg_coarse c;
    cmrscl_status st =
        cmrs_amg_tentative(lv->aggregate, lv->A.rows, count, lv->near_null, o->near_null_count, &c);
    if (st == CMRSCL_OK && c.rows == 0) {
        cmrs_amg_coarse_free(&c);
        st = cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                         "AMG: the near-null vectors are zero on every aggregate of level %d", l);
    }
    lv->aggregates = count;
    if (st == CMRSCL_OK) { /* the coarse level's nodes: an aggregate's candidates together */
        lv->T = c.t, next->near_null = c.b;
        if (o->near_null_count > 1)
            next->node_ptr = c.node_ptr, next->nodes = c.nodes;
        else
            free(c.node_ptr);
    }
    /* On the host A T needs no omega: it is made while the estimate of rho may still be
     * running, in its shadow. Once the estimate is in, P is asked of the sink (a device, which
     * has the level's A from the estimate, and keeps P for the Galerkin product) - the same
     * bits either way, so the choice costs only time (docs/dev/PERFORMANCE.md,
     * PROLONGATOR_ON_DEVICE): the host's A T, where the level is the sink's, stops when the
     * sink's estimate comes in before it is done, and the sink makes P after all. The estimate is
     * done before P in any case (plain aggregation needs none, but the sink's estimate may
     * leave the level's A on the device for the Galerkin product) */
    /* a kept strong pattern: P smoothed with the filtered matrix, on the host */
    const bool filtered = lv->strong.row_ptr != NULL;
    const bool sinks = o->smooth && !filtered && sink && sink->prolongator &&
                       cmrs_amg_on_device(sink->device_rows, sink->device_entries, &lv->A);
    bool elsewhere = sinks && (sink->wait_for_rho || atomic_load(&rho->done));
    double tt = cmrscl_seconds();
    if (st == CMRSCL_OK && o->smooth && !elsewhere && !filtered)
        st = cmrs_amg_spgemm_unless(&lv->A, &lv->T, &lv->P, sinks ? &rho->there : NULL, &elsewhere);
    if (st == CMRSCL_OK)
        st = rho_finish(rho, h, o);
    double trho = cmrscl_seconds();
    if (st == CMRSCL_OK && filtered)
        st = cmrs_amg_filtered_prolongator(h, l, o);
    else if (st == CMRSCL_OK && o->smooth)
        st = cmrs_amg_smoothed(sink, l, lv, o->smooth_scale / lv->rho, elsewhere);
    else if (st == CMRSCL_OK)
        st = cmrs_amg_unsmoothed(lv);
    cmrscl_trace("AMG level %d: aggregates at %.3f, T at %.3f, rho joined at %.3f, P at %.3f%s", l,
                 t2, tt, trho, cmrscl_seconds(), elsewhere ? " (asked of the device)" : "");
    if (st == CMRSCL_OK)
        tell(sink, l, AMG_OPERATOR_P, &lv->P);
    double t3 = cmrscl_seconds();
    h->times.prolongator += t3 - t2;
    if (st == CMRSCL_OK) /* (the phase RAP counts R's transpose) */
        st = transpose_and_galerkin(sink, l, lv, &h->level[l + 1].A);
    h->times.rap += cmrscl_seconds() - t3;
    return st;
}

/* Whether count aggregates coarsen the level: some, and the coarse level's rows (up to k an
 * aggregate) at most min_coarsening of its rows. */
static bool coarsens(const cmrs_amg_level *lv, const cmrs_amg_options *o, int32_t count)
{
    return count > 0 && (double)count * o->near_null_count <= o->min_coarsening * lv->A.rows;
}

/* Level l's strength at theta and its aggregates (lv->aggregate, *count of them). */
static cmrscl_status aggregate_at(cmrs_amg_hierarchy *h, int l, double theta, int32_t *count)
{
    cmrs_amg_level *lv = &h->level[l];
    /* with nodes of several unknowns, strength and aggregation on the matrix of the nodes,
     * each unknown then in its node's aggregate; where every coupling is strong, on that
     * matrix itself */
    cmrscl_csr s = {0}, nodes = {0};
    double t0 = cmrscl_seconds();
    cmrscl_status st =
        lv->node_ptr ? cmrs_amg_amalgamate(&lv->A, lv->node_ptr, lv->nodes, &nodes) : CMRSCL_OK;
    const cmrscl_csr *m = lv->node_ptr ? &nodes : &lv->A, *strong = &s;
    /* (A's zeros off the diagonal were looked for with its diagonal) */
    const bool all_strong = st == CMRSCL_OK && (lv->node_ptr ? cmrs_amg_all_strong(m, theta)
                                                             : theta == 0 && !lv->zero_couplings);
    if (all_strong)
        strong = m;
    else if (st == CMRSCL_OK)
        st = cmrs_amg_strength(m, theta, &s);
    double t1 = cmrscl_seconds();
    cmrscl_trace("AMG level %d: strength from %.3f to %.3f", l, t0, t1);
    h->times.strength += t1 - t0;
    lv->aggregate = cmrscl_alloc((size_t)lv->A.rows, sizeof(int32_t));
    if (st == CMRSCL_OK && !lv->aggregate)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG aggregates: %d rows",
                         (int)lv->A.rows);
    if (st == CMRSCL_OK)
        st = cmrs_amg_aggregate(strong, lv->aggregate, count);
    /* the strong pattern of a level's own matrix at theta > 0, kept for its prolongator's
     * smoothing (coarsen decides whether it is needed) */
    cmrscl_csr_free(&lv->strong);
    if (st == CMRSCL_OK && theta > 0 && !lv->node_ptr)
        lv->strong = s, s = (cmrscl_csr){0};
    cmrscl_csr_free(&s), cmrscl_csr_free(&nodes);
    if (st == CMRSCL_OK && lv->node_ptr) { /* the nodes' aggregates to their unknowns' */
        int32_t *of_node = lv->aggregate;
        lv->aggregate = cmrscl_alloc((size_t)lv->A.rows, sizeof(int32_t));
        if (!lv->aggregate)
            st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG aggregates: %d rows",
                             (int)lv->A.rows);
        for (int32_t n = 0; st == CMRSCL_OK && n < lv->nodes; ++n)
            for (int64_t i = lv->node_ptr[n]; i < lv->node_ptr[n + 1]; ++i)
                lv->aggregate[i] = of_node[n];
        free(of_node);
    }
    h->times.aggregation += cmrscl_seconds() - t1;
    return st;
}

/* Strength, aggregates, T, P and R of level l, and A of level l + 1. *count 0 (and nothing
 * kept) when aggregation finds no aggregate or keeps more than min_coarsening of the rows;
 * *found then what it found. With g, its aggregates instead of strength and aggregation. */
static cmrscl_status coarsen(cmrs_amg_hierarchy *h, int l, const cmrs_amg_options *o,
                             const cmrs_amg_aggregates *g, int32_t *count, rho_task *rho,
                             int32_t *found, const cmrs_amg_sink *sink)
{
    cmrs_amg_level *lv = &h->level[l];
    if (g) {
        lv->aggregate = g->aggregate[l];
        lv->theta = g->theta[l];
        lv->strong = g->strong[l]; /* borrowed, as the aggregates */
        *count = g->count[l];
        return build_level(h, l, o, *count, cmrscl_seconds(), rho, sink);
    }
    /* theta 0 left to the set-up: AMG_HUB_THETA where the level has hubs or its aggregates at
     * 0 spread; 0 after all where that leaves too few couplings strong to coarsen */
    const bool automatic = o->theta == 0;
    double theta = automatic && cmrs_amg_has_hubs(&lv->A) ? AMG_HUB_THETA : o->theta;
    cmrscl_status st = aggregate_at(h, l, theta, count);
    if (st == CMRSCL_OK && automatic && theta == 0 &&
        cmrs_amg_spreads(&lv->A, lv->aggregate, *count)) {
        free(lv->aggregate);
        st = aggregate_at(h, l, theta = AMG_HUB_THETA, count);
    }
    if (st == CMRSCL_OK && automatic && theta > 0 && !coarsens(lv, o, *count)) {
        free(lv->aggregate);
        st = aggregate_at(h, l, theta = 0, count);
    }
    lv->theta = theta;
    if (!o->smooth || lv->strong.nnz >= lv->A.nnz - lv->A.rows) /* nothing weak (a_ii stored) */
        cmrscl_csr_free(&lv->strong);
    if (st != CMRSCL_OK)
        return st;
    double t2 = cmrscl_seconds();
    *found = *count;
    if (!coarsens(lv, o, *count)) {
        free(lv->aggregate);
        lv->aggregate = NULL;
        cmrscl_csr_free(&lv->strong);
        *count = 0;
        return CMRSCL_OK;
    }
    return build_level(h, l, o, *count, t2, rho, sink);
}

void cmrs_amg_free(cmrs_amg_hierarchy *h)
{
    if (!h)
        return;
    for (int l = 0; h->level && l < h->levels; ++l) {
        cmrs_amg_level *lv = &h->level[l];
        if (l > 0 || h->owned_a0) /* (level 0's A the caller's but for a canonical copy) */
            cmrscl_csr_free(&lv->A);
        if (l > 0) /* (level 0's candidates the caller's) */
            free(lv->near_null);
        cmrscl_csr_free(&lv->T);
        cmrscl_csr_free(&lv->P);
        cmrscl_csr_free(&lv->R);
        if (!h->borrowed_aggregates)
            free(lv->aggregate), cmrscl_csr_free(&lv->strong);
        free(lv->diag_inv);
        free(lv->node_ptr);
    }
    free(h->level);
    free(h->coarse_inverse);
    *h = (cmrs_amg_hierarchy){0};
}

/* A valid square matrix; *canonical: each row's columns increasing (else the set-up works on a
 * canonical copy: its passes look a mirror entry up by bisection and merge rows by column, and
 * a hierarchy must not depend on the order a row lists its columns in). */
static cmrscl_status check_matrix(const cmrscl_csr *a, bool *canonical)
{
    if (a->rows != a->cols)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "AMG needs a square matrix, not %d x %d",
                           (int)a->rows, (int)a->cols);
    if (a->rows == 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "AMG needs a matrix with rows (0 x 0)");
    return cmrs_csr_validate_canonical(a, NULL, canonical);
}

/* Level l's diagonal (every level has one, and a smoother weight from rho: the coarsest's
 * are for a device cycle that may smooth there too). */
static cmrscl_status level_diagonal(cmrs_amg_hierarchy *h, int l)
{
    cmrs_amg_level *lv = &h->level[l];
    return cmrs_amg_inverse_diagonal(&lv->A, l, &lv->diag_inv, &lv->zero_couplings);
}

/* The hierarchy's facts from its levels: complexities, the largest theta a level took. */
static void summarize(cmrs_amg_hierarchy *h)
{
    double entries = 0, rows = 0;
    for (int l = 0; l < h->levels; ++l) {
        entries += (double)h->level[l].A.nnz;
        rows += (double)h->level[l].A.rows;
        h->theta = h->level[l].theta > h->theta ? h->level[l].theta : h->theta;
    }
    h->operator_complexity = entries / (double)h->level[0].A.nnz;
    h->grid_complexity = rows / (double)h->level[0].A.rows;
}

/* Level 0's candidates (the options', borrowed) and its nodes of block_size rows. */
static cmrscl_status level0_nodes(cmrs_amg_level *l0, const cmrs_amg_options *o)
{
    int32_t rows = l0->A.rows, bs = o->block_size;
    if (bs > 1 && rows % bs != 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "AMG: %d rows are not whole nodes of %d unknowns (block_size)",
                           (int)rows, bs);
    /* the caller's candidates borrowed, as level 0's A: only read (T's of level 0) */
    l0->near_null = (double *)o->near_null;
    l0->node_ptr = bs > 1 ? cmrscl_alloc((size_t)(rows / bs) + 1, sizeof(int64_t)) : NULL;
    if (bs > 1 && !l0->node_ptr)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG: level 0's nodes");
    l0->nodes = bs > 1 ? rows / bs : 0;
    for (int32_t n = 0; bs > 1 && n <= l0->nodes; ++n)
        l0->node_ptr[n] = (int64_t)n * bs;
    return CMRSCL_OK;
}

/* The coarsest level is inverted densely: n^2 words, and a factorisation of n^3 / 3 steps
 * that runs for minutes from a few thousand rows. A level above max_coarse ends the hierarchy
 * only when coarsening stopped - no level left, or aggregation that no longer reduces (no
 * coupling strong at theta: every row isolated; or more aggregates, times the candidates, than
 * min_coarsening of the rows) - and past AMG_DENSE_ROWS (or the user's larger max_coarse) that
 * is refused with the reason, not left to run for minutes or hours (docs/dev/PERFORMANCE.md,
 * AMG_DENSE_ROWS). found: the aggregates of the level where coarsening stopped. */
#define AMG_DENSE_ROWS 2048

static cmrscl_status check_coarsest(const cmrs_amg_hierarchy *h, const cmrs_amg_options *o,
                                    const cmrs_amg_aggregates *g, int32_t found)
{
    int32_t rows = h->level[h->levels - 1].A.rows;
    if (rows <= AMG_DENSE_ROWS || rows <= o->max_coarse)
        return CMRSCL_OK;
    char why[160];
    if (g && h->levels == g->levels)
        snprintf(why, sizeof why, "the given aggregates' last of %d levels", g->levels);
    else if (h->levels == o->max_levels)
        snprintf(why, sizeof why, "the last of max_levels %d (allow more levels)", o->max_levels);
    else if (found == 0)
        snprintf(why, sizeof why,
                 "level %d: no coupling is strong at theta %g, no row has a neighbour to "
                 "aggregate with%s",
                 h->levels - 1, o->theta, o->theta > 0 ? " (lower theta)" : "");
    else
        snprintf(why, sizeof why,
                 "level %d: %d aggregates of %d candidates keep more than min_coarsening %g of "
                 "its rows",
                 h->levels - 1, (int)found, o->near_null_count, o->min_coarsening);
    return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                       "AMG: coarsening stopped at %d rows, too many to invert densely (more than "
                       "%d and than max_coarse %d; raise max_coarse to accept it): %s",
                       (int)rows, AMG_DENSE_ROWS, (int)o->max_coarse, why);
}

/* cmrs_amg_setup and cmrs_amg_setup_to, or cmrs_amg_setup_again with g. */
static cmrscl_status setup(const cmrscl_csr *a, const cmrs_amg_options *opt,
                           const cmrs_amg_aggregates *g, const cmrs_amg_sink *sink,
                           cmrs_amg_hierarchy *out)
{
    double start = cmrscl_seconds();
    cmrs_amg_options defaults;
    cmrs_amg_options_default(&defaults);
    const cmrs_amg_options *o = opt ? opt : &defaults;
    cmrs_amg_hierarchy h = {0};
    *out = h;
    bool canonical = true;
    cmrscl_csr copy = {0};
    cmrscl_status st = check_options(o);
    if (st == CMRSCL_OK)
        st = check_matrix(a, &canonical);
    if (st == CMRSCL_OK && !canonical)
        st = cmrs_csr_canonical_copy(a, &copy);
    if (st != CMRSCL_OK)
        return st;
    if (!canonical)
        a = &copy;
    cmrscl_trace("AMG set-up from %.3f: A checked at %.3f", start, cmrscl_seconds());
    h.level = calloc((size_t)o->max_levels, sizeof(cmrs_amg_level));
    if (!h.level) {
        cmrscl_csr_free(&copy);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG: %d levels", o->max_levels);
    }
    h.level[0].A = *a;
    h.owned_a0 = !canonical;
    st = level0_nodes(&h.level[0], o);
    if (st != CMRSCL_OK) {
        free(h.level);
        cmrscl_csr_free(&copy);
        return st;
    }
    h.degree = o->degree;
    h.visits = o->visits;
    h.borrowed_aggregates = g != NULL;
    int32_t found = 0; /* what aggregation found where it stopped */
    for (int l = 0; st == CMRSCL_OK; ++l) {
        h.levels = l + 1;
        double t0 = cmrscl_seconds();
        st = level_diagonal(&h, l);
        h.times.smoother += cmrscl_seconds() - t0;
        cmrscl_trace("AMG level %d: diagonal from %.3f to %.3f", l, t0, cmrscl_seconds());
        bool last =
            l + 1 == (g ? g->levels : o->max_levels) || (!g && h.level[l].A.rows <= o->max_coarse);
        if (st != CMRSCL_OK)
            break;
        rho_task rho;
        rho_start(&rho, &h, l, o->rho_steps, !last && cmrs_parallel_threads() > 1, sink);
        int32_t count = 0;
        if (!last)
            st = coarsen(&h, l, o, g, &count, &rho, &found, sink);
        if (st == CMRSCL_OK)
            st = rho_finish(&rho, &h, o);
        else /* joined before anything is freed; coarsen's message stays the one reported */
            rho_wait(&rho);
        if (last || count == 0)
            break;
    }
    double t = cmrscl_seconds();
    cmrs_amg_level *last = &h.level[h.levels - 1];
    if (st == CMRSCL_OK)
        st = check_coarsest(&h, o, g, found);
    if (st == CMRSCL_OK)
        st = cmrs_amg_coarse_inverse(&last->A, &h.coarse_inverse, &h.coarse_lu);
    h.coarse_rows = last->A.rows;
    h.times.coarse_inverse = cmrscl_seconds() - t;
    if (st != CMRSCL_OK) {
        if (sink && sink->wait) /* nothing told may be read once freed */
            sink->wait(sink->ctx);
        /* a failed coarsen may have built level l + 1's A or candidate: free them too */
        if (h.levels < o->max_levels &&
            (h.level[h.levels].A.row_ptr || h.level[h.levels].near_null))
            ++h.levels;
        cmrs_amg_free(&h);
        return st;
    }
    summarize(&h);
    h.times.total = cmrscl_seconds() - start;
    *out = h;
    return CMRSCL_OK;
}

cmrscl_status cmrs_amg_setup(const cmrscl_csr *a, const cmrs_amg_options *opt,
                             cmrs_amg_hierarchy *out)
{
    return setup(a, opt, NULL, NULL, out);
}

cmrscl_status cmrs_amg_setup_to(const cmrscl_csr *a, const cmrs_amg_options *opt,
                                const cmrs_amg_sink *sink, cmrs_amg_hierarchy *out)
{
    return setup(a, opt, NULL, sink, out);
}

cmrscl_status cmrs_amg_setup_again(const cmrscl_csr *a, const cmrs_amg_options *opt,
                                   const cmrs_amg_aggregates *g, cmrs_amg_hierarchy *out)
{
    return setup(a, opt, g, NULL, out);
}

cmrscl_status cmrs_amg_take_aggregates(cmrs_amg_hierarchy *h, cmrs_amg_aggregates *out)
{
    int n = h->levels - 1;
    *out = (cmrs_amg_aggregates){
        h->levels, calloc((size_t)n + 1, sizeof(int32_t *)), calloc((size_t)n + 1, sizeof(int32_t)),
        calloc((size_t)n + 1, sizeof(double)), calloc((size_t)n + 1, sizeof(cmrscl_csr))};
    if (!out->aggregate || !out->count || !out->theta || !out->strong) {
        cmrs_amg_aggregates_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG: the aggregates of %d levels", n);
    }
    for (int l = 0; l < n; ++l) {
        out->aggregate[l] = h->level[l].aggregate, h->level[l].aggregate = NULL;
        out->count[l] = h->level[l].aggregates;
        out->theta[l] = h->level[l].theta;
        out->strong[l] = h->level[l].strong, h->level[l].strong = (cmrscl_csr){0};
    }
    return CMRSCL_OK;
}

void cmrs_amg_aggregates_free(cmrs_amg_aggregates *g)
{
    for (int l = 0; g->aggregate && l + 1 < g->levels; ++l)
        free(g->aggregate[l]);
    for (int l = 0; g->strong && l + 1 < g->levels; ++l)
        cmrscl_csr_free(&g->strong[l]);
    free(g->aggregate);
    free(g->count);
    free(g->theta);
    free(g->strong);
    *g = (cmrs_amg_aggregates){0};
}
