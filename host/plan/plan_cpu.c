/* plan_cpu.c - the matrix rule on CPU devices (those without NVIDIA's warp shuffles): slices
 * where the host's arrays are there and the holes stay few, else the segment family's walk or
 * Algorithm 1 on sub-groups. Measured on PoCL and Intel's OpenCL CPU runtime: the constants'
 * names in docs/dev/PERFORMANCE.md and docs/PORTABILITY.md, "The plan on CPUs". */
#include "plan/plan.h"

#include <stdio.h>

/* CPUs (docs/PORTABILITY.md, "The plan on CPUs"; measured with Intel's OpenCL CPU runtime
 * 2026.2 on a 2-core AMD EPYC with AVX-512 and 32 MB of L3, and with PoCL 5 on a 16-core
 * Xeon): a core walks a strip best alone - the segment family with one work-item per strip
 * reads each row once, in order, with no lanes to combine - unless the device has sub-groups
 * with shuffles and the rows are long enough to pay for them: then Algorithm 1 of HEIGHT 8,
 * or CSR-vector for long rows, on sub-groups of CPU_LANES lanes (long rows on sub-groups that
 * part ways: cpu_vector_rule, below). Sub-groups that part ways
 * (Intel's: SIMD vectors of their own) pay from mu 6 (1.1-4.4x against the walk for mu
 * 6-1200; 0.8-1.4x for mu 4-5); sub-groups tied together in a group (PoCL 5's: each shuffle a
 * group barrier) from mu 15 (1.1-2.6x for mu 15-1200; 0.5-0.9x for mu 2-8). Both on matrices
 * of up to CPU_SMALL entries, and on irregular rows of any size (R-MAT, row_cv >= 1: Intel
 * 2.5-4.8x at 8.4M entries); larger regular matrices keep the walk (Intel: 0.74-1.17x for 14-26M
 * entries of mu 8-75). */
#define CPU_STRIP_ROWS 6.0       /* mu from which sub-groups that part ways beat the walk ... */
#define CPU_STRIP_ROWS_TIED 15.0 /* ... and sub-groups tied together (each shuffle a barrier) */
#define CPU_SMALL (1 << 23)      /* entries up to which they beat it on regular rows too */
#define CPU_IRREGULAR 1.0        /* row_cv from which they beat it at any size */
#define CPU_LANES 8              /* ... with sub-groups of this width (16 and 32 measured slower) */
/* Slices on CPUs: a slice's rows side by side are what a CPU's SIMD lanes take best - the
 * work-items of a row each, one vector load a step of the strip, no lanes to combine - so
 * the tuner chose slices on nearly every matrix of the tests' shared set and the regular
 * generated ones, on PoCL and Intel's runtime, up to about 2.8 stored positions an entry, and
 * the walk of the segment family only beyond (rajat01 3.2, R-MAT 9.1): docs/dev/PERFORMANCE.md,
 * CPU_SLICE_HOLES. Built on the host, so only where the host's arrays are there. Not where
 * rows hold one entry each (a permutation): a work-item's strip pointers, column and store
 * then come for a single product, and the segment family's walk, which shares them among a
 * strip's entries, was faster (CPU_SLICE_MIN_ROW; rows of two entries tied). */
#define CPU_SLICE_HEIGHT 16
#define CPU_SLICE_HOLES 3.0
#define CPU_SLICE_MIN_ROW 1.5
/* A slice's strip is one work-item's on CPUs (CPU_SLICE_ITEM, warp 1): the work-item steps
 * through the strip's rows as SIMD lanes, gathers and all (cl/cmrs_slice.cl). Where the device
 * runs each work-item as scalar code in a loop (PoCL) a work-item of one row is one chain of
 * dependent additions with nothing beside it: the strip a work-item was 1.6-3.0x faster than a
 * row a work-item on PoCL 3.1 (2 cores with AVX-512; stencils, FEM, convection-diffusion,
 * random rows, the shared matrices) and 1.2-2.3x on PoCL 5 (16 cores). Intel's runtime, which
 * vectorises across work-items itself, gained 1.2-1.4x but on random rows of 8 (0.9x: there
 * its own lanes skip holes better). docs/dev/PERFORMANCE.md, CPU_SLICE_ITEM. */
int cmrs_plan_slice_warp(const cmrscl_device_info *dev, int height)
{
    bool cpu = (dev->type & CL_DEVICE_TYPE_CPU) && !dev->warp_shuffle;
    return cpu ? 1 : height;
}

/* Where Algorithm 1 on sub-groups that part ways is the alternative (it pays: CPU_STRIP_ROWS),
 * slices only up to CPU_SLICE_HOLES_APART positions an entry: Intel's runtime, slices against
 * HEIGHT 8 on sub-groups of 8, 1.26x faster at 1.92 (random rows of 8), 1.05-1.14x slower at
 * 2.63 and 1.06-1.39x at 2.80-2.97 (lp_ship04l, skewed rows); docs/dev/PERFORMANCE.md. */
#define CPU_SLICE_HOLES_APART 2.5
/* Long rows on sub-groups that part ways (Intel's): a row's entries shared by a sub-group's
 * lanes (CSR-vector, HEIGHT 1) beat a slice's work-item walking the whole row from
 * PLAN_LONG_ROWS entries a row (dense and random rows: 1.4-1.9x on 4 lanes), and from
 * CPU_VECTOR_ROWS where a slice's rows differ in length so much that it would store
 * CPU_VECTOR_HOLES positions an entry or more (random rows of 40-64 entries, 1.89 positions:
 * 1.2-1.5x); at 32 entries slices were 1.1x faster, and a slice of rows of about equal length
 * (FEM, 91 entries a row, 1.06 positions) 1.25x. Sub-groups of CPU_VECTOR_LANES: fewer lanes a
 * row, more rows at once (4 lanes 1.1-1.2x faster than 8 for rows of 48-128 entries, 8 lanes
 * 1.1x faster on dense rows of 700). At any size: against the walk that larger regular
 * matrices otherwise keep, 2.1-2.9x on 7-13M entries of rows of 128-3000. The holes come from
 * RowPtr, which the device path fetches
 * for this: both paths make the same plan. docs/dev/PERFORMANCE.md, CPU_VECTOR_ROWS. */
#define CPU_VECTOR_ROWS 36.0
#define CPU_VECTOR_HOLES 1.5
#define CPU_VECTOR_LANES 4
static bool cpu_vector_rule(bool apart, const plan_matrix *a, double holes,
                            const cmrscl_device_info *dev, cmrscl_params *p)
{
    const cmrscl_matrix_stats *st = &a->stats;
    bool long_rows = st->mu >= PLAN_LONG_ROWS;
    if (!apart || a->nnz == 0 ||
        !(long_rows || (st->mu >= CPU_VECTOR_ROWS && holes >= CPU_VECTOR_HOLES)))
        return false;
    p->kernel = CMRSCL_KERNEL_STRIP;
    p->reduce = CMRSCL_REDUCE_SUBGROUP;
    p->warp = dev->subgroup_widths & CPU_VECTOR_LANES ? CPU_VECTOR_LANES
              : dev->subgroup_widths & CPU_LANES      ? CPU_LANES
                                                      : (int)dev->subgroup_width;
    p->height = 1;
    p->height_source = "matrix rule";
    int n = snprintf(p->plan_reason, sizeof p->plan_reason,
                     "a CPU with sub-groups that part ways, long rows (mu %.1f", st->mu);
    if (!long_rows)
        n +=
            snprintf(p->plan_reason + n, sizeof p->plan_reason - (size_t)n,
                     "; slices of %d would store %.2f positions an entry", CPU_SLICE_HEIGHT, holes);
    snprintf(p->plan_reason + n, sizeof p->plan_reason - (size_t)n,
             "): one sub-group of %d per row (CSR-vector)", p->warp);
    return true;
}

/* The slices' stored positions an entry, counted once from RowPtr: where the host's arrays
 * are there (the slice rule), or where the long-row rule asks (the device path fetches RowPtr
 * for it); 0 otherwise. */
static double cpu_slice_holes(const plan_matrix *a, bool vector_asks)
{
    if (a->nnz == 0 || !(a->host_layout || vector_asks))
        return 0.0;
    const int64_t *row_ptr = cmrs_plan_row_ptr(a);
    return row_ptr ? cmrs_slice_holes(a->rows, a->cols, row_ptr, CPU_SLICE_HEIGHT) : 0.0;
}

/* Slices are laid out on the host: only where its arrays are there. */
static bool cpu_slice_rule(const plan_matrix *a, double holes, double most_holes, cmrscl_params *p)
{
    if (!a->host_layout || holes == 0.0 || a->stats.mu < CPU_SLICE_MIN_ROW || holes > most_holes)
        return false;
    p->kernel = CMRSCL_KERNEL_SLICE;
    p->reduce = CMRSCL_REDUCE_LOCAL;
    p->height = CPU_SLICE_HEIGHT;
    p->height_source = "matrix rule";
    snprintf(p->plan_reason, sizeof p->plan_reason,
             "a CPU device, %.2f stored positions per entry with the holes of slices of %d rows: "
             "slices, the rows of a strip side by side",
             holes, CPU_SLICE_HEIGHT);
    return true;
}

void cmrs_plan_cpu_rule(const cmrscl_device_info *dev, const plan_matrix *a, cmrscl_params *p)
{
    const cmrscl_matrix_stats *st = &a->stats;
    bool lanes = dev->subgroup_width && dev->subgroup_shuffle;
    double from = dev->subgroup_apart ? CPU_STRIP_ROWS : CPU_STRIP_ROWS_TIED;
    bool pays = st->mu >= from && (a->nnz <= CPU_SMALL || st->row_cv >= CPU_IRREGULAR);
    bool apart = lanes && dev->subgroup_apart;
    double holes =
        cpu_slice_holes(a, apart && st->mu >= CPU_VECTOR_ROWS && st->mu < PLAN_LONG_ROWS);
    double most_holes = apart && pays ? CPU_SLICE_HOLES_APART : CPU_SLICE_HOLES;
    if (cpu_vector_rule(apart, a, holes, dev, p) || cpu_slice_rule(a, holes, most_holes, p))
        return;
    p->height_source = "device rule";
    if (lanes && pays) {
        p->kernel = CMRSCL_KERNEL_STRIP;
        p->reduce = CMRSCL_REDUCE_SUBGROUP;
        p->warp = dev->subgroup_widths & CPU_LANES ? CPU_LANES : (int)dev->subgroup_width;
        p->height = st->mu >= PLAN_LONG_ROWS ? 1 : 8;
        p->height_source = "matrix rule";
        snprintf(p->plan_reason, sizeof p->plan_reason,
                 "a CPU with sub-groups, %s %s rows (mu %.1f): %s on sub-groups of %d",
                 a->nnz <= CPU_SMALL ? "few" : "irregular", p->height == 1 ? "long" : "medium",
                 st->mu,
                 p->height == 1 ? "one sub-group per row (CSR-vector)" : "Algorithm 1, HEIGHT 8",
                 p->warp);
        return;
    }
    p->kernel = CMRSCL_KERNEL_SEGMENT;
    p->reduce = CMRSCL_REDUCE_LOCAL;
    p->height = 32;
    snprintf(p->plan_reason, sizeof p->plan_reason,
             "a CPU device%s: one work-item walks each strip of 32 rows (segment kernel)",
             !lanes          ? ""
             : st->mu < from ? ", short rows"
                             : ", many regular rows");
}
