/* test_fit.c - the automatic plan fits the kernel it builds: for each family with the plan's
 * own work-group, on every third matrix of the catalogue in float, the product kernel's own limits
 * as the implementation reports them after the build (CL_KERNEL_WORK_GROUP_SIZE,
 * CL_KERNEL_LOCAL_MEM_SIZE) hold the plan's work-group and local memory, and the product runs.
 * Devices whose kernels run fewer work-items than the device reports (Mesa's llvmpipe: 32 of 1024)
 * are where this fails if the plan trusts the device's figure. */
#include "exec/exec.h"
#include "runtime/runtime.h"
#include "test_matrices.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

static int checked;

static void check_fit(cmrscl_context ctx, const cmrscl_csr *a, cmrscl_kernel kernel,
                      const char *family, const char *name)
{
    cmrscl_options o = {.kernel = kernel};
    cmrscl_matrix m = NULL;
    cmrscl_status st = cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, a, &o, &m);
    if (st == CMRSCL_ERROR_UNSUPPORTED) /* a family the device does not run: said elsewhere */
        return;
    CHECK_MSG(st == CMRSCL_OK, "%s on %s: %s (%s)", family, name, cmrscl_status_name(st),
              cmrscl_last_error());
    if (!m)
        return;
    size_t most = 0;
    cl_ulong local = 0, device_local = ctx->info.local_mem_bytes;
    cl_kernel ks[2] = {m->kernel, m->combine};
    for (int i = 0; i < 2 && ks[i]; ++i) {
        CHECK(clGetKernelWorkGroupInfo(ks[i], ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most,
                                       &most, NULL) == CL_SUCCESS);
        CHECK(clGetKernelWorkGroupInfo(ks[i], ctx->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local,
                                       &local, NULL) == CL_SUCCESS);
        CHECK_MSG((size_t)m->params.work_group_size <= most && local <= device_local,
                  "%s on %s: work-group %d, the kernel runs %zu; local memory %llu of %llu", family,
                  name, m->params.work_group_size, most, (unsigned long long)local,
                  (unsigned long long)device_local);
    }
    float *x = calloc((size_t)a->cols + 1, sizeof *x), *y = calloc((size_t)a->rows + 1, sizeof *y);
    CHECK_OK(cmrscl_spmv_host(m, 1.0, x, 0.0, y));
    free(x), free(y);
    cmrscl_matrix_free(m);
    ++checked;
}

int main(void)
{
    cmrscl_context ctx = NULL;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    static const struct {
        const char *name;
        cmrscl_kernel kernel;
    } families[] = {{"automatic", CMRSCL_KERNEL_AUTO},
                    {"strip", CMRSCL_KERNEL_STRIP},
                    {"segment", CMRSCL_KERNEL_SEGMENT},
                    {"modulo", CMRSCL_KERNEL_MODULO},
                    {"slice", CMRSCL_KERNEL_SLICE}};
    for (int i = 0; ctx && i < test_matrix_count(); i += 3) { /* a third: plans of every shape */
        cmrscl_csr a;
        const char *name = test_matrix_build(i, &a);
        for (size_t f = 0; f < sizeof families / sizeof *families; ++f)
            check_fit(ctx, &a, families[f].kernel, families[f].name, name);
        cmrscl_csr_free(&a);
    }
    if (ctx)
        printf("fit: %d plans checked against their kernels' limits (device runs %u a group)\n",
               checked, ctx->info.max_work_group_size);
    CHECK(checked > 0);
    cmrscl_context_free(ctx);
    return test_finish("fit");
}
