/* matrix_device.c - matrices whose CSR arrays already live on the device
 * (cmrscl_matrix_create_from_cl): a kernel checks the CSR, RowPtr and a bounded sample of
 * columns come back for the statistics and the plan (matrix.c's, shared), and the kernels of
 * cl/convert.cl build the CMRS arrays in place; and values-only updates of any matrix
 * (cmrscl_matrix_update_values[_cl]), gathered on the device through a permutation. */
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONVERT_GROUP 256 /* work-items per group of the conversion kernels */

/* A CSR matrix in device buffers, borrowed from the caller. */
typedef struct device_csr {
    int32_t rows, cols, nnz;
    cl_mem row_ptr, col_ind, values;
} device_csr;

/* Where the conversion's commands go: the context's queue. An out-of-order queue gets a
 * barrier after each command, so every step sees the one before it. */
typedef struct launcher {
    cmrscl_context ctx;
    cl_command_queue queue;
    bool out_of_order;
    cl_program program; /* convert.cl for the matrix's and the source's precision */
} launcher;

static launcher launcher_make(cmrscl_context ctx)
{
    launcher l = {ctx, ctx->queue, false, NULL};
    cl_command_queue_properties props = 0;
    clGetCommandQueueInfo(l.queue, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    l.out_of_order = (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
    return l;
}

static cl_int order_point(const launcher *l)
{
    return l->out_of_order ? clEnqueueBarrierWithWaitList(l->queue, 0, NULL, NULL) : CL_SUCCESS;
}

/* convert.cl is built after spmv_common.cl like the families; its plan-dependent values are
 * kernel arguments, so the program depends on the precisions alone (one build per context
 * and pair, not per plan). *seconds (may be NULL) grows by the build or load time. */
static cmrscl_status convert_program(cmrscl_context ctx, cmrscl_precision precision,
                                     cmrscl_precision source, cl_program *out, double *seconds)
{
    char options[192];
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -DCONVERT=1 -DHEIGHT=1 -DWARP=1 -DWG_SIZE=1 -DVALUE_DOUBLE=%d "
             "-DSOURCE_DOUBLE=%d -DENTRY_PAD=%d",
             precision == CMRSCL_DOUBLE, source == CMRSCL_DOUBLE, CMRS_ENTRY_PAD);
    double s = 0.0;
    cmrscl_program_source from;
    cmrscl_status st = program_get(ctx, "convert.cl", options, out, &s, &from);
    if (seconds)
        *seconds += s;
    return st;
}

/* One kernel argument: its size and where its value is. */
typedef struct arg {
    size_t size;
    const void *value;
} arg;
#define ARG(v) ((arg){sizeof(v), &(v)})
#define COUNT(args) ((int)(sizeof(args) / sizeof((args)[0])))

static cmrscl_status set_args(cl_kernel k, const arg *args, int n)
{
    cl_int err = CL_SUCCESS;
    for (int i = 0; i < n; ++i)
        err |= clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].value);
    return err == CL_SUCCESS ? CMRSCL_OK
                             : cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg failed");
}

/* Enqueues `items` work-items (none: nothing) of a kernel whose arguments are set. */
static cmrscl_status enqueue(const launcher *l, cl_kernel k, size_t items, cl_uint num_wait,
                             const cl_event *wait, cl_event *done)
{
    if (items == 0)
        return CMRSCL_OK;
    size_t local = CONVERT_GROUP, global = (items + local - 1) / local * local;
    cl_int err =
        clEnqueueNDRangeKernel(l->queue, k, 1, NULL, &global, &local, num_wait, wait, done);
    if (err == CL_SUCCESS)
        err = order_point(l);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueNDRangeKernel");
}

/* Runs kernel `name` of the launcher's program once over `items` work-items. */
static cmrscl_status run(const launcher *l, const char *name, const arg *args, int nargs,
                         size_t items, cl_event *done)
{
    cl_int err;
    cl_kernel k = clCreateKernel(l->program, name, &err);
    if (!k)
        return cmrscl_fail_cl(err, name);
    cmrscl_status st = set_args(k, args, nargs);
    cl_event traced = NULL; /* CMRSCL_TRACE: each kernel's device time, waited for */
    if (st == CMRSCL_OK)
        st = enqueue(l, k, items, 0, NULL, done ? done : cmrscl_tracing() ? &traced : NULL);
    clReleaseKernel(k);
    cl_event timed = done ? *done : traced;
    cl_ulong t[2] = {0, 0};
    if (st == CMRSCL_OK && timed && cmrscl_tracing() && clWaitForEvents(1, &timed) == CL_SUCCESS &&
        clGetEventProfilingInfo(timed, CL_PROFILING_COMMAND_START, sizeof t[0], &t[0], NULL) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(timed, CL_PROFILING_COMMAND_END, sizeof t[1], &t[1], NULL) ==
            CL_SUCCESS)
        cmrscl_trace("%s: %.3f ms on the device (%zu work-items)", name, (t[1] - t[0]) * 1e-6,
                     items);
    if (traced)
        clReleaseEvent(traced);
    return st;
}

static cmrscl_status wait_for(cl_event *events, cl_uint n)
{
    cl_int err = clWaitForEvents(n, events);
    for (cl_uint i = 0; i < n; ++i)
        clReleaseEvent(events[i]);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clWaitForEvents");
}

static cmrscl_status read_ints(const launcher *l, cl_mem buf, size_t first, size_t n, void *dst)
{
    cl_int err = clEnqueueReadBuffer(l->queue, buf, CL_TRUE, first * sizeof(int32_t),
                                     n * sizeof(int32_t), dst, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueReadBuffer");
}

static cl_mem new_buffer(cmrscl_context ctx, cl_mem_flags flags, size_t bytes, void *host,
                         cmrscl_status *st, const char *what)
{
    cl_int err = CL_SUCCESS;
    cl_mem b =
        clCreateBuffer(ctx->context, flags | (host ? CL_MEM_COPY_HOST_PTR : 0), bytes, host, &err);
    if (!b)
        *st = cmrscl_fail_cl(err, what);
    return b;
}

/* ---- cmrscl_matrix_create_from_cl ---- */

static cmrscl_status check_arguments(cmrscl_context ctx, cmrscl_precision precision,
                                     const device_csr *a)
{
    if (!ctx)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "context is NULL");
    if (precision != CMRSCL_FLOAT && precision != CMRSCL_DOUBLE)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "precision %d is neither CMRSCL_FLOAT nor CMRSCL_DOUBLE",
                           (int)precision);
    if (precision == CMRSCL_DOUBLE && !ctx->info.fp64)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "double precision needs cl_khr_fp64, which device \"%s\" lacks",
                           ctx->info.device_name);
    if (a->rows < 0 || a->cols < 0 || a->nnz < 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "negative size %d x %d, nnz %d", a->rows,
                           a->cols, a->nnz);
    size_t vs = cmrscl_precision_size(precision), nnz = (size_t)a->nnz;
    cmrscl_status st =
        buffer_check(ctx->context, a->row_ptr, sizeof(int32_t) * ((size_t)a->rows + 1), "row_ptr");
    if (st == CMRSCL_OK)
        st = buffer_check(ctx->context, a->col_ind, sizeof(int32_t) * nnz, "col_ind");
    if (st == CMRSCL_OK)
        st = buffer_check(ctx->context, a->values, vs * nnz, "values");
    return st;
}

/* The last row whose start is at most e (what row_of_entry in cl/convert.cl finds). */
static int32_t row_holding(const int32_t *row_ptr, int32_t rows, int32_t e)
{
    int32_t lo = 0, hi = rows;
    while (hi - lo > 1) {
        int32_t mid = lo + (hi - lo) / 2;
        if (row_ptr[mid] <= e)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The message for what convert_check found: the row pointers first (the entry checks
 * assume them), then the first offending entry. */
static cmrscl_status report_bad_csr(const launcher *l, const device_csr *a, const int32_t *rp,
                                    const cl_int bad[3])
{
    int32_t i = bad[0], rows = a->rows, nnz = a->nnz;
    if (i != INT_MAX) {
        if (i == 0 && rp[0] != 0)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "row_ptr[0] = %d, expected 0", rp[0]);
        if (rp[i] < 0 || rp[i] > nnz)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                               "row_ptr[%d] = %d is outside 0..nnz = %d", i, rp[i], nnz);
        if (i > 0 && rp[i] < rp[i - 1])
            return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                               "row_ptr decreases: row_ptr[%d] = %d < row_ptr[%d] = %d", i, rp[i],
                               i - 1, rp[i - 1]);
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "row_ptr[rows = %d] = %d but nnz = %d",
                           rows, rp[rows], nnz);
    }
    int32_t e = bad[1] < bad[2] ? bad[1] : bad[2];
    int32_t c[2] = {0, 0};
    cmrscl_status st = e > 0 ? read_ints(l, a->col_ind, (size_t)e - 1, 2, c)
                             : read_ints(l, a->col_ind, (size_t)e, 1, c + 1);
    if (st != CMRSCL_OK)
        return st;
    int32_t row = row_holding(rp, rows, e);
    if (e == bad[1])
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                           "col_ind[%d] = %d (row %d) is outside 0..%d", e, c[1], row, a->cols - 1);
    return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                       "columns of row %d are not strictly ascending: col_ind[%d] = %d, "
                       "col_ind[%d] = %d (cmrscl_matrix_create_from_cl takes canonical CSR: "
                       "sorted columns, no duplicates)",
                       row, e - 1, c[0], e, c[1]);
}

/* Checks the CSR on the device, gathers the column spread's sample beside the check, and
 * reads RowPtr, the check's findings and the sample back in one round trip; then the row
 * statistics (analyze.c, on the sample in the order the host path sums it: the same
 * statistics, bit for bit). */
static cmrscl_status check_and_analyze(const launcher *l, const device_csr *a, int32_t *rp,
                                       cmrscl_matrix_stats *stats)
{
    cl_int bad[3] = {INT_MAX, INT_MAX, INT_MAX};
    spread_sample s;
    analyze_spread_layout(a->rows, a->cols, &s);
    size_t slots = (size_t)s.rows * (size_t)s.entries;
    int32_t *sample = slots ? cmrscl_alloc(2 * slots, sizeof(int32_t)) : NULL;
    cmrscl_status st = !slots || sample
                           ? CMRSCL_OK
                           : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                         "no memory for a sample of %zu entries", slots);
    cl_mem flags = new_buffer(l->ctx, CL_MEM_READ_WRITE, sizeof bad, bad, &st, "check flags");
    cl_mem sample_buf =
        slots ? new_buffer(l->ctx, CL_MEM_WRITE_ONLY, 4 * slots, NULL, &st, "sample") : NULL;
    cl_uint rows = (cl_uint)a->rows, nnz = (cl_uint)a->nnz;
    cl_int cols = a->cols;
    arg check_args[] = {ARG(rows),       ARG(cols),       ARG(nnz),
                        ARG(a->row_ptr), ARG(a->col_ind), ARG(flags)};
    size_t items = (size_t)a->rows + 1 > (size_t)nnz ? (size_t)a->rows + 1 : (size_t)nnz;
    if (st == CMRSCL_OK)
        st = run(l, "convert_check", check_args, COUNT(check_args), items, NULL);
    cl_uint sampled_rows = (cl_uint)s.rows, row_step = (cl_uint)s.row_step;
    cl_int entries = s.entries, count = a->nnz;
    arg sample_args[] = {ARG(sampled_rows), ARG(row_step),   ARG(entries),   ARG(count),
                         ARG(a->row_ptr),   ARG(a->col_ind), ARG(sample_buf)};
    if (st == CMRSCL_OK && slots)
        st = run(l, "convert_sample", sample_args, COUNT(sample_args), (size_t)s.rows, NULL);
    cl_event reads[3] = {NULL, NULL, NULL};
    cl_uint nreads = 0;
    if (st == CMRSCL_OK) {
        cl_int err =
            clEnqueueReadBuffer(l->queue, a->row_ptr, CL_FALSE, 0,
                                sizeof(int32_t) * ((size_t)a->rows + 1), rp, 0, NULL, &reads[0]);
        nreads += err == CL_SUCCESS;
        if (err == CL_SUCCESS)
            err = clEnqueueReadBuffer(l->queue, flags, CL_FALSE, 0, sizeof bad, bad, 0, NULL,
                                      &reads[nreads]);
        nreads += err == CL_SUCCESS;
        if (err == CL_SUCCESS && slots)
            err = clEnqueueReadBuffer(l->queue, sample_buf, CL_FALSE, 0, 4 * slots, sample, 0, NULL,
                                      &reads[nreads]),
            nreads += err == CL_SUCCESS;
        st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueReadBuffer");
        cmrscl_status waited = nreads ? wait_for(reads, nreads) : CMRSCL_OK;
        if (st == CMRSCL_OK)
            st = waited;
    }
    if (flags)
        clReleaseMemObject(flags);
    if (sample_buf)
        clReleaseMemObject(sample_buf);
    if (st == CMRSCL_OK && (bad[0] != INT_MAX || bad[1] != INT_MAX || bad[2] != INT_MAX))
        st = report_bad_csr(l, a, rp, bad);
    if (st == CMRSCL_OK) {
        int32_t *sampled = sample ? sample + slots : NULL;
        if (sample)
            analyze_spread_compact(a->rows, a->cols, rp, sample, sampled);
        analyze_rows_sampled(a->rows, a->cols, rp, sampled, stats);
    }
    free(sample);
    return st;
}

/* CSR -> CMRS into the matrix's buffers: StripPtr (long strips flagged), then the entries;
 * waits for the kernels, so the caller's buffers are free again when the call returns. */
static cmrscl_status convert_entries(const launcher *l, cmrscl_matrix m, const device_csr *a)
{
    const cmrscl_params *p = &m->params;
    cl_uint rows = (cl_uint)p->rows, strips = (cl_uint)p->strips, height = (cl_uint)p->height;
    cl_uint nnz = (cl_uint)p->nnz, longs = (cl_uint)p->long_strips;
    cl_uint row_bits = (cl_uint)p->row_bits, packed = p->layout == CMRSCL_LAYOUT_PACKED;
    cl_uint columns = p->order == CMRSCL_ORDER_COLUMNS;
    cl_uint tile = CONVERT_GROUP, tiles = (nnz + tile - 1) / tile;
    cmrscl_status st = CMRSCL_OK;
    cl_mem tile_row =
        nnz ? new_buffer(l->ctx, CL_MEM_READ_WRITE, sizeof(cl_uint) * ((size_t)tiles + 1), NULL,
                         &st, "tile rows")
            : NULL;
    cl_mem *b = m->buf;
    arg strip_args[] = {ARG(rows), ARG(strips), ARG(height), ARG(a->row_ptr),
                        ARG(b[BUF_STRIP_PTR])};
    arg long_args[] = {ARG(longs), ARG(b[BUF_LONG_STRIP]), ARG(b[BUF_STRIP_PTR])};
    arg tile_args[] = {ARG(rows), ARG(nnz), ARG(tiles), ARG(tile), ARG(a->row_ptr), ARG(tile_row)};
    arg entry_args[] = {ARG(rows),
                        ARG(nnz),
                        ARG(height),
                        ARG(row_bits),
                        ARG(packed),
                        ARG(columns),
                        ARG(tile),
                        ARG(tile_row),
                        ARG(a->row_ptr),
                        ARG(a->col_ind),
                        ARG(a->values),
                        ARG(b[BUF_COL_IND]),
                        ARG(b[BUF_ROW_IN_STRIP]),
                        ARG(b[BUF_VALUES])};
    cl_event done = NULL;
    if (st == CMRSCL_OK)
        st = run(l, "convert_strip_ptr", strip_args, COUNT(strip_args), (size_t)strips + 1, NULL);
    if (st == CMRSCL_OK)
        st = run(l, "convert_flag_long", long_args, COUNT(long_args), longs, NULL);
    if (st == CMRSCL_OK && nnz)
        st = run(l, "convert_tile_rows", tile_args, COUNT(tile_args), (size_t)tiles + 1, NULL);
    if (st == CMRSCL_OK)
        st = run(l, "convert_entries", entry_args, COUNT(entry_args), (size_t)nnz + CMRS_ENTRY_PAD,
                 &done);
    if (done) {
        cmrscl_status waited = wait_for(&done, 1);
        if (st == CMRSCL_OK)
            st = waited;
    }
    if (tile_row)
        clReleaseMemObject(tile_row);
    return st;
}

/* The steps of matrix.c's matrix_create, with the CSR on the device. */
static cmrscl_status create_from_device(cmrscl_matrix m, cmrscl_precision precision,
                                        const device_csr *a, const cmrscl_options *opt)
{
    cmrscl_params *p = &m->params;
    launcher l = launcher_make(m->ctx);
    double build = 0.0, t0 = cmrscl_seconds();
    int32_t *rp = cmrscl_alloc((size_t)a->rows + 1, sizeof(int32_t));
    split_layout sp = {0};
    size_t bytes[BUF_COUNT];
    cmrscl_matrix_stats stats;
    cmrscl_status st = rp ? CMRSCL_OK
                          : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                        "no memory for the row pointers of %d rows", a->rows);
    if (st == CMRSCL_OK)
        st = convert_program(m->ctx, precision, precision, &l.program, &build);
    if (st == CMRSCL_OK)
        st = check_and_analyze(&l, a, rp, &stats);
    double checked = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = matrix_plan(m, precision, a->rows, a->cols, rp, &stats, opt, &sp, bytes);
    cmrscl_trace("create_from_cl: program %.3f ms, check, sample, RowPtr back and statistics "
                 "%.3f ms, plan %.3f ms",
                 build * 1e3, (checked - t0 - build) * 1e3, (cmrscl_seconds() - checked) * 1e3);
    if (st == CMRSCL_OK)
        st = matrix_check_device_memory(m->ctx, bytes);
    double t1 = cmrscl_seconds();
    p->analyze_seconds = t1 - t0 - build;
    if (st == CMRSCL_OK) { /* the split's small arrays come from the host; the rest is written */
        void *host[BUF_COUNT] = {NULL,          NULL, NULL,          NULL,          sp.tile_start,
                                 sp.tile_strip, NULL, sp.long_strip, sp.first_tile, NULL};
        st = matrix_upload_buffers(m, host, bytes);
    }
    double t2 = cmrscl_seconds();
    p->upload_seconds = t2 - t1;
    if (st == CMRSCL_OK)
        st = convert_entries(&l, m, a);
    p->convert_seconds = cmrscl_seconds() - t2;
    split_free(&sp);
    free(rp);
    if (st == CMRSCL_OK)
        st = matrix_create_kernels(m);
    p->build_seconds += build;
    /* A canonical CSR keeps its order within rows: a first update can rebuild the
     * permutation from the CMRS arrays; one row per strip needs none. */
    m->perm_pending = p->order == CMRSCL_ORDER_COLUMNS && p->height > 1 && p->nnz > 0;
    return st;
}

cmrscl_status cmrscl_matrix_create_from_cl(cmrscl_context ctx, cmrscl_precision precision,
                                           int32_t rows, int32_t cols, int32_t nnz, cl_mem row_ptr,
                                           cl_mem col_ind, cl_mem values, const cmrscl_options *opt,
                                           cmrscl_matrix *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    device_csr a = {rows, cols, nnz, row_ptr, nnz > 0 ? col_ind : NULL, nnz > 0 ? values : NULL};
    cmrscl_status st = check_arguments(ctx, precision, &a);
    cmrscl_matrix m = NULL;
    if (st == CMRSCL_OK)
        st = matrix_new(ctx, &m);
    if (st == CMRSCL_OK)
        st = create_from_device(m, precision, &a, opt);
    if (st != CMRSCL_OK) {
        cmrscl_matrix_free(m);
        return st;
    }
    *out = m;
    return CMRSCL_OK;
}

/* ---- values-only updates ----
 * CMRS position k holds CSR entry perm[k]: k itself in row-ordered strips (and in
 * column-ordered strips of one row with sorted columns), a permutation within each strip
 * otherwise. The permutation (4 bytes per entry, as much as the column indices) is built
 * on the first update, not at creation: most matrices are never updated, and those that
 * are pay for it once, on the device, from the CMRS arrays (convert_permutation). That
 * needs rows whose CSR order the column sort kept (sorted columns: always on the device
 * path, and checked by the host path, which uploads the permutation at creation for rows
 * that were not sorted). From the host the values cross the bus once, raw, into a staging
 * buffer released after the gather: keeping one would cost a second copy of the values
 * for the matrix's lifetime. */

/* Whether `bytes` more fit beside the matrix: the device's limits and the context's. */
static bool room_beside(cmrscl_matrix m, size_t bytes)
{
    const cmrscl_device_info *d = &m->ctx->info;
    pthread_mutex_lock(&m->ctx->lock);
    uint64_t limit = m->ctx->memory_limit;
    pthread_mutex_unlock(&m->ctx->lock);
    uint64_t total = m->params.device_bytes + bytes;
    return bytes <= d->max_alloc_bytes && total <= d->global_mem_bytes &&
           (!limit || total <= limit);
}

/* Builds BUF_PERM when it is pending; the caller holds m->lock. */
static cmrscl_status ensure_permutation(cmrscl_matrix m, const launcher *l)
{
    if (!m->perm_pending)
        return CMRSCL_OK;
    cmrscl_params *p = &m->params;
    size_t bytes = sizeof(uint32_t) * (size_t)p->nnz;
    if (!room_beside(m, bytes))
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY,
                           "the first values update needs a %zu-byte permutation, which the "
                           "device's limits or the context's memory limit do not leave beside "
                           "the matrix's %llu bytes",
                           bytes, (unsigned long long)p->device_bytes);
    cmrscl_status st = CMRSCL_OK;
    cl_mem perm = new_buffer(m->ctx, CL_MEM_READ_WRITE, bytes, NULL, &st, "permutation");
    cl_uint strips = (cl_uint)p->strips, height = (cl_uint)p->height;
    cl_uint row_bits = (cl_uint)p->row_bits, packed = p->layout == CMRSCL_LAYOUT_PACKED;
    arg args[] = {ARG(strips),
                  ARG(height),
                  ARG(row_bits),
                  ARG(packed),
                  ARG(m->buf[BUF_STRIP_PTR]),
                  ARG(m->buf[BUF_COL_IND]),
                  ARG(m->buf[BUF_ROW_IN_STRIP]),
                  ARG(perm)};
    launcher own = *l;
    if (st == CMRSCL_OK)
        st = convert_program(m->ctx, p->precision, p->precision, &own.program, NULL);
    if (st == CMRSCL_OK)
        st = run(&own, "convert_permutation", args, COUNT(args),
                 (size_t)p->strips * (size_t)p->height, NULL);
    if (st != CMRSCL_OK) {
        if (perm)
            clReleaseMemObject(perm);
        return st;
    }
    m->buf[BUF_PERM] = perm;
    p->device_bytes += bytes;
    m->perm_pending = false;
    return CMRSCL_OK;
}

/* Enqueues values[first, first + count) = src gathered through the permutation (a plain
 * copy when there is none and the precisions agree); src holds CSR entries first.. at
 * src_offset. The range is a run of whole strips (the permutation stays within strips).
 * The caller holds m->lock. */
static cmrscl_status gather(cmrscl_matrix m, const launcher *l, cl_mem src, size_t src_offset,
                            cmrscl_precision source, size_t first, size_t count)
{
    const cmrscl_params *p = &m->params;
    cl_mem perm = m->buf[BUF_PERM];
    if (!perm && source == p->precision) {
        size_t vs = cmrscl_precision_size(source);
        cl_int err = clEnqueueCopyBuffer(l->queue, src, m->buf[BUF_VALUES], vs * src_offset,
                                         vs * first, vs * count, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = order_point(l);
        return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueCopyBuffer");
    }
    cl_kernel *k = &m->update[source == CMRSCL_DOUBLE];
    cmrscl_status st = CMRSCL_OK;
    if (!*k) {
        cl_program prog;
        st = convert_program(m->ctx, p->precision, source, &prog, NULL);
        cl_int err = CL_SUCCESS;
        if (st == CMRSCL_OK && !(*k = clCreateKernel(prog, "convert_values", &err)))
            st = cmrscl_fail_cl(err, "clCreateKernel");
    }
    cl_uint range[3] = {(cl_uint)first, (cl_uint)count, (cl_uint)src_offset};
    cl_uint use_perm = perm != NULL;
    arg args[] = {ARG(range[0]), ARG(range[1]), ARG(use_perm),          ARG(perm),
                  ARG(src),      ARG(range[2]), ARG(m->buf[BUF_VALUES])};
    if (st == CMRSCL_OK)
        st = set_args(*k, args, COUNT(args));
    if (st == CMRSCL_OK)
        st = enqueue(l, *k, count, 0, NULL, NULL);
    return st;
}

static cmrscl_status check_update(cmrscl_matrix m, cmrscl_precision values_precision)
{
    if (!m)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "matrix is NULL");
    if (values_precision != CMRSCL_FLOAT && values_precision != CMRSCL_DOUBLE)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "values precision %d is neither CMRSCL_FLOAT nor CMRSCL_DOUBLE",
                           (int)values_precision);
    return CMRSCL_OK;
}

cmrscl_status cmrscl_matrix_update_values_cl(cmrscl_matrix m, cl_mem values,
                                             cmrscl_precision values_precision)
{
    cmrscl_status st = check_update(m, values_precision);
    if (st != CMRSCL_OK)
        return st;
    if (values_precision == CMRSCL_DOUBLE && !m->ctx->info.fp64)
        return cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                           "double values need cl_khr_fp64, which device \"%s\" lacks",
                           m->ctx->info.device_name);
    size_t nnz = (size_t)m->params.nnz;
    st = buffer_check(m->ctx->context, values, cmrscl_precision_size(values_precision) * nnz,
                      "values");
    if (st != CMRSCL_OK || nnz == 0)
        return st;
    launcher l = launcher_make(m->ctx);
    pthread_mutex_lock(&m->lock);
    cl_int err = order_point(&l); /* after the products enqueued before */
    st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueBarrierWithWaitList");
    if (st == CMRSCL_OK)
        st = ensure_permutation(m, &l);
    if (st == CMRSCL_OK)
        st = gather(m, &l, values, 0, values_precision, 0, nnz);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* ---- updates from host memory: chunks through a staging ring ----
 * The values cross the bus in chunks of whole strips into one of two staging slots, and
 * each chunk is gathered into place as soon as it has landed: the device memory this
 * takes is two chunks, not a second copy of the values, and the time is the bus copy's
 * plus the last chunk's gather (measured against a full-size staging buffer allocated per
 * call: that allocation alone cost NVIDIA 15-25% of the copy). */

size_t matrix_update_chunk = (size_t)4 << 20; /* 32 MB of doubles, 16 MB of floats */

/* The chunk boundaries (strip starts) and the staging ring, made on the first update from
 * the host; the caller holds m->lock. Without a permutation any boundary will do. */
static cmrscl_status ensure_update_ring(cmrscl_matrix m, const launcher *l)
{
    if (m->buf[BUF_STAGING])
        return CMRSCL_OK;
    const cmrscl_params *p = &m->params;
    size_t nnz = (size_t)p->nnz, strips = (size_t)p->strips, slot = 0, chunks = 0;
    uint32_t *strip_ptr = NULL;
    cmrscl_status st = CMRSCL_OK;
    if (m->buf[BUF_PERM]) { /* whole strips: read StripPtr once */
        strip_ptr = cmrscl_alloc(strips + 1, sizeof *strip_ptr);
        if (!strip_ptr)
            return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %zu strips", strips);
        st = read_ints(l, m->buf[BUF_STRIP_PTR], 0, strips + 1, strip_ptr);
    }
    size_t *cut = cmrscl_alloc(nnz / matrix_update_chunk + strips + 2, sizeof *cut);
    if (st == CMRSCL_OK && !cut)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the update chunks");
    if (st == CMRSCL_OK) {
        cut[chunks++] = 0;
        for (size_t s = 1; strip_ptr && s <= strips; ++s) { /* cut before a strip that would
                                                             * overflow a non-empty chunk */
            size_t end = strip_ptr[s] & 0x7fffffffu, begin = strip_ptr[s - 1] & 0x7fffffffu;
            if (end - cut[chunks - 1] > matrix_update_chunk && begin > cut[chunks - 1])
                cut[chunks++] = begin;
        }
        for (size_t e = matrix_update_chunk; !strip_ptr && e < nnz; e += matrix_update_chunk)
            cut[chunks++] = e;
        cut[chunks] = nnz;
        for (size_t c = 0; c < chunks; ++c)
            slot = cut[c + 1] - cut[c] > slot ? cut[c + 1] - cut[c] : slot;
        size_t bytes = 2 * slot * sizeof(double);
        if (!room_beside(m, bytes))
            st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY,
                             "an update from the host needs %zu bytes of staging, which the "
                             "device's limits or the context's memory limit do not leave beside "
                             "the matrix's %llu bytes",
                             bytes, (unsigned long long)m->params.device_bytes);
        else
            m->buf[BUF_STAGING] = new_buffer(m->ctx, CL_MEM_READ_ONLY, bytes, NULL, &st, "staging");
        if (st == CMRSCL_OK) {
            m->params.device_bytes += bytes;
            m->update_cut = cut, m->update_chunks = chunks, m->update_slot = slot;
            cmrscl_trace("updates from the host: %zu chunks of at most %zu entries", chunks, slot);
            cut = NULL;
        }
    }
    free(cut);
    free(strip_ptr);
    return st;
}

/* Enqueues the chunks: chunk c is written into slot c % 2 (after the gather that last read
 * it, by queue order) and gathered into place. *last_write: the last write's event. */
static cmrscl_status update_in_chunks(cmrscl_matrix m, const launcher *l, const void *values,
                                      cmrscl_precision source, cl_event *last_write)
{
    size_t vs = cmrscl_precision_size(source);
    cmrscl_status st = CMRSCL_OK;
    for (size_t c = 0; c < m->update_chunks && st == CMRSCL_OK; ++c) {
        size_t first = m->update_cut[c], count = m->update_cut[c + 1] - first;
        size_t offset = (c % 2) * m->update_slot;
        bool last = c + 1 == m->update_chunks;
        /* Blocking: NVIDIA copies pageable memory 25-40% slower without waiting. */
        cl_int err = clEnqueueWriteBuffer(l->queue, m->buf[BUF_STAGING], CL_TRUE, vs * offset,
                                          vs * count, (const char *)values + vs * first, 0, NULL,
                                          last ? last_write : NULL);
        if (err == CL_SUCCESS)
            err = order_point(l);
        st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueWriteBuffer");
        if (st == CMRSCL_OK)
            st = gather(m, l, m->buf[BUF_STAGING], offset, source, first, count);
    }
    return st;
}

cmrscl_status cmrscl_matrix_update_values(cmrscl_matrix m, const void *values,
                                          cmrscl_precision values_precision)
{
    cmrscl_status st = check_update(m, values_precision);
    if (st != CMRSCL_OK || m->params.nnz == 0)
        return st;
    if (!values)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "values is NULL");
    const cmrscl_params *p = &m->params;
    size_t nnz = (size_t)p->nnz;
    void *rounded = NULL; /* doubles for a device without fp64 */
    if (values_precision == CMRSCL_DOUBLE && !m->ctx->info.fp64) {
        if (!(rounded = cmrscl_alloc(nnz, sizeof(float))))
            return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %zu values", nnz);
        cmrs_gather_values(rounded, CMRSCL_FLOAT, values, CMRSCL_DOUBLE, NULL, p->nnz);
        values = rounded, values_precision = CMRSCL_FLOAT;
    }
    launcher l = launcher_make(m->ctx);
    cl_event written = NULL;
    pthread_mutex_lock(&m->lock);
    cl_int err = order_point(&l); /* after the products enqueued before */
    st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueBarrierWithWaitList");
    if (st == CMRSCL_OK)
        st = ensure_permutation(m, &l);
    bool direct = !m->buf[BUF_PERM] && values_precision == p->precision;
    if (st == CMRSCL_OK && direct) {
        err = clEnqueueWriteBuffer(l.queue, m->buf[BUF_VALUES], CL_FALSE, 0,
                                   cmrscl_precision_size(values_precision) * nnz, values, 0, NULL,
                                   &written);
        if (err == CL_SUCCESS)
            err = order_point(&l);
        st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueWriteBuffer");
    } else if (st == CMRSCL_OK) {
        st = ensure_update_ring(m, &l);
        if (st == CMRSCL_OK)
            st = update_in_chunks(m, &l, values, values_precision, &written);
    }
    pthread_mutex_unlock(&m->lock);
    if (written) { /* the caller may reuse `values` when this returns: every write is done
                    * once the last is (queue order) */
        cmrscl_status waited = wait_for(&written, 1);
        if (st == CMRSCL_OK)
            st = waited;
    }
    free(rounded);
    return st;
}
