/* oclgrind_solve.c - the solvers' kernels under Oclgrind (test_oclgrind solve float|double):
 * the products with the epilogue of dot products (-DDOTS=1, 2, 4) and the diagonal
 * (-DDIAGONAL=1) on every family's plan the device builds - a strip of several warps a group
 * (the epilogue's barrier and read back), the segment family, slices, long strips summed by
 * the second kernel and in their work-group - each product's y against the plain product's
 * and its sums against the CPU's; then CG with Jacobi, BiCGStab and GMRES (restarting) on
 * small matrices, converged, x checked on the CPU, and CG's fused iteration (cl/cg_fused.cl)
 * with and without Jacobi. Oclgrind simulates every work-item: the
 * matrices are a few dozen rows. */
#include "oclgrind_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The epilogue's product on matrix a with plan o: y as the plain product's, the sums. */
static void check_dots(const env *e, const cmrscl_csr *a, const cmrscl_options *o,
                       cmrscl_precision p, int dots, const char *what)
{
    size_t vs = cmrscl_precision_size(p), n = (size_t)a->rows;
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(e->ctx, p, a, o, &m));
    product_kernels k = {0};
    char extra[16];
    snprintf(extra, sizeof extra, "-DDOTS=%d", dots);
    if (m)
        CHECK_OK(cmrs_product_kernels_make(m, extra, 0, &k));
    if (!k.kernel) {
        cmrscl_matrix_free(m);
        return;
    }
    void *x = malloc(vs * (n + 1)), *w = malloc(vs * (n + 1)), *y = malloc(vs * (n + 1));
    void *yp = malloc(vs * (n + 1));
    size_t reals = CMRS_WS_HEADER + 4 * k.space;
    void *ws = calloc(reals, vs);
    double xs[4096], ws_d[4096];
    for (size_t i = 0; i < n; ++i)
        xs[i] = put(x, p, i, sin(1.0 + (double)i)), ws_d[i] = put(w, p, i, 1.5 + cos((double)i));
    memcpy(y, x, vs * n); /* written over by the products */
    cl_mem xb = exact_buffer(e, CL_MEM_READ_ONLY, vs * n, x);
    cl_mem wb = exact_buffer(e, CL_MEM_READ_ONLY, vs * n, w);
    cl_mem yb = exact_buffer(e, CL_MEM_READ_WRITE, vs * n, y);
    cl_mem pb = exact_buffer(e, CL_MEM_READ_WRITE, vs * n, y);
    cl_mem sb = exact_buffer(e, CL_MEM_READ_WRITE, vs * reals, ws);
    CHECK_OK(cmrscl_spmv(m, 1.0, xb, 0.0, pb, NULL, 0, NULL, NULL));
    CHECK_OK(cmrs_product_kernels_bind(&k, p, 1.0, xb, 0.0, yb, true, sb, CMRS_WS_HEADER,
                                       dots != 2 ? wb : NULL));
    CHECK_OK(cmrs_product_kernels_enqueue(&k, e->queue, false));
    clEnqueueReadBuffer(e->queue, yb, CL_TRUE, 0, vs * n, y, 0, NULL, NULL);
    clEnqueueReadBuffer(e->queue, pb, CL_TRUE, 0, vs * n, yp, 0, NULL, NULL);
    clEnqueueReadBuffer(e->queue, sb, CL_TRUE, 0, vs * reals, ws, 0, NULL, NULL);
    CHECK_MSG(!memcmp(y, yp, vs * n), "%s, DOTS %d: y differs from the plain product's", what,
              dots);
    double got[4] = {0}, ref[4] = {0}, mag[4] = {0};
    for (size_t g = 0; g < k.groups; ++g)
        for (int d = 0; d < 4; ++d)
            got[d] += p == CMRSCL_DOUBLE ? ((double *)ws)[CMRS_WS_HEADER + 4 * g + d]
                                         : ((float *)ws)[CMRS_WS_HEADER + 4 * g + d];
    for (size_t i = 0; i < n; ++i) {
        double yv = p == CMRSCL_DOUBLE ? ((double *)y)[i] : ((float *)y)[i];
        double t[4] = {xs[i] * yv, yv * yv, ws_d[i] * yv, ws_d[i] * yv * yv};
        for (int d = 0; d < 4; ++d)
            ref[d] += t[d], mag[d] += fabs(t[d]);
    }
    double u = p == CMRSCL_DOUBLE ? 0x1p-53 : 0x1p-24;
    for (int d = 0; d < 4; ++d) {
        bool made = dots == 4 || (dots == 2 && d < 2) || (dots == 1 && d == 2);
        CHECK_MSG(made ? fabs(got[d] - ref[d]) <= 4 * ((double)n + 64) * u * mag[d] : got[d] == 0,
                  "%s, DOTS %d: sum %d %.9g, the CPU's %.9g", what, dots, d, got[d],
                  made ? ref[d] : 0.0);
    }
    clReleaseMemObject(xb), clReleaseMemObject(wb), clReleaseMemObject(yb);
    clReleaseMemObject(pb), clReleaseMemObject(sb);
    free(x), free(w), free(y), free(yp), free(ws);
    cmrs_product_kernels_release(&k);
    cmrscl_matrix_free(m);
}

/* A solve of a x = 1 converged, x's residual on the CPU within 10x the threshold; its
 * launches an iteration. */
static int check_solve(const env *e, const char *spec, const cmrscl_options *plan,
                       const cmrscl_solve_options *o, cmrscl_precision p, const char *what)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate(spec, &a));
    size_t vs = cmrscl_precision_size(p), n = (size_t)a.rows;
    cmrscl_matrix m = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(e->ctx, p, &a, plan, &m));
    void *b = malloc(vs * n), *x = calloc(n, vs);
    for (size_t i = 0; i < n; ++i)
        put(b, p, i, 1.0);
    cmrscl_solve_result r = {0};
    if (m)
        CHECK_OK(cmrscl_solve_host(m, o, b, x, &r));
    double *xd = malloc(sizeof(double) * n), *ax = malloc(sizeof(double) * n), res = 0;
    for (size_t i = 0; i < n; ++i)
        xd[i] = p == CMRSCL_DOUBLE ? ((double *)x)[i] : ((float *)x)[i];
    CHECK_OK(cmrscl_csr_spmv(&a, 1.0, xd, 0.0, ax));
    for (size_t i = 0; i < n; ++i)
        res += (1 - ax[i]) * (1 - ax[i]);
    CHECK_MSG(r.converged && sqrt(res) <= 10 * r.threshold,
              "%s: %s after %d iterations, ||b - A x|| %g (threshold %g)", what,
              cmrscl_solve_reason_name(r.reason), r.iterations, sqrt(res), r.threshold);
    printf("%-40s %3d iterations, ||b - A x|| %.2e\n", what, r.iterations, sqrt(res));
    int launches = r.launches_per_iteration;
    cmrscl_solve_result_free(&r);
    free(b), free(x), free(xd), free(ax);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&a);
    return launches;
}

/* Strips of 2 rows, 8 lanes each, two a work-group: the epilogue's barrier and read back. */
static const cmrscl_options strips_of_warps = {.kernel = CMRSCL_KERNEL_STRIP,
                                               .height = 2,
                                               .warp = 8,
                                               .work_group_size = 16,
                                               .reduce = CMRSCL_REDUCE_LOCAL};

int run_solve(const env *e, cmrscl_precision p)
{
    static const struct {
        cmrscl_kernel kernel;
        int height, warp, group, tile;
        cmrscl_combine combine;
        const char *label;
    } plans[] = {
        {CMRSCL_KERNEL_STRIP, 3, 8, 32, -1, 0, "strip, 4 warps a group"},
        {CMRSCL_KERNEL_SEGMENT, 8, 1, 16, -1, 0, "segment"},
        {CMRSCL_KERNEL_SLICE, 4, 0, 8, -1, 0, "slice"},
        {CMRSCL_KERNEL_STRIP, 2, 8, 8, 3, CMRSCL_COMBINE_KERNEL, "split, second kernel"},
        {CMRSCL_KERNEL_STRIP, 2, 8, 0, 3, CMRSCL_COMBINE_GROUP, "split, in-group"},
    };
    int square[] = {2, 3, 5}; /* of build_matrix: square, with empty rows and a long one */
    for (size_t k = 0; k < sizeof plans / sizeof plans[0]; ++k) {
        cmrscl_options o = {.kernel = plans[k].kernel,
                            .height = plans[k].height,
                            .warp = plans[k].warp,
                            .work_group_size = plans[k].group,
                            .tile = plans[k].tile,
                            .combine = plans[k].combine,
                            .reduce = CMRSCL_REDUCE_LOCAL};
        for (size_t i = 0; i < sizeof square / sizeof square[0]; ++i) {
            cmrscl_csr a;
            char what[160];
            snprintf(what, sizeof what, "%s, %s", build_matrix(square[i], &a), plans[k].label);
            if (a.rows == a.cols && a.rows < 4096) {
                check_dots(e, &a, &o, p, 1, what);
                check_dots(e, &a, &o, p, 2, what);
                check_dots(e, &a, &o, p, 4, what);
            }
            cmrscl_csr_free(&a);
        }
    }
    cmrscl_options slice = {.kernel = CMRSCL_KERNEL_SLICE, .height = 8, .work_group_size = 16};
    const cmrscl_options strip = strips_of_warps;
    /* checks 8 iterations apart: the kernels enqueued past the stop run too (each deciding
     * kernel copies the stop into its own slot, cmrs_abi.h) */
    cmrscl_solve_options pcg = {.preconditioner = CMRSCL_PRECONDITIONER_JACOBI,
                                .rtol = p == CMRSCL_DOUBLE ? 1e-8 : 1e-4,
                                .check_interval = 8};
    cmrscl_solve_options bicg = {
        .method = CMRSCL_METHOD_BICGSTAB, .rtol = pcg.rtol, .check_interval = 8};
    cmrscl_solve_options gmres = {
        .method = CMRSCL_METHOD_GMRES, .restart = 4, .rtol = pcg.rtol, .check_interval = 8};
    /* the next kernels add the products' sums (the chain is run_chain's: it is no race-free
     * OpenCL 1.2 program, by design) */
    setenv("CMRSCL_SOLVE_SUMS", "fold", 1);
    check_solve(e, "stencil7:4", &slice, &pcg, p, "CG with Jacobi, slices");
    /* ... its product on a grid of two work-groups, the sums in local memory (DOTS_LOCAL_SUMS:
     * each work-item's slot read and written a row) */
    setenv("CMRSCL_SOLVE_FUSED", "0", 1);
    setenv("CMRSCL_SOLVE_PRODUCT_GROUPS", "2", 1);
    setenv("CMRSCL_SOLVE_LOCAL_SUMS", "1", 1);
    check_solve(e, "stencil7:4", &slice, &pcg, p, "CG with Jacobi, slices, sums in local memory");
    unsetenv("CMRSCL_SOLVE_LOCAL_SUMS");
    unsetenv("CMRSCL_SOLVE_PRODUCT_GROUPS");
    unsetenv("CMRSCL_SOLVE_FUSED");
    check_solve(e, "convdiff:4", &strip, &bicg, p, "BiCGStab, strips");
    check_solve(e, "convdiff:3", NULL, &gmres, p, "GMRES(4)");
    unsetenv("CMRSCL_SOLVE_SUMS");
    /* the fused CG iteration (cl/cg_fused.cl), plain and with Jacobi on slices, the second on
     * a grid of two work-groups (each warp walking several strips), and on strips of several
     * warps a group (its rows updated after the barrier): one launch an iteration */
    cmrscl_solve_options cg = {.rtol = pcg.rtol, .check_interval = 8};
    setenv("CMRSCL_SOLVE_FUSED", "1", 1);
    int fused = check_solve(e, "stencil7:5", &slice, &cg, p, "CG fused, slices");
    setenv("CMRSCL_SOLVE_PRODUCT_GROUPS", "2", 1);
    int capped = check_solve(e, "stencil7:4", &slice, &pcg, p, "CG with Jacobi fused, 2 groups");
    unsetenv("CMRSCL_SOLVE_PRODUCT_GROUPS");
    int strips = check_solve(e, "stencil7:4", &strip, &cg, p, "CG fused, strips");
    unsetenv("CMRSCL_SOLVE_FUSED");
    CHECK_MSG(fused == 1 && capped == 1 && strips == 1,
              "the fused CG iteration not taken: %d, %d and %d launches an iteration (1 with it)",
              fused, capped, strips);
    return test_finish("oclgrind solve");
}

/* The chain (cl/dots.cl, DOTS_CHAIN): every product's partial sums added up by its own last
 * units (CMRSCL_SOLVE_SUMS=chain), on slices, strips of several warps and segments, the
 * launches an iteration as with the fold (CG 2, BiCGStab 5: no reduction launched) - a test
 * that the chain was taken, the solve's checks that its sums are right. Oclgrind checks the chain's
 * loads and stores in bounds and aligned; its data-race check is not asked: the chain reads other
 * work-groups' stores within a launch, which the OpenCL 1.2 model leaves undefined and the host
 * takes only where the device makes them visible (host/solve/solver.c). */
int run_chain(const env *e, cmrscl_precision p)
{
    cmrscl_options slice = {.kernel = CMRSCL_KERNEL_SLICE, .height = 4, .work_group_size = 8};
    const cmrscl_options strip = strips_of_warps;
    cmrscl_options segment = {.kernel = CMRSCL_KERNEL_SEGMENT, .height = 4, .warp = 1};
    double rtol = p == CMRSCL_DOUBLE ? 1e-8 : 1e-4;
    cmrscl_solve_options cg = {.rtol = rtol, .check_interval = 8};
    cmrscl_solve_options pcg = {
        .preconditioner = CMRSCL_PRECONDITIONER_JACOBI, .rtol = rtol, .check_interval = 8};
    cmrscl_solve_options bicg = {.method = CMRSCL_METHOD_BICGSTAB, .rtol = rtol};
    setenv("CMRSCL_SOLVE_SUMS", "chain", 1);
    setenv("CMRSCL_SOLVE_FUSED", "0", 1); /* CG's two kernels: a product's sums for the next */
    int launches[] = {check_solve(e, "stencil7:5", &slice, &cg, p, "CG, slices, the chain"),
                      check_solve(e, "stencil7:4", &strip, &pcg, p, "CG with Jacobi, strips"),
                      check_solve(e, "convdiff:4", &segment, &bicg, p, "BiCGStab, segments")};
    unsetenv("CMRSCL_SOLVE_SUMS");
    unsetenv("CMRSCL_SOLVE_FUSED");
    CHECK_MSG(launches[0] == 2 && launches[1] == 2 && launches[2] == 5,
              "the chain not taken: %d, %d and %d launches an iteration (2, 2 and 5 with it)",
              launches[0], launches[1], launches[2]);
    return test_finish("oclgrind chain");
}
