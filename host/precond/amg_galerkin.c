/* amg_galerkin.c - AMG's smoothed prolongator P = T - omega D^-1 (A T) and Galerkin operator
 * R (A P) on the device (cl/spgemm.cl), and the plain product A B behind cmrscl_csr_multiply
 * (multiply.c). The host's sparse products are bound by the latency of their scattered sums; a
 * GPU takes rows by the million, a work-item or a work-group each.
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
/* the most work-groups sort_long_rows and the group kernels run, each walking rows in turn */
#define SORT_GROUPS 65536
/* On a GPU a product's rows are filled a work-group a row (spgemm_fill_group): the row's table
 * in local memory, B's rows across the lanes, A's entries in turn - where a work-item a row
 * probes a table in global memory, a DRAM sector a probe, one after another. Counted so too
 * (spgemm_count_group) where A's and B's rows make SPGEMM_GROUP_PRODUCTS products a row or more
 * on average: below, a group's barriers and idle lanes cost more than a work-item's few probes.
 * SPGEMM_LANES lanes a group, twice as many where B's rows are longer on average: a step's
 * lanes take one of B's row's entries each. Not on CPUs, whose caches hold a work-item's table
 * and whose groups meet at barriers in software (docs/dev/PERFORMANCE.md, SPGEMM_GROUPS). */
#define SPGEMM_LANES 32
#define SPGEMM_GROUP_PRODUCTS 64

typedef struct galerkin_run {
    cmrscl_context ctx;
    cl_kernel count, fill, t_count, t_scatter, t_sort, smooth, sort_long, count_group, fill_group,
        fill_local;
    cl_mem keys, sums; /* the batch's tables */
    int sort_in_item;  /* SORT_IN_ITEM, or CMRSCL_AMG_SORT_IN_ITEM (the tests, and measuring) */
    int local_slots;   /* SPGEMM_LOCAL, or CMRSCL_AMG_SPGEMM_LOCAL (likewise), or fewer */
    launcher rows;     /* the group kernels' launcher, where they run: its group the most lanes */
    size_t lanes;      /* CMRSCL_AMG_SPGEMM_LANES (the tests, and measuring), else 0 */
    bool groups_asked; /* CMRSCL_AMG_SPGEMM_GROUPS=1: every count in groups too (likewise) */
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
    return err == CL_SUCCESS
               ? cmrs_launch_enqueue(&g->l, k, n, 0, NULL, NULL)
               : cmrscl_fail_cl(err, "clSetKernelArg (a sparse product on the device)");
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
        err == CL_SUCCESS
            ? CMRSCL_OK
            : cmrscl_fail_cl(err, "the counts' read (a sparse product on the device)");
    int64_t nnz = 0;
    if (st == CMRSCL_OK)
        st = cmrs_row_starts(rows, c->rows, SPGEMM_TABLE, &nnz, longest);
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

/* The lanes of a product's groups (SPGEMM_LANES). */
static size_t group_lanes(const galerkin_run *g, const cmrs_device_csr *b)
{
    size_t lanes = g->lanes                                            ? g->lanes
                   : b->nnz > (int64_t)SPGEMM_LANES * (int64_t)b->rows ? 2 * SPGEMM_LANES
                                                                       : SPGEMM_LANES;
    return lanes < g->rows.group ? lanes : g->rows.group;
}

/* Whether A's and B's rows make enough products a row for the group count
 * (SPGEMM_GROUP_PRODUCTS), or the groups are asked for. */
static bool count_in_groups(const galerkin_run *g, const cmrs_device_csr *a,
                            const cmrs_device_csr *b)
{
    return g->count_group &&
           (g->groups_asked ||
            (a->rows > 0 && b->rows > 0 &&
             (double)a->nnz / a->rows * ((double)b->nnz / b->rows) >= SPGEMM_GROUP_PRODUCTS));
}

/* A group kernel over every row of a product (its arguments: first and rows, 0 and the
 * product's, then the kernel's own); SORT_GROUPS groups of `lanes` at most. */
static cmrscl_status launch_groups(const galerkin_run *g, cl_kernel k, cl_uint rows, size_t lanes,
                                   const launch_arg *args, int count)
{
    cmrscl_status st = cmrs_launch_set_args(k, args, count);
    launcher l = g->rows;
    l.group = lanes;
    size_t groups = rows < SORT_GROUPS ? rows : SORT_GROUPS;
    return st == CMRSCL_OK ? cmrs_launch_enqueue(&l, k, groups * lanes, 0, NULL, NULL) : st;
}

/* A local argument of `bytes` (a NULL value: OpenCL's way to size one). */
#define LOCAL(bytes) ((launch_arg){(bytes), NULL})

static cmrscl_status count_by_groups(const galerkin_run *g, const cmrs_device_csr *a,
                                     const cmrs_device_csr *b, cl_mem count)
{
    cl_uint first = 0, rows = (cl_uint)a->rows, most = 2 * SPGEMM_TABLE;
    launch_arg args[] = {ARG(first),
                         ARG(rows),
                         ARG(a->ptr),
                         ARG(a->col),
                         ARG(b->ptr),
                         ARG(b->col),
                         LOCAL((size_t)most * 4),
                         ARG(most),
                         ARG(count)};
    return launch_groups(g, g->count_group, rows, group_lanes(g, b), args, COUNT(args));
}

/* The slots of the group fill's tables for rows of at most `longest` columns (cl/spgemm.cl's
 * group_table), and whether they fit the device's local memory: 16 bytes a slot. The group
 * fill needs B's rows of distinct columns (the lanes of a step would race on a column twice in
 * a row). */
static cl_uint group_slots(int32_t longest)
{
    cl_uint size = 32;
    while (size < 2 * SPGEMM_TABLE && (int64_t)size < 2 * (int64_t)longest)
        size *= 2;
    return size;
}

static bool group_fill_fits(const galerkin_run *g, bool b_distinct, int32_t longest)
{
    return g->fill_group && b_distinct &&
           (size_t)group_slots(longest) * 16 + 64 <= g->ctx->info.local_mem_bytes;
}

static cmrscl_status fill_by_groups(const galerkin_run *g, const cmrs_device_csr *a,
                                    const cmrs_device_csr *b, const cmrs_device_csr *c,
                                    int32_t longest)
{
    cl_uint first = 0, rows = (cl_uint)a->rows, most = group_slots(longest);
    launch_arg args[] = {ARG(first),
                         ARG(rows),
                         ARG(a->ptr),
                         ARG(a->col),
                         ARG(a->val),
                         ARG(b->ptr),
                         ARG(b->col),
                         ARG(b->val),
                         ARG(c->ptr),
                         LOCAL((size_t)most * 4),
                         LOCAL((size_t)most * 8),
                         LOCAL((size_t)most * 4),
                         ARG(most),
                         ARG(c->col),
                         ARG(c->val)};
    return launch_groups(g, g->fill_group, rows, group_lanes(g, b), args, COUNT(args));
}

/* c = a b on the device (b_distinct: b's rows of distinct columns); ERROR_UNSUPPORTED where a
 * row overflows its table or c has more than 2^31 - 1 entries. */
static cmrscl_status product(const galerkin_run *g, const cmrs_device_csr *a,
                             const cmrs_device_csr *b, bool b_distinct, cmrs_device_csr *c)
{
    *c = (cmrs_device_csr){a->rows, b->cols, 0, NULL, NULL, NULL};
    double t0 = cmrscl_seconds(), t1 = t0;
    cl_mem count = NULL;
    int32_t *rows = malloc(((size_t)a->rows + 1) * sizeof *rows);
    cmrscl_status st =
        rows ? cmrs_amg_buffer(g->ctx, ((size_t)a->rows + 1) * 4, &count)
             : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "a sparse product on the device");
    const bool counted_in_groups = count_in_groups(g, a, b);
    if (st == CMRSCL_OK && counted_in_groups)
        st = count_by_groups(g, a, b, count);
    for (int32_t first = 0; st == CMRSCL_OK && !counted_in_groups && first < a->rows;
         first += (int32_t)g->batch) {
        cl_mem mem[] = {a->ptr, a->col, b->ptr, b->col, g->keys, count};
        st = launch(g, g->count, (cl_uint)first, batch_rows(g, a->rows, first), 6, mem);
    }
    int32_t longest = 0;
    if (st == CMRSCL_OK)
        st = place_rows(g, count, rows, c, &longest);
    t1 = cmrscl_seconds();
    /* (the local and group kernels' rows all sorted by them, the other's up to SORT_IN_ITEM) */
    const bool local = g->fill_local && longest <= g->local_slots;
    const bool grouped = !local && st == CMRSCL_OK && group_fill_fits(g, b_distinct, longest);
    if (grouped)
        st = fill_by_groups(g, a, b, c, longest);
    for (int32_t first = 0; st == CMRSCL_OK && !grouped && first < a->rows;
         first += (int32_t)g->batch) {
        cl_mem mem[] = {a->ptr, a->col,  a->val,  b->ptr, b->col, b->val,
                        c->ptr, g->keys, g->sums, c->col, c->val};
        st = launch(g, local ? g->fill_local : g->fill, (cl_uint)first,
                    batch_rows(g, a->rows, first), 11, mem);
    }
    if (st == CMRSCL_OK)
        st = sort_long_rows(g, c, longest, local || grouped ? longest : g->sort_in_item);
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
    /* the group kernels on GPUs, CMRSCL_AMG_SPGEMM_GROUPS=0|1 (the tests, and measuring) else;
     * their lanes SPGEMM_LANES, or CMRSCL_AMG_SPGEMM_LANES (likewise), or the most they run
     * (their own launcher: the work-item kernels' group stays theirs) */
    const char *groups = getenv("CMRSCL_AMG_SPGEMM_GROUPS"),
               *lanes = getenv("CMRSCL_AMG_SPGEMM_LANES");
    bool on = groups && *groups ? atoi(groups) != 0 : (g->ctx->info.type & CL_DEVICE_TYPE_GPU) != 0;
    g->groups_asked = groups && *groups && atoi(groups) != 0;
    g->lanes = lanes && atoi(lanes) > 0 ? (size_t)atoi(lanes) : 0;
    g->rows = g->l;
    g->rows.group = g->lanes > 2 * (size_t)SPGEMM_LANES ? g->lanes : 2 * (size_t)SPGEMM_LANES;
    static const char *const group_names[] = {"spgemm_count_group", "spgemm_fill_group"};
    cl_kernel gk[2] = {NULL, NULL};
    if (st == CMRSCL_OK && on)
        st = cmrs_amg_kernels(g->ctx, "spgemm.cl", options, 2, group_names, gk, &g->rows.group);
    g->count_group = gk[0], g->fill_group = gk[1];
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
    cl_kernel k[] = {g->count,  g->fill,      g->t_count,     g->t_scatter,  g->t_sort,
                     g->smooth, g->sort_long, g->count_group, g->fill_group, g->fill_local};
    for (int i = 0; i < 10; ++i)
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
        st = product(&g, ad, &dt, true, &dp);
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
                                   bool b_distinct, size_t batch, cmrs_device_csr *c,
                                   double *upload_seconds)
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
        st = product(&g, &da, b != a ? &db : &da, b_distinct, c);
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
        st = product(&g, ad, pd, true, &ap);
    cmrs_device_csr_release(&da);
    t[2] = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = r ? cmrs_device_csr_upload(g.ctx, r, &dr) : transpose(&g, pd, &dr);
    cmrs_device_csr_release(&dp);
    t[3] = cmrscl_seconds();
    if (st == CMRSCL_OK)
        st = product(&g, &dr, &ap, true, &rap);
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
