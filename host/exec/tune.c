/* tune.c - cmrscl_matrix_tune: the measured side of the plan. Candidate plans (the variant
 * table's rows the device runs, over their families' HEIGHTs, then the streaming cache hint
 * on the best few) are built, checked against the CPU double reference and timed on the actual
 * matrix; the fastest by median device time is kept and recorded in the tuning database. */
#include "exec/exec.h"
#include "io/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CANDIDATES 64
#define HINT_RETRIES 3 /* the best plans retried with the streaming cache hint */

static int add(cmrscl_options *c, int n, const kernel_variant *v, int height, int warp)
{
    if (n == MAX_CANDIDATES)
        return n;
    memset(&c[n], 0, sizeof c[n]);
    c[n].kernel = v->pub.kernel;
    c[n].reduce = v->pub.reduce;
    c[n].height = height;
    c[n].warp = warp;
    return n + 1;
}

/* The plan space, from the variant table: every variant the device runs, at its family's
 * HEIGHTs with its own lanes per strip (HEIGHT 1 of the strip family is CSR-vector; slices on
 * CPUs both a work-item a row and a work-item a strip); and
 * CSR-vector on narrower lane groups where the variant's lanes can talk (shuffles, or
 * sub-groups kernels can be fixed to). */
static int candidates(const cmrscl_device_info *dev, cmrscl_options *c)
{
    int n = 0;
    for (size_t i = 0; i < cmrs_variant_count(); ++i) {
        const kernel_variant *v = cmrs_variant_at(i);
        if (cmrs_variant_missing(dev, v))
            continue;
        for (const int *h = v->family->tune_heights; *h; ++h) {
            n = add(c, n, v, *h, 0);
            /* slices where the plan walks a strip a work-item (CPUs): also a row each */
            if (v->family->lane_per_row && cmrs_plan_slice_warp(dev, *h) != *h)
                n = add(c, n, v, *h, *h);
        }
        bool talks = v->pub.reduce != CMRSCL_REDUCE_LOCAL;
        for (int w = 4; talks && v->family->tunes_warps && w <= 16; w *= 2)
            if (w != cmrs_variant_default_warp(dev, v) && !cmrs_variant_lanes_refused(dev, v, w))
                n = add(c, n, v, 1, w);
    }
    return n;
}

typedef struct tune_env {
    cmrscl_context ctx;
    cmrscl_precision precision;
    const cmrscl_csr *csr;
    cmrscl_csr rounded; /* values as the device holds them: the reference's input */
    double *x;          /* x as the device holds it */
    cl_mem xbuf, ybuf;
    void *yhost;
    const cmrscl_tune_options *opt;
} tune_env;

/* Builds, checks and times one candidate; *m is kept for the caller when it ran right. */
static cmrscl_status try_plan(tune_env *e, const cmrscl_options *o, cmrscl_matrix *m,
                              cmrscl_timing *t)
{
    *m = NULL;
    const cmrscl_csr *a = e->csr;
    cmrscl_status st = cmrscl_matrix_create_from_csr(e->ctx, e->precision, a, o, m);
    if (st != CMRSCL_OK) {
        if (e->opt->report)
            e->opt->report(e->opt->user, NULL, NULL, 0.0, cmrscl_last_error());
        /* a plan this device or matrix cannot take is skipped, not an error */
        bool skip = st == CMRSCL_ERROR_UNSUPPORTED || st == CMRSCL_ERROR_DEVICE_LIMIT ||
                    st == CMRSCL_ERROR_INVALID_ARGUMENT || st == CMRSCL_ERROR_BUILD;
        return skip ? CMRSCL_OK : st;
    }
    size_t vs = cmrscl_precision_size(e->precision), n = (size_t)a->rows;
    st = cmrscl_spmv(*m, 1.0, e->xbuf, 0.0, e->ybuf, NULL, 0, NULL, NULL);
    cl_int err = st == CMRSCL_OK && n ? clEnqueueReadBuffer(e->ctx->queue, e->ybuf, CL_TRUE, 0,
                                                            vs * n, e->yhost, 0, NULL, NULL)
                                      : CL_SUCCESS;
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clEnqueueReadBuffer (tuning)");
    double *y = st == CMRSCL_OK ? cmrscl_alloc(n, sizeof(double)) : NULL;
    double ratio = INFINITY;
    if (st == CMRSCL_OK && !y)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to check a plan");
    for (size_t i = 0; y && i < n; ++i)
        y[i] = vs == 4 ? (double)((float *)e->yhost)[i] : ((double *)e->yhost)[i];
    if (st == CMRSCL_OK)
        st = cmrscl_csr_spmv_check(&e->rounded, 1.0, e->x, 0.0, NULL, y,
                                   vs == 4 ? 0x1p-24 : 0x1p-53, NULL, &ratio);
    free(y);
    int warmup = e->opt->warmup ? e->opt->warmup : 3;
    int reps = e->opt->repetitions ? e->opt->repetitions : 20;
    if (st == CMRSCL_OK)
        st = cmrscl_spmv_time(*m, 1.0, e->xbuf, 0.0, e->ybuf, warmup, reps, t);
    if (st == CMRSCL_OK && e->opt->report)
        e->opt->report(e->opt->user, &(*m)->params, t, ratio, NULL);
    if (st != CMRSCL_OK || !(ratio <= 1.0)) {
        cmrscl_matrix_free(*m);
        *m = NULL;
    }
    return st;
}

static cmrscl_status tune_env_open(tune_env *e)
{
    const cmrscl_csr *a = e->csr;
    size_t vs = cmrscl_precision_size(e->precision);
    e->rounded = *a;
    e->rounded.values = cmrscl_alloc((size_t)a->nnz, sizeof(double));
    e->x = cmrscl_alloc((size_t)a->cols, sizeof(double));
    void *xd = cmrscl_alloc((size_t)a->cols, vs);
    e->yhost = cmrscl_alloc((size_t)a->rows, vs);
    cmrscl_status st = CMRSCL_OK;
    if (!e->rounded.values || !e->x || !xd || !e->yhost)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to tune");
    bool f = e->precision == CMRSCL_FLOAT;
    for (int64_t k = 0; st == CMRSCL_OK && k < a->nnz; ++k)
        e->rounded.values[k] = f ? (double)(float)a->values[k] : a->values[k];
    uint64_t s = 0x853c49e6748fea9bull;
    for (int32_t j = 0; st == CMRSCL_OK && j < a->cols; ++j) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double v = (double)(s >> 11) * 0x1p-52 - 1.0; /* [-1, 1) */
        e->x[j] = f ? (double)(float)v : v;
        if (f)
            ((float *)xd)[j] = (float)v;
        else
            ((double *)xd)[j] = v;
    }
    cl_int err = CL_SUCCESS;
    if (st == CMRSCL_OK) {
        e->xbuf =
            clCreateBuffer(e->ctx->context, CL_MEM_READ_ONLY | (a->cols ? CL_MEM_COPY_HOST_PTR : 0),
                           a->cols ? vs * (size_t)a->cols : 16, a->cols ? xd : NULL, &err);
        if (err == CL_SUCCESS)
            e->ybuf = clCreateBuffer(e->ctx->context, CL_MEM_READ_WRITE,
                                     a->rows ? vs * (size_t)a->rows : 16, NULL, &err);
        if (err != CL_SUCCESS)
            st = cmrscl_fail_cl(err, "clCreateBuffer (tuning vectors)");
    }
    free(xd);
    return st;
}

static void tune_env_close(tune_env *e)
{
    free(e->rounded.values);
    free(e->x);
    free(e->yhost);
    if (e->xbuf)
        clReleaseMemObject(e->xbuf);
    if (e->ybuf)
        clReleaseMemObject(e->ybuf);
}

/* Keeps the faster of *best and m, freeing the other. */
static void keep_best(cmrscl_matrix *best, double *best_ms, cmrscl_matrix m, double ms)
{
    if (!m)
        return;
    if (!*best || ms < *best_ms) {
        cmrscl_matrix_free(*best);
        *best = m, *best_ms = ms;
    } else {
        cmrscl_matrix_free(m);
    }
}

cmrscl_status cmrscl_matrix_tune(cmrscl_context ctx, cmrscl_precision precision,
                                 const cmrscl_csr *csr, const cmrscl_tune_options *opt,
                                 cmrscl_matrix *out)
{
    static const cmrscl_tune_options defaults;
    if (out)
        *out = NULL;
    if (!ctx || !out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "context or out is NULL");
    cmrscl_status st = cmrscl_csr_validate(csr);
    if (st != CMRSCL_OK)
        return st;
    tune_env e = {ctx, precision, csr, {0}, NULL, NULL, NULL, NULL, opt ? opt : &defaults};
    cmrscl_options c[MAX_CANDIDATES];
    double ms[MAX_CANDIDATES];
    int n = candidates(&ctx->info, c);
    cmrscl_matrix best = NULL;
    double best_ms = 0.0;
    st = tune_env_open(&e);
    for (int i = 0; st == CMRSCL_OK && i < n; ++i) {
        cmrscl_matrix m;
        cmrscl_timing t = {0};
        st = try_plan(&e, &c[i], &m, &t);
        ms[i] = m ? t.median_ms : INFINITY;
        keep_best(&best, &best_ms, m, ms[i]);
    }
    /* The streaming hint on the few fastest plans (NVIDIA: it is inline PTX). */
    for (int r = 0; st == CMRSCL_OK && ctx->info.warp_shuffle && r < HINT_RETRIES; ++r) {
        int k = -1;
        for (int i = 0; i < n; ++i)
            if (ms[i] < INFINITY && (k < 0 || ms[i] < ms[k]))
                k = i;
        if (k < 0)
            break;
        ms[k] = INFINITY; /* taken */
        cmrscl_options o = c[k];
        o.cache_hint = CMRSCL_CACHE_HINT_STREAM;
        cmrscl_matrix m;
        cmrscl_timing t = {0};
        st = try_plan(&e, &o, &m, &t);
        keep_best(&best, &best_ms, m, m ? t.median_ms : INFINITY);
    }
    tune_env_close(&e);
    if (st == CMRSCL_OK && !best)
        st = cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                         "no candidate plan ran correctly on device \"%s\"", ctx->info.device_name);
    if (st != CMRSCL_OK) {
        cmrscl_matrix_free(best);
        return st;
    }
    cmrscl_params *p = &best->params;
    cmrscl_options win = {0}; /* what to ask for next time: the plan's choices, tile automatic */
    win.kernel = p->kernel, win.height = p->height, win.warp = p->warp;
    win.reduce = p->reduce, win.cache_hint = p->cache_hint, win.order = p->order;
    char cls[64];
    cmrs_tuning_class(&p->stats, p->nnz, cls, sizeof cls);
    if (!e.opt->no_database)
        st = cmrs_tuning_db_store(&ctx->info, precision, cls, &win, best_ms);
    p->height_source = "tuned";
    snprintf(p->plan_reason, sizeof p->plan_reason,
             "fastest of the plans cmrscl_matrix_tune timed on this matrix (class %s)", cls);
    if (st != CMRSCL_OK) {
        cmrscl_matrix_free(best);
        return st;
    }
    *out = best;
    return CMRSCL_OK;
}
