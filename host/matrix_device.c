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
 * kernel arguments, so the program depends on the precisions and the matrix's index width
 * alone (one build per context and triple, not per plan). *seconds (may be NULL) grows by
 * the build or load time. */
static cmrscl_status convert_program(cmrscl_context ctx, cmrscl_precision precision,
                                     cmrscl_precision source, int index_bits, cl_program *out,
                                     double *seconds)
{
    char options[192];
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -DCONVERT=1 -DHEIGHT=1 -DWARP=1 -DWG_SIZE=1 -DVALUE_DOUBLE=%d "
             "-DSOURCE_DOUBLE=%d -DENTRY_PAD=%d -DINDEX64=%d",
             precision == CMRSCL_DOUBLE, source == CMRSCL_DOUBLE, CMRS_ENTRY_PAD, index_bits == 64);
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
    if (st == CMRSCL_OK)
        st = enqueue(l, k, items, 0, NULL, done);
    clReleaseKernel(k);
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

/* Checks the CSR on the device and reads RowPtr back into rp (rows + 1 entries). */
static cmrscl_status check_csr(const launcher *l, const device_csr *a, int32_t *rp)
{
    cl_int bad[3] = {INT_MAX, INT_MAX, INT_MAX};
    cmrscl_status st = CMRSCL_OK;
    cl_mem flags = new_buffer(l->ctx, CL_MEM_READ_WRITE, sizeof bad, bad, &st, "check flags");
    cl_uint rows = (cl_uint)a->rows, nnz = (cl_uint)a->nnz;
    cl_int cols = a->cols;
    arg args[] = {ARG(rows), ARG(cols), ARG(nnz), ARG(a->row_ptr), ARG(a->col_ind), ARG(flags)};
    size_t items = (size_t)a->rows + 1 > (size_t)nnz ? (size_t)a->rows + 1 : (size_t)nnz;
    if (st == CMRSCL_OK)
        st = run(l, "convert_check", args, COUNT(args), items, NULL);
    cl_event reads[2] = {NULL, NULL};
    if (st == CMRSCL_OK) {
        cl_int err =
            clEnqueueReadBuffer(l->queue, a->row_ptr, CL_FALSE, 0,
                                sizeof(int32_t) * ((size_t)a->rows + 1), rp, 0, NULL, &reads[0]);
        if (err == CL_SUCCESS)
            err = clEnqueueReadBuffer(l->queue, flags, CL_FALSE, 0, sizeof bad, bad, 0, NULL,
                                      &reads[1]);
        st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueReadBuffer");
        cmrscl_status waited = wait_for(reads, reads[1] ? 2 : reads[0] ? 1 : 0);
        if (st == CMRSCL_OK)
            st = waited;
    }
    if (flags)
        clReleaseMemObject(flags);
    if (st == CMRSCL_OK && (bad[0] != INT_MAX || bad[1] != INT_MAX || bad[2] != INT_MAX))
        st = report_bad_csr(l, a, rp, bad);
    return st;
}

/* The row statistics from RowPtr, with the column spread's sample gathered on the device
 * (convert_sample) in the order analyze.c sums it: the same statistics as the host path. */
static cmrscl_status device_stats(const launcher *l, const device_csr *a, const int64_t *rp,
                                  cmrscl_matrix_stats *out)
{
    spread_sample s;
    int64_t count = analyze_spread_sample(a->rows, a->cols, rp, &s, NULL);
    if (count == 0) {
        analyze_rows_sampled(a->rows, a->cols, rp, NULL, out);
        return CMRSCL_OK;
    }
    uint32_t *first = cmrscl_alloc((size_t)s.rows + 1, sizeof(uint32_t));
    int32_t *sampled = cmrscl_alloc((size_t)count, sizeof(int32_t));
    cmrscl_status st = CMRSCL_OK;
    cl_mem first_buf = NULL, sample_buf = NULL;
    if (!first || !sampled)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a sample of %lld entries",
                         (long long)count);
    if (st == CMRSCL_OK) {
        analyze_spread_sample(a->rows, a->cols, rp, &s, first);
        first_buf = new_buffer(l->ctx, CL_MEM_READ_ONLY, sizeof(uint32_t) * ((size_t)s.rows + 1),
                               first, &st, "sample offsets");
    }
    if (st == CMRSCL_OK)
        sample_buf = new_buffer(l->ctx, CL_MEM_WRITE_ONLY, sizeof(int32_t) * (size_t)count, NULL,
                                &st, "sample");
    cl_uint rows = (cl_uint)s.rows, step = (cl_uint)s.row_step;
    cl_int entries = s.entries;
    arg args[] = {ARG(rows),       ARG(step),      ARG(entries),   ARG(a->row_ptr),
                  ARG(a->col_ind), ARG(first_buf), ARG(sample_buf)};
    if (st == CMRSCL_OK)
        st = run(l, "convert_sample", args, COUNT(args), (size_t)s.rows, NULL);
    if (st == CMRSCL_OK)
        st = read_ints(l, sample_buf, 0, (size_t)count, sampled);
    if (st == CMRSCL_OK)
        analyze_rows_sampled(a->rows, a->cols, rp, sampled, out);
    if (first_buf)
        clReleaseMemObject(first_buf);
    if (sample_buf)
        clReleaseMemObject(sample_buf);
    free(first);
    free(sampled);
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
    int32_t *rp32 = cmrscl_alloc((size_t)a->rows + 1, sizeof(int32_t));
    int64_t *rp = NULL; /* widened for the analysis and the plan, shared with the host path */
    split_layout sp = {0};
    size_t bytes[BUF_COUNT];
    cmrscl_matrix_stats stats;
    cmrscl_status st = rp32 ? CMRSCL_OK
                            : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                          "no memory for the row pointers of %d rows", a->rows);
    if (st == CMRSCL_OK)
        st = convert_program(m->ctx, precision, precision, 32, &l.program, &build);
    if (st == CMRSCL_OK)
        st = check_csr(&l, a, rp32);
    if (st == CMRSCL_OK && !(rp = csr_widen_row_ptr(rp32, a->rows)))
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                         "no memory for the row pointers of %d rows", a->rows);
    if (st == CMRSCL_OK)
        st = device_stats(&l, a, rp, &stats);
    if (st == CMRSCL_OK)
        st = matrix_plan(m, precision, a->rows, a->cols, rp, &stats, opt, &sp, bytes);
    if (st == CMRSCL_OK && p->index_bits != 32) /* the checks above read the CSR alone */
        st = convert_program(m->ctx, precision, precision, p->index_bits, &l.program, &build);
    if (st == CMRSCL_OK)
        st = matrix_check_device_memory(m->ctx, bytes);
    double t1 = cmrscl_seconds();
    p->analyze_seconds = t1 - t0 - build;
    if (st == CMRSCL_OK) { /* the split's small arrays come from the host; the rest is written */
        void *tile_start = index_narrow(sp.tile_start, (size_t)sp.tiles, p->index_bits);
        void *host[BUF_COUNT] = {NULL,          NULL, NULL,          NULL,          tile_start,
                                 sp.tile_strip, NULL, sp.long_strip, sp.first_tile, NULL};
        st = matrix_upload_buffers(m, host, bytes);
    }
    double t2 = cmrscl_seconds();
    p->upload_seconds = t2 - t1;
    if (st == CMRSCL_OK)
        st = convert_entries(&l, m, a);
    p->convert_seconds = cmrscl_seconds() - t2;
    split_free(&sp);
    free(rp32), free(rp);
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

/* Builds BUF_PERM when it is pending; the caller holds m->lock. */
static cmrscl_status ensure_permutation(cmrscl_matrix m, const launcher *l)
{
    if (!m->perm_pending)
        return CMRSCL_OK;
    cmrscl_params *p = &m->params;
    const cmrscl_device_info *d = &m->ctx->info;
    size_t bytes = (size_t)p->index_bits / 8 * (size_t)p->nnz;
    pthread_mutex_lock(&m->ctx->lock);
    uint64_t limit = m->ctx->memory_limit;
    pthread_mutex_unlock(&m->ctx->lock);
    uint64_t total = p->device_bytes + bytes;
    if (bytes > d->max_alloc_bytes || total > d->global_mem_bytes || (limit && total > limit))
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY,
                           "the first values update needs a %zu-byte permutation, which the "
                           "device's limits%s do not leave beside the matrix's %llu bytes",
                           bytes, limit ? " or the context's memory limit" : "",
                           (unsigned long long)p->device_bytes);
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
        st = convert_program(m->ctx, p->precision, p->precision, p->index_bits, &own.program, NULL);
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

/* Enqueues values = src gathered through the permutation (a plain copy when there is none
 * and the precisions agree), after the wait list; the caller holds m->lock. */
static cmrscl_status gather(cmrscl_matrix m, const launcher *l, cl_mem src, cmrscl_precision source,
                            cl_uint num_wait, const cl_event *wait)
{
    const cmrscl_params *p = &m->params;
    cl_mem perm = m->buf[BUF_PERM];
    if (!perm && source == p->precision) {
        cl_int err = clEnqueueCopyBuffer(l->queue, src, m->buf[BUF_VALUES], 0, 0,
                                         cmrscl_precision_size(source) * (size_t)p->nnz, num_wait,
                                         wait, NULL);
        if (err == CL_SUCCESS)
            err = order_point(l);
        return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueCopyBuffer");
    }
    cl_kernel *k = &m->update[source == CMRSCL_DOUBLE];
    cmrscl_status st = CMRSCL_OK;
    if (!*k) {
        cl_program prog;
        st = convert_program(m->ctx, p->precision, source, p->index_bits, &prog, NULL);
        cl_int err = CL_SUCCESS;
        if (st == CMRSCL_OK && !(*k = clCreateKernel(prog, "convert_values", &err)))
            st = cmrscl_fail_cl(err, "clCreateKernel");
    }
    cl_uint nnz32 = (cl_uint)p->nnz, use_perm = perm != NULL;
    cl_ulong nnz64 = (cl_ulong)p->nnz; /* index_t of convert.cl */
    arg args[] = {p->index_bits == 64 ? ARG(nnz64) : ARG(nnz32), ARG(use_perm), ARG(perm), ARG(src),
                  ARG(m->buf[BUF_VALUES])};
    if (st == CMRSCL_OK)
        st = set_args(*k, args, COUNT(args));
    if (st == CMRSCL_OK)
        st = enqueue(l, *k, (size_t)p->nnz, num_wait, wait, NULL);
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
        st = gather(m, &l, values, values_precision, 0, NULL);
    pthread_mutex_unlock(&m->lock);
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
        values_convert(rounded, CMRSCL_FLOAT, values, CMRSCL_DOUBLE, p->nnz);
        values = rounded, values_precision = CMRSCL_FLOAT;
    }
    size_t bytes = cmrscl_precision_size(values_precision) * nnz;
    launcher l = launcher_make(m->ctx);
    cl_event written = NULL;
    cl_mem staging = NULL;
    pthread_mutex_lock(&m->lock);
    cl_int err = order_point(&l);
    st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueBarrierWithWaitList");
    if (st == CMRSCL_OK)
        st = ensure_permutation(m, &l);
    bool direct = !m->buf[BUF_PERM] && values_precision == p->precision;
    if (st == CMRSCL_OK && !direct)
        staging = new_buffer(m->ctx, CL_MEM_READ_ONLY, bytes, NULL, &st, "staging values");
    if (st == CMRSCL_OK) {
        err = clEnqueueWriteBuffer(l.queue, direct ? m->buf[BUF_VALUES] : staging, CL_FALSE, 0,
                                   bytes, values, 0, NULL, &written);
        if (err == CL_SUCCESS)
            err = direct ? order_point(&l) : CL_SUCCESS;
        st = err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueWriteBuffer");
    }
    if (st == CMRSCL_OK && !direct) /* an in-order queue orders the write itself; a wait list
                                     * must be NULL when its count is 0 (NVIDIA checks) */
        st = gather(m, &l, staging, values_precision, l.out_of_order ? 1 : 0,
                    l.out_of_order ? &written : NULL);
    pthread_mutex_unlock(&m->lock);
    if (staging) /* released once the gather has run */
        clReleaseMemObject(staging);
    if (written) { /* the caller may reuse `values` when this returns */
        cmrscl_status waited = wait_for(&written, 1);
        if (st == CMRSCL_OK)
            st = waited;
    }
    free(rounded);
    return st;
}
