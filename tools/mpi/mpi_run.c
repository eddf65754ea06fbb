/* mpi_run.c - one distributed configuration: create, verify, time, reduce (mpi_run.h). */
#include "mpi_run.h"
#include "bench.h"
#include "plans.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double mpi_value_at(int64_t i, uint64_t salt, cmrscl_precision p)
{
    uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15ull + salt;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    double v = (double)(z >> 11) * 0x1p-53 * 2.0 - 1.0;
    return p == CMRSCL_FLOAT ? (double)(float)v : v;
}

/* This rank's slices of x and y0 (y0 NaN when beta = 0: a read of y would show). */
static bool make_vectors(const cmrscl_dist_plan *p, double beta, double **x, double **y0)
{
    *x = malloc(sizeof **x * ((size_t)p->local_cols + 1));
    *y0 = malloc(sizeof **y0 * ((size_t)p->local_rows + 1));
    for (int32_t j = 0; *x && j < p->local_cols; ++j)
        (*x)[j] = mpi_value_at(p->first_col + j, 1, p->precision);
    for (int32_t i = 0; *y0 && i < p->local_rows; ++i)
        (*y0)[i] = beta == 0.0 ? NAN : mpi_value_at(p->first_row + i, 2, p->precision);
    return *x && *y0;
}

/* This rank's rows against the CPU double reference: sums for the relative error, and the
 * worst ratio to the rounding bound. */
static cmrscl_status check_rows(cmrscl_dist_matrix dm, const cli_options *opt, const double *y0,
                                const double *y, double sums[2], double *ratio)
{
    cmrscl_dist_plan p;
    cmrscl_dist_matrix_plan(dm, &p);
    cmrscl_csr rows;
    cmrscl_status st = cmrscl_dist_read_rows(dm, &rows);
    if (st != CMRSCL_OK)
        return st;
    int32_t *halo = malloc(sizeof *halo * ((size_t)p.halo + 1));
    double *xc = malloc(sizeof *xc * ((size_t)rows.cols + 1));
    double *ref = malloc(sizeof *ref * ((size_t)rows.rows + 1));
    if (!halo || !xc || !ref)
        st = cmrscl_set_error(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the check");
    if (st == CMRSCL_OK)
        st = cmrscl_dist_halo_columns(dm, halo);
    for (int32_t c = 0; st == CMRSCL_OK && c < rows.cols; ++c)
        xc[c] = mpi_value_at(c < p.local_cols ? p.first_col + c : halo[c - p.local_cols], 1,
                             p.precision);
    for (int32_t i = 0; st == CMRSCL_OK && i < rows.rows; ++i)
        ref[i] = y0[i];
    if (st == CMRSCL_OK)
        st = cmrscl_csr_spmv(&rows, opt->alpha, xc, opt->beta, ref);
    for (int32_t i = 0; st == CMRSCL_OK && i < rows.rows; ++i)
        if (isfinite(ref[i]) && isfinite(y[i]))
            sums[0] += (y[i] - ref[i]) * (y[i] - ref[i]), sums[1] += ref[i] * ref[i];
    if (st == CMRSCL_OK)
        st = cmrscl_csr_spmv_check(&rows, opt->alpha, xc, opt->beta, y0, y,
                                   p.precision == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, NULL, ratio);
    free(halo), free(xc), free(ref);
    cmrscl_csr_free(&rows);
    return st;
}

/* One product, read back and checked; the verdict combined over the ranks. */
static int verify(cmrscl_context ctx, cmrscl_dist_matrix dm, cl_mem x, cl_mem y, const double *y0,
                  const cli_options *opt, mpi_result *r)
{
    cmrscl_dist_plan p;
    cmrscl_dist_matrix_plan(dm, &p);
    cmrscl_status st = cmrscl_dist_spmv(dm, opt->alpha, x, opt->beta, y);
    if (st != CMRSCL_OK)
        return mpi_fail("spmv", st);
    cl_context cl;
    cl_command_queue q;
    cmrscl_context_cl(ctx, &cl, &q);
    size_t vs = p.precision == CMRSCL_FLOAT ? 4 : 8, n = (size_t)p.local_rows;
    char *raw = malloc(vs * (n + 1));
    double *yv = malloc(sizeof *yv * (n + 1)), sums[2] = {0, 0}, all[2] = {0, 0}, ratio = INFINITY;
    cl_int err = !raw || !yv ? CL_OUT_OF_HOST_MEMORY
                 : n > 0     ? clEnqueueReadBuffer(q, y, CL_TRUE, 0, vs * n, raw, 0, NULL, NULL)
                             : CL_SUCCESS;
    for (size_t i = 0; err == CL_SUCCESS && i < n; ++i)
        yv[i] = vs == 4 ? (double)((float *)raw)[i] : ((double *)raw)[i];
    st = err == CL_SUCCESS ? check_rows(dm, opt, y0, yv, sums, &ratio)
                           : cmrscl_set_error(CMRSCL_ERROR_OPENCL, "reading y back failed");
    free(raw), free(yv);
    int failed = st != CMRSCL_OK, any = 0;
    if (failed) /* this rank's own failure, printed where its details are */
        cli_fail("verification", st);
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(sums, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&ratio, &r->bound_ratio, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    r->relative_error = all[1] > 0 ? sqrt(all[0] / all[1]) : sqrt(all[0]);
    r->verified = true;
    return any ? EXIT_RUN_FAILED : 0;
}

/* "P:D name" of this rank's device, its rows, entries, halo and neighbours, and both plans. */
static void rank_line(cmrscl_context ctx, cmrscl_dist_matrix dm, char *line)
{
    cmrscl_dist_plan p;
    cmrscl_dist_matrix_plan(dm, &p);
    cmrscl_device_info dev = {0};
    cmrscl_context_device_info(ctx, &dev);
    int ranks[16], count = 0;
    cmrscl_dist_neighbours(dm, 16, ranks, NULL, NULL, &count);
    char nb[64] = "", plans[2][128] = {"-", "-"};
    for (int k = 0, at = 0; k < count && k < 16 && at < 56; ++k)
        at += snprintf(nb + at, sizeof nb - (size_t)at, "%s%d", k ? "," : "", ranks[k]);
    if (count > 16)
        snprintf(nb + strlen(nb), sizeof nb - strlen(nb), ",...");
    cmrscl_matrix blocks[2];
    cmrscl_dist_blocks(dm, &blocks[0], &blocks[1]);
    for (int b = 0; b < 2; ++b) {
        cmrscl_params params = CMRSCL_PARAMS_INIT;
        if (blocks[b] && cmrscl_matrix_params(blocks[b], &params) == CMRSCL_OK)
            plan_describe(&params, plans[b], sizeof plans[b]);
    }
    char device[160];
    snprintf(device, sizeof device, "%u:%u %s", dev.platform_index, dev.device_index,
             dev.device_name);
    snprintf(line, MPI_RANK_LINE, "%4d  %-24.24s %10d %12lld %9d %9d %9d  %-10s %s | %s", p.rank,
             device, p.local_rows, (long long)p.local_nnz + (long long)p.remote_nnz, p.remote_rows,
             p.halo, p.sent, *nb ? nb : "-", plans[0], plans[1]);
}

/* The slowest rank's times, the halo totals and every rank's line, for rank 0. */
static void reduce(cmrscl_context ctx, cmrscl_dist_matrix dm, mpi_result *r)
{
    cmrscl_dist_timing *t = &r->t;
    double device_ms = t->local_ms + t->remote_ms; /* this rank's */
    MPI_Allreduce(&device_ms, &r->device_sum_ms, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double mine[] = {t->loop_ms,   t->serial_loop_ms,   t->product_ms,  t->local_ms,
                     t->remote_ms, t->pack_ms,          t->exchange_ms, t->unpack_ms,
                     t->wait_ms,   t->communication_ms, r->setup_s},
           worst[11];
    MPI_Allreduce(mine, worst, 11, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double *f[] = {&t->loop_ms,   &t->serial_loop_ms,   &t->product_ms,  &t->local_ms,
                   &t->remote_ms, &t->pack_ms,          &t->exchange_ms, &t->unpack_ms,
                   &t->wait_ms,   &t->communication_ms, &r->setup_s};
    for (int i = 0; i < 11; ++i)
        *f[i] = worst[i];
    double saved = t->serial_loop_ms - t->loop_ms;
    t->hidden = t->communication_ms > 0 && saved > 0 ? fmin(1.0, saved / t->communication_ms) : 0;
    int64_t halo = r->plan.halo;
    MPI_Allreduce(&halo, &r->halo_total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&halo, &r->halo_max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    char line[MPI_RANK_LINE];
    rank_line(ctx, dm, line);
    r->rank_lines =
        r->plan.rank == 0 ? malloc((size_t)r->plan.ranks * sizeof *r->rank_lines) : NULL;
    MPI_Gather(line, MPI_RANK_LINE, MPI_CHAR, r->rank_lines, MPI_RANK_LINE, MPI_CHAR, 0,
               MPI_COMM_WORLD);
}

/* The whole matrix on rank 0's device, timed back to back like the ranks: the one-device
 * time they are compared with, where the matrix is small enough for one rank to hold it
 * (summing the ranks' device times misjudges small matrices, whose products are mostly
 * launch and wait). Rank 0 alone; -1 where not measured. */
enum { MPI_ONE_DEVICE_MAX_ENTRIES = 1 << 26 };
static double time_one_device(cmrscl_context ctx, const char *input, bool is_gen,
                              const cli_options *opt, cmrscl_precision p, const mpi_result *r)
{
    if (r->plan.rank != 0 || r->plan.ranks == 1 || r->plan.nnz > MPI_ONE_DEVICE_MAX_ENTRIES ||
        strcmp(opt->command, "spmv") != 0) /* bench: its table compares the ranks alone */
        return -1;
    cmrscl_csr a;
    if ((is_gen ? cmrscl_csr_generate(input, &a) : cmrscl_mtx_read(input, NULL, &a)) != CMRSCL_OK)
        return -1;
    cl_context cl;
    cl_command_queue q;
    cmrscl_context_cl(ctx, &cl, &q);
    size_t n = (size_t)(a.rows > a.cols ? a.rows : a.cols);
    double *ones = malloc(sizeof *ones * (n + 1)), ms = -1;
    for (size_t i = 0; ones && i < n; ++i)
        ones[i] = 1.0;
    cl_int ex = CL_SUCCESS, ey = CL_SUCCESS;
    cl_mem x = ones ? bench_upload(cl, ones, (size_t)a.cols, p, &ex) : NULL;
    cl_mem y = ones ? bench_upload(cl, ones, (size_t)a.rows, p, &ey) : NULL;
    cmrscl_matrix m = NULL;
    cmrscl_timing t;
    if ((x || a.cols == 0) && (y || a.rows == 0) &&
        cmrscl_matrix_create_from_csr(ctx, p, &a, &opt->matrix, &m) == CMRSCL_OK &&
        cmrscl_spmv_time(m, 1.0, x, 0.0, y, opt->warmup, opt->repetitions, &t) == CMRSCL_OK)
        ms = t.loop_ms;
    cmrscl_matrix_free(m);
    if (x)
        clReleaseMemObject(x);
    if (y)
        clReleaseMemObject(y);
    free(ones);
    cmrscl_csr_free(&a);
    return ms;
}

static cmrscl_status create(cmrscl_context ctx, const char *input, bool is_gen,
                            const cli_options *opt, cmrscl_precision precision,
                            cmrscl_dist_matrix *dm)
{
    if (is_gen)
        return cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, precision, input, &opt->matrix,
                                            dm);
    return cmrscl_dist_create_from_mtx(MPI_COMM_WORLD, ctx, precision, input, &opt->matrix, dm);
}

int mpi_run(cmrscl_context ctx, const char *input, bool is_gen, const cli_options *opt,
            cmrscl_precision precision, mpi_result *r)
{
    memset(r, 0, sizeof *r);
    const char *base = is_gen ? NULL : strrchr(input, '/');
    snprintf(r->name, sizeof r->name, "%s", base ? base + 1 : input);
    r->generated = is_gen;
    cmrscl_dist_matrix dm = NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = cli_seconds();
    cmrscl_status st = create(ctx, input, is_gen, opt, precision, &dm);
    r->setup_s = cli_seconds() - t0;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (st != CMRSCL_OK)
        return mpi_fail("creating the distributed matrix", st);
    cmrscl_dist_matrix_plan(dm, &r->plan);
    cl_context cl;
    cl_command_queue q;
    cmrscl_context_cl(ctx, &cl, &q);
    double *x = NULL, *y0 = NULL;
    cl_int ex = CL_SUCCESS, ey = CL_SUCCESS;
    bool made = make_vectors(&r->plan, opt->beta, &x, &y0);
    cl_mem dx = made ? bench_upload(cl, x, r->plan.local_cols, precision, &ex) : NULL;
    cl_mem dy = made ? bench_upload(cl, y0, r->plan.local_rows, precision, &ey) : NULL;
    int failed = !dx || !dy, any = 0, rc = 0;
    if (failed)
        fprintf(stderr, "%s: rank %d: x and y on the device failed (OpenCL error %d)\n", cli_name,
                rank, (int)(ex != CL_SUCCESS ? ex : ey));
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rc = any ? EXIT_RUN_FAILED : 0;
    if (!rc && opt->verify)
        rc = verify(ctx, dm, dx, dy, y0, opt, r);
    if (!rc) {
        st = cmrscl_dist_spmv_time(dm, opt->alpha, dx, opt->beta, dy, opt->warmup, opt->repetitions,
                                   &r->t);
        rc = st == CMRSCL_OK ? 0 : mpi_fail("timing", st);
    }
    if (!rc)
        reduce(ctx, dm, r);
    r->one_device_ms = rc ? -1 : time_one_device(ctx, input, is_gen, opt, precision, r);
    if (dx)
        clReleaseMemObject(dx);
    if (dy)
        clReleaseMemObject(dy);
    free(x), free(y0);
    cmrscl_dist_free(dm);
    return rc;
}

int mpi_fail(const char *what, cmrscl_status status)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        return cli_fail(what, status);
    return status == CMRSCL_ERROR_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_RUN_FAILED;
}

void mpi_result_free(mpi_result *r)
{
    free(r->rank_lines);
    r->rank_lines = NULL;
}

bool mpi_result_passed(const mpi_result *r) { return !r->verified || r->bound_ratio <= 1.0; }

const char *mpi_exchange_name(cmrscl_dist_exchange e)
{
    switch (e) {
    case CMRSCL_EXCHANGE_SHARED: return "through a shared-memory window";
    case CMRSCL_EXCHANGE_SLICES:
        return "as whole slices of x through a shared-memory window (one read a rank)";
    default: return "by MPI messages through pinned host memory";
    }
}
