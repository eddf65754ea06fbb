/* test_util.c - see test_util.h. */
#include "test_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int test_failures = 0;

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: FAIL: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    test_failures++;
}

int test_finish(const char *name)
{
    if (test_failures)
        fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
    else
        printf("%s: all checks passed\n", name);
    return test_failures ? 1 : 0;
}

static const char *join(const char *env, const char *fallback, const char *rel)
{
    static char buf[4096];
    const char *dir = getenv(env);
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : fallback, rel);
    return buf;
}

const char *test_data(const char *rel) { return join("CMRSCL_TEST_DATA", "tests/data", rel); }

const char *test_shared_matrix(const char *name)
{
    return join("CMRSCL_SHARED_MATRICES", "tests/data/suitesparse", name);
}

bool test_contains(const char *haystack, const char *needle)
{
    return haystack && needle && strstr(haystack, needle) != NULL;
}

static unsigned long long rng_state = 88172645463325252ull;

void *test_values_in(const double *v, int64_t n, cmrscl_precision p)
{
    void *out = malloc((p == CMRSCL_FLOAT ? sizeof(float) : sizeof(double)) * ((size_t)n + 1));
    for (int64_t k = 0; out && k < n; ++k)
        if (p == CMRSCL_FLOAT)
            ((float *)out)[k] = (float)v[k];
        else
            ((double *)out)[k] = v[k];
    return out;
}

double test_value_at(const void *a, cmrscl_precision p, int64_t i)
{
    return p == CMRSCL_FLOAT ? (double)((const float *)a)[i] : ((const double *)a)[i];
}

static int64_t block_at(cmrscl_dense_order o, size_t ld, int32_t i, int j)
{
    return (int64_t)(o == CMRSCL_ROW_MAJOR ? (size_t)i * ld + (size_t)j
                                           : (size_t)j * ld + (size_t)i);
}

double test_block_ratio(const cmrscl_csr *a, cmrscl_precision p, double alpha, double beta,
                        cmrscl_dense_order o, int k, const void *x, size_t ldx, const void *y0,
                        const void *y, size_t ldy)
{
    double *xd = malloc(sizeof(double) * ((size_t)a->cols + 1));
    double *y0d = malloc(sizeof(double) * ((size_t)a->rows + 1));
    double *yd = malloc(sizeof(double) * ((size_t)a->rows + 1));
    double worst = 0;
    for (int j = 0; j < k; ++j) {
        for (int32_t i = 0; i < a->cols; ++i)
            xd[i] = test_value_at(x, p, block_at(o, ldx, i, j));
        for (int32_t i = 0; i < a->rows; ++i) {
            y0d[i] = test_value_at(y0, p, block_at(o, ldy, i, j));
            yd[i] = test_value_at(y, p, block_at(o, ldy, i, j));
        }
        double ratio = INFINITY;
        CHECK_OK(cmrscl_csr_spmv_check(a, alpha, xd, beta, y0d, yd,
                                       p == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, NULL, &ratio));
        worst = ratio > worst || isnan(ratio) ? ratio : worst;
    }
    free(xd), free(y0d), free(yd);
    return worst;
}

const double test_alpha_beta[TEST_ALPHA_BETA_COUNT][2] = {
    {1, 0}, {-1.5, 0.5}, {2.5, 1}, {0, 1}, {1, -1}};

void test_seed(unsigned long long seed) { rng_state = seed ? seed : 88172645463325252ull; }

double test_op_ratio(cmrscl_matrix m, cmrscl_operation op, const cmrscl_csr *a, cmrscl_precision p)
{
    cmrscl_csr t = {0};
    const cmrscl_csr *ref = a;
    if (op == CMRSCL_TRANSPOSE) {
        CHECK_OK(cmrscl_csr_transpose(a, &t));
        ref = &t;
    }
    size_t nx = (size_t)ref->cols + 1, ny = (size_t)ref->rows + 1;
    double *xd = malloc(sizeof(double) * nx), *y0d = malloc(sizeof(double) * ny);
    double *yd = malloc(sizeof(double) * ny), worst = ref == &t && !t.row_ptr ? INFINITY : 0;
    test_seed(31);
    for (int g = 0; g < TEST_ALPHA_BETA_COUNT && isfinite(worst); ++g) {
        double alpha = test_alpha_beta[g][0], beta = test_alpha_beta[g][1];
        for (int32_t i = 0; i < ref->cols; ++i) /* never 0: a value coded wrong shows */
            xd[i] = (test_uniform(0.25, 1) * (i % 2 ? -1 : 1));
        for (int32_t i = 0; i < ref->rows; ++i)
            y0d[i] = beta == 0 ? NAN : test_uniform(-1, 1);
        for (size_t i = 0; p == CMRSCL_FLOAT && i + 1 < nx; ++i)
            xd[i] = (double)(float)xd[i];
        for (size_t i = 0; p == CMRSCL_FLOAT && i + 1 < ny; ++i)
            y0d[i] = (double)(float)y0d[i];
        void *x = test_values_in(xd, ref->cols, p), *y = test_values_in(y0d, ref->rows, p);
        double ratio = INFINITY;
        CHECK_OK(cmrscl_spmv_host_op(m, op, alpha, x, beta, y));
        for (int32_t i = 0; i < ref->rows; ++i)
            yd[i] = test_value_at(y, p, i);
        CHECK_OK(cmrscl_csr_spmv_check(ref, alpha, xd, beta, y0d, yd,
                                       p == CMRSCL_FLOAT ? 0x1p-24 : 0x1p-53, NULL, &ratio));
        worst = ratio > worst || isnan(ratio) ? ratio : worst;
        free(x), free(y);
    }
    free(xd), free(y0d), free(yd);
    cmrscl_csr_free(&t);
    return worst;
}

double test_uniform(double lo, double hi)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return lo + (hi - lo) * (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

cl_device_id test_cl_device(cmrscl_context ctx, cl_context *context)
{
    cl_command_queue queue = NULL;
    cl_device_id device = NULL;
    cmrscl_context_cl(ctx, context, &queue);
    if (queue)
        clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL);
    return device;
}

cl_command_queue test_queue_out_of_order(cmrscl_context ctx, cl_int *err)
{
    cl_context context;
    cl_device_id device = test_cl_device(ctx, &context);
    return clCreateCommandQueue(context, device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, err);
}

int32_t *test_row_ptr32(const cmrscl_csr *a)
{
    int32_t *rp = malloc(sizeof(int32_t) * ((size_t)a->rows + 1));
    CHECK(rp != NULL && a->nnz <= INT32_MAX);
    for (int64_t i = 0; rp && i <= a->rows; ++i)
        rp[i] = (int32_t)a->row_ptr[i];
    return rp;
}

void check_same_cmrs(cmrscl_matrix want, cmrscl_matrix got, const char *what)
{
    cmrscl_cmrs a, b;
    CHECK_OK(cmrscl_matrix_read_cmrs(want, &a));
    CHECK_OK(cmrscl_matrix_read_cmrs(got, &b));
    size_t n = (size_t)a.nnz;
    bool shape = a.strips == b.strips && a.nnz == b.nnz && a.packed == b.packed &&
                 a.row_bits == b.row_bits && a.column_ordered == b.column_ordered;
    CHECK_MSG(shape, "%s: CMRS shapes differ", what);
    if (shape) {
        CHECK_MSG(!memcmp(a.strip_ptr, b.strip_ptr, 8 * ((size_t)a.strips + 1)),
                  "%s: strip_ptr differs", what);
        CHECK_MSG(!n || !memcmp(a.col_ind, b.col_ind, 4 * n), "%s: col_ind differs", what);
        CHECK_MSG(a.packed || !n || !memcmp(a.row_in_strip, b.row_in_strip, n),
                  "%s: row_in_strip differs", what);
        CHECK_MSG(!n || !memcmp(a.values, b.values, 8 * n), "%s: values differ", what);
    }
    cmrscl_cmrs_free(&a);
    cmrscl_cmrs_free(&b);
}

/* The device copy must be exactly the host conversion with the same parameters. */
void check_device_arrays(cmrscl_matrix m, const cmrscl_csr *a, const char *what)
{
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_params(m, &p));
    cmrscl_cmrs dev, host;
    unsigned flags = (p.order == CMRSCL_ORDER_COLUMNS ? CMRSCL_CMRS_ORDER_COLUMNS : 0) |
                     (p.layout == CMRSCL_LAYOUT_UNPACKED ? CMRSCL_CMRS_UNPACKED : 0);
    CHECK_OK(cmrscl_matrix_read_cmrs(m, &dev));
    CHECK_OK(cmrscl_cmrs_from_csr(a, p.height, flags, &host));
    bool same = dev.strips == host.strips && dev.nnz == host.nnz && dev.packed == host.packed &&
                !memcmp(dev.strip_ptr, host.strip_ptr, 8 * ((size_t)host.strips + 1)) &&
                !memcmp(dev.col_ind, host.col_ind, 4 * (size_t)host.nnz) &&
                (host.packed || !memcmp(dev.row_in_strip, host.row_in_strip, (size_t)host.nnz)) &&
                !memcmp(dev.values, host.values, 8 * (size_t)host.nnz);
    CHECK_MSG(same, "%s: device CMRS arrays differ from the host conversion", what);
    cmrscl_cmrs_free(&dev);
    cmrscl_cmrs_free(&host);
}

/* The arrays of a layout with holes (MODULO, slice) read back (holes dropped) give the CSR
 * matrix exactly: every entry once, and each row's entries in their CSR order (the layouts
 * move entries only past those of other rows). A slice stores each strip's longest row times
 * its height. */
void check_holed_arrays(cmrscl_matrix m, const cmrscl_csr *a, const char *what)
{
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_params(m, &p));
    int64_t slice = 0; /* a slice: each strip's longest row times its height */
    for (int32_t r0 = 0; p.kernel == CMRSCL_KERNEL_SLICE && r0 < a->rows; r0 += p.height) {
        int64_t width = 0;
        for (int32_t r = r0; r < r0 + p.height && r < a->rows; ++r)
            width = a->row_ptr[r + 1] - a->row_ptr[r] > width ? a->row_ptr[r + 1] - a->row_ptr[r]
                                                              : width;
        slice += width * p.height;
    }
    if (p.kernel != CMRSCL_KERNEL_SLICE)
        slice = p.stored_entries;
    CHECK_MSG(p.stored_entries >= p.nnz && p.nnz == a->nnz && p.tile == 0 &&
                  p.stored_entries == slice,
              "%s: %lld stored entries for %lld nonzeros, tile %d", what,
              (long long)p.stored_entries, (long long)p.nnz, (int)p.tile);
    cmrscl_cmrs dev;
    cmrscl_csr back;
    CHECK_OK(cmrscl_matrix_read_cmrs(m, &dev));
    CHECK_OK(cmrscl_cmrs_to_csr(&dev, &back));
    size_t n = (size_t)a->nnz;
    bool same =
        back.nnz == a->nnz && !memcmp(back.row_ptr, a->row_ptr, 8 * ((size_t)a->rows + 1)) &&
        (!n ||
         (!memcmp(back.col_ind, a->col_ind, 4 * n) && !memcmp(back.values, a->values, 8 * n)));
    CHECK_MSG(same, "%s: the arrays read back (holes dropped) are not the CSR matrix", what);
    cmrscl_csr_free(&back);
    cmrscl_cmrs_free(&dev);
}

bool test_precision_arg(int argc, char **argv, cmrscl_precision *out)
{
    if (argc != 2 || (strcmp(argv[1], "float") && strcmp(argv[1], "double"))) {
        fprintf(stderr, "usage: %s float|double\n", argv[0]);
        return false;
    }
    *out = !strcmp(argv[1], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
    return true;
}

/* Everything of the plan but the timings, where the program came from, and the reason's
 * clause on why the values are plain (the user's choice on the host, not examined on the
 * device); with `chosen_alike` false (a host twin given the device path's plan by hand) not
 * where the plan came from or why either. */
void test_check_same_plan(cmrscl_matrix host, cmrscl_matrix dev, bool chosen_alike,
                          const char *what)
{
    cmrscl_params a = CMRSCL_PARAMS_INIT, b = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_params(host, &a));
    CHECK_OK(cmrscl_matrix_params(dev, &b));
    const char *va = strstr(a.plan_reason, "; values"), *vb = strstr(b.plan_reason, "; values");
    bool alike =
        !chosen_alike || (!strcmp(a.height_source, b.height_source) && va && vb &&
                          va - a.plan_reason == vb - b.plan_reason &&
                          !strncmp(a.plan_reason, b.plan_reason, (size_t)(va - a.plan_reason)));
    bool same = alike && a.precision == b.precision && a.height == b.height && a.warp == b.warp &&
                a.work_group_size == b.work_group_size && a.layout == b.layout &&
                a.order == b.order && a.reduce == b.reduce && a.kernel == b.kernel &&
                !strcmp(a.build_options, b.build_options) && a.rows == b.rows && a.cols == b.cols &&
                a.nnz == b.nnz && a.strips == b.strips && a.device_bytes == b.device_bytes &&
                a.row_bits == b.row_bits && a.modulo == b.modulo &&
                a.lane_entries == b.lane_entries && a.cache_hint == b.cache_hint &&
                a.tile == b.tile && a.tiles == b.tiles && a.long_strips == b.long_strips &&
                a.stored_entries == b.stored_entries && a.index_bits == b.index_bits &&
                !memcmp(&a.stats, &b.stats, sizeof a.stats) && a.values == CMRSCL_VALUES_PLAIN &&
                b.values == CMRSCL_VALUES_PLAIN;
    CHECK_MSG(same,
              "%s: plans differ: host \"%s\" (%s; spread %.17g, %llu bytes), device \"%s\" (%s; "
              "spread %.17g, %llu bytes)",
              what, a.build_options, a.plan_reason, a.stats.col_spread,
              (unsigned long long)a.device_bytes, b.build_options, b.plan_reason,
              b.stats.col_spread, (unsigned long long)b.device_bytes);
}

cmrscl_options test_options_of_plan(const cmrscl_params *p)
{
    return (cmrscl_options){.kernel = p->kernel,
                            .height = p->height,
                            .warp = p->warp,
                            .work_group_size = p->work_group_size,
                            .layout = p->layout,
                            .order = p->order,
                            .reduce = p->reduce,
                            .tile = p->tile ? p->tile : -1,
                            .combine = p->tile ? p->combine : CMRSCL_COMBINE_AUTO,
                            .lane_entries = p->lane_entries};
}

cmrscl_status test_solve_host(cmrscl_matrix m, const cmrscl_solve_options *o, cmrscl_precision p,
                              const double *b, double *x, int n, cmrscl_solve_result *res)
{
    void *bd = test_values_in(b, n, p), *xd = test_values_in(x, n, p);
    cmrscl_status st = cmrscl_solve_host(m, o, bd, xd, res);
    for (int i = 0; i < n; ++i)
        x[i] = test_value_at(xd, p, i);
    free(bd), free(xd);
    return st;
}

bool test_same_csr(const cmrscl_csr *a, const cmrscl_csr *b)
{
    return a->rows == b->rows && a->cols == b->cols && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, sizeof(int64_t) * ((size_t)a->rows + 1)) &&
           !memcmp(a->col_ind, b->col_ind, sizeof(int32_t) * (size_t)a->nnz) &&
           !memcmp(a->values, b->values, sizeof(double) * (size_t)a->nnz);
}
