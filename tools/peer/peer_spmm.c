/* peer_spmm.c - cmrscl-peer --vectors: cuSPARSE's block product Y = A X (cusparseSpMM, alpha 1,
 * beta 0) on A's CSR for each k of the list, with the X of `cmrscl-run bench --vectors`,
 * timed, checked and written as the SpMV rows are (peer_common.c), under "NAME[k=K]".
 *
 * X: element (i, j) - row i < cols, vector j < k - is value number i*k + j of the stream
 * peer_make_x draws (the SpMV x is its first cols values), i.e. the first cols*k values laid
 * out row-major and packed (ld = k); --column-major holds the same elements transposed
 * (ld = cols, and Y's ld = rows; "col:" before the algorithm's name).
 *
 * The algorithms, as cuSPARSE's documentation of cusparseSpMM describes them: DEFAULT; CSR_ALG1
 * (meant for column-major X and Y, not deterministic); CSR_ALG2 (meant for row-major, not
 * deterministic); CSR_ALG3 (deterministic; A non-transposed only). None is documented to refuse
 * float or double in either order, but cuSPARSE versions have refused layouts before (COO in
 * row-major until 11.7.1), so one whose cusparseSpMM_bufferSize answers NOT_SUPPORTED or
 * INVALID_VALUE is skipped with a line on stderr, not failed (cuSPARSE 12.6.3 of CUDA 13.0 on an
 * H100 ran all four, float and double, both orders). cusparseSpMM_preprocess is called for
 * each, as a user would: it speeds up CSR_ALG1 and CSR_ALG3 and does nothing for the rest.
 *
 * Times are per cusparseSpMM call, the whole block. The CSV has no bytes or GB/s column
 * (cmrscl-run bench derives bandwidth from its own byte count): a block reads A once - row_ptr,
 * col_ind, values - plus X (cols*k values) and writes Y (rows*k values). */
#include "peer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    cusparseSpMMAlg_t alg;
} spmm_algs[] = {{"SPMM_DEFAULT", CUSPARSE_SPMM_ALG_DEFAULT},
                 {"SPMM_CSR_ALG1", CUSPARSE_SPMM_CSR_ALG1},
                 {"SPMM_CSR_ALG2", CUSPARSE_SPMM_CSR_ALG2},
                 {"SPMM_CSR_ALG3", CUSPARSE_SPMM_CSR_ALG3}};

int peer_parse_vectors(const char *list, options *o)
{
    o->nvectors = 0;
    for (const char *p = list;;) {
        char *end;
        long k = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || k < 1 || k > PEER_MAX_VECTORS ||
            o->nvectors == PEER_MAX_VECTOR_COUNTS) {
            fprintf(stderr,
                    "cmrscl-peer: --vectors %s: expected up to %d vector counts from 1 to %d, "
                    "comma-separated (e.g. 4,8,16,32)\n",
                    list, PEER_MAX_VECTOR_COUNTS, PEER_MAX_VECTORS);
            return 2;
        }
        o->vectors[o->nvectors++] = (int)k;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

/* One k: what the runs of its algorithms share. */
typedef struct block {
    cusparseHandle_t h;
    const char *name; /* NAME[k=K] */
    const cmrscl_csr *a;
    device_csr *d; /* A's CSR, X, Y and the work buffer */
    cusparseDnMatDescr_t mx, my;
    int k, is_float;
    const double *x; /* X row-major and packed, in doubles: the reference's */
    const options *o;
} block;

/* One SpMM call's arguments, for peer_time. */
typedef struct spmm_call {
    cusparseHandle_t h;
    const void *alpha, *beta;
    cusparseSpMatDescr_t mat;
    cusparseDnMatDescr_t mx, my;
    cudaDataType type;
    cusparseSpMMAlg_t alg;
    void *buffer;
} spmm_call;

static cusparseStatus_t spmm(const void *args)
{
    const spmm_call *c = args;
    return cusparseSpMM(c->h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                        c->alpha, c->mat, c->mx, c->beta, c->my, c->type, c->alg, c->buffer);
}

/* The worse of two errors; a NaN is the worst. */
static double worse(double a, double b) { return isnan(a) || b <= a ? a : b; }

/* Y (on the GPU) against the CPU double reference, vector by vector, with the SpMV path's unit
 * roundoff: r gets the worst relative error and bound ratio over the k vectors. */
static int check_block(const block *b, result *r)
{
    const cmrscl_csr *a = b->a;
    size_t vs = b->is_float ? 4 : 8, k = (size_t)b->k, ny = (size_t)a->rows * k;
    void *yraw = malloc(vs * (ny + 1));
    double *xj = malloc(sizeof(double) * ((size_t)a->cols + 1));
    double *yj = malloc(sizeof(double) * ((size_t)a->rows + 1));
    int rc = !yraw || !xj || !yj ? peer_failed(b->name, "out of host memory for the check") : 0;
    if (!rc && cudaMemcpy(yraw, b->d->y, vs * ny, cudaMemcpyDeviceToHost) != cudaSuccess)
        rc = peer_failed(b->name, "cannot read Y back");
    r->relative_error = r->bound_ratio = 0.0;
    for (size_t j = 0; !rc && j < k; ++j) {
        for (size_t i = 0; i < (size_t)a->cols; ++i)
            xj[i] = b->x[i * k + j];
        for (size_t i = 0; i < (size_t)a->rows; ++i) {
            size_t at = b->o->column_major ? j * (size_t)a->rows + i : i * k + j;
            yj[i] = b->is_float ? (double)((float *)yraw)[at] : ((double *)yraw)[at];
        }
        double rel, ratio;
        cmrscl_csr_spmv_check(a, 1.0, xj, 0.0, NULL, yj, b->is_float ? 0x1p-24 : 0x1p-53, &rel,
                              &ratio);
        r->relative_error = worse(r->relative_error, rel);
        r->bound_ratio = worse(r->bound_ratio, ratio);
    }
    free(yraw), free(xj), free(yj);
    return rc;
}

/* One algorithm on a fresh CSR descriptor (preprocessing binds its buffer to the descriptor):
 * buffer, preprocess, check, then the two timings; -1 when cuSPARSE refuses the algorithm. */
static int run_alg(const block *b, cusparseSpMatDescr_t mat, cusparseSpMMAlg_t alg,
                   const char *label, result *r)
{
    cudaDataType type = b->is_float ? CUDA_R_32F : CUDA_R_64F;
    size_t vs = b->is_float ? 4 : 8;
    float alpha_f = 1.0f, beta_f = 0.0f;
    double alpha_d = 1.0, beta_d = 0.0;
    const void *alpha = b->is_float ? (const void *)&alpha_f : (const void *)&alpha_d;
    const void *beta = b->is_float ? (const void *)&beta_f : (const void *)&beta_d;
    cusparseOperation_t n = CUSPARSE_OPERATION_NON_TRANSPOSE;
    size_t need = 0;
    cusparseStatus_t st =
        cusparseSpMM_bufferSize(b->h, n, n, alpha, mat, b->mx, beta, b->my, type, alg, &need);
    if (st == CUSPARSE_STATUS_NOT_SUPPORTED || st == CUSPARSE_STATUS_INVALID_VALUE) {
        fprintf(stderr, "%-28s %-6s %-8s skipped: cusparseSpMM_bufferSize says %s\n", b->name,
                b->is_float ? "float" : "double", label, cusparseGetErrorString(st));
        return -1;
    }
    if (st != CUSPARSE_STATUS_SUCCESS)
        return peer_failed("cusparseSpMM_bufferSize", cusparseGetErrorString(st));
    if (peer_reserve_buffer(b->d, need))
        return 1;
    /* what a user does before a loop of products; an algorithm with nothing to prepare says so */
    st = cusparseSpMM_preprocess(b->h, n, n, alpha, mat, b->mx, beta, b->my, type, alg,
                                 b->d->buffer);
    if (st != CUSPARSE_STATUS_SUCCESS && st != CUSPARSE_STATUS_NOT_SUPPORTED)
        return peer_failed("cusparseSpMM_preprocess", cusparseGetErrorString(st));
    spmm_call call = {.h = b->h,
                      .alpha = alpha,
                      .beta = beta,
                      .mat = mat,
                      .mx = b->mx,
                      .my = b->my,
                      .type = type,
                      .alg = alg,
                      .buffer = b->d->buffer};
    /* The check: NaN in Y first, so an unwritten element shows. */
    CUDA(cudaMemset(b->d->y, 0xff, vs * (size_t)b->a->rows * (size_t)b->k));
    CUSPARSE(spmm(&call));
    CUDA(cudaDeviceSynchronize());
    if (check_block(b, r))
        return 1;
    return peer_time(spmm, &call, b->o, r);
}

/* Every algorithm for one k: X made and put on the GPU in the order, Y beside it. */
static int run_block(cusparseHandle_t h, const char *name, const cmrscl_csr *a, device_csr *d,
                     int k, int is_float, const options *o, FILE *csv)
{
    char bname[300];
    snprintf(bname, sizeof bname, "%s[k=%d]", name, k);
    size_t vs = is_float ? 4 : 8, nx = (size_t)a->cols * (size_t)k,
           ny = (size_t)a->rows * (size_t)k;
    double *x = malloc(sizeof(double) * (nx + 1)), *xt = NULL;
    if (!x)
        return peer_failed(bname, "out of host memory for X");
    peer_make_x(x, (int64_t)nx, is_float);
    if (o->column_major) { /* the same elements, each vector contiguous */
        if (!(xt = malloc(sizeof(double) * (nx + 1)))) {
            free(x);
            return peer_failed(bname, "out of host memory for X");
        }
        for (size_t i = 0; i < (size_t)a->cols; ++i)
            for (size_t j = 0; j < (size_t)k; ++j)
                xt[j * (size_t)a->cols + i] = x[i * (size_t)k + j];
    }
    int rc = peer_upload_values(&d->x, xt ? xt : x, nx, vs);
    free(xt);
    if (!rc && cudaMalloc(&d->y, vs * (ny + 1)) != cudaSuccess)
        rc = peer_failed(bname, "cannot put Y on the GPU");
    cudaDataType type = is_float ? CUDA_R_32F : CUDA_R_64F;
    cusparseOrder_t order = o->column_major ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW;
    /* leading dimensions: k row-major; the rows column-major (at least 1 for an empty matrix) */
    int64_t ldx = o->column_major ? (a->cols > 0 ? a->cols : 1) : k;
    int64_t ldy = o->column_major ? (a->rows > 0 ? a->rows : 1) : k;
    block b = {.h = h, .name = bname, .a = a, .d = d, .k = k, .is_float = is_float, .x = x, .o = o};
    if (!rc &&
        (cusparseCreateDnMat(&b.mx, a->cols, k, ldx, d->x, type, order) !=
             CUSPARSE_STATUS_SUCCESS ||
         cusparseCreateDnMat(&b.my, a->rows, k, ldy, d->y, type, order) != CUSPARSE_STATUS_SUCCESS))
        rc = peer_failed(bname, "cusparseCreateDnMat failed");
    for (size_t i = 0; !rc && i < sizeof spmm_algs / sizeof spmm_algs[0]; ++i) {
        char label[32];
        snprintf(label, sizeof label, "%s%s", o->column_major ? "col:" : "", spmm_algs[i].name);
        cusparseSpMatDescr_t mat;
        if (cusparseCreateCsr(&mat, a->rows, a->cols, a->nnz, d->row_ptr, d->col_ind, d->values,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                              type) != CUSPARSE_STATUS_SUCCESS) {
            rc = peer_failed(bname, "cusparseCreateCsr failed");
            break;
        }
        result r;
        memset(&r, 0, sizeof r);
        int run = run_alg(&b, mat, spmm_algs[i].alg, label, &r);
        cusparseDestroySpMat(mat);
        if (run >= 0) /* as the SpMV path: a failure ends this k's algorithms */
            rc = peer_report(csv, bname, a, is_float, label, run, &r);
    }
    if (b.mx)
        cusparseDestroyDnMat(b.mx);
    if (b.my)
        cusparseDestroyDnMat(b.my);
    cudaFree(d->x), cudaFree(d->y);
    d->x = d->y = NULL;
    free(x);
    return rc;
}

int peer_run_spmm(cusparseHandle_t h, const char *name, const cmrscl_csr *a, int is_float,
                  const options *o, FILE *csv)
{
    device_csr d;
    int uploaded = !peer_upload_csr(name, a, is_float ? 4 : 8, &d), rc = !uploaded;
    for (int i = 0; uploaded && i < o->nvectors; ++i) /* each k, whatever the last one did */
        rc |= run_block(h, name, a, &d, o->vectors[i], is_float, o, csv);
    peer_device_free(&d);
    return rc;
}
