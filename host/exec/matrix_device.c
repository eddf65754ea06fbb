/* matrix_device.c - matrices whose CSR arrays already live on the device
 * (cmrscl_matrix_create_from_cl): a kernel checks the CSR, RowPtr and a bounded sample of
 * columns come back for the statistics and the plan (matrix.c's, shared), and the kernels of
 * cl/convert.cl build the CMRS arrays in place. Values-only updates: matrix_update.c. */
#include "convert_launch.h"
#include "io/io.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A CSR matrix in device buffers, borrowed from the caller. */
typedef struct device_csr {
    int32_t rows, cols, nnz;
    cl_mem row_ptr, col_ind, values;
    cmrscl_precision source; /* the values' precision (the matrix's may be another) */
} device_csr;

/* ---- cmrscl_matrix_create_from_cl ---- */

static cmrscl_status check_arguments(cmrscl_context ctx, cmrscl_precision precision,
                                     const device_csr *a)
{
    if (!ctx)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "context is NULL");
    cmrscl_status st = cmrs_plan_check_precision(&ctx->info, precision);
    if (st == CMRSCL_OK && a->source != precision) /* the conversion reads the source's values */
        st = cmrs_plan_check_precision(&ctx->info, a->source);
    if (st != CMRSCL_OK)
        return st;
    if (a->rows < 0 || a->cols < 0 || a->nnz < 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX, "negative size %d x %d, nnz %d", a->rows,
                           a->cols, a->nnz);
    size_t vs = cmrscl_precision_size(a->source), nnz = (size_t)a->nnz;
    st = cmrs_buffer_check(ctx->context, a->row_ptr, sizeof(int32_t) * ((size_t)a->rows + 1),
                           "row_ptr");
    if (st == CMRSCL_OK)
        st = cmrs_buffer_check(ctx->context, a->col_ind, sizeof(int32_t) * nnz, "col_ind");
    if (st == CMRSCL_OK)
        st = cmrs_buffer_check(ctx->context, a->values, vs * nnz, "values");
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
    cmrscl_status st = e > 0 ? cmrs_launch_read_ints(l, a->col_ind, (size_t)e - 1, 2, c)
                             : cmrs_launch_read_ints(l, a->col_ind, (size_t)e, 1, c + 1);
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

/* RowPtr for the plan, fetched on its first need (plan_matrix.fetch_row_ptr): once, its
 * status kept for after the plan. */
typedef struct row_ptr_source {
    const launcher *l;
    const device_csr *a;
    int32_t *rp32;
    int64_t *rp;
    bool fetched;
    cmrscl_status st;
} row_ptr_source;

static cmrscl_status fetch_row_ptr(const launcher *l, const device_csr *a, int32_t **rp32,
                                   int64_t **rp);

static const int64_t *row_ptr_on_need(void *source)
{
    row_ptr_source *s = source;
    if (!s->fetched)
        s->fetched = true, s->st = fetch_row_ptr(s->l, s->a, &s->rp32, &s->rp);
    return s->st == CMRSCL_OK ? s->rp : NULL;
}

/* RowPtr back from the device, widened (what the split and the error reports read). */
static cmrscl_status fetch_row_ptr(const launcher *l, const device_csr *a, int32_t **rp32,
                                   int64_t **rp)
{
    size_t n = (size_t)a->rows + 1;
    if (!(*rp32 = cmrscl_alloc(n, sizeof(int32_t))))
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                           "no memory for the row pointers of %d rows", a->rows);
    cl_int err = clEnqueueReadBuffer(l->queue, a->row_ptr, CL_TRUE, 0, sizeof(int32_t) * n, *rp32,
                                     0, NULL, NULL);
    if (err != CL_SUCCESS)
        return cmrscl_fail_cl(err, "clEnqueueReadBuffer");
    if (rp && !(*rp = cmrs_csr_widen_row_ptr(*rp32, a->rows)))
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                           "no memory for the row pointers of %d rows", a->rows);
    return CMRSCL_OK;
}

/* Enqueues the row totals (convert_row_stats, then convert_row_totals into `total`). */
static cmrscl_status sum_rows_on_device(const launcher *l, const device_csr *a, cl_mem total)
{
    cl_uint rows = (cl_uint)a->rows, groups = (rows + CONVERT_GROUP - 1) / CONVERT_GROUP;
    cmrscl_status st = CMRSCL_OK;
    cl_mem partial = cmrs_launch_new_buffer(l->ctx, CL_MEM_READ_WRITE,
                                            sizeof(cl_ulong) * ROW_TOTALS * (groups ? groups : 1),
                                            NULL, &st, "row totals");
    launch_arg stats_args[] = {ARG(rows), ARG(a->row_ptr), ARG(partial)};
    launch_arg total_args[] = {ARG(groups), ARG(partial), ARG(total)};
    if (st == CMRSCL_OK)
        st = cmrs_launch_run(l, "convert_row_stats", stats_args, COUNT(stats_args), rows, NULL);
    if (st == CMRSCL_OK)
        st = cmrs_launch_run(l, "convert_row_totals", total_args, COUNT(total_args), CONVERT_GROUP,
                             NULL);
    if (partial) /* released once the kernels are done with it */
        clReleaseMemObject(partial);
    return st;
}

/* Checks the CSR on the device and, beside the check, sums the row statistics and gathers
 * the column spread's sample; reads the check's findings, the totals and the sample back in
 * one round trip (RowPtr stays on the device unless the check failed), then the statistics
 * (analyze.c, on the totals and on the sample in the order the host path sums it: the same
 * statistics, bit for bit). */
static cmrscl_status check_and_analyze(const launcher *l, const device_csr *a, row_totals *totals,
                                       cmrscl_matrix_stats *stats)
{
    double t0 = cmrscl_seconds();
    cl_int bad[3] = {INT_MAX, INT_MAX, INT_MAX};
    cl_ulong total[ROW_TOTALS] = {0};
    spread_sample s;
    cmrs_analyze_spread_layout(a->rows, a->cols, &s);
    size_t slots = (size_t)s.rows * (size_t)s.entries, sampled_rows = (size_t)s.rows;
    /* the slots, the sampled columns in sample order, the sampled rows' lengths */
    int32_t *sample = slots ? cmrscl_alloc(2 * slots + sampled_rows, sizeof(int32_t)) : NULL;
    cmrscl_status st = !slots || sample
                           ? CMRSCL_OK
                           : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                         "no memory for a sample of %zu entries", slots);
    cl_mem flags =
        cmrs_launch_new_buffer(l->ctx, CL_MEM_READ_WRITE, sizeof bad, bad, &st, "check flags");
    cl_mem total_buf =
        cmrs_launch_new_buffer(l->ctx, CL_MEM_READ_WRITE, sizeof total, total, &st, "row totals");
    cl_mem sample_buf =
        slots ? cmrs_launch_new_buffer(l->ctx, CL_MEM_WRITE_ONLY, 4 * slots, NULL, &st, "sample")
              : NULL;
    cl_mem lengths_buf = slots ? cmrs_launch_new_buffer(l->ctx, CL_MEM_WRITE_ONLY, 4 * sampled_rows,
                                                        NULL, &st, "sampled rows")
                               : NULL;
    cl_uint rows = (cl_uint)a->rows, nnz = (cl_uint)a->nnz;
    cl_int cols = a->cols;
    launch_arg check_args[] = {ARG(rows),       ARG(cols),       ARG(nnz),
                               ARG(a->row_ptr), ARG(a->col_ind), ARG(flags)};
    size_t items = (size_t)a->rows + 1 > (size_t)nnz ? (size_t)a->rows + 1 : (size_t)nnz;
    if (st == CMRSCL_OK)
        st = cmrs_launch_run(l, "convert_check", check_args, COUNT(check_args), items, NULL);
    cl_uint sample_rows = (cl_uint)s.rows, row_step = (cl_uint)s.row_step;
    cl_int entries = s.entries, count = a->nnz;
    launch_arg sample_args[] = {ARG(sample_rows), ARG(row_step),   ARG(entries),
                                ARG(count),       ARG(a->row_ptr), ARG(a->col_ind),
                                ARG(lengths_buf), ARG(sample_buf)};
    if (st == CMRSCL_OK && slots)
        st = cmrs_launch_run(l, "convert_sample", sample_args, COUNT(sample_args), (size_t)s.rows,
                             NULL);
    if (st == CMRSCL_OK && a->rows > 0)
        st = sum_rows_on_device(l, a, total_buf);
    /* everything the host needs back, in one round trip */
    const struct {
        cl_mem buf;
        size_t bytes;
        void *dst;
    } back[] = {{flags, sizeof bad, bad},
                {total_buf, sizeof total, total},
                {sample_buf, 4 * slots, sample},
                {lengths_buf, 4 * sampled_rows, sample ? sample + slots : NULL}};
    enum { BACK = sizeof back / sizeof back[0] };
    cl_event reads[BACK];
    cl_uint nreads = 0;
    cl_int err = CL_SUCCESS;
    for (int i = 0; st == CMRSCL_OK && err == CL_SUCCESS && i < BACK; ++i)
        if (back[i].buf) {
            err = clEnqueueReadBuffer(l->queue, back[i].buf, CL_FALSE, 0, back[i].bytes,
                                      back[i].dst, 0, NULL, &reads[nreads]);
            nreads += err == CL_SUCCESS;
        }
    if (st == CMRSCL_OK && err != CL_SUCCESS)
        st = cmrscl_fail_cl(err, "clEnqueueReadBuffer");
    cmrscl_status waited = nreads ? cmrs_launch_wait(reads, nreads) : CMRSCL_OK;
    if (st == CMRSCL_OK)
        st = waited;
    for (int i = 0; i < BACK; ++i)
        if (back[i].buf)
            clReleaseMemObject(back[i].buf);
    double t_read = cmrscl_seconds();
    if (st == CMRSCL_OK && (bad[0] != INT_MAX || bad[1] != INT_MAX || bad[2] != INT_MAX)) {
        int32_t *rp32 = NULL; /* the messages name rows: RowPtr comes back for them */
        st = fetch_row_ptr(l, a, &rp32, NULL);
        if (st == CMRSCL_OK)
            st = report_bad_csr(l, a, rp32, bad);
        free(rp32);
    }
    if (st == CMRSCL_OK) {
        totals->sum = (int64_t)total[0], totals->sum_sq = (int64_t)total[1];
        totals->empty = (int64_t)total[2];
        for (int k = 0; k < STRIP_HEIGHT_LOGS; ++k)
            totals->longest_strip[k] = (int64_t)total[3 + k];
        int32_t *sampled = sample ? sample + slots + sampled_rows : NULL;
        const int32_t *lengths = sample ? sample + slots : NULL;
        if (sample)
            cmrs_analyze_spread_compact(a->rows, a->cols, lengths, sample, sampled);
        cmrs_analyze_rows_totals(a->rows, a->cols, totals, lengths, sampled, stats);
    }
    free(sample);
    cmrscl_trace("create_from_cl: check, totals, sample and read-back %.3f ms, statistics %.3f ms",
                 (t_read - t0) * 1e3, (cmrscl_seconds() - t_read) * 1e3);
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
        nnz ? cmrs_launch_new_buffer(l->ctx, CL_MEM_READ_WRITE,
                                     sizeof(cl_uint) * ((size_t)tiles + 1), NULL, &st, "tile rows")
            : NULL;
    cl_mem *b = m->buf;
    launch_arg strip_args[] = {ARG(rows), ARG(strips), ARG(height), ARG(a->row_ptr),
                               ARG(b[BUF_STRIP_PTR])};
    launch_arg long_args[] = {ARG(longs), ARG(b[BUF_LONG_STRIP]), ARG(b[BUF_STRIP_PTR])};
    launch_arg tile_args[] = {ARG(rows), ARG(nnz),        ARG(tiles),
                              ARG(tile), ARG(a->row_ptr), ARG(tile_row)};
    launch_arg entry_args[] = {ARG(rows),
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
        st = cmrs_launch_run(l, "convert_strip_ptr", strip_args, COUNT(strip_args),
                             (size_t)strips + 1, NULL);
    if (st == CMRSCL_OK)
        st = cmrs_launch_run(l, "convert_flag_long", long_args, COUNT(long_args), longs, NULL);
    if (st == CMRSCL_OK && nnz)
        st = cmrs_launch_run(l, "convert_tile_rows", tile_args, COUNT(tile_args), (size_t)tiles + 1,
                             NULL);
    if (st == CMRSCL_OK)
        st = cmrs_launch_run(l, "convert_entries", entry_args, COUNT(entry_args),
                             (size_t)nnz + CMRS_ENTRY_PAD, &done);
    if (done) {
        cmrscl_status waited = cmrs_launch_wait(&done, 1);
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
    launcher l = cmrs_launcher_make(m->ctx);
    double build = 0.0, t0 = cmrscl_seconds();
    row_ptr_source rows = {.l = &l, .a = a}; /* RowPtr, fetched where the plan needs it */
    split_layout sp = {0};
    size_t bytes[BUF_COUNT];
    row_totals totals;
    plan_matrix pm = {.rows = a->rows,
                      .cols = a->cols,
                      .nnz = a->nnz,
                      .fetch_row_ptr = row_ptr_on_need,
                      .source = &rows};
    cmrscl_status st = cmrs_convert_program(m->ctx, precision, a->source, 32, &l.program, &build);
    if (st == CMRSCL_OK)
        st = check_and_analyze(&l, a, &totals, &pm.stats);
    double checked = cmrscl_seconds();
    pm.longest_strip = totals.longest_strip;
    if (st == CMRSCL_OK)
        st = cmrs_matrix_plan(m, precision, &pm, opt);
    if (st == CMRSCL_OK && p->tile > 0) /* the split is laid out on the host */
        pm.row_ptr = row_ptr_on_need(&rows);
    if (st == CMRSCL_OK)
        st = rows.st; /* a fetch that failed */
    if (st == CMRSCL_OK)
        st = cmrs_matrix_layout(m, &pm, &sp, bytes);
    if (st == CMRSCL_OK && p->index_bits != 32) /* the checks above read the CSR alone */
        st = cmrs_convert_program(m->ctx, precision, a->source, p->index_bits, &l.program, &build);
    cmrscl_trace("create_from_cl: program %.3f ms, check and statistics %.3f ms, plan %.3f ms%s",
                 build * 1e3, (checked - t0 - build) * 1e3, (cmrscl_seconds() - checked) * 1e3,
                 rows.fetched ? " (with RowPtr back for the split)" : "");
    if (st == CMRSCL_OK)
        st = cmrs_matrix_check_device_memory(m->ctx, bytes);
    double t1 = cmrscl_seconds();
    p->analyze_seconds = t1 - t0 - build;
    if (st == CMRSCL_OK) { /* the split's small arrays come from the host; the rest is written */
        void *tile_start = cmrs_index_narrow(sp.tile_start, (size_t)sp.tiles, p->index_bits);
        void *host[BUF_COUNT] = {NULL,          NULL, NULL,          NULL,          tile_start,
                                 sp.tile_strip, NULL, sp.long_strip, sp.first_tile, NULL};
        st = cmrs_matrix_upload_buffers(m, host, bytes);
    }
    double t2 = cmrscl_seconds();
    p->upload_seconds = t2 - t1;
    if (st == CMRSCL_OK)
        st = convert_entries(&l, m, a);
    p->convert_seconds = cmrscl_seconds() - t2;
    cmrs_split_free(&sp);
    free(rows.rp32), free(rows.rp);
    if (st == CMRSCL_OK)
        st = cmrs_matrix_create_kernels(m);
    p->build_seconds += build;
    /* A canonical CSR keeps its order within rows: a first update can rebuild the
     * permutation from the CMRS arrays; one row per strip needs none. */
    if (st == CMRSCL_OK)
        st = cmrs_update_prepare(m, p->order == CMRSCL_ORDER_COLUMNS && p->height > 1 && p->nnz > 0,
                                 NULL);
    return st;
}

static cmrscl_status create_from(cmrscl_context ctx, cmrscl_precision precision,
                                 const device_csr *a, const cmrscl_options *opt, cmrscl_matrix *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    cmrscl_status st = check_arguments(ctx, precision, a);
    /* The layouts with holes (MODULO's, the slices) are host algorithms over whole strips;
     * the device conversion places each entry alone and has none. The plan says so too
     * (for a tuning database's plan); here it is said before any work. */
    if (st == CMRSCL_OK && opt && opt->renumber == CMRSCL_RENUMBER_HUBS)
        st = cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                         "renumbering (cmrscl_options.renumber) is for matrices created from "
                         "host arrays: cmrscl_matrix_create_from_cl keeps the caller's numbering");
    if (st == CMRSCL_OK && opt && plan_has_holes(opt->kernel))
        st = cmrscl_fail(CMRSCL_ERROR_UNSUPPORTED,
                         "the %s kernel's layout is built on the host: create the matrix from host "
                         "arrays (cmrscl_matrix_create, _i64 or _from_csr), not from OpenCL "
                         "buffers",
                         cmrs_variant_family_name(opt->kernel));
    cmrscl_matrix m = NULL;
    if (st == CMRSCL_OK)
        st = cmrs_matrix_new(ctx, &m);
    if (st == CMRSCL_OK)
        st = create_from_device(m, precision, a, opt);
    if (st != CMRSCL_OK) {
        cmrscl_matrix_free(m);
        return st;
    }
    *out = m;
    return CMRSCL_OK;
}

cmrscl_status cmrscl_matrix_create_from_cl(cmrscl_context ctx, cmrscl_precision precision,
                                           int32_t rows, int32_t cols, int32_t nnz, cl_mem row_ptr,
                                           cl_mem col_ind, cl_mem values, const cmrscl_options *opt,
                                           cmrscl_matrix *out)
{
    device_csr a = {rows,     cols, nnz, row_ptr, nnz > 0 ? col_ind : NULL, nnz > 0 ? values : NULL,
                    precision};
    return create_from(ctx, precision, &a, opt, out);
}

cmrscl_status cmrs_matrix_create_from_doubles_cl(cmrscl_context ctx, cmrscl_precision precision,
                                                 int32_t rows, int32_t cols, int32_t nnz,
                                                 cl_mem row_ptr, cl_mem col_ind, cl_mem values,
                                                 cmrscl_matrix *out)
{
    device_csr a = {
        rows, cols, nnz, row_ptr, nnz > 0 ? col_ind : NULL, nnz > 0 ? values : NULL, CMRSCL_DOUBLE};
    return create_from(ctx, precision, &a, NULL, out);
}
