/* test_dist.c - distributed matrices and products against the serial library, run under
 * mpirun with 1..4 ranks: generated matrices (rows built per rank), the real SuiteSparse
 * files and the corpus's awkward ones (symmetric, skew, pattern, integer, rectangular, empty
 * rows, duplicates), and rows given by hand (a rank owning no rows). For each, in float and
 * double: the ranks' rows read back are exactly the serial CSR's rows (the reader and the
 * split are exact); the remote block holds exactly the rows with remote entries; the
 * communication plan is consistent across ranks; the distributed
 * product equals the serial cmrscl product bit for bit on one rank (same matrix, same plan),
 * and on more ranks is within the rounding bound of the CPU double reference, and bit for
 * bit on the rows without remote entries when both use csr-vector (a per-row summation
 * order that does not depend on where a row sits); products back to back equal the same
 * products made alone. Every rank checks its own part; the exit status is agreed. */
#include "dist_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, ranks;
static cmrscl_context ctx;
static bool fp64; /* the device's: without it the double cases are not run (main says so) */

/* The rows read back, in global columns, are the serial rows (values rounded). */
static void check_rows(cmrscl_dist_matrix dm, const cmrscl_csr *a, cmrscl_precision p,
                       const char *what)
{
    cmrscl_dist_plan plan;
    CHECK_OK(cmrscl_dist_matrix_plan(dm, &plan));
    CHECK_MSG(plan.rows == a->rows && plan.cols == a->cols && plan.nnz == a->nnz &&
                  plan.ranks == ranks && plan.rank == rank,
              "%s: plan %lld x %lld, nnz %lld", what, (long long)plan.rows, (long long)plan.cols,
              (long long)plan.nnz);
    /* The tests' ranks share one host: the window (halos or whole slices, whichever moves
     * fewer bytes) unless the environment says which. */
    const char *env = getenv("CMRSCL_DIST_EXCHANGE");
    bool messages = ranks == 1 || (env && strcmp(env, "messages") == 0);
    bool slices = env && strcmp(env, "slices") == 0, shared = env && strcmp(env, "shared") == 0;
    CHECK_MSG(messages ? plan.exchange == CMRSCL_EXCHANGE_MESSAGES
              : slices ? plan.exchange == CMRSCL_EXCHANGE_SLICES
              : shared ? plan.exchange == CMRSCL_EXCHANGE_SHARED
                       : plan.exchange != CMRSCL_EXCHANGE_MESSAGES,
              "%s: exchange %d on %d ranks", what, (int)plan.exchange, ranks);
    int32_t *halo = malloc(sizeof *halo * ((size_t)plan.halo + 1));
    CHECK_OK(cmrscl_dist_halo_columns(dm, halo));
    for (int32_t h = 1; h < plan.halo; ++h)
        CHECK_MSG(halo[h - 1] < halo[h], "%s: halo not ascending", what);
    cmrscl_csr got;
    CHECK_OK(cmrscl_dist_read_rows(dm, &got));
    /* A row holds its local columns, then its halo columns: compared in global order. */
    bool same = got.rows == plan.local_rows && got.cols == plan.local_cols + plan.halo;
    for (int32_t i = 0; same && i < got.rows; ++i) {
        int32_t gi = plan.first_row + i, n = got.row_ptr[i + 1] - got.row_ptr[i];
        same = n == a->row_ptr[gi + 1] - a->row_ptr[gi];
        for (int32_t k = 0; same && k < n; ++k) {
            int32_t c = got.col_ind[got.row_ptr[i] + k];
            int32_t global = c < plan.local_cols ? plan.first_col + c : halo[c - plan.local_cols];
            int64_t ka = a->row_ptr[gi];
            while (ka < a->row_ptr[gi + 1] && a->col_ind[ka] != global)
                ++ka;
            double want = ka < a->row_ptr[gi + 1] ? a->values[ka] : NAN;
            want = p == CMRSCL_FLOAT ? (double)(float)want : want;
            double have = got.values[got.row_ptr[i] + k];
            same = ka < a->row_ptr[gi + 1] && (have == want || (isnan(want) && isnan(have)));
        }
    }
    CHECK_MSG(same, "%s: rank %d's rows differ from the serial CSR", what, rank);
    cmrscl_csr_free(&got);
    free(halo);

    /* The remote block's rows are the serial rows with a column outside this rank's. */
    int32_t *remote_rows = malloc(sizeof *remote_rows * ((size_t)plan.remote_rows + 1)), n = 0;
    CHECK_OK(cmrscl_dist_remote_rows(dm, remote_rows));
    same = true;
    for (int32_t i = 0; i < plan.local_rows; ++i) {
        int32_t gi = plan.first_row + i;
        bool remote = false;
        for (int64_t k = a->row_ptr[gi]; k < a->row_ptr[gi + 1]; ++k)
            remote |=
                a->col_ind[k] < plan.first_col || a->col_ind[k] >= plan.first_col + plan.local_cols;
        if (remote)
            same &= n < plan.remote_rows && remote_rows[n++] == i;
    }
    CHECK_MSG(same && n == plan.remote_rows, "%s: rank %d: %d remote rows, %d expected", what, rank,
              plan.remote_rows, n);
    free(remote_rows);

    /* What a rank sends to q is what q receives from it. */
    int *sent_to = calloc((size_t)ranks, sizeof *sent_to);
    int *recv_from = calloc((size_t)ranks, sizeof *recv_from);
    int *told = calloc((size_t)ranks, sizeof *told);
    int nb = 0, nbr[64];
    int32_t rc[64], sc[64];
    CHECK_OK(cmrscl_dist_neighbours(dm, 64, nbr, rc, sc, &nb));
    CHECK(nb == plan.neighbours);
    int64_t total_recv = 0, total_sent = 0;
    for (int k = 0; k < nb && k < 64; ++k) {
        sent_to[nbr[k]] = sc[k], recv_from[nbr[k]] = rc[k];
        total_recv += rc[k], total_sent += sc[k];
        CHECK(nbr[k] != rank && (k == 0 || nbr[k - 1] < nbr[k]));
    }
    CHECK_MSG(total_recv == plan.halo && total_sent == plan.sent, "%s: counts", what);
    MPI_Alltoall(sent_to, 1, MPI_INT, told, 1, MPI_INT, MPI_COMM_WORLD);
    for (int q = 0; q < ranks; ++q)
        CHECK_MSG(told[q] == recv_from[q], "%s: rank %d sends %d, rank %d expects %d", what, q,
                  told[q], rank, recv_from[q]);
    free(sent_to), free(recv_from), free(told);
}

/* The distributed product against the serial one, in place: y = alpha*A*x + beta*y0. */
static void check_product(cmrscl_dist_matrix dm, const cmrscl_csr *a, cmrscl_precision p,
                          const cmrscl_options *opt, double beta, const char *what)
{
    cmrscl_dist_plan plan;
    cmrscl_dist_matrix_plan(dm, &plan);
    double alpha = 1.5, *x = malloc(sizeof *x * ((size_t)a->cols + 1));
    double *y0 = malloc(sizeof *y0 * ((size_t)a->rows + 1));
    for (int32_t j = 0; j < a->cols; ++j)
        x[j] = dist_value_at(j, 1, p);
    for (int32_t i = 0; i < a->rows; ++i)
        y0[i] = dist_value_at(i, 2, p);
    /* Serial: the whole matrix on this rank's device. */
    cmrscl_matrix sm = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, a, opt, &sm));
    void *xs = test_values_in(x, a->cols, p), *ys = test_values_in(y0, a->rows, p);
    CHECK_OK(cmrscl_spmv_host(sm, alpha, xs, beta, ys));
    /* Distributed: this rank's slices. */
    void *xl = test_values_in(x + plan.first_col, plan.local_cols, p);
    void *yl = test_values_in(y0 + plan.first_row, plan.local_rows, p);
    CHECK_OK(cmrscl_dist_spmv_host(dm, alpha, xl, beta, yl));
    cmrscl_csr rows;
    CHECK_OK(cmrscl_dist_read_rows(dm, &rows));
    int32_t *halo = malloc(sizeof *halo * ((size_t)plan.halo + 1));
    cmrscl_dist_halo_columns(dm, halo);
    double *xc = malloc(sizeof *xc * ((size_t)rows.cols + 1)),
           *yd = malloc(sizeof *yd * ((size_t)rows.rows + 1));
    for (int32_t c = 0; c < rows.cols; ++c)
        xc[c] = x[c < plan.local_cols ? plan.first_col + c : halo[c - plan.local_cols]];
    int32_t differ = 0, differ_no_halo = 0;
    for (int32_t i = 0; i < plan.local_rows; ++i) {
        double d = test_value_at(yl, p, i), s = test_value_at(ys, p, plan.first_row + i);
        yd[i] = d;
        bool remote = rows.row_ptr[i + 1] > rows.row_ptr[i] &&
                      rows.col_ind[rows.row_ptr[i + 1] - 1] >= plan.local_cols;
        if (!(d == s || (isnan(d) && isnan(s)))) {
            differ++;
            differ_no_halo += !remote;
        }
    }
    double ratio = INFINITY;
    CHECK_OK(cmrscl_csr_spmv_check(&rows, alpha, xc, beta, y0 + plan.first_row, yd,
                                   p == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, NULL, &ratio));
    CHECK_MSG(ratio <= 1.0, "%s: rank %d: %.3g x the rounding bound", what, rank, ratio);
    if (ranks == 1)
        CHECK_MSG(differ == 0, "%s: %d rows differ from the serial product on one rank", what,
                  differ);
    else if (opt)
        CHECK_MSG(differ_no_halo == 0, "%s: rank %d: %d rows without remote entries differ", what,
                  rank, differ_no_halo);
    cmrscl_matrix_free(sm);
    cmrscl_csr_free(&rows);
    free(x), free(y0), free(xs), free(ys), free(xl), free(yl), free(xc), free(yd), free(halo);
}

/* n values on the device (NULL for none), written from the host. */
static cl_mem device_values(const void *host, int32_t n, cmrscl_precision p)
{
    cl_context cl = NULL;
    cl_int err = CL_SUCCESS;
    CHECK_OK(cmrscl_context_cl(ctx, &cl, NULL));
    size_t bytes = (p == CMRSCL_FLOAT ? sizeof(float) : sizeof(double)) * (size_t)n;
    cl_mem b = n > 0 ? clCreateBuffer(cl, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0),
                                      bytes, (void *)host, &err)
                     : NULL;
    CHECK(err == CL_SUCCESS);
    return b;
}

/* Products back to back on device buffers, nothing waited for between them, each with its own
 * x: each equals the same product made alone, bit for bit. The exchange reuses its staging,
 * halo and remote buffers product after product; a product that overwrote them before the one
 * before it had read them would differ. */
static void check_back_to_back(cmrscl_dist_matrix dm, cmrscl_precision p, const char *what)
{
    enum { N = 3 };
    cmrscl_dist_plan plan;
    cmrscl_dist_matrix_plan(dm, &plan);
    cl_command_queue queue = NULL;
    CHECK_OK(cmrscl_context_cl(ctx, NULL, &queue));
    size_t bytes = (p == CMRSCL_FLOAT ? sizeof(float) : sizeof(double)) * (size_t)plan.local_rows;
    double *x = malloc(sizeof *x * ((size_t)plan.local_cols + 1));
    void *xh[N], *got[N], *alone[N];
    cl_mem xd[N], yd[N];
    for (int k = 0; k < N; ++k) {
        for (int32_t j = 0; j < plan.local_cols; ++j)
            x[j] = dist_value_at(plan.first_col + j, 10 + (uint64_t)k, p);
        xh[k] = test_values_in(x, plan.local_cols, p);
        xd[k] = device_values(xh[k], plan.local_cols, p);
        yd[k] = device_values(NULL, plan.local_rows, p);
        got[k] = malloc(bytes + 1), alone[k] = malloc(bytes + 1);
    }
    for (int k = 0; k < N; ++k)
        CHECK_OK(cmrscl_dist_spmv(dm, 1.0, xd[k], 0.0, yd[k]));
    for (int k = 0; k < N; ++k)
        if (bytes > 0)
            CHECK(clEnqueueReadBuffer(queue, yd[k], CL_TRUE, 0, bytes, got[k], 0, NULL, NULL) ==
                  CL_SUCCESS);
    for (int k = 0; k < N; ++k) {
        CHECK_OK(cmrscl_dist_spmv_host(dm, 1.0, xh[k], 0.0, alone[k]));
        CHECK_MSG(memcmp(got[k], alone[k], bytes) == 0,
                  "%s: rank %d: product %d of %d back to back differs from it alone", what, rank,
                  k + 1, N);
        if (xd[k])
            clReleaseMemObject(xd[k]);
        if (yd[k])
            clReleaseMemObject(yd[k]);
        free(xh[k]), free(got[k]), free(alone[k]);
    }
    free(x);
}

typedef enum { FROM_SPEC, FROM_FILE, FROM_ROWS } source_kind;

/* One matrix: both precisions, the automatic plan and csr-vector, beta 0 and not. */
static void check_case(source_kind kind, const char *name, const cmrscl_csr *a)
{
    cmrscl_options csr_vector = {.kernel = CMRSCL_KERNEL_STRIP, .height = 1, .warp = 8, .tile = -1};
    for (int pi = 0; pi < 2 - !fp64; ++pi) {
        cmrscl_precision p = pi ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
        for (int oi = 0; oi < 2; ++oi) {
            const cmrscl_options *opt = oi ? &csr_vector : NULL;
            char what[4400];
            snprintf(what, sizeof what, "%s (%s, %s, %d ranks)", name, pi ? "double" : "float",
                     oi ? "csr-vector" : "auto", ranks);
            cmrscl_dist_matrix dm = NULL;
            cmrscl_csr mine = {0};
            if (kind == FROM_SPEC) {
                CHECK_OK(cmrscl_dist_create_generated(MPI_COMM_WORLD, ctx, p, name, opt, &dm));
            } else if (kind == FROM_FILE) {
                CHECK_OK(cmrscl_dist_create_from_mtx(MPI_COMM_WORLD, ctx, p, name, opt, &dm));
            } else { /* an even block of rows each, by hand */
                mine = dist_even_block(a, rank, ranks);
                CHECK_OK(cmrscl_dist_create(MPI_COMM_WORLD, ctx, p, &mine, opt, &dm));
                free(mine.row_ptr);
            }
            if (!dm)
                continue;
            if (strstr(name, "bidiagonal") && ranks > 1) { /* the paths it is here for */
                cmrscl_dist_plan plan;
                CHECK_OK(cmrscl_dist_matrix_plan(dm, &plan));
                bool last = rank == ranks - 1, first = rank == 0;
                CHECK_MSG((plan.sent == 0) == last && (plan.halo == 0) == first &&
                              plan.remote_rows == (first ? 0 : 1),
                          "%s: rank %d sends %d, receives %d, %d remote rows", what, rank,
                          plan.sent, plan.halo, plan.remote_rows);
            }
            check_rows(dm, a, p, what);
            check_product(dm, a, p, opt, oi ? 0.0 : -0.5, what);
            check_back_to_back(dm, p, what);
            cmrscl_dist_free(dm);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    CHECK_OK(cmrscl_dist_context_create(MPI_COMM_WORLD, NULL, &ctx));
    cmrscl_device_info dev = {0};
    if (ctx && cmrscl_context_device_info(ctx, &dev) == CMRSCL_OK)
        fp64 = dev.fp64;
    if (ctx && !fp64 && rank == 0)
        printf("test_dist: the double cases not run (not checked): the device has no fp64\n");
    const char *specs[] = {"stencil27:7", "stencil7:9",        "random:300:5",
                           "fem:2:3",     "skewed:200:2:2:60", "perm:50"};
    for (size_t i = 0; ctx && i < sizeof specs / sizeof *specs; ++i) {
        cmrscl_csr a;
        CHECK_OK(cmrscl_csr_generate(specs[i], &a));
        check_case(FROM_SPEC, specs[i], &a);
        cmrscl_csr_free(&a);
    }
    const char *files[] = {"1138_bus.mtx", "west0479.mtx",  "lp_ship04l.mtx",
                           "illc1850.mtx", "commanche.mtx", "Trefethen_2000.mtx"};
    const char *corpus[] = {"mtx/good/skew.mtx", "mtx/good/duplicates.mtx", "mtx/good/tall.mtx",
                            "mtx/good/no_entries.mtx", "mtx/good/pattern_symmetric.mtx"};
    for (size_t i = 0; ctx && i < sizeof files / sizeof *files + sizeof corpus / sizeof *corpus;
         ++i) {
        char path[4096];
        size_t nf = sizeof files / sizeof *files;
        snprintf(path, sizeof path, "%s",
                 i < nf ? test_shared_matrix(files[i]) : test_data(corpus[i - nf]));
        cmrscl_csr a;
        CHECK_OK(cmrscl_mtx_read(path, NULL, &a));
        check_case(FROM_FILE, path, &a);
        cmrscl_csr_free(&a);
    }
    /* By hand: 7 x 5 with empty rows (rectangular), and 3 x 3 (more ranks than rows at 4). */
    int64_t rp[] = {0, 2, 2, 3, 3, 6, 6, 8};
    int32_t ci[] = {0, 4, 2, 0, 1, 3, 1, 4};
    double v[] = {1, 2, 3, 4, 5, 6, 7, 8};
    cmrscl_csr tall = {7, 5, 8, rp, ci, v};
    int64_t rp3[] = {0, 2, 3, 5};
    int32_t ci3[] = {0, 2, 1, 0, 2};
    double v3[] = {4, -1, 4, -1, 4};
    cmrscl_csr small = {3, 3, 5, rp3, ci3, v3};
    /* Lower bidiagonal, 40 x 40: each rank but the first receives x[first_row - 1] and each but
     * the last sends its last entry, so the last rank receives without sending (its halo
     * write ordered by a marker) and the first sends without receiving. */
    enum { BIDIAGONAL = 40 };
    int64_t rpb[BIDIAGONAL + 1];
    int32_t cib[2 * BIDIAGONAL];
    double vb[2 * BIDIAGONAL];
    int64_t nb = 0;
    for (int32_t i = 0; i < BIDIAGONAL; ++i) {
        rpb[i] = nb;
        if (i > 0)
            cib[nb] = i - 1, vb[nb++] = -1.0 - i;
        cib[nb] = i, vb[nb++] = 2.0 + i;
    }
    rpb[BIDIAGONAL] = nb;
    cmrscl_csr bidiagonal = {BIDIAGONAL, BIDIAGONAL, nb, rpb, cib, vb};
    if (ctx) {
        check_case(FROM_ROWS, "7x5 by hand", &tall);
        check_case(FROM_ROWS, "3x3 by hand", &small);
        check_case(FROM_ROWS, "lower bidiagonal by hand", &bidiagonal);
    }
    cmrscl_context_free(ctx);
    return dist_test_finish("dist");
}
