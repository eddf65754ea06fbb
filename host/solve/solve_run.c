/* solve_run.c - a solve on the device once its solver is ready (solver.c): passes of the
 * method - r = b - A x, its start, its iterations enqueued in batches between checks of the
 * device's state - until the device stops it, then the true residual ||b - A x|| and, where
 * the recurrence claimed a convergence the true residual denies, passes again from x
 * (residual replacement); the history and the outcome. A check reads the workspace's header
 * without stalling the device: the host enqueues the next batch before it waits for the read
 * behind it, so the device always has work. A monitor wants each check as it happens, with x
 * that of the check: the host holds back the next write of x alone - it enqueues what the
 * iteration does after that write and the next one's launches before it (ITER_ parts,
 * solve.h), then waits and calls the monitor while the device runs them. */
#include "solve/solve.h"

#include <math.h>
#include <stdlib.h>

#define MAX_CHECK_INTERVAL 64
/* A restart from the true residual goes on while each pass cuts it to this share or less
 * (replace_residual). */
#define REPLACE_PROGRESS 0.9
/* A restart for room beside the rounding of ||b - A x|| is tried while that rounding is at most
 * this share of the threshold (replace_residual). */
#define ROUNDING_ROOM 0.5

/* Header slot `slot` of a header read back in the solver's precision. */
static double slot_of(const cmrscl_solver s, const void *header, int slot)
{
    return s->precision == CMRSCL_DOUBLE ? ((const double *)header)[slot]
                                         : ((const float *)header)[slot];
}

/* Why the solve stopped (a CMRS_STOP_ code; 0: it has not): its stop slots' first set one. */
static int stop_of(const cmrscl_solver s, const void *header)
{
    for (int j = 0; j < CMRS_WS_STOP_SLOTS; ++j)
        if (slot_of(s, header, CMRS_WS_STOP + j) != 0)
            return (int)slot_of(s, header, CMRS_WS_STOP + j);
    return 0;
}

/* On an out-of-order queue a command waits for those before it only behind a barrier: every
 * kernel of a solve has one (cmrs_solve_launch), and so does each read of what they wrote. */
static cl_int after_kernels(cmrscl_solver s)
{
    return s->out_of_order ? clEnqueueBarrierWithWaitList(s->queue, 0, NULL, NULL) : CL_SUCCESS;
}

static cmrscl_status read_header(cmrscl_solver s, void *header, bool blocking, cl_event *done)
{
    cl_int err = after_kernels(s);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(s->queue, s->ws, blocking ? CL_TRUE : CL_FALSE, 0,
                                  CMRS_WS_HEADER * s->value_size, header, 0, NULL, done);
    if (err == CL_SUCCESS && !blocking)
        err = clFlush(s->queue);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "reading the solver's state");
}

/* The interval that balances the checks' cost (i / k checks of c seconds) against the
 * iterations run past convergence (about k / 2 of t seconds): k = sqrt(2 i c / t), with the
 * iterations done so far, i, standing for those still to come. */
static int adapt_interval(const cmrscl_solver s, int done, double per_iteration)
{
    if (done < 1 || !(per_iteration > 0))
        return 1;
    double k = sqrt(2.0 * done * s->check_seconds / per_iteration);
    return k < 1 ? 1 : k > MAX_CHECK_INTERVAL ? MAX_CHECK_INTERVAL : (int)(k + 0.5);
}

/* The pass's iterations, in batches between checks, until the device stops the solve or the
 * pass's max. */
static cmrscl_status iterate(cmrscl_solver s, cmrscl_solve_result *res)
{
    const int max = s->pass_max;
    char *header[2] = {s->headers, (char *)s->headers + CMRS_WS_HEADER * s->value_size};
    cl_event read[2] = {NULL, NULL};
    int enqueued[2] = {0, 0}, slot = 0, i = 0,
        k = s->opt.check_interval ? s->opt.check_interval : 1;
    bool pipelined = !s->opt.monitor;
    cmrscl_status st = CMRSCL_OK;
    double t0 = cmrscl_seconds();
    s->launches = 0;
    bool ahead_done = false; /* the batch's first iteration's AHEAD, enqueued past a check */
    while (st == CMRSCL_OK) {
        int batch = k < max - i ? k : max - i;
        /* with a monitor, the batch's last BEHIND and the next AHEAD go after the read */
        bool held = !pipelined && i + batch < max;
        for (int j = 0; j < batch && st == CMRSCL_OK; ++j) {
            unsigned parts = ITER_ALL & ~(j == 0 && ahead_done ? ITER_AHEAD : 0u) &
                             ~(held && j == batch - 1 ? ITER_BEHIND : 0u);
            st = s->method->iterate(s, i + j, max, parts);
        }
        i += batch;
        if (st == CMRSCL_OK && i == max)
            st = s->method->check_last(s, max);
        if (st == CMRSCL_OK)
            st = read_header(s, header[slot], false, &read[slot]);
        if (st == CMRSCL_OK && held)
            st = s->method->iterate(s, i - 1, max, ITER_BEHIND);
        if (st == CMRSCL_OK && held)
            st = s->method->iterate(s, i, max, ITER_AHEAD);
        ahead_done = held;
        cl_int flushed = st == CMRSCL_OK && held ? clFlush(s->queue) : CL_SUCCESS;
        if (flushed != CL_SUCCESS)
            st = cmrscl_fail_cl(flushed, "clFlush (solver)");
        if (st != CMRSCL_OK)
            break;
        enqueued[slot] = i;
        ++res->checks;
        /* the check behind this one, while the device runs this batch (the first and the
         * last: this one) */
        int look = pipelined && read[slot ^ 1] && i < max ? slot ^ 1 : slot;
        cl_int err = clWaitForEvents(1, &read[look]);
        clReleaseEvent(read[look]), read[look] = NULL;
        if (err != CL_SUCCESS) {
            st = cmrscl_fail_cl(err, "waiting for the solver's state");
            break;
        }
        if (s->opt.monitor)
            s->opt.monitor(s->opt.monitor_data, (int)slot_of(s, header[look], CMRS_WS_ITER),
                           sqrt(slot_of(s, header[look], CMRS_WS_RR)));
        if (stop_of(s, header[look]) != 0 || i >= max)
            break;
        if (!s->opt.check_interval)
            k = adapt_interval(s, enqueued[look], (cmrscl_seconds() - t0) / enqueued[look]);
        slot ^= 1;
    }
    for (int j = 0; j < 2; ++j)
        if (read[j]) {
            clWaitForEvents(1, &read[j]);
            clReleaseEvent(read[j]);
        }
    cl_int err = clFinish(s->queue);
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clFinish (solver)");
    res->iterate_seconds += cmrscl_seconds() - t0;
    res->check_interval = k;
    s->iterations_enqueued += i, s->launches_enqueued += s->launches;
    return st;
}

/* ||b - A x|| from a product, the partial sums added in double on the host; with `rounding`,
 * also that norm's rounding in the precision (cmrscl_solve_result.true_residual_rounding):
 * b - A x again from 3 x rounded anew, 3 b - A (3 x), whose products and sums round
 * otherwise, and ||(3 b - A (3 x)) - 3 (b - A x)|| / 3 - an evaluation's error, measured
 * rather than bounded: a bound from |A| |x| runs tens of times above what the sums lose on
 * ill-conditioned matrices, and would deny thresholds double resolves. */
static cmrscl_status true_residual(cmrscl_solver s, cl_mem b, cl_mem x, bool rounding,
                                   cmrscl_solve_result *out)
{
    /* vectors free once the method is done (GMRES without M keeps its basis in vec[3]) */
    cl_mem t = s->vec[1], x3 = s->vec[0], t3 = !rounding ? NULL : s->vec[2] ? s->vec[2] : s->vec[3];
    cmrscl_status st = cmrs_solve_copy(s, b, t);
    if (st == CMRSCL_OK)
        st = cmrs_solve_plain_product(s, -1.0, x, 1.0, t);
    cl_int err = CL_SUCCESS;
    if (st == CMRSCL_OK && rounding) {
        solve_arg args[] = {SOLVE_UINT(s->n), SOLVE_MEM(x), SOLVE_MEM(x3)};
        st = cmrs_solve_set_args(s->triple, 0, 3, args);
        if (st == CMRSCL_OK)
            st = cmrs_solve_launch(s, s->triple, 0);
        if (st == CMRSCL_OK)
            st = cmrs_solve_copy(s, b, t3);
        if (st == CMRSCL_OK)
            st = cmrs_solve_plain_product(s, -1.0, x3, 3.0, t3);
    }
    if (st == CMRSCL_OK && (err = clSetKernelArg(s->norm, 2, sizeof t3, &t3)) != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clSetKernelArg (solve_norm)");
    if (st == CMRSCL_OK)
        st = cmrs_solve_launch(s, s->norm, 0);
    size_t count = 4 * s->groups;
    double *sums = st == CMRSCL_OK ? cmrscl_alloc(count, sizeof(double)) : NULL;
    if (st == CMRSCL_OK && !sums)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the solver");
    err = st == CMRSCL_OK ? after_kernels(s) : CL_SUCCESS;
    if (st == CMRSCL_OK && err == CL_SUCCESS)
        err = clEnqueueReadBuffer(s->queue, s->ws, CL_TRUE, s->at.second * s->value_size,
                                  count * s->value_size, sums, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clEnqueueReadBuffer (the true residual)");
    double sum[2] = {0, 0};
    for (size_t g = 0; st == CMRSCL_OK && g < s->groups; ++g)
        for (int j = 0; j < 2; ++j)
            sum[j] +=
                s->precision == CMRSCL_DOUBLE ? sums[4 * g + j] : ((const float *)sums)[4 * g + j];
    free(sums);
    out->true_residual = sqrt(sum[0]);
    out->true_residual_rounding = rounding ? sqrt(sum[1]) / 3 : 0;
    return st;
}

/* The history, ||r_k|| for k = 0..iterations, read back once. */
static cmrscl_status read_history(cmrscl_solver s, int iterations, cmrscl_solve_result *res)
{
    size_t n = (size_t)iterations + 1;
    if (n > s->at.history_cap)
        n = s->at.history_cap;
    void *raw = cmrscl_alloc(n, s->value_size);
    res->history = cmrscl_alloc(n, sizeof(double));
    if (!raw || !res->history) {
        free(raw), free(res->history), res->history = NULL;
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the history");
    }
    cl_int err = after_kernels(s);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(s->queue, s->ws, CL_TRUE, s->at.history * s->value_size,
                                  n * s->value_size, raw, 0, NULL, NULL);
    for (size_t k = 0; err == CL_SUCCESS && k < n; ++k) {
        double rr = slot_of(s, raw, (int)k);
        res->history[k] = sqrt(rr > 0 ? rr : 0);
    }
    free(raw);
    res->history_length = err == CL_SUCCESS ? (int)n : 0;
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueReadBuffer (history)");
}

/* max(rtol ||b||, atol), in double: what the true residual must meet. */
static double threshold_of(const cmrscl_solver s, const void *header)
{
    double scaled = s->opt.rtol * sqrt(fmax(slot_of(s, header, CMRS_WS_BB), 0));
    return scaled > s->opt.atol ? scaled : s->opt.atol;
}

/* Whether ||b - A x|| meets the threshold with room for its own rounding: whoever evaluates it
 * again, summing in another order, finds it met too. */
static bool certified(const cmrscl_solve_result *res, double threshold)
{
    return res->true_residual + res->true_residual_rounding <= threshold;
}

/* The outcome from the header: the result's fields, and the status with its message. */
static cmrscl_status outcome(cmrscl_solver s, const void *header, cmrscl_solve_result *res)
{
    int stop = stop_of(s, header);
    double value = slot_of(s, header, CMRS_WS_VALUE);
    res->iterations = (int)slot_of(s, header, CMRS_WS_ITER);
    res->residual = sqrt(fmax(slot_of(s, header, CMRS_WS_RR), 0));
    res->b_norm = sqrt(fmax(slot_of(s, header, CMRS_WS_BB), 0));
    res->threshold = threshold_of(s, header);
    res->breakdown = value;
    const char *name = s->method->name;
    switch (stop) {
    case 0: res->reason = CMRSCL_SOLVE_MAX_ITERATIONS; return CMRSCL_OK;
    case CMRS_STOP_CONVERGED:
        /* converged only where b - A x meets the threshold too (replace_residual) */
        if (!certified(res, res->threshold)) {
            res->reason = CMRSCL_SOLVE_DRIFTED;
            return CMRSCL_OK;
        }
        res->reason = CMRSCL_SOLVE_CONVERGED, res->converged = 1;
        return CMRSCL_OK;
    case CMRS_STOP_BAD_INPUT: {
        double bad_b = slot_of(s, header, CMRS_WS_BAD_B), bad_x = slot_of(s, header, CMRS_WS_BAD_X);
        res->reason = CMRSCL_SOLVE_BAD_INPUT;
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "%s: %s holds %.0f values that are NaN or Inf", name,
                           bad_b ? "b" : "x0 (x on entry)", bad_b ? bad_b : bad_x);
    }
    case CMRS_STOP_BREAKDOWN: {
        char why[256];
        s->method->breakdown(s, value, (int)slot_of(s, header, CMRS_WS_CAUSE), res->iterations, why,
                             sizeof why);
        res->reason = CMRSCL_SOLVE_BREAKDOWN;
        return cmrscl_fail(CMRSCL_ERROR_BREAKDOWN, "%s", why);
    }
    default:
        res->reason = CMRSCL_SOLVE_NONFINITE;
        return cmrscl_fail(CMRSCL_ERROR_BREAKDOWN,
                           "%s: a scalar of the recurrence became %g at iteration %d (a value "
                           "beyond the precision's range, or NaN or Inf in the matrix)",
                           name, value, res->iterations);
    }
}

/* A pass of the solve: r = b - A x, the method's start after s->done iterations, its
 * iterations until the device stops them or max_iterations, x completed; the header read. */
static cmrscl_status run_pass(cmrscl_solver s, cl_mem b, cl_mem x, void *header,
                              cmrscl_solve_result *out)
{
    s->pass_max = s->opt.max_iterations - s->done;
    cmrscl_status st = cmrs_solve_copy(s, b, s->vec[0]);
    if (st == CMRSCL_OK)
        st = cmrs_solve_plain_product(s, -1.0, x, 1.0, s->vec[0]);
    if (st == CMRSCL_OK)
        st = s->method->start(s, b, x);
    cl_int err; /* the iterations are timed from a quiet queue */
    if (st == CMRSCL_OK && (err = clFinish(s->queue)) != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clFinish (solver)");
    if (st == CMRSCL_OK)
        st = iterate(s, out);
    if (st == CMRSCL_OK)
        st = s->method->finish(s, x);
    if (st == CMRSCL_OK)
        st = read_header(s, header, true, NULL);
    return st;
}

/* Residual replacement where the recurrence claims convergence that b - A x denies: the
 * recurrence's residual drifts from the true one, by rounding (low precision, an
 * ill-conditioned matrix, many iterations: pipelined CG's r.r is a difference of two
 * larger terms). While iterations remain, the method starts again from x with r = b - A x
 * - the restart costs the Krylov space built so far, which is why it happens only when the
 * claim was wrong - as long as each pass cuts the true residual to REPLACE_PROGRESS of what
 * it was or less; when one does not, the precision has reached what it can (x's own
 * rounding, and that of b - A x), and the solve ends not converged, reason DRIFTED.
 * A true residual that meets the threshold by less than its rounding is not yet converged
 * either: a restart aims lower, where there is room below the threshold for the rounding
 * (ROUNDING_ROOM); where there is not, no restart can show ||b - A x|| to meet the threshold
 * in this precision - a restart from a residual of rounding alone solves for that rounding
 * and drives x away - and the solve ends DRIFTED at once, x kept. A pass
 * that gains little costs a few iterations and a round trip, so the bar is low: halving
 * stopped passes that were still on their way to the threshold (docs/dev/PERFORMANCE.md,
 * REPLACE_PROGRESS). */
static cmrscl_status replace_residual(cmrscl_solver s, cl_mem b, cl_mem x, void *header,
                                      cmrscl_solve_result *out)
{
    cmrscl_status st = CMRSCL_OK;
    double before = INFINITY;
    while (st == CMRSCL_OK && stop_of(s, header) == CMRS_STOP_CONVERGED &&
           !certified(out, threshold_of(s, header))) {
        s->done = (int)slot_of(s, header, CMRS_WS_ITER);
        double threshold = threshold_of(s, header), rounding = out->true_residual_rounding;
        bool room = rounding < ROUNDING_ROOM * threshold;
        if (s->done >= s->opt.max_iterations ||
            !(out->true_residual <= REPLACE_PROGRESS * before) ||
            (out->true_residual <= threshold && !room))
            break; /* DRIFTED (outcome) */
        before = out->true_residual;
        /* aim below the threshold by the rounding, and halfway further: the recurrence's
         * claim there leaves the rounding room beside ||b - A x|| */
        s->target = room ? 0.5 * (1 - rounding / threshold) : 1;
        ++out->replacements;
        st = run_pass(s, b, x, header, out);
        if (st == CMRSCL_OK)
            st = true_residual(s, b, x, stop_of(s, header) == CMRS_STOP_CONVERGED, out);
    }
    return st;
}

cmrscl_status cmrs_solve_run(cmrscl_solver s, cl_mem b, cl_mem x, cmrscl_solve_result *out)
{
    s->b = b, s->x = x;
    s->iterations_enqueued = s->launches_enqueued = 0;
    double header[CMRS_WS_HEADER];
    s->done = 0, s->target = 1;
    cmrscl_status st = run_pass(s, b, x, header, out);
    bool zero_b = st == CMRSCL_OK && slot_of(s, header, CMRS_WS_ZERO_B) != 0;
    cl_uchar zero = 0;
    cl_int err;
    if (zero_b && ((err = after_kernels(s)) != CL_SUCCESS ||
                   (err = clEnqueueFillBuffer(s->queue, x, &zero, 1, 0, s->n * s->value_size, 0,
                                              NULL, NULL)) != CL_SUCCESS))
        st = cmrscl_fail_cl(err, "clEnqueueFillBuffer (x = 0 for b = 0)");
    if (st == CMRSCL_OK)
        st = true_residual(s, b, x, !zero_b && stop_of(s, header) == CMRS_STOP_CONVERGED, out);
    if (st == CMRSCL_OK && !zero_b)
        st = replace_residual(s, b, x, header, out);
    if (st == CMRSCL_OK)
        st = read_history(s, (int)slot_of(s, header, CMRS_WS_ITER), out);
    int done = s->iterations_enqueued;
    out->launches_per_iteration = done ? (s->launches_enqueued + done / 2) / done : 0;
    if (st != CMRSCL_OK)
        return st;
    st = outcome(s, header, out);
    if (zero_b) /* x = 0 is exact: its residual is 0, whatever x0 left in the recurrence */
        out->residual = out->history[out->history_length - 1] = 0;
    return st;
}
