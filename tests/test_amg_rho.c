/* test_amg_rho.c - level 0's estimate of rho(D^-1 A) by Lanczos on its device matrix
 * (host/precond/amg_rho_device.c), asked for on any device (CMRSCL_AMG_DEVICE_RHO=1) with the
 * level-0 matrix borrowed: in double within rounding of the host's estimate, and a solve within
 * an iteration of the host-estimated hierarchy's; in float the host's estimate, bit for bit.
 * Usage: test_amg_rho float|double */
#include "precond/precond.h"
#include "solve_reference.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKIP 77

static cmrscl_precision prec;

static cmrscl_status solve(cmrscl_matrix m, const cmrscl_solve_options *o, const double *b,
                           double *x, int n, cmrscl_solve_result *res)
{
    return test_solve_host(m, o, prec, b, x, n, res);
}

/* One matrix: its hierarchy with level 0's rho from the device and from the host. */
static void check_device_rho(cmrscl_context ctx, const char *spec)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate(spec, &a));
    int n = a.rows;
    double *dinv = NULL, host_rho = 0;
    bool symmetric = false;
    CHECK_OK(cmrs_amg_inverse_diagonal(&a, 0, &dinv));
    CHECK_OK(cmrs_amg_symmetric(&a, &symmetric));
    if (dinv)
        CHECK_OK(cmrs_amg_spectral_radius(&a, dinv, symmetric, 15, &host_rho));
    cmrscl_matrix m = NULL;
    cmrscl_precond on_device = NULL, on_host = NULL;
    CHECK_OK(cmrscl_matrix_create_from_csr(ctx, prec, &a, NULL, &m));
    cmrscl_amg_options shared = CMRSCL_AMG_OPTIONS_INIT;
    shared.matrix = m;
    setenv("CMRSCL_AMG_DEVICE_RHO", "1", 1);
    if (m)
        CHECK_OK(cmrscl_precond_create_amg(ctx, prec, &a, &shared, &on_device));
    setenv("CMRSCL_AMG_DEVICE_RHO", "0", 1);
    if (m)
        CHECK_OK(cmrscl_precond_create_amg(ctx, prec, &a, &shared, &on_host));
    unsetenv("CMRSCL_AMG_DEVICE_RHO");
    if (on_device && on_host) {
        cmrscl_amg_info di, hi;
        CHECK_OK(cmrscl_precond_amg_info(on_device, &di));
        CHECK_OK(cmrscl_precond_amg_info(on_host, &hi));
        double gap = fabs(di.rho[0] - host_rho) / host_rho;
        if (prec == CMRSCL_DOUBLE)
            CHECK_MSG(symmetric && gap < 1e-10 && hi.rho[0] == host_rho,
                      "%s: rho on the device %.17g, on the host %.17g (gap %.3g), without the "
                      "device %.17g",
                      spec, di.rho[0], host_rho, gap, hi.rho[0]);
        else
            CHECK_MSG(di.rho[0] == host_rho && hi.rho[0] == host_rho,
                      "%s float: rho %.17g and %.17g, the host's %.17g", spec, di.rho[0], hi.rho[0],
                      host_rho);
        double *b = malloc(sizeof(double) * (size_t)n), *x = calloc((size_t)n, sizeof(double));
        for (int i = 0; i < n; ++i)
            b[i] = 1.0 + (i % 5) / 5.0;
        cmrscl_solve_options o = {.rtol = prec == CMRSCL_DOUBLE ? 1e-8 : 1e-4,
                                  .preconditioner = CMRSCL_PRECONDITIONER_AMG,
                                  .precond = on_device};
        cmrscl_solve_result rd = {0}, rh = {0};
        CHECK_OK(solve(m, &o, b, x, n, &rd));
        memset(x, 0, sizeof(double) * (size_t)n);
        o.precond = on_host;
        CHECK_OK(solve(m, &o, b, x, n, &rh));
        CHECK_MSG(rd.converged && abs(rd.iterations - rh.iterations) <= 1,
                  "%s: with the device's rho %s after %d iterations, the host's %d", spec,
                  cmrscl_solve_reason_name(rd.reason), rd.iterations, rh.iterations);
        printf("%s %s: rho %.17g on the device, %.17g on the host; %d and %d iterations\n", spec,
               prec == CMRSCL_DOUBLE ? "double" : "float", di.rho[0], host_rho, rd.iterations,
               rh.iterations);
        cmrscl_solve_result_free(&rd), cmrscl_solve_result_free(&rh);
        free(b), free(x);
    }
    cmrscl_precond_free(on_device), cmrscl_precond_free(on_host);
    cmrscl_matrix_free(m);
    free(dinv);
    cmrscl_csr_free(&a);
}

int main(int argc, char **argv)
{
    if (!test_precision_arg(argc, argv, &prec))
        return 2;
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("amg_rho");
    if (prec == CMRSCL_DOUBLE && !ctx->info.fp64) {
        printf("skipped: the device has no fp64\n");
        cmrscl_context_free(ctx);
        return SKIP;
    }
    check_device_rho(ctx, "stencil7:16");
    check_device_rho(ctx, "fem:8:3");
    cmrscl_context_free(ctx);
    return test_finish("amg_rho");
}
