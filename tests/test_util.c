/* test_util.c - see test_util.h. */
#include "test_util.h"

#include <stdarg.h>
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
