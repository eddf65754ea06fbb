/* cmrscl-run-mpi - cmrscl-run's spmv and bench for a matrix distributed over the ranks of
 * `mpirun -np N`, each rank on its own device: the same options, rank 0 prints. Shows the
 * layout (rows, entries, halo, neighbours and plans per rank), where a product's time goes
 * (local and remote products, pack, exchange, unpack) and how much of the communication
 * the overlap hides, and checks every rank's rows against the CPU double reference. */
#include "inputs.h"
#include "mpi_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank;

static void usage(FILE *out)
{
    fputs("usage: mpirun -np N cmrscl-run-mpi COMMAND [FILE...] [options]\n"
          "\n"
          "commands:\n"
          "  spmv [FILE]        run, verify and time y = alpha*A*x + beta*y distributed over\n"
          "                     the ranks (default matrix: " DEFAULT_MATRIX
          ", generated per rank)\n"
          "  bench [FILE...]    matrices x precisions: one line each, --csv FILE\n"
          "  solve [FILE]       CG, BiCGStab or GMRES on the distributed matrix (--method\n"
          "                     cg|pcg|bicgstab|gmres, --restart, --tol, --atol, --max-iter,\n"
          "                     --iterations N, --rhs ones|random), one MPI collective an\n"
          "                     iteration (GMRES two, BiCGStab three); checked on the CPU\n"
          "\n"
          "options (as cmrscl-run's; --help there lists the plan's knobs):\n"
          "  -d, --device SEL       per rank: gpu|cpu|accelerator = the node-local rank's device\n"
          "                         of that type; a list 0:0,0:1 = one per local rank; P:D or a\n"
          "                         name substring (default: $CMRSCL_DEVICE, else the local\n"
          "                         rank's GPU)\n"
          "  -p, --precision P      float (default), double, or float,double (bench)\n"
          "  -g, --gen SPEC         a generated matrix, each rank building only its rows\n"
          "                         (stencil27:N, stencil7:N, fem:N:B; the random classes too,\n"
          "                         built whole on every rank)\n"
          "      --partition P      rows (default): consecutive blocks; graph: METIS's parts of\n"
          "                         the matrix's graph (square, up to 2^28 entries); auto: the\n"
          "                         graph's where they cut the halo to 3/4 or less\n"
          "      --suite FILE       bench: matrices listed one per line\n"
          "  -r, --repetitions N    timed products (default 50), --warmup N (default 5)\n"
          "      --alpha A, --beta B, --no-verify, --kernel, --height, ... as cmrscl-run\n"
          "      --csv FILE         bench: the table as CSV\n"
          "\n"
          "exit status: 0 success, 1 failure while running (a wrong result too), 2 usage error\n",
          out);
}

/* How the rows were divided, and what share of x a rank needs from the others: up front,
 * before the times, what the halo allows. */
static void print_partition(const mpi_result *r)
{
    const cmrscl_dist_plan *p = &r->plan;
    if (p->halo_by_rows >= 0)
        printf("partition  %s: halo %lld x entries with the graph's parts (METIS k-way), %lld "
               "with row blocks\n",
               p->partition == CMRSCL_PARTITION_GRAPH ? "graph" : "row blocks",
               (long long)p->halo_by_graph, (long long)p->halo_by_rows);
    else
        printf("partition  row blocks (--partition graph|auto: METIS's parts)\n");
    double share = p->cols > 0 ? (double)r->halo_max / (double)p->cols : 0;
    if (share >= 0.25)
        printf("note       a rank receives %.0f%% of x every product through host memory: "
               "expect the exchange, not the product, to set the time (docs/MPI.md)\n",
               100 * share);
}

static void print_spmv(const mpi_result *r, const cli_options *opt)
{
    const cmrscl_dist_plan *p = &r->plan;
    const cmrscl_dist_timing *t = &r->t;
    printf("matrix     %s%s: %lld x %lld, nnz %lld\n", r->name,
           r->generated ? " (rows generated per rank)" : "", (long long)p->rows, (long long)p->cols,
           (long long)p->nnz);
    printf("ranks      %d, %s; set-up %.3f s (slowest rank: read or generate, split, plan, "
           "upload)\n",
           p->ranks, p->precision == CMRSCL_DOUBLE ? "double" : "float", r->setup_s);
    printf("rank  %-24s %10s %12s %9s %9s %9s  %-10s %s\n", "device", "rows", "nnz", "rem.rows",
           "halo", "sent", "neighbours", "plans: local | remote");
    for (int i = 0; i < p->ranks; ++i)
        printf("%s\n", r->rank_lines[i]);
    printf("halo       %lld x entries received per product in all (%.1f KB), at most %lld on a "
           "rank; exchange %s\n",
           (long long)r->halo_total,
           (double)r->halo_total * (p->precision == CMRSCL_DOUBLE ? 8 : 4) / 1e3,
           (long long)r->halo_max, mpi_exchange_name(p->exchange));
    print_partition(r);
    printf("product    %.4f ms per product (device events, slowest rank: first command to the "
           "end of the remote product and its addition into y; %d runs after %d warm-up)\n",
           t->product_ms, t->repetitions, t->warmup);
    printf("loop       %.4f ms per product back to back, overlapped (host clock, slowest rank); "
           "%.4f ms without the overlap\n",
           t->loop_ms, t->serial_loop_ms);
    printf("parts      local %.4f ms, remote %.4f ms (device); pack %.4f ms, exchange %.4f ms, "
           "unpack %.4f ms (without the overlap)\n",
           t->local_ms, t->remote_ms, t->pack_ms, t->exchange_ms, t->unpack_ms);
    printf("overlap    communication %.4f ms per product, of which the overlap hides %.0f%%; "
           "waiting for the halo %.4f ms\n",
           t->communication_ms, 100.0 * t->hidden, t->wait_ms);
    bool measured = r->one_device_ms > 0;
    double one = measured ? r->one_device_ms : r->device_sum_ms;
    const char *slower = t->loop_ms > one ? " - SLOWER than one device: the exchange and the "
                                            "ranks' launches, not the product, set the time"
                                          : "";
    if (p->ranks > 1 && t->loop_ms > 0 && measured)
        printf("one device %.4f ms a product back to back (the whole matrix on rank 0's device): "
               "efficiency %.3f%s\n",
               one, one / (p->ranks * t->loop_ms), slower);
    else if (p->ranks > 1 && t->loop_ms > 0)
        printf("estimate   one device: about %.4f ms a product (the ranks' local and remote "
               "products added; too large to time on one rank): efficiency about %.2f%s\n",
               one, one / (p->ranks * t->loop_ms), slower);
    printf("rate       %.1f GFLOP/s (2 nnz / loop time)\n",
           t->loop_ms > 0 ? 2.0 * (double)p->nnz / (t->loop_ms * 1e-3) * 1e-9 : 0.0);
    if (r->verified)
        printf("error      relative %.3g vs CPU double reference (each rank its rows); %.3g x "
               "rounding bound: %s\n",
               r->relative_error, r->bound_ratio, mpi_result_passed(r) ? "PASS" : "FAIL");
    else
        printf("error      not verified (--no-verify)\n");
    (void)opt;
}

static int verdict(const mpi_result *r)
{
    if (mpi_result_passed(r))
        return 0;
    if (rank == 0)
        fprintf(stderr,
                "%s: verification failed: the result is %.3g x the rounding bound away from "
                "the CPU double reference\n",
                cli_name, r->bound_ratio);
    return EXIT_RUN_FAILED;
}

static int cmd_spmv_mpi(cmrscl_context ctx, const cli_options *opt)
{
    bool is_gen = !opt->file;
    const char *input = opt->file ? opt->file : opt->gen ? opt->gen : DEFAULT_MATRIX;
    mpi_result r;
    int rc = mpi_run(ctx, input, is_gen, opt, opt->precision, &r);
    if (!rc && rank == 0)
        print_spmv(&r, opt);
    if (!rc)
        rc = verdict(&r);
    mpi_result_free(&r);
    return rc;
}

static const char bench_header[] = "matrix,precision,ranks,rows,nnz,halo_total,halo_max,loop_ms,"
                                   "serial_loop_ms,product_ms,local_ms,remote_ms,communication_ms,"
                                   "hidden,gflops,bound_ratio,check";

static void bench_line(FILE *out, const mpi_result *r, bool csv)
{
    const cmrscl_dist_plan *p = &r->plan;
    const cmrscl_dist_timing *t = &r->t;
    double gflops = t->loop_ms > 0 ? 2.0 * (double)p->nnz / (t->loop_ms * 1e-3) * 1e-9 : 0.0;
    const char *fmt = csv ? "%s,%s,%d,%lld,%lld,%lld,%lld,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.3f,"
                            "%.2f,%.3g,%s\n"
                          : "%-24.24s %-6s %5d %11lld %12lld %9lld %9lld %9.4f %9.4f %9.4f "
                            "%9.4f %9.4f %9.4f %6.2f %8.1f %8.3g %s\n";
    fprintf(out, fmt, r->name, p->precision == CMRSCL_DOUBLE ? "double" : "float", p->ranks,
            (long long)p->rows, (long long)p->nnz, (long long)r->halo_total, (long long)r->halo_max,
            t->loop_ms, t->serial_loop_ms, t->product_ms, t->local_ms, t->remote_ms,
            t->communication_ms, t->hidden, gflops, r->bound_ratio,
            !r->verified           ? "-"
            : mpi_result_passed(r) ? "PASS"
                                   : "FAIL");
}

static int cmd_bench_mpi(cmrscl_context ctx, const cli_options *opt)
{
    input_list in;
    int rc = inputs_collect(opt, &in);
    FILE *csv = NULL;
    if (!rc && opt->csv && rank == 0 && !(csv = fopen(opt->csv, "w"))) {
        fprintf(stderr, "%s: cannot write %s\n", cli_name, opt->csv);
        rc = EXIT_RUN_FAILED;
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!rc && rank == 0) {
        printf("%-24s %-6s %5s %11s %12s %9s %9s %9s %9s %9s %9s %9s %9s %6s %8s %8s %s\n",
               "matrix", "prec", "ranks", "rows", "nnz", "halo", "halo_max", "loop_ms", "serial_ms",
               "product", "local", "remote", "comm_ms", "hidden", "GFLOP/s", "bound", "check");
        if (csv)
            fprintf(csv, "%s\n", bench_header);
    }
    int failures = 0;
    for (int i = 0; !rc && i < in.n; ++i)
        for (int pi = 0; pi < 2; ++pi) {
            if (!(opt->precisions >> pi & 1))
                continue;
            mpi_result r;
            int one =
                mpi_run(ctx, in.text[i], in.is_gen[i], opt, pi ? CMRSCL_DOUBLE : CMRSCL_FLOAT, &r);
            if (!one && rank == 0) {
                bench_line(stdout, &r, false);
                fflush(stdout);
                if (csv)
                    bench_line(csv, &r, true);
            }
            failures += one || !mpi_result_passed(&r);
            mpi_result_free(&r);
        }
    if (csv)
        fclose(csv);
    inputs_free(&in);
    return rc ? rc : failures ? EXIT_RUN_FAILED : 0;
}

/* --partition rows|graph|auto, taken out of argv before the shared options are parsed: the
 * library reads $CMRSCL_DIST_PARTITION at creation. False on a bad value. */
static bool take_partition(int *argc, char **argv)
{
    for (int i = 1; i < *argc; ++i) {
        const char *value = NULL;
        int used = 1;
        if (strncmp(argv[i], "--partition=", 12) == 0)
            value = argv[i] + 12;
        else if (strcmp(argv[i], "--partition") == 0)
            value = i + 1 < *argc ? argv[i + 1] : "", used = 2;
        if (!value)
            continue;
        if (strcmp(value, "rows") && strcmp(value, "graph") && strcmp(value, "auto")) {
            if (rank == 0)
                fprintf(stderr, "%s: --partition '%s': expected rows, graph or auto\n", cli_name,
                        value);
            return false;
        }
        setenv("CMRSCL_DIST_PARTITION", value, 1);
        memmove(argv + i, argv + i + used, sizeof *argv * (size_t)(*argc - i - used + 1));
        *argc -= used, --i;
    }
    return true;
}

/* Usage errors are the same on every rank: only rank 0 says them. */
static bool parse_quietly(int argc, char **argv, cli_options *opt)
{
    int saved = -1;
    if (rank != 0) {
        fflush(stderr);
        saved = dup(2);
        if (!freopen("/dev/null", "w", stderr))
            saved = -1;
    }
    bool ok = cli_parse(argc, argv, opt);
    if (ok && opt->json) {
        if (rank == 0)
            fprintf(stderr, "%s: --json is not supported here (bench --csv is)\n", cli_name);
        ok = false;
    }
    if (saved >= 0) {
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
    }
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cli_name = "cmrscl-run-mpi";
    cli_options opt;
    int rc = 0;
    if (!take_partition(&argc, argv) || !parse_quietly(argc, argv, &opt)) {
        rc = EXIT_USAGE;
    } else if (strcmp(opt.command, "help") == 0 || strcmp(opt.command, "version") == 0) {
        if (rank == 0 && opt.command[0] == 'h')
            usage(stdout);
        else if (rank == 0)
            printf("%s %s\n", cli_name, cmrscl_version_string());
    } else if (strcmp(opt.command, "spmv") != 0 && strcmp(opt.command, "bench") != 0 &&
               strcmp(opt.command, "solve") != 0) {
        if (rank == 0)
            fprintf(stderr, "%s: unknown command '%s' (spmv, bench or solve; see %s --help)\n",
                    cli_name, opt.command, cli_name);
        rc = EXIT_USAGE;
    } else {
        cmrscl_context ctx = NULL;
        cmrscl_status st = cmrscl_dist_context_create(MPI_COMM_WORLD, opt.device, &ctx);
        if (st != CMRSCL_OK)
            rc = mpi_fail("selecting the devices", st);
        else if (strcmp(opt.command, "spmv") == 0)
            rc = cmd_spmv_mpi(ctx, &opt);
        else if (strcmp(opt.command, "solve") == 0)
            rc = mpi_solve(ctx, &opt);
        else
            rc = cmd_bench_mpi(ctx, &opt);
        cmrscl_context_free(ctx);
    }
    if (rank != 0)
        fflush(stdout);
    MPI_Finalize();
    return rc;
}
