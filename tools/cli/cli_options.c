/* cli_options.c - command-line parsing for cmrscl-run (and cmrscl-run-mpi, which shares
 * the options): strict values (a bad number or keyword is a usage error naming the flag),
 * one optional positional FILE. */
#include "cli.h"
#include "plans.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cli_usage(FILE *out)
{
    fputs("usage: cmrscl-run COMMAND [FILE...] [options]\n"
          "\n"
          "commands:\n"
          "  devices            list every OpenCL device and the parameters cmrscl picks\n"
          "  spmv [FILE]        run, verify and time y = alpha*A*x + beta*y (default matrix:\n"
          "                     " DEFAULT_MATRIX ", a 27-point 3-D stencil on a 100^3 grid)\n"
          "  tune [FILE]        time every plan (kernel family x HEIGHT x reduction), verified,\n"
          "                     report the fastest and remember it in the tuning database\n"
          "  bench [FILE...]    matrices x plans x precisions: tables, --csv, --json-out\n"
          "  bandwidth          the device's stream read, copy and triad bandwidth, and its\n"
          "                     rate of scattered loads from buffers of 1-256 MiB\n"
          "  gen SPEC -o FILE   write a generated matrix as Matrix Market (.mtx or .mtx.gz)\n"
          "  parse FILE         read a Matrix Market file and report the parse throughput\n"
          "                     (with each --threads count; the same CSR from each)\n"
          "  setup [FILE]       time every set-up step: read, analyze, convert, upload,\n"
          "                     program (JIT and on-disk cache), first product, and the\n"
          "                     device-side conversion and values-only updates\n"
          "\n"
          "options:\n"
          "  -d, --device SEL       P:D index, gpu|cpu|accelerator, or a name substring\n"
          "                         (default: $CMRSCL_DEVICE, else the first GPU)\n"
          "  -p, --precision P      float (default), double, or float,double (bench)\n"
          "  -g, --gen SPEC         a generated matrix instead of FILE (bench: repeatable):\n"
          "                         stencil5:N stencil7:N stencil27:N random:N:K perm:N\n"
          "                         dense:N rmat:SCALE:EDGES fem:N:B skewed:N:K:D:LEN [@SEED]\n"
          "                         kron:A.mtx:B.mtx (Kronecker product of two files)\n"
          "the plan (default: chosen from the device and the matrix):\n"
          "      --kernel K         auto | strip | segment | modulo (modulo: chosen only\n"
          "                         by hand, not yet measured on a GPU)\n"
          "      --modulo N         modulo kernel: 2, 4, 8, 16 or 32 slot sets per strip\n"
          "                         (default 8, or the warp when narrower)\n"
          "  -H, --height N         strip height 1..256\n"
          "      --warp N           work-items per strip\n"
          "      --work-group N     work-group size\n"
          "      --layout L         auto | packed | unpacked\n"
          "      --order O          auto | rows | columns (in-strip column ordering)\n"
          "      --reduce R         auto | local | shuffle | subgroup\n"
          "      --tile N           split strips longer than 2N entries into tiles of N;\n"
          "                         0 automatic, -1 never\n"
          "      --combine C        auto | kernel | group: tiles summed by a second kernel,\n"
          "                         or by their work-group (one kernel; the tile and the\n"
          "                         work-group grow so a long strip fits one group)\n"
          "      --cache-hint H     auto | off | stream (NVIDIA: evict-first matrix loads)\n"
          "      --index-bits N     0 | 32 | 64: the device's entry indices (default 0:\n"
          "                         32, and 64 from 2^31 stored entries on)\n"
          "timing and checks:\n"
          "  -r, --repetitions N    timed runs (default 50)\n"
          "      --warmup N         untimed runs first (default 5)\n"
          "      --alpha A, --beta B  scalars (default 1 and 0)\n"
          "      --no-verify        skip the check against the CPU double reference\n"
          "      --json             machine-readable output on stdout\n"
          "bench:\n"
          "      --plans LIST       comma-separated: auto, csr-vector, csr-scalar, strip[:H],\n"
          "                         segment[:H], modulo[:H], each with optional +stream,\n"
          "                         +nosplit, +w=N (lanes per strip), +wg=N (work-group),\n"
          "                         +tile=N, +group, +combine (--combine), +m=N\n"
          "                         (modulo's slot sets), +local, +shuffle\n"
          "                         (default: auto)\n"
          "      --suite FILE       matrices listed one per line (a .mtx path or a spec);\n"
          "                         repeatable\n"
          "      --csv FILE, --json-out FILE   result files\n"
          "      --peer FILE        a peer's CSV (cmrscl-peer): times and speedups side by side\n"
          "      --bandwidth GBS    B for eta (default: measured with the stream kernels)\n"
          "      --no-baseline      skip the csr-vector run behind the speedup column\n"
          "other:\n"
          "      --threads LIST     host threads reading files, e.g. 1,2,4,16; 0 = all CPUs\n"
          "                         (default: $CMRSCL_THREADS, else all; parse: 1,0)\n"
          "      --size MB          bandwidth: MB per buffer (default 1024)\n"
          "  -o, --output FILE      output file (gen)\n"
          "  -h, --help             this text;  --version  the library version\n"
          "\n"
          "exit status: 0 success, 1 failure while running, 2 usage error\n",
          out);
}

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

enum {
    OPT_WARP = 256,
    OPT_WG,
    OPT_LAYOUT,
    OPT_ORDER,
    OPT_REDUCE,
    OPT_KERNEL,
    OPT_THREADS,
    OPT_TILE,
    OPT_CACHE_HINT,
    OPT_COMBINE,
    OPT_INDEX_BITS,
    OPT_MODULO,
    OPT_WARMUP,
    OPT_ALPHA,
    OPT_BETA,
    OPT_NO_VERIFY,
    OPT_JSON,
    OPT_VERSION,
    OPT_PLANS,
    OPT_SUITE,
    OPT_CSV,
    OPT_JSON_OUT,
    OPT_PEER,
    OPT_BANDWIDTH,
    OPT_NO_BASELINE,
    OPT_SIZE
};

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

static bool apply_option(int c, const char *arg, cli_options *o)
{
    static const char *const layouts[] = {"auto", "packed", "unpacked", NULL};
    static const char *const orders[] = {"auto", "rows", "columns", NULL};
    static const char *const hints[] = {"auto", "off", "stream", NULL};
    static const char *const combines[] = {"auto", "kernel", "group", NULL};
    static const char *const index_bits[] = {"0", "32", "64", NULL}; /* 32 k bits */
    int k;
    switch (c) {
    case 'd': o->device = arg; return true;
    case 'g': return add_input(o, arg, true);
    case 'o': o->output = arg; return true;
    case 'p': return parse_precisions(arg, o);
    case 'H': return parse_int("--height", arg, 1, CMRSCL_MAX_HEIGHT, &o->matrix.height);
    case OPT_WARP: return parse_int("--warp", arg, 1, 1024, &o->matrix.warp);
    case OPT_WG: return parse_int("--work-group", arg, 1, 1 << 16, &o->matrix.work_group_size);
    case OPT_TILE: return parse_int("--tile", arg, -1, 1 << 30, &o->matrix.tile);
    case OPT_MODULO: return parse_int("--modulo", arg, 2, 32, &o->matrix.modulo);
    case 'r': return parse_int("--repetitions", arg, 1, 1000000, &o->repetitions);
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
               usage_error("--kernel", "auto, strip, segment or modulo", arg);
    case OPT_CACHE_HINT:
        if (!parse_keyword("--cache-hint", arg, hints, "auto, off or stream", &k))
            return false;
        o->matrix.cache_hint = (cmrscl_cache_hint)k;
        return true;
    case OPT_COMBINE:
        if (!parse_keyword("--combine", arg, combines, "auto, kernel or group", &k))
            return false;
        o->matrix.combine = (cmrscl_combine)k;
        return true;
    case OPT_INDEX_BITS:
        if (!parse_keyword("--index-bits", arg, index_bits, "0, 32 or 64", &k))
            return false;
        o->matrix.index_bits = 32 * k;
        return true;
    default: return false;
    }
}

bool cli_parse(int argc, char **argv, cli_options *o)
{
    static const struct option longs[] = {{"device", required_argument, NULL, 'd'},
                                          {"precision", required_argument, NULL, 'p'},
                                          {"gen", required_argument, NULL, 'g'},
                                          {"height", required_argument, NULL, 'H'},
                                          {"warp", required_argument, NULL, OPT_WARP},
                                          {"work-group", required_argument, NULL, OPT_WG},
                                          {"layout", required_argument, NULL, OPT_LAYOUT},
                                          {"order", required_argument, NULL, OPT_ORDER},
                                          {"reduce", required_argument, NULL, OPT_REDUCE},
                                          {"repetitions", required_argument, NULL, 'r'},
                                          {"warmup", required_argument, NULL, OPT_WARMUP},
                                          {"alpha", required_argument, NULL, OPT_ALPHA},
                                          {"beta", required_argument, NULL, OPT_BETA},
                                          {"no-verify", no_argument, NULL, OPT_NO_VERIFY},
                                          {"json", no_argument, NULL, OPT_JSON},
                                          {"kernel", required_argument, NULL, OPT_KERNEL},
                                          {"tile", required_argument, NULL, OPT_TILE},
                                          {"modulo", required_argument, NULL, OPT_MODULO},
                                          {"cache-hint", required_argument, NULL, OPT_CACHE_HINT},
                                          {"combine", required_argument, NULL, OPT_COMBINE},
                                          {"index-bits", required_argument, NULL, OPT_INDEX_BITS},
                                          {"plans", required_argument, NULL, OPT_PLANS},
                                          {"suite", required_argument, NULL, OPT_SUITE},
                                          {"csv", required_argument, NULL, OPT_CSV},
                                          {"json-out", required_argument, NULL, OPT_JSON_OUT},
                                          {"peer", required_argument, NULL, OPT_PEER},
                                          {"bandwidth", required_argument, NULL, OPT_BANDWIDTH},
                                          {"no-baseline", no_argument, NULL, OPT_NO_BASELINE},
                                          {"size", required_argument, NULL, OPT_SIZE},
                                          {"threads", required_argument, NULL, OPT_THREADS},
                                          {"output", required_argument, NULL, 'o'},
                                          {"help", no_argument, NULL, 'h'},
                                          {"version", no_argument, NULL, OPT_VERSION},
                                          {NULL, 0, NULL, 0}};
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
    while ((c = getopt_long(argc, argv, ":d:p:g:H:r:o:h", longs, NULL)) != -1) {
        if (c == 'h' || c == OPT_VERSION) {
            o->command = c == 'h' ? "help" : "version";
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
        if (!apply_option(c, optarg, o))
            return false;
    }
    if (optind < argc)
        o->command = argv[optind++];
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
    for (int i = 0; i < o->ninputs; ++i) {
        if (o->is_gen[i])
            o->gen = o->inputs[i];
        else
            o->file = o->inputs[i];
    }
    return true;
}
