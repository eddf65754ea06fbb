/* timing.c - how long a distributed product takes and where the time goes: back-to-back
 * loops with and without the overlap (host clock), then each part from profiling events
 * and the host clock, per product, medians. The overlap's worth is what the serial loop
 * loses: (serial loop - overlapped loop) / (pack + exchange + unpack). */
#include "dist_internal.h"

#include <stdlib.h>
#include <string.h>

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* An event's start or end on the device's clock (0 when absent). */
static cl_ulong stamp(cl_event e, cl_profiling_info what)
{
    cl_ulong t = 0;
    if (e && clGetEventProfilingInfo(e, what, sizeof t, &t, NULL) != CL_SUCCESS)
        t = 0;
    return t;
}

static double ms_between(cl_ulong t0, cl_ulong t1)
{
    return t0 && t1 > t0 ? (double)(t1 - t0) * 1e-6 : 0.0;
}

/* Milliseconds from the start of `from` to the end of `to` (0 when either is absent). */
static double span_ms(cl_event from, cl_event to)
{
    return to ? ms_between(stamp(from, CL_PROFILING_COMMAND_START),
                           stamp(to, CL_PROFILING_COMMAND_END))
              : 0.0;
}

static cl_ulong later(cl_ulong a, cl_ulong b) { return a > b ? a : b; }

typedef struct run_args {
    double alpha, beta;
    cl_mem x, y;
} run_args;

/* Host milliseconds per product of n products back to back, the ranks started together. */
static cmrscl_status loop_ms(cmrscl_dist_matrix m, const run_args *a, bool overlap, int n,
                             double *out)
{
    cmrscl_status st = CMRSCL_OK;
    clFinish(m->queue);
    MPI_Barrier(m->comm);
    double t0 = cmrs_dist_seconds();
    for (int i = 0; i < n && st == CMRSCL_OK; ++i)
        st = cmrs_dist_product(m, CMRSCL_OK, a->alpha, a->x, a->beta, a->y, overlap, NULL);
    clFinish(m->queue);
    *out = (cmrs_dist_seconds() - t0) * 1e3 / n;
    return st;
}

/* n recorded products; parts[p][i] is part p of product i in ms. */
enum {
    PART_PRODUCT,
    PART_LOCAL,
    PART_REMOTE,
    PART_PACK,
    PART_EXCHANGE,
    PART_UNPACK,
    PART_WAIT,
    PART_COMMUNICATION,
    PARTS
};

static cmrscl_status recorded(cmrscl_dist_matrix m, const run_args *a, bool overlap, int n,
                              double *parts[PARTS])
{
    cmrscl_status st = CMRSCL_OK;
    for (int i = 0; i < n && st == CMRSCL_OK; ++i) {
        product_record r = {0};
        st = cmrs_dist_product(m, CMRSCL_OK, a->alpha, a->x, a->beta, a->y, overlap, &r);
        clFinish(m->queue);
        /* A product's event is its last kernel's (a split plan has two), so where the queue
         * says when a product began - after the gather for the local one, after the local
         * product and the halo's write for the remote one - that is its start. */
        cl_event remote_end = r.scatter ? r.scatter : r.remote;
        cl_ulong local_end = stamp(r.local, CL_PROFILING_COMMAND_END);
        cl_ulong local_start = r.gather ? stamp(r.gather, CL_PROFILING_COMMAND_END)
                                        : stamp(r.local, CL_PROFILING_COMMAND_START);
        cl_event first = r.gather ? r.gather : r.local;
        parts[PART_PRODUCT][i] = span_ms(first, remote_end ? remote_end : r.local);
        parts[PART_LOCAL][i] = ms_between(local_start, local_end);
        parts[PART_REMOTE][i] =
            r.remote ? ms_between(later(local_end, stamp(r.write, CL_PROFILING_COMMAND_END)),
                                  stamp(remote_end, CL_PROFILING_COMMAND_END))
                     : 0.0;
        parts[PART_PACK][i] = span_ms(r.gather, r.read);
        /* A rank without neighbours has nothing to exchange: no time to hide. */
        parts[PART_EXCHANGE][i] = m->plan.neighbours > 0 ? r.exchange_s * 1e3 : 0.0;
        parts[PART_UNPACK][i] = span_ms(r.write, r.write);
        parts[PART_WAIT][i] = r.wait_s * 1e3;
        parts[PART_COMMUNICATION][i] =
            parts[PART_PACK][i] + parts[PART_EXCHANGE][i] + parts[PART_UNPACK][i];
        cmrs_dist_record_release(&r);
    }
    return st;
}

cmrscl_status cmrscl_dist_spmv_time(cmrscl_dist_matrix m, double alpha, cl_mem x, double beta,
                                    cl_mem y, int warmup, int repetitions, cmrscl_dist_timing *out)
{
    if (!m)
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    double *store = NULL;
    cmrscl_status st = CMRSCL_OK;
    if (!out || warmup < 0 || repetitions < 1)
        st = cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                            "out is NULL, or warmup %d < 0, or repetitions %d < 1", warmup,
                            repetitions);
    else if (!(store = calloc((size_t)PARTS * 2 * (size_t)repetitions, sizeof *store)))
        st = cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d timings",
                            repetitions);
    if ((st = cmrs_dist_agree(m->comm, st)) != CMRSCL_OK)
        return st;
    memset(out, 0, sizeof *out);
    out->warmup = warmup, out->repetitions = repetitions;
    run_args a = {alpha, beta, x, y};
    double *over[PARTS], *serial[PARTS];
    for (int p = 0; p < PARTS; ++p) {
        over[p] = store + (size_t)p * (size_t)repetitions;
        serial[p] = store + (size_t)(PARTS + p) * (size_t)repetitions;
    }
    for (int i = 0; i < warmup && st == CMRSCL_OK; ++i)
        st = cmrs_dist_product(m, CMRSCL_OK, alpha, x, beta, y, true, NULL);
    if (st == CMRSCL_OK)
        st = loop_ms(m, &a, true, repetitions, &out->loop_ms);
    if (st == CMRSCL_OK)
        st = loop_ms(m, &a, false, repetitions, &out->serial_loop_ms);
    if (st == CMRSCL_OK)
        st = recorded(m, &a, true, repetitions, over);
    if (st == CMRSCL_OK)
        st = recorded(m, &a, false, repetitions, serial);
    if (st == CMRSCL_OK) {
        int n = repetitions;
        out->product_ms = median(over[PART_PRODUCT], n);
        out->local_ms = median(over[PART_LOCAL], n);
        out->remote_ms = median(over[PART_REMOTE], n);
        out->wait_ms = median(over[PART_WAIT], n);
        out->pack_ms = median(serial[PART_PACK], n);
        out->exchange_ms = median(serial[PART_EXCHANGE], n);
        out->unpack_ms = median(serial[PART_UNPACK], n);
        out->communication_ms = median(serial[PART_COMMUNICATION], n);
        double saved = out->serial_loop_ms - out->loop_ms;
        out->hidden = out->communication_ms <= 0.0     ? 0.0
                      : saved <= 0.0                   ? 0.0
                      : saved >= out->communication_ms ? 1.0
                                                       : saved / out->communication_ms;
    }
    free(store);
    return st;
}
