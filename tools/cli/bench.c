/* bench.c - runs one configuration: device matrix, one product (A's, with --transpose A^T's,
 * with --vectors the block product's) checked against the CPU double reference, then the
 * library's timing of the product (cmrscl_spmv_time_op, cmrscl_spmm_time): device time per
 * product from profiling events (median, minimum) and the back-to-back loop. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double round_to(double v, cmrscl_precision p)
{
    return p == CMRSCL_FLOAT ? (double)(float)v : v;
}

void bench_round_values(cmrscl_csr *a, cmrscl_precision precision)
{
    for (int64_t k = 0; precision == CMRSCL_FLOAT && k < a->nnz; ++k)
        a->values[k] = round_to(a->values[k], precision);
}

size_t bench_at(const bench_vectors *v, size_t n, size_t i, int j)
{
    return v->column_major ? (size_t)j * n + i : i * (size_t)v->k + (size_t)j;
}

bool bench_vectors_make(const cmrscl_csr *a, const cli_options *opt, bench_vectors *v)
{
    v->k = opt->block > 1 ? opt->block : 1;
    v->column_major = opt->column_major;
    size_t k = (size_t)v->k, cols = (size_t)a->cols, rows = (size_t)a->rows;
    v->x = malloc(sizeof(double) * (cols * k + 1));
    v->y0 = malloc(sizeof(double) * (rows * k + 1));
    if (!v->x || !v->y0) {
        bench_vectors_free(v);
        fputs("cmrscl-run: no memory for the vectors\n", stderr);
        return false;
    }
    /* One stream: X's elements in row-major order (element (i, j) is number i*k + j; the
     * peer's X, tools/peer), then Y0's, each stored where the order puts it. */
    uint64_t s = 12345;
    for (size_t e = 0; e < cols * k; ++e) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v->x[bench_at(v, cols, e / k, (int)(e % k))] =
            round_to((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0, opt->precision);
    }
    for (size_t e = 0; e < rows * k; ++e) { /* with beta = 0, NaN shows a read of y */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v->y0[bench_at(v, rows, e / k, (int)(e % k))] =
            opt->beta == 0.0 ? NAN
                             : round_to((double)(s >> 11) / 9007199254740992.0, opt->precision);
    }
    return true;
}

void bench_vectors_free(bench_vectors *v)
{
    free(v->x);
    free(v->y0);
    v->x = v->y0 = NULL;
}

cl_mem bench_upload(cl_context context, const double *src, size_t n, cmrscl_precision p,
                    cl_int *err)
{
    size_t vs = p == CMRSCL_FLOAT ? 4 : 8, count = n > 0 ? n : 1;
    char *tmp = malloc(vs * count);
    if (!tmp) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    for (size_t i = 0; i < n; ++i) {
        if (p == CMRSCL_FLOAT)
            ((float *)tmp)[i] = (float)src[i];
        else
            ((double *)tmp)[i] = src[i];
    }
    if (n == 0)
        memset(tmp, 0, vs);
    cl_mem buf =
        clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, vs * count, tmp, err);
    free(tmp);
    return buf;
}

const cmrscl_csr *bench_product_matrix(const cmrscl_csr *a, const cli_options *opt, cmrscl_csr *t)
{
    memset(t, 0, sizeof *t);
    if (!opt->transpose)
        return a;
    cmrscl_status st = cmrscl_csr_transpose(a, t);
    return st == CMRSCL_OK ? t : (cli_fail("transposing the matrix on the host", st), NULL);
}

static cmrscl_operation operation(const cli_options *opt)
{
    return opt->transpose ? CMRSCL_TRANSPOSE : CMRSCL_NON_TRANSPOSE;
}

static cmrscl_dense_order order(const bench_vectors *v)
{
    return v->column_major ? CMRSCL_COLUMN_MAJOR : CMRSCL_ROW_MAJOR;
}

/* The product a run times: A's, A^T's or the block product. */
static cmrscl_status product(cmrscl_matrix m, cl_mem x, cl_mem y, const bench_vectors *v,
                             const cli_options *opt)
{
    if (opt->block)
        return cmrscl_spmm(m, order(v), v->k, opt->alpha, x, 0, opt->beta, y, 0, NULL, 0, NULL,
                           NULL);
    return cmrscl_spmv_op(m, operation(opt), opt->alpha, x, opt->beta, y, NULL, 0, NULL, NULL);
}

/* y against the reference, vector by vector: the worst of each measure. */
static cmrscl_status check_vectors(const cmrscl_csr *a, const bench_vectors *v,
                                   const cli_options *opt, const double *y, bench_result *r)
{
    size_t rows = (size_t)a->rows, cols = (size_t)a->cols;
    double *xj = malloc(sizeof(double) * (cols + 1)), *y0j = malloc(sizeof(double) * (rows + 1));
    double *yj = malloc(sizeof(double) * (rows + 1));
    cmrscl_status st = xj && y0j && yj ? CMRSCL_OK : CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    r->relative_error = r->bound_ratio = 0;
    r->nonfinite_y = 0;
    for (size_t i = 0; st == CMRSCL_OK && i < rows * (size_t)v->k; ++i)
        r->nonfinite_y += !isfinite(y[i]);
    for (int j = 0; st == CMRSCL_OK && j < v->k; ++j) {
        for (size_t i = 0; i < cols; ++i)
            xj[i] = v->x[bench_at(v, cols, i, j)];
        for (size_t i = 0; i < rows; ++i)
            y0j[i] = v->y0[bench_at(v, rows, i, j)], yj[i] = y[bench_at(v, rows, i, j)];
        double rel, ratio;
        st =
            cmrscl_csr_spmv_check(a, opt->alpha, xj, opt->beta, y0j, yj,
                                  opt->precision == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, &rel, &ratio);
        r->relative_error = rel > r->relative_error || isnan(rel) ? rel : r->relative_error;
        r->bound_ratio = ratio > r->bound_ratio || isnan(ratio) ? ratio : r->bound_ratio;
    }
    free(xj), free(y0j), free(yj);
    return st;
}

/* CMRSCL_RUN_PERTURB_ROW=i, for the CLI's own tests: row i of the y read back made wrong (a
 * part in a thousand, and 1e-3 more), so that a test sees the check report FAIL. */
static void perturb_for_tests(double *y, size_t n)
{
    const char *row = getenv("CMRSCL_RUN_PERTURB_ROW");
    if (!row || !*row)
        return;
    size_t i = (size_t)strtoull(row, NULL, 10);
    if (i < n)
        y[i] = y[i] * (1 + 1e-3) + 1e-3;
}

static int verify(cmrscl_matrix m, cl_command_queue q, cl_mem x, cl_mem y, const cmrscl_csr *a,
                  const bench_vectors *v, const cli_options *opt, bench_result *r)
{
    clFinish(q);
    double t0 = cli_seconds();
    cmrscl_status st = product(m, x, y, v, opt);
    clFinish(q);
    r->first_product_seconds = cli_seconds() - t0;
    if (st != CMRSCL_OK)
        return cli_fail(opt->block ? "spmm" : "spmv", st);
    size_t vs = opt->precision == CMRSCL_FLOAT ? 4 : 8, n = (size_t)a->rows * (size_t)v->k;
    char *raw = malloc(vs * (n + 1));
    double *yv = malloc(sizeof(double) * (n + 1));
    cl_int err = !raw || !yv ? CL_OUT_OF_HOST_MEMORY
                 : n == 0    ? CL_SUCCESS /* OpenCL rejects empty reads */
                             : clEnqueueReadBuffer(q, y, CL_TRUE, 0, vs * n, raw, 0, NULL, NULL);
    for (size_t i = 0; err == CL_SUCCESS && i < n; ++i)
        yv[i] = vs == 4 ? (double)((float *)raw)[i] : ((double *)raw)[i];
    if (err == CL_SUCCESS)
        perturb_for_tests(yv, n);
    if (err == CL_SUCCESS)
        st = check_vectors(a, v, opt, yv, r);
    free(raw), free(yv);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "cmrscl-run: reading y back failed (OpenCL error %d)\n", (int)err);
        return EXIT_RUN_FAILED;
    }
    r->verified = true;
    return st == CMRSCL_OK ? 0 : cli_fail("verification", st);
}

/* Paper, eq. (6.1), generalised to rectangular matrices, the unpacked layout (one byte
 * of row in strip per nonzero), 64-bit StripPtr entries and beta != 0 (y read too). */
static void derive_rates(bench_result *r, double beta, int k)
{
    const cmrscl_params *p = &r->params;
    double sv = p->precision == CMRSCL_FLOAT ? 4 : 8, si = 4, nnz = (double)p->nnz;
    double matrix = (sv + si) * nnz + p->index_bits / 8.0 * (p->strips + 1.0) +
                    (p->layout == CMRSCL_LAYOUT_UNPACKED ? nnz : 0.0);
    double y = sv * p->rows * (beta != 0.0 ? 2.0 : 1.0) * k; /* a block: k vectors of x and y, */
    double seconds = r->timing.median_ms * 1e-3;             /* the matrix once */
    if (seconds <= 0.0)
        return;
    r->gflops = 2.0 * nnz * k / seconds * 1e-9;
    r->beta_minus_gbs = (matrix + sv * nnz * k + y) / seconds * 1e-9;
    r->beta_plus_gbs = (matrix + sv * p->cols * k + y) / seconds * 1e-9;
}

int bench_run(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_csr *product,
              const bench_vectors *v, const cli_options *opt, const cmrscl_options *options,
              bench_result *out)
{
    memset(out, 0, sizeof *out);
    out->params.struct_size = sizeof out->params; /* the whole view: renumber is past v1 */
    cmrscl_options planned = *options;
    if (!planned.vectors) /* the matrix planned for the block it is run with */
        planned.vectors = opt->block;
    /* --transpose: the plan's options are A^T's; A keeps its numbering's (A^T is multiplied in
     * it) and the rest automatic */
    cmrscl_options of_a = {.renumber = options->renumber};
    cmrscl_matrix m = NULL;
    cmrscl_status st = cmrscl_matrix_create_from_csr(ctx, opt->precision, a,
                                                     opt->transpose ? &of_a : &planned, &m);
    if (st != CMRSCL_OK)
        return cli_fail("creating the device matrix", st);
    if (opt->transpose) {
        double t0 = cli_seconds();
        st = cmrscl_matrix_prepare_transpose(m, options, &out->params);
        out->transpose_seconds = cli_seconds() - t0;
    } else {
        st = cmrscl_matrix_params(m, &out->params);
    }
    if (st != CMRSCL_OK) {
        cmrscl_matrix_free(m);
        return cli_fail("building the transpose", st);
    }
    cl_context context;
    cl_command_queue q;
    cmrscl_context_cl(ctx, &context, &q);
    cl_int e1 = CL_SUCCESS, e2 = CL_SUCCESS;
    size_t k = (size_t)v->k;
    cl_mem x = bench_upload(context, v->x, (size_t)product->cols * k, opt->precision, &e1);
    cl_mem y = bench_upload(context, v->y0, (size_t)product->rows * k, opt->precision, &e2);
    int rc = 0;
    if (!x || !y) {
        fprintf(stderr, "cmrscl-run: allocating x and y on the device failed (OpenCL error %d)\n",
                (int)(x ? e2 : e1));
        rc = EXIT_RUN_FAILED;
    }
    if (!rc && opt->verify)
        rc = verify(m, q, x, y, product, v, opt, out);
    if (!rc) {
        st = opt->block ? cmrscl_spmm_time(m, order(v), v->k, opt->alpha, x, 0, opt->beta, y, 0,
                                           opt->warmup, opt->repetitions, &out->timing)
                        : cmrscl_spmv_time_op(m, operation(opt), opt->alpha, x, opt->beta, y,
                                              opt->warmup, opt->repetitions, &out->timing);
        if (st != CMRSCL_OK)
            rc = cli_fail("timing", st);
    }
    if (!rc)
        derive_rates(out, opt->beta, v->k);
    if (x)
        clReleaseMemObject(x);
    if (y)
        clReleaseMemObject(y);
    cmrscl_matrix_free(m);
    return rc;
}
