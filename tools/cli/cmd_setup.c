/* cmd_setup.c - `cmrscl-run setup`: the time of every step between a file and the first
 * product. A solver pays these once per matrix (or once per
 * new set of values), against thousands of products:
 *   read      Matrix Market -> canonical CSR (host threads, --threads)
 *   analyze   row statistics, plan, split          } cmrscl_matrix_create, median of
 *   convert   CSR -> CMRS arrays on the host        } -r repetitions in one context
 *   upload    device buffers                       }
 *   program   the first context's build (JIT, or the on-disk cache) and a second
 *             context's (the on-disk cache when it is on)
 *   first     the first product after create
 * then the device-side steps (tools/cli/setup_device.c): conversion from CSR in cl_mem
 * buffers and values-only updates, next to a bus copy of the values. */
#include "bench.h"
#include "run_memory.h"
#include "setup_device.h"

#include <stdlib.h>
#include <string.h>

static const char *program_words(cmrscl_program_source s)
{
    return s == CMRSCL_PROGRAM_JIT    ? "compiled from source"
           : s == CMRSCL_PROGRAM_DISK ? "loaded from the on-disk cache"
                                      : "already in the context";
}

/* The first product after create: launch, run and finish, on the host clock. */
static int first_product(cmrscl_context ctx, cmrscl_matrix m, const cmrscl_csr *a,
                         cmrscl_precision p, double *seconds)
{
    cl_context context;
    cl_command_queue queue;
    cmrscl_context_cl(ctx, &context, &queue);
    size_t vs = p == CMRSCL_DOUBLE ? 8 : 4;
    size_t nx = a->cols > 0 ? (size_t)a->cols : 1, ny = a->rows > 0 ? (size_t)a->rows : 1;
    void *zeros = calloc(nx > ny ? nx : ny, vs);
    cl_int err = CL_SUCCESS;
    cl_mem x = zeros ? clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, vs * nx,
                                      zeros, &err)
                     : NULL;
    cl_mem y =
        x ? clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, vs * ny, zeros, &err)
          : NULL;
    free(zeros);
    cmrscl_status st = x && y ? CMRSCL_OK : CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY;
    if (st == CMRSCL_OK) {
        clFinish(queue);
        double t0 = cli_seconds();
        st = cmrscl_spmv(m, 1.0, x, 0.0, y, NULL, 0, NULL, NULL);
        clFinish(queue);
        *seconds = cli_seconds() - t0;
    }
    if (x)
        clReleaseMemObject(x);
    if (y)
        clReleaseMemObject(y);
    return st == CMRSCL_OK ? 0 : cli_fail("the first product", st);
}

/* Creates the matrix in a context of its own and reports where the program came from. */
static int program_in_new_context(const cli_options *opt, const cmrscl_csr *a, cmrscl_params *out)
{
    cmrscl_context ctx = NULL;
    cmrscl_matrix m = NULL;
    cmrscl_status st = cmrscl_context_create(opt->device, &ctx);
    if (st == CMRSCL_OK)
        st = cmrscl_matrix_create_from_csr(ctx, opt->precision, a, &opt->matrix, &m);
    if (st == CMRSCL_OK)
        cmrscl_matrix_params(m, out);
    cmrscl_matrix_free(m);
    cmrscl_context_free(ctx);
    return st == CMRSCL_OK ? 0 : cli_fail("creating the matrix", st);
}

int cmd_setup(const cli_options *opt)
{
    /* the device first: a matrix it cannot hold is refused before it is read or built */
    cmrscl_context ctx = NULL;
    cmrscl_device_info dev;
    int rc = cli_open_device(opt, &ctx, &dev);
    if (rc)
        return rc;
    loaded_matrix lm;
    run_memory check = {opt->precision, true, &dev};
    rc = load_matrix(opt, &check, &lm);
    if (rc) {
        cmrscl_context_free(ctx);
        return rc;
    }
    const cmrscl_csr *a = &lm.csr;
    int reps = opt->repetitions;
    cmrscl_matrix m = NULL;
    cmrscl_params first = CMRSCL_PARAMS_INIT, again = CMRSCL_PARAMS_INIT,
                  fresh = CMRSCL_PARAMS_INIT;
    double *t[4] = {malloc(sizeof(double) * (size_t)reps), malloc(sizeof(double) * (size_t)reps),
                    malloc(sizeof(double) * (size_t)reps), malloc(sizeof(double) * (size_t)reps)};
    double first_s = 0.0;
    cmrscl_status st = t[0] && t[1] && t[2] && t[3] ? CMRSCL_OK : CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    if (st == CMRSCL_OK)
        st = cmrscl_matrix_create_from_csr(ctx, opt->precision, a, &opt->matrix, &m);
    if (st != CMRSCL_OK)
        rc = cli_fail("creating the matrix", st);
    if (!rc) {
        cmrscl_matrix_params(m, &first);
        rc = first_product(ctx, m, a, opt->precision, &first_s);
    }
    cmrscl_matrix_free(m);
    for (int i = 0; i < reps && !rc; ++i) {
        m = NULL;
        double t0 = cli_seconds();
        st = cmrscl_matrix_create_from_csr(ctx, opt->precision, a, &opt->matrix, &m);
        t[3][i] = cli_seconds() - t0;
        if (st != CMRSCL_OK) {
            rc = cli_fail("creating the matrix", st);
            break;
        }
        cmrscl_matrix_params(m, &again);
        t[0][i] = again.analyze_seconds, t[1][i] = again.convert_seconds;
        t[2][i] = again.upload_seconds;
        cmrscl_matrix_free(m);
    }
    if (!rc)
        rc = program_in_new_context(opt, a, &fresh);
    if (!rc) {
        printf("set-up of %s (%d x %d, nnz %lld) on %s, %s; host steps: median of %d\n", lm.name,
               a->rows, a->cols, (long long)a->nnz, dev.device_name,
               opt->precision == CMRSCL_DOUBLE ? "double" : "float", reps);
        if (lm.file_mb > 0)
            printf("  read      %9.4f s   %.1f MB/s, %.1f M entries/s\n", lm.load_seconds,
                   lm.file_mb / lm.load_seconds, (double)a->nnz / lm.load_seconds / 1e6);
        printf("  analyze   %9.4f s   row statistics, plan, split\n", cli_median(t[0], reps));
        printf("  convert   %9.4f s   CSR -> CMRS arrays on the host\n", cli_median(t[1], reps));
        printf("  upload    %9.4f s   device buffers\n", cli_median(t[2], reps));
        double create = cli_median(t[3], reps);
        printf("  create    %9.4f s   cmrscl_matrix_create_from_csr in all\n", create);
        printf("  program   %9.4f s   first context: %s\n", first.build_seconds,
               program_words(first.program_source));
        printf("  program   %9.4f s   a new context: %s\n", fresh.build_seconds,
               program_words(fresh.program_source));
        printf("  first     %9.4f s   the first product after create\n", first_s);
        rc = setup_device_report(ctx, a, opt->precision, &opt->matrix, reps, 1e3 * create, stdout);
    }
    for (int i = 0; i < 4; ++i)
        free(t[i]);
    cmrscl_context_free(ctx);
    cmrscl_csr_free(&lm.csr);
    return rc;
}
