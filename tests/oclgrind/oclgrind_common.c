/* oclgrind_common.c - what test_oclgrind's checks share (oclgrind_common.h). */
#include "oclgrind_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int index_bits = 0;

static const int catalogue[] = {0, 1, 2, 4, 5, 11}; /* 0x0 9x0 0x9 5x5 37x37 1x257 */
static const struct shape {
    const char *name;
    int32_t rows, cols, max_len; /* rows of 0..max_len random entries */
    int32_t dense_row;           /* a row with every column, or -1 */
} shapes[] = {
    {"13x13 nnz=0", 13, 13, 0, -1},
    {"29x150 one dense row", 29, 150, 3, 17},
    {"31x6 tall", 31, 6, 6, -1},
    {"97x89 random", 97, 89, 40, -1}, /* some rows longer than a warp of 32 */
};
#define CATALOGUE_COUNT ((int)(sizeof catalogue / sizeof catalogue[0]))
_Static_assert(sizeof catalogue / sizeof catalogue[0] + sizeof shapes / sizeof shapes[0] ==
                   MATRIX_COUNT,
               "MATRIX_COUNT counts the catalogue's matrices and the shapes");

const char *build_matrix(int i, cmrscl_csr *out)
{
    if (i < CATALOGUE_COUNT)
        return test_matrix_build(catalogue[i], out);
    const struct shape *s = &shapes[i - CATALOGUE_COUNT];
    size_t cap = (size_t)s->rows * (size_t)s->max_len + (size_t)s->cols + 1, n = 0;
    int32_t *ri = malloc(sizeof(int32_t) * cap), *ci = malloc(sizeof(int32_t) * cap);
    double *v = malloc(sizeof(double) * cap);
    test_seed(4000 + (unsigned long long)i);
    for (int32_t r = 0; r < s->rows; ++r) {
        int len = r == s->dense_row ? s->cols : (int)test_uniform(0, s->max_len + 1);
        for (int k = 0; k < len; ++k, ++n) { /* duplicates allowed: the CSR builder sums them */
            ri[n] = r;
            ci[n] = r == s->dense_row ? k : (int32_t)test_uniform(0, s->cols);
            v[n] = test_uniform(-1, 1);
        }
    }
    CHECK_OK(cmrscl_csr_from_coo(s->rows, s->cols, (int64_t)n, ri, ci, v, out));
    free(ri), free(ci), free(v);
    return s->name;
}

double put(void *a, cmrscl_precision p, size_t i, double v)
{
    if (p == CMRSCL_FLOAT)
        return ((float *)a)[i] = (float)v;
    return ((double *)a)[i] = v;
}

cl_mem exact_buffer(const env *e, cl_mem_flags flags, size_t bytes, void *host)
{
    if (bytes == 0)
        return NULL;
    cl_int err = CL_SUCCESS;
    cl_mem b = clCreateBuffer(e->cl, flags | CL_MEM_COPY_HOST_PTR, bytes, host, &err);
    CHECK_MSG(b != NULL, "clCreateBuffer of %zu bytes failed (%d)", bytes, (int)err);
    return b;
}

bool open_env(env *e)
{
    memset(e, 0, sizeof *e);
    CHECK_OK(cmrscl_context_create(NULL, &e->ctx));
    if (!e->ctx)
        return false;
    CHECK_OK(cmrscl_context_device_info(e->ctx, &e->dev));
    CHECK_OK(cmrscl_context_cl(e->ctx, &e->cl, &e->queue));
    const cmrscl_device_info *d = &e->dev;
    printf("device %u:%u %s (%s), %s; probed warp %u (%s), fp64 %s, local memory %llu bytes\n",
           d->platform_index, d->device_index, d->device_name, d->platform_name, d->device_version,
           d->warp_width, cmrscl_warp_source_name(d->warp_source), d->fp64 ? "yes" : "no",
           (unsigned long long)d->local_mem_bytes);
    CHECK_MSG(
        test_contains(d->platform_name, "Oclgrind"),
        "not running under Oclgrind (platform \"%s\"): run it as `oclgrind test_oclgrind ...`",
        d->platform_name);
    return test_failures == 0;
}
