/* dist_internal.h - what the files of libcmrscl_mpi share, in data-flow order:
 * agree (collective outcomes) -> partition (rows by entries) -> graph (rows by METIS) -> read (file
 * shares, generated rows) -> create (blocks, halo, communication plan) -> halo (device gather and
 * exchange) -> spmv (products, timing). Built on libcmrscl's public API only. */
#ifndef CMRSCL_DIST_INTERNAL_H
#define CMRSCL_DIST_INTERNAL_H

#include "cmrscl_mpi.h"

#include <stdbool.h>
#include <stdint.h>

#define DIST_HIDDEN __attribute__((visibility("hidden")))

/* ---- agree.c: one outcome for all ranks ---- */

/* Records a formatted message for cmrscl_last_error() and returns status. */
DIST_HIDDEN cmrscl_status cmrs_dist_fail(cmrscl_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A failed MPI call as a status, with MPI's own text for the code. */
DIST_HIDDEN cmrscl_status cmrs_dist_fail_mpi(int code, const char *what);
/* Collective: every rank passes its own status and gets the agreed one: CMRSCL_OK when all
 * ranks succeeded, else the lowest failing rank's status, with "rank R: <its message>" as
 * cmrscl_last_error() on every rank. One MPI_Allreduce when all is well. */
DIST_HIDDEN cmrscl_status cmrs_dist_agree(MPI_Comm comm, cmrscl_status mine);

/* Collective: CMRSCL_OK where every rank passes the same `mine` (a setting each rank reads
 * for itself, such as an environment variable), else ERROR_INVALID_ARGUMENT naming it on
 * every rank - settings that decide which collectives follow must not differ. */
DIST_HIDDEN cmrscl_status cmrs_dist_same_setting(MPI_Comm comm, int mine, const char *name);

/* ---- partition.c: rows by entries, columns in proportion ---- */

/* first[0..ranks]: rank r's rows are [first[r], first[r+1]). Collective. This rank holds the
 * lengths of rows [block_first, block_first + block_rows) (any contiguous blocks covering
 * all `rows` rows in rank order); the cuts make each rank's entries plus rows about equal
 * (weight len + 1: a row also costs its y). */
DIST_HIDDEN cmrscl_status cmrs_dist_partition(MPI_Comm comm, int64_t rows, int64_t block_first,
                                              int64_t block_rows, const int32_t *row_len,
                                              int64_t *first);
/* Rank r's even share [rows * r / ranks, rows * (r + 1) / ranks) starts here. */
DIST_HIDDEN int64_t cmrs_dist_even_first(int64_t rows, int r, int ranks);
/* The rank whose range [first[r], first[r+1]) holds `index`. */
DIST_HIDDEN int cmrs_dist_owner(const int64_t *first, int ranks, int64_t index);

/* ---- graph.c: rows by a graph partitioner ---- */

/* Collective, agreed. With $CMRSCL_DIST_PARTITION "graph" (or "auto", where the graph's parts
 * cut the halo enough), *out receives this rank's part of the rows of a (each rank's rows
 * consecutive, in rank order) in the library's numbering and *owned their original indices;
 * otherwise *chosen is CMRSCL_PARTITION_ROWS and both stay empty. halo: the x entries all
 * ranks receive with the row blocks and with the graph's parts (-1: not computed). */
DIST_HIDDEN cmrscl_status cmrs_dist_repartition(MPI_Comm comm, const cmrscl_csr *a, cmrscl_csr *out,
                                                int32_t **owned, cmrscl_dist_partition *chosen,
                                                int64_t halo[2]);

/* ---- the distributed matrix ---- */

struct cmrscl_dist_matrix_s {
    MPI_Comm comm; /* a duplicate, errors returned */
    cmrscl_context ctx;
    cmrscl_dist_plan plan;
    cmrscl_matrix local, remote; /* remote: NULL without a halo */
    int32_t *halo_cols;          /* plan.halo global columns, ascending */
    int32_t *remote_row;         /* plan.remote_rows: the local row of each remote-block row */
    int32_t *owned;              /* graph partition: this rank's rows' original indices */
    /* The neighbours: rank, entries received from it and sent to it, and where they sit in
     * the halo and send arrays. */
    int *nb_rank;
    int32_t *nb_recv, *nb_send;
    int64_t *nb_recv_at, *nb_send_at;
    MPI_Request *requests; /* 2 per neighbour */
    MPI_Datatype type;     /* MPI_FLOAT or MPI_DOUBLE */
    /* halo.c: the device side of the exchange. */
    cl_context cl;
    cl_command_queue queue; /* the context's: the products */
    cl_command_queue side;  /* the halo's copies, beside the local product */
    cl_program program;
    cl_kernel gather;      /* send values = x[send index] */
    cl_kernel scatter;     /* y[remote row] += remote part; NULL where every row is remote */
    cl_mem send_index;     /* plan.sent local column indices, grouped by neighbour */
    cl_mem send_values;    /* plan.sent values gathered */
    cl_mem halo_values;    /* plan.halo values for the remote product */
    cl_mem remote_row_buf; /* with scatter: remote_row on the device */
    cl_mem remote_part;    /* with scatter: the remote block's product, plan.remote_rows values */
    cl_mem pinned[2];      /* host-mapped staging: sent values, received halo */
    void *send_host, *halo_host;
    cl_event last_write; /* the previous product's halo write, which reads halo_host */
    /* window.c, with plan.exchange CMRSCL_EXCHANGE_SHARED: halo_host is this rank's segment
     * of a shared window, and nb_dest[k] where our entries go in neighbour k's. */
    MPI_Win window;
    char **nb_dest;
    /* buffers over the segments we copy from and into (window.c, cover) */
    cl_mem own_cover, *nb_cover;
    /* CMRSCL_EXCHANGE_SLICES: halo_host holds this rank's slice of x and nb_dest[k] the
     * sender k's; col_first[r] is rank r's first column; the senders' slices land in `slices`
     * on the device (sender k's at slice_at[k]), whence slice_index gathers the halo */
    int64_t *col_first, *slice_at;
    cl_mem slices, slice_index;
    double *diagonal; /* square matrices: this rank's rows' diagonal (create.c) */
    /* solve.c: the solver's kernels and vectors, made by the first solve */
    struct dist_solver *solver;
    /* During a solve the products skip their two agreements: the solver's own buffers need no
     * check, and a rank's failure reaches the others as NaN in the next collective's sums,
     * which stops every rank at the same step; the solve agrees on its outcome once, at the
     * end (solve.c). */
    bool in_solve;
    /* The host waits for the device by spinning on the events' status (a GPU: the driver wakes
     * a thread that blocks late, and every product and solver iteration waits a few times)
     * or by clWaitForEvents (a CPU device, whose threads need the cores); halo.c,
     * cmrs_dist_wait. */
    bool spin;
};

/* matrix.c: a duplicate of comm whose MPI errors return (every create path's first step),
 * and the checks every create path makes of its arguments (local). */
DIST_HIDDEN cmrscl_status cmrs_dist_comm_dup(MPI_Comm comm, MPI_Comm *out);
/* The program `name` (for messages) of source built for device with options (agree.c); a
 * build failing without a diagnostic is tried once more. On failure *out is NULL and the
 * message holds the build log. */
DIST_HIDDEN cmrscl_status cmrs_dist_build(cl_context cl, cl_device_id device, const char *name,
                                          const char *source, const char *options, cl_program *out);
DIST_HIDDEN cmrscl_status cmrs_dist_check_args(cmrscl_context ctx, cmrscl_precision precision,
                                               cmrscl_dist_matrix *out);

/* An empty CSR of `rows` x `cols` with room for nnz entries (row_ptr[0] set). */
DIST_HIDDEN cmrscl_status cmrs_dist_csr_alloc(int32_t rows, int32_t cols, int64_t nnz,
                                              cmrscl_csr *out);
/* create.c: the common end of every create path, collective: this rank's rows (a valid CSR
 * with global columns; the ranks' blocks in rank order), comm a duplicate that the matrix
 * owns from here on (freed on failure). */
DIST_HIDDEN cmrscl_status cmrs_dist_create_rows(MPI_Comm comm, cmrscl_context ctx,
                                                cmrscl_precision precision, const cmrscl_csr *rows,
                                                const cmrscl_options *opt, cmrscl_dist_matrix *out);

/* ---- halo.c: the exchange's device and MPI steps ---- */

/* The small kernels, the device and pinned buffers of the exchange (after the plan);
 * send_local: the plan.sent local columns to send, grouped by neighbour. */
DIST_HIDDEN cmrscl_status cmrs_halo_setup(cmrscl_dist_matrix m, const int32_t *send_local);
DIST_HIDDEN void cmrs_halo_free(cmrscl_dist_matrix m);
/* Enqueues on the context's queue, after what it holds (the commands that wrote x, the
 * previous product), the gather of the sent entries from x - or a marker where nothing is
 * sent but a halo is received - and on the side queue the gathered entries' read into the
 * pinned staging. *start receives the gather's or the marker's event (NULL when neither is
 * needed): the halo buffer is free to be written once it has run. *read receives the read's
 * event (NULL when nothing is sent). */
DIST_HIDDEN cmrscl_status cmrs_halo_pack(cmrscl_dist_matrix m, cl_mem x, cl_event *start,
                                         cl_event *read);
/* Posts the receives (before the sends are ready, so no message waits for a receive). */
DIST_HIDDEN cmrscl_status cmrs_halo_post_receives(cmrscl_dist_matrix m);
/* Posts the sends, once the read has finished. */
DIST_HIDDEN cmrscl_status cmrs_halo_post_sends(cmrscl_dist_matrix m);
/* Waits for every posted receive and send (always, even after a local failure, so that the
 * other ranks' messages are matched). */
DIST_HIDDEN cmrscl_status cmrs_halo_wait(cmrscl_dist_matrix m);
/* Enqueues on the side queue, after `ready` (the previous remote product no longer reads the
 * halo buffer; may be NULL), the write of the received halo; *event receives its event (NULL
 * without a halo), for the remote product to wait on. */
DIST_HIDDEN cmrscl_status cmrs_halo_unpack(cmrscl_dist_matrix m, cl_event ready, cl_event *event);
/* Enqueues on the side queue, after the writes of the senders' slices and `start`, the halo
 * gathered from them (CMRSCL_EXCHANGE_SLICES); *event receives its event. */
DIST_HIDDEN cmrscl_status cmrs_halo_from_slices(cmrscl_dist_matrix m, cl_event start,
                                                cl_event *event);
/* Waits for n events (NULL ones skipped), spinning where m->spin; an OpenCL error code. */
DIST_HIDDEN cl_int cmrs_dist_wait(cmrscl_dist_matrix m, cl_uint n, const cl_event *events);
/* Enqueues on the context's queue y[remote_row[i]] += remote_part[i] (with m->scatter). */
DIST_HIDDEN cmrscl_status cmrs_halo_scatter(cmrscl_dist_matrix m, cl_mem y, cl_event *event);

/* ---- window.c: the exchange through a shared-memory window (ranks of one host) ---- */

/* Chooses the exchange (plan.exchange) and, for the shared one, makes the window and finds
 * the neighbours' segments (after the plan, before cmrs_halo_setup). Collective, agreed. */
DIST_HIDDEN cmrscl_status cmrs_window_setup(cmrscl_dist_matrix m);
DIST_HIDDEN void cmrs_window_free(cmrscl_dist_matrix m); /* collective */

/* ---- spmv.c: one product ---- */

/* What one product did, for the timing: events (retained, NULL when absent) and host times. */
typedef struct product_record {
    cl_event gather, read; /* the pack: NULL when nothing is sent */
    cl_event local;        /* the local product's last kernel */
    cl_event write;        /* the halo's write: NULL without a halo */
    cl_event remote;       /* likewise, the remote product's last kernel */
    cl_event scatter;      /* its addition into y: NULL where the remote block covers y */
    double exchange_s; /* the sent entries on the host (the pack over) to every request complete */
    double wait_s;     /* of that, inside MPI_Waitall after the sends were posted */
} product_record;
DIST_HIDDEN void cmrs_dist_record_release(product_record *r);
/* One product, collective: `pre` is this rank's own verdict on its arguments so far (agreed
 * with the buffer checks first, and the outcome agreed at the end - but during a solve,
 * m->in_solve); overlap false runs the local product to its end before the exchange. rec may
 * be NULL. */
/* The shared window's exchange, after the gather (`start`) and the local product are
 * enqueued: reads into the receivers' segments, the halo's writes as the neighbours' entries
 * land (m->last_write: the last of them). *read receives the last read's event (NULL when
 * nothing is sent). Every rank completes its messages even after a local failure (pre, the
 * product's status so far: after one, no device work). */
DIST_HIDDEN cmrscl_status cmrs_window_exchange(cmrscl_dist_matrix m, cmrscl_status pre, cl_mem x,
                                               cl_event start, cl_event *read, product_record *rec);
DIST_HIDDEN cmrscl_status cmrs_dist_product(cmrscl_dist_matrix m, cmrscl_status pre, double alpha,
                                            cl_mem x, double beta, cl_mem y, bool overlap,
                                            product_record *rec);

/* ---- solve.c ---- */
DIST_HIDDEN void cmrs_dist_solver_free(struct dist_solver *sv);

/* ---- small helpers ---- */

DIST_HIDDEN double cmrs_dist_seconds(void);
DIST_HIDDEN size_t cmrs_dist_value_size(cmrscl_precision p);

#endif
