/* test_renumber.c - renumbered matrices (cmrscl_options.renumber HUBS: P A P^T on the device,
 * host/format/renumber.c, host/exec/matrix_renumber.c) on the device chosen by CMRSCL_DEVICE:
 * - the stored matrix is P A P^T with P the hub sort (the rows longer than the mean first by
 *   descending length, ties in order, then the others in order): read back, each stored row is
 *   the renumbered row of A, entry by entry, its columns ascending;
 * - cmrscl_plan gives the plan the matrix was made with (P A P^T's);
 * - products in the caller's numbering against the CPU double reference for each (alpha, beta)
 *   of the grid (beta 0: y NaN, never read), A and A^T, forced families among them (a split
 *   strip plan with its long rows), float and double where the device has them;
 * - a values update in the caller's entry order, then the products again on the new values;
 * - CG, Jacobi-CG, BiCGStab, and CG, BiCGStab and GMRES with AMG solve in the caller's
 *   numbering: converged, the true residual met on the CPU, the iterations of the matrix without
 *   renumbering give or take rounding (CG within 5%);
 * - products of one renumbered matrix from four threads on one queue, each right; a solve on an
 *   out-of-order queue gives the in-order queue's bits;
 * - what is refused, with a message naming it: rectangular matrices, the block product,
 *   recorded products, values from a cl_mem, matrices made on the device; bad enum values. */
#include "test_util.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cmrscl_context ctx;
static bool fp64;

static cmrscl_options hubs(cmrscl_kernel kernel, int tile)
{
    cmrscl_options o = {0};
    o.renumber = CMRSCL_RENUMBER_HUBS;
    o.kernel = kernel, o.tile = tile;
    return o;
}

/* The stored arrays read back: P A P^T, P by descending length with ties in order. */
static void check_stored(cmrscl_matrix m, const cmrscl_csr *a, const char *what)
{
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_params(m, &p));
    CHECK_MSG(p.renumber == CMRSCL_RENUMBER_HUBS && strstr(p.plan_reason, "renumbered"),
              "%s: params.renumber %d, reason \"%s\"", what, (int)p.renumber, p.plan_reason);
    cmrscl_cmrs c;
    cmrscl_csr s;
    CHECK_OK(cmrscl_matrix_read_cmrs(m, &c));
    CHECK_OK(cmrscl_cmrs_to_csr(&c, &s));
    cmrscl_cmrs_free(&c);
    /* P from the lengths alone, as the library defines it */
    int32_t n = a->rows, *order = malloc(sizeof(int32_t) * (size_t)(n ? n : 1)), at = 0;
    int32_t *inverse = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    int64_t longest = 0;
    double mean = n ? (double)a->nnz / n : 0;
    for (int32_t r = 0; r < n; ++r)
        longest = a->row_ptr[r + 1] - a->row_ptr[r] > longest ? a->row_ptr[r + 1] - a->row_ptr[r]
                                                              : longest;
    for (int64_t l = longest; l > mean; --l)
        for (int32_t r = 0; r < n; ++r)
            if (a->row_ptr[r + 1] - a->row_ptr[r] == l)
                inverse[r] = at, order[at++] = r;
    for (int32_t r = 0; r < n; ++r)
        if ((double)(a->row_ptr[r + 1] - a->row_ptr[r]) <= mean)
            inverse[r] = at, order[at++] = r;
    CHECK(at == n);
    int bad = 0;
    for (int32_t i = 0; i < n && bad < 3; ++i) {
        int32_t r = order[i];
        int64_t len = a->row_ptr[r + 1] - a->row_ptr[r];
        if (s.row_ptr[i + 1] - s.row_ptr[i] != len) {
            CHECK_MSG(0, "%s: stored row %d has %lld entries, A's row %d %lld", what, i,
                      (long long)(s.row_ptr[i + 1] - s.row_ptr[i]), r, (long long)len);
            ++bad;
            continue;
        }
        /* each of A's entries at its renumbered column, the columns ascending */
        for (int64_t k = a->row_ptr[r]; k < a->row_ptr[r + 1]; ++k) {
            int32_t col = inverse[a->col_ind[k]];
            bool found = false;
            for (int64_t q = s.row_ptr[i]; q < s.row_ptr[i + 1] && !found; ++q)
                found = s.col_ind[q] == col &&
                        fabs(s.values[q] - a->values[k]) <= 1e-6 * fabs(a->values[k]);
            if (!found && bad++ < 3)
                CHECK_MSG(0, "%s: A(%d, %d) is not at stored (%d, %d)", what, r, a->col_ind[k], i,
                          col);
        }
        for (int64_t q = s.row_ptr[i] + 1; q < s.row_ptr[i + 1]; ++q)
            if (s.col_ind[q] < s.col_ind[q - 1] && bad++ < 3)
                CHECK_MSG(0, "%s: stored row %d's columns not ascending", what, i);
    }
    free(order), free(inverse);
    cmrscl_csr_free(&s);
}

static void check_products(cmrscl_matrix m, const cmrscl_csr *a, cmrscl_precision p,
                           const char *what)
{
    for (int t = 0; t < 2; ++t) {
        cmrscl_operation op = t ? CMRSCL_TRANSPOSE : CMRSCL_NON_TRANSPOSE;
        double ratio = test_op_ratio(m, op, a, p);
        CHECK_MSG(ratio <= 1.0, "%s %s %s: error %g x the rounding bound", what,
                  t ? "A^T x" : "A x", p == CMRSCL_DOUBLE ? "double" : "float", ratio);
    }
}

/* a's values rounded to p (the reference the products are judged by) */
static void round_to(cmrscl_csr *a, cmrscl_precision p)
{
    for (int64_t k = 0; p == CMRSCL_FLOAT && k < a->nnz; ++k)
        a->values[k] = (double)(float)a->values[k];
}

static void test_products(const char *spec, cmrscl_precision p, cmrscl_kernel kernel, int tile)
{
    char what[96];
    snprintf(what, sizeof what, "%s (kernel %d, tile %d)", spec, (int)kernel, tile);
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate(spec, &a));
    test_seed(5);
    for (int64_t k = 0; k < a.nnz; ++k) /* distinct values: an entry moved wrong shows */
        a.values[k] *= test_uniform(0.5, 1.5);
    round_to(&a, p);
    cmrscl_options o = hubs(kernel, tile);
    cmrscl_matrix m;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, p, &a, &o, &m));
    if (!m)
        return cmrscl_csr_free(&a);
    if (p == CMRSCL_DOUBLE)
        check_stored(m, &a, what);
    /* cmrscl_plan shows the plan the matrix was made with: that of P A P^T */
    cmrscl_device_info info;
    cmrscl_params made = CMRSCL_PARAMS_INIT, planned = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_context_device_info(ctx, &info));
    CHECK_OK(cmrscl_matrix_params(m, &made));
    CHECK_OK(cmrscl_plan(&info, p, &a, &o, &planned));
    CHECK_MSG(planned.renumber == CMRSCL_RENUMBER_HUBS &&
                  !strcmp(planned.build_options, made.build_options) &&
                  !strcmp(planned.plan_reason, made.plan_reason),
              "%s: cmrscl_plan gave \"%s\" (%s), the matrix \"%s\" (%s)", what, planned.plan_reason,
              planned.build_options, made.plan_reason, made.build_options);
    check_products(m, &a, p, what);
    /* a values update in the caller's entry order */
    for (int64_t k = 0; k < a.nnz; ++k)
        a.values[k] = a.values[k] * 0.5 + (double)(k % 5);
    round_to(&a, p);
    void *given = test_values_in(a.values, a.nnz, p); /* in the matrix's precision */
    CHECK_OK(cmrscl_matrix_update_values(m, given, p));
    free(given);
    char updated[128];
    snprintf(updated, sizeof updated, "%s after a values update", what);
    check_products(m, &a, p, updated);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

/* Iterations to rtol 1e-8 from x = 0 with b = A v, and the true residual on the CPU. */
static int solve(const cmrscl_csr *a, cmrscl_renumber renumber, const cmrscl_solve_options *so,
                 const char *what)
{
    cmrscl_options o = {0};
    o.renumber = renumber;
    cmrscl_matrix m;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_DOUBLE, a, &o, &m));
    int n = a->rows;
    double *v = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    double *x = calloc((size_t)n, sizeof(double)), *r = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; ++i)
        v[i] = 1.0 + (double)(i % 7) / 7.0;
    cmrscl_csr_spmv(a, 1.0, v, 0.0, b);
    cmrscl_solve_result res = {0};
    CHECK_OK(test_solve_host(m, so, CMRSCL_DOUBLE, b, x, n, &res));
    memcpy(r, b, sizeof(double) * (size_t)n);
    cmrscl_csr_spmv(a, -1.0, x, 1.0, r);
    double rn = 0, bn = 0;
    for (int i = 0; i < n; ++i)
        rn += r[i] * r[i], bn += b[i] * b[i];
    CHECK_MSG(res.converged && sqrt(rn) <= 1e-8 * sqrt(bn) * 1.01,
              "%s (renumber %d): %s after %d iterations, CPU residual %g of ||b|| %g", what,
              (int)renumber, cmrscl_solve_reason_name(res.reason), res.iterations, sqrt(rn),
              sqrt(bn));
    int its = res.iterations;
    cmrscl_solve_result_free(&res);
    free(v), free(b), free(x), free(r);
    cmrscl_matrix_free(m);
    return its;
}

static void test_solvers(void)
{
    if (!fp64) {
        printf("solvers: not checked - the device has no fp64 (the test solves in double)\n");
        return;
    }
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("lap:rmat:10:8", &a));
    cmrscl_amg_options ao = CMRSCL_AMG_OPTIONS_INIT;
    cmrscl_precond amg = NULL;
    CHECK_OK(cmrscl_precond_create_amg(ctx, CMRSCL_DOUBLE, &a, &ao, &amg));
    const struct {
        const char *name;
        cmrscl_method method;
        cmrscl_preconditioner preconditioner;
        double slack; /* iterations renumbered within this share of the plain matrix's */
    } cases[] = {
        {"CG", CMRSCL_METHOD_CG, CMRSCL_PRECONDITIONER_NONE, 0.05},
        {"Jacobi-CG", CMRSCL_METHOD_CG, CMRSCL_PRECONDITIONER_JACOBI, 0.05},
        {"BiCGStab", CMRSCL_METHOD_BICGSTAB, CMRSCL_PRECONDITIONER_NONE, 0.25},
        {"AMG-CG", CMRSCL_METHOD_CG, CMRSCL_PRECONDITIONER_AMG, 0.05},
        {"AMG-BiCGStab", CMRSCL_METHOD_BICGSTAB, CMRSCL_PRECONDITIONER_AMG, 0.25},
        {"AMG-GMRES", CMRSCL_METHOD_GMRES, CMRSCL_PRECONDITIONER_AMG, 0.1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        cmrscl_solve_options so = {
            .method = cases[c].method,
            .preconditioner = cases[c].preconditioner,
            .rtol = 1e-8,
            .precond = cases[c].preconditioner == CMRSCL_PRECONDITIONER_AMG ? amg : NULL};
        int plain = solve(&a, CMRSCL_RENUMBER_NONE, &so, cases[c].name);
        int renumbered = solve(&a, CMRSCL_RENUMBER_HUBS, &so, cases[c].name);
        CHECK_MSG(abs(renumbered - plain) <= cases[c].slack * plain + 1,
                  "%s: %d iterations renumbered, %d not", cases[c].name, renumbered, plain);
        printf("%-10s %d iterations renumbered, %d not\n", cases[c].name, renumbered, plain);
    }
    cmrscl_precond_free(amg);
    cmrscl_csr_free(&a);
}

static void test_refused(void)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("lap:rmat:8:8", &a));
    int64_t rp3[] = {0, 1, 2, 3};
    int32_t ci3[] = {0, 1, 0};
    double v3[] = {1, 2, 3};
    cmrscl_csr r = {.rows = 3, .cols = 2, .nnz = 3, .row_ptr = rp3, .col_ind = ci3, .values = v3};
    cmrscl_options o = hubs(CMRSCL_KERNEL_AUTO, 0);
    cmrscl_matrix m = NULL;
    CHECK_STATUS(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &r, &o, &m),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(test_contains(cmrscl_last_error(), "square"), "message: %s", cmrscl_last_error());
    o.renumber = (cmrscl_renumber)7;
    CHECK_STATUS(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &a, &o, &m),
                 CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(test_contains(cmrscl_last_error(), "renumber 7"), "message: %s", cmrscl_last_error());
    o.renumber = CMRSCL_RENUMBER_HUBS;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &a, &o, &m));
    cl_context cl;
    cl_command_queue q;
    CHECK_OK(cmrscl_context_cl(ctx, &cl, &q));
    cl_int err;
    size_t bytes = sizeof(float) * (size_t)a.nnz * 4;
    cl_mem x = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_mem y = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
    struct {
        cmrscl_status st;
        const char *names;
        char why[256]; /* the message the call left */
    } refused[4];
    refused[0].st =
        cmrscl_spmm(m, CMRSCL_COLUMN_MAJOR, 2, 1.0, x, 0, 0.0, y, 0, NULL, 0, NULL, NULL);
    refused[0].names = "block product";
    snprintf(refused[0].why, sizeof refused[0].why, "%s", cmrscl_last_error());
    cmrscl_recording rec = NULL;
    refused[1].st = cmrscl_spmv_record(m, 1.0, x, 0.0, y, &rec);
    refused[1].names = "recorded product";
    snprintf(refused[1].why, sizeof refused[1].why, "%s", cmrscl_last_error());
    refused[2].st = cmrscl_matrix_update_values_cl(m, x, CMRSCL_FLOAT);
    refused[2].names = "cl_mem";
    snprintf(refused[2].why, sizeof refused[2].why, "%s", cmrscl_last_error());
    int32_t *rp = test_row_ptr32(&a);
    cl_mem drp = clCreateBuffer(cl, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                sizeof(int32_t) * ((size_t)a.rows + 1), rp, &err);
    cmrscl_matrix dm = NULL;
    refused[3].st = cmrscl_matrix_create_from_cl(ctx, CMRSCL_FLOAT, a.rows, a.cols, (int32_t)a.nnz,
                                                 drp, x, y, &o, &dm);
    refused[3].names = "host arrays";
    snprintf(refused[3].why, sizeof refused[3].why, "%s", cmrscl_last_error());
    free(rp);
    clReleaseMemObject(drp);
    for (int i = 0; i < 4; ++i)
        CHECK_MSG(refused[i].st == CMRSCL_ERROR_UNSUPPORTED &&
                      test_contains(refused[i].why, refused[i].names),
                  "%s: %s, \"%s\"", refused[i].names, cmrscl_status_name(refused[i].st),
                  refused[i].why);
    CHECK(!rec && !dm);
    cmrscl_recording_free(rec), cmrscl_matrix_free(dm);
    clReleaseMemObject(x), clReleaseMemObject(y);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

/* Products of one renumbered matrix from several threads on the context's queue: each
 * thread's gather, product and scatter follow each other (they share the matrix's vectors). */
typedef struct thread_job {
    cmrscl_matrix m;
    const cmrscl_csr *a;
    int id;
    bool ok;
} thread_job;

static void *products(void *arg)
{
    thread_job *j = arg;
    int n = j->a->rows;
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    double *xd = malloc(sizeof(double) * (size_t)n), *yd = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; ++i)
        xd[i] = x[i] = (float)(1 + (i * 7 + j->id) % 13) / 8.0f;
    j->ok = true;
    for (int k = 0; k < 16 && j->ok; ++k) {
        double ratio = INFINITY, alpha = j->id + 0.5 * k;
        j->ok = cmrscl_spmv_host(j->m, alpha, x, 0.0, y) == CMRSCL_OK;
        for (int i = 0; i < n; ++i)
            yd[i] = y[i];
        j->ok = j->ok &&
                cmrscl_csr_spmv_check(j->a, alpha, xd, 0.0, NULL, yd, 0x1p-24, NULL, &ratio) ==
                    CMRSCL_OK &&
                ratio <= 1.0;
    }
    free(x), free(y), free(xd), free(yd);
    return NULL;
}

/* Matrix `spec` in float (*a, its values rounded to floats) renumbered on the rule's plan. */
static cmrscl_matrix renumbered_float(const char *spec, cmrscl_csr *a)
{
    CHECK_OK(cmrscl_csr_generate(spec, a));
    round_to(a, CMRSCL_FLOAT);
    cmrscl_options o = hubs(CMRSCL_KERNEL_AUTO, 0);
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, a, &o, &m));
    return m;
}

static void test_threads(void)
{
    cmrscl_csr a;
    cmrscl_matrix m = renumbered_float("lap:rmat:11:8", &a);
    enum { THREADS = 4 };
    pthread_t t[THREADS];
    thread_job jobs[THREADS];
    for (int i = 0; m && i < THREADS; ++i) {
        jobs[i] = (thread_job){m, &a, i + 1, false};
        pthread_create(&t[i], NULL, products, &jobs[i]);
    }
    for (int i = 0; m && i < THREADS; ++i) {
        pthread_join(t[i], NULL);
        CHECK_MSG(jobs[i].ok, "thread %d: a wrong or failed product", i);
    }
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

/* Jacobi-CG on an out-of-order queue: the in-order queue's outcome, iterations and bits. In
 * float on this matrix the recurrence drifts from the true residual, so the solve restarts
 * from b - A x (residual replacement): each read of what the kernels wrote must wait for them. */
static void test_out_of_order(void)
{
    cl_context c;
    cl_command_queue q;
    CHECK_OK(cmrscl_context_cl(ctx, &c, &q));
    cl_int err;
    cl_command_queue ooo = test_queue_out_of_order(ctx, &err);
    if (!ooo) {
        printf("out-of-order queue: not checked - the device refused one (%d)\n", (int)err);
        return;
    }
    cmrscl_csr a;
    cmrscl_matrix m = renumbered_float("lap:rmat:10:8", &a);
    cmrscl_solve_options so = {
        .method = CMRSCL_METHOD_CG, .preconditioner = CMRSCL_PRECONDITIONER_JACOBI, .rtol = 1e-3};
    cmrscl_solver s = NULL;
    CHECK_OK(cmrscl_solver_create(m, &so, &s));
    size_t n = (size_t)a.rows, bytes = sizeof(float) * n;
    float *b = malloc(bytes), *x[2] = {calloc(n, sizeof(float)), calloc(n, sizeof(float))};
    for (size_t i = 0; i < n; ++i)
        b[i] = (float)(1 + i % 5);
    cmrscl_solve_result r[2] = {{0}, {0}};
    for (int k = 0; s && k < 2; ++k) {
        cl_mem bm = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b, &err);
        cl_mem xm = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, x[k], &err);
        CHECK_OK(cmrscl_solver_solve(s, bm, xm, k ? ooo : NULL, 0, NULL, &r[k]));
        clEnqueueReadBuffer(q, xm, CL_TRUE, 0, bytes, x[k], 0, NULL, NULL);
        clReleaseMemObject(bm), clReleaseMemObject(xm);
    }
    CHECK_MSG(s && r[1].reason == r[0].reason && r[1].iterations == r[0].iterations &&
                  !memcmp(x[0], x[1], bytes),
              "out-of-order queue: %d iterations (in order %d, %s), x %s", r[1].iterations,
              r[0].iterations, cmrscl_solve_reason_name(r[0].reason),
              memcmp(x[0], x[1], bytes) ? "differs" : "the same");
    cmrscl_solve_result_free(&r[0]), cmrscl_solve_result_free(&r[1]);
    cmrscl_solver_free(s);
    clReleaseCommandQueue(ooo);
    free(b), free(x[0]), free(x[1]);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
}

int main(void)
{
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("renumber");
    cmrscl_device_info info;
    CHECK_OK(cmrscl_context_device_info(ctx, &info));
    fp64 = info.fp64;
    const char *specs[] = {"lap:rmat:10:8", "lap:skewed:3000:2:20:900", "stencil5:30", "perm:500"};
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; ++s)
        for (int p = 0; p < 2; ++p)
            if (p == 0 || fp64)
                test_products(specs[s], p ? CMRSCL_DOUBLE : CMRSCL_FLOAT, CMRSCL_KERNEL_AUTO, 0);
    /* the strip family with long rows split into tiles: three kernels and a combine */
    test_products("lap:skewed:3000:2:20:900", fp64 ? CMRSCL_DOUBLE : CMRSCL_FLOAT,
                  CMRSCL_KERNEL_STRIP, 64);
    test_products("lap:rmat:10:8", CMRSCL_FLOAT, CMRSCL_KERNEL_SEGMENT, 0);
    test_solvers();
    test_threads();
    test_out_of_order();
    test_refused();
    cmrscl_context_free(ctx);
    return test_finish("renumber");
}
