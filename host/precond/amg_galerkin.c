/* amg_galerkin.c - AMG's smoothed prolongator P = T - omega D^-1 (A T) and Galerkin operator
 * R (A P) on the device (cl/spgemm.cl), and the plain product A B behind cmrscl_csr_multiply
 * (multiply.c). The host's sparse products are bound by the latency of their scattered sums; a
 * GPU takes a row a work-item by the million.
 *
 * P: A (left there by the level's estimate of rho, else uploaded), T and D^-1 go to the
 * device, A T is made and smoothed there, and P is read back for the hierarchy and kept there
 * for the product. R A P: A and P go to the device unless there already, R is P's transpose
 * made there (or uploaded), A P stays there, and R (A P) and R come back - the counts, C and R
 * through the context's pinned ring (cmrs_download: into fresh pageable memory a GPU's reads
 * crawl), the counts placed on the host's threads. Every result is the host's, bit for bit
 * (the kernels add in its order, without fma), so the hierarchy is the same whichever made
 * it. The host remains the reference and the fallback: a device without fp64, a row whose
 * columns overflow its table, more than 2^31 - 1 entries, or a failure of the device's, and
 * amg_setup.c makes them itself. The host's products and smoothing must not contract into
 * fma either: CMakeLists.txt builds amg_spgemm.c and amg_setup.c with -ffp-contract=off. */
#include "precond/precond.h"

#include "exec/convert_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A row's table of sums: twice its columns, up to SPGEMM_TABLE slots (AMG's coarse rows have
 * tens of columns from hundreds of products, elasticity's with the rigid-body modes a few
 * hundred columns). The tables of the rows in flight take at most
 * SPGEMM_BATCH_BYTES, an eighth of the device's memory and half its largest buffer: the rows
 * go in batches of that many, a launch each. */
#define SPGEMM_TABLE 1024
#define SPGEMM_BATCH_BYTES ((size_t)1 << 30)
#define SPGEMM_GROUP 64
/* A row of a product or of R is sorted by its own work-item up to SORT_IN_ITEM entries; longer
 * rows by a work-group (cl/spgemm.cl, sort_long_rows), in local memory up to SORT_LOCAL entries
 * (12 bytes each: a table of SPGEMM_TABLE columns fits). An insertion's moves grow with the
 * square of the row, one after another; a group's ranks cost a launch and a pass over the row
 * pointers, paid only where some row is longer (docs/dev/PERFORMANCE.md, SORT_IN_ITEM). */
#define SORT_IN_ITEM 16
/* A product whose rows have at most SPGEMM_LOCAL columns each is filled with its tables in local
 * memory (cl/spgemm.cl, spgemm_fill_local: 12 bytes a slot and work-item, halved to what the
 * device's local memory holds): on a GPU a table in global memory is a DRAM sector a probe. Not
 * where any row has more: the kernel's local memory leaves fewer work-groups resident
 * (docs/dev/PERFORMANCE.md, SPGEMM_LOCAL). */
#define SPGEMM_LOCAL 32
#define SORT_LOCAL 1024
/* the most work-groups sort_long_rows runs, each walking rows in turn */
#define SORT_GROUPS 65536

typedef struct galerkin_run {
    cmrscl_context ctx;
    cl_kernel count, fill, t_count, t_scatter, t_sort, smooth, sort_long, fill_local;
    cl_mem keys, sums; /* the batch's tables */
    int sort_in_item;  /* SORT_IN_ITEM, or CMRSCL_AMG_SORT_IN_ITEM (the tests, and measuring) */
    int local_slots;   /* SPGEMM_LOCAL, or CMRSCL_AMG_SPGEMM_LOCAL (likewise), or fewer */
    size_t batch;      /* rows a batch */
    /* the context's queue, a barrier after each launch where it runs out of order (the
     * batches share the tables, the fills need the counts, the reads the fills); its group:
     * SPGEMM_GROUP, or the most the kernels run */
    launcher l;
} galerkin_run;

/* The rows of the batch from `first` of `rows`. */
static cl_uint batch_rows(const galerkin_run *g, int32_t rows, int32_t first)
{
    size_t left = (size_t)(rows - first);
    return (cl_uint)(left < g->batch ? left : g->batch);
}

/* The kernel k over rows [first, first + n) of the product, its arguments from 2 on. */
static cmrscl_status launch(const galerkin_run *g, cl_kernel k, cl_uint first, cl_uint n, int count,
                            const cl_mem *mem)
{
    cl_int err = clSetKernelArg(k, 0, sizeof first, &first);
    err |= clSetKernelArg(k, 1, sizeof n, &n);
    for (int i = 0; i < count; ++i)
        err |= clSetKernelArg(k, (cl_uint)(2 + i), sizeof(cl_mem), &mem[i]);
    return err == CL_SUCCESS ? cmrs_launch_enqueue(&g->l, k, n, 0, NULL, NULL)
                             : cmrscl_fail_cl(err, "clSetKernelArg (AMG set-up on the device)");
}

/* Each thread's share of the rows' counts: summed, then turned into their starts in place. */
typedef struct starts_job {
    int32_t *rows; /* n + 1: the counts at [1..n], then the starts at [0..n] */
    int32_t n;
    int64_t *total;  /* a thread's sum; then the starts before its rows */
    int32_t *failed; /* a thread's first row counted -1, or -1 */
    int32_t *most;   /* a thread's longest row */
    bool place;      /* the second pass */
} starts_job;

static void starts_share(void *ctx, int thread, int threads)
{
    const starts_job *j = ctx;
    int64_t begin, end, sum = j->total[thread];
    cmrs_parallel_range(j->n, thread, threads, &begin, &end);
    if (!j->place) {
        int32_t most = 0;
        j->failed[thread] = -1, sum = 0;
        for (int64_t i = begin; i < end; ++i) {
            if (j->rows[i + 1] < 0 && j->failed[thread] < 0)
                j->failed[thread] = (int32_t)i;
            sum += j->rows[i + 1];
            most = j->rows[i + 1] > most ? j->rows[i + 1] : most;
        }
        j->total[thread] = sum;
        j->most[thread] = most;
        return;
    }
    for (int64_t i = begin; i < end; ++i) { /* row i + 1's start over row i's count */
        sum += j->rows[i + 1];
        j->rows[i + 1] = (int32_t)sum;
    }
}

/* The rows' counts (rows[1..n]) into their starts (rows[0..n]) on the host's threads, *nnz the
 * last, *longest the longest row; ERROR_UNSUPPORTED for a row that overflowed its table or more
 * than 2^31 - 1 entries. */
static cmrscl_status row_starts(int32_t *rows, int32_t n, int64_t *nnz, int32_t *longest)
{
    int threads = cmrs_parallel_threads();
    int64_t *total = calloc((size_t)threads, sizeof *total);
    int32_t *failed = calloc((size_t)threads, sizeof *failed);
    int32_t *most = calloc((size_t)threads, sizeof *most);
    if (!total || !failed || !most) {
        free(total), free(failed), free(most);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG set-up on the device");
    }
    starts_job job = {rows, n, total, failed, most, false};
    cmrs_parallel_run(threads, starts_share, &job);
    int32_t bad = -1;
    int64_t sum = 0;
    *longest = 0;
    for (int t = 0; t < threads; ++t) {
        bad = bad < 0 ? failed[t] : bad;
        *longest = most[t] > *longest ? most[t] : *longest;
        int64_t part = total[t];
        total[t] = sum, sum += part;
    }
    cmrscl_status st = CMRSCL_OK;
    if (bad >= 0 || sum > INT32_MAX)
        st = cmrscl_fail(
            CMRSCL_ERROR_UNSUPPORTED,
            bad >= 0 ? "a sparse product on the device: row %d of C has more than %d columns"
                     : "a sparse product on the device: more than 2^31 - 1 entries (%d rows)",
            bad >= 0 ? (int)bad : (int)n, SPGEMM_TABLE);
    if (st == CMRSCL_OK) {
        job.place = true;
        cmrs_parallel_run(threads, starts_share, &job);
        rows[0] = 0;
        *nnz = sum;
    }
    free(total), free(failed), free(most);
    return st;
}

/* c's rows placed from their counts in `count` on the device: the counts read back into
 * rows[1..], their starts made on the host's threads (rows[0..]), c's arrays made and its row
 * pointers sent; *longest: its longest row. */
static cmrscl_status place_rows(const galerkin_run *g, cl_mem count, int32_t *rows,
                                cmrs_device_csr *c, int32_t *longest)
{
    size_t ptr_bytes = ((size_t)c->rows + 1) * 4;
    cl_int err = cmrs_download(g->ctx, count, 0, (size_t)c->rows * 4, rows + 1);
    cmrscl_status st =
        err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "the counts' read (AMG, device)");
    int64_t nnz = 0;
    if (st == CMRSCL_OK)
        st = row_starts(rows, c->rows, &nnz, longest);
    c->nnz = nnz;
    if (st == CMRSCL_OK)
        st = cmrs_amg_buffer(g->ctx, ptr_bytes, &c->ptr);
    if (st == CMRSCL_OK)
        st = cmrs_amg_buffer(g->ctx, (size_t)nnz * 4, &c->col);
    if (st == CMRSCL_OK)
        st = cmrs_amg_buffer(g->ctx, (size_t)nnz * 8, &c->val);
    if (st == CMRSCL_OK)
        st = cmrs_amg_upload(g->ctx, c->ptr, ptr_bytes, rows);
    return st;
}

/* c's rows longer than `sorted` (those its kernel sorted) sorted, where its longest row is. */
static cmrscl_status sort_long_rows(const galerkin_run *g, const cmrs_device_csr *c,
                                    int32_t longest, cl_int sorted)
{
    if (longest <= sorted)
        return CMRSCL_OK;
    cl_uint first = 0, rows = (cl_uint)c->rows;
    size_t groups = rows < SORT_GROUPS ? rows : SORT_GROUPS;
    launch_arg args[] = {ARG(first), ARG(rows), ARG(sorted), ARG(c->ptr), ARG(c->col), ARG(c->val)};
    cmrscl_status st = cmrs_launch_set_args(g->sort_long, args, COUNT(args));
    return st == CMRSCL_OK
               ? cmrs_launch_enqueue(&g->l, g->sort_long, groups * g->l.group, 0, NULL, NULL)
               : st;
}

/* c = a b on the device; ERROR_UNSUPPORTED where a row overflows its table or c has more than
 * 2^31 - 1 entries. */
static cmrscl_status product(const galerkin_run *g, const cmrs_device_csr *a,
                             const cmrs_device_csr *b, cmrs_device_csr *c)
{
    *c = (cmrs_device_csr){a->rows, b->cols, 0, NULL, NULL, NULL};
    double t0 = cmrscl_seconds(), t1 = t0;
    cl_mem count = NULL;
    int32_t *rows = malloc(((size_t)a->rows + 1) * sizeof *rows);
    cmrscl_status st =
        rows ? cmrs_amg_buffer(g->ctx, ((size_t)a->rows + 1) * 4, &count)
             : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG set-up on the device");
    for (int32_t first = 0; st == CMRSCL_OK && first < a->rows; first += (int32_t)g->batch) {
        cl_mem mem[] = {a->ptr, a->col, b->ptr, b->col, g->keys, count};
        st = launch(g, g->count, (cl_uint)first, batch_rows(g, a->rows, first), 6, mem);
    }
    int32_t longest = 0;
    if (st == CMRSCL_OK)
        st = place_rows(g, count, rows, c, &longest);
    t1 = cmrscl_seconds();
    /* (the local kernel's rows all sorted by it, the other's up to SORT_IN_ITEM) */
    const bool local = g->fill_local && longest <= g->local_slots;
    for (int32_t first = 0; st == CMRSCL_OK && first < a->rows; first += (int32_t)g->batch) {
        cl_mem mem[] = {a->ptr, a->col,  a->val,  b->ptr, b->col, b->val,
                        c->ptr, g->keys, g->sums, c->col, c->val};
        st = launch(g, local ? g->fill_local : g->fill, (cl_uint)first,
                    batch_rows(g, a->rows, first), 11, mem);
    }
    if (st == CMRSCL_OK)
        st = sort_long_rows(g, c, longest, local ? longest : g->sort_in_item);
    if (cmrscl_tracing()) { /* the fill's time apart from what follows it on the queue */
        clFinish(g->l.queue);
        cmrscl_trace("AMG product on the device, %d rows: counted and placed %.3f s, filled and "
                     "sorted %.3f (its longest row %d)",
                     (int)a->rows, t1 - t0, cmrscl_seconds() - t1, (int)longest);
    }
    if (count)
        clReleaseMemObject(count);
    free(rows);
    if (st != CMRSCL_OK)
        cmrs_device_csr_release(c);
    return st;
}

static cmrscl_status make_kernels(galerkin_run *g)
{
    /* CMRSCL_AMG_SORT_IN_ITEM, _SORT_LOCAL and _SPGEMM_LOCAL: the tests' way to take each sort
     * and table on small matrices, and for measuring */
    const char *in_item = getenv("CMRSCL_AMG_SORT_IN_ITEM"),
               *local = getenv("CMRSCL_AMG_SORT_LOCAL"),
               *tables = getenv("CMRSCL_AMG_SPGEMM_LOCAL");
    g->sort_in_item = in_item && atoi(in_item) > 0 ? atoi(in_item) : SORT_IN_ITEM;
    g->local_slots = tables && atoi(tables) >= 0 && *tables ? atoi(tables) : SPGEMM_LOCAL;
    while (g->local_slots & (g->local_slots - 1)) /* (a power of two) */
        g->local_slots &= g->local_slots - 1;
    while (g->local_slots > 1 &&
           (size_t)g->local_slots * SPGEMM_GROUP * 12 > g->ctx->info.local_mem_bytes / 2)
        g->local_slots /= 2;
    if (g->local_slots < 2) /* (a power of two of at least 2 slots, or none) */
        g->local_slots = 0;
    int sort_local = local && atoi(local) > 0 ? atoi(local) : SORT_LOCAL;
    /* (a row's columns and values in the device's local memory, with room to spare: asked for
     * more, as much as fits) */
    int fits = (int)(g->ctx->info.local_mem_bytes / 2 / 12);
    sort_local = sort_local < fits ? sort_local : fits > 1 ? fits : 1;
    char options[200];
    snprintf(options, sizeof options,
             "-cl-std=CL1.2 -DHEIGHT=1 -DWARP=1 -DWG_SIZE=%d -DVALUE_DOUBLE=1 -DSPGEMM_TABLE=%d "
             "-DSORT_IN_ITEM=%d -DSORT_LOCAL=%d -DSPGEMM_LOCAL=%d",
             SPGEMM_GROUP, SPGEMM_TABLE, g->sort_in_item, sort_local, g->local_slots);
    static const char *const names[] = {
        "spgemm_count",   "spgemm_fill",        "transpose_count", "transpose_scatter",
        "transpose_sort", "smooth_prolongator", "sort_long_rows",  "spgemm_fill_local"};
    cl_kernel k[8];
    g->l.group = SPGEMM_GROUP;
    cmrscl_status st = cmrs_amg_kernels(g->ctx, "spgemm.cl", options, g->local_slots ? 8 : 7, names,
                                        k, &g->l.group);
    g->count = k[0], g->fill = k[1], g->t_count = k[2], g->t_scatter = k[3], g->t_sort = k[4];
    g->smooth = k[5], g->sort_long = k[6], g->fill_local = g->local_slots ? k[7] : NULL;
    return st;
}

/* t = p^T on the device - p's columns counted, the rows placed on the host's threads, the
 * entries scattered, each row sorted: cmrscl_csr_transpose's, so R need not cross. */
static cmrscl_status transpose(const galerkin_run *g, const cmrs_device_csr *p, cmrs_device_csr *t)
{
    *t = (cmrs_device_csr){p->cols, p->rows, p->nnz, NULL, NULL, NULL};
    size_t ptr_bytes = ((size_t)t->rows + 1) * 4;
    cl_mem next = NULL;
    int32_t *rows = malloc(ptr_bytes);
    cmrscl_status st = rows ? cmrs_amg_buffer(g->ctx, ptr_bytes, &next)
                            : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG transpose");
    if (st == CMRSCL_OK)
        st = cmrs_launch_zero(&g->l, next, ptr_bytes);
    cl_mem counted[] = {p->ptr, p->col, next};
    if (st == CMRSCL_OK)
        st = launch(g, g->t_count, 0, (cl_uint)p->rows, 3, counted);
    int32_t longest = 0;
    if (st == CMRSCL_OK)
        st = place_rows(g, next, rows, t, &longest);
    if (st == CMRSCL_OK) { /* each row's next slot from its start */
        cl_int err = clEnqueueCopyBuffer(g->l.queue, t->ptr, next, 0, 0, ptr_bytes, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = cmrs_launch_order_point(&g->l);
        if (err != CL_SUCCESS)
            st = cmrscl_fail_cl(err, "AMG transpose on the device");
    }
    cl_mem scattered[] = {p->ptr, p->col, p->val, next, t->col, t->val};
    if (st == CMRSCL_OK)
        st = launch(g, g->t_scatter, 0, (cl_uint)p->rows, 6, scattered);
    cl_mem sorted[] = {t->ptr, t->col, t->val};
    if (st == CMRSCL_OK)
        st = launch(g, g->t_sort, 0, (cl_uint)t->rows, 3, sorted);
    if (st == CMRSCL_OK)
        st = sort_long_rows(g, t, longest, g->sort_in_item);
    if (next)
        clReleaseMemObject(next);
    free(rows);
    if (st != CMRSCL_OK)
        cmrs_device_csr_release(t);
    return st;
}

/* g ready for products of up to `most` rows, `batch` rows a launch (0: as many as the tables'
 * memory allows): its kernels and tables made. */
static cmrscl_status run_open(cmrscl_context ctx, size_t most, size_t batch, galerkin_run *g)
{
    *g = (galerkin_run){.ctx = ctx, .l = cmrs_launcher_make(ctx)};
    if (!ctx->info.fp64)
        return cmrscl_fail(
            CMRSCL_ERROR_UNSUPPORTED,
            "sparse products on the device (AMG's set-up, C = A B): the device has no fp64");
    uint64_t bytes = SPGEMM_BATCH_BYTES;
    bytes = bytes < ctx->info.global_mem_bytes / 8 ? bytes : ctx->info.global_mem_bytes / 8;
    bytes = bytes < ctx->info.max_alloc_bytes / 2 ? bytes : ctx->info.max_alloc_bytes / 2;
    g->batch = batch ? batch : (size_t)bytes / ((size_t)SPGEMM_TABLE * 12);
    if (g->batch < 1)
        g->batch = 1;
    if (g->batch > most)
        g->batch = most;
    cmrscl_status st = make_kernels(g);
    if (st == CMRSCL_OK)
        st = cmrs_amg_buffer(g->ctx, g->batch * SPGEMM_TABLE * 4, &g->keys);
    if (st == CMRSCL_OK)
        st = cmrs_amg_buffer(g->ctx, g->batch * SPGEMM_TABLE * 8, &g->sums);
    return st;
}

static void run_close(galerkin_run *g)
{
    cl_mem mem[] = {g->keys, g->sums};
    for (int i = 0; i < 2; ++i)
        if (mem[i])
            clReleaseMemObject(mem[i]);
    cl_kernel k[] = {g->count,  g->fill,   g->t_count,   g->t_scatter,
                     g->t_sort, g->smooth, g->sort_long, g->fill_local};
    for (int i = 0; i < 8; ++i)
        if (k[i])
            clReleaseKernel(k[i]);
}

/* p = A T smoothed in place: P = T - omega D^-1 (A T). */
static cmrscl_status smooth(const galerkin_run *g, const cmrs_device_csr *p,
                            const cmrs_device_csr *t, const double *diag_inv, double omega)
{
    cl_mem diag = NULL;
    size_t bytes = (size_t)p->rows * sizeof(double);
    cmrscl_status st = cmrs_amg_buffer(g->ctx, bytes, &diag);
    if (st == CMRSCL_OK)
        st = cmrs_amg_upload(g->ctx, diag, bytes, diag_inv);
    if (st == CMRSCL_OK && clSetKernelArg(g->smooth, 9, sizeof omega, &omega) != CL_SUCCESS)
        st = cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg (smooth_prolongator)");
    cl_mem mem[] = {p->ptr, p->col, p->val, t->ptr, t->col, t->val, diag};
    if (st == CMRSCL_OK)
        st = launch(g, g->smooth, 0, (cl_uint)p->rows, 7, mem);
    if (diag) /* (OpenCL keeps it until the launch is done) */
        clReleaseMemObject(diag);
    return st;
}

cmrscl_status cmrs_amg_prolongator_device(cmrscl_context ctx, const cmrscl_csr *a,
                                          const cmrs_device_csr *a_on_device, const cmrscl_csr *t,
                                          const double *diag_inv, double omega, size_t batch,
                                          cmrscl_csr *p, cmrs_device_csr *keep)
{
    *p = (cmrscl_csr){0};
    if (keep)
        *keep = (cmrs_device_csr){0};
    galerkin_run g;
    cmrs_device_csr da = {0}, dt = {0}, dp = {0};
    const cmrs_device_csr *ad = a_on_device && a_on_device->ptr ? a_on_device : &da;
    double t0 = cmrscl_seconds();
    cmrscl_status st = run_open(ctx, (size_t)a->rows, batch, &g);
    if (st == CMRSCL_OK && ad == &da)
        st = cmrs_device_csr_upload(g.ctx, a, &da);
    if (st == CMRSCL_OK)
        st = cmrs_device_csr_upload(g.ctx, t, &dt);
    if (st == CMRSCL_OK)
        st = product(&g, ad, &dt, &dp);
    if (st == CMRSCL_OK)
        st = smooth(&g, &dp, &dt, diag_inv, omega);
    double t1 = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = cmrs_device_csr_download(g.ctx, &dp, p);
    cmrs_device_csr_release(&da), cmrs_device_csr_release(&dt);
    if (st == CMRSCL_OK && keep)
        *keep = dp;
    else
        cmrs_device_csr_release(&dp);
    run_close(&g);
    cmrscl_trace("AMG prolongator on the device, %d rows: A T smoothed %.3f s, P back %.3f (ends "
                 "at %.3f)",
                 (int)a->rows, t1 - t0, cmrscl_seconds() - t1, cmrscl_seconds());
    return st;
}

cmrscl_status cmrs_device_multiply(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_csr *b,
                                   size_t batch, cmrs_device_csr *c, double *upload_seconds)
{
    *c = (cmrs_device_csr){0};
    galerkin_run g;
    cmrs_device_csr da = {0}, db = {0};
    double opened = cmrscl_seconds();
    cmrscl_status st = run_open(ctx, (size_t)(a->rows > 1 ? a->rows : 1), batch, &g);
    double t0 = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = cmrs_device_csr_upload(g.ctx, a, &da);
    if (st == CMRSCL_OK && b != a)
        st = cmrs_device_csr_upload(g.ctx, b, &db);
    *upload_seconds = cmrscl_seconds() - t0;
    if (st == CMRSCL_OK)
        st = product(&g, &da, b != a ? &db : &da, c);
    if (st == CMRSCL_OK && clFinish(g.l.queue) != CL_SUCCESS)
        st = cmrscl_fail(CMRSCL_ERROR_OPENCL, "clFinish (a sparse product on the device)");
    if (st != CMRSCL_OK)
        cmrs_device_csr_release(c);
    cmrs_device_csr_release(&da), cmrs_device_csr_release(&db);
    run_close(&g);
    cmrscl_trace("sparse product on the device: kernels and tables %.3f s, A and B up %.3f, C "
                 "made %.3f",
                 t0 - opened, *upload_seconds, cmrscl_seconds() - t0 - *upload_seconds);
    return st;
}

cmrscl_status cmrs_amg_galerkin_device(cmrscl_context ctx, const cmrscl_csr *r, const cmrscl_csr *a,
                                       const cmrs_device_csr *a_on_device, const cmrscl_csr *p,
                                       const cmrs_device_csr *p_on_device, size_t batch,
                                       cmrscl_csr *c, cmrscl_csr *r_made, cmrs_device_csr *c_keep,
                                       cmrs_device_csr *r_keep)
{
    *c = (cmrscl_csr){0};
    if (r_made)
        *r_made = (cmrscl_csr){0};
    if (c_keep)
        *c_keep = (cmrs_device_csr){0};
    if (r_keep)
        *r_keep = (cmrs_device_csr){0};
    galerkin_run g;
    cmrs_device_csr da = {0}, dp = {0}, dr = {0}, ap = {0}, rap = {0};
    const cmrs_device_csr *ad = a_on_device && a_on_device->ptr ? a_on_device : &da;
    const cmrs_device_csr *pd = p_on_device && p_on_device->ptr ? p_on_device : &dp;
    double t[7] = {cmrscl_seconds()}; /* the steps' ends, for CMRSCL_TRACE */
    cmrscl_status st = run_open(ctx, (size_t)(a->rows > p->cols ? a->rows : p->cols), batch, &g);
    if (st == CMRSCL_OK && ad == &da)
        st = cmrs_device_csr_upload(g.ctx, a, &da);
    if (st == CMRSCL_OK && pd == &dp)
        st = cmrs_device_csr_upload(g.ctx, p, &dp);
    t[1] = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = product(&g, ad, pd, &ap);
    cmrs_device_csr_release(&da);
    t[2] = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = r ? cmrs_device_csr_upload(g.ctx, r, &dr) : transpose(&g, pd, &dr);
    cmrs_device_csr_release(&dp);
    t[3] = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = product(&g, &dr, &ap, &rap);
    cmrs_device_csr_release(&ap);
    t[4] = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = cmrs_device_csr_download(g.ctx, &rap, c);
    if (st == CMRSCL_OK && c_keep) /* the next level's A stays there, the caller's */
        *c_keep = rap, rap = (cmrs_device_csr){0};
    cmrs_device_csr_release(&rap);
    t[5] = cmrscl_seconds();
    /* R read back where it was made and asked for (r_made), even if the second product failed
     * (the host's takes it); where the read fails, or it is not asked for (a caller that reads
     * it back later, r_keep), r_made stays empty and the caller transposes P itself where it
     * needs R now */
    if (!r && r_made && dr.val)
        (void)cmrs_device_csr_download(g.ctx, &dr, r_made);
    if (st == CMRSCL_OK && !r && r_keep) /* R stays there too, the caller's */
        *r_keep = dr, dr = (cmrs_device_csr){0};
    cmrs_device_csr_release(&dr);
    t[6] = cmrscl_seconds();
    cmrscl_trace("AMG Galerkin product on the device, %d rows: kernels and A, P up %.3f s, A P "
                 "%.3f, R %.3f, R (A P) %.3f, C back %.3f, R back %.3f (ends at %.3f)",
                 (int)a->rows, t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4],
                 t[6] - t[5], t[6]);
    run_close(&g);
    return st;
}
