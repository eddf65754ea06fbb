/* cli_options.c - command-line parsing for cmrscl-run (and cmrscl-run-mpi, which shares
 * the options), from the option table (cli_table.c): strict values (a bad number or keyword
 * is a usage error naming the flag), options the command does not take refused, one optional
 * positional FILE. */
#include "cli.h"
#include "plans.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool usage_error(const char *flag, const char *expected, const char *got)
{
    fprintf(stderr, "%s: %s: expected %s, got '%s' (see %s --help)\n", cli_name, flag, expected,
            got, cli_name);
    return false;
}

static bool parse_int(const char *flag, const char *text, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    char expected[64];
    snprintf(expected, sizeof expected, "an integer in %ld..%ld", lo, hi);
    if (errno || end == text || *end || v < lo || v > hi)
        return usage_error(flag, expected, text);
    *out = (int)v;
    return true;
}

static bool parse_power_of_two(const char *flag, const char *text, long lo, long hi, int *out)
{
    char expected[64];
    snprintf(expected, sizeof expected, "a power of two in %ld..%ld", lo, hi);
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi || (v & (v - 1)))
        return usage_error(flag, expected, text);
    *out = (int)v;
    return true;
}

static bool parse_double(const char *flag, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    /* ERANGE also flags subnormal results, which are fine; overflow shows as inf. */
    if (end == text || *end || !isfinite(v))
        return usage_error(flag, "a finite number", text);
    *out = v;
    return true;
}

/* Maps a keyword to its position in `words` (NULL-terminated). */
static bool parse_keyword(const char *flag, const char *text, const char *const *words,
                          const char *expected, int *out)
{
    for (int i = 0; words[i]; ++i)
        if (strcmp(text, words[i]) == 0) {
            *out = i;
            return true;
        }
    return usage_error(flag, expected, text);
}

/* -p: one precision, or a comma-separated list of them (bench). */
static bool parse_precisions(const char *arg, cli_options *o)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", arg);
    o->precisions = 0;
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        unsigned bit = !strcmp(t, "float") ? 1u : !strcmp(t, "double") ? 2u : 0u;
        if (!bit)
            return usage_error("--precision", "float, double or float,double", arg);
        if (n++ == 0)
            o->precision = bit == 1 ? CMRSCL_FLOAT : CMRSCL_DOUBLE;
        o->precisions |= bit;
    }
    return n > 0 || usage_error("--precision", "float, double or float,double", arg);
}

static bool add_input(cli_options *o, const char *text, bool is_gen)
{
    if (o->ninputs == CLI_MAX_INPUTS) {
        fprintf(stderr, "%s: more than %d matrices (use --suite)\n", cli_name, CLI_MAX_INPUTS);
        return false;
    }
    o->inputs[o->ninputs] = text;
    o->is_gen[o->ninputs++] = is_gen;
    return true;
}

/* --threads: a comma-separated list of counts, 0 meaning all CPUs. */
static bool parse_threads(const char *text, cli_options *o)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    o->nthreads = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nthreads == 16)
            return usage_error("--threads", "at most 16 counts", text);
        if (!parse_int("--threads", t, 0, 256, &o->threads[o->nthreads++]))
            return false;
    }
    return o->nthreads > 0 || usage_error("--threads", "a list of counts like 1,4,16", text);
}

/* --vectors: a comma-separated list of block widths. */
static bool parse_vectors(const char *text, cli_options *o)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    o->nvectors = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nvectors == 16)
            return usage_error("--vectors", "at most 16 block widths", text);
        if (!parse_int("--vectors", t, 1, 4096, &o->vectors[o->nvectors++]))
            return false;
    }
    return o->nvectors > 0 || usage_error("--vectors", "a list of widths like 4,8,16,32", text);
}

static bool apply_option(int c, const char *arg, cli_options *o)
{
    static const char *const layouts[] = {"auto", "packed", "unpacked", NULL};
    static const char *const orders[] = {"auto", "rows", "columns", NULL};
    static const char *const hints[] = {"auto", "off", "stream", NULL};
    static const char *const values[] = {"auto", "plain", "float", "dict", "diagonal", NULL};
    static const char *const renumbers[] = {"auto", "none", "hubs", NULL};
    static const char *const combines[] = {"auto", "kernel", "group", "last", NULL};
    static const char *const index_bits[] = {"0", "32", "64", NULL};             /* 32 k bits */
    static const char *const column_bits[] = {"0", "16", "32", "implied", NULL}; /* 16 k bits */
    int k;
    switch (c) {
    case 'd': /* "" would quietly mean "the default device" */
        o->device = arg;
        return arg[0] || usage_error("--device", "P:D, gpu, cpu, accelerator or a name", arg);
    case 'g': return add_input(o, arg, true);
    case 'o': o->output = arg; return true;
    case 'p': return parse_precisions(arg, o);
    case 'H': return parse_int("--height", arg, 1, CMRSCL_MAX_HEIGHT, &o->matrix.height);
    case OPT_WARP: return parse_power_of_two("--warp", arg, 1, 1024, &o->matrix.warp);
    /* the library takes any multiple of the warp (a device's largest group need not be a
     * power of two); by hand, a power of two is what anyone means */
    case OPT_WG:
        return parse_power_of_two("--work-group", arg, 1, 1024, &o->matrix.work_group_size);
    case OPT_TILE: return parse_int("--tile", arg, -1, 1 << 30, &o->matrix.tile);
    case OPT_MODULO: return parse_power_of_two("--modulo", arg, 2, 32, &o->matrix.modulo);
    case 'r':
        o->repetitions_given = true;
        return parse_int("--repetitions", arg, 1, 1000000, &o->repetitions);
    case OPT_WARMUP: return parse_int("--warmup", arg, 0, 1000000, &o->warmup);
    case OPT_ALPHA: return parse_double("--alpha", arg, &o->alpha);
    case OPT_BETA: return parse_double("--beta", arg, &o->beta);
    case OPT_BANDWIDTH:
        return parse_double("--bandwidth", arg, &o->bandwidth_gbs) &&
               (o->bandwidth_gbs > 0 || usage_error("--bandwidth", "a positive GB/s", arg));
    case OPT_SIZE:
        return parse_double("--size", arg, &o->size_mb) &&
               (o->size_mb > 0 || usage_error("--size", "a positive number of MB", arg));
    case OPT_NO_VERIFY: o->verify = false; return true;
    case OPT_AMG_FLOAT: o->amg_float = true; return true;
    case OPT_AMG_UNSMOOTHED: o->amg_unsmoothed = true; return true;
    case OPT_AMG_RIGID_BODY: o->amg_rigid_body = true; return true;
    case OPT_AMG_THETA:
        return parse_double("--amg-theta", arg, &o->amg_theta) &&
               ((o->amg_theta >= 0 && o->amg_theta <= 1) ||
                usage_error("--amg-theta", "a threshold in 0..1", arg));
    case OPT_AMG_CHEBYSHEV:
        return parse_int("--amg-chebyshev", arg, 2, CMRSCL_AMG_MAX_DEGREE, &o->amg_chebyshev);
    case OPT_AMG_CYCLE: {
        static const char *const cycles[] = {"v", "w", "V", "W", NULL};
        if (!parse_keyword("--amg-cycle", arg, cycles, "v or w", &k))
            return false;
        o->amg_cycle = 1 + (k % 2 ? CMRSCL_AMG_CYCLE_W : CMRSCL_AMG_CYCLE_V);
        return true;
    }
    case OPT_TRANSPOSE: o->transpose = true; return true;
    case OPT_VECTORS: return parse_vectors(arg, o);
    case OPT_PLAN_VECTORS: return parse_int("--plan-vectors", arg, 1, 4096, &o->matrix.vectors);
    case OPT_COLUMN_MAJOR: o->column_major = true; return true;
    case OPT_NO_BASELINE: o->baseline = false; return true;
    case OPT_JSON: o->json = true; return true;
    case OPT_PLANS: o->plans = arg; return true;
    case OPT_THREADS: return parse_threads(arg, o);
    case OPT_SUITE:
        if (o->nsuites == 8) {
            fprintf(stderr, "%s: at most 8 --suite files\n", cli_name);
            return false;
        }
        o->suites[o->nsuites++] = arg;
        return true;
    case OPT_CSV: o->csv = arg; return true;
    case OPT_JSON_OUT: o->json_out = arg; return true;
    case OPT_PEER: o->peer = arg; return true;
    case OPT_LAYOUT:
        if (!parse_keyword("--layout", arg, layouts, "auto, packed or unpacked", &k))
            return false;
        o->matrix.layout = (cmrscl_layout)k;
        return true;
    case OPT_ORDER:
        if (!parse_keyword("--order", arg, orders, "auto, rows or columns", &k))
            return false;
        o->matrix.order = (cmrscl_order)k;
        return true;
    case OPT_REDUCE: /* the reductions of the library's variant table */
        o->matrix.reduce = CMRSCL_REDUCE_AUTO;
        return !strcmp(arg, "auto") || plan_reduce_by_name(arg, &o->matrix.reduce) ||
               usage_error("--reduce", "auto, local, shuffle or subgroup", arg);
    case OPT_KERNEL: /* the families of the variant table */
        o->matrix.kernel = CMRSCL_KERNEL_AUTO;
        return !strcmp(arg, "auto") || plan_kernel_by_name(arg, &o->matrix.kernel) ||
               usage_error("--kernel", "auto, strip, segment, modulo or slice", arg);
    case OPT_CACHE_HINT:
        if (!parse_keyword("--cache-hint", arg, hints, "auto, off or stream", &k))
            return false;
        o->matrix.cache_hint = (cmrscl_cache_hint)k;
        return true;
    case OPT_VALUES:
        if (!parse_keyword("--values", arg, values, "auto, plain, float, dict or diagonal", &k))
            return false;
        o->matrix.values = (cmrscl_values)k;
        return true;
    case OPT_RENUMBER:
        if (!parse_keyword("--renumber", arg, renumbers, "auto, none or hubs", &k))
            return false;
        o->matrix.renumber = (cmrscl_renumber)k;
        return true;
    case OPT_COMBINE:
        if (!parse_keyword("--combine", arg, combines, "auto, kernel, group or last", &k))
            return false;
        o->matrix.combine = (cmrscl_combine)k;
        return true;
    case OPT_INDEX_BITS:
        if (!parse_keyword("--index-bits", arg, index_bits, "0, 32 or 64", &k))
            return false;
        o->matrix.index_bits = 32 * k;
        return true;
    case OPT_METHOD: {
        static const char *const methods[] = {"cg", "pcg", "bicgstab", "gmres", NULL};
        if (!parse_keyword("--method", arg, methods, "cg, pcg, bicgstab or gmres", &k))
            return false;
        static const cmrscl_method ids[] = {CMRSCL_METHOD_CG, CMRSCL_METHOD_CG,
                                            CMRSCL_METHOD_BICGSTAB, CMRSCL_METHOD_GMRES};
        o->solve.method = ids[k];
        o->solve.preconditioner = k == 1 ? CMRSCL_PRECONDITIONER_JACOBI : 0;
        return true;
    }
    case OPT_PRECOND: {
        static const char *const preconds[] = {"none", "jacobi", "amg", NULL};
        if (!parse_keyword("--precond", arg, preconds, "none, jacobi or amg", &k))
            return false;
        o->solve.preconditioner = (cmrscl_preconditioner)k;
        return true;
    }
    case OPT_TOL: /* 0: an absolute tolerance alone, with --atol */
        o->tol_given = o->rtol_given = true;
        return parse_double("--tol", arg, &o->solve.rtol) &&
               (o->solve.rtol >= 0 || usage_error("--tol", "a number >= 0", arg));
    case OPT_ATOL:
        o->tol_given = true;
        return parse_double("--atol", arg, &o->solve.atol) &&
               (o->solve.atol >= 0 || usage_error("--atol", "a number >= 0", arg));
    case OPT_MAX_ITER: return parse_int("--max-iter", arg, 1, 1 << 24, &o->solve.max_iterations);
    case OPT_ITERATIONS: /* no convergence: rtol 0 and an atol no residual reaches */
        o->fixed_iterations = true;
        o->solve.rtol = 0, o->solve.atol = 1e-300;
        o->solve.check_interval = o->solve.check_interval ? o->solve.check_interval : 1 << 20;
        return parse_int("--iterations", arg, 1, 1 << 24, &o->solve.max_iterations);
    case OPT_RHS: o->rhs = arg; return true;
    case OPT_RESTART: return parse_int("--restart", arg, 1, CMRSCL_MAX_RESTART, &o->solve.restart);
    case OPT_CHECK_INTERVAL:
        return parse_int("--check-interval", arg, 1, 1 << 20, &o->solve.check_interval);
    case OPT_COLUMN_BITS:
        if (!parse_keyword("--column-bits", arg, column_bits, "0, 16, 32 or implied", &k))
            return false;
        o->matrix.column_bits = k == 3 ? CMRSCL_COLUMNS_IMPLIED : 16 * k;
        return true;
    default: return false;
    }
}

/* getopt's table and short options from the option table. */
static void getopt_tables(struct option *longs, char *shorts)
{
    int n = 0;
    char *sp = shorts;
    *sp++ = ':'; /* a missing value reports ':' */
    for (const cli_flag *f = cli_flags; f->name; ++f, ++n) {
        longs[n] = (struct option){f->name, f->arg ? required_argument : no_argument, NULL, f->id};
        if (f->id < 256) {
            *sp++ = (char)f->id;
            if (f->arg)
                *sp++ = ':';
        }
    }
    longs[n] = (struct option){NULL, 0, NULL, 0};
    *sp = '\0';
}

/* The options given that the command does not take: a usage error naming the first. */
static bool options_fit(const cli_options *o, const int *given, int ngiven)
{
    const cli_command *c = cli_command_named(o->command);
    for (int i = 0; c && i < ngiven; ++i) {
        const cli_flag *f = cli_flag_of(given[i]);
        if (f && !(f->commands & c->bit)) {
            fprintf(stderr, "%s: %s takes no --%s (see %s %s --help)\n", cli_name, c->name, f->name,
                    cli_name, c->name);
            return false;
        }
    }
    return true;
}

bool cli_parse(int argc, char **argv, cli_options *o)
{
    struct option longs[64];
    char shorts[64];
    getopt_tables(longs, shorts);
    int given[64], ngiven = 0;
    bool help = false;
    memset(o, 0, sizeof *o);
    o->precision = CMRSCL_FLOAT;
    o->precisions = 1;
    o->baseline = true;
    o->repetitions = 50;
    o->warmup = 5;
    o->alpha = 1.0;
    o->verify = true;
    opterr = 0; /* our own messages */
    int c;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (c == 'h') {
            help = true;
            continue;
        }
        if (c == OPT_VERSION) {
            o->command = "version";
            return true;
        }
        if (c == '?' || c == ':') {
            /* Name the option as typed: a long one by its argument; a short one by optopt,
             * since it may sit inside a cluster ("-zr") where argv[optind - 1] is another. */
            const char *last = argv[optind - 1];
            char shortopt[3] = {'-', (char)optopt, '\0'};
            const char *bad = strncmp(last, "--", 2) == 0 || !optopt ? last : shortopt;
            fprintf(stderr, "%s: %s option '%s' (see %s --help)\n", cli_name,
                    c == '?' ? "unknown" : "missing value for", bad, cli_name);
            return false;
        }
        if (ngiven < 64)
            given[ngiven++] = c;
        if (!apply_option(c, optarg, o))
            return false;
    }
    if (optind < argc)
        o->command = argv[optind++];
    if (help) { /* COMMAND --help: that command's options */
        o->help_for = o->command;
        o->command = "help";
        return true;
    }
    if (!o->command) {
        fprintf(stderr, "%s: missing COMMAND (see %s --help)\n", cli_name, cli_name);
        return false;
    }
    bool bench = strcmp(o->command, "bench") == 0;
    int gens = o->ninputs;
    /* FILE arguments come after the --gen specs in the list; bench keeps their order of
     * appearance by kind, which is all a suite needs. */
    for (; optind < argc; ++optind) {
        if (!bench && o->ninputs - gens >= 1) {
            fprintf(stderr, "%s: unexpected argument '%s' (see %s --help)\n", cli_name,
                    argv[optind], cli_name);
            return false;
        }
        if (!add_input(o, argv[optind], false))
            return false;
    }
    if (!bench && o->ninputs > 1) {
        fprintf(stderr, "%s: %s\n", cli_name,
                gens > 1 ? "give one --gen SPEC (several: use bench)"
                         : "give either FILE or --gen, not both");
        return false;
    }
    if (!bench && o->precisions == 3) {
        fprintf(stderr, "%s: --precision takes one precision here (several: use bench)\n",
                cli_name);
        return false;
    }
    if ((o->nvectors || o->matrix.vectors) && o->transpose) {
        fprintf(stderr, "%s: --%svectors and --transpose: the block product is A's only\n",
                cli_name, o->nvectors ? "" : "plan-");
        return false;
    }
    if (!bench && o->nvectors > 1) {
        fprintf(stderr, "%s: --vectors takes one width here (several: use bench)\n", cli_name);
        return false;
    }
    if (o->column_major && !o->nvectors) {
        fprintf(stderr, "%s: --column-major is the layout of --vectors' blocks: give --vectors\n",
                cli_name);
        return false;
    }
    o->block = o->nvectors ? o->vectors[0] : 0;
    if (o->fixed_iterations && o->tol_given) {
        fprintf(stderr, "%s: --iterations runs a fixed count: no --tol or --atol with it\n",
                cli_name);
        return false;
    }
    if (!strcmp(o->command, "solve") && !o->repetitions_given)
        o->repetitions = 1;
    if (!strcmp(o->command, "multiply") && !o->repetitions_given)
        o->repetitions = 10;
    if (!o->fixed_iterations && o->rtol_given && o->solve.rtol == 0 && o->solve.atol == 0) {
        fprintf(stderr,
                "%s: --tol 0 stops on an absolute tolerance alone: give --atol > 0 with it\n",
                cli_name);
        return false;
    }
    if (!o->fixed_iterations && !o->rtol_given)
        o->solve.rtol = 1e-5; /* the default beside an --atol too (the library's alone) */
    for (int i = 0; i < o->ninputs; ++i) {
        if (o->is_gen[i])
            o->gen = o->inputs[i];
        else
            o->file = o->inputs[i];
    }
    return options_fit(o, given, ngiven);
}
