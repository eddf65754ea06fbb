/* cmd_solve.c - `cmrscl-run solve`: A x = b on the device with the library's solvers (CG, CG
 * with Jacobi, BiCGStab, GMRES), then x checked on the CPU in double: iterations, the
 * recurrence's and the true residual, the time per iteration, and a progress line on a
 * terminal while a long solve runs. -r N solves N times with one solver (the median time). */
#include "bench.h"
#include "plans.h"
#include "run_memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

/* A Matrix Market array file of n x 1 (or 1 x n) real or integer values into b: 0, or an
 * exit status after saying why. The header's other words: as cmrscl_mtx_read's files. */
static int read_array_vector(const char *rhs, gzFile f, int n, double *b)
{
    char line[1024];
    long long rows = -1, cols = -1;
    while (gzgets(f, line, sizeof line)) {
        if (line[0] == '%' || strspn(line, " \t\r\n") == strlen(line))
            continue;
        if (sscanf(line, "%lld %lld", &rows, &cols) != 2)
            rows = -1;
        break;
    }
    if (rows < 0 || cols < 0) {
        fprintf(stderr, "%s: --rhs %s: no size line (rows cols) after the header\n", cli_name, rhs);
        return EXIT_RUN_FAILED;
    }
    if (!((rows == n && cols == 1) || (rows == 1 && cols == n))) {
        fprintf(stderr, "%s: --rhs %s is %lld x %lld: expected a %d x 1 vector\n", cli_name, rhs,
                rows, cols, n);
        return EXIT_USAGE;
    }
    int got = 0;
    bool more = false;
    while (!more && gzgets(f, line, sizeof line)) {
        if (line[0] == '%')
            continue;
        for (char *at = line, *end;; at = end) {
            double v = strtod(at, &end);
            if (end == at) {
                at += strspn(at, " \t\r\n");
                if (*at) {
                    fprintf(stderr, "%s: --rhs %s: '%.20s' is not a number\n", cli_name, rhs, at);
                    return EXIT_RUN_FAILED;
                }
                break;
            }
            if (got == n) {
                more = true;
                break;
            }
            b[got++] = v;
        }
    }
    if (got != n || more) {
        fprintf(stderr, "%s: --rhs %s holds %s%d values: its size line says %d\n", cli_name, rhs,
                more ? "more than " : "", got, n);
        return EXIT_RUN_FAILED;
    }
    return 0;
}

/* A Matrix Market vector: an array file (the usual form) or a coordinate matrix of one
 * column (entries not listed are 0). */
static int read_mtx_vector(const char *rhs, int n, double *b)
{
    gzFile f = gzopen(rhs, "rb");
    char header[1024] = "";
    if (!f || !gzgets(f, header, sizeof header)) {
        fprintf(stderr, "%s: --rhs %s: cannot read it\n", cli_name, rhs);
        if (f)
            gzclose(f);
        return EXIT_RUN_FAILED;
    }
    char banner[64] = "", object[64] = "", format[64] = "", field[64] = "";
    sscanf(header, "%63s %63s %63s %63s", banner, object, format, field);
    if (!strcasecmp(format, "array")) {
        int rc = 0;
        if (strcasecmp(banner, "%%MatrixMarket") || strcasecmp(object, "matrix") ||
            (strcasecmp(field, "real") && strcasecmp(field, "integer") &&
             strcasecmp(field, "double"))) {
            fprintf(stderr,
                    "%s: --rhs %s: a Matrix Market array of real or integer values expected, "
                    "not '%s %s %s %s'\n",
                    cli_name, rhs, banner, object, format, field);
            rc = EXIT_RUN_FAILED;
        }
        if (!rc)
            rc = read_array_vector(rhs, f, n, b);
        gzclose(f);
        return rc;
    }
    gzclose(f);
    cmrscl_csr v;
    cmrscl_status st = cmrscl_mtx_read(rhs, NULL, &v);
    if (st != CMRSCL_OK)
        return cli_fail("reading the right-hand side", st);
    int rc = 0;
    if (v.rows != n || v.cols != 1) {
        fprintf(stderr, "%s: --rhs %s is %d x %d: expected a %d x 1 vector\n", cli_name, rhs,
                v.rows, v.cols, n);
        rc = EXIT_USAGE;
    }
    for (int i = 0; !rc && i < n; ++i)
        b[i] = v.row_ptr[i + 1] > v.row_ptr[i] ? v.values[v.row_ptr[i]] : 0;
    cmrscl_csr_free(&v);
    return rc;
}

/* The right-hand side: ones, random (uniform in [-1, 1], fixed seed) or a file - a Matrix
 * Market vector (an array, or a coordinate matrix of one column) or plain numbers. */
static int make_rhs(const char *rhs, int n, double *b)
{
    if (!rhs || !strcmp(rhs, "ones")) {
        for (int i = 0; i < n; ++i)
            b[i] = 1;
        return 0;
    }
    if (!strcmp(rhs, "random")) {
        uint64_t s = 0x9e3779b97f4a7c15ull;
        for (int i = 0; i < n; ++i) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            b[i] = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
        }
        return 0;
    }
    size_t len = strlen(rhs);
    if (len > 4 && (!strcmp(rhs + len - 4, ".mtx") || strstr(rhs, ".mtx.gz")))
        return read_mtx_vector(rhs, n, b);
    FILE *f = fopen(rhs, "r");
    if (!f) {
        fprintf(stderr, "%s: --rhs %s: no such file (expected ones, random or a file)\n", cli_name,
                rhs);
        return EXIT_USAGE;
    }
    int got = 0;
    while (got < n && fscanf(f, "%lf", &b[got]) == 1)
        ++got;
    double extra;
    bool more = fscanf(f, "%lf", &extra) == 1;
    fclose(f);
    if (got != n || more) {
        fprintf(stderr, "%s: --rhs %s holds %s%d numbers: expected %d\n", cli_name, rhs,
                more ? "more than " : "", got, n);
        return EXIT_USAGE;
    }
    return 0;
}

/* AMG's hierarchy: a line a level, the complexities, the set-up's phases. */
static void print_amg(cmrscl_precond amg, int cycle)
{
    cmrscl_amg_info in;
    if (cmrscl_precond_amg_info(amg, &in) != CMRSCL_OK)
        return;
    for (int l = 0; l < in.levels; ++l)
        printf("amg        level %d: %d rows, %lld entries%s\n", l, (int)in.rows[l],
               (long long)in.entries[l], l == in.levels - 1 ? " (inverted densely)" : "");
    printf("amg        operator complexity %.3f, grid complexity %.3f, strength theta %g; %s-cycle "
           "in %s, %.1f MB on the device\n",
           in.operator_complexity, in.grid_complexity, in.theta,
           cycle == CMRSCL_AMG_CYCLE_W ? "W" : "V",
           in.cycle_precision == CMRSCL_FLOAT ? "float" : "double", (double)in.device_bytes / 1e6);
    printf("amg        set-up %.3f s: smoother %.3f, strength %.3f, aggregation %.3f, P %.3f, RAP "
           "%.3f, coarse inverse %.3f (host), device %.3f\n",
           in.seconds_total, in.seconds_smoother, in.seconds_strength, in.seconds_aggregation,
           in.seconds_prolongator, in.seconds_rap, in.seconds_coarse, in.seconds_device);
}

/* A progress line on a terminal, at most a few times a second. */
typedef struct progress {
    double last, start;
} progress;
static void show_progress(void *data, int iterations, double residual)
{
    progress *p = data;
    double now = cli_seconds();
    if (now - p->last < 0.25 || now - p->start < 1.0)
        return;
    p->last = now;
    fprintf(stderr, "\rsolving: iteration %d, ||r|| %.3e  ", iterations, residual);
}

/* elastic:N's rigid-body modes (rows x 6, malloc'ed), or NULL with the message printed where
 * the matrix is another or its rows are not elastic:N's. */
static double *rigid_body_modes(const char *name, int32_t rows)
{
    long n = 0;
    if (sscanf(name, "elastic:%ld", &n) != 1 || n < 1 || 3 * (n + 1) * (n + 1) * (n + 1) != rows) {
        fprintf(stderr, "%s: --amg-rigid-body: needs the points of a generated elastic:N, not %s\n",
                cli_name, name);
        return NULL;
    }
    int32_t nodes = rows / 3, m = (int32_t)n + 1;
    double *xyz = malloc(sizeof(double) * 3 * (size_t)nodes),
           *modes = malloc(sizeof(double) * 6 * (size_t)rows);
    for (int32_t p = 0; xyz && modes && p < nodes; ++p) { /* point p = x + m (y + m z) */
        int32_t x = p % m, y = p / m % m, z = p / m / m;
        xyz[3 * (size_t)p] = x, xyz[3 * (size_t)p + 1] = y, xyz[3 * (size_t)p + 2] = z;
    }
    if (!xyz || !modes || cmrscl_rigid_body_modes(nodes, xyz, modes) != CMRSCL_OK) {
        fprintf(stderr, "%s: --amg-rigid-body: no memory for the modes\n", cli_name);
        free(modes), modes = NULL;
    }
    free(xyz);
    return modes;
}

/* Whether the solve has a recurrence residual to report: not after a NaN or Inf, nor after a
 * failure that leaves none (a GMRES breakdown reports 0, and no unconverged solve has 0). */
static bool has_residual(const cmrscl_solve_result *r)
{
    return r->reason != CMRSCL_SOLVE_NONFINITE && r->reason != CMRSCL_SOLVE_BAD_INPUT &&
           isfinite(r->residual) && (r->residual > 0 || r->converged);
}

static void solve_json(const loaded_matrix *lm, const cmrscl_params *p, const cli_options *opt,
                       const cmrscl_solve_result *r, double per_iteration_ms, double cpu_true,
                       double solve_ms, bool passed)
{
    json_open(NULL, '{');
    json_open("matrix", '{');
    json_string("name", lm->name);
    json_int("rows", lm->csr.rows);
    json_int("nnz", lm->csr.nnz);
    json_close('}');
    json_string("kernel", plan_kernel_name(p->kernel));
    json_string("precision", opt->precision == CMRSCL_DOUBLE ? "double" : "float");
    char method[32]; /* Jacobi-CG is "pcg", as --method names it */
    snprintf(method, sizeof method, "%s%s",
             opt->solve.preconditioner == CMRSCL_PRECONDITIONER_JACOBI
                 ? "pcg"
                 : cmrscl_method_name(opt->solve.method),
             opt->solve.preconditioner == CMRSCL_PRECONDITIONER_AMG ? "+amg" : "");
    json_string("method", method);
    json_string("reason", cmrscl_solve_reason_name(r->reason));
    json_bool("converged", r->converged);
    json_int("iterations", r->iterations);
    json_number("residual", has_residual(r) ? r->residual : NAN); /* none: null */
    json_number("true_residual", r->true_residual);
    json_number("cpu_true_residual", cpu_true);
    json_number("b_norm", r->b_norm);
    json_number("threshold", r->threshold);
    json_number("iteration_ms", per_iteration_ms);
    json_number("solve_ms", solve_ms);
    json_int("launches_per_iteration", r->launches_per_iteration);
    json_int("checks", r->checks);
    json_int("check_interval", r->check_interval);
    json_int("repetitions", opt->repetitions);
    json_bool("passed", passed);
    json_close('}');
    json_end();
}

int cmd_solve(const cli_options *opt)
{
    cmrscl_context ctx = NULL;
    cmrscl_device_info dev;
    loaded_matrix lm;
    int rc = open_with_matrix(opt, &ctx, &dev, &lm);
    if (rc)
        return rc;
    bench_round_values(&lm.csr, opt->precision); /* the matrix the device holds */
    int n = lm.csr.rows;
    if (lm.csr.rows != lm.csr.cols) {
        fprintf(stderr, "%s: %s is %d x %d: a solve needs a square matrix\n", cli_name, lm.name,
                lm.csr.rows, lm.csr.cols);
        rc = EXIT_USAGE;
    }
    if (!rc &&
        (opt->amg_chebyshev || opt->amg_unsmoothed || opt->amg_rigid_body || opt->amg_theta ||
         opt->amg_cycle) &&
        opt->solve.preconditioner != CMRSCL_PRECONDITIONER_AMG) {
        fprintf(stderr, "%s: --amg-%s: an option of --precond amg\n", cli_name,
                opt->amg_chebyshev    ? "chebyshev"
                : opt->amg_cycle      ? "cycle"
                : opt->amg_unsmoothed ? "unsmoothed"
                : opt->amg_theta      ? "theta"
                                      : "rigid-body");
        rc = EXIT_USAGE;
    }
    const int amg_cycle = opt->amg_cycle ? opt->amg_cycle - 1 : CMRSCL_AMG_CYCLE_V; /* (given) */
    double *modes = NULL;
    if (!rc && opt->amg_rigid_body && !(modes = rigid_body_modes(lm.name, lm.csr.rows)))
        rc = EXIT_USAGE;
    if (!rc && opt->amg_float &&
        (opt->solve.preconditioner != CMRSCL_PRECONDITIONER_AMG ||
         opt->precision != CMRSCL_DOUBLE)) {
        fprintf(stderr,
                "%s: --amg-float: the cycle in float under a double solve needs "
                "--precond amg and -p double\n",
                cli_name);
        rc = EXIT_USAGE;
    }
    double *b = malloc(sizeof(double) * ((size_t)n + 1)), *x = calloc((size_t)n + 1, 8);
    if (!rc && (!b || !x)) {
        fprintf(stderr, "%s: no memory for the vectors\n", cli_name);
        rc = EXIT_RUN_FAILED;
    }
    if (!rc)
        rc = make_rhs(opt->rhs, n, b);
    cmrscl_matrix m = NULL;
    cmrscl_solver s = NULL;
    cmrscl_status st = CMRSCL_OK;
    cmrscl_solve_options so = opt->solve;
    progress prog = {0, cli_seconds()};
    if (!opt->json && isatty(fileno(stderr)))
        so.monitor = show_progress, so.monitor_data = &prog;
    if (!rc && (st = cmrscl_matrix_create_from_csr(ctx, opt->precision, &lm.csr, &opt->matrix,
                                                   &m)) != CMRSCL_OK)
        rc = cli_fail("creating the matrix", st);
    double t0 = cli_seconds();
    cmrscl_precond amg = NULL;
    if (!rc && so.preconditioner == CMRSCL_PRECONDITIONER_AMG) {
        cmrscl_amg_options ao = CMRSCL_AMG_OPTIONS_INIT;
        ao.float_cycle = opt->amg_float;
        ao.matrix = m; /* level 0 on the solver's matrix */
        ao.chebyshev = opt->amg_chebyshev;
        ao.cycle = amg_cycle;
        ao.unsmoothed = opt->amg_unsmoothed;
        ao.theta = opt->amg_theta;
        if (modes)
            ao.near_null_count = 6, ao.near_null = modes, ao.block_size = 3;
        if ((st = cmrscl_precond_create_amg(ctx, opt->precision, &lm.csr, &ao, &amg)) != CMRSCL_OK)
            rc = cli_fail("setting up AMG", st);
        so.precond = amg;
    }
    if (!rc && (st = cmrscl_solver_create(m, &so, &s)) != CMRSCL_OK)
        rc = cli_fail("creating the solver", st);
    double setup = cli_seconds() - t0;
    /* b and x on the device, as a solver's caller keeps them: the solve's time is the
     * device's work, not the bus's */
    size_t vs = opt->precision == CMRSCL_DOUBLE ? 8 : 4, bytes = vs * ((size_t)n + 1);
    void *bd = !rc ? malloc(bytes) : NULL, *xd = !rc ? calloc(1, bytes) : NULL;
    for (int i = 0; bd && i < n; ++i) {
        if (opt->precision == CMRSCL_DOUBLE)
            ((double *)bd)[i] = b[i];
        else
            ((float *)bd)[i] = (float)b[i], b[i] = ((float *)bd)[i];
    }
    cl_context clctx = NULL;
    cl_command_queue q = NULL;
    cmrscl_context_cl(ctx, &clctx, &q);
    cl_int err = CL_SUCCESS;
    cl_mem bm =
        !rc ? clCreateBuffer(clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, bd, &err)
            : NULL;
    cl_mem xm = bm ? clCreateBuffer(clctx, CL_MEM_READ_WRITE, bytes, NULL, &err) : NULL;
    if (!rc && !xm) {
        fprintf(stderr, "%s: no device memory for b and x (OpenCL error %d)\n", cli_name, err);
        rc = EXIT_RUN_FAILED;
    }
    cmrscl_solve_result r = {0};
    double *per = calloc((size_t)opt->repetitions + 1, sizeof(double));
    double *total = calloc((size_t)opt->repetitions + 1, sizeof(double));
    cl_uchar zero = 0;
    char why[512] = "";
    bool broke_down = false;
    int reps = opt->repetitions;
    for (int k = 0; !rc && k < opt->repetitions; ++k) {
        cmrscl_solve_result_free(&r); /* x0 = 0 each time */
        if (clEnqueueFillBuffer(q, xm, &zero, 1, 0, bytes, 0, NULL, NULL) != CL_SUCCESS ||
            clFinish(q) != CL_SUCCESS) {
            fprintf(stderr, "%s: cannot set x0 = 0 on the device\n", cli_name);
            rc = EXIT_RUN_FAILED;
            break;
        }
        st = cmrscl_solver_solve(s, bm, xm, NULL, 0, NULL, &r);
        per[k] = r.iterations ? r.iterate_seconds * 1e3 / r.iterations : 0;
        total[k] = r.seconds * 1e3;
        if (st == CMRSCL_ERROR_BREAKDOWN) { /* it ran: the report says how far */
            if (so.monitor)
                fputs("\r\033[K", stderr);
            /* the library's words, its iteration count the only one the report gives */
            snprintf(why, sizeof why, "%s", cmrscl_last_error());
            cli_fail("solving", st);
            broke_down = true;
            reps = k + 1;
            break;
        }
        if (st != CMRSCL_OK) {
            if (so.monitor)
                fputs("\r\033[K", stderr);
            rc = cli_fail("solving", st);
            if (has_residual(&r))
                printf("stopped after %d iterations: ||r|| %.3e (recurrence), ||b - A x|| %.3e\n",
                       r.iterations, r.residual, r.true_residual);
        }
    }
    if (so.monitor)
        fputs("\r\033[K", stderr);
    double cpu_true = NAN, per_ms = 0, solve_ms = 0;
    bool passed = false;
    if (!rc && clEnqueueReadBuffer(q, xm, CL_TRUE, 0, bytes, xd, 0, NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "%s: cannot read x back\n", cli_name);
        rc = EXIT_RUN_FAILED;
    }
    if (!rc) {
        for (int i = 0; i < n; ++i)
            x[i] = opt->precision == CMRSCL_DOUBLE ? ((double *)xd)[i] : ((float *)xd)[i];
        /* the CPU's check of x, in double, on the matrix the device holds */
        double *ax = malloc(sizeof(double) * ((size_t)n + 1));
        cpu_true = 0;
        if (ax && cmrscl_csr_spmv(&lm.csr, 1.0, x, 0.0, ax) == CMRSCL_OK)
            for (int i = 0; i < n; ++i)
                cpu_true += (b[i] - ax[i]) * (b[i] - ax[i]);
        cpu_true = sqrt(cpu_true);
        free(ax);
        per_ms = cli_median(per, reps);
        solve_ms = cli_median(total, reps);
        passed = !broke_down && (opt->fixed_iterations ||
                                 (r.converged && (!opt->verify || cpu_true <= 10 * r.threshold)));
    }
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    if (m)
        cmrscl_matrix_params(m, &p);
    if (!rc && opt->json) {
        solve_json(&lm, &p, opt, &r, per_ms, cpu_true, solve_ms, passed);
    } else if (!rc) {
        char method[32];
        snprintf(method, sizeof method, "%s%s", cmrscl_method_name(so.method),
                 so.preconditioner == CMRSCL_PRECONDITIONER_AMG ? " + amg"
                 : so.preconditioner                            ? " + jacobi"
                                                                : "");
        printf("matrix     %s: %d x %d, nnz %lld, %s\n", lm.name, n, n, (long long)lm.csr.nnz,
               opt->precision == CMRSCL_DOUBLE ? "double" : "float");
        printf("device     %s (%s); plan %s kernel, HEIGHT %d%s\n", dev.device_name,
               dev.platform_name, plan_kernel_name(p.kernel), p.height,
               p.renumber == CMRSCL_RENUMBER_HUBS ? ", renumbered (the hub sort)" : "");
        printf("solver     %s, rtol %g, atol %g, at most %d iterations%s; set-up %.3f s\n", method,
               so.rtol || so.atol ? so.rtol : 1e-5, so.atol,
               so.max_iterations ? so.max_iterations : 10 * n,
               so.method == CMRSCL_METHOD_GMRES ? ", restarted" : "", setup);
        if (amg)
            print_amg(amg, amg_cycle);
        if (broke_down && *why)
            printf("result     %s (%s): ", cmrscl_solve_reason_name(r.reason), why);
        else
            printf("result     %s after %d iterations: ", cmrscl_solve_reason_name(r.reason),
                   r.iterations);
        if (has_residual(&r))
            printf("||r|| %.3e (recurrence), ", r.residual);
        printf("||b - A x|| %.3e", r.true_residual);
        if (r.true_residual_rounding > 0)
            printf(" +- %.1e", r.true_residual_rounding);
        printf(" (device), %.3e (CPU, double); ||b|| %.3e, threshold %.3e\n", cpu_true, r.b_norm,
               r.threshold);
        printf("time       %.4f ms per iteration (%d launch%s), solve %.3f ms (%d checks, "
               "interval %d; median of %d)\n",
               per_ms, r.launches_per_iteration, r.launches_per_iteration == 1 ? "" : "es",
               solve_ms, r.checks, r.check_interval, opt->repetitions);
        printf("check      %s\n",
               broke_down              ? "FAIL: the method broke down"
               : opt->fixed_iterations ? "fixed iterations: not a convergence test"
               : passed                ? "PASS (converged; ||b - A x|| within 10x the threshold)"
               : !r.converged          ? "FAIL: not converged"
                                       : "FAIL: ||b - A x|| on the CPU beyond 10x the threshold");
        if (!r.converged && !opt->fixed_iterations && opt->precision == CMRSCL_FLOAT)
            printf("           (float reaches about 1e-6 relative at best; ill-conditioned "
                   "matrices less: try -p double)\n");
    }
    if (!rc && !passed)
        rc = EXIT_RUN_FAILED;
    cmrscl_solve_result_free(&r);
    if (bm)
        clReleaseMemObject(bm);
    if (xm)
        clReleaseMemObject(xm);
    free(per), free(total), free(bd), free(xd), free(b), free(x);
    cmrscl_solver_free(s);
    cmrscl_precond_free(amg);
    free(modes);
    cmrscl_matrix_free(m);
    cmrscl_csr_free(&lm.csr);
    cmrscl_context_free(ctx);
    return rc;
}
