/* test_util.c - see test_util.h. */
#include "test_util.h"

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

void test_seed(unsigned long long seed) { rng_state = seed ? seed : 88172645463325252ull; }

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
