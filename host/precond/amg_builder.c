/* amg_builder.c - a hierarchy's device matrices made while the host is still setting it up.
 * Making a matrix of the library from host CSR (analysis, plan, conversion to CMRS, upload)
 * is bound by memory: writing fresh pages and copying. The host set-up's sparse products are
 * bound by latency: scattered reads of the accumulators. So each operator the set-up has
 * finished (cmrs_amg_sink) is made on a thread of its own while the host goes on - level l's
 * A once its aggregates coarsen it, during its prolongator; P during its transpose and
 * Galerkin product; R during the next level's set-up - and the device set-up (amg_device.c) takes
 * them ready made. The builder also takes the large levels' estimates of rho, smoothed prolongators
 * and Galerkin products (R, the transpose of P, made there too and read back) to a GPU
 * (amg_galerkin.c, amg_rho_device.c; GALERKIN_DEVICE_ROWS), through the sink's rho,
 * prolongator and galerkin: the level's A crosses once, for all three - not at all where the
 * level above's Galerkin product made it there - and P stays there from the prolongator to
 * the product.
 *
 * The builder's conversions take a quarter of the host's threads (BUILDER_SHARE): the host's
 * parallel passes split their rows evenly among all of its threads, and a share held back on
 * an oversubscribed core holds back the whole pass, so all of them for the builder as well cost
 * the host's phases what the builder saved; fewer than a quarter left the builder's work
 * unfinished when the host's was done. Where a GPU makes level 0's products the builder takes
 * half of them while the host's own passes run: with a quarter it was still converting when
 * the host was done (docs/dev/PERFORMANCE.md, BUILDER_SHARE) - level 0 sent there by its rows;
 * one sent by its entries alone (GALERKIN_DEVICE_ENTRIES) keeps the quarter, not measured. While
 * the host's set-up waits on the GPU's prolongator or Galerkin product, and once it is done and
 * waits for the builder, the builder's passes take every thread - the pass under way keeps its
 * share, the next ones read the raised limit.
 *
 * The operators are made one after another, in the order told: each job's thread first
 * joins the one before it, so one builder thread runs at a time, and nothing but the caller's
 * thread ever joins the last. A failure stops the jobs after it (but for an R left on the device,
 * which its job still reads back); the operators not made, the device set-up makes itself (and
 * reports their failure, if they fail again). A matrix is
 * made by the same call as the device set-up would make it, so it is the same matrix, bit for
 * bit - but for what a GPU's Galerkin product made (a level's R and the next level's A): those
 * are made from the GPU's own copies by its conversion kernels (cmrscl_matrix_create_from_cl's)
 * in milliseconds, where the host's conversions of the largest levels took tenths of seconds one
 * after another and ended the set-up after the host's passes - the same operators, entry for
 * entry, in the plan the device conversion takes, which lays out strips but no slices: the cycle
 * pays for that in its products. P is still made on the host (its conversion runs beside the
 * GPU's Galerkin product, so taking it from the GPU saved little, and its slices are the
 * cycle's) (docs/dev/PERFORMANCE.md, AMG_MADE_THERE). */
#include "precond/precond.h"

#include <stdlib.h>
#include <string.h>

#define BUILDER_SHARE 4
/* Levels of this many rows or more have their Galerkin product, their estimate of rho and
 * (where the estimate is in by then) their smoothed prolongator made on a GPU (amg_galerkin.c,
 * amg_rho_device.c): measured faster from 1 M rows to 16.8 M (docs/dev/PERFORMANCE.md,
 * GALERKIN_DEVICE_ROWS, PROLONGATOR_ON_DEVICE) - and so are levels of fewer rows but this many
 * entries or more - measured faster from 2.2 M entries to 12 M, second levels of stencils and
 * graphs and elasticity's with the rigid-body modes, whose long rows make the host's products
 * slow (docs/dev/PERFORMANCE.md, GALERKIN_DEVICE_ENTRIES). Smaller levels, not measured apart,
 * stay on the host. */
#define GALERKIN_DEVICE_ROWS 1000000
#define GALERKIN_DEVICE_ENTRIES 2000000

typedef struct builder_job {
    cmrs_amg_builder *builder;
    struct builder_job *before, *next;
    const cmrscl_csr *csr;
    cmrs_device_csr there; /* the operator's copy on the device, the job's: made from it */
    int level;
    cmrs_amg_operator which;
    cmrscl_matrix made;
    bool threaded;
    pthread_t id;
} builder_job;

struct cmrs_amg_builder {
    cmrscl_context ctx;
    cmrscl_precision precision;
    bool skip_a0; /* level 0's A is the caller's matrix, on the device already */
    builder_job *first, *last;
    bool joined;            /* the last job's thread, if any, is joined */
    bool failed;            /* a job failed: those after it do not run */
    atomic_int share;       /* the threads its conversions take: a quarter or half of them
                               while the host's passes run, all (0) while it waits on the
                               device or for the builder */
    int64_t device_rows;    /* levels of this many rows, or this many entries, make their */
    int64_t device_entries; /* Galerkin product, rho and prolongator on the device
                               (device_rows_of); INT64_MAX: none */
    bool shadow;            /* every level's, but P only where rho is in once T is made */
    int galerkins;          /* Galerkin products the device made */
    int prolongators;       /* smoothed prolongators the device made */
    int rhos;               /* estimates of rho the device made (on the estimates' threads, one
                               at a time: each is joined before the next starts) */
    /* a level and its A on the device: the Galerkin product's C, for the next level's
       estimate; then the estimate's A, for that level's prolongator and Galerkin product
       (written on the estimate's thread; the set-up joins it before them) - and the
       prolongator made there for the product */
    int kept_level;
    cmrs_device_csr kept_a, kept_p;
    /* what the device's Galerkin products left there (a level's R, the next level's A), each
       held until the job that makes its matrix takes it */
    cmrs_device_csr there[CMRSCL_AMG_MAX_LEVELS][3];
    int made_there; /* matrices made from those */
    /* each level's P as told, for an R read back late (r_later) that cannot be read: the host's
       transpose of it then */
    const cmrscl_csr *told_p[CMRSCL_AMG_MAX_LEVELS];
};

/* Level `level`'s R where the sink's Galerkin product left it on the device for later
 * (builder_galerkin's r_later): the host's copy read back from d, beside the set-up - or, where
 * that read fails, P transposed on the host. */
static void fill_late_r(cmrs_amg_builder *b, int level, const cmrs_device_csr *d, cmrscl_csr *r)
{
    if (r->row_ptr)
        return;
    if (d->ptr && cmrs_device_csr_download(b->ctx, d, r) == CMRSCL_OK)
        return;
    const cmrscl_csr *p = level < CMRSCL_AMG_MAX_LEVELS ? b->told_p[level] : NULL;
    if (p && cmrscl_csr_transpose(p, r) != CMRSCL_OK)
        *r = (cmrscl_csr){0}; /* the device set-up names the failure, making R from it */
}

static void *job_run(void *arg)
{
    builder_job *j = arg;
    cmrs_amg_builder *b = j->builder;
    if (j->before && j->before->threaded)
        pthread_join(j->before->id, NULL);
    /* an R left on the device (r_later): the host's copy, whatever comes of the matrix */
    cmrscl_csr *late_r =
        j->which == AMG_OPERATOR_R && !j->csr->row_ptr ? (cmrscl_csr *)j->csr : NULL;
    if (b->failed) {
        if (late_r)
            fill_late_r(b, j->level, &j->there, late_r);
        cmrs_device_csr_release(&j->there);
        return NULL;
    }
    const atomic_int *limit = j->threaded ? cmrs_parallel_limit(&b->share) : NULL;
    double t0 = cmrscl_seconds();
    /* a failure is not reported from here: the device set-up makes the operator again, and
     * names its failure there (the builder's may only have met the device's memory taken by a
     * Galerkin product on it meanwhile) */
    const cmrs_device_csr *d = &j->there;
    const bool there = d->ptr != NULL; /* (hold_there: its entries fit an int32) */
    cmrscl_status st =
        there
            ? cmrs_matrix_create_from_doubles_cl(b->ctx, b->precision, d->rows, d->cols,
                                                 (int32_t)d->nnz, d->ptr, d->col, d->val, &j->made)
            : cmrscl_matrix_create_from_csr(b->ctx, b->precision, j->csr, NULL, &j->made);
    b->failed = st != CMRSCL_OK;
    double t1 = cmrscl_seconds();
    if (late_r) /* (on the builder's share of the threads too) */
        fill_late_r(b, j->level, &j->there, late_r);
    if (j->threaded)
        cmrs_parallel_limit(limit);
    const long long entries = (long long)j->csr->nnz;
    cmrscl_trace("AMG builder: level %d's %c (%lld entries) made %sin %.3f s%s (ends at %.3f)",
                 j->level, "APR"[j->which], entries, there ? "from the device's copy " : "",
                 t1 - t0, late_r ? ", read back after it" : "", cmrscl_seconds());
    b->made_there += there && !b->failed;
    cmrs_device_csr_release(&j->there);
    return NULL;
}

/* Whether an operator of `level` and nnz entries that the device made is held there for its
 * job: not with one thread, where no job is made (builder_ready) and the copy would only hold
 * the device's memory until the set-up's end, nor past a level the builder tracks or entries a
 * conversion's int32 takes. */
static bool holds(int level, int64_t nnz)
{
    return level < CMRSCL_AMG_MAX_LEVELS && nnz <= INT32_MAX && cmrs_parallel_threads() > 1;
}

/* An operator the device made, held there for its job (a reference of each buffer), where
 * holds says so. */
static void hold_there(cmrs_amg_builder *b, int level, cmrs_amg_operator which,
                       const cmrs_device_csr *d)
{
    if (!d->ptr || !holds(level, d->nnz))
        return;
    cmrs_device_csr *held = &b->there[level][which];
    cmrs_device_csr_release(held);
    cl_mem mem[] = {d->ptr, d->col, d->val};
    for (int i = 0; i < 3; ++i)
        if (mem[i])
            clRetainMemObject(mem[i]);
    *held = *d;
}

/* cmrs_amg_sink's ready: a job after the last one told. Without a thread to be had it runs
 * here and now; without memory for it, the device set-up makes the operator itself (an R left
 * on the device read back here first). */
static void builder_ready(void *ctx, int level, cmrs_amg_operator which, const cmrscl_csr *m)
{
    cmrs_amg_builder *b = ctx;
    if (which == AMG_OPERATOR_P && level < CMRSCL_AMG_MAX_LEVELS)
        b->told_p[level] = m;
    if ((level == 0 && which == AMG_OPERATOR_A && b->skip_a0) || cmrs_parallel_threads() == 1)
        return; /* (one thread: the device set-up makes it, after the host's) */
    builder_job *j = calloc(1, sizeof *j);
    if (!j) { /* the device set-up makes it; its copy is not held meanwhile */
        if (level < CMRSCL_AMG_MAX_LEVELS) {
            if (which == AMG_OPERATOR_R) /* an R left there: read back now */
                fill_late_r(b, level, &b->there[level][which], (cmrscl_csr *)m);
            cmrs_device_csr_release(&b->there[level][which]);
        }
        return;
    }
    cmrscl_trace("AMG builder: level %d's %c told at %.3f", level, "APR"[which], cmrscl_seconds());
    *j = (builder_job){.builder = b, .before = b->last, .csr = m, .level = level, .which = which};
    if (level < CMRSCL_AMG_MAX_LEVELS) /* made from the device's copy where there is one */
        j->there = b->there[level][which], b->there[level][which] = (cmrs_device_csr){0};
    if (b->last)
        b->last->next = j;
    else
        b->first = j;
    b->last = j;
    b->joined = false;
    j->threaded = true; /* before the thread reads it */
    if (pthread_create(&j->id, NULL, job_run, j) != 0) {
        j->threaded = false;
        job_run(j);
    }
}

static void builder_wait(void *ctx)
{
    cmrs_amg_builder *b = ctx;
    if (!b->joined)
        cmrscl_trace("AMG builder: the host waits from %.3f", cmrscl_seconds());
    atomic_store(&b->share, 0); /* the host waits: its threads are the builder's */
    if (b->last && b->last->threaded && !b->joined)
        pthread_join(b->last->id, NULL);
    b->joined = true;
    /* (no product follows: not held through the rest; no job will take a copy left there) */
    cmrs_device_csr_release(&b->kept_a), cmrs_device_csr_release(&b->kept_p);
    for (int l = 0; l < CMRSCL_AMG_MAX_LEVELS; ++l)
        for (int which = 0; which < 3; ++which)
            cmrs_device_csr_release(&b->there[l][which]);
}

/* The rows (or, *entries, the entries) from which a level's Galerkin product and rho are made
 * on the device: GALERKIN_DEVICE_ROWS (_ENTRIES) on a GPU with fp64 (a CPU's OpenCL runs on the
 * cores the host's product has), none elsewhere; CMRSCL_AMG_GALERKIN=device (every level) or
 * host (none) decides on any device (the tests' way to the kernels on a CPU), and
 * CMRSCL_AMG_DEVICE_ENTRIES sets the entries (for measuring); =shadow: every level, but P as on
 * a GPU's large levels, asked of the device only where the estimate of rho is in once T is made
 * (else the host's A T, stopped when it comes in: the tests' way to that path on a CPU). */
static int64_t device_rows_of(cmrscl_context ctx, int64_t *entries, bool *shadow)
{
    const char *asked = getenv("CMRSCL_AMG_GALERKIN"),
               *forced = getenv("CMRSCL_AMG_DEVICE_ENTRIES");
    *entries = 0;
    *shadow = asked && !strcmp(asked, "shadow");
    if (asked && (!strcmp(asked, "device") || *shadow))
        return 0;
    bool gpu = (ctx->info.type & CL_DEVICE_TYPE_GPU) && ctx->info.fp64;
    if (!gpu || (asked && !strcmp(asked, "host"))) {
        *entries = INT64_MAX;
        return INT64_MAX;
    }
    *entries = forced && atoll(forced) > 0 ? atoll(forced) : GALERKIN_DEVICE_ENTRIES;
    return GALERKIN_DEVICE_ROWS;
}

/* Whether level matrix a is the device's to work on (device_rows_of). */
static bool on_device(const cmrs_amg_builder *b, const cmrscl_csr *a)
{
    return cmrs_amg_on_device(b->device_rows, b->device_entries, a);
}

cmrscl_status cmrs_amg_builder_create(cmrscl_context ctx, cmrscl_precision precision, bool skip_a0,
                                      int32_t rows, cmrs_amg_builder **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG: no memory for a builder");
    cmrs_amg_builder *b = *out;
    int64_t entries;
    bool shadow;
    const int64_t device_rows = device_rows_of(ctx, &entries, &shadow);
    *b = (cmrs_amg_builder){.ctx = ctx,
                            .precision = precision,
                            .skip_a0 = skip_a0,
                            .device_rows = device_rows,
                            .device_entries = entries,
                            .shadow = shadow,
                            .kept_level = -1};
    int share = cmrs_parallel_threads() / (rows >= b->device_rows ? 2 : BUILDER_SHARE);
    atomic_init(&b->share, share > 1 ? share : 1);
    return CMRSCL_OK;
}

/* cmrs_amg_sink's prolongator: on the device from device_rows rows or device_entries entries, from
 * the A rho's estimate left there; P kept there for the Galerkin product. The host's set-up waits
 * on the device meanwhile: its threads are the builder's. */
static cmrscl_status builder_prolongator(void *ctx, int level, const cmrscl_csr *a,
                                         const cmrscl_csr *t, const double *diag_inv, double omega,
                                         cmrscl_csr *p)
{
    cmrs_amg_builder *b = ctx;
    *p = (cmrscl_csr){0};
    if (!on_device(b, a))
        return CMRSCL_ERROR_UNSUPPORTED;
    const cmrs_device_csr *a_on_device = b->kept_level == level ? &b->kept_a : NULL;
    cmrs_device_csr_release(&b->kept_p);
    int share = atomic_exchange(&b->share, 0);
    cmrscl_status st = cmrs_amg_prolongator_device(b->ctx, a, a_on_device, t, diag_inv, omega, 0, p,
                                                   b->kept_level == level ? &b->kept_p : NULL);
    atomic_store(&b->share, share);
    b->prolongators += st == CMRSCL_OK;
    if (st != CMRSCL_OK)
        cmrscl_trace("AMG level %d's prolongator on the host: %s", level, cmrscl_last_error());
    return st;
}

/* cmrs_amg_sink's galerkin: on the device from device_rows rows or device_entries entries, R made
 * there; the host's threads the builder's meanwhile, as above. R's host copy is read back by the
 * job that makes R's matrix, beside the host's next level (*r_later), where such a job will take
 * R's copy: its read is then off the set-up's path (the hierarchy's host R is read only once
 * the builder is done). */
static cmrscl_status builder_galerkin(void *ctx, int level, const cmrscl_csr *a,
                                      const cmrscl_csr *p, cmrscl_csr *r, cmrscl_csr *c,
                                      bool *r_later)
{
    cmrs_amg_builder *b = ctx;
    *c = (cmrscl_csr){0};
    *r_later = false;
    if (!on_device(b, a))
        return CMRSCL_ERROR_UNSUPPORTED;
    bool kept = b->kept_level == level;
    int share = atomic_exchange(&b->share, 0);
    cmrs_device_csr next_a, r_there;
    const bool late = holds(level, p->nnz); /* R's copy will be its job's (R has P's entries) */
    cmrscl_status st = cmrs_amg_galerkin_device(b->ctx, NULL, a, kept ? &b->kept_a : NULL, p,
                                                kept ? &b->kept_p : NULL, 0, c, late ? NULL : r,
                                                &next_a, &r_there);
    atomic_store(&b->share, share);
    if (st == CMRSCL_OK) { /* their matrices made there (AMG_MADE_THERE, above) */
        hold_there(b, level, AMG_OPERATOR_R, &r_there);
        hold_there(b, level + 1, AMG_OPERATOR_A, &next_a);
    }
    *r_later = st == CMRSCL_OK && late; /* (held: the product left R there, r_there) */
    cmrs_device_csr_release(&r_there);
    /* (no longer needed, whatever came of it) */
    cmrs_device_csr_release(&b->kept_a), cmrs_device_csr_release(&b->kept_p);
    /* the next level's A stays for its estimate of rho where that is made on the device (else
     * it would hold the device's memory the builder's matrices need) */
    if (st == CMRSCL_OK && on_device(b, c))
        b->kept_a = next_a, b->kept_level = level + 1;
    else
        cmrs_device_csr_release(&next_a);
    b->galerkins += st == CMRSCL_OK;
    if (st != CMRSCL_OK)
        cmrscl_trace("AMG level %d's Galerkin product on the host: %s", level, cmrscl_last_error());
    return st;
}

/* cmrs_amg_sink's rho: on the device from device_rows rows or device_entries entries. */
static cmrscl_status builder_rho(void *ctx, int level, const cmrscl_csr *a, bool symmetric,
                                 int steps, double *rho)
{
    cmrs_amg_builder *b = ctx;
    if (!on_device(b, a))
        return CMRSCL_ERROR_UNSUPPORTED;
    if (b->kept_level != level) /* else A is there from the level above's Galerkin product */
        cmrs_device_csr_release(&b->kept_a);
    cmrs_device_csr_release(&b->kept_p);
    b->kept_level = level;
    cmrscl_status st =
        cmrs_amg_spectral_radius_device(b->ctx, a, symmetric, steps, rho, &b->kept_a);
    b->rhos += st == CMRSCL_OK;
    if (st != CMRSCL_OK)
        cmrscl_trace("AMG level %d's estimate of rho on the host: %s", level, cmrscl_last_error());
    return st;
}

/* cmrs_amg_sink's send_ahead: A up for the estimate of rho (builder_rho finds it there), where
 * that is the device's; a failed upload leaves the estimate to send it again. */
static void builder_send_ahead(void *ctx, int level, const cmrscl_csr *a)
{
    cmrs_amg_builder *b = ctx;
    if (!on_device(b, a) || !b->ctx->info.fp64)
        return;
    cmrs_device_csr_release(&b->kept_a), cmrs_device_csr_release(&b->kept_p);
    b->kept_level = cmrs_device_csr_upload(b->ctx, a, &b->kept_a) == CMRSCL_OK ? level : -1;
}

/* cmrs_amg_sink's symmetric: decided on the device, from the A send_ahead left there. */
static cmrscl_status builder_symmetric(void *ctx, int level, const cmrscl_csr *a, bool *symmetric)
{
    const cmrs_amg_builder *b = ctx;
    const cmrs_device_csr *d = &b->kept_a;
    if (b->kept_level != level || !d->ptr || d->rows != a->rows || d->nnz != a->nnz)
        return CMRSCL_ERROR_UNSUPPORTED;
    cmrscl_status st = cmrs_amg_symmetric_device(b->ctx, d, symmetric);
    if (st != CMRSCL_OK)
        cmrscl_trace("AMG level %d's symmetry on the host: %s", level, cmrscl_last_error());
    return st;
}

cmrs_amg_sink cmrs_amg_builder_sink(cmrs_amg_builder *b)
{
    if (!b) /* (a sink that makes nothing) */
        return (cmrs_amg_sink){.device_rows = INT64_MAX, .device_entries = INT64_MAX};
    /* (CMRSCL_AMG_GALERKIN=device: every level's P too, whenever its estimate is in; =shadow:
     * as a GPU's large levels, device_rows_of) */
    return (cmrs_amg_sink){.ready = builder_ready,
                           .wait = builder_wait,
                           .prolongator = builder_prolongator,
                           .galerkin = builder_galerkin,
                           .rho = builder_rho,
                           .send_ahead = builder_send_ahead,
                           .symmetric = builder_symmetric,
                           .ctx = b,
                           .device_rows = b->device_rows,
                           .device_entries = b->device_entries,
                           .wait_for_rho = b->device_rows == 0 && !b->shadow};
}

void cmrs_amg_builder_finish(cmrs_amg_builder *b)
{
    if (b)
        builder_wait(b);
}

cmrscl_matrix cmrs_amg_builder_take(cmrs_amg_builder *b, int level, cmrs_amg_operator which)
{
    for (builder_job *j = b && b->joined ? b->first : NULL; j; j = j->next)
        if (j->level == level && j->which == which) {
            cmrscl_matrix m = j->made;
            j->made = NULL;
            return m;
        }
    return NULL;
}

int cmrs_amg_builder_galerkins(const cmrs_amg_builder *b) { return b ? b->galerkins : 0; }

int cmrs_amg_builder_prolongators(const cmrs_amg_builder *b) { return b ? b->prolongators : 0; }

int cmrs_amg_builder_rhos(const cmrs_amg_builder *b) { return b ? b->rhos : 0; }

int cmrs_amg_builder_made_there(const cmrs_amg_builder *b) { return b ? b->made_there : 0; }

void cmrs_amg_builder_free(cmrs_amg_builder *b)
{
    if (!b)
        return;
    builder_wait(b);
    for (builder_job *j = b->first, *next; j; j = next) {
        next = j->next;
        cmrscl_matrix_free(j->made); /* made, and not taken */
        free(j);
    }
    free(b);
}
