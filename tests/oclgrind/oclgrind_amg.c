/* oclgrind_amg.c - the AMG V-cycle's kernels under Oclgrind (test_oclgrind amg float|double):
 * one cycle of a small hierarchy made to keep three levels (max_coarse lowered) - the Jacobi
 * updates, or Chebyshev's steps, the products of A, P and R on their own plans, and the coarse
 * inverse's product with its tree of sums, after Cholesky (stencil5) and LU with pivots
 * (convdiff); in double also a float cycle under double r and z (the conversions) - its z
 * against the host cycle's. Oclgrind simulates every work-item: the matrices are small. */
#include "oclgrind_common.h"
#include "precond/precond.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cycle: the hierarchy's precision (p's, or float under double r and z); degree: the
 * smoother's (1 Jacobi). */
static void check_cycle(const env *e, cmrscl_precision p, cmrscl_precision cycle, int degree,
                        const char *spec, int32_t max_coarse, int levels, bool lu)
{
    cmrscl_csr a = {0};
    cmrs_amg_hierarchy h = {0};
    cmrs_amg_device d = {0};
    cmrs_amg_options o;
    cmrs_amg_options_default(&o);
    o.max_coarse = max_coarse;
    o.degree = degree;
    CHECK_OK(cmrscl_csr_generate(spec, &a));
    CHECK_OK(cmrs_amg_setup(&a, &o, &h));
    CHECK_OK(cmrs_amg_device_setup(e->ctx, p, cycle, &h, NULL, NULL, &d));
    if (test_failures)
        return;
    size_t n = (size_t)a.rows, vs = cmrscl_precision_size(p);
    double *b = malloc(n * sizeof(double)), *want = calloc(n, sizeof(double)),
           *got = calloc(n, sizeof(double));
    void *host = malloc(n * vs);
    for (size_t i = 0; i < n; ++i)
        b[i] = put(host, p, i, sin(1.0 + (double)i));
    CHECK_OK(cmrs_amg_cycle(&h, b, want));
    cl_mem r = exact_buffer(e, CL_MEM_READ_WRITE, n * vs, host);
    cl_mem z = exact_buffer(e, CL_MEM_READ_WRITE, n * vs, host); /* written over */
    CHECK_OK(cmrs_amg_device_apply(&d, r, z));
    CHECK(clEnqueueReadBuffer(e->ctx->queue, z, CL_TRUE, 0, n * vs, host, 0, NULL, NULL) ==
          CL_SUCCESS);
    for (size_t i = 0; i < n; ++i)
        got[i] = p == CMRSCL_DOUBLE ? ((double *)host)[i] : ((float *)host)[i];
    double diff = 0, size = 0;
    for (size_t i = 0; i < n; ++i)
        diff = fmax(diff, fabs(got[i] - want[i])), size = fmax(size, fabs(want[i]));
    printf("%s (%s cycle, %s): %d levels, coarse %d rows (%s), z differs by %.2g\n", spec,
           cycle == CMRSCL_DOUBLE ? "double" : "float", degree > 1 ? "Chebyshev" : "Jacobi",
           h.levels, (int)h.coarse_rows, h.coarse_lu ? "LU" : "Cholesky", diff / size);
    CHECK_MSG(h.levels == levels && h.coarse_lu == lu, "%s: %d levels, %s", spec, h.levels,
              h.coarse_lu ? "LU" : "Cholesky");
    CHECK_MSG(diff <= (cycle == CMRSCL_DOUBLE ? 1e-12 : 1e-5) * size, "%s: z differs by %.3g", spec,
              diff / size);
    clReleaseMemObject(r);
    clReleaseMemObject(z);
    free(b);
    free(want);
    free(got);
    free(host);
    cmrs_amg_device_free(&d);
    cmrs_amg_free(&h);
    cmrscl_csr_free(&a);
}

int run_amg(const env *e, cmrscl_precision p)
{
    check_cycle(e, p, p, 1, "stencil5:12", 20, 3, false);
    check_cycle(e, p, p, 2, "stencil5:12", 20, 3, false);
    /* not symmetric: the coarsest level (219 rows) takes LU with pivots */
    check_cycle(e, p, p, 1, "convdiff:12", 500, 2, true);
    if (p == CMRSCL_DOUBLE)
        check_cycle(e, p, CMRSCL_FLOAT, 1, "stencil5:12", 20, 3, false);
    return test_finish("oclgrind amg");
}

/* Each level's smoothed prolongator and Galerkin product on the device, the host's bits. */
static void check_products(const env *e, const cmrs_amg_hierarchy *h, const cmrs_amg_options *o,
                           bool prolongator_only)
{
    for (int l = 0; !test_failures && l + 1 < h->levels; ++l) {
        const cmrs_amg_level *lv = &h->level[l];
        cmrscl_csr c = {0}, r = {0}, p = {0};
        cmrs_device_csr p_on_device = {0};
        CHECK_OK(cmrs_amg_prolongator_device(e->ctx, &lv->A, NULL, &lv->T, lv->diag_inv,
                                             o->smooth_scale / lv->rho, 5, &p,
                                             prolongator_only ? NULL : &p_on_device));
        CHECK_MSG(test_same_csr(&p, &lv->P), "level %d: P on the device is not the host's", l);
        if (!prolongator_only) {
            cmrs_device_csr c_on_device = {0};
            CHECK_OK(cmrs_amg_galerkin_device(e->ctx, NULL, &lv->A, NULL, &lv->P, &p_on_device, 5,
                                              &c, &r, &c_on_device, NULL));
            CHECK_MSG(test_same_csr(&c, &h->level[l + 1].A) && test_same_csr(&r, &lv->R),
                      "level %d: R (A P) or R on the device is not the host's", l);
            /* the next level's estimate of rho from that C, left there */
            const cmrs_amg_level *next = &h->level[l + 1];
            double host = 0, device = -1;
            CHECK_OK(cmrs_amg_spectral_radius(&next->A, next->diag_inv, true, 6, &host));
            CHECK_OK(
                cmrs_amg_spectral_radius_device(e->ctx, &next->A, true, 6, &device, &c_on_device));
            CHECK_MSG(c_on_device.ptr && !memcmp(&host, &device, sizeof host),
                      "level %d: rho from the kept C %.17g, on the host %.17g", l + 1, device,
                      host);
            cmrs_device_csr_release(&c_on_device);
        }
        cmrs_device_csr_release(&p_on_device);
        cmrscl_csr_free(&p);
        cmrscl_csr_free(&c);
        cmrscl_csr_free(&r);
    }
}

/* The set-up's kernels on the device (host/precond/amg_galerkin.c, cl/spgemm.cl;
 * amg_rho_device.c, cl/amg_rho.cl): each level's estimate of rho by Lanczos and by the power
 * method, its smoothed prolongator, and its Galerkin product R (A P) from that P with R
 * transposed there, in batches of 5 rows - all the host's bits; the symmetry decided there, the
 * host's verdict. prolongator_only: the prolongators alone, every kernel's input from the host
 * (Oclgrind's uninitialised-value checks can run: test_oclgrind galerkin prolongator
 * [groups]). kernels: the products' work-item kernels, their group kernels, or both. */
int run_galerkin(const env *e, bool prolongator_only, galerkin_kernels kernels)
{
    cmrscl_csr a = {0};
    cmrs_amg_hierarchy h = {0};
    cmrs_amg_options o;
    cmrs_amg_options_default(&o);
    o.max_coarse = 20;
    CHECK_OK(cmrscl_csr_generate("convdiff:10", &a));
    CHECK_OK(cmrs_amg_setup(&a, &o, &h));
    /* the symmetry decided on the device: the host's verdict, on these levels (not symmetric)
     * and on a symmetric matrix */
    cmrscl_csr sym = {0};
    CHECK_OK(cmrscl_csr_generate("stencil5:6", &sym));
    for (int l = 0; !test_failures && !prolongator_only && l <= h.levels; ++l) {
        const cmrscl_csr *m = l < h.levels ? &h.level[l].A : &sym;
        bool host = false, device = true;
        cmrs_device_csr d;
        CHECK_OK(cmrs_amg_symmetric(m, &host));
        CHECK_OK(cmrs_device_csr_upload(e->ctx, m, &d));
        CHECK_OK(cmrs_amg_symmetric_device(e->ctx, &d, &device));
        CHECK_MSG(host == device && host == (l == h.levels),
                  "%s: symmetric %d on the device, %d on the host",
                  l < h.levels ? "a level" : "stencil5:6", device, host);
        cmrs_device_csr_release(&d);
    }
    cmrscl_csr_free(&sym);
    for (int l = 0; !test_failures && !prolongator_only && l < h.levels; ++l)
        for (int symmetric = 0; symmetric < 2; ++symmetric) {
            const cmrs_amg_level *lv = &h.level[l];
            double host = 0, device = -1;
            CHECK_OK(cmrs_amg_spectral_radius(&lv->A, lv->diag_inv, symmetric, 6, &host));
            CHECK_OK(cmrs_amg_spectral_radius_device(e->ctx, &lv->A, symmetric, 6, &device, NULL));
            CHECK_MSG(!memcmp(&host, &device, sizeof host),
                      "level %d: rho on the device %.17g, on the host %.17g (%s)", l, device, host,
                      symmetric ? "Lanczos" : "the power method");
        }
    /* a work-item a row, then a work-group of 8 lanes a row with its table in local memory
     * (cl/spgemm.cl, spgemm_count_group and spgemm_fill_group, a GPU's: the barriers' order
     * and the table's claims under the race checks). The uninitialised-value checks take one
     * of them a process: after the other, Oclgrind calls the smoothing's input uninitialised,
     * whichever came first, though every P is the host's. */
    for (int groups = kernels == GALERKIN_GROUPS; groups < 1 + (kernels != GALERKIN_ITEMS);
         ++groups) {
        setenv("CMRSCL_AMG_SPGEMM_GROUPS", groups ? "1" : "0", 1);
        setenv("CMRSCL_AMG_SPGEMM_LANES", "8", 1);
        setenv("CMRSCL_AMG_SPGEMM_LOCAL", groups ? "0" : "32", 1);
        check_products(e, &h, &o, prolongator_only);
    }
    unsetenv("CMRSCL_AMG_SPGEMM_GROUPS");
    unsetenv("CMRSCL_AMG_SPGEMM_LANES");
    unsetenv("CMRSCL_AMG_SPGEMM_LOCAL");
    printf("convdiff:10: %d levels, %s on the device the host's (%s a row)\n", h.levels,
           prolongator_only ? "P" : "rho (both methods), P, R and R A P",
           kernels == GALERKIN_BOTH     ? "a work-item and a work-group"
           : kernels == GALERKIN_GROUPS ? "a work-group"
                                        : "a work-item");
    cmrs_amg_free(&h);
    cmrscl_csr_free(&a);
    return test_finish("oclgrind galerkin");
}
