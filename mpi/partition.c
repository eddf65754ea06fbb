/* partition.c - which rank owns which rows: cuts balanced by entries, computed from row
 * lengths that each rank holds for one block of rows only (a prefix sum over the ranks, then
 * each cut found by the rank whose block holds it), so no rank needs all the lengths. */
#include "dist_internal.h"

#include <stdlib.h>

int64_t cmrs_dist_even_first(int64_t rows, int r, int ranks) { return rows * r / ranks; }

int cmrs_dist_owner(const int64_t *first, int ranks, int64_t index)
{
    /* The last rank whose range starts at or before index: ranges before it that are
     * empty start there too, and the next range starts after index. */
    int lo = 0, hi = ranks - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (first[mid] <= index)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

cmrscl_status cmrs_dist_partition(MPI_Comm comm, int64_t rows, int64_t block_first,
                                  int64_t block_rows, const int32_t *row_len, int64_t *first)
{
    int rank = 0, ranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    /* Weight len + 1: empty rows cost their y, and a matrix without entries splits evenly. */
    int64_t mine = 0, before = 0, total = 0;
    for (int64_t i = 0; i < block_rows; ++i)
        mine += row_len[i] + 1;
    int rc = MPI_Exscan(&mine, &before, 1, MPI_INT64_T, MPI_SUM, comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, comm);
    if (rc != MPI_SUCCESS)
        return cmrs_dist_fail_mpi(rc, "MPI_Exscan/MPI_Allreduce (row weights)");
    if (rank == 0)
        before = 0; /* MPI_Exscan leaves rank 0's result undefined */
    int64_t *cut = malloc(sizeof *cut * ((size_t)ranks + 1));
    if (!cut)
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d cuts", ranks);
    /* Cut k is the first row whose preceding weight reaches total * k / ranks; it lies in
     * this block when the target falls in (before, before + mine]. */
    int64_t acc = before, i = 0;
    for (int k = 0; k <= ranks; ++k) {
        int64_t target = total * k / ranks;
        cut[k] = -1;
        if (k == 0 || k == ranks || target <= before || target > before + mine)
            continue;
        while (acc < target)
            acc += row_len[i++] + 1;
        cut[k] = block_first + i;
    }
    rc = MPI_Allreduce(cut, first, ranks + 1, MPI_INT64_T, MPI_MAX, comm);
    free(cut);
    if (rc != MPI_SUCCESS)
        return cmrs_dist_fail_mpi(rc, "MPI_Allreduce (row cuts)");
    first[0] = 0, first[ranks] = rows;
    for (int k = 1; k < ranks; ++k) /* targets at or below 0 (no rows) */
        if (first[k] < first[k - 1])
            first[k] = first[k - 1];
    return CMRSCL_OK;
}
