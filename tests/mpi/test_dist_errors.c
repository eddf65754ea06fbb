/* test_dist_errors.c - bad input on one rank fails every rank cleanly, with the same status
 * and the failing rank's message, and nothing hangs (CTest's timeout would catch a rank left
 * waiting). Modes (argv[1]):
 *   malformed FILE LINE  a damaged Matrix Market file: ERROR_PARSE naming FILE:LINE (LINE 0:
 *                        a file shorter than its size line says)
 *   missing              a file that does not exist: ERROR_FILE_IO
 *   device               the last rank alone asks for a device that does not exist
 *   rows                 the last rank alone gives rows with a column out of range
 *   midway               products 1-2 fine, then rank 1 alone passes a NULL x in product 3,
 *                        then product 4 works again (the matrix stays usable)
 * Each rank checks what it got; the exit status is agreed over the ranks. */
#include "dist_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;

/* Every rank must see `want` and a message containing `needle` that names `culprit`. */
static void expect(cmrscl_status got, cmrscl_status want, const char *needle, int culprit)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "rank %d: ", culprit);
    CHECK_MSG(got == want, "rank %d: %s, expected %s (%s)", rank, cmrscl_status_name(got),
              cmrscl_status_name(want), cmrscl_last_error());
    CHECK_MSG(test_contains(cmrscl_last_error(), needle) &&
                  (culprit < 0 || strncmp(cmrscl_last_error(), prefix, strlen(prefix)) == 0),
              "rank %d: message '%s' lacks '%s' or '%s'", rank, cmrscl_last_error(), needle,
              prefix);
}

static void midway(cmrscl_context ctx)
{
    cmrscl_dist_matrix dm = NULL;
    CHECK_OK(
        cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, CMRSCL_FLOAT, "stencil7:6", NULL, &dm));
    if (!dm)
        return;
    cmrscl_dist_plan plan;
    cmrscl_dist_matrix_plan(dm, &plan);
    float *x = calloc((size_t)plan.local_cols + 1, sizeof *x);
    float *y = calloc((size_t)plan.local_rows + 1, sizeof *y);
    for (int32_t j = 0; j < plan.local_cols; ++j)
        x[j] = 1.0f;
    for (int product = 1; product <= 4; ++product) {
        bool bad = product == 3 && rank == 1 % ranks && plan.local_cols > 0;
        cmrscl_status st = cmrscl_dist_spmv_host(dm, 1.0, bad ? NULL : x, 0.0, y);
        if (product == 3)
            expect(st, CMRSCL_ERROR_INVALID_ARGUMENT, "x or y is NULL", 1 % ranks);
        else
            CHECK_OK(st);
    }
    /* The stencil's rows sum to 0 inside and to the missing neighbours at the faces. */
    double sum = 0.0, all = 0.0;
    for (int32_t i = 0; i < plan.local_rows; ++i)
        sum += y[i];
    MPI_Allreduce(&sum, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK_MSG(all == 6.0 * 6 * 6, "sum of A*1 is %g", all); /* 6 faces x 36 missing links */
    free(x), free(y);
    cmrscl_dist_free(dm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const char *mode = argc > 1 ? argv[1] : "";
    int last = ranks - 1;
    cmrscl_context ctx = NULL;
    cmrscl_status st = cmrscl_dist_context_create(
        MPI_COMM_WORLD, strcmp(mode, "device") == 0 && rank == last ? "no such device" : NULL,
        &ctx);
    cmrscl_dist_matrix dm = NULL;
    if (strcmp(mode, "device") == 0) {
        expect(st, CMRSCL_ERROR_NO_DEVICE, "no such device", last);
        CHECK(ctx == NULL);
    } else if (strcmp(mode, "malformed") == 0 && argc == 4) {
        st = cmrscl_dist_create_from_mtx(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, argv[2], NULL, &dm);
        char where[4200];
        if (strcmp(argv[3], "0") == 0) /* a wrong count: no single line to name */
            snprintf(where, sizeof where, "%s: truncated file", argv[2]);
        else
            snprintf(where, sizeof where, "%s:%s: ", argv[2], argv[3]);
        expect(st, CMRSCL_ERROR_PARSE, where, -1);
    } else if (strcmp(mode, "missing") == 0) {
        st = cmrscl_dist_create_from_mtx(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, "/no/such/file.mtx",
                                         NULL, &dm);
        expect(st, CMRSCL_ERROR_FILE_IO, "cannot open /no/such/file.mtx", 0);
    } else if (strcmp(mode, "rows") == 0) {
        int64_t rp[] = {0, 1};
        int32_t ci[] = {rank == last ? 99 : rank};
        double v[] = {1.0};
        cmrscl_csr mine = {1, ranks, 1, rp, ci, v};
        st = cmrscl_dist_create(MPI_COMM_WORLD, ctx, CMRSCL_FLOAT, &mine, NULL, &dm);
        expect(st, CMRSCL_ERROR_INVALID_MATRIX, "outside 0..", last);
    } else if (strcmp(mode, "midway") == 0) {
        midway(ctx);
    } else {
        CHECK_MSG(false, "usage: test_dist_errors malformed FILE LINE|missing|device|rows|midway");
    }
    CHECK(dm == NULL);
    cmrscl_context_free(ctx);
    char what[64];
    snprintf(what, sizeof what, "dist errors (%s)", mode);
    return dist_test_finish(what);
}
