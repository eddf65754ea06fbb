/* setup_device.c - see setup_device.h. Each step is timed the same way: host clock around
 * the call and a clFinish of the context's queue, median of the repetitions; what a step
 * creates is freed after its clock stopped. */
#include "setup_device.h"

#include <stdlib.h>
#include <string.h>

typedef struct setup_run {
    cmrscl_context ctx;
    cl_context cl;
    cl_command_queue queue;
    const cmrscl_csr *csr;
    cmrscl_precision precision;
    const cmrscl_options *opt;
    cl_mem row_ptr, col_ind, values, copy_target; /* the CSR on the device; the bus copy's */
    void *host_values;                            /* the values in `precision` */
    size_t value_bytes;
    cmrscl_matrix updated; /* the matrix the updates rewrite */
    cmrscl_matrix made;    /* what a create step made, freed off the clock */
} setup_run;

typedef cmrscl_status (*setup_step)(setup_run *r);

static cmrscl_status bus_copy(setup_run *r)
{
    cl_int err = clEnqueueWriteBuffer(r->queue, r->copy_target, CL_TRUE, 0, r->value_bytes,
                                      r->host_values, 0, NULL, NULL);
    return err == CL_SUCCESS ? CMRSCL_OK : CMRSCL_ERROR_OPENCL;
}

static cmrscl_status device_create(setup_run *r)
{
    const cmrscl_csr *a = r->csr;
    return cmrscl_matrix_create_from_cl(r->ctx, r->precision, a->rows, a->cols, (int32_t)a->nnz,
                                        r->row_ptr, r->col_ind, r->values, r->opt, &r->made);
}

static cmrscl_status update_from_device(setup_run *r)
{
    return cmrscl_matrix_update_values_cl(r->updated, r->values, r->precision);
}

static cmrscl_status update_from_host(setup_run *r)
{
    return cmrscl_matrix_update_values(r->updated, r->host_values, r->precision);
}

/* Median milliseconds of n runs of a step, each finished on the device. */
static cmrscl_status time_step(setup_run *r, setup_step step, int n, double *ms)
{
    double *t = malloc(sizeof(double) * (size_t)n);
    if (!t)
        return CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    cmrscl_status st = CMRSCL_OK;
    for (int i = 0; i < n && st == CMRSCL_OK; ++i) {
        clFinish(r->queue);
        double t0 = cli_seconds();
        st = step(r);
        clFinish(r->queue);
        t[i] = (cli_seconds() - t0) * 1e3;
        cmrscl_matrix_free(r->made);
        r->made = NULL;
    }
    *ms = cli_median(t, n);
    free(t);
    return st;
}

/* The bus copy and an update from host memory, alternately, n times each: the two medians
 * then come from the same conditions (pageable copies vary from minute to minute). */
static cmrscl_status time_against_bus(setup_run *r, setup_step step, int n, double *bus_ms,
                                      double *step_ms)
{
    cmrscl_status st = CMRSCL_OK;
    double *t = malloc(sizeof(double) * 2 * (size_t)n);
    if (!t)
        return CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    for (int i = 0; i < n && st == CMRSCL_OK; ++i) {
        st = time_step(r, bus_copy, 1, &t[i]);
        if (st == CMRSCL_OK)
            st = time_step(r, step, 1, &t[n + i]);
    }
    *bus_ms = cli_median(t, n), *step_ms = cli_median(t + n, n);
    free(t);
    return st;
}

static cl_mem upload(setup_run *r, const void *data, size_t bytes, cmrscl_status *st)
{
    cl_int err = CL_SUCCESS;
    cl_mem b = clCreateBuffer(r->cl, CL_MEM_READ_WRITE | (data ? CL_MEM_COPY_HOST_PTR : 0),
                              bytes ? bytes : 4, bytes ? (void *)data : NULL, &err);
    if (!b && *st == CMRSCL_OK)
        *st = err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES
                  ? CMRSCL_ERROR_OUT_OF_DEVICE_MEMORY
                  : CMRSCL_ERROR_OPENCL;
    return b;
}

/* The CSR on the device (int32 row pointers, what cmrscl_matrix_create_from_cl takes) and the
 * values in the precision on the host (not timed). */
static cmrscl_status prepare(setup_run *r)
{
    const cmrscl_csr *a = r->csr;
    if (a->nnz > INT32_MAX) {
        fprintf(stderr,
                "cmrscl-run: the device path takes int32 row pointers, so at most %d "
                "entries (the matrix has %lld)\n",
                INT32_MAX, (long long)a->nnz);
        return CMRSCL_ERROR_TOO_LARGE;
    }
    size_t nnz = (size_t)a->nnz, vs = r->precision == CMRSCL_DOUBLE ? 8 : 4;
    r->value_bytes = vs * nnz;
    r->host_values = malloc(r->value_bytes + vs);
    int32_t *row_ptr = malloc(sizeof(int32_t) * ((size_t)a->rows + 1));
    if (!r->host_values || !row_ptr) {
        free(row_ptr);
        return CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (int64_t i = 0; i <= a->rows; ++i)
        row_ptr[i] = (int32_t)a->row_ptr[i];
    for (size_t k = 0; k < nnz; ++k)
        if (r->precision == CMRSCL_DOUBLE)
            ((double *)r->host_values)[k] = a->values[k];
        else
            ((float *)r->host_values)[k] = (float)a->values[k];
    cmrscl_status st = CMRSCL_OK;
    r->row_ptr = upload(r, row_ptr, 4 * ((size_t)a->rows + 1), &st);
    free(row_ptr);
    r->col_ind = upload(r, a->col_ind, 4 * nnz, &st);
    r->values = upload(r, r->host_values, r->value_bytes, &st);
    r->copy_target = upload(r, NULL, r->value_bytes, &st);
    return st;
}

static void release(setup_run *r)
{
    cl_mem *bufs[] = {&r->row_ptr, &r->col_ind, &r->values, &r->copy_target};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i)
        if (*bufs[i])
            clReleaseMemObject(*bufs[i]);
    cmrscl_matrix_free(r->updated);
    free(r->host_values);
}

static void print_step(FILE *out, const char *name, double ms, double bus_ms)
{
    fprintf(out, "  %-40s %10.3f ms  %8.2f x the bus copy\n", name, ms,
            bus_ms > 0 ? ms / bus_ms : 0.0);
}

int setup_device_report(cmrscl_context ctx, const cmrscl_csr *csr, cmrscl_precision precision,
                        const cmrscl_options *opt, int repetitions, double host_create_ms,
                        FILE *out)
{
    setup_run r = {.ctx = ctx, .csr = csr, .precision = precision, .opt = opt};
    int n = repetitions > 0 ? repetitions : 1;
    cmrscl_status st = cmrscl_context_cl(ctx, &r.cl, &r.queue);
    if (st == CMRSCL_OK)
        st = prepare(&r);
    if (st != CMRSCL_OK) {
        release(&r);
        return cli_fail("setting up the device CSR", st);
    }
    const char *what = "the bus copy of the values";
    double bus = 0, bus_again = 0, dev = 0, first = 0, upd_cl = 0, upd_host = 0;
    st = time_step(&r, bus_copy, n, &bus);
    if (st == CMRSCL_OK)
        what = "the device create", st = time_step(&r, device_create, n, &dev);
    if (st == CMRSCL_OK)
        what = "the device create", st = device_create(&r);
    r.updated = r.made, r.made = NULL;
    if (st == CMRSCL_OK)
        what = "the first update", st = time_step(&r, update_from_device, 1, &first);
    if (st == CMRSCL_OK)
        what = "an update from a device buffer", st = time_step(&r, update_from_device, n, &upd_cl);
    if (st == CMRSCL_OK) /* and the bus copy again, alternately with it */
        what = "an update from host memory",
        st = time_against_bus(&r, update_from_host, n, &bus_again, &upd_host);
    if (st == CMRSCL_OK) {
        cmrscl_params p = CMRSCL_PARAMS_INIT;
        cmrscl_matrix_params(r.updated, &p);
        fprintf(out, "device set-up: %d x %d, %lld entries, %s values (%.1f MB); median of %d\n",
                csr->rows, csr->cols, (long long)csr->nnz,
                precision == CMRSCL_DOUBLE ? "double" : "float", (double)r.value_bytes / 1e6, n);
        fprintf(out, "  plan: %s (%s)\n", p.build_options, p.plan_reason);
        print_step(out, "bus copy of the values (clEnqueueWrite)", bus, bus);
        print_step(out, "host create (cmrscl_matrix_create)", host_create_ms, bus);
        print_step(out, "device create (create_from_cl)", dev, bus);
        fprintf(out,
                "    of one create: check + statistics + plan %.3f ms, buffers %.3f ms, "
                "conversion kernels %.3f ms\n",
                p.analyze_seconds * 1e3, p.upload_seconds * 1e3, p.convert_seconds * 1e3);
        print_step(out, "first update_values_cl (+ permutation)", first, bus);
        print_step(out, "update_values_cl (device values)", upd_cl, bus);
        print_step(out, "update_values (host values)", upd_host, bus);
        print_step(out, "  bus copy, timed alternately with it", bus_again, bus);
        fprintf(out, "  update_values (host values) / bus copy timed alternately: %.2f\n",
                bus_again > 0 ? upd_host / bus_again : 0.0);
    }
    release(&r);
    return st == CMRSCL_OK ? 0 : cli_fail(what, st);
}
