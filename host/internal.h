/* internal.h - what the host modules share, listed in data-flow order:
 * status -> mtx -> csr -> gen -> cmrs -> device -> analyze -> plan -> program -> context ->
 * matrix -> spmv.
 * Nothing here is public API; tests and fuzzers may use it through the static library. */
#ifndef CMRSCL_INTERNAL_H
#define CMRSCL_INTERNAL_H

#include "cmrscl.h"

#include "../cl/cmrs_abi.h" /* the kernels' contract: sentinels, argument order, option codes */

#include <locale.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CMRSCL_HIDDEN __attribute__((visibility("hidden")))

/* ---- status.c: errors, tracing, small utilities ---- */

/* Records a formatted detail message for cmrscl_last_error() and returns `status`. */
CMRSCL_HIDDEN cmrscl_status cmrscl_fail(cmrscl_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Like cmrscl_fail for a failed OpenCL call: maps allocation failures to the
 * out-of-memory codes and keeps the OpenCL code and its name in the message. */
CMRSCL_HIDDEN cmrscl_status cmrscl_fail_cl(cl_int err, const char *what);
/* Appends text (e.g. a build log) to the current detail message. */
CMRSCL_HIDDEN void cmrscl_fail_append(const char *text);
CMRSCL_HIDDEN const char *cmrscl_cl_error_name(cl_int err);
/* Writes one line to stderr when CMRSCL_TRACE is set; the library's only output. */
CMRSCL_HIDDEN void cmrscl_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Milliseconds from the start of `first` to the end of `last` (profiling events). */
CMRSCL_HIDDEN cl_int event_ms(cl_event first, cl_event last, double *ms);
/* Whether CMRSCL_TRACE is set (for traces that cost something to gather). */
CMRSCL_HIDDEN bool cmrscl_tracing(void);
CMRSCL_HIDDEN double cmrscl_seconds(void);
/* malloc of n*size bytes with an overflow check; never returns NULL for n == 0. */
CMRSCL_HIDDEN void *cmrscl_alloc(size_t n, size_t size);
CMRSCL_HIDDEN size_t cmrscl_precision_size(cmrscl_precision p);
/* Matrix Market numbers use '.' whatever LC_NUMERIC the application chose: readers and
 * writers switch the calling thread to the C numeric locale in between (uselocale). */
typedef struct c_numeric_scope {
    locale_t c, previous;
} c_numeric_scope;
CMRSCL_HIDDEN void c_numeric_enter(c_numeric_scope *scope);
CMRSCL_HIDDEN void c_numeric_leave(c_numeric_scope *scope);
CMRSCL_HIDDEN const char *cmrscl_precision_name(cmrscl_precision p);

/* ---- parallel.c: host threads for the set-up steps ---- */

/* Threads for the host's set-up work: $CMRSCL_THREADS, else the CPUs this process may run
 * on (at most 256). */
CMRSCL_HIDDEN int parallel_threads(void);
/* Runs fn(ctx, t, threads) for t = 0..threads-1 on as many threads (t = 0 on the caller's)
 * and returns when all are done. A thread that cannot be created runs its share on the
 * caller's thread: the result never depends on it. */
typedef void (*parallel_fn)(void *ctx, int thread, int threads);
CMRSCL_HIDDEN void parallel_run(int threads, parallel_fn fn, void *ctx);
/* Runs fn(ctx, piece) for piece = 0..pieces-1 on `threads` threads, each taking the next
 * unclaimed piece when it finishes one, so a thread on a slower CPU (a virtual CPU sharing
 * its core, say) takes fewer. Which thread runs a piece varies; what a piece does must not
 * depend on it. */
typedef void (*parallel_piece_fn)(void *ctx, int64_t piece);
CMRSCL_HIDDEN void parallel_pieces(int threads, int64_t pieces, parallel_piece_fn fn, void *ctx);
/* Like cmrscl_alloc, for the set-up's big arrays: from 8 MB on, on 2 MB boundaries with
 * huge pages advised, since faulting in fresh 4 KB pages costs as much as filling them
 * (and more in virtual machines). free() releases it. */
CMRSCL_HIDDEN void *parallel_alloc(size_t n, size_t size);
/* Thread `thread`'s contiguous share [begin, end) of n items. */
CMRSCL_HIDDEN void parallel_range(int64_t n, int thread, int threads, int64_t *begin, int64_t *end);

/* ---- mtx.c: Matrix Market -> CSR ---- */

/* Parses a whole Matrix Market file held in memory (plain or gzip), naming it `name` in
 * messages. The fuzz targets and tests use it; cmrscl_mtx_read streams from disk. */
CMRSCL_HIDDEN cmrscl_status mtx_read_memory(const void *data, size_t size, const char *name,
                                            cmrscl_csr *out);
/* The same through the parallel reader with `threads` threads (whatever the size; 1 is
 * mtx_read_memory): the same result and the same messages. */
CMRSCL_HIDDEN cmrscl_status mtx_read_memory_threads(const void *data, size_t size, const char *name,
                                                    int threads, cmrscl_csr *out);

/* ---- coo_to_csr.c: COO -> canonical CSR on all host threads ---- */

/* A run of COO entries (0-based, inside the matrix); val NULL means ones (pattern). */
typedef struct coo_piece {
    const int32_t *row, *col;
    const double *val;
    int64_t count;
} coo_piece;
/* Canonical CSR of the entries of all pieces, taken in order: rows in order, ascending
 * columns, duplicates summed in input order. The same CSR for any thread count. */
CMRSCL_HIDDEN cmrscl_status csr_from_coo_pieces(int32_t rows, int32_t cols, const coo_piece *pieces,
                                                int npieces, int threads, cmrscl_csr *out);

/* ---- csr.c ---- */

/* The first row that starts at or after entry e (rows if none): where a thread's equal
 * share of the entries begins. */
CMRSCL_HIDDEN int64_t csr_row_at(const int64_t *row_ptr, int32_t rows, int64_t e);
/* The checks of cmrscl_csr_validate on bare arrays (values are not looked at), on all host
 * threads for large matrices; the message names the first offending entry whatever the
 * thread count. On the way, *rows_sorted (may be NULL) says whether every row's columns
 * are non-decreasing. */
CMRSCL_HIDDEN cmrscl_status csr_validate_structure(int32_t rows, int32_t cols,
                                                   const int64_t *row_ptr, const int32_t *col_ind,
                                                   bool *rows_sorted);
/* row_ptr widened to 64 bits (rows + 1 entries, malloc'ed; NULL when out of memory). */
CMRSCL_HIDDEN int64_t *csr_widen_row_ptr(const int32_t *row_ptr, int32_t rows);
/* cmrscl_csr_validate, also saying whether the rows are sorted (rows_sorted may be NULL). */
CMRSCL_HIDDEN cmrscl_status csr_validate(const cmrscl_csr *csr, bool *rows_sorted);

/* ---- cmrs.c: CSR -> CMRS ---- */

/* The flag of a long strip (split path) in StripPtr, its top bit at the matrix's entry index
 * width (cmrs_abi.h). */
#define STRIP_PTR_LONG(index_bits) ((uint64_t)1 << CMRS_LONG_STRIP_BIT(index_bits))

/* The values cmrs_build moves with the entries: src (CSR order) converted into dst (CMRS
 * order, nnz + CMRS_ENTRY_PAD elements, the padding zeroed) as each strip is placed, so no
 * permutation array is needed for them. */
typedef struct cmrs_values {
    const void *src;
    cmrscl_precision src_precision;
    void *dst;
    cmrscl_precision dst_precision;
} cmrs_values;
/* Builds the CMRS arrays of a valid CSR structure: strip_ptr, col_ind (followed by
 * CMRS_ENTRY_PAD zeros), row_in_strip, and the values when `values` is not NULL
 * (out->values is left NULL: the caller owns values->dst). perm_bits 32 or 64 (0: none)
 * asks for *perm: for each CMRS position the CSR position of its entry, as uint32_t or
 * uint64_t (what the device's values updates read); NULL when the two orders agree (no
 * column ordering). */
CMRSCL_HIDDEN cmrscl_status cmrs_build(int32_t rows, int32_t cols, const int64_t *row_ptr,
                                       const int32_t *col_ind, int height, unsigned flags,
                                       const cmrs_values *values, int perm_bits, cmrscl_cmrs *out,
                                       void **perm);
/* ---- cmrs_modulo.c: the MODULO kernel's layout ---- */

/* The MODULO layout: cmrs (strip_ptr, col_ind with CMRS_ENTRY_PAD zeros after it,
 * row_in_strip; cmrs.values NULL, cmrs.nnz the stored entries), the values in the matrix's
 * precision (stored + CMRS_ENTRY_PAD, holes 0) and the permutation (CSR entry per position,
 * all bits set for a hole). */
typedef struct cmrs_modulo_out {
    cmrscl_cmrs cmrs;
    void *values;
    void *perm;
} cmrs_modulo_out;
/* Re-lays each strip of `in` (built by cmrs_build) so that within a step of `warp`
 * positions, positions with the same (position in strip) % modulo never hold the same row,
 * with holes where needed. values: value_size bytes per position of in (may be NULL). perm:
 * the CSR entry of each position of in, perm_bits wide (NULL: the identity, row-ordered
 * strips); perm_bits 32 or 64 asks for out->perm, 0 for none. On all host threads; the
 * result does not depend on their number. */
CMRSCL_HIDDEN cmrscl_status cmrs_modulo_layout(const cmrscl_cmrs *in, const void *values,
                                               size_t value_size, const void *perm, int perm_bits,
                                               int modulo, int warp, cmrs_modulo_out *out);
CMRSCL_HIDDEN void cmrs_modulo_free(cmrs_modulo_out *out);
/* Drops the holes of a MODULO layout in place (strip_ptr, col_ind, row_in_strip, values,
 * nnz): a valid CMRS of the matrix again. */
CMRSCL_HIDDEN void cmrs_drop_holes(cmrscl_cmrs *c);

/* dst[k] = src[k] converted between float and double, for k < n, on all host threads. */
CMRSCL_HIDDEN void values_convert(void *dst, cmrscl_precision dst_precision, const void *src,
                                  cmrscl_precision src_precision, int64_t n);
/* Does the matrix fit the packed layout with this height? */
CMRSCL_HIDDEN bool cmrs_packing_fits(int32_t cols, int height);

/* ---- device.c: platforms, devices, selection and facts ---- */

typedef struct device_entry {
    cl_platform_id platform;
    cl_device_id device;
    unsigned platform_index, device_index;
} device_entry;

/* All devices of all platforms in "P:D" order (free() the list). */
CMRSCL_HIDDEN cmrscl_status device_enumerate(device_entry **list, size_t *count);
/* Resolves a selector (see cmrscl_context_create) to one device. */
CMRSCL_HIDDEN cmrscl_status device_select(const char *selector, device_entry *out);
/* Fills the facts of a device; `context` (may be NULL) is used for the warp probe. */
CMRSCL_HIDDEN cmrscl_status device_query(const device_entry *entry, cl_context context,
                                         cmrscl_device_info *out);

/* ---- subgroups.c: the sub-groups of a device, and of a built kernel ---- */

/* Fills the sub-group facts of *out (subgroups .. subgroup_cl_c) from the extensions and
 * OpenCL C features, checked by probe kernels; warp_width and max_work_group_size first. */
CMRSCL_HIDDEN void subgroups_query(const device_entry *entry, cl_context context, const char *ext,
                                   cmrscl_device_info *out);
/* Whether a kernel built for a SUBGROUP plan has the plan's sub-group width (p->warp) in
 * work-groups of p->work_group_size; else ERROR_UNSUPPORTED saying what it has. */
CMRSCL_HIDDEN cmrscl_status subgroups_check_kernel(cmrscl_context ctx, cl_kernel kernel,
                                                   const cmrscl_params *p);

/* ---- analyze.c: statistics of the rows and the split of long strips ---- */

/* Column spread below which a matrix counts as banded: its rows gather x from a window
 * of a few per cent of the columns (stencils, FEM), which caches keep. */
#define LOCAL_SPREAD 0.05
/* Row statistics and the column spread (col_ind may be NULL: spread 0). */
CMRSCL_HIDDEN void analyze_rows(int32_t rows, int32_t cols, const int64_t *row_ptr,
                                const int32_t *col_ind, cmrscl_matrix_stats *out);
/* The entries the column spread samples, for a device that holds col_ind: up to `entries`
 * evenly spaced entries (every ceil(len / entries), at least 1) of the rows j * row_step,
 * j < rows; the layout depends on the sizes alone, so the device gathers the sample into
 * `entries` slots per sampled row before RowPtr is back on the host. */
typedef struct spread_sample {
    int64_t row_step, rows;
    int32_t entries;
} spread_sample;
CMRSCL_HIDDEN void analyze_spread_layout(int32_t rows, int32_t cols, spread_sample *s);
/* The sampled columns from the slots into sample order (sampled: rows x entries room), the
 * sampled rows' lengths given (sample_len); returns their number. */
CMRSCL_HIDDEN int64_t analyze_spread_compact(int32_t rows, int32_t cols, const int32_t *sample_len,
                                             const int32_t *slots, int32_t *sampled);
/* What the row statistics are made of, as the device sums them (convert_row_stats): exact
 * integers, so the statistics equal analyze_rows' bit for bit. longest_strip[k]: entries of
 * the longest strip of 2^k rows ([0]: the longest row). */
#define STRIP_HEIGHT_LOGS 9 /* heights 1, 2, 4, ..., 256 */
typedef struct row_totals {
    int64_t sum, sum_sq, empty, longest_strip[STRIP_HEIGHT_LOGS];
} row_totals;
/* analyze_rows from the totals, the sampled rows' lengths and their sampled columns in
 * sample order (analyze_spread_compact) instead of RowPtr and col_ind. */
CMRSCL_HIDDEN void analyze_rows_totals(int32_t rows, int32_t cols, const row_totals *t,
                                       const int32_t *sample_len, const int32_t *sampled,
                                       cmrscl_matrix_stats *out);
/* Entries of the longest strip of this height. */
CMRSCL_HIDDEN int64_t analyze_longest_strip(int32_t rows, const int64_t *row_ptr, int height);
/* The split path's counts: the strips of more than 2 * tile entries ("long") and the tiles
 * of `tile` entries (the last one of a strip shorter) they make. group_tiles > 0 (the
 * in-group combine, warps per work-group): no long strip's tiles cross a multiple of it -
 * empty slots pad the group instead, counted in *tiles. */
CMRSCL_HIDDEN void split_count(int32_t rows, const int64_t *row_ptr, int height, int32_t tile,
                               int group_tiles, int64_t *tiles, int64_t *long_strips);
/* The split path's arrays: the long strips, in order, each cut into tiles (tile_strip
 * SPLIT_NO_STRIP on padding slots). Strip and tile numbers are 32-bit (tiles <= INT32_MAX:
 * the plan checks it); a tile's first entry is an entry index, 64-bit here and narrowed
 * for a 32-bit device (matrix.c). */
#define SPLIT_NO_STRIP CMRS_NO_STRIP
typedef struct split_layout {
    int32_t tile; /* entries per tile; 0: nothing is split */
    int32_t tiles, long_strips;
    int64_t longest_whole; /* entries of the longest strip not split */
    uint64_t *tile_start;  /* tiles: first entry */
    uint32_t *tile_strip;  /* tiles: the strip */
    uint32_t *long_strip;  /* long_strips: the strip */
    uint32_t *first_tile;  /* long_strips + 1: its first tile */
} split_layout;
CMRSCL_HIDDEN cmrscl_status split_build(int32_t rows, const int64_t *row_ptr, int height,
                                        int32_t tile, int group_tiles, split_layout *out);
CMRSCL_HIDDEN void split_free(split_layout *s);

/* ---- variants.c: the kernel variants (variants.def) ---- */

/* A kernel family: its file in cl/, defaults, the HEIGHTs the tuner tries and the local memory
 * a work-group of a plan needs. */
typedef struct variant_family {
    cmrscl_kernel kernel;
    const char *name, *file;
    int height;              /* default HEIGHT; 0: the device's occupancy rule */
    int local_warp;          /* lanes per strip without shuffles; 0: the device's warp */
    const int *tune_heights; /* 0-terminated */
    uint64_t (*local_bytes)(const cmrscl_params *p, uint64_t value_size);
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
CMRSCL_HIDDEN size_t variant_count(void);
/* Row i in the plan's order of preference; NULL past the end. */
CMRSCL_HIDDEN const kernel_variant *variant_at(size_t i);
CMRSCL_HIDDEN const kernel_variant *variant_find(cmrscl_kernel kernel, cmrscl_reduce reduce);
CMRSCL_HIDDEN const variant_family *variant_family_of(cmrscl_kernel kernel);
CMRSCL_HIDDEN const char *variant_family_name(cmrscl_kernel kernel);
CMRSCL_HIDDEN const char *variant_reduce_name(cmrscl_reduce reduce);
/* What the device lacks to run the variant, in words; NULL when it has everything. */
CMRSCL_HIDDEN const char *variant_missing(const cmrscl_device_info *dev, const kernel_variant *v);
/* The variant's lanes per strip when nobody asks for others. */
CMRSCL_HIDDEN int variant_default_warp(const cmrscl_device_info *dev, const kernel_variant *v);
/* Why the variant cannot take `warp` lanes per strip on the device; NULL when it can. */
CMRSCL_HIDDEN const char *variant_lanes_refused(const cmrscl_device_info *dev,
                                                const kernel_variant *v, int warp);
/* Whether the variant's work-group must be one warp of `warp` lanes on the device: its warps
 * part ways (in_loops) where the backend's cannot. */
CMRSCL_HIDDEN bool variant_one_warp(const cmrscl_device_info *dev, const kernel_variant *v,
                                    int warp);
/* Local memory a work-group of the plan needs. */
CMRSCL_HIDDEN uint64_t variant_local_bytes(const cmrscl_params *p);

/* ---- plan.c: device facts + matrix statistics + options -> the plan and -D string ---- */

/* HEIGHT of the strip kernel from local memory per compute unit, resident work-items and
 * value size (the paper's occupancy rule). */
CMRSCL_HIDDEN int plan_rule_height(const cmrscl_device_info *dev, cmrscl_precision precision);
/* The matrix a plan is chosen for: its shape, RowPtr (for strip lengths) and statistics. */
typedef struct plan_matrix {
    int32_t rows, cols;
    int64_t nnz;
    const int64_t *row_ptr; /* NULL on the device path until a split needs it */
    cmrscl_matrix_stats stats;
    const int64_t *longest_strip; /* without row_ptr: row_totals.longest_strip, or NULL */
} plan_matrix;
/* Fills every plan field of *out but the sizes and timings (precision, kernel, height,
 * warp, work-group, layout, order, reduce, row_bits, modulo, cache_hint, tile, stats,
 * height_source, plan_reason, build_options); fails with a message when an option cannot
 * run on the device or does not fit the matrix. */
CMRSCL_HIDDEN cmrscl_status plan_choose(const cmrscl_device_info *dev, cmrscl_precision precision,
                                        const plan_matrix *a, const cmrscl_options *opt,
                                        cmrscl_params *out);
/* A precision the library knows (float or double) that the device can run. */
CMRSCL_HIDDEN cmrscl_status plan_check_precision(const cmrscl_device_info *dev,
                                                 cmrscl_precision precision);
/* The -D string of a plan whose fields are chosen (plan_choose's last step; the fallback from
 * sub-groups redoes it). */
CMRSCL_HIDDEN void plan_build_options(const cmrscl_device_info *dev, cmrscl_params *p);
/* Warps the device keeps resident at once (the occupancy the HEIGHT rule assumes). */
CMRSCL_HIDDEN double plan_resident_warps(const cmrscl_device_info *dev);
/* Fewer strips of 64 rows than resident warps: each warp's chain of dependent loads, not
 * bandwidth, sets the time. */
CMRSCL_HIDDEN bool plan_few_rows(const cmrscl_device_info *dev, int32_t rows);
/* Entries of the longest strip of `height` rows: from RowPtr, else from the device's table
 * of power-of-two heights; -1 when neither tells. */
CMRSCL_HIDDEN int64_t plan_longest_strip(const plan_matrix *a, int height);

/* ---- plan_api.c: the whole plan of a matrix ---- */

/* The tuning database's plan for the matrix's class when every option is automatic (and it
 * still fits), else plan_choose's; *used (may be NULL) receives the options it was made with. */
CMRSCL_HIDDEN cmrscl_status plan_for_matrix(const cmrscl_device_info *dev,
                                            cmrscl_precision precision, const plan_matrix *a,
                                            const cmrscl_options *opt, cmrscl_params *p,
                                            cmrscl_options *used);
/* The plan's sizes: rows, cols, nnz, strips, stored entries and the split's counts (tile 0
 * when nothing splits). */
CMRSCL_HIDDEN void plan_sizes(const plan_matrix *a, int32_t tiles, int32_t long_strips,
                              cmrscl_params *p);

/* ---- plan_split.c: which strips are split, into what tiles, combined where ---- */

/* Rows this long on average (mu) are the long-rows class: one warp per row (plan.c), and
 * their split sized for throughput (plan_split.c). */
#define PLAN_LONG_ROWS 128.0
/* Strips up to this many entries are never split automatically: below it, the split's
 * extra work (a second kernel, or the group's barrier) costs more than the long strip. */
#define PLAN_SPLIT_FROM 2048
/* Sets p->tile (0: nothing splits), p->combine and, for the in-group combine, the work-group
 * size the longest strip needs; the plan's family, HEIGHT, warp and work-group come first. */
CMRSCL_HIDDEN cmrscl_status plan_split(const cmrscl_device_info *dev, const plan_matrix *a,
                                       const cmrscl_options *opt, cmrscl_params *p);
/* Tiles per work-group when its tiles are combined in the group (split_build's
 * group_tiles), else 0. */
CMRSCL_HIDDEN int plan_group_tiles(const cmrscl_params *p);

/* ---- cache_dir.c: the per-user cache directory ---- */

/* $XDG_CACHE_HOME/cmrscl, else ~/.cache/cmrscl; false when neither is set. */
CMRSCL_HIDDEN bool cache_dir(char *path, size_t size);
/* mkdir -p (mode 0700) of the directories above `file` (not its last part); 0 or -1. */
CMRSCL_HIDDEN int make_parent_dirs(const char *file);

/* ---- tuning_db.c: the winners of cmrscl_matrix_tune, by device and matrix class ---- */

CMRSCL_HIDDEN void tuning_class(const cmrscl_matrix_stats *st, int64_t nnz, char *buf, size_t size);
CMRSCL_HIDDEN bool tuning_db_lookup(const cmrscl_device_info *dev, cmrscl_precision precision,
                                    const char *cls, cmrscl_options *out);
CMRSCL_HIDDEN cmrscl_status tuning_db_store(const cmrscl_device_info *dev,
                                            cmrscl_precision precision, const char *cls,
                                            const cmrscl_options *opt, double median_ms);

/* ---- program.c: kernel sources, JIT build, cache ---- */

/* The text of a kernel file: from $CMRSCL_KERNEL_DIR if set, else embedded at build
 * time; *out is a malloc'ed NUL-terminated string. */
CMRSCL_HIDDEN cmrscl_status program_source(const char *file_name, char **out);
typedef struct program_cache_entry {
    char *options;
    cl_program program;
    struct program_cache_entry *next;
} program_cache_entry;
/* Returns the program of kernel file `file` (after spmv_common.cl) with `options`, built
 * for ctx's device once, then cached in the context. *build_seconds is 0 for a cached
 * program; *from says where it came from. The program stays owned by the cache. */
CMRSCL_HIDDEN cmrscl_status program_get(cmrscl_context ctx, const char *file, const char *options,
                                        cl_program *out, double *build_seconds,
                                        cmrscl_program_source *from);
/* Builds a one-off program (used by the warp probe); the caller releases it. */
CMRSCL_HIDDEN cmrscl_status program_build(cl_context context, cl_device_id device,
                                          const char *source, const char *options, cl_program *out);
CMRSCL_HIDDEN void program_cache_free(program_cache_entry *head);
/* program_cache.c, the on-disk cache of program binaries (format and checks there). */
CMRSCL_HIDDEN uint64_t fnv1a64(const void *data, size_t size);
typedef struct program_key {
    char *text; /* library, platform, device, driver, options and source */
    size_t length;
    char path[4096]; /* the entry's file */
} program_key;
/* The key of a program and its file; false when the cache is off (CMRSCL_PROGRAM_CACHE),
 * there is no directory for it, or no memory. */
CMRSCL_HIDDEN bool program_key_make(cl_device_id device, const char *file, const char *source,
                                    const char *options, program_key *out);
CMRSCL_HIDDEN void program_key_free(program_key *key);
/* The program built from a valid entry, else NULL (a bad entry is removed). */
CMRSCL_HIDDEN cl_program program_disk_load(const program_key *key, cl_context context,
                                           cl_device_id device, const char *options);
/* Writes the binary of a built program as the entry (atomically); failures are ignored. */
CMRSCL_HIDDEN void program_disk_store(const program_key *key, cl_program prog);

/* ---- context.c ---- */

struct cmrscl_context_s {
    cl_context context;
    cl_device_id device;
    cl_command_queue queue;
    cmrscl_device_info info;
    uint64_t memory_limit; /* 0: none */
    pthread_mutex_t lock;  /* guards the program cache */
    program_cache_entry *programs;
};

/* The context and device a command queue belongs to. */
CMRSCL_HIDDEN cmrscl_status queue_owner(cl_command_queue queue, cl_context *context,
                                        cl_device_id *device);

/* ---- matrix.c / spmv.c ---- */

/* The device arrays of a matrix, in the order of the kernel arguments that take them. */
enum {
    BUF_STRIP_PTR,
    BUF_COL_IND,
    BUF_ROW_IN_STRIP, /* unpacked layout only */
    BUF_VALUES,
    BUF_TILE_START, /* split path only, from here on */
    BUF_TILE_STRIP,
    BUF_PARTIAL,
    BUF_LONG_STRIP,
    BUF_FIRST_TILE,
    BUF_PERM, /* CMRS position -> CSR entry, for cmrscl_matrix_update_values; see matrix_update.c */
    BUF_STAGING, /* two chunks of values on their way from the host (matrix_update.c) */
    BUF_COUNT
};
CMRSCL_HIDDEN extern const char *const matrix_buffer_names[BUF_COUNT];

/* An array of entry indices as the device holds them: narrowed in place to uint32_t when
 * index_bits is 32 (the values fit: the plan chose the width), else left as it is.
 * Returns a. */
CMRSCL_HIDDEN void *index_narrow(uint64_t *a, size_t n, int index_bits);
/* StripPtr back from the device (strips + 1 entries), widened to 64 bits, the kernels'
 * long-strip flag dropped: each strip's first entry. */
CMRSCL_HIDDEN cmrscl_status matrix_read_strip_ptr(cmrscl_matrix m, uint64_t *out);
/* Fails with the sizes when arrays of these byte counts cannot fit the device: one above
 * CL_DEVICE_MAX_MEM_ALLOC_SIZE, all above CL_DEVICE_GLOBAL_MEM_SIZE, or either above the
 * context's memory limit. */
CMRSCL_HIDDEN cmrscl_status matrix_check_device_memory(cmrscl_context ctx,
                                                       const size_t bytes[BUF_COUNT]);

struct cmrscl_matrix_s {
    cmrscl_context ctx;
    cmrscl_params params;
    cl_mem buf[BUF_COUNT];
    cl_kernel kernel;  /* the family's cmrs_spmv */
    cl_kernel combine; /* cmrs_combine, when strips are split */
    size_t strip_groups, tile_groups;
    size_t first_tile_group; /* the tiles' groups come first (0) or after the strips' */
    pthread_mutex_t lock;    /* serialises clSetKernelArg + enqueue */
    /* Values-only updates (matrix_update.c), under lock: BUF_PERM is still to be built from
     * the CMRS arrays (column-ordered strips of rows with sorted columns); the gather kernels
     * by the precision of the values read (float, double), made on first use. */
    bool perm_pending;
    cl_kernel update[2];
    /* Updates from the host: chunk c is CSR entries update_cut[c]..update_cut[c+1]-1 (whole
     * strips), staged through two slots of update_slot values in BUF_STAGING. */
    size_t *update_cut, update_chunks, update_slot;
    /* MODULO (holes between the entries): update_csr[c] is the CSR entry where chunk c
     * starts, and strip_csr[s] (strips + 1) where strip s does; NULL otherwise. */
    size_t *update_csr;
    uint64_t *strip_csr;
};

/* Entries per chunk of an update from the host (tests make it small to get many chunks). */
CMRSCL_HIDDEN extern size_t matrix_update_chunk;

/* The steps of creating a matrix that the host path (matrix.c) and the device path
 * (matrix_device.c) share, in order. A matrix of ctx with its lock, nothing else yet. */
CMRSCL_HIDDEN cmrscl_status matrix_new(cmrscl_context ctx, cmrscl_matrix *out);
/* The plan from the matrix's facts (the tuning database's plan for the matrix's class when
 * every option is automatic, else plan_choose), the split of long strips into *sp and
 * each array's device bytes (BUF_PERM: 0), for matrix_check_device_memory next: fills
 * m->params (but the timings), m->strip_groups and m->tile_groups. Without a->row_ptr, a
 * plan that splits (or whose strips the table of a->longest_strip does not cover) sets
 * *need_row_ptr and stops: the caller fetches RowPtr and plans again. */
CMRSCL_HIDDEN cmrscl_status matrix_plan(cmrscl_matrix m, cmrscl_precision precision,
                                        const plan_matrix *a, const cmrscl_options *opt,
                                        split_layout *sp, size_t bytes[BUF_COUNT],
                                        bool *need_row_ptr);
/* Creates the buffers with bytes[i] > 0, filled from host[i], or, where host[i] is NULL,
 * left for kernels to write; adds their sizes to device_bytes. */
CMRSCL_HIDDEN cmrscl_status matrix_upload_buffers(cmrscl_matrix m, void *const host[BUF_COUNT],
                                                  const size_t bytes[BUF_COUNT]);
/* The family's kernels from the context's program cache, the matrix arguments set. */
CMRSCL_HIDDEN cmrscl_status matrix_create_kernels(cmrscl_matrix m);
/* A caller's buffer (spmv.c): of this OpenCL context, holding at least `need` bytes
 * (nothing is checked when need is 0). */
CMRSCL_HIDDEN cmrscl_status buffer_check(cl_context context, cl_mem buf, size_t need,
                                         const char *name);

/* Enqueues one product (one or two kernels) after the wait list; *first and *last (may be
 * NULL) receive the events of its first and last kernel (the same event when it has one;
 * each retained for the caller). The caller holds m->lock. */
CMRSCL_HIDDEN cmrscl_status spmv_enqueue(cmrscl_matrix m, double alpha, cl_mem x, double beta,
                                         cl_mem y, cl_command_queue queue, cl_uint num_wait,
                                         const cl_event *wait_list, cl_event *first,
                                         cl_event *last);

#endif /* CMRSCL_INTERNAL_H */
