/* plan.h - the plan stage: the statistics of a matrix's rows (analyze.c), the table of
 * kernel variants (variants.def, variants.c), and the rule that turns device facts, statistics
 * and options into a plan - the variant, its parameters, the -D string and the reason
 * (plan.c, facts.c, plan_split.c, plan_api.c) - with the tuning database's measured plans
 * (tuning_db.c). Needs no device: the tests fill device facts by hand. */
#ifndef CMRSCL_PLAN_H
#define CMRSCL_PLAN_H

#include "base/base.h"
#include "format/format.h" /* value_census */

/* ---- analyze.c: statistics of the rows ---- */

/* Column spread below which a matrix counts as banded: its rows gather x from a window
 * of a few per cent of the columns (stencils, FEM), which caches keep. */
#define LOCAL_SPREAD 0.05
/* Row statistics and the column spread (col_ind may be NULL: spread 0). */
CMRSCL_HIDDEN void cmrs_analyze_rows(int32_t rows, int32_t cols, const int64_t *row_ptr,
                                     const int32_t *col_ind, cmrscl_matrix_stats *out);
/* The entries the column spread samples, for a device that holds col_ind: up to `entries`
 * evenly spaced entries (every ceil(len / entries), at least 1) of the rows j * row_step,
 * j < rows; the layout depends on the sizes alone, so the device gathers the sample into
 * `entries` slots per sampled row before RowPtr is back on the host. */
typedef struct spread_sample {
    int64_t row_step, rows;
    int32_t entries;
} spread_sample;
CMRSCL_HIDDEN void cmrs_analyze_spread_layout(int32_t rows, int32_t cols, spread_sample *s);
/* The sampled columns from the slots into sample order (sampled: rows x entries room), the
 * sampled rows' lengths given (sample_len); returns their number. */
CMRSCL_HIDDEN int64_t cmrs_analyze_spread_compact(int32_t rows, int32_t cols,
                                                  const int32_t *sample_len, const int32_t *slots,
                                                  int32_t *sampled);
/* What the row statistics are made of, as the device sums them (convert_row_stats): exact
 * integers, so the statistics equal cmrs_analyze_rows' bit for bit. longest_strip[k]: entries of
 * the longest strip of 2^k rows ([0]: the longest row). */
#define STRIP_HEIGHT_LOGS 9 /* heights 1, 2, 4, ..., 256 */
typedef struct row_totals {
    int64_t sum, sum_sq, empty, longest_strip[STRIP_HEIGHT_LOGS];
} row_totals;
/* cmrs_analyze_rows from the totals, the sampled rows' lengths and their sampled columns in
 * sample order (cmrs_analyze_spread_compact) instead of RowPtr and col_ind. */
CMRSCL_HIDDEN void cmrs_analyze_rows_totals(int32_t rows, int32_t cols, const row_totals *t,
                                            const int32_t *sample_len, const int32_t *sampled,
                                            cmrscl_matrix_stats *out);
/* Entries of the longest strip of this height. */
CMRSCL_HIDDEN int64_t cmrs_analyze_longest_strip(int32_t rows, const int64_t *row_ptr, int height);

/* ---- variants.c: the kernel variants (variants.def) ---- */

/* Where a family's layout stores holes (host/format/cmrs_holes.c). */
typedef enum {
    HOLES_NONE,
    HOLES_AFTER_ROWS, /* each row padded to its strip's longest (slices): known from RowPtr */
    HOLES_BETWEEN     /* zeros between the entries (MODULO's slots): known once laid out */
} family_holes;

/* A kernel family as the rest of the library sees it: its file in cl/, defaults, the HEIGHTs
 * the tuner tries, the local memory a work-group of a plan needs, and what the planner,
 * the layouts, the block product and the solvers ask of it - so that those ask the record,
 * not which family it is. */
typedef struct variant_family {
    cmrscl_kernel kernel;
    const char *name, *file;
    int height;                /* default HEIGHT; 0: the device's occupancy rule */
    const char *height_source; /* where that default comes from; NULL: "family default" */
    int local_warp;            /* lanes per strip without shuffles; 0: the device's warp */
    const int *tune_heights;   /* 0-terminated */
    bool tunes_warps;          /* the tuner also tries narrower warps at HEIGHT 1 */
    uint64_t (*local_bytes)(const cmrscl_params *p, uint64_t value_size);
    family_holes holes;
    /* A work-item walks one row of its strip (or several side by side: a warp below HEIGHT)
     * and no lane talks to another; its narrow column words are steps along the row, not
     * offsets from the strip's first column; a solver's product sums by warp, and a block
     * product keeps a lane on two runs of X where there are four or more. */
    bool lane_per_row;
    bool strip_loop;      /* takes strip after strip: a solver's product can cap its grid */
    bool group_rounds;    /* ... or group after group (dots.cl, FOR_GROUPS), its strips unsplit */
    bool rounds_pay;      /* ... and a solver's product on NVIDIA caps it (SOLVE_GROUP_ROUNDS) */
    bool rows_together;   /* each row's entries contiguous: row-ordered strips only */
    bool narrow_columns;  /* 16-bit column words */
    bool implied_columns; /* at HEIGHT 1, columns implied by each row's first (dense rows) */
    bool lane_entries;    /* takes cmrscl_options.lane_entries */
    bool slot_sets;       /* takes cmrscl_options.modulo: MODULO's slot sets */
    bool fuses_cg;        /* gathers x in the kernel's own scope: CG's step fuses with it */
    int block_row_bytes;  /* a block product's row of X at most this many bytes a launch (0:
                             up to PLAN_BLOCK_VECTORS_MAX vectors) */
} variant_family;
/* What a variant needs of the device, and the lanes per strip it takes (variants.def). */
enum { NEEDS_NOTHING = 0, NEEDS_PTX = 1, NEEDS_SUBGROUPS = 2, NEEDS_SG_SHUFFLE = 4 };
enum { LANES_ANY, LANES_HW_WARP, LANES_32, LANES_SUBGROUP };
typedef struct kernel_variant {
    cmrscl_variant pub; /* names, kernel, reduce, file: what the API shows */
    const variant_family *family;
    unsigned needs;
    int lanes;
    bool in_loops; /* the warp layer is called in loops of lengths that differ between warps */
} kernel_variant;
CMRSCL_HIDDEN size_t cmrs_variant_count(void);
/* Row i in the plan's order of preference; NULL past the end. */
CMRSCL_HIDDEN const kernel_variant *cmrs_variant_at(size_t i);
CMRSCL_HIDDEN const kernel_variant *cmrs_variant_find(cmrscl_kernel kernel, cmrscl_reduce reduce);
CMRSCL_HIDDEN const variant_family *cmrs_variant_family_of(cmrscl_kernel kernel);
CMRSCL_HIDDEN const char *cmrs_variant_family_name(cmrscl_kernel kernel);
CMRSCL_HIDDEN const char *cmrs_variant_reduce_name(cmrscl_reduce reduce);
/* What the device lacks to run the variant, in words; NULL when it has everything. */
CMRSCL_HIDDEN const char *cmrs_variant_missing(const cmrscl_device_info *dev,
                                               const kernel_variant *v);
/* The variant's lanes per strip when nobody asks for others. */
CMRSCL_HIDDEN int cmrs_variant_default_warp(const cmrscl_device_info *dev, const kernel_variant *v);
/* Why the variant cannot take `warp` lanes per strip on the device; NULL when it can. */
CMRSCL_HIDDEN const char *cmrs_variant_lanes_refused(const cmrscl_device_info *dev,
                                                     const kernel_variant *v, int warp);
/* Whether the variant's work-group must be one warp of `warp` lanes on the device: its warps
 * part ways (in_loops) where the backend's cannot. */
CMRSCL_HIDDEN bool cmrs_variant_one_warp(const cmrscl_device_info *dev, const kernel_variant *v,
                                         int warp);
/* Local memory a work-group of the plan needs. */
CMRSCL_HIDDEN uint64_t cmrs_variant_local_bytes(const cmrscl_params *p);

/* ---- plan.c: device facts + matrix statistics + options -> the plan and -D string ---- */

/* HEIGHT of the strip kernel from local memory per compute unit, resident work-items and
 * value size (the paper's occupancy rule). */
CMRSCL_HIDDEN int cmrs_plan_rule_height(const cmrscl_device_info *dev, cmrscl_precision precision);
/* The matrix a plan is chosen for: its shape, RowPtr (for strip lengths) and statistics. */
typedef struct plan_matrix {
    int32_t rows, cols;
    int64_t nnz;
    const int64_t *row_ptr; /* NULL on the device path: fetch_row_ptr brings it on need */
    cmrscl_matrix_stats stats;
    const int64_t *longest_strip; /* without row_ptr: row_totals.longest_strip, or NULL */
    const value_census *values;   /* NULL or not examined: the values stay plain */
    bool host_layout; /* laid out on the host (not the device path): layouts with holes can be */
    const int32_t *col_ind; /* NULL on the device path: no narrow columns */
    /* Without row_ptr (the device path): RowPtr from the device, fetched by the caller the
     * first time a rule needs it (cmrs_plan_row_ptr) - so a plan is made once, from the same
     * facts as on the host; NULL where there is none to fetch. */
    const int64_t *(*fetch_row_ptr)(void *source);
    void *source;
} plan_matrix;
/* Layouts that store holes between the entries (host/format/cmrs_holes.c). */
static inline bool plan_has_holes(cmrscl_kernel k)
{
    const variant_family *f = cmrs_variant_family_of(k);
    return f && f->holes != HOLES_NONE;
}
/* How a plan stores its values (cmrscl_values), as the layouts, the buffers, the read-back
 * and the byte counts ask it - so that they ask the record, not which coding it is. */
typedef struct value_codec {
    cmrscl_values values;
    bool in_column_words; /* each entry's value an index in its column word; the values
                             buffer holds the dictionary */
    bool as_float;        /* the values stored as floats (doubles that are floats) */
    bool diagonal_apart;  /* the dictionary's last index reads the diagonal's own array, one
                             a row after the dictionary in the values buffer */
} value_codec;
static inline const value_codec *plan_value_codec(const cmrscl_params *p)
{
    static const value_codec codecs[] = {
        {CMRSCL_VALUES_PLAIN, false, false, false},
        {CMRSCL_VALUES_FLOAT, false, true, false},
        {CMRSCL_VALUES_DICT, true, false, false},
        {CMRSCL_VALUES_DIAGONAL, true, false, true},
    };
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; ++i)
        if (codecs[i].values == p->values)
            return &codecs[i];
    return &codecs[0]; /* AUTO before the plan has decided: plain */
}
/* DIAGONAL's array: a value for each row that has a diagonal, min(rows, cols). */
static inline int64_t plan_diagonal_length(int64_t rows, int64_t cols)
{
    return rows < cols ? rows : cols;
}
/* Values of DIAGONAL's own array in the plan's values buffer, after the dictionary's slots
 * (0 for every other codec). */
static inline size_t plan_diagonal_values(const cmrscl_params *p)
{
    return plan_value_codec(p)->diagonal_apart ? (size_t)plan_diagonal_length(p->rows, p->cols) : 0;
}
/* The precision of the values as the device stores them (the dictionary's, with DICT). */
static inline cmrscl_precision plan_stored_precision(const cmrscl_params *p)
{
    return plan_value_codec(p)->as_float ? CMRSCL_FLOAT : p->precision;
}
/* Bytes of value an entry stores beside its column word (0: in the column word). */
static inline size_t plan_value_bytes(const cmrscl_params *p)
{
    return plan_value_codec(p)->in_column_words ? 0
                                                : cmrscl_precision_size(plan_stored_precision(p));
}
/* The plan's family (its kernel is never AUTO). */
static inline const variant_family *plan_family(const cmrscl_params *p)
{
    return cmrs_variant_family_of(p->kernel);
}
/* Fills every plan field of *out but the sizes and timings (precision, kernel, height,
 * warp, work-group, layout, order, reduce, row_bits, modulo, cache_hint, tile, stats,
 * height_source, plan_reason, build_options); fails with a message when an option cannot
 * run on the device or does not fit the matrix. */
CMRSCL_HIDDEN cmrscl_status cmrs_plan_choose(const cmrscl_device_info *dev,
                                             cmrscl_precision precision, const plan_matrix *a,
                                             const cmrscl_options *opt, cmrscl_params *out);
/* plan_options.c: the options that need no device facts, checked (cmrs_plan_choose's first step).
 */
CMRSCL_HIDDEN cmrscl_status cmrs_plan_check_options(const cmrscl_device_info *dev,
                                                    cmrscl_precision precision,
                                                    const cmrscl_options *opt);
static inline bool plan_power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }
/* A precision the library knows (float or double) that the device can run. */
CMRSCL_HIDDEN cmrscl_status cmrs_plan_check_precision(const cmrscl_device_info *dev,
                                                      cmrscl_precision precision);
/* The -D string of a plan whose fields are chosen (cmrs_plan_choose's last step; a values update
 * that stores the values plain redoes it). Fails, rather than cut the string, where it would
 * not fit cmrscl_params.build_options: a kernel built from a cut string would miss its last
 * definitions (the narrow strips' -DNARROW_ROW_BITS once fell off the end of the longest
 * strings, sub-groups of a fixed width on Intel's CPU runtime, and their kernels failed to
 * build). */
CMRSCL_HIDDEN cmrscl_status cmrs_plan_build_options(const cmrscl_device_info *dev,
                                                    cmrscl_params *p);
/* The -D string of the block product's kernel (cl/cmrs_spmm.cl) for a matrix of plan p, on
 * the warp layer's backend `reduce` (cmrs_abi.h), with its launch shape; snprintf's result. */
CMRSCL_HIDDEN int cmrs_plan_spmm_options(const cmrscl_params *p, int reduce, int warp,
                                         int work_group_size, int vec_lanes, int vec_per_lane,
                                         int vec_width, char *out, size_t size);
/* Narrow columns (column_bits 16, host/format/cmrs_narrow.c): a strip's words are offsets from
 * its first column with the row in strip beside them, in as few bits as the height needs; a
 * slice's are steps along its rows, without one. Said once here for the encoder, the
 * read-back, the values updates and the kernels' -DNARROW_ROW_BITS. */
static inline bool plan_narrow_offsets(const cmrscl_params *p)
{
    return !plan_family(p)->lane_per_row;
}
/* The narrow words' kind: offsets, steps, or steps with jump words (cmrs_narrow.c). */
static inline narrow_kind plan_narrow_kind(const cmrscl_params *p)
{
    return plan_narrow_offsets(p) ? NARROW_OFFSETS
           : p->column_jumps      ? NARROW_STEPS_JUMPS
                                  : NARROW_STEPS;
}
/* The step above which a slice's narrow words take a jump: 0, none. */
static inline int64_t plan_jump_above(const cmrscl_params *p)
{
    return p->column_bits == 16 && p->column_jumps ? cmrs_narrow_jump_above(p->dict_bits) : 0;
}
static inline int plan_narrow_row_bits(const cmrscl_params *p)
{
    return plan_narrow_offsets(p)
               ? cmrs_narrow_row_bits(p->height, p->layout == CMRSCL_LAYOUT_PACKED)
               : 0;
}
/* Vectors one launch of the block product takes at most: two a lane of a 32-lane warp. More a
 * lane would hold more sums a lane (local memory, registers) for a share of the matrix's bytes
 * that is small by then. */
#define PLAN_BLOCK_VECTORS_MAX 64
/* cmrscl_params.block_vectors: the block product's vectors a launch, by layout and precision. */
CMRSCL_HIDDEN int cmrs_plan_block_vectors(const cmrscl_params *p);
/* Whether the matrix is to be laid out for blocks (cmrscl_options.vectors from
 * CMRSCL_BLOCK_PLAN_VECTORS): the rule's block plans, and no tuning database. */
static inline bool plan_for_blocks(const cmrscl_options *o)
{
    return o && o->vectors >= CMRSCL_BLOCK_PLAN_VECTORS;
}
/* ---- facts.c: what the plan's rules read off the device and the matrix ---- */

/* Rows per strip of the segment family on scattered rows, and the strips of it that make a
 * matrix "few rows" for the device. */
#define PLAN_SEGMENT_ROWS 64
/* Warps the device keeps resident at once (the occupancy the HEIGHT rule assumes). */
CMRSCL_HIDDEN double cmrs_plan_resident_warps(const cmrscl_device_info *dev);
/* Fewer strips of 64 rows than resident warps: each warp's chain of dependent loads, not
 * bandwidth, sets the time. */
CMRSCL_HIDDEN bool cmrs_plan_few_rows(const cmrscl_device_info *dev, int32_t rows);
/* RowPtr: a->row_ptr, else fetched (a->fetch_row_ptr), else NULL. */
CMRSCL_HIDDEN const int64_t *cmrs_plan_row_ptr(const plan_matrix *a);
/* Entries of the longest strip of `height` rows: from the device path's table of power-of-two
 * heights, else from RowPtr (cmrs_plan_row_ptr); -1 when neither tells. */
CMRSCL_HIDDEN int64_t cmrs_plan_longest_strip(const plan_matrix *a, int height);

/* ---- plan_cpu.c ---- */

/* The matrix rule on a CPU device (plan_cpu.c): the family and its parameters, with the
 * reason. */
CMRSCL_HIDDEN void cmrs_plan_cpu_rule(const cmrscl_device_info *dev, const plan_matrix *a,
                                      cmrscl_params *p);
/* A slice plan's work-items per strip: 1 on CPUs (a strip a work-item), else height (a row
 * each). */
CMRSCL_HIDDEN int cmrs_plan_slice_warp(const cmrscl_device_info *dev, int height);

/* ---- plan_split.c: which strips are split, into what tiles, combined where ---- */

/* Rows this long on average (mu) are the long-rows class: one warp per row (plan.c), and
 * their split sized for throughput (plan_split.c). */
#define PLAN_LONG_ROWS 128.0
/* Strips up to this many entries are never split automatically: below it, the split's
 * extra work (a second kernel, or the group's barrier) costs more than the long strip. */
#define PLAN_SPLIT_FROM 2048
/* Sets p->tile (0: nothing splits), p->combine and, for the in-group combine, the work-group
 * size the longest strip needs; the plan's family, HEIGHT, warp and work-group come first. */
CMRSCL_HIDDEN cmrscl_status cmrs_plan_split(const cmrscl_device_info *dev, const plan_matrix *a,
                                            const cmrscl_options *opt, cmrscl_params *p);
/* Whether the device makes a work-group's stores to global memory visible to another's loads
 * within a launch, as the last tile's combine needs (CMRSCL_COMBINE_LAST): NVIDIA's OpenCL
 * (PTX's device-wide fence) and CPUs. */
CMRSCL_HIDDEN bool cmrs_plan_tiles_fence(const cmrscl_device_info *dev);
/* Tiles per work-group when its tiles are combined in the group (cmrs_split_build's
 * group_tiles), else 0. */
CMRSCL_HIDDEN int cmrs_plan_group_tiles(const cmrscl_params *p);

/* ---- plan_api.c: the whole plan of a matrix ---- */

/* cmrscl_params is a versioned view (include/cmrscl.h): the bytes of *out its caller knows
 * (struct_size: 0 for the first version's, clamped to the library's), or
 * CMRSCL_ERROR_INVALID_ARGUMENT naming a size below the first version's (or out NULL), before
 * anything is written. */
CMRSCL_HIDDEN cmrscl_status cmrs_params_room(const cmrscl_params *out, size_t *room);
/* The first `room` bytes of the plan into *out, struct_size saying how many. */
CMRSCL_HIDDEN void cmrs_params_deliver(const cmrscl_params *plan, cmrscl_params *out, size_t room);
/* The plan of P A P^T says so: its numbering and, in its reason, the order (cmrscl_renumber). */
CMRSCL_HIDDEN void cmrs_plan_note_renumbered(cmrscl_params *p);

/* The tuning database's plan for the matrix's class when every option is automatic (and it
 * still fits), else cmrs_plan_choose's. *fallback (may be NULL) receives the options of the
 * plan to take instead where the plan's reduction rests on a sub-group width its compiler may
 * not give (the same options, the local reduction: planned by cmrs_plan_fallback only where
 * the built kernel says so); reduce 0 (automatic) where there is none (the user asked for
 * sub-groups, or the plan needs none). */
CMRSCL_HIDDEN cmrscl_status cmrs_plan_for_matrix(const cmrscl_device_info *dev,
                                                 cmrscl_precision precision, const plan_matrix *a,
                                                 const cmrscl_options *opt, cmrscl_params *p,
                                                 cmrscl_options *fallback);
/* The sub-group plan *p replaced by its fallback's (the options cmrs_plan_for_matrix handed
 * back): the fallback's own reason (a tuned plan's said so), then why (`why`: what the
 * compiler did); the height's source kept. */
CMRSCL_HIDDEN cmrscl_status cmrs_plan_fallback(const cmrscl_device_info *dev,
                                               cmrscl_precision precision, const plan_matrix *a,
                                               const cmrscl_options *fallback, const char *why,
                                               cmrscl_params *p);
/* plan_values.c: p->values, dict_bits and dict_size after the layout (row_bits) is chosen,
 * and the reason's "; values" clause; fails when opt->values asks for a codec that does not
 * fit. */
CMRSCL_HIDDEN cmrscl_status cmrs_plan_choose_values(const plan_matrix *a, const cmrscl_options *opt,
                                                    cmrscl_params *p);
/* plan_values.c: p->column_bits after the values (dict_bits): 16 for a slice whose steps
 * fit, or a strip beyond the device's cache whose offsets fit (cmrs_narrow.c), else 32, and
 * the reason's "; columns" clause; fails when opt->column_bits asks for 16 where they do not
 * fit. */
CMRSCL_HIDDEN cmrscl_status cmrs_plan_choose_columns(const cmrscl_device_info *dev,
                                                     const plan_matrix *a,
                                                     const cmrscl_options *opt, cmrscl_params *p);
/* The bytes per entry a product moves (cmrscl_params.bytes_per_entry_*), from the plan's
 * sizes, stored entries and codec. */
CMRSCL_HIDDEN void cmrs_plan_bytes_per_entry(cmrscl_params *p);
/* The plan's sizes: rows, cols, nnz, strips, stored entries (a slice's as cmrs_plan_choose counted
 * them) and the split's counts (tile 0 when nothing splits), the bytes per entry and the block
 * product's vectors a launch. */
CMRSCL_HIDDEN void cmrs_plan_sizes(const plan_matrix *a, int32_t tiles, int32_t long_strips,
                                   cmrscl_params *p);

/* ---- tuning_db.c: the winners of cmrscl_matrix_tune, by device and matrix class ---- */

CMRSCL_HIDDEN void cmrs_tuning_class(const cmrscl_matrix_stats *st, int64_t nnz, char *buf,
                                     size_t size);
CMRSCL_HIDDEN bool cmrs_tuning_db_lookup(const cmrscl_device_info *dev, cmrscl_precision precision,
                                         const char *cls, cmrscl_options *out);
CMRSCL_HIDDEN cmrscl_status cmrs_tuning_db_store(const cmrscl_device_info *dev,
                                                 cmrscl_precision precision, const char *cls,
                                                 const cmrscl_options *opt, double median_ms);

#endif /* CMRSCL_PLAN_H */
