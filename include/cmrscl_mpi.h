/* cmrscl_mpi.h - distributed sparse matrix-vector products over MPI (libcmrscl_mpi), built
 * on libcmrscl's public API the way PETSc's MPIAIJ and Ginkgo's distributed matrix are:
 *
 * - Rows are partitioned across the ranks of a communicator in rank order, balanced by
 *   entries (each rank's entries plus rows about equal). x is partitioned the same way
 *   (for a rectangular matrix: columns in the same proportions as the rows). y stays
 *   distributed: each rank holds the slice of its rows, x the slice of its columns.
 * - Each rank holds two ordinary cmrscl matrices, each with its own automatic plan: the
 *   local block (the columns it owns, renumbered from 0) and the remote block (the columns
 *   it needs from other ranks, its "halo", compressed to 0..halo-1 in ascending global
 *   order, so grouped by owner).
 * - A product gathers the x entries other ranks need on the device, ahead of the local
 *   product, and exchanges them while the local product runs; then it writes the received
 *   halo to the device and adds the remote block's product, which holds only the rows with
 *   remote entries. Which entries go where is computed once, at creation.
 *
 * Conventions are libcmrscl's (cmrscl.h): a status per call, cmrscl_last_error() for the
 * details, NULL-safe frees, the library never prints. In addition, every function that takes
 * a communicator or a distributed matrix is collective over that communicator, and ranks
 * agree on the outcome: when any rank fails, every rank returns an error (the failing rank's
 * status, and the message "rank R: <its message>" on every rank), so no rank waits forever
 * for another that gave up. The lowest failing rank's failure is the one reported.
 * MPI calls made by the library use a duplicate of the communicator whose error handler
 * returns, so MPI failures also come back as statuses.
 */
#ifndef CMRSCL_MPI_H
#define CMRSCL_MPI_H

#include "cmrscl.h"

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cmrscl_dist_matrix_s *cmrscl_dist_matrix;

/* ---- Devices ---------------------------------------------------------------------- */

/* A context for this rank (collective). The selector is read per rank: NULL or "" means
 * $CMRSCL_DEVICE, and if that is unset too, the node-local rank's GPU (local rank modulo
 * the GPUs; the first device when there is no GPU). A device type ("gpu", "cpu",
 * "accelerator") picks the local rank's device of that type, modulo their number; a
 * comma-separated list ("0:0,0:1") gives one selector per local rank (modulo its length);
 * anything else ("P:D", a name substring) is cmrscl_context_create's selector. The local
 * rank is the rank among those of the same node (MPI_COMM_TYPE_SHARED). */
CMRSCL_API cmrscl_status cmrscl_dist_context_create(MPI_Comm comm, const char *selector,
                                                    cmrscl_context *out);

/* ---- Creating a distributed matrix ------------------------------------------------------ */

/* From each rank's own rows (collective): local_rows holds this rank's consecutive block of
 * rows (rank 0 the first block, and so on; any rank may have none), with global column
 * indices and local_rows->cols the global column count, the same on every rank. Values are
 * rounded to float for CMRSCL_FLOAT. The rows are copied; this partition is kept as given.
 * opt (may be NULL) applies to both blocks. */
CMRSCL_API cmrscl_status cmrscl_dist_create(MPI_Comm comm, cmrscl_context ctx,
                                            cmrscl_precision precision,
                                            const cmrscl_csr *local_rows, const cmrscl_options *opt,
                                            cmrscl_dist_matrix *out);
/* From a Matrix Market file every rank can read (collective; the rules and messages of
 * cmrscl_mtx_read): each rank parses one share of the entry lines (cmrscl_mtx_read_share)
 * and sends each coordinate to the rank that owns its row, so no rank reads or holds the
 * whole matrix. The rows are partitioned by entries from the row lengths, summed over the
 * ranks in one array of `rows` ints per rank. Each rank's rows are exactly the rows of
 * cmrscl_mtx_read's CSR (duplicates summed in file order). */
CMRSCL_API cmrscl_status cmrscl_dist_create_from_mtx(MPI_Comm comm, cmrscl_context ctx,
                                                     cmrscl_precision precision, const char *path,
                                                     const cmrscl_options *opt,
                                                     cmrscl_dist_matrix *out);
/* From a generator spec (cmrscl_csr_generate; collective): each rank builds only its own
 * rows (cmrscl_csr_generate_rows), bit for bit those of the whole matrix. */
CMRSCL_API cmrscl_status cmrscl_dist_create_generated(MPI_Comm comm, cmrscl_context ctx,
                                                      cmrscl_precision precision, const char *spec,
                                                      const cmrscl_options *opt,
                                                      cmrscl_dist_matrix *out);
/* Collective (it frees a duplicated communicator). The context is not freed. */
CMRSCL_API void cmrscl_dist_free(cmrscl_dist_matrix m);

/* ---- The layout and the communication plan ----------------------------------------------- */

/* How the halo travels between ranks. */
typedef enum cmrscl_dist_exchange {
    /* the device reads into pinned host memory, MPI messages carry it, the receiver's
     * device writes it from pinned host memory */
    CMRSCL_EXCHANGE_MESSAGES = 0,
    /* ranks of one host: the sender's device reads straight into the receiver's segment of
     * an MPI-3 shared-memory window, which the receiver's device writes from; empty
     * messages order the copies. Chosen where every rank shares one host, unless
     * $CMRSCL_DIST_EXCHANGE is "messages" (or "shared" to insist), or SLICES moves fewer
     * bytes. */
    CMRSCL_EXCHANGE_SHARED = 1,
    /* ranks of one host whose halos are most of x: each rank's device reads its whole slice
     * of x once into its segment of the window, and each receiver's device writes the slices
     * of its senders and gathers its halo from them - one read a product where the halo
     * path reads once per neighbour. Chosen on one host where it moves fewer bytes in all
     * (slices read and written against halos read and written), or by
     * $CMRSCL_DIST_EXCHANGE=slices */
    CMRSCL_EXCHANGE_SLICES = 2
} cmrscl_dist_exchange;

/* How the rows are divided among the ranks, read from $CMRSCL_DIST_PARTITION ("rows",
 * "graph" or "auto") at creation. */
typedef enum cmrscl_dist_partition {
    /* consecutive blocks of rows in rank order, balanced by entries (the default) */
    CMRSCL_PARTITION_ROWS = 0,
    /* METIS's k-way parts of the graph of A + A^T, balanced by entries (square matrices of
     * up to 2^28 entries, whose pattern rank 0 gathers; a build with METIS; else
     * ERROR_UNSUPPORTED, and on one rank its one block; the same value on every rank, else
     * ERROR_INVALID_ARGUMENT): a rank's rows
     * are those cmrscl_dist_owned_rows lists, and its slices of x and y hold them in that
     * order. Every index the plan and the queries below report is in the library's
     * numbering, where each rank's rows are consecutive (first_row..). */
    CMRSCL_PARTITION_GRAPH = 1,
    /* the graph's parts where their halo is at most 3/4 of the row blocks', else rows; a
     * program that asks for it must place x and y by cmrscl_dist_owned_rows */
    CMRSCL_PARTITION_AUTO = 2
} cmrscl_dist_partition;

typedef struct cmrscl_dist_plan {
    int rank, ranks;
    int64_t rows, cols, nnz;       /* the whole matrix */
    int32_t first_row, local_rows; /* this rank's rows: its slice of y */
    int32_t first_col, local_cols; /* this rank's slice of x */
    int64_t local_nnz, remote_nnz; /* entries of the local and the remote block */
    int32_t halo;                  /* x entries received per product */
    int32_t sent;                  /* x entries sent per product */
    int neighbours;                /* ranks it receives from or sends to */
    cmrscl_precision precision;
    int32_t remote_rows;             /* rows with remote entries: the remote block's rows */
    cmrscl_dist_exchange exchange;   /* the same on every rank */
    cmrscl_dist_partition partition; /* ROWS or GRAPH: the one taken */
    /* x entries all ranks receive per product with the row blocks and with the graph's
     * parts, where the partitioner ran ("graph" or "auto" asked); -1 where it did not */
    int64_t halo_by_rows, halo_by_graph;
} cmrscl_dist_plan;

/* This rank's part (not collective). */
CMRSCL_API cmrscl_status cmrscl_dist_matrix_plan(cmrscl_dist_matrix m, cmrscl_dist_plan *out);
/* The neighbours in ascending rank order (not collective): up to `max` of them, each with the
 * x entries received from it and sent to it per product; any array may be NULL. *count
 * (may be NULL) receives the number of neighbours. */
CMRSCL_API cmrscl_status cmrscl_dist_neighbours(cmrscl_dist_matrix m, int max, int *ranks,
                                                int32_t *received, int32_t *sent, int *count);
/* The global columns of the halo (plan.halo of them, ascending): column h of the remote
 * block is global column columns[h] (not collective). */
CMRSCL_API cmrscl_status cmrscl_dist_halo_columns(cmrscl_dist_matrix m, int32_t *columns);
/* This rank's rows with remote entries (plan.remote_rows of them, ascending, numbered from
 * the rank's first row): row j of the remote block is row rows[j] of y (not collective). */
CMRSCL_API cmrscl_status cmrscl_dist_remote_rows(cmrscl_dist_matrix m, int32_t *rows);
/* This rank's rows in the user's numbering (plan.local_rows of them, ascending): row i of
 * the rank's slice of y (and, square, entry i of its slice of x) is row rows[i] of the
 * matrix as given: first_row + i unless the rows were divided by the graph (not
 * collective). */
CMRSCL_API cmrscl_status cmrscl_dist_owned_rows(cmrscl_dist_matrix m, int32_t *rows);
/* The two blocks, borrowed (for cmrscl_matrix_params); remote is NULL when the halo is
 * empty (not collective). */
CMRSCL_API cmrscl_status cmrscl_dist_blocks(cmrscl_dist_matrix m, cmrscl_matrix *local,
                                            cmrscl_matrix *remote);
/* This rank's rows as the device holds them (values in double), read back, in one CSR over
 * plan.local_cols + plan.halo columns: column c < local_cols is global column
 * first_col + c, column local_cols + h is halo column h. What a check against the CPU
 * reference needs, with no rank holding all of x (not collective). */
CMRSCL_API cmrscl_status cmrscl_dist_read_rows(cmrscl_dist_matrix m, cmrscl_csr *out);

/* ---- Products ----------------------------------------------------------------------------- */

/* y = alpha*A*x + beta*y (collective): x holds this rank's local_cols entries and y its
 * local_rows entries, buffers of the context's cl_context in the matrix precision (either
 * may be NULL where its count is 0). Enqueued on the context's queue after what is there;
 * returns once the remote product is enqueued (the exchange is over), so a later command on
 * that queue, or clFinish, sees y. When beta == 0, y is not read. One host thread per rank
 * drives the products of a matrix (the exchange's staging buffers are the matrix's). */
CMRSCL_API cmrscl_status cmrscl_dist_spmv(cmrscl_dist_matrix m, double alpha, cl_mem x, double beta,
                                          cl_mem y);
/* The same on host arrays of the precision (local_cols and local_rows entries); blocks until
 * y is written. */
CMRSCL_API cmrscl_status cmrscl_dist_spmv_host(cmrscl_dist_matrix m, double alpha, const void *x,
                                               double beta, void *y);

/* Timings of this rank's products (what cmrscl-run-mpi reduces over the ranks). Medians
 * over the repetitions; device times from profiling events, host times from the clock. */
typedef struct cmrscl_dist_timing {
    int warmup, repetitions;
    double loop_ms;        /* per product, back to back, with the overlap (what a solver sees) */
    double serial_loop_ms; /* the same with the exchange after the local product: no overlap */
    double product_ms;     /* device: start of the first command to the end of the last (the
                            * remote product or its addition into y) */
    double local_ms;       /* device: the local product */
    double remote_ms;      /* device: the remote product and its addition into y (0 without a
                            * halo) */
    double pack_ms;        /* device: gathering the sent x entries and reading them back */
    double exchange_ms;    /* host: the MPI exchange, from the sent entries on the host (the
                            * pack over) to the halo in */
    double unpack_ms;      /* device: writing the halo */
    double wait_ms;        /* host, overlapped loop: time spent waiting for the exchange */
    /* What the overlap must hide: pack + exchange + unpack measured in the serial loop; and
     * the share of it the overlap hides, (serial_loop - loop) / communication, in 0..1. */
    double communication_ms;
    double hidden;
} cmrscl_dist_timing;

/* Runs `warmup` untimed products, then `repetitions` timed ones each way (overlapped, then
 * serial), on the context's queue (profiling enabled, as cmrscl_context_create makes it).
 * y is overwritten repeatedly: pass beta = 0 to keep it meaningful. Collective. */
CMRSCL_API cmrscl_status cmrscl_dist_spmv_time(cmrscl_dist_matrix m, double alpha, cl_mem x,
                                               double beta, cl_mem y, int warmup, int repetitions,
                                               cmrscl_dist_timing *out);

/* ---- Solving ------------------------------------------------------------------------------- */

/* Solves A x = b on a square distributed matrix (collective): conjugate gradients
 * (opt->method CMRSCL_METHOD_CG, with or without CMRSCL_PRECONDITIONER_JACOBI or
 * CMRSCL_PRECONDITIONER_AMG), BiCGStab (CMRSCL_METHOD_BICGSTAB) or restarted GMRES
 * (CMRSCL_METHOD_GMRES, opt->restart), the last two without a preconditioner (one fails with
 * ERROR_UNSUPPORTED). AMG is block Jacobi across the ranks: each rank's block (its rows and
 * columns) preconditioned by an AMG V-cycle on its device - opt->precond, this rank's own
 * (cmrscl_precond_create_amg on the local block of cmrscl_dist_blocks; one of another size or
 * precision fails with ERROR_INVALID_ARGUMENT, of another context with ERROR_CONTEXT_MISMATCH:
 * cmrscl_precond_check), or, NULL, one built with the default options from the block read
 * back at the first such solve and kept with the matrix; two MPI_Allgather an iteration. b and x
 * hold this rank's local_rows entries, buffers of the context in the precision; x holds x0 on
 * entry and the solution on return. The options and the result are the single-device
 * solver's (cmrscl_solve.h), with these differences: an iteration is the methods' vector
 * kernels, the distributed products and the dot products after them, each reduction one read
 * of the work-groups' partial sums and one MPI_Allgather of each rank's sums (CG one an
 * iteration, GMRES two, BiCGStab three), added in rank order on every rank: the same scalars, and
 * the same bits run after run; the host tests every iteration (check_interval is ignored, a monitor
 * is called each iteration). The Jacobi diagonal is the one the matrix was created with. The first
 * solve builds the solver's kernels and work vectors, kept with the matrix. Results and errors as
 * cmrscl_solver_solve's, agreed by every rank; the true residual comes from a distributed product
 * after the solve. On one rank the matrix is its local block, and the call is cmrscl_solve's on it:
 * every method, the single-device solver's fused kernels. */
CMRSCL_API cmrscl_status cmrscl_dist_solve(cmrscl_dist_matrix m, const cmrscl_solve_options *opt,
                                           cl_mem b, cl_mem x, cmrscl_solve_result *out);
/* The same on host arrays of this rank's local_rows values (x read back whatever the outcome). */
CMRSCL_API cmrscl_status cmrscl_dist_solve_host(cmrscl_dist_matrix m,
                                                const cmrscl_solve_options *opt, const void *b,
                                                void *x, cmrscl_solve_result *out);

#ifdef __cplusplus
}
#endif
#endif /* CMRSCL_MPI_H */
