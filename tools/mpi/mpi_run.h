/* mpi_run.h - one distributed configuration of cmrscl-run-mpi: the matrix created on every
 * rank (a file read in shares, or rows generated per rank), one product verified against the
 * CPU double reference (each rank its own rows, with x a function of the global index so no
 * rank needs all of it), then the library's timing (cmrscl_dist_spmv_time), reduced over
 * the ranks for rank 0 to print. */
#ifndef CMRSCL_TOOLS_MPI_RUN_H
#define CMRSCL_TOOLS_MPI_RUN_H

#include "cli.h"
#include "cmrscl_mpi.h"

enum { MPI_RANK_LINE = 512 }; /* a rank's widest line: two plans of 127 characters and the rest */

typedef struct mpi_result {
    char name[256];
    bool generated;
    cmrscl_dist_plan plan; /* rank 0's; rows, cols and nnz are the whole matrix's */
    double setup_s;        /* creating the matrix, slowest rank */
    cmrscl_dist_timing t;  /* each time the slowest rank's; hidden from those */
    int64_t halo_total, halo_max;
    double device_sum_ms; /* the ranks' local and remote products added: about one device's */
    double one_device_ms; /* rank 0: the whole matrix on its device, back to back; -1: not run */
    bool verified;
    double relative_error, bound_ratio; /* over all rows */
    char (*rank_lines)[MPI_RANK_LINE];  /* rank 0: one line per rank (free()) */
} mpi_result;

/* Collective. Returns 0, or an exit status (the same on every rank) having printed the
 * reason on rank 0. A wrong result is not a failure here: see passed(). */
int mpi_run(cmrscl_context ctx, const char *input, bool is_gen, const cli_options *opt,
            cmrscl_precision precision, mpi_result *out);
void mpi_result_free(mpi_result *r);
/* A vector entry as a function of its global index (and a salt: which vector), in [-1, 1),
 * rounded to the precision: no rank needs another's entries to know them. */
double mpi_value_at(int64_t i, uint64_t salt, cmrscl_precision p);
/* A failure every rank returns with the same exit status (cli_fail's), said by rank 0 alone. */
int mpi_fail(const char *what, cmrscl_status status);
/* cmrscl-run-mpi solve (mpi_solve.c): collective; the exit status, the same on every rank. */
int mpi_solve(cmrscl_context ctx, const cli_options *opt);
bool mpi_result_passed(const mpi_result *r);
/* How the halo travels, in words ("through a shared-memory window", ...). */
const char *mpi_exchange_name(cmrscl_dist_exchange e);

#endif
