/* cmrscl.h - the whole public API of libcmrscl: sparse matrix-vector products
 * y = alpha*A*x + beta*y in the CMRS format (Koza et al., SIAM J. Sci. Comput. 2014)
 * on any OpenCL 1.2 device, with kernels JIT-compiled for the device. The host half
 * (version, status codes, host CSR and CMRS, Matrix Market) is in cmrscl_host.h, included
 * here; this file adds devices, contexts, device matrices and products, and includes
 * cmrscl_products.h (recorded, transposed and block products), cmrscl_tune.h (the tuner and
 * the device's bandwidth and gather measurements), cmrscl_precond.h (AMG) and cmrscl_solve.h
 * (the solvers).
 *
 * Data flow: Matrix Market file -> CSR -> CMRS -> device parameters -> JIT -> launch.
 *
 * Conventions
 * - Every function that can fail returns a cmrscl_status; CMRSCL_OK is 0 and errors are
 *   negative. cmrscl_last_error() then describes the failure (file and line for parse
 *   errors, the OpenCL code, the kernel build log).
 * - Outputs come last. On failure outputs are left zeroed/NULL, never half-built.
 * - Every *_free function accepts NULL (a no-op). Freeing the same handle twice is
 *   undefined, as with free(); free functions for structs zero the struct, so freeing
 *   the same struct twice is safe.
 * - The library never prints. Setting CMRSCL_TRACE=1 in the environment makes it write
 *   one line per failure (and per kernel build) to stderr, for debugging.
 * - Thread safety: a context or matrix may be used from several threads at once (SpMV
 *   calls on one matrix are serialised internally around argument setting and enqueue).
 *   Host structs (cmrscl_csr, cmrscl_cmrs) are plain data: share them read-only.
 * - Determinism: the same matrix, vectors, parameters and device give bit-identical y on
 *   every run: a fixed summation order (the only atomics, the last tile's combine's counts,
 *   choose which work-group adds a strip's tiles, not the order it adds them in).
 * - Limits: rows and columns are 32-bit (<= INT32_MAX); entries are counted in 64 bits
 *   and limited by memory: on the host 12 bytes each in CSR; on the device each array must
 *   fit CL_DEVICE_MAX_MEM_ALLOC_SIZE (the values take nnz x 4 or 8 bytes, the column
 *   indices nnz x 4) and all of them the device's memory, else matrix creation fails with
 *   ERROR_OUT_OF_DEVICE_MEMORY naming the array and the limit. The device indexes entries
 *   with 32 bits below 2^31 stored entries and 64 bits from there on (cmrscl_params.
 *   index_bits). The packed layout holds at most 2^(32 - row_bits) columns (else the
 *   matrix is unpacked). Larger sizes fail with ERROR_TOO_LARGE and the limit named.
 */
#ifndef CMRSCL_H
#define CMRSCL_H

#include "cmrscl_host.h"

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Devices ------------------------------------------------------------------------ */

typedef enum cmrscl_warp_source {
    CMRSCL_WARP_FROM_NV_ATTRIBUTE = 1,  /* CL_DEVICE_WARP_SIZE_NV */
    CMRSCL_WARP_FROM_AMD_ATTRIBUTE = 2, /* CL_DEVICE_WAVEFRONT_WIDTH_AMD */
    CMRSCL_WARP_FROM_PROBE = 3          /* a probe kernel's preferred work-group multiple */
} cmrscl_warp_source;

typedef struct cmrscl_device_info {
    unsigned platform_index, device_index; /* the "P:D" selector */
    char platform_name[128];
    char device_name[128];
    char device_version[96];
    char driver_version[64];
    cl_device_type type;
    unsigned compute_units;
    unsigned max_work_group_size; /* the device's, or a probe kernel's where fewer */
    uint64_t global_mem_bytes;
    uint64_t max_alloc_bytes;
    uint64_t local_mem_bytes;        /* CL_DEVICE_LOCAL_MEM_SIZE: per work-group */
    uint64_t local_mem_per_cu_bytes; /* what the HEIGHT rule assumes per compute unit */
    unsigned resident_items_per_cu;  /* work-items a compute unit keeps resident (occupancy) */
    uint64_t cache_bytes;            /* the last-level cache the plan assumes (matrices that
                                        fit it stay there) */
    const char *cache_source;        /* where cache_bytes comes from (static string) */
    unsigned warp_width;             /* the hardware's SIMD width (warp, wavefront) */
    cmrscl_warp_source warp_source;
    int fp64;         /* cl_khr_fp64 */
    int warp_shuffle; /* NVIDIA's warp shuffles (inline PTX): the SHUFFLE reduction */
    /* Sub-groups, the SUBGROUP reduction (cl/warp.cl). Each fact below was checked by a probe
     * kernel at query time: an implementation may list what it does not do. */
    int subgroups;             /* listed: cl_khr_subgroups, or OpenCL C 3.0's feature
                                  __opencl_c_subgroups (3.0 devices need not list the
                                  extension) */
    unsigned subgroup_width;   /* lanes per sub-group the plans use (consecutive work-items,
                                  checked); 0: no usable sub-groups */
    unsigned subgroup_widths;  /* the widths kernels can be fixed to, OR-ed (each a power of
                                  two: intel_reqd_sub_group_size, each checked); 0: only the
                                  compiler's own, checked on every kernel built */
    int subgroup_shuffle;      /* sub_group_shuffle(_xor) of cl_khr_subgroup_shuffle work:
                                  what the strip and segment families' sub-group path needs */
    int subgroup_relative;     /* ... and sub_group_shuffle_up/down (shuffle_relative) */
    int subgroup_apart;        /* the sub-groups of one work-group may take different paths
                                  (loops of different lengths with shuffles in them); where
                                  not (PoCL 5 runs sub-group functions as group barriers),
                                  families that need it run one sub-group per work-group */
    int subgroup_cl_c;         /* the OpenCL C version (12, 20, 30) sub-group kernels are
                                  built with; 0 without sub-groups */
    int nv_compute_capability; /* e.g. 90; 0 if not NVIDIA */
} cmrscl_device_info;

/* Every device of every platform, in "P:D" order. Free with free(). */
CMRSCL_API cmrscl_status cmrscl_devices(cmrscl_device_info **devices, size_t *count);
/* "textual" name of a device type: "gpu", "cpu", "accelerator", "other". */
CMRSCL_API const char *cmrscl_device_type_name(cl_device_type type);
CMRSCL_API const char *cmrscl_warp_source_name(cmrscl_warp_source source);

/* ---- Context ------------------------------------------------------------------------- */

typedef struct cmrscl_context_s *cmrscl_context;

/* Creates an OpenCL context and an in-order, profiling-enabled queue on the device chosen
 * by `selector`: "P:D" (platform and device index), a device type ("gpu", "cpu",
 * "accelerator"), or a case-insensitive substring of the device or platform name.
 * NULL or "" means the environment variable CMRSCL_DEVICE, and if that is unset too,
 * the first GPU, else the first device. */
CMRSCL_API cmrscl_status cmrscl_context_create(const char *selector, cmrscl_context *out);
/* Wraps the caller's context and queue (interop). Both are retained, and released by
 * cmrscl_context_free; the queue must belong to the context. */
CMRSCL_API cmrscl_status cmrscl_context_create_from_cl(cl_context context, cl_command_queue queue,
                                                       cmrscl_context *out);
/* Frees the context; matrices created in it must be freed first. */
CMRSCL_API void cmrscl_context_free(cmrscl_context ctx);
CMRSCL_API cmrscl_status cmrscl_context_device_info(cmrscl_context ctx, cmrscl_device_info *out);
/* Borrowed handles (not retained for the caller). */
CMRSCL_API cmrscl_status cmrscl_context_cl(cmrscl_context ctx, cl_context *context,
                                           cl_command_queue *queue);
/* Caps the device memory one matrix may take (0: no cap beyond the device's own limits).
 * Creating a matrix above the cap fails with ERROR_OUT_OF_DEVICE_MEMORY. */
CMRSCL_API cmrscl_status cmrscl_context_set_memory_limit(cmrscl_context ctx, uint64_t bytes);

/* ---- Device matrix ------------------------------------------------------------------- */

typedef enum cmrscl_layout {
    CMRSCL_LAYOUT_AUTO = 0,
    CMRSCL_LAYOUT_PACKED = 1,
    CMRSCL_LAYOUT_UNPACKED = 2
} cmrscl_layout;
typedef enum cmrscl_order {
    CMRSCL_ORDER_AUTO = 0,
    CMRSCL_ORDER_ROWS = 1,
    CMRSCL_ORDER_COLUMNS = 2
} cmrscl_order;
/* How the lanes of a warp work together - the backend of the warp layer (cl/warp.cl): local
 * memory with work-group barriers (any device), NVIDIA's warp shuffles (inline PTX), or
 * OpenCL sub-groups (cmrscl_device_info.subgroup_width). */
typedef enum cmrscl_reduce {
    CMRSCL_REDUCE_AUTO = 0,
    CMRSCL_REDUCE_LOCAL = 1,
    CMRSCL_REDUCE_SHUFFLE = 2,
    CMRSCL_REDUCE_SUBGROUP = 3
} cmrscl_reduce;

/* The kernel families (docs/dev/PERFORMANCE.md says where each wins):
 * - STRIP: Algorithm 1 of the paper: one warp (or a narrower group of lanes) per strip,
 *   per-lane row slots in local memory, strips optionally column-ordered. HEIGHT 1 is
 *   CSR-vector (and, with warp 1, CSR-scalar). A matrix beyond the device's cache whose
 *   strips each span fewer columns than 16 bits hold beside the row in strip and the
 *   dictionary index (65534 at HEIGHT 1, 2046 at HEIGHT 32) stores narrow columns
 *   (cmrscl_options.column_bits): 2 bytes of column an entry instead of 4.
 * - SEGMENT: row-ordered strips summed by a segmented warp scan in registers; no per-row
 *   slots, so strips can be tall (up to 256 rows): for short rows.
 * - MODULO: the paper's modified kernel (section 6.6, listing "Modified CMRS Kernel"):
 *   the lanes of a strip share MODULO x HEIGHT row slots, lane l adding into [row][l %
 *   MODULO]. The warp walks its strip in steps of WARP stored entries, synchronised between
 *   steps (barrier, bar.warp.sync or a sub-group barrier: no implicit warp synchrony), and
 *   the host lays each strip out so that within a step lanes sharing l % MODULO never hold
 *   the same row, inserting holes (entries that read nothing and add nothing, so an Inf or
 *   NaN in x is never multiplied by a padding zero) where nothing fits: correct for any
 *   matrix. cmrscl_params.stored_entries / nnz is the padding overhead. Only on request
 *   (the automatic plan does not choose it: not yet measured on a GPU); HEIGHT 16 (the
 *   paper's) unless given; with the local reduction the work-group is one warp; long
 *   strips are never split (tile must be 0 or -1); its permutation for values updates is
 *   kept on the device from creation (index_bits / 8 bytes per stored entry);
 *   cmrscl_matrix_create_from_cl refuses it (ERROR_UNSUPPORTED: the layout is built on the
 *   host); cmrscl_matrix_read_cmrs returns its arrays with the holes dropped.
 * - SLICE: for short rows of about equal length (stencils): each strip laid out as a slice,
 *   entry i of row r at StripPtr[s] + i x HEIGHT + r, rows padded with holes to the strip's
 *   longest, and one work-item per row, so every load of the strip's lanes is coalesced and
 *   no lanes combine: no shuffles or sub-groups needed. HEIGHT (32 unless given; a power of
 *   two) rows per strip, and as many lanes - or fewer, each walking HEIGHT / warp rows side
 *   by side (cmrscl_options.warp dividing HEIGHT; 0: the plan's, one work-item a strip on
 *   CPUs, a row each on GPUs). Like
 *   MODULO it stores holes (stored_entries), never splits, is refused by
 *   cmrscl_matrix_create_from_cl and reads back without its holes; its permutation for
 *   values updates is built on the device by the first update (index_bits / 8 bytes per
 *   stored entry from then on). Where each row's column steps fit 16 bits it stores narrow
 *   columns (cmrscl_options.column_bits): 2 bytes of column an entry instead of 4. */
typedef enum cmrscl_kernel {
    CMRSCL_KERNEL_AUTO = 0,
    CMRSCL_KERNEL_STRIP = 1,
    CMRSCL_KERNEL_SEGMENT = 2,
    CMRSCL_KERNEL_MODULO = 3,
    CMRSCL_KERNEL_SLICE = 4
} cmrscl_kernel;

/* How the matrix's unknowns are numbered on the device (cmrscl_options.renumber). HUBS stores
 * P A P^T with P the hub sort: the rows longer than the mean first, by descending length (ties
 * in their order), then every other row in its order. A power-law graph's hubs - its longest
 * rows, and the entries of x that most rows gather - then lie side by side at the start of x,
 * where the device's caches keep them, and the rest of the matrix keeps its locality. Every
 * product takes and returns vectors in the caller's numbering: x is gathered into the device's
 * order and y scattered back (two short kernels beside the product: for a single product they
 * can cost more than they save, docs/dev/PERFORMANCE.md, RENUMBER). A solver runs in the
 * device's order throughout (b and x0 gathered into two vectors of its own, x scattered back at
 * the end; an AMG preconditioner, built in the caller's numbering, is applied through the same
 * two kernels and two more vectors), so its iterations pay nothing for it; a monitor's x is
 * written only at the end. Square matrices, created from host arrays. Not available
 * with a renumbered matrix (ERROR_UNSUPPORTED): the block product (cmrscl_spmm), recorded
 * products, values updates from a cl_mem. cmrscl_matrix_read_cmrs returns P A P^T's arrays.
 * AUTO: none - the order measured faster on R-MAT graphs and slower on other matrices with long
 * rows, and no rule yet tells them apart. */
typedef enum cmrscl_renumber {
    CMRSCL_RENUMBER_AUTO = 0,
    CMRSCL_RENUMBER_NONE = 1,
    CMRSCL_RENUMBER_HUBS = 2
} cmrscl_renumber;

/* NVIDIA: load the matrix arrays with an evict-first hint so that x stays in L2. */
typedef enum cmrscl_cache_hint {
    CMRSCL_CACHE_HINT_AUTO = 0,
    CMRSCL_CACHE_HINT_OFF = 1,
    CMRSCL_CACHE_HINT_STREAM = 2
} cmrscl_cache_hint;

/* Where the tiles of a split long strip are added up (cmrscl_options.tile):
 *   KERNEL  by a second kernel, cmrs_combine;
 *   GROUP   by the work-group that summed them - the plan then places all tiles of a long
 *           strip in one work-group (growing the work-group and the tile as the longest strip
 *           needs) and the product is one kernel: one launch fewer, which is most of a small
 *           matrix's time;
 *   LAST    by the work-group that finishes a long strip's last tile, which an atomic count
 *           of the strip's tiles tells - any number of tiles, one kernel. It needs the tiles'
 *           sums visible across work-groups within a launch, which OpenCL 1.2 does not
 *           promise: NVIDIA (PTX's device-wide fence) and CPUs (coherent caches) only, and
 *           only when asked (refused elsewhere, whatever the matrix): the plan takes KERNEL
 *           or GROUP, measured as fast.
 * KERNEL and GROUP add a strip's tiles in tile order: with the same tiles, the same bits.
 * LAST adds them in a fixed order of its own (work-items take tiles in turn, then the rows'
 * shares in order): the same bits run after run, not always those of the other two. Its
 * counts must start each product at 0: an interrupted product, or two of one matrix run at
 * the same time (which cmrscl_spmv forbids), leave them wrong for every later product. */
typedef enum cmrscl_combine {
    CMRSCL_COMBINE_AUTO = 0,
    CMRSCL_COMBINE_KERNEL = 1,
    CMRSCL_COMBINE_GROUP = 2,
    CMRSCL_COMBINE_LAST = 3
} cmrscl_combine;

/* How the device stores the matrix's values (cmrscl_options.values). Every codec is exact:
 * the kernels multiply the same values in the same order, so a product is bit-identical
 * to the plain one. AUTO looks at the values (in the matrix's precision) when the matrix is
 * created from host arrays and takes the smallest codec that holds them:
 * - DICT: at most CMRSCL_MAX_DICT distinct values (stencils, many FEM and graph matrices,
 *   pattern matrices): a dictionary of them on the device and, per entry, its index in
 *   dict_bits bits of the column word, beside the row in strip - no value array at all
 *   (0 bits for a single value). Needs the columns to leave those bits free.
 * - DIAGONAL: more distinct values than that, but at most CMRSCL_MAX_DICT - 1 off the
 *   diagonal (graph Laplacians, whose -1s sit beside the degrees; stencils and FEM matrices
 *   with a varying diagonal - a shift, a mass term, a time step): the dictionary of those,
 *   each entry's index in its column word, and the diagonal in an array of its own that the
 *   diagonal's entries (the dictionary's last index) read at their column - 8 or 4 bytes a
 *   row instead of a value an entry. Needs at most one entry on the diagonal a row, and
 *   AUTO takes it where that array is smaller than the values FLOAT or PLAIN would store.
 * - FLOAT: double values that are all exactly floats: stored as floats, widened in the
 *   kernel (4 bytes an entry instead of 8).
 * - PLAIN: the values in the matrix's precision, one per entry.
 * The MODULO kernel and matrices made on the device (cmrscl_matrix_create_from_cl) keep
 * PLAIN. The first values update of a DICT, DIAGONAL or FLOAT matrix stores its values plain from
 * then on (the columns lose their dictionary bits; the kernels are rebuilt): updated values are not
 * examined again. cmrscl_matrix_read_cmrs returns the plain arrays whatever the codec. */
typedef enum cmrscl_values {
    CMRSCL_VALUES_AUTO = 0,
    CMRSCL_VALUES_PLAIN = 1,
    CMRSCL_VALUES_FLOAT = 2,
    CMRSCL_VALUES_DICT = 3,
    CMRSCL_VALUES_DIAGONAL = 4
} cmrscl_values;
#define CMRSCL_MAX_DICT 16 /* values a dictionary holds (4 bits an entry) */

/* A kernel variant: a family on a backend of the warp layer ("strip/subgroup"). The library
 * keeps a table of them in the order its plan prefers them; the tuner, the tests and
 * cmrscl-run iterate over it. */
typedef struct cmrscl_variant {
    const char *name;      /* "family/reduction" */
    const char *family;    /* "strip", "segment", "modulo", "slice" */
    const char *reduction; /* "shuffle", "subgroup", "local" */
    cmrscl_kernel kernel;  /* never AUTO */
    cmrscl_reduce reduce;  /* never AUTO */
    const char *file;      /* the family's kernel source in cl/ */
} cmrscl_variant;

CMRSCL_API size_t cmrscl_variant_count(void);
/* Variant `index` (0 .. count - 1) of the table, static; NULL past its end. */
CMRSCL_API const cmrscl_variant *cmrscl_variant_get(size_t index);
/* CMRSCL_OK when the device has what the variant needs, else ERROR_UNSUPPORTED with what it
 * lacks in cmrscl_last_error(). */
CMRSCL_API cmrscl_status cmrscl_variant_check(const cmrscl_device_info *dev,
                                              const cmrscl_variant *variant);

/* Zero-initialised options mean "choose for me" everywhere; NULL is the same. Fields left
 * at 0 are chosen by the plan (host/plan/plan.c) from the device and the matrix. */
typedef struct cmrscl_options {
    int height;          /* strip height, 1..CMRSCL_MAX_HEIGHT; 0: the plan's */
    int warp;            /* work-items per strip (power of two); 0: the plan's */
    int work_group_size; /* multiple of warp; 0: the plan's (128, paper sec. 6.3) */
    cmrscl_layout layout;
    cmrscl_order order;
    cmrscl_reduce reduce;
    cmrscl_kernel kernel;
    /* Long strips: a strip of more than 2 * tile entries is split into tiles of `tile`
     * entries, each summed by its own warp, and the tiles' sums are combined in a fixed
     * order (by a second kernel or in a work-group: `combine`). 0: automatic (from the
     * device's resident warps); -1: never split. The in-group combine takes at least the
     * tile that cuts the longest strip into one work-group's warps. */
    int tile;
    int modulo; /* MODULO kernel: 2, 4, 8, 16 or 32 row slot sets per strip, dividing the
                   warp; 0: 8, or the warp when narrower. Other kernels: must be 0 */
    cmrscl_cache_hint cache_hint;
    int lane_entries; /* segment kernel: consecutive entries per lane, 1, 2 or 4; 0: 4 */
    /* Bits of the device's entry indices (StripPtr, the tiles' first entries, the kernels'
     * entry counters): 0 automatic - 32 unless the matrix stores 2^31 entries or more (or
     * its split path as many partial sums), then 64; 32 or 64 forces a width (32 fails with
     * ERROR_TOO_LARGE on a matrix that needs 64; 64 runs any matrix, as tests do). */
    int index_bits;
    cmrscl_combine combine; /* split path: where the tiles are added up; AUTO: the plan's */
    cmrscl_values values;   /* how the values are stored (cmrscl_values); AUTO: the plan's.
                               DICT, DIAGONAL or FLOAT on values that do not fit fails with
                               ERROR_INVALID_ARGUMENT, saying why */
    /* Bits of a column word on the device: 0 automatic; 32 a word per entry; 16 narrow
     * columns - each strip's first column once, then per entry 16 bits: in a slice the step
     * from the column before in its row (and its dictionary index); in a strip the offset
     * from the strip's first column (its dictionary index and row in strip beside it). For
     * banded rows, dense rows and small matrices, half the column bytes. A slice's step too
     * long for its word takes a jump word before it (cmrscl_params.column_jumps). Automatic
     * takes 16 for every slice whose steps fit (host arrays with sorted rows), or need jump
     * words for at most an eighth of its entries, and for every strip layout whose offsets fit
     * and whose entries exceed the device's cache (cache-resident, they measured slower; none
     * where the device reports no cache size); 16 fails with ERROR_INVALID_ARGUMENT where they
     * do not fit (a slice's step beyond what a jump reaches: about 2^26 columns), or with the
     * segment and MODULO kernels. The
     * first values update keeps them (cmrscl_matrix_read_cmrs returns the 32-bit words).
     * CMRSCL_COLUMNS_IMPLIED: no column word at all - strips of one row (HEIGHT 1, the strip
     * kernel) whose columns are one ascending run (dense rows, full bands) store each strip's
     * first column alone, and entry k of a strip is that column plus k; values stored plain,
     * as floats or as a dictionary of one. Automatic takes them wherever they fit and the
     * strip layout would take narrow columns; asked for where they do not fit, they fail with
     * ERROR_INVALID_ARGUMENT. */
    int column_bits;
    /* The block width the matrix will mostly be multiplied by (cmrscl_spmm's k); 0 or 1: single
     * products. From CMRSCL_BLOCK_PLAN_VECTORS on, on GPUs: short scattered rows take strips
     * of 8 rows, not the segmented scan (blocks 1.1-1.8x faster, single products up to 1.25x
     * slower), float slices are not streamed past L2 (blocks 1.03-1.13x faster;
     * docs/dev/PERFORMANCE.md), and the tuning database (single products) is not consulted.
     * Any width runs on any plan; negative fails with ERROR_INVALID_ARGUMENT. */
    int vectors;
    cmrscl_renumber renumber; /* the unknowns' numbering on the device (cmrscl_renumber) */
} cmrscl_options;

/* cmrscl_options.vectors from which the plan lays the matrix out for blocks. */
#define CMRSCL_BLOCK_PLAN_VECTORS 8

/* cmrscl_options.column_bits: implied columns (cmrscl_params.column_bits 0). */
#define CMRSCL_COLUMNS_IMPLIED (-1)

/* Cheap statistics of the matrix's rows, taken when a matrix is created (O(rows)). */
typedef struct cmrscl_matrix_stats {
    double mu;          /* mean row length, nnz / rows */
    double row_cv;      /* spread: standard deviation of the row lengths / mu */
    int32_t max_row;    /* the longest row */
    int32_t empty_rows; /* rows without entries */
    double col_spread;  /* how far x is gathered from: the mean |column - diagonal| / cols
                           over a sample of entries; 0 banded, about 1/3 scattered */
} cmrscl_matrix_stats;

/* The statistics the plan looks at (O(rows), plus a bounded sample of the entries); also
 * for reports. */
CMRSCL_API cmrscl_status cmrscl_csr_stats(const cmrscl_csr *csr, cmrscl_matrix_stats *out);

/* Where a matrix's kernels came from when it was created. */
typedef enum cmrscl_program_source {
    CMRSCL_PROGRAM_CONTEXT, /* already built in this context */
    CMRSCL_PROGRAM_JIT,     /* compiled from source now */
    CMRSCL_PROGRAM_DISK     /* loaded from the on-disk program cache */
} cmrscl_program_source;

/* The plan a matrix was built with: the kernel family, its parameters and why.
 * A versioned view: fields are only ever added at its end, and struct_size says how much of
 * it the caller knows. Set struct_size to sizeof(cmrscl_params) before a call that fills one
 * (cmrscl_plan, cmrscl_matrix_params, cmrscl_matrix_prepare_transpose; CMRSCL_PARAMS_INIT
 * does it): the library then writes that many bytes and no more, so a program or a binding
 * (Python's mirror) built against an older header keeps working with a newer library, and
 * reads its fields where they always were. 0 (a zeroed struct) means the first version's
 * size. The call sets struct_size to the bytes it filled (zeros where the call failed); a
 * NULL argument or a size below the first version's fails with CMRSCL_ERROR_INVALID_ARGUMENT
 * and writes nothing. */
typedef struct cmrscl_params {
    size_t struct_size;
    cmrscl_precision precision;
    int height, warp, work_group_size;
    cmrscl_layout layout;      /* never AUTO */
    cmrscl_order order;        /* never AUTO */
    cmrscl_reduce reduce;      /* never AUTO */
    const char *height_source; /* where the plan came from: "user", "matrix rule", "paper", "device
                                  rule", "tuned", "tuning database" (static string) */
    char build_options[384];   /* the -D string the kernels were compiled with (whole: a plan
                                  whose string would not fit fails) */
    int32_t rows, cols, strips;
    int64_t nnz;
    uint64_t device_bytes; /* device memory the matrix occupies */
    /* Set-up, step by step (seconds): row statistics and the plan; CSR -> CMRS arrays
     * (host or device); creating and filling the device buffers; the program: 0 when the
     * context had it, else a JIT build or a load from the on-disk program cache. */
    double analyze_seconds;
    double convert_seconds;
    double upload_seconds;
    double build_seconds;
    cmrscl_program_source program_source; /* where the program came from */
    cmrscl_kernel kernel;                 /* never AUTO */
    int row_bits;                         /* packed layout: bits of the row in strip */
    int modulo;                           /* MODULO kernel: row slot sets per strip; else 0 */
    int lane_entries;                     /* segment kernel: consecutive entries per lane; else 0 */
    cmrscl_cache_hint cache_hint;         /* never AUTO */
    int32_t tile;                         /* split: entries per tile; 0 when no strip is split */
    int32_t tiles, long_strips;           /* split: tiles (GROUP: with the slots that pad
                                             work-groups), and the strips they cover */
    cmrscl_combine combine;               /* split: KERNEL, GROUP or LAST; AUTO when nothing
                                             splits */
    int64_t stored_entries; /* entries on the device: nnz plus the holes of MODULO and slices
                               (stored_entries / nnz: the padding overhead) */
    int index_bits;         /* 32 or 64: the device's entry indices (cmrscl_options.index_bits) */
    cmrscl_values values;   /* how the values are stored; never AUTO */
    int dict_bits;          /* DICT, DIAGONAL: bits of the dictionary index in each column word */
    int dict_size;          /* DICT: distinct values in the dictionary; DIAGONAL: those off
                               the diagonal (its last index, 2^dict_bits - 1, is the
                               diagonal's); else 0 */
    int column_bits;        /* 32; 16: narrow columns; 0: implied (cmrscl_options.column_bits) */
    /* Bytes a product moves per entry (nnz), at the least: the matrix's arrays (every array
     * a product reads, entry arrays, StripPtr, the split's; MODULO's holes included), x
     * (each element once) and y (each element written once; read once more when beta is
     * not 0). Their sum over the device's bandwidth bounds the product's time. */
    double bytes_per_entry_matrix, bytes_per_entry_x, bytes_per_entry_y;
    cmrscl_matrix_stats stats; /* what the plan looked at */
    char plan_reason[512];     /* the rule's reason for this plan, in words */
    /* Device memory of the kept transpose (cmrscl_matrix_prepare_transpose): 0 while none
     * is built; not part of device_bytes. */
    uint64_t transpose_device_bytes;
    /* The block product (cmrscl_spmm): vectors one launch takes at most, each launch reading
     * the matrix once - 64, or in the slice layout 128 bytes of X a row (32 floats, 16
     * doubles), which measured faster there on an H100 (docs/dev/PERFORMANCE.md). */
    int block_vectors;
    /* Slices with narrow columns (column_bits 16): the jump words stored, one before each
     * step too long for an entry's 16-bit word (counted in stored_entries; 0: none). */
    int64_t column_jumps;
    cmrscl_renumber renumber; /* NONE or HUBS: how the device numbers the unknowns */
} cmrscl_params;
/* A cmrscl_params ready to be filled: `cmrscl_params p = CMRSCL_PARAMS_INIT;` */
#ifdef __cplusplus /* designated initialisers: C++20 on */
#define CMRSCL_PARAMS_INIT                                                                         \
    {                                                                                              \
        sizeof(cmrscl_params)                                                                      \
    }
#else
#define CMRSCL_PARAMS_INIT                                                                         \
    {                                                                                              \
        .struct_size = sizeof(cmrscl_params)                                                       \
    }
#endif
/* The first version's size: the fields up to column_jumps (a caller never knows fewer). */
#define CMRSCL_PARAMS_SIZE_V1 (offsetof(cmrscl_params, column_jumps) + sizeof(int64_t))

typedef struct cmrscl_matrix_s *cmrscl_matrix;

/* The plan cmrscl_matrix_create would make for this matrix on this device - the variant, its
 * parameters, the -D string and the reason - without a context or any device buffer: a plain
 * struct to inspect or test. `dev` comes from cmrscl_devices or cmrscl_context_device_info, or
 * is filled by hand to ask about another device. The tuning database is consulted as
 * cmrscl_matrix_create does. The sizes are the matrix's (rows .. tiles, stored_entries); the
 * timings and device_bytes stay 0. One difference is possible: where a device's compiler picks
 * its kernels' sub-group width itself (subgroup_widths 0), cmrscl_matrix_create checks the
 * built kernel and takes the local reduction when the width differs (plan_reason says so). */
CMRSCL_API cmrscl_status cmrscl_plan(const cmrscl_device_info *dev, cmrscl_precision precision,
                                     const cmrscl_csr *csr, const cmrscl_options *opt,
                                     cmrscl_params *out);

/* Copies a host CSR matrix (validity rules of cmrscl_csr) to the device as CMRS.
 * `values` points to float or double according to `precision`; nnz = row_ptr[rows].
 * Double on a device without fp64 fails with ERROR_UNSUPPORTED. opt may be NULL. The
 * 32-bit row pointers are widened to 64 bits first (O(rows), freed before the call
 * returns): one conversion path serves every size. */
CMRSCL_API cmrscl_status cmrscl_matrix_create(cmrscl_context ctx, cmrscl_precision precision,
                                              int32_t rows, int32_t cols, const int32_t *row_ptr,
                                              const int32_t *col_ind, const void *values,
                                              const cmrscl_options *opt, cmrscl_matrix *out);
/* The same with 64-bit row pointers (the form of cmrscl_csr), for matrices of INT32_MAX
 * entries or more; the same arrays give the same matrix as cmrscl_matrix_create. */
CMRSCL_API cmrscl_status cmrscl_matrix_create_i64(cmrscl_context ctx, cmrscl_precision precision,
                                                  int32_t rows, int32_t cols,
                                                  const int64_t *row_ptr, const int32_t *col_ind,
                                                  const void *values, const cmrscl_options *opt,
                                                  cmrscl_matrix *out);
/* The same from a cmrscl_csr (double values, rounded to float for CMRSCL_FLOAT). */
CMRSCL_API cmrscl_status cmrscl_matrix_create_from_csr(cmrscl_context ctx,
                                                       cmrscl_precision precision,
                                                       const cmrscl_csr *csr,
                                                       const cmrscl_options *opt,
                                                       cmrscl_matrix *out);
/* The same from a CSR matrix whose arrays already live in buffers of the context's
 * cl_context (codes that assemble on the device): int32 row_ptr[rows + 1], int32
 * col_ind[nnz] and values[nnz] of `precision`; the int32 row pointers limit it to nnz <=
 * INT32_MAX (larger matrices come from the host: cmrscl_matrix_create_i64). Kernels convert it on
 * the device: only row_ptr and a bounded sample of columns (the statistics) come back to the host,
 * and the result is the matrix cmrscl_matrix_create builds from the same arrays, bit for bit (plan,
 * parameters, cmrscl_matrix_read_cmrs). The CSR must be canonical: row_ptr[0] = 0,
 * non-decreasing, row_ptr[rows] = nnz, and the columns of each row strictly ascending in
 * 0..cols-1 (no duplicates); a kernel checks it first, and ERROR_INVALID_MATRIX names the
 * first offending row or entry. Buffers smaller than these sizes fail with
 * ERROR_INVALID_ARGUMENT, buffers of another cl_context with ERROR_CONTEXT_MISMATCH;
 * col_ind and values may be NULL when nnz = 0. The buffers are borrowed: read on the
 * context's queue after the commands enqueued there before (finish writing them on other
 * queues first), and not used after the call returns. opt may be NULL. */
CMRSCL_API cmrscl_status cmrscl_matrix_create_from_cl(
    cmrscl_context ctx, cmrscl_precision precision, int32_t rows, int32_t cols, int32_t nnz,
    cl_mem row_ptr, cl_mem col_ind, cl_mem values, const cmrscl_options *opt, cmrscl_matrix *out);
/* Values-only update of a matrix whose pattern is unchanged: `values` holds nnz values of
 * values_precision in the ORIGINAL CSR order (that of the create call), and the device
 * values are rewritten in place (converted between float and double as needed): no
 * analysis, no conversion of indices, no upload of indices. The host array is copied to
 * the device once and may be reused when the call returns. The update is enqueued on the
 * context's queue, ordered with the products enqueued there before and after it (from any
 * thread); products on other queues must be ordered by the caller. The first update of a
 * column-ordered matrix builds, on the device, the map from CMRS positions to CSR entries
 * and keeps it (index_bits / 8 bytes per entry, counted in cmrscl_params.device_bytes).
 * Double values on a device without fp64 are rounded on the host. */
CMRSCL_API cmrscl_status cmrscl_matrix_update_values(cmrscl_matrix m, const void *values,
                                                     cmrscl_precision values_precision);
/* The same from a buffer of the matrix's cl_context holding nnz values (CSR order, written
 * by commands on the context's queue or finished before): the gather is enqueued and the
 * call returns; leave the buffer unchanged until a later command on that queue has run
 * (a product, a read, clFinish). Double values need fp64 (ERROR_UNSUPPORTED otherwise). */
CMRSCL_API cmrscl_status cmrscl_matrix_update_values_cl(cmrscl_matrix m, cl_mem values,
                                                        cmrscl_precision values_precision);
CMRSCL_API void cmrscl_matrix_free(cmrscl_matrix m);
CMRSCL_API cmrscl_status cmrscl_matrix_params(cmrscl_matrix m, cmrscl_params *out);
/* Reads the device's CMRS arrays back into a new host struct (values as double). */
CMRSCL_API cmrscl_status cmrscl_matrix_read_cmrs(cmrscl_matrix m, cmrscl_cmrs *out);

/* y = alpha*A*x + beta*y on device buffers of the matrix's precision, with at least cols
 * and rows elements. Enqueued on `queue` (NULL: the context's queue; another queue must
 * belong to the same context and device) after the wait list; returns without waiting.
 * `event` (may be NULL) receives an event for the product, retained for the caller.
 * When beta == 0, y is not read. x and y must not overlap. Products of one matrix must not
 * run on the device at the same time (on two queues, or an out-of-order one, without an
 * event between them): a matrix with long strips (cmrscl_params.long_strips) keeps its
 * tiles' partial sums in one buffer of its own (with the last tile's combine, the counts
 * every later product relies on too), and a renumbered one (cmrscl_renumber) the vectors its
 * products work in. */
CMRSCL_API cmrscl_status cmrscl_spmv(cmrscl_matrix m, double alpha, cl_mem x, double beta, cl_mem y,
                                     cl_command_queue queue, cl_uint num_wait,
                                     const cl_event *wait_list, cl_event *event);
/* The same on host arrays (float or double as the matrix); blocks until y is written. */
CMRSCL_API cmrscl_status cmrscl_spmv_host(cmrscl_matrix m, double alpha, const void *x, double beta,
                                          void *y);

/* Timings of one matrix's product, two ways (what a benchmark and the tuner report). */
typedef struct cmrscl_timing {
    int warmup, repetitions;
    /* Device time per product from OpenCL profiling events: start of its first kernel to
     * end of its last (two where the split path's second kernel combines), median and
     * minimum over the repetitions. */
    double median_ms, min_ms;
    /* Host time per product of `repetitions` products enqueued back to back and waited for
     * once: what a solver loop sees, launch overhead included. */
    double loop_ms;
} cmrscl_timing;

/* Runs `warmup` untimed products, then times `repetitions` products each way, on the
 * context's queue (it must have profiling enabled: contexts made by cmrscl_context_create
 * have). y is overwritten with alpha*A*x + beta*y repeatedly, so pass beta = 0 to keep it
 * meaningful. */
CMRSCL_API cmrscl_status cmrscl_spmv_time(cmrscl_matrix m, double alpha, cl_mem x, double beta,
                                          cl_mem y, int warmup, int repetitions,
                                          cmrscl_timing *out);

#ifdef __cplusplus
}
#endif
#include "cmrscl_products.h" /* recorded, transposed and block products of a matrix */
#include "cmrscl_tune.h"     /* the tuner and the device measurements, on these types */
#include "cmrscl_precond.h"  /* preconditioners on the device: AMG */
#include "cmrscl_solve.h"    /* Krylov solvers on the device, above the products */
#endif                       /* CMRSCL_H */
