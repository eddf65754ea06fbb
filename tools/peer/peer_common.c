/* peer_common.c - see peer.h: what the SpMV and the SpMM sides of cmrscl-peer share, so both
 * are timed, checked and written the same way. */
#include "peer.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int peer_failed(const char *what, const char *detail)
{
    fprintf(stderr, "cmrscl-peer: %s: %s\n", what, detail);
    return 1;
}

double peer_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double peer_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return v[n / 2];
}

/* The same x as cmrscl-run's bench (tools/cli/bench.c): one LCG stream, rounded to the
 * precision. The block product's X is the first cols*k values of the same stream. */
void peer_make_x(double *x, int64_t n, int is_float)
{
    uint64_t s = 12345;
    for (int64_t j = 0; j < n; ++j) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double v = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        x[j] = is_float ? (double)(float)v : v;
    }
}

int peer_upload_values(void **dst, const double *src, size_t n, size_t vs)
{
    void *tmp = malloc(vs * (n ? n : 1));
    if (!tmp)
        return peer_failed("upload", "out of host memory");
    for (size_t i = 0; i < n; ++i) {
        if (vs == 4)
            ((float *)tmp)[i] = (float)src[i];
        else
            ((double *)tmp)[i] = src[i];
    }
    cudaError_t e = cudaMalloc(dst, vs * (n ? n : 1));
    if (e == cudaSuccess && n)
        e = cudaMemcpy(*dst, tmp, vs * n, cudaMemcpyHostToDevice);
    free(tmp);
    return e == cudaSuccess ? 0 : peer_failed("upload", cudaGetErrorString(e));
}

int peer_upload_csr(const char *name, const cmrscl_csr *a, size_t vs, device_csr *d)
{
    memset(d, 0, sizeof *d);
    int32_t *row_ptr = malloc(sizeof(int32_t) * ((size_t)a->rows + 1));
    if (!row_ptr)
        return peer_failed(name, "out of host memory");
    for (int64_t i = 0; i <= a->rows; ++i) /* the caller checked nnz <= INT32_MAX */
        row_ptr[i] = (int32_t)a->row_ptr[i];
    int rc = 0;
    if (cudaMalloc((void **)&d->row_ptr, sizeof(int32_t) * ((size_t)a->rows + 1)) != cudaSuccess ||
        cudaMalloc((void **)&d->col_ind, sizeof(int32_t) * ((size_t)a->nnz + 1)) != cudaSuccess ||
        cudaMemcpy(d->row_ptr, row_ptr, sizeof(int32_t) * ((size_t)a->rows + 1),
                   cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(d->col_ind, a->col_ind, sizeof(int32_t) * (size_t)a->nnz,
                   cudaMemcpyHostToDevice) != cudaSuccess)
        rc = peer_failed(name, "cannot put the matrix on the GPU");
    free(row_ptr);
    if (!rc)
        rc = peer_upload_values(&d->values, a->values, (size_t)a->nnz, vs);
    return rc;
}

void peer_device_free(device_csr *d)
{
    cudaFree(d->row_ptr), cudaFree(d->col_ind), cudaFree(d->values);
    cudaFree(d->x), cudaFree(d->y), cudaFree(d->buffer);
    memset(d, 0, sizeof *d);
}

int peer_reserve_buffer(device_csr *d, size_t need)
{
    if (need > d->buffer_size) {
        cudaFree(d->buffer);
        d->buffer = NULL, d->buffer_size = 0;
        CUDA(cudaMalloc(&d->buffer, need));
        d->buffer_size = need;
    }
    return 0;
}

int peer_time(peer_product product, const void *args, const options *o, result *r)
{
    for (int i = 0; i < o->warmup; ++i)
        CUSPARSE(product(args));
    /* Each product between two events on the stream, as OpenCL profiles each product. */
    int n = o->repetitions;
    cudaEvent_t *ev = malloc(sizeof *ev * 2 * (size_t)n);
    double *ms = malloc(sizeof *ms * (size_t)n);
    if (!ev || !ms) {
        free(ev), free(ms);
        return peer_failed("timing", "out of host memory");
    }
    for (int i = 0; i < 2 * n; ++i)
        CUDA(cudaEventCreate(&ev[i]));
    for (int i = 0; i < n; ++i) {
        CUDA(cudaEventRecord(ev[2 * (size_t)i], 0));
        CUSPARSE(product(args));
        CUDA(cudaEventRecord(ev[2 * (size_t)i + 1], 0));
    }
    CUDA(cudaDeviceSynchronize());
    for (int i = 0; i < n; ++i) {
        float t = 0;
        CUDA(cudaEventElapsedTime(&t, ev[2 * (size_t)i], ev[2 * (size_t)i + 1]));
        ms[i] = t;
    }
    for (int i = 0; i < 2 * n; ++i)
        cudaEventDestroy(ev[i]);
    qsort(ms, (size_t)n, sizeof *ms, compare_doubles);
    r->min_ms = ms[0];
    r->median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    /* Back to back: what a solver loop sees. */
    double t0 = peer_seconds();
    for (int i = 0; i < n; ++i)
        CUSPARSE(product(args));
    CUDA(cudaDeviceSynchronize());
    r->loop_ms = (peer_seconds() - t0) * 1e3 / n;
    free(ev), free(ms);
    return 0;
}

int peer_report(FILE *csv, const char *name, const cmrscl_csr *a, int is_float, const char *alg,
                int rc, const result *r)
{
    bool ok = !rc && r->bound_ratio <= 1.0;
    fprintf(stderr, "%-28s %-6s %-8s median %.4f ms, min %.4f ms, loop %.4f ms, %.3g x bound %s\n",
            name, is_float ? "float" : "double", alg, r->median_ms, r->min_ms, r->loop_ms,
            r->bound_ratio, ok ? "PASS" : "FAIL");
    if (!rc)
        fprintf(csv, "cuSPARSE %d.%d,%s,%s,%s,%d,%d,%lld,%.6g,%.6g,%.6g,%.6g,%.6g\n",
                CUSPARSE_VER_MAJOR, CUSPARSE_VER_MINOR, name, is_float ? "float" : "double", alg,
                a->rows, a->cols, (long long)a->nnz, ok ? r->median_ms : 0.0, ok ? r->min_ms : 0.0,
                ok ? r->loop_ms : 0.0, r->relative_error, r->bound_ratio);
    fflush(csv);
    return ok ? 0 : 1;
}

/* Sliced ELL, as a user builds it from CSR: slices of SELL_SLICE rows, each as wide as its
 * longest row, stored column-major (a warp's loads are contiguous), padding with column -1.
 * Not built when the padding would hold more than SELL_MAX_PADDING times the entries (a few
 * long rows: no user would pick SELL there) or overflow 32-bit offsets. */
void sell_free(host_sell *s)
{
    free(s->offsets), free(s->cols), free(s->values);
    memset(s, 0, sizeof *s);
}

/* 0 and *s built; 1 and a reason when SELL is not worth building; -1 out of memory. */
int sell_build(const cmrscl_csr *a, host_sell *s, char *why, size_t why_size)
{
    memset(s, 0, sizeof *s);
    int64_t slices = ((int64_t)a->rows + SELL_SLICE - 1) / SELL_SLICE, size = 0;
    if (!(s->offsets = malloc(sizeof(int32_t) * (size_t)(slices + 1))))
        return -1;
    s->offsets[0] = 0;
    for (int64_t sl = 0; sl < slices; ++sl) {
        int64_t width = 0, end = (sl + 1) * SELL_SLICE < a->rows ? (sl + 1) * SELL_SLICE : a->rows;
        for (int64_t i = sl * SELL_SLICE; i < end; ++i)
            if (a->row_ptr[i + 1] - a->row_ptr[i] > width)
                width = a->row_ptr[i + 1] - a->row_ptr[i];
        size += width * SELL_SLICE;
        if (size > INT32_MAX || size > SELL_MAX_PADDING * (a->nnz + SELL_SLICE)) {
            snprintf(why, why_size, "SELL would store more than %s",
                     size > INT32_MAX ? "2^31 entries" : "8 x the entries");
            sell_free(s);
            return 1;
        }
        s->offsets[sl + 1] = (int32_t)size;
    }
    s->size = size;
    s->cols = malloc(sizeof(int32_t) * (size_t)(size ? size : 1));
    s->values = calloc((size_t)(size ? size : 1), sizeof(double));
    if (!s->cols || !s->values) {
        sell_free(s);
        return -1;
    }
    for (int64_t k = 0; k < size; ++k)
        s->cols[k] = -1;
    for (int64_t i = 0; i < a->rows; ++i) {
        int64_t base = s->offsets[i / SELL_SLICE] + i % SELL_SLICE;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
            int64_t at = base + (k - a->row_ptr[i]) * SELL_SLICE;
            s->cols[at] = a->col_ind[k];
            s->values[at] = a->values[k];
        }
    }
    return 0;
}
