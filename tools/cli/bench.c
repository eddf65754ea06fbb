/* bench.c - runs one configuration: device matrix, one product (A's, or with --transpose
 * A^T's) checked against the CPU double reference, then the library's timing of the product
 * (cmrscl_spmv_time_op): device time per product from profiling events (median, minimum)
 * and the back-to-back loop. */
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

bool bench_vectors_make(const cmrscl_csr *a, const cli_options *opt, bench_vectors *v)
{
    v->x = malloc(sizeof(double) * ((size_t)a->cols + 1));
    v->y0 = malloc(sizeof(double) * ((size_t)a->rows + 1));
    if (!v->x || !v->y0) {
        bench_vectors_free(v);
        fputs("cmrscl-run: no memory for the vectors\n", stderr);
        return false;
    }
    uint64_t s = 12345;
    for (int32_t j = 0; j < a->cols; ++j) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v->x[j] = round_to((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0, opt->precision);
    }
    for (int32_t i = 0; i < a->rows; ++i) { /* with beta = 0, NaN shows a read of y */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v->y0[i] = opt->beta == 0.0
                       ? NAN
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

cl_mem bench_upload(cl_context context, const double *src, int32_t n, cmrscl_precision p,
                    cl_int *err)
{
    size_t vs = p == CMRSCL_FLOAT ? 4 : 8, count = n > 0 ? (size_t)n : 1;
    char *tmp = malloc(vs * count);
    if (!tmp) {
        *err = CL_OUT_OF_HOST_MEMORY;
        return NULL;
    }
    for (int32_t i = 0; i < n; ++i) {
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

static int verify(cmrscl_matrix m, cl_command_queue q, cl_mem x, cl_mem y, const cmrscl_csr *a,
                  const bench_vectors *v, const cli_options *opt, bench_result *r)
{
    clFinish(q);
    double t0 = cli_seconds();
    cmrscl_status st =
        cmrscl_spmv_op(m, operation(opt), opt->alpha, x, opt->beta, y, NULL, 0, NULL, NULL);
    clFinish(q);
    r->first_product_seconds = cli_seconds() - t0;
    if (st != CMRSCL_OK)
        return cli_fail("spmv", st);
    size_t vs = opt->precision == CMRSCL_FLOAT ? 4 : 8, n = (size_t)a->rows;
    char *raw = malloc(vs * (n + 1));
    double *yv = malloc(sizeof(double) * (n + 1));
    cl_int err = !raw || !yv ? CL_OUT_OF_HOST_MEMORY
                 : n == 0    ? CL_SUCCESS /* OpenCL rejects empty reads */
                             : clEnqueueReadBuffer(q, y, CL_TRUE, 0, vs * n, raw, 0, NULL, NULL);
    for (size_t i = 0; err == CL_SUCCESS && i < n; ++i)
        yv[i] = vs == 4 ? (double)((float *)raw)[i] : ((double *)raw)[i];
    if (err == CL_SUCCESS)
        st = cmrscl_csr_spmv_check(a, opt->alpha, v->x, opt->beta, v->y0, yv,
                                   opt->precision == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53,
                                   &r->relative_error, &r->bound_ratio);
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
static void derive_rates(bench_result *r, double beta)
{
    const cmrscl_params *p = &r->params;
    double sv = p->precision == CMRSCL_FLOAT ? 4 : 8, si = 4, nnz = (double)p->nnz;
    double matrix = (sv + si) * nnz + p->index_bits / 8.0 * (p->strips + 1.0) +
                    (p->layout == CMRSCL_LAYOUT_UNPACKED ? nnz : 0.0);
    double y = sv * p->rows * (beta != 0.0 ? 2.0 : 1.0);
    double seconds = r->timing.median_ms * 1e-3;
    if (seconds <= 0.0)
        return;
    r->gflops = 2.0 * nnz / seconds * 1e-9;
    r->beta_minus_gbs = (matrix + sv * nnz + y) / seconds * 1e-9;
    r->beta_plus_gbs = (matrix + sv * p->cols + y) / seconds * 1e-9;
}

int bench_run(cmrscl_context ctx, const cmrscl_csr *a, const cmrscl_csr *product,
              const bench_vectors *v, const cli_options *opt, const cmrscl_options *options,
              bench_result *out)
{
    memset(out, 0, sizeof *out);
    cmrscl_matrix m = NULL;
    cmrscl_status st =
        cmrscl_matrix_create_from_csr(ctx, opt->precision, a, opt->transpose ? NULL : options, &m);
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
    cl_mem x = bench_upload(context, v->x, product->cols, opt->precision, &e1);
    cl_mem y = bench_upload(context, v->y0, product->rows, opt->precision, &e2);
    int rc = 0;
    if (!x || !y) {
        fprintf(stderr, "cmrscl-run: allocating x and y on the device failed (OpenCL error %d)\n",
                (int)(x ? e2 : e1));
        rc = EXIT_RUN_FAILED;
    }
    if (!rc && opt->verify)
        rc = verify(m, q, x, y, product, v, opt, out);
    if (!rc) {
        st = cmrscl_spmv_time_op(m, operation(opt), opt->alpha, x, opt->beta, y, opt->warmup,
                                 opt->repetitions, &out->timing);
        if (st != CMRSCL_OK)
            rc = cli_fail("timing", st);
    }
    if (!rc)
        derive_rates(out, opt->beta);
    if (x)
        clReleaseMemObject(x);
    if (y)
        clReleaseMemObject(y);
    cmrscl_matrix_free(m);
    return rc;
}
