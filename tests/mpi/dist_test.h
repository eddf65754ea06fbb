/* dist_test.h - what the MPI tests share: vectors as a function of the global index, a rank's
 * even block of a matrix's rows, and the verdict agreed over the ranks at the end. */
#ifndef CMRSCL_DIST_TEST_H
#define CMRSCL_DIST_TEST_H

#include "cmrscl_mpi.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

/* A deterministic entry in [-1, 1): a function of the global index and a salt (which vector),
 * rounded to the precision, so no rank needs another's entries to know them. */
static inline double dist_value_at(int64_t i, uint64_t salt, cmrscl_precision p)
{
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ull + salt;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    double v = (double)(z >> 11) * 0x1p-53 * 2.0 - 1.0;
    return p == CMRSCL_FLOAT ? (double)(float)v : v;
}

/* Rank `rank`'s even block of the rows of a (what cmrscl_dist_create takes): the columns and
 * values a's own, row_ptr malloc'd (free it). */
static inline cmrscl_csr dist_even_block(const cmrscl_csr *a, int rank, int ranks)
{
    int64_t r0 = (int64_t)a->rows * rank / ranks, r1 = (int64_t)a->rows * (rank + 1) / ranks;
    cmrscl_csr mine = {(int32_t)(r1 - r0),
                       a->cols,
                       a->row_ptr[r1] - a->row_ptr[r0],
                       malloc(sizeof *a->row_ptr * (size_t)(r1 - r0 + 1)),
                       a->col_ind + a->row_ptr[r0],
                       a->values + a->row_ptr[r0]};
    for (int64_t i = r0; i <= r1; ++i)
        mine.row_ptr[i - r0] = a->row_ptr[i] - a->row_ptr[r0];
    return mine;
}

/* The test's end on every rank: its own summary ("WHAT rank R/N"), MPI finalized, and an exit
 * status that fails on every rank when any rank's checks failed. */
static inline int dist_test_finish(const char *what)
{
    int rank = 0, ranks = 1, failed = test_failures > 0, any = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    char name[160];
    snprintf(name, sizeof name, "%s rank %d/%d", what, rank, ranks);
    int rc = test_finish(name);
    MPI_Finalize();
    return rc ? rc : any;
}

#endif
