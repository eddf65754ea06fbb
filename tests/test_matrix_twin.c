/* A float twin of a double matrix (host/exec/matrix_twin.c, AMG's float cycle on the caller's
 * matrix): on every family, values coding and split, its product is the product of A's values
 * rounded to float, checked against the CPU's reference; it keeps its plan's shape; a values
 * update of either leaves the other as it was made, and the twin outlives the matrix it was
 * made from. A plan the device cannot run says why and is not counted. */
#include "exec/exec.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct twin_case {
    const char *spec, *what;
    cmrscl_options opt;
    bool may_skip; /* a plan some devices lack (sub-groups, the last tile's combine); every
                      other case must run */
} twin_case;

/* a's values times `scale`, the diagonal `shift` more (the same pattern, other values) */
static void new_values(const cmrscl_csr *a, double scale, double shift, double *v)
{
    for (int32_t i = 0; i < a->rows; ++i)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            v[k] = scale * a->values[k] + (a->col_ind[k] == i ? shift : 0.0);
}

/* a's pattern with values v, rounded to float where `to_float` (the reference of a float
 * matrix made from doubles) */
static void with_values(cmrscl_csr *a, const double *v, bool to_float)
{
    for (int64_t k = 0; k < a->nnz; ++k)
        a->values[k] = to_float ? (double)(float)v[k] : v[k];
}

static void check_product(cmrscl_matrix m, const cmrscl_csr *ref, cmrscl_precision p,
                          const char *what)
{
    double r = test_op_ratio(m, CMRSCL_NON_TRANSPOSE, ref, p);
    CHECK_MSG(r <= 1.0, "%s: the %s product's error %.3g of its rounding bound", what,
              p == CMRSCL_FLOAT ? "twin's" : "double matrix's", r);
}

static void check_case(cmrscl_context ctx, const twin_case *c)
{
    cmrscl_csr a, ref;
    CHECK_OK(cmrscl_csr_generate(c->spec, &a));
    CHECK_OK(cmrscl_csr_generate(c->spec, &ref));
    cmrscl_matrix m = NULL, t = NULL;
    cmrscl_status st = cmrscl_matrix_create_from_csr(ctx, CMRSCL_DOUBLE, &a, &c->opt, &m);
    if (st == CMRSCL_OK)
        st = cmrs_matrix_float_twin(m, &t);
    if (c->may_skip && (st == CMRSCL_ERROR_UNSUPPORTED || st == CMRSCL_ERROR_DEVICE_LIMIT)) {
        printf("%-28s not run: %s\n", c->what, cmrscl_last_error());
        cmrscl_matrix_free(m), cmrscl_csr_free(&a), cmrscl_csr_free(&ref);
        return;
    }
    CHECK_MSG(st == CMRSCL_OK, "%s: %s (%s)", c->what, cmrscl_status_name(st), cmrscl_last_error());
    if (st != CMRSCL_OK) {
        cmrscl_matrix_free(m), cmrscl_csr_free(&a), cmrscl_csr_free(&ref);
        return;
    }
    cmrscl_params pm = CMRSCL_PARAMS_INIT, pt = CMRSCL_PARAMS_INIT;
    CHECK_OK(cmrscl_matrix_params(m, &pm));
    CHECK_OK(cmrscl_matrix_params(t, &pt));
    printf("%-28s %s h%d, values %d -> %d; twin's own %llu bytes of %llu\n", c->what,
           cmrs_variant_family_name(pm.kernel), pm.height, (int)pm.values, (int)pt.values,
           (unsigned long long)pt.device_bytes, (unsigned long long)pm.device_bytes);
    CHECK_MSG(
        pt.precision == CMRSCL_FLOAT && pt.kernel == pm.kernel && pt.height == pm.height &&
            pt.layout == pm.layout && pt.reduce == pm.reduce && pt.tiles == pm.tiles &&
            pt.values == (pm.values == CMRSCL_VALUES_FLOAT ? CMRSCL_VALUES_PLAIN : pm.values) &&
            pt.device_bytes < pm.device_bytes,
        "%s: the twin's plan (kernel %d/%d, height %d/%d, values %d/%d, %llu/%llu bytes)", c->what,
        (int)pt.kernel, (int)pm.kernel, pt.height, pm.height, (int)pt.values, (int)pm.values,
        (unsigned long long)pt.device_bytes, (unsigned long long)pm.device_bytes);
    double *v0 = malloc(sizeof(double) * ((size_t)a.nnz + 1)),
           *v1 = malloc(sizeof(double) * ((size_t)a.nnz + 1)),
           *v2 = malloc(sizeof(double) * ((size_t)a.nnz + 1));
    new_values(&a, 1.0, 0.0, v0);
    new_values(&a, 2.0, 0.5, v1);
    new_values(&a, -0.75, 3.1, v2);
    with_values(&ref, v0, true);
    check_product(t, &ref, CMRSCL_FLOAT, c->what);
    /* the twin updated: the double matrix as it was */
    CHECK_OK(cmrscl_matrix_update_values(t, v2, CMRSCL_DOUBLE));
    with_values(&ref, v2, true);
    check_product(t, &ref, CMRSCL_FLOAT, c->what);
    with_values(&ref, v0, false);
    check_product(m, &ref, CMRSCL_DOUBLE, c->what);
    /* the double matrix updated, then gone: the twin as it was */
    CHECK_OK(cmrscl_matrix_update_values(m, v1, CMRSCL_DOUBLE));
    with_values(&ref, v1, false);
    check_product(m, &ref, CMRSCL_DOUBLE, c->what);
    with_values(&ref, v2, true);
    check_product(t, &ref, CMRSCL_FLOAT, c->what);
    cmrscl_matrix_free(m);
    with_values(&ref, v2, true);
    check_product(t, &ref, CMRSCL_FLOAT, c->what);
    free(v0), free(v1), free(v2);
    cmrscl_matrix_free(t);
    cmrscl_csr_free(&a), cmrscl_csr_free(&ref);
}

/* What is refused: a float matrix; its message names why. */
static void check_refusal(cmrscl_context ctx)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("stencil5:8", &a));
    cmrscl_matrix f = NULL, t = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &a, NULL, &f));
    cmrscl_status st = f ? cmrs_matrix_float_twin(f, &t) : CMRSCL_ERROR_UNSUPPORTED;
    CHECK_MSG(st == CMRSCL_ERROR_UNSUPPORTED && !t && test_contains(cmrscl_last_error(), "double"),
              "a float matrix's twin: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
    cmrscl_matrix_free(f);
    cmrscl_csr_free(&a);
}

int main(void)
{
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("matrix_twin");
    if (!ctx->info.fp64) {
        printf("skipped: the device has no fp64 (a float twin is made from a double matrix)\n");
        cmrscl_context_free(ctx);
        return 77;
    }
    const twin_case cases[] = {
        {"stencil7:12", "the plan's own", {0}, false},
        {"stencil7:12",
         "strips, plain values",
         {.kernel = CMRSCL_KERNEL_STRIP, .values = CMRSCL_VALUES_PLAIN},
         false},
        {"stencil5:24", "doubles stored as floats", {.values = CMRSCL_VALUES_FLOAT}, false},
        {"stencil5:24", "a dictionary", {.values = CMRSCL_VALUES_DICT}, false},
        {"lap:random:3000:4", "the diagonal apart", {.values = CMRSCL_VALUES_DIAGONAL}, false},
        {"random:3000:7", "slices, random values", {.kernel = CMRSCL_KERNEL_SLICE}, false},
        {"random:3000:7",
         "segments, 64-bit indices",
         {.kernel = CMRSCL_KERNEL_SEGMENT, .index_bits = 64},
         false},
        {"random:2000:5", "MODULO", {.kernel = CMRSCL_KERNEL_MODULO}, false},
        {"skewed:3000:4:3:2500",
         "split strips, combine kernel",
         {.kernel = CMRSCL_KERNEL_STRIP, .tile = 256, .combine = CMRSCL_COMBINE_KERNEL},
         false},
        {"skewed:3000:4:3:2500",
         "split strips, last tile's",
         {.kernel = CMRSCL_KERNEL_STRIP, .tile = 256, .combine = CMRSCL_COMBINE_LAST},
         true},
        {"fem:6:2",
         "strips, sub-groups",
         {.kernel = CMRSCL_KERNEL_STRIP, .reduce = CMRSCL_REDUCE_SUBGROUP},
         true},
        {"random:3000:9",
         "segments, sub-groups",
         {.kernel = CMRSCL_KERNEL_SEGMENT, .reduce = CMRSCL_REDUCE_SUBGROUP},
         true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        check_case(ctx, &cases[i]);
    check_refusal(ctx);
    cmrscl_context_free(ctx);
    return test_finish("matrix_twin");
}
