/* exec.h - the execution stage: a device matrix - made by one pipeline (matrix.c; CSR already
 * on the device: matrix_device.c, convert_launch.c), its arrays, kernels and lifetime
 * (matrix_arrays.c), its values updates (matrix_update.c), its products (product.c, launched
 * by spmv.c and spmm.c; A^T: transpose.c) - and what measures on the device: tuning (tune.c)
 * and bandwidth (bandwidth.c). */
#ifndef CMRSCL_EXEC_H
#define CMRSCL_EXEC_H

#include "format/format.h"
#include "plan/plan.h"
#include "runtime/runtime.h"

/* ---- matrix.c, matrix_arrays.c ---- */

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
CMRSCL_HIDDEN extern const char *const cmrs_matrix_buffer_names[BUF_COUNT];

/* An array of entry indices as the device holds them: narrowed in place to uint32_t when
 * index_bits is 32 (the values fit: the plan chose the width), else left as it is.
 * Returns a. */
CMRSCL_HIDDEN void *cmrs_index_narrow(uint64_t *a, size_t n, int index_bits);
/* StripPtr back from the device (strips + 1 entries), widened to 64 bits, the kernels'
 * long-strip flag dropped: each strip's first entry. */
CMRSCL_HIDDEN cmrscl_status cmrs_matrix_read_strip_ptr(cmrscl_matrix m, uint64_t *out);
/* Device bytes of the values buffer for `stored` entries, as the plan stores them: one per
 * entry (and the padding), or the dictionary. */
CMRSCL_HIDDEN size_t cmrs_matrix_values_bytes(const cmrscl_params *p, size_t stored);
/* Device bytes of the column words for `stored` positions: 4 each, or narrow columns
 * (host/format/cmrs_narrow.c). */
CMRSCL_HIDDEN size_t cmrs_matrix_column_bytes(const cmrscl_params *p, size_t stored);
/* Device bytes of each array, from the plan and the split (BUF_PERM: 0). */
CMRSCL_HIDDEN void cmrs_matrix_device_sizes(const cmrscl_params *p, const split_layout *sp,
                                            size_t bytes[BUF_COUNT]);
/* Fails with the sizes when arrays of these byte counts cannot fit the device: one above
 * CL_DEVICE_MAX_MEM_ALLOC_SIZE, all above CL_DEVICE_GLOBAL_MEM_SIZE, or either above the
 * context's memory limit. */
CMRSCL_HIDDEN cmrscl_status cmrs_matrix_check_device_memory(cmrscl_context ctx,
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
    unsigned kernels_made;   /* counts cmrs_matrix_create_kernels: a recording of older kernels
                                records again (recording.c) */
    /* What the updates, the transposed product and the block product keep: each defined, made
     * (on first need) and read in its file alone, and released with the matrix through the
     * matrix_part_release its file put first in it. */
    struct values_update *update;    /* matrix_update.c, under lock; NULL until an update */
    struct transposed *transposed;   /* transpose.c: the pointer under lock, the rest under its
                                        own; NULL until a transposed product or a prepare */
    struct spmm_state *spmm;         /* spmm.c, under lock; NULL until the first block launch */
    struct renumbering *renumbering; /* matrix_renumber.c: NULL unless the unknowns are
                                        renumbered (cmrscl_renumber), made with the matrix */
    unsigned values_version; /* counts values updates (solvers' Jacobi diagonal, host/solve/) */
};

/* The first member of each part of a matrix (above): frees the part and sets its pointer
 * to NULL. */
typedef void (*matrix_part_release)(cmrscl_matrix m);
/* The first member of the transposed part (transpose.c): its release, then what a values
 * update (matrix_update.c) calls to drop A^T - through the record, not a call into
 * transpose.c, because transpose.c builds A^T through matrix.c, which makes the update part:
 * a call from matrix_update.c into transpose.c would close that circle of files. */
typedef struct transposed_head {
    matrix_part_release release;
    matrix_part_release outdated; /* A^T (if built) freed, built again on next need */
} transposed_head;

/* cmrscl_matrix_create_from_cl's matrix, at the plan's defaults, from a CSR on the device whose
 * values are doubles whatever `precision` is (rounded to float there for CMRSCL_FLOAT, as the
 * host path rounds them): AMG's operators made where its Galerkin products left them. */
CMRSCL_HIDDEN cmrscl_status cmrs_matrix_create_from_doubles_cl(
    cmrscl_context ctx, cmrscl_precision precision, int32_t rows, int32_t cols, int32_t nnz,
    cl_mem row_ptr, cl_mem col_ind, cl_mem values, cmrscl_matrix *out);
/* Entries per chunk of an update from the host (tests make it small to get many chunks). */
CMRSCL_HIDDEN extern size_t cmrs_matrix_update_chunk;

/* The steps of creating a matrix that the host path (matrix.c) and the device path
 * (matrix_device.c) share, in order. A matrix of ctx with its lock, nothing else yet. */
CMRSCL_HIDDEN cmrscl_status cmrs_matrix_new(cmrscl_context ctx, cmrscl_matrix *out);
/* The plan from the matrix's facts (cmrs_plan_for_matrix) into m->params (but the timings);
 * a sub-group plan's kernel is built to confirm the width the compiler gave it, the planner's
 * fallback planned where it differs. Planned once: without a->row_ptr (the device path) the
 * planner fetches RowPtr through a->fetch_row_ptr where a rule needs it. */
CMRSCL_HIDDEN cmrscl_status cmrs_matrix_plan(cmrscl_matrix m, cmrscl_precision precision,
                                             const plan_matrix *a, const cmrscl_options *opt);
/* The plan's split of long strips into *sp (a->row_ptr needed where the plan splits), its
 * sizes and launch groups, and each array's device bytes (BUF_PERM: 0), for
 * cmrs_matrix_check_device_memory next. */
CMRSCL_HIDDEN cmrscl_status cmrs_matrix_layout(cmrscl_matrix m, const plan_matrix *a,
                                               split_layout *sp, size_t bytes[BUF_COUNT]);
/* Creates the buffers with bytes[i] > 0, filled from host[i], or, where host[i] is NULL,
 * left for kernels to write; adds their sizes to device_bytes. */
CMRSCL_HIDDEN cmrscl_status cmrs_matrix_upload_buffers(cmrscl_matrix m, void *const host[BUF_COUNT],
                                                       const size_t bytes[BUF_COUNT]);
/* The family's kernels from the context's program cache, the matrix arguments set. */
CMRSCL_HIDDEN cmrscl_status cmrs_matrix_create_kernels(cmrscl_matrix m);
/* Whether a kernel of the matrix's program runs fewer work-items per group than its plan
 * chose (the error set); false where it runs the plan's. */
CMRSCL_HIDDEN bool cmrs_matrix_kernel_limits(cmrscl_matrix m, cl_kernel kernel);
/* The matrix's arguments (sizes, then its buffers) set on a cmrs_spmv kernel of its program
 * and on its cmrs_combine (may be NULL). */
CMRSCL_HIDDEN cmrscl_status cmrs_matrix_kernel_args(cmrscl_matrix m, cl_kernel kernel,
                                                    cl_kernel combine);

/* ---- matrix_update.c ---- */

/* What creation leaves for values updates: whether BUF_PERM is still to be built from the
 * CMRS arrays by the first update, and for layouts with holes each strip's first CSR entry
 * (strips + 1, NULL otherwise: taken over, freed with the matrix - also on failure). */
CMRSCL_HIDDEN cmrscl_status cmrs_update_prepare(cmrscl_matrix m, bool perm_pending,
                                                uint64_t *strip_csr);

/* What creation left `from` for values updates, the same for `to`, made from its arrays
 * (matrix_twin.c): the permutation still to build or not, the strips' first CSR entries
 * copied. */
CMRSCL_HIDDEN cmrscl_status cmrs_update_share(cmrscl_matrix from, cmrscl_matrix to);

/* ---- matrix_twin.c ---- */

/* A matrix in float made on the device from m in double (AMG's float cycle on the caller's
 * matrix): m's plan, a reference to each of its index arrays, its values rounded there.
 * ERROR_UNSUPPORTED where m is not double or is renumbered, or where the plan's sub-group
 * kernel in float does not run the plan's width; ERROR_DEVICE_LIMIT where the float kernel
 * runs fewer work-items a group than the plan's; the errors of allocation. */
CMRSCL_HIDDEN cmrscl_status cmrs_matrix_float_twin(cmrscl_matrix m, cmrscl_matrix *out);

/* ---- matrix_renumber.c: a renumbered matrix (cmrscl_renumber) ---- */

/* The entries' new places (r->entry: taken over, NULL in r), the device's copy of the order
 * (r->order, uploaded), two vectors for products and the kernels of cl/renumber.cl; the params
 * say so. On failure the caller frees m (and with it what was taken). */
CMRSCL_HIDDEN cmrscl_status cmrs_renumber_attach(cmrscl_matrix m, cmrs_renumbered *r);
/* The lock of the gather and scatter below - their kernels' arguments, and the two vectors a
 * product works in: held around each call, and by a product from its gather to its scatter. */
CMRSCL_HIDDEN void cmrs_renumber_hold(cmrscl_matrix m);
CMRSCL_HIDDEN void cmrs_renumber_let_go(cmrscl_matrix m);
/* dst = P src (the device's order from the caller's) and y = alpha P^T t + beta y (back to
 * the caller's), each one kernel on `queue` after the wait list; *event (may be NULL) its
 * event, retained for the caller. n: the matrix's rows. The caller holds the lock. */
CMRSCL_HIDDEN cmrscl_status cmrs_renumber_gather(cmrscl_matrix m, cl_command_queue queue,
                                                 cl_mem src, cl_mem dst, cl_uint num_wait,
                                                 const cl_event *wait_list, cl_event *event);
CMRSCL_HIDDEN cmrscl_status cmrs_renumber_scatter(cmrscl_matrix m, cl_command_queue queue,
                                                  double alpha, cl_mem t, double beta, cl_mem y,
                                                  cl_uint num_wait, const cl_event *wait_list,
                                                  cl_event *event);
/* The matrix's two vectors of rows values for a product in the device's order (x', t): the
 * caller holds the lock while it uses them. */
CMRSCL_HIDDEN void cmrs_renumber_vectors(cmrscl_matrix m, cl_mem *x, cl_mem *t);
/* Values in the caller's entry order moved into the device's (nnz of value_size bytes). */
CMRSCL_HIDDEN void cmrs_renumber_values(cmrscl_matrix m, const void *values, size_t value_size,
                                        void *out);
/* ERROR_UNSUPPORTED naming `what` when m is renumbered; else CMRSCL_OK. */
CMRSCL_HIDDEN cmrscl_status cmrs_renumber_refuse(cmrscl_matrix m, const char *what);

/* ---- transpose.c ---- */

/* A values update of m drops A^T (transposed_head.outdated); a transposed product holds it, under
 * its lock, from hold (which builds it if it is not built; on failure nothing is held) to let_go.
 */
CMRSCL_HIDDEN cmrscl_status cmrs_transpose_hold(cmrscl_matrix m, cmrscl_matrix *t);
CMRSCL_HIDDEN void cmrs_transpose_let_go(cmrscl_matrix m);

/* ---- product.c: one product as every public entry point describes it ---- */

/* The shape of X and Y: a block of k vectors, the leading dimensions with 0 resolved, the
 * bytes of X and Y up to their last elements. One vector is a block of one, column-major. */
typedef struct block_args {
    cmrscl_dense_order order;
    int k;
    size_t ldx, ldy;
    size_t x_bytes, y_bytes;
} block_args;

/* y = alpha*op(A)*X + beta*Y. */
typedef struct product_desc {
    cmrscl_matrix a; /* A, as the caller gave it */
    cmrscl_matrix m; /* the matrix whose kernels run: A, or A^T once op is resolved */
    cmrscl_operation op;
    int32_t rows, cols; /* op(A)'s */
    double alpha, beta;
    bool block; /* X and Y a block (cmrscl_spmm): the messages name them so */
    block_args b;
} product_desc;

/* The product described and checked against op(A)'s shape: the matrix, op, and for a block
 * its order, k and leading dimensions (a vector: CMRSCL_COLUMN_MAJOR, 1, 0, 0). */
CMRSCL_HIDDEN cmrscl_status cmrs_product_describe(cmrscl_matrix m, cmrscl_operation op, bool block,
                                                  cmrscl_dense_order order, int k, size_t ldx,
                                                  size_t ldy, double alpha, double beta,
                                                  product_desc *out);
/* Its buffers' sizes and context, the queue (may be NULL: the matrix's), the wait list. */
CMRSCL_HIDDEN cmrscl_status cmrs_product_check(const product_desc *d, cl_mem x, cl_mem y,
                                               cl_command_queue queue, cl_uint num_wait,
                                               const cl_event *wait_list);

/* ---- spmv.c and spmm.c: the launches ---- */

/* Enqueues one product (one or two kernels) after the wait list; *first and *last (may be
 * NULL) receive the events of its first and last kernel (the same event when it has one;
 * each retained for the caller). The caller holds m->lock. */
CMRSCL_HIDDEN cmrscl_status cmrs_spmv_enqueue(cmrscl_matrix m, double alpha, cl_mem x, double beta,
                                              cl_mem y, cl_command_queue queue, cl_uint num_wait,
                                              const cl_event *wait_list, cl_event *first,
                                              cl_event *last);
/* The same for a block: launches of up to block_vectors vectors in vector order, each with
 * its combine when strips are split; one plain vector (or no rows) is cmrs_spmv_enqueue's. */
CMRSCL_HIDDEN cmrscl_status cmrs_spmm_enqueue(cmrscl_matrix m, const block_args *b, double alpha,
                                              cl_mem x, double beta, cl_mem y,
                                              cl_command_queue queue, cl_uint num_wait,
                                              const cl_event *wait_list, cl_event *first,
                                              cl_event *last);

/* The queue is of the matrix's context and device. */
CMRSCL_HIDDEN cmrscl_status cmrs_spmv_check_queue(cmrscl_matrix m, cl_command_queue queue);
/* The product's arguments set on its kernels (under m->lock), and their launch sizes: the
 * family's kernel, then cmrs_combine (when m->combine); alpha and beta as a kernel's two
 * real_t arguments from `at` on. */
CMRSCL_HIDDEN cl_int cmrs_spmv_set_args(cmrscl_matrix m, double alpha, cl_mem x, double beta,
                                        cl_mem y);
CMRSCL_HIDDEN void cmrs_spmv_sizes(cmrscl_matrix m, size_t *local, size_t *global,
                                   size_t *combine_local, size_t *combine_global);
CMRSCL_HIDDEN cl_int cmrs_spmv_set_scalars(cl_kernel k, cl_uint at, cmrscl_precision precision,
                                           double alpha, double beta);

/* ---- spmv_dots.c: the product built for the solvers (cl/dots.cl) ---- */

/* The matrix's product as a caller's own kernel objects, whose arguments it sets once (a
 * solver's loop): the family's kernels built again with -DDOTS=1, 2 or 4 (the epilogue of
 * dot products, cl/dots.cl) or with -DDIAGONAL=1 (y = diag(A)). */
typedef struct product_kernels {
    cl_kernel kernel, combine; /* combine: NULL unless a second kernel adds the tiles up */
    size_t local, global, combine_local, combine_global;
    size_t groups;         /* the epilogue's real4s the next kernel adds up: one a work-group
                              (the slice family on NVIDIA: one a warp), with the last tile's
                              combine one a tile after the work-groups'; with cmrs_combine its
                              work-groups' alone, which add the first kernel's up */
    size_t kernel_groups;  /* the first kernel's real4s (after cmrs_combine's, if any) */
    size_t space;          /* the real4s the product writes in all, from its `at` on */
    unsigned kernels_made; /* the matrix's kernels_made they were built after */
    bool local_sums;       /* the slice product's sums in local memory (-DDOTS_LOCAL_SUMS) */
} product_kernels;

/* Built for the matrix's current plan with the extra options ("-DDOTS=2", "-DDIAGONAL=1"),
 * the matrix's arguments set. fold_cap (0: none): the most work-groups a grid keeps where
 * its family can walk group after group but its rule keeps the full grid (segment, MODULO:
 * spmv_dots.c) - a solver's way to keep the product's sums few enough for the next kernel. */
CMRSCL_HIDDEN cmrscl_status cmrs_product_kernels_make(cmrscl_matrix m, const char *extra,
                                                      size_t fold_cap, product_kernels *out);
/* What the product built with `extra` leaves: its units' real4s (its work-groups', or its
 * warps'; a split plan's cmrs_combine's, which add the first kernel's up), the real4s it
 * writes in all (*space, the workspace's region from `at` on), whether its units can also add them
 * up (-DDOTS_CHAIN, cl/dots.cl: a single kernel, on a device where the chain's fence holds) and
 * whether its grid is capped (fewer work-groups than its strips' groups, each warp walking several:
 * spmv_dots.c). */
CMRSCL_HIDDEN void cmrs_product_kernels_shape(const cmrscl_matrix m, const char *extra,
                                              size_t fold_cap, size_t *units, size_t *space,
                                              bool *can_chain, bool *capped);
/* The product's arguments: y = alpha*A*x + beta*y; with DOTS, the workspace, where its
 * real4s go (in reals) and w (NULL with DOTS 2). */
CMRSCL_HIDDEN cmrscl_status cmrs_product_kernels_bind(product_kernels *k,
                                                      cmrscl_precision precision, double alpha,
                                                      cl_mem x, double beta, cl_mem y, bool dots,
                                                      cl_mem ws, cl_uint at, cl_mem w);
/* Enqueues the product (one or two kernels; a barrier between them on an out-of-order
 * queue). */
CMRSCL_HIDDEN cmrscl_status cmrs_product_kernels_enqueue(const product_kernels *k,
                                                         cl_command_queue queue, bool out_of_order);
CMRSCL_HIDDEN void cmrs_product_kernels_release(product_kernels *k);

#endif /* CMRSCL_EXEC_H */
