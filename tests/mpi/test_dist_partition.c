/* test_dist_partition.c - rows divided by the graph partitioner (CMRSCL_DIST_PARTITION), under
 * mpirun with 2..4 ranks, against the matrix as given. For each matrix (SuiteSparse files, a
 * generated stencil, a grid numbered at random, rows given by hand): the ranks' owned rows
 * are each row exactly once, ascending on each rank; the rows a rank holds, mapped back
 * through the owned rows, are the given matrix's rows; the product on x and y placed by the
 * owned rows is within the rounding bound of the CPU double reference of the given matrix;
 * the halo the plan reports for the graph's parts is the ranks' halos added up, and the
 * choice follows the rule (AUTO: the graph's where its halo is at most 3/4 of the row
 * blocks'); a second creation gives the same rows and the same bits; conjugate gradients on
 * the partitioned matrix solve the given system. Failures agreed by every rank: a rectangular
 * matrix under "graph", an unknown value on one rank, valid values that differ. Without METIS in
 * the build the test says so and skips (77). */
#include "dist_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;
static cmrscl_context ctx;

static double value_at(int64_t i, uint64_t salt) { return dist_value_at(i, salt, CMRSCL_DOUBLE); }

/* Every rank's owned rows in rank order: the library's numbering mapped to the given one. */
static int32_t *all_owned(cmrscl_dist_matrix dm, const cmrscl_dist_plan *p, int32_t *mine)
{
    int *counts = malloc(sizeof *counts * (size_t)ranks), *at = malloc(sizeof *at * (size_t)ranks);
    int32_t *all = malloc(sizeof *all * ((size_t)p->rows + 1));
    CHECK_OK(cmrscl_dist_owned_rows(dm, mine));
    MPI_Allgather(&p->local_rows, 1, MPI_INT32_T, counts, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < ranks; ++r)
        at[r] = r ? at[r - 1] + counts[r - 1] : 0;
    MPI_Allgatherv(mine, p->local_rows, MPI_INT32_T, all, counts, at, MPI_INT32_T, MPI_COMM_WORLD);
    free(counts), free(at);
    return all;
}

/* The owned rows are a permutation, ascending on each rank; the rows held are the given ones. */
static void check_layout(cmrscl_dist_matrix dm, const cmrscl_csr *a, const int32_t *mine,
                         const int32_t *all, const char *what)
{
    cmrscl_dist_plan p;
    cmrscl_dist_matrix_plan(dm, &p);
    char *seen = calloc((size_t)a->rows + 1, 1);
    bool once = true;
    for (int64_t i = 0; i < p.rows; ++i)
        once &= all[i] >= 0 && all[i] < a->rows && !seen[all[i]]++;
    for (int32_t i = 1; i < p.local_rows; ++i)
        once &= mine[i - 1] < mine[i];
    CHECK_MSG(once, "%s: the owned rows are not each row once, ascending per rank", what);
    free(seen);
    cmrscl_csr got;
    CHECK_OK(cmrscl_dist_read_rows(dm, &got));
    int32_t *halo = malloc(sizeof *halo * ((size_t)p.halo + 1));
    CHECK_OK(cmrscl_dist_halo_columns(dm, halo));
    bool same = got.rows == p.local_rows;
    for (int32_t i = 0; same && i < got.rows; ++i) {
        int32_t g = mine[i];
        same = got.row_ptr[i + 1] - got.row_ptr[i] == a->row_ptr[g + 1] - a->row_ptr[g];
        for (int64_t k = got.row_ptr[i]; same && k < got.row_ptr[i + 1]; ++k) {
            int32_t c = got.col_ind[k];
            int32_t column = all[c < p.local_cols ? p.first_col + c : halo[c - p.local_cols]];
            int64_t ka = a->row_ptr[g];
            while (ka < a->row_ptr[g + 1] && a->col_ind[ka] != column)
                ++ka;
            same = ka < a->row_ptr[g + 1] && got.values[k] == a->values[ka];
        }
    }
    CHECK_MSG(same, "%s: rank %d's rows are not the given matrix's", what, rank);
    cmrscl_csr_free(&got);
    free(halo);
    /* The graph's halo the plan reports is the layout's. */
    int64_t halo_here = p.halo, halo_all = 0;
    MPI_Allreduce(&halo_here, &halo_all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (p.partition == CMRSCL_PARTITION_GRAPH)
        CHECK_MSG(p.halo_by_graph == halo_all, "%s: plan's graph halo %lld, the ranks' %lld", what,
                  (long long)p.halo_by_graph, (long long)halo_all);
    else
        CHECK_MSG(p.halo_by_rows == halo_all, "%s: plan's row-block halo %lld, the ranks' %lld",
                  what, (long long)p.halo_by_rows, (long long)halo_all);
}

/* y = 1.5 A x - 0.5 y0 with x and y0 placed by the owned rows, against the given matrix's rows
 * on the CPU; the bits, for the next creation to match. */
static double *check_product(cmrscl_dist_matrix dm, const cmrscl_csr *a, const int32_t *mine,
                             const char *what)
{
    cmrscl_dist_plan p;
    cmrscl_dist_matrix_plan(dm, &p);
    double *x = malloc(sizeof *x * ((size_t)a->cols + 1)),
           *xl = malloc(sizeof *xl * (p.local_cols + 1u));
    double *y0 = malloc(sizeof *y0 * (p.local_rows + 1u)),
           *y = malloc(sizeof *y * (p.local_rows + 1u));
    for (int32_t j = 0; j < a->cols; ++j)
        x[j] = value_at(j, 1);
    for (int32_t i = 0; i < p.local_rows; ++i)
        xl[i] = x[mine[i]], y0[i] = y[i] = value_at(mine[i], 2);
    CHECK_OK(cmrscl_dist_spmv_host(dm, 1.5, xl, -0.5, y));
    /* The given matrix's rows of this rank, in its own columns. */
    cmrscl_csr rows = {p.local_rows, a->cols, 0, malloc(sizeof(int64_t) * (p.local_rows + 1u)),
                       NULL,         NULL};
    rows.row_ptr[0] = 0;
    for (int32_t i = 0; i < p.local_rows; ++i)
        rows.row_ptr[i + 1] = rows.row_ptr[i] + a->row_ptr[mine[i] + 1] - a->row_ptr[mine[i]];
    rows.nnz = rows.row_ptr[p.local_rows];
    rows.col_ind = malloc(sizeof *rows.col_ind * ((size_t)rows.nnz + 1));
    rows.values = malloc(sizeof *rows.values * ((size_t)rows.nnz + 1));
    for (int32_t i = 0; i < p.local_rows; ++i)
        for (int64_t k = a->row_ptr[mine[i]], o = rows.row_ptr[i]; k < a->row_ptr[mine[i] + 1];
             ++k, ++o)
            rows.col_ind[o] = a->col_ind[k], rows.values[o] = a->values[k];
    double ratio = INFINITY;
    CHECK_OK(cmrscl_csr_spmv_check(&rows, 1.5, x, -0.5, y0, y, 0x1p-53, NULL, &ratio));
    CHECK_MSG(ratio <= 1.0, "%s: rank %d: %.3g x the rounding bound", what, rank, ratio);
    cmrscl_csr_free(&rows);
    free(x), free(xl), free(y0);
    return y;
}

/* CG on the partitioned matrix (b = 1 in the given numbering): x solves the given system. */
static void check_solve(cmrscl_dist_matrix dm, const cmrscl_csr *a, const int32_t *mine,
                        const int32_t *all, const char *what)
{
    cmrscl_dist_plan p;
    cmrscl_dist_matrix_plan(dm, &p);
    double *b = malloc(sizeof *b * (p.local_rows + 1u)), *x = calloc(p.local_rows + 1u, sizeof *x);
    for (int32_t i = 0; i < p.local_rows; ++i)
        b[i] = 1.0;
    cmrscl_solve_options opt = {.rtol = 1e-8, .max_iterations = 4000};
    cmrscl_solve_result res;
    CHECK_OK(cmrscl_dist_solve_host(dm, &opt, b, x, &res));
    /* x whole, in the given numbering, on every rank: b - A x on this rank's rows. */
    int *counts = malloc(sizeof *counts * (size_t)ranks), *at = malloc(sizeof *at * (size_t)ranks);
    double *lib = malloc(sizeof *lib * ((size_t)a->rows + 1)),
           *xg = malloc(sizeof *xg * ((size_t)a->rows + 1));
    MPI_Allgather(&p.local_rows, 1, MPI_INT32_T, counts, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < ranks; ++r)
        at[r] = r ? at[r - 1] + counts[r - 1] : 0;
    MPI_Allgatherv(x, p.local_rows, MPI_DOUBLE, lib, counts, at, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int64_t i = 0; i < a->rows; ++i)
        xg[all[i]] = lib[i];
    double rr = 0, all_rr = 0;
    for (int32_t i = 0; i < p.local_rows; ++i) {
        double s = 1.0;
        for (int64_t k = a->row_ptr[mine[i]]; k < a->row_ptr[mine[i] + 1]; ++k)
            s -= a->values[k] * xg[a->col_ind[k]];
        rr += s * s;
    }
    MPI_Allreduce(&rr, &all_rr, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double rel = sqrt(all_rr / (double)a->rows);
    CHECK_MSG(res.converged && rel <= 10 * opt.rtol,
              "%s: CG %s after %d iterations, |b - A x| / |b| = %.3g", what,
              res.converged ? "converged" : "did not converge", res.iterations, rel);
    cmrscl_solve_result_free(&res);
    free(b), free(x), free(counts), free(at), free(lib), free(xg);
}

typedef enum { FROM_FILE, FROM_SPEC, FROM_ROWS } source_kind;

static cmrscl_dist_matrix create(source_kind kind, const char *name, const cmrscl_csr *a)
{
    cmrscl_dist_matrix dm = NULL;
    if (kind == FROM_FILE)
        CHECK_OK(cmrscl_dist_create_from_mtx(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, name, NULL, &dm));
    else if (kind == FROM_SPEC)
        CHECK_OK(cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, name, NULL, &dm));
    else {
        cmrscl_csr mine = dist_even_block(a, rank, ranks);
        CHECK_OK(cmrscl_dist_create(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, &mine, NULL, &dm));
        free(mine.row_ptr);
    }
    return dm;
}

/* One matrix under `partition` ("graph" or "auto"); solve: an SPD matrix, CG checked too. */
static void check_case(source_kind kind, const char *name, const cmrscl_csr *a,
                       const char *partition, bool solve)
{
    char what[4400];
    snprintf(what, sizeof what, "%s (%s, %d ranks)", name, partition, ranks);
    setenv("CMRSCL_DIST_PARTITION", partition, 1);
    cmrscl_dist_matrix dm = create(kind, name, a), again = create(kind, name, a);
    unsetenv("CMRSCL_DIST_PARTITION");
    if (!dm || !again)
        return cmrscl_dist_free(dm), cmrscl_dist_free(again);
    cmrscl_dist_plan p;
    cmrscl_dist_matrix_plan(dm, &p);
    bool graph = p.partition == CMRSCL_PARTITION_GRAPH;
    CHECK_MSG(p.halo_by_rows >= 0 && p.halo_by_graph >= 0 &&
                  graph ==
                      (!strcmp(partition, "graph") || p.halo_by_graph <= 0.75 * p.halo_by_rows),
              "%s: partition %d, halo %lld by the graph, %lld by rows", what, (int)p.partition,
              (long long)p.halo_by_graph, (long long)p.halo_by_rows);
    int32_t *mine = malloc(sizeof *mine * (p.local_rows + 1u)),
            *mine2 = malloc(sizeof *mine2 * (p.local_rows + 1u));
    int32_t *all = all_owned(dm, &p, mine);
    check_layout(dm, a, mine, all, what);
    double *y = check_product(dm, a, mine, what);
    cmrscl_dist_plan p2;
    cmrscl_dist_matrix_plan(again, &p2);
    bool same = p2.local_rows == p.local_rows && p2.partition == p.partition;
    if (same && cmrscl_dist_owned_rows(again, mine2) == CMRSCL_OK)
        same = !memcmp(mine, mine2, sizeof *mine * (size_t)p.local_rows);
    double *y2 = same ? check_product(again, a, mine, what) : NULL;
    CHECK_MSG(same && !memcmp(y, y2, sizeof *y * (size_t)p.local_rows),
              "%s: a second creation gave other rows or other bits", what);
    if (solve)
        check_solve(dm, a, mine, all, what);
    if (rank == 0)
        printf("%s: %s, halo %lld (graph) vs %lld (row blocks)\n", what, graph ? "graph" : "rows",
               (long long)p.halo_by_graph, (long long)p.halo_by_rows);
    free(mine), free(mine2), free(all), free(y), free(y2);
    cmrscl_dist_free(dm), cmrscl_dist_free(again);
}

/* stencil5:n with its rows and columns numbered at random (fixed seed): a mesh as a mesh
 * generator may number it, whose row blocks need most of x. */
static cmrscl_csr shuffled_grid(int n)
{
    char spec[32];
    snprintf(spec, sizeof spec, "stencil5:%d", n);
    cmrscl_csr g, s;
    CHECK_OK(cmrscl_csr_generate(spec, &g));
    int32_t *to = malloc(sizeof *to * (size_t)g.rows),
            *from = malloc(sizeof *from * (size_t)g.rows);
    for (int32_t i = 0; i < g.rows; ++i)
        to[i] = i;
    for (int32_t i = g.rows - 1; i > 0; --i) { /* Fisher-Yates on the hash of i */
        int32_t j = (int32_t)((value_at(i, 7) + 1.0) * 0.5 * (i + 1));
        int32_t t = to[i];
        to[i] = to[j > i ? i : j], to[j > i ? i : j] = t;
    }
    for (int32_t i = 0; i < g.rows; ++i)
        from[to[i]] = i;
    s = (cmrscl_csr){g.rows,
                     g.cols,
                     g.nnz,
                     malloc(sizeof *s.row_ptr * (g.rows + 1u)),
                     malloc(sizeof *s.col_ind * (size_t)g.nnz),
                     malloc(sizeof *s.values * (size_t)g.nnz)};
    s.row_ptr[0] = 0;
    for (int32_t r = 0; r < g.rows; ++r) { /* new row r is old row from[r] */
        int32_t o = from[r];
        s.row_ptr[r + 1] = s.row_ptr[r] + g.row_ptr[o + 1] - g.row_ptr[o];
        for (int64_t k = g.row_ptr[o], d = s.row_ptr[r]; k < g.row_ptr[o + 1]; ++k, ++d)
            s.col_ind[d] = to[g.col_ind[k]], s.values[d] = g.values[k];
    }
    cmrscl_csr_free(&g);
    free(to), free(from);
    return s;
}

/* Failures every rank agrees on. */
static void check_errors(void)
{
    cmrscl_dist_matrix dm = NULL;
    setenv("CMRSCL_DIST_PARTITION", "graph", 1);
    cmrscl_status st =
        cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, "random:300:5", NULL, &dm);
    cmrscl_dist_free(dm), dm = NULL;
    CHECK_OK(st); /* square: partitioned */
    int64_t rp[] = {0, 2, 3, 5, 6};
    int32_t ci[] = {0, 5, 1, 2, 6, 3};
    double v[] = {1, 2, 3, 4, 5, 6};
    cmrscl_csr wide = {4, 7, 6, rp, ci, v};
    int64_t none[] = {0};
    cmrscl_csr mine = rank == 0 ? wide : (cmrscl_csr){0, 7, 0, none, ci, v};
    st = cmrscl_dist_create(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, &mine, NULL, &dm);
    CHECK_MSG(st == CMRSCL_ERROR_UNSUPPORTED && strstr(cmrscl_last_error(), "not square") && !dm,
              "graph on a rectangular matrix: %s (%s)", cmrscl_status_name(st),
              cmrscl_last_error());
    setenv("CMRSCL_DIST_PARTITION", "auto", 1); /* auto: row blocks, no failure */
    CHECK_OK(cmrscl_dist_create(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, &mine, NULL, &dm));
    cmrscl_dist_plan p = {0};
    if (dm)
        cmrscl_dist_matrix_plan(dm, &p);
    CHECK(dm && p.partition == CMRSCL_PARTITION_ROWS);
    cmrscl_dist_free(dm), dm = NULL;
    /* valid settings that differ between the ranks: refused on every rank, none waits */
    setenv("CMRSCL_DIST_PARTITION", rank == ranks - 1 ? "rows" : "graph", 1);
    st = cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, "stencil7:5", NULL, &dm);
    CHECK_MSG(st == CMRSCL_ERROR_INVALID_ARGUMENT &&
                  strstr(cmrscl_last_error(), "CMRSCL_DIST_PARTITION differs between the ranks") &&
                  !dm,
              "partitions that differ: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
    setenv("CMRSCL_DIST_PARTITION", rank == ranks - 1 ? "metis" : "graph", 1); /* one rank */
    st = cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, "stencil7:5", NULL, &dm);
    CHECK_MSG(st == CMRSCL_ERROR_INVALID_ARGUMENT && strstr(cmrscl_last_error(), "'metis'") && !dm,
              "an unknown partition on one rank: %s (%s)", cmrscl_status_name(st),
              cmrscl_last_error());
    unsetenv("CMRSCL_DIST_PARTITION");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    CHECK_OK(cmrscl_dist_context_create(MPI_COMM_WORLD, NULL, &ctx));
    cmrscl_device_info dev = {0};
    bool fp64 = ctx && cmrscl_context_device_info(ctx, &dev) == CMRSCL_OK && dev.fp64;
    /* Is METIS in the build? "graph" on a small square matrix says. */
    cmrscl_dist_matrix probe = NULL;
    setenv("CMRSCL_DIST_PARTITION", "graph", 1);
    cmrscl_status st = fp64 ? cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE,
                                                           "stencil7:4", NULL, &probe)
                            : CMRSCL_OK;
    unsetenv("CMRSCL_DIST_PARTITION");
    cmrscl_dist_free(probe);
    int skip = !fp64 || (st == CMRSCL_ERROR_UNSUPPORTED && strstr(cmrscl_last_error(), "METIS"));
    if (skip) {
        if (rank == 0)
            printf("skipped: %s\n", /* the words tools/ci/test_summary.py groups skips by */
                   !fp64 ? "the device has no fp64 (the checks are in double)"
                         : "this build has no METIS");
        cmrscl_context_free(ctx);
        MPI_Finalize();
        return 77;
    }
    CHECK_OK(st);
    const char *files[] = {"1138_bus.mtx", "cage8.mtx", "west0479.mtx"};
    for (size_t i = 0; i < sizeof files / sizeof *files; ++i) {
        const char *path = test_shared_matrix(files[i]);
        cmrscl_csr a;
        CHECK_OK(cmrscl_mtx_read(path, NULL, &a));
        check_case(FROM_FILE, path, &a, "graph", i == 0);
        check_case(FROM_FILE, path, &a, "auto", false);
        cmrscl_csr_free(&a);
    }
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil7:9", &a));
    check_case(FROM_SPEC, "stencil7:9", &a, "graph", true);
    check_case(FROM_SPEC, "stencil7:9", &a, "auto", false);
    cmrscl_csr_free(&a);
    /* A mesh numbered at random: the graph's parts must win by far, and AUTO take them. */
    cmrscl_csr shuffled = shuffled_grid(40);
    check_case(FROM_ROWS, "stencil5:40 numbered at random", &shuffled, "auto", true);
    cmrscl_dist_matrix dm = NULL;
    setenv("CMRSCL_DIST_PARTITION", "auto", 1);
    cmrscl_csr mine = dist_even_block(&shuffled, rank, ranks);
    CHECK_OK(cmrscl_dist_create(MPI_COMM_WORLD, ctx, CMRSCL_DOUBLE, &mine, NULL, &dm));
    unsetenv("CMRSCL_DIST_PARTITION");
    cmrscl_dist_plan p = {0};
    if (dm)
        cmrscl_dist_matrix_plan(dm, &p);
    CHECK_MSG(p.partition == CMRSCL_PARTITION_GRAPH && 4 * p.halo_by_graph < p.halo_by_rows,
              "a shuffled grid: halo %lld by the graph, %lld by rows", (long long)p.halo_by_graph,
              (long long)p.halo_by_rows);
    free(mine.row_ptr);
    cmrscl_dist_free(dm);
    cmrscl_csr_free(&shuffled);
    check_errors();
    cmrscl_context_free(ctx);
    return dist_test_finish("dist partition");
}
