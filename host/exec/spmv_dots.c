/* spmv_dots.c - the matrix's product as kernel objects of a solver's own (exec.h,
 * product_kernels): the family's program built again with one more option - the epilogue of
 * dot products a Krylov step needs (-DDOTS, cl/dots.cl) or the diagonal (-DDIAGONAL,
 * spmv_common.cl's GATHER) - with the matrix's arguments set, so that a solver sets its
 * vectors once and each iteration is a bare enqueue. */
#include "exec/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cmrs_product_kernels_release(product_kernels *k)
{
    if (k->kernel)
        clReleaseKernel(k->kernel);
    if (k->combine)
        clReleaseKernel(k->combine);
    memset(k, 0, sizeof *k);
}

/* A solver's slice product runs at most SOLVE_PRODUCT_RESIDENT times the work-groups the device
 * keeps resident, each warp walking strip after strip (cl/cmrs_slice.cl), and sums its dot
 * products by work-group: its real4s are then few enough - one a resident work-group - for
 * every work-group of the next kernel to add them up, and no reduction kernel's launch comes
 * between the product and the step (docs/dev/PERFORMANCE.md, SOLVE_PRODUCT_RESIDENT: on a GPU half
 * the resident work-groups left the device short of loads in flight, twice and four times
 * as many left more real4s to add up for no faster product). The trade: a barrier a
 * work-group at the product's end, and the grid's strips shared out in whole rounds. On a CPU
 * the full grid pays that barrier - a tree in local memory, which the CPU compilers run as
 * loops over the work-items - in every one of its many small work-groups: there the capped
 * grid is the faster one too, most on Intel's runtime (docs/dev/PERFORMANCE.md,
 * SOLVE_PRODUCT_RESIDENT on CPUs). */
#define SOLVE_PRODUCT_RESIDENT 1
/* ... but not on long rows past a size: on rows of SOLVE_CAP_LONG_ROWS entries and more (a
 * 27-point stencil's, a FEM matrix's) the capped product runs slower than the full grid's, and
 * the loss grows with the matrix until it outweighs the reduction's launch it saves, from
 * about SOLVE_CAP_LONG_NNZ entries on - twice as many in double, whose full grid leaves real4s
 * of twice the bytes to add up (docs/dev/PERFORMANCE.md, SOLVE_CAP_LONG_ROWS). On short rows the
 * capped grid is as fast or faster at every size measured. */
#define SOLVE_CAP_LONG_ROWS 16.0
#define SOLVE_CAP_LONG_NNZ(precision) (INT64_C(1) << ((precision) == CMRSCL_DOUBLE ? 26 : 25))
/* ... and on a GPU, in double, from SOLVE_CAP_SPREAD_NNZ entries on where the long rows' lengths
 * spread (their standard deviation SOLVE_CAP_SPREAD of the mean and more: a real matrix's rows,
 * not a stencil's): there the capped walk lost at every size measured past that, while regular
 * rows of the same size still gained from it (docs/dev/PERFORMANCE.md, SOLVE_CAP_SPREAD). A
 * capped work-group's strips are fixed by its number, where the full grid's scheduler gives each
 * free unit the next work-group: uneven strips likely leave the capped walk's groups waiting on
 * their longest. Float's walks kept pace below SOLVE_CAP_LONG_NNZ; CPUs, where the cap was
 * measured faster, keep it. */
#define SOLVE_CAP_SPREAD 0.25
#define SOLVE_CAP_SPREAD_NNZ (INT64_C(1) << 24)
/* On a capped grid of SOLVE_LOCAL_SUMS_ROUNDS strip rounds and more, a slice product whose
 * sums take SOLVE_LOCAL_SUMS_WORDS 32-bit words or more (CG's two in double, its four with
 * Jacobi in either precision) keeps them in local memory, not in registers (cl/dots.cl,
 * DOTS_LOCAL_SUMS): there the walk waits on memory and the registers the sums held are loads in
 * flight; on shorter walks the slot's read and write a row cost more than they free, and on
 * long walks two 32-bit sums cost nothing measurable either way (docs/dev/PERFORMANCE.md,
 * SOLVE_LOCAL_SUMS_ROUNDS; the losses measured: the 5-point stencil, by 1-4%). Measured with
 * NVIDIA's compiler only: other devices keep their sums in registers unless told. */
#define SOLVE_LOCAL_SUMS_ROUNDS 24
#define SOLVE_LOCAL_SUMS_WORDS 4
/* A split plan's cmrs_combine, built for a solver, adds up the first kernel's real4s too
 * (cl/combine.cl, COMBINE_FOLDS): COMBINE_FOLD_SHARE of them a work-item, on as many
 * work-groups as that takes (or its rows take, if more). Its few real4s are then what the
 * solver's next kernel adds up, and the reduction kernel's launch between the product and the
 * step goes (docs/dev/PERFORMANCE.md, COMBINE_FOLDS); a few real4s a work-item keep the
 * added pass as wide as the reduction kernel's was. */
#define COMBINE_FOLD_SHARE 4

/* Whether the solver's product keeps its full grid for its long rows (the rules above). */
static bool long_rows_keep_grid(const cmrscl_matrix m)
{
    const cmrscl_params *p = &m->params;
    if (p->stats.mu < SOLVE_CAP_LONG_ROWS)
        return false;
    const bool spread = p->precision == CMRSCL_DOUBLE && p->stats.row_cv >= SOLVE_CAP_SPREAD &&
                        (m->ctx->info.type & CL_DEVICE_TYPE_GPU);
    return p->nnz > (spread ? SOLVE_CAP_SPREAD_NNZ : SOLVE_CAP_LONG_NNZ(p->precision));
}

/* Whether a strip plan's solver product sums by warps on a full grid (cl/dots.cl,
 * DOTS_WARP_SUMS): its rows leave the warp a lane each (NVIDIA's shuffles, a butterfly for all
 * rows: HEIGHT at most the warp, rounded up to a power of two), the lane adds its row's terms,
 * and no barrier holds a work-group until its longest strip is done - where strips' lengths
 * spread, the group's barrier and read back left the solver's product far slower than the plain
 * one (docs/dev/PERFORMANCE.md, STRIP_LANE_SUMS). Not where the group or the last tile combines
 * long strips: those rows are written by the group. CMRSCL_STRIP_LANE_SUMS=0 keeps the group's
 * (for measuring it). */
static bool strip_lanes(const cmrscl_params *p)
{
    const char *asked = getenv("CMRSCL_STRIP_LANE_SUMS");
    if (asked && *asked && atoi(asked) == 0)
        return false;
    return p->kernel == CMRSCL_KERNEL_STRIP && p->reduce == CMRSCL_REDUCE_SHUFFLE &&
           p->height <= 32 && cmrs_pow2_at_least(p->height) <= p->warp &&
           p->combine != CMRSCL_COMBINE_GROUP && p->combine != CMRSCL_COMBINE_LAST;
}

/* The groups of a capped grid: at most `cap`, each walking the same number of strip rounds
 * (*rounds). */
static size_t capped_groups(size_t groups, size_t cap, size_t *rounds)
{
    *rounds = 1;
    if (cap == 0 || groups <= cap)
        return groups;
    *rounds = (groups + cap - 1) / cap;
    return (groups + *rounds - 1) / *rounds;
}

/* Whether a capped product of `rounds` keeps its sums in local memory: the rule above, or
 * CMRSCL_SOLVE_LOCAL_SUMS=0|1 (the tests' way to take either on any device, and for
 * measuring). */
static bool local_sums(const cmrscl_matrix m, const char *extra, size_t rounds, bool shuffle)
{
    const cmrscl_params *p = &m->params;
    /* the slots and the group's scratch beside them: both must fit, with room to spare */
    uint64_t bytes = 2 * (uint64_t)p->work_group_size * 4 * cmrscl_precision_size(p->precision);
    if (2 * bytes > m->ctx->info.local_mem_bytes)
        return false;
    const char *forced = getenv("CMRSCL_SOLVE_LOCAL_SUMS");
    if (forced && *forced)
        return atoi(forced) != 0;
    if (!shuffle) /* measured on NVIDIA's compiler alone (the build with its shuffles) */
        return false;
    const char *dots = strstr(extra, "-DDOTS=");
    int sums = dots ? atoi(dots + strlen("-DDOTS=")) : 0; /* DOTS 1, 2 or 4: that many */
    int words = sums * (p->precision == CMRSCL_DOUBLE ? 2 : 1);
    return rounds >= SOLVE_LOCAL_SUMS_ROUNDS && words >= SOLVE_LOCAL_SUMS_WORDS;
}

/* What the product built with `extra` looks like: how its epilogue sums - by NVIDIA's warp
 * shuffles (cl/dots.cl, GROUP_SHUFFLE) where the device has them, and in the slice family,
 * whose work-items each hold their own row, by warps, no barrier in the product
 * (DOTS_WARP_SUMS), unless its grid is capped, where its work-items may keep their sums in
 * local memory (DOTS_LOCAL_SUMS) - its launch sizes and the real4s its kernels leave. */
typedef struct dots_shape {
    bool shuffle, warps, combine, capped, local_sums;
    size_t local, global, combine_local, combine_global;
    size_t kernel_units; /* the first kernel's real4s */
    size_t units;        /* those the solver's next kernel adds up: the combine's, where it
                            folds the first kernel's in, else all (both kernels', the tiles') */
    size_t space;        /* the real4s the product writes, from where the units start */
} dots_shape;

static dots_shape shape_of(const cmrscl_matrix m, const char *extra, size_t fold_cap)
{
    const cmrscl_params *p = &m->params;
    const cmrscl_device_info *dev = &m->ctx->info;
    dots_shape d;
    /* a solver's: with the epilogue, or the fused CG iteration (its sums by work-group) */
    const bool fused = strstr(extra, "-DCG_FUSED=") != NULL;
    const bool dots = fused || strstr(extra, "-DDOTS=") != NULL;
    d.shuffle = dots && dev->warp_shuffle && p->work_group_size % 32 == 0;
    d.combine = p->long_strips && p->combine == CMRSCL_COMBINE_KERNEL;
    cmrs_spmv_sizes(m, &d.local, &d.global, &d.combine_local, &d.combine_global);
    /* CMRSCL_SOLVE_PRODUCT_GROUPS=G caps the grid at G work-groups on any device (the tests'
     * way to walk several strips a warp on CPUs, and for measuring the cap) */
    const char *forced = getenv("CMRSCL_SOLVE_PRODUCT_GROUPS");
    size_t cap = 0;
    /* A grid that may be capped: the slice family's, and those of the families that share out
     * strips by work-group (strip, segment, MODULO), which take group after group (dots.cl,
     * FOR_GROUPS) - not in the fused iteration, not split into tiles. The strip family's solver
     * products are capped where the device has NVIDIA's shuffles (variant_family.rounds_pay):
     * the capped grid's sums fold into the next kernel, where the full grid's many work-groups
     * needed solve_reduce's launch first - as fast or faster on an H200, with a launch less.
     * The segment family's walk capped at the resident work-groups was slower there than its
     * full grid with the launch; on CPUs the full grids are few work-groups anyway and the
     * capped walks measured slower (docs/dev/PERFORMANCE.md, SOLVE_GROUP_ROUNDS). Those keep
     * their full grid up to the caller's fold_cap, and beyond walk as few rounds as bring it
     * within. */
    const variant_family *f = plan_family(p);
    const bool can_cap = f->strip_loop || (f->group_rounds && !fused && p->long_strips == 0);
    const bool caps = f->strip_loop || (f->rounds_pay && dev->warp_shuffle);
    if (dots && can_cap) {
        if (forced && atoi(forced) > 0)
            cap = (size_t)atoi(forced);
        else if (caps && !long_rows_keep_grid(m))
            cap = SOLVE_PRODUCT_RESIDENT * (size_t)dev->compute_units * dev->resident_items_per_cu /
                  d.local;
        else if (!caps && fold_cap && d.global / d.local > fold_cap)
            cap = fold_cap;
    }
    size_t rounds;
    size_t groups = capped_groups(d.global / d.local, cap, &rounds);
    d.capped = groups < d.global / d.local;
    d.warps = d.shuffle && !d.capped && !fused && (plan_family(p)->lane_per_row || strip_lanes(p));
    d.local_sums = d.capped && !fused && plan_family(p)->lane_per_row &&
                   local_sums(m, extra, rounds, d.shuffle);
    d.global = groups * d.local;
    d.kernel_units = d.global / (d.warps ? 32 : d.local);
    /* the last tile's combine leaves the long strips' terms in a real4 a tile after the
     * work-groups' (cl/combine.cl) */
    const bool tile_terms = dots && p->combine == CMRSCL_COMBINE_LAST;
    d.units = d.kernel_units + (tile_terms ? (size_t)p->tiles : 0);
    d.space = d.units;
    if (d.combine && dots) { /* the combine's real4s first, then the first kernel's it adds */
        const char *share_env = getenv("CMRSCL_COMBINE_FOLD_SHARE"); /* for measuring it */
        size_t share =
            (share_env && atoi(share_env) > 0 ? (size_t)atoi(share_env) : COMBINE_FOLD_SHARE) *
            d.combine_local;
        size_t fold_groups = (d.kernel_units + share - 1) / share;
        if (d.combine_global < fold_groups * d.combine_local)
            d.combine_global = fold_groups * d.combine_local;
        d.units = d.combine_global / d.combine_local;
        d.space = d.units + d.kernel_units;
    }
    return d;
}

void cmrs_product_kernels_shape(const cmrscl_matrix m, const char *extra, size_t fold_cap,
                                size_t *units, size_t *space, bool *can_chain, bool *capped)
{
    dots_shape d = shape_of(m, extra, fold_cap);
    *units = d.units;
    *space = d.space;
    *capped = d.capped;
    /* the chain's fence holds on NVIDIA through PTX (the build with shuffles) and on CPUs;
     * over one kernel's units (cl/dots.cl, DOTS_CHAIN) */
    *can_chain = !d.combine && (d.shuffle || (m->ctx->info.type & CL_DEVICE_TYPE_CPU));
}

cmrscl_status cmrs_product_kernels_make(cmrscl_matrix m, const char *extra, size_t fold_cap,
                                        product_kernels *out)
{
    memset(out, 0, sizeof *out);
    const cmrscl_params *p = &m->params;
    char options[sizeof p->build_options + 128];
    /* no extra option: the matrix's own program (from the context's cache) */
    dots_shape d = shape_of(m, extra, fold_cap);
    int n =
        snprintf(options, sizeof options, "%s%s%s%s%s%s", p->build_options, *extra ? " " : "",
                 extra, d.shuffle ? " -DGROUP_SHUFFLE=1" : "", d.warps ? " -DDOTS_WARP_SUMS=1" : "",
                 d.local_sums ? " -DDOTS_LOCAL_SUMS=1" : "");
    if (n < 0 || (size_t)n >= sizeof options)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE, "the solver's build options are too long");
    cl_program prog;
    double seconds;
    cmrscl_program_source from;
    cmrscl_status st = cmrs_program_get(m->ctx, cmrs_variant_family_of(p->kernel)->file, options,
                                        &prog, &seconds, &from);
    cl_int err = CL_SUCCESS;
    if (st == CMRSCL_OK && !(out->kernel = clCreateKernel(prog, "cmrs_spmv", &err)))
        st = cmrscl_fail_cl(err, "clCreateKernel (the solver's product)");
    if (st == CMRSCL_OK && d.combine &&
        !(out->combine = clCreateKernel(prog, "cmrs_combine", &err)))
        st = cmrscl_fail_cl(err, "clCreateKernel (the solver's combine)");
    /* the epilogue's local memory may leave fewer work-items a group than the plan's */
    if (st == CMRSCL_OK && cmrs_matrix_kernel_limits(m, out->kernel))
        st = CMRSCL_ERROR_DEVICE_LIMIT;
    /* a sub-group plan holds only with the plan's sub-group width (subgroups.c) */
    if (st == CMRSCL_OK && p->reduce == CMRSCL_REDUCE_SUBGROUP)
        st = cmrs_subgroups_check_kernel(m->ctx, out->kernel, p);
    if (st == CMRSCL_OK)
        st = cmrs_matrix_kernel_args(m, out->kernel, out->combine);
    if (st != CMRSCL_OK) {
        cmrs_product_kernels_release(out);
        return st;
    }
    out->local = d.local, out->global = d.global;
    out->combine_local = d.combine_local, out->combine_global = d.combine_global;
    out->kernel_groups = d.kernel_units; /* its real4s */
    out->groups = d.units;
    out->space = d.space;
    out->kernels_made = m->kernels_made;
    out->local_sums = d.local_sums;
    return CMRSCL_OK;
}

cmrscl_status cmrs_product_kernels_bind(product_kernels *k, cmrscl_precision precision,
                                        double alpha, cl_mem x, double beta, cl_mem y, bool dots,
                                        cl_mem ws, cl_uint at, cl_mem w)
{
    /* a combine that adds the first kernel's real4s up writes its own at `at`, and the first
     * kernel's follow them (shape_of) */
    const bool folds = k->combine && dots;
    const cl_uint kat = folds ? at + 4 * (cl_uint)k->groups : at;
    cl_int err = cmrs_spmv_set_scalars(k->kernel, CMRS_ARG_ALPHA, precision, alpha, beta);
    err |= clSetKernelArg(k->kernel, CMRS_ARG_X, sizeof(cl_mem), &x);
    err |= clSetKernelArg(k->kernel, CMRS_ARG_Y, sizeof(cl_mem), &y);
    if (dots) {
        err |= clSetKernelArg(k->kernel, CMRS_ARG_COUNT + CMRS_DOTS_WS, sizeof(cl_mem), &ws);
        err |= clSetKernelArg(k->kernel, CMRS_ARG_COUNT + CMRS_DOTS_AT, sizeof kat, &kat);
        err |= clSetKernelArg(k->kernel, CMRS_ARG_COUNT + CMRS_DOTS_W, sizeof(cl_mem), &w);
    }
    if (k->combine) {
        const cl_uint c = CMRS_COMBINE_COUNT, fold_n = (cl_uint)k->kernel_groups;
        err |= cmrs_spmv_set_scalars(k->combine, CMRS_COMBINE_ALPHA, precision, alpha, beta);
        err |= clSetKernelArg(k->combine, CMRS_COMBINE_Y, sizeof(cl_mem), &y);
        if (dots) {
            err |= clSetKernelArg(k->combine, c + CMRS_DOTS_WS, sizeof ws, &ws);
            err |= clSetKernelArg(k->combine, c + CMRS_DOTS_AT, sizeof at, &at);
            err |= clSetKernelArg(k->combine, c + CMRS_DOTS_W, sizeof w, &w);
            err |= clSetKernelArg(k->combine, c + CMRS_COMBINE_DOTS_X, sizeof x, &x);
            err |= clSetKernelArg(k->combine, c + CMRS_COMBINE_FOLD_AT, sizeof kat, &kat);
            err |= clSetKernelArg(k->combine, c + CMRS_COMBINE_FOLD_N, sizeof fold_n, &fold_n);
        }
    }
    return err == CL_SUCCESS
               ? CMRSCL_OK
               : cmrscl_fail(CMRSCL_ERROR_OPENCL, "clSetKernelArg for the solver's product failed");
}

cmrscl_status cmrs_product_kernels_enqueue(const product_kernels *k, cl_command_queue queue,
                                           bool out_of_order)
{
    if (k->global == 0) /* no rows */
        return CMRSCL_OK;
    cl_int err =
        clEnqueueNDRangeKernel(queue, k->kernel, 1, NULL, &k->global, &k->local, 0, NULL, NULL);
    if (err == CL_SUCCESS && k->combine && out_of_order)
        err = clEnqueueBarrierWithWaitList(queue, 0, NULL, NULL);
    if (err == CL_SUCCESS && k->combine)
        err = clEnqueueNDRangeKernel(queue, k->combine, 1, NULL, &k->combine_global,
                                     &k->combine_local, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : cmrscl_fail_cl(err, "clEnqueueNDRangeKernel (solver)");
}
