/* cmd_bench.c - `cmrscl-run bench`: matrices x plans x precisions, each verified and timed
 * both ways (per-product device time, back-to-back loop), with the paper's measures (beta-/tau,
 * beta+/tau, eta against the device's stream bandwidth, the speedup over csr-vector next to
 * the model a(h, mu)), the fraction of the device's roof reached (bench_roof.h) and, given a
 * peer's CSV (tools/peer), the peer's times and our speedup.
 * A table on the terminal, a progress line on stderr, --csv and --json-out for machines. */
#include "bench.h"
#include "bench_report.h"
#include "inputs.h"
#include "plans.h"
#include "run_memory.h"
#include "suite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PLANS 32

typedef struct bench_ctx {
    const cli_options *opt;
    cmrscl_context ctx;
    cmrscl_device_info dev;
    double bandwidth_gbs;
    peer_table peer;
    const char *plan_names[MAX_PLANS];
    cmrscl_options plans[MAX_PLANS];
    int nplans;
    bench_rows rows;
    roof_rates rates; /* scattered-load rates by x's size */
    FILE *csv;
    int total, done;  /* products to run, and run: the progress line's [done/total] */
    int per_matrix;   /* products a matrix runs */
    int name_width;   /* the table's matrix column */
    run_memory check; /* what the runs may take, measured against each matrix */
    bool *refused;    /* by input: refused before the runs, from its size */
    int not_run;      /* matrices refused or failing to load */
    bool tty;
} bench_ctx;

static int parse_plans(bench_ctx *b, char *list)
{
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (b->nplans == MAX_PLANS) {
            fprintf(stderr, "cmrscl-run: --plans: more than %d plans\n", MAX_PLANS);
            return EXIT_USAGE;
        }
        if (!plan_from_name(t, &b->opt->matrix, &b->plans[b->nplans]))
            return EXIT_USAGE;
        b->plan_names[b->nplans++] = t;
    }
    return 0;
}

static void progress(bench_ctx *b, const char *matrix, cmrscl_precision p, const char *plan)
{
    ++b->done;
    fprintf(stderr, "%sbench [%d/%d] %s %s %s%s", b->tty ? "\r\033[K" : "", b->done, b->total,
            matrix, p == CMRSCL_DOUBLE ? "double" : "float", plan, b->tty ? "" : "\n");
}

/* One matrix in one precision, one product (a block of `block` vectors; 0: the single
 * product): the csr-vector baseline, then every plan. */
static int bench_product(bench_ctx *b, const loaded_matrix *m, cmrscl_precision precision,
                         int block)
{
    cli_options o = *b->opt;
    o.precision = precision;
    o.block = block;
    cmrscl_csr t;
    const cmrscl_csr *product = bench_product_matrix(&m->csr, &o, &t);
    bench_vectors v;
    if (!product || !bench_vectors_make(product, &o, &v)) {
        cmrscl_csr_free(&t);
        return EXIT_RUN_FAILED;
    }
    int rc = 0;
    /* the roof and the csr-vector baseline are the single product's: a block has neither */
    bench_roof roof;
    memset(&roof, 0, sizeof roof);
    if (!block)
        roof_compute(b->ctx, &b->rates, product, precision, o.beta, b->bandwidth_gbs, &roof);
    double csrvec_ms = 0.0;
    if (o.baseline && !block) {
        cmrscl_options base;
        plan_from_name("csr-vector", &o.matrix, &base);
        bench_result r;
        progress(b, m->name, precision, "csr-vector (baseline)");
        if (bench_run(b->ctx, &m->csr, product, &v, &o, &base, &r) == 0)
            csrvec_ms = r.timing.median_ms;
    }
    for (int i = 0; i < b->nplans; ++i) {
        progress(b, m->name, precision, b->plan_names[i]);
        bench_row row;
        memset(&row, 0, sizeof row);
        int run = bench_run(b->ctx, &m->csr, product, &v, &o, &b->plans[i], &row.r);
        if (run) {
            rc = run;
            continue;
        }
        bench_row_fill(&row, m, &o, precision, b->plan_names[i], csrvec_ms, b->bandwidth_gbs, &roof,
                       &b->peer);
        if (row.r.verified && !(row.r.bound_ratio <= 1.0))
            rc = EXIT_RUN_FAILED;
        if (b->tty)
            fputs("\r\033[K", stderr);
        bench_row_print(&row, stdout, b->opt->json, b->name_width);
        if (b->csv)
            bench_row_csv(&row, b->csv);
        if (!bench_rows_add(&b->rows, &row))
            rc = EXIT_RUN_FAILED;
    }
    bench_vectors_free(&v);
    cmrscl_csr_free(&t);
    return rc;
}

static int bench_precision(bench_ctx *b, const loaded_matrix *m, cmrscl_precision precision)
{
    if (!b->opt->nvectors)
        return bench_product(b, m, precision, 0);
    int rc = 0;
    for (int i = 0; i < b->opt->nvectors; ++i) {
        int r = bench_product(b, m, precision, b->opt->vectors[i]);
        rc = rc ? rc : r;
    }
    return rc;
}

static int bench_all(bench_ctx *b, const input_list *in)
{
    int rc = 0;
    for (int i = 0; i < in->n; ++i) {
        if (b->refused[i])
            continue;
        loaded_matrix m;
        int r = load_input(in->text[i], in->is_gen[i], b->opt->nthreads ? b->opt->threads[0] : 0,
                           &b->check, &m);
        if (r) { /* a file that fails past its size line: its products are not to come */
            rc = r;
            b->total -= b->per_matrix;
            ++b->not_run;
            continue;
        }
        /* double first: float then rounds the values in place */
        for (int p = 1; p >= 0; --p) {
            if (!(b->opt->precisions & (1u << p)))
                continue;
            cmrscl_precision precision = p ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
            if (precision == CMRSCL_DOUBLE && !b->dev.fp64) {
                fprintf(stderr, "cmrscl-run: %s: double skipped, the device has no fp64\n", m.name);
                continue;
            }
            bench_round_values(&m.csr, precision);
            r = bench_precision(b, &m, precision);
            rc = rc ? rc : r;
        }
        cmrscl_csr_free(&m.csr);
    }
    return rc;
}

/* Every matrix sized before anything runs (a file from its size line, a spec from its
 * numbers): one the run cannot hold, a missing file or a bad spec is refused at once, not
 * after the matrices before it, and the progress line counts only the products to come.
 * The table's matrix column is as wide as the longest name of those. */
static int bench_screen(bench_ctx *b, const input_list *in)
{
    int rc = 0,
        precisions = (b->opt->precisions & 1) + (b->opt->precisions >> 1 & (b->dev.fp64 ? 1 : 0));
    b->per_matrix = (b->nplans + (b->opt->baseline && !b->opt->nvectors ? 1 : 0)) * precisions *
                    (b->opt->nvectors ? b->opt->nvectors : 1);
    b->name_width = 24;
    if (!(b->refused = calloc((size_t)in->n + 1, sizeof *b->refused)))
        return EXIT_RUN_FAILED;
    b->check = (run_memory){b->opt->precisions & 2 ? CMRSCL_DOUBLE : CMRSCL_FLOAT, b->opt->verify,
                            &b->dev};
    for (int i = 0; i < in->n; ++i) {
        const char *input = in->text[i];
        bool file = !in->is_gen[i];
        char name[256];
        suite_matrix_name(input, file, name, sizeof name);
        int64_t rows = 0, cols = 0, entries = 0;
        int32_t r32 = 0, c32 = 0;
        cmrscl_status st = file ? cmrscl_mtx_read_size(input, &r32, &c32, &entries)
                                : cmrscl_csr_generate_size(input, &rows, &cols, &entries);
        if (file)
            rows = r32, cols = c32;
        int r = 0;
        if (st == CMRSCL_OK)
            r = run_memory_check(&b->check, name, rows, cols, entries, file);
        else if (file)
            r = cli_fail("reading the matrix", st);
        else if (st != CMRSCL_ERROR_UNSUPPORTED) { /* kron's factors are sized as they are read */
            fprintf(stderr, "cmrscl-run: generating %s: %s\n", input, cmrscl_last_error());
            r = EXIT_USAGE;
        }
        if (r) {
            b->refused[i] = true;
            ++b->not_run;
            rc = rc ? rc : r;
            continue;
        }
        b->total += b->per_matrix;
        /* the name as a row gives it: "^T" or "[k=K]" after it */
        int width = (int)strlen(name) + (b->opt->transpose ? 2 : b->opt->nvectors ? 8 : 0);
        b->name_width = width > b->name_width ? width : b->name_width;
    }
    return rc;
}

static int bench_setup(bench_ctx *b)
{
    b->bandwidth_gbs = b->opt->bandwidth_gbs;
    if (b->bandwidth_gbs <= 0) {
        cmrscl_bandwidth bw;
        /* seconds without a word otherwise, on a terminal or in a log */
        fprintf(stderr, "cmrscl-run: measuring the device's stream bandwidth for eta and the "
                        "roof (--bandwidth GB/s skips it)...\n");
        cmrscl_status st = cmrscl_bandwidth_measure(b->ctx, 0, 10, &bw);
        if (st != CMRSCL_OK)
            return cli_fail("measuring the bandwidth", st);
        b->bandwidth_gbs = bw.best_gbs;
    }
    if (!b->opt->json)
        printf("device %s (%s, driver %s); B = %.1f GB/s (%s)\n", b->dev.device_name,
               b->dev.platform_name, b->dev.driver_version, b->bandwidth_gbs,
               b->opt->bandwidth_gbs > 0 ? "--bandwidth" : "measured: best stream kernel");
    if (b->opt->peer && peer_table_read(b->opt->peer, &b->peer) != 0)
        return EXIT_RUN_FAILED;
    if (b->opt->csv) {
        if (!(b->csv = fopen(b->opt->csv, "w"))) {
            fprintf(stderr, "cmrscl-run: cannot write %s\n", b->opt->csv);
            return EXIT_RUN_FAILED;
        }
        bench_csv_header(b->csv);
    }
    return 0;
}

int cmd_bench(const cli_options *opt)
{
    bench_ctx b;
    memset(&b, 0, sizeof b);
    b.opt = opt;
    b.tty = isatty(fileno(stderr));
    input_list in = {0};
    char plans[1024];
    snprintf(plans, sizeof plans, "%s", opt->plans ? opt->plans : "auto");
    int rc = parse_plans(&b, plans);
    if (!rc)
        rc = inputs_collect(opt, &in);
    if (!rc)
        rc = cli_open_device(opt, &b.ctx, &b.dev);
    int refused = rc ? 0 : bench_screen(&b, &in);
    if (!rc && (!b.refused || b.not_run == in.n)) /* no memory, or nothing left to run */
        rc = refused;
    if (!rc)
        rc = bench_setup(&b);
    if (!rc) {
        if (opt->json) {
            json_open(NULL, '{');
            bench_json_device(&b.dev, b.bandwidth_gbs);
            json_open("results", '[');
        } else {
            bench_table_header(stdout, b.name_width);
        }
        rc = bench_all(&b, &in);
        rc = rc ? rc : refused;
        if (opt->json) {
            json_close(']');
            json_close('}');
            json_end();
        } else {
            bench_summary(&b.rows, stdout);
            if (b.not_run)
                printf("  %d of %d matrices not run: the errors above say why\n", b.not_run, in.n);
        }
        if (opt->json_out && bench_json_write(opt->json_out, &b.dev, b.bandwidth_gbs, &b.rows))
            rc = rc ? rc : EXIT_RUN_FAILED;
    }
    if (b.csv)
        fclose(b.csv);
    bench_rows_free(&b.rows);
    free(b.refused);
    peer_table_free(&b.peer);
    inputs_free(&in);
    cmrscl_context_free(b.ctx);
    return rc;
}

/* Scattered loads from buffers the size of x, across the last-level cache's size. */
static const int gather_mb[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
#define GATHER_SIZES (int)(sizeof gather_mb / sizeof gather_mb[0])

int cmd_bandwidth(const cli_options *opt)
{
    cmrscl_context ctx;
    cmrscl_device_info dev;
    int rc = cli_open_device(opt, &ctx, &dev);
    if (rc)
        return rc;
    /* Best of a few: each run streams gigabytes (the default 50 of spmv took minutes on a
     * CPU's OpenCL). */
    int reps = opt->repetitions_given ? opt->repetitions : 5;
    cmrscl_bandwidth bw;
    double gloads[GATHER_SIZES] = {0};
    if (!opt->json) /* each line as it is measured: the whole takes seconds to a minute */
        printf("device %s, best of %d (GB/s count bytes read + written)\n", dev.device_name, reps);
    fflush(stdout);
    cmrscl_status st = cmrscl_bandwidth_measure(ctx, (uint64_t)(opt->size_mb * 1e6), reps, &bw);
    if (st == CMRSCL_OK && !opt->json) {
        printf("buffers of %.1f MB (%.1f MiB)\nread   %8.1f GB/s\ncopy   %8.1f GB/s\ntriad  %8.1f "
               "GB/s\nbest   %8.1f GB/s\n",
               bw.bytes / 1e6, bw.bytes / 1048576.0, bw.read_gbs, bw.copy_gbs, bw.triad_gbs,
               bw.best_gbs);
        printf("scattered 4-byte loads (one 32-byte sector each), from a buffer of:\n");
    }
    for (int i = 0; st == CMRSCL_OK && i < GATHER_SIZES; ++i) {
        if ((uint64_t)gather_mb[i] << 20 > dev.max_alloc_bytes)
            continue;
        fflush(stdout);
        st = cmrscl_gather_measure(ctx, (uint64_t)gather_mb[i] << 20, reps, &gloads[i]);
        if (st == CMRSCL_OK && !opt->json)
            printf("gather %4d MiB %8.1f %s loads/s (%.1f GB/s of sectors)\n", gather_mb[i],
                   gloads[i] < 1 ? gloads[i] * 1e3 : gloads[i], gloads[i] < 1 ? "M" : "G",
                   gloads[i] * 32);
    }
    if (st == CMRSCL_OK && opt->json) {
        json_open(NULL, '{');
        json_string("device", dev.device_name);
        json_int("buffer_bytes", (long long)bw.bytes);
        json_number("read_gbs", bw.read_gbs);
        json_number("copy_gbs", bw.copy_gbs);
        json_number("triad_gbs", bw.triad_gbs);
        json_number("best_gbs", bw.best_gbs);
        json_open("gather", '[');
        for (int i = 0; i < GATHER_SIZES; ++i) {
            if (gloads[i] <= 0)
                continue;
            json_open(NULL, '{');
            json_int("bytes", (long long)gather_mb[i] << 20);
            json_number("gloads", gloads[i]);
            json_close('}');
        }
        json_close(']');
        json_close('}');
        json_end();
    }
    cmrscl_context_free(ctx);
    return st == CMRSCL_OK ? 0 : cli_fail("measuring the bandwidth", st);
}
