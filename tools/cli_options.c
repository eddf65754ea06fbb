/* cli_options.c - command-line parsing for cmrscl-run: strict values (a bad number or
 * keyword is a usage error naming the flag), one optional positional FILE. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cli_usage(FILE *out)
{
    fputs("usage: cmrscl-run COMMAND [FILE] [options]\n"
          "\n"
          "commands:\n"
          "  devices            list every OpenCL device and the parameters cmrscl picks\n"
          "  spmv [FILE]        run, verify and time y = alpha*A*x + beta*y (default matrix:\n"
          "                     " DEFAULT_MATRIX ", a 27-point 3-D stencil on a 100^3 grid)\n"
          "  tune [FILE]        time every HEIGHT 1..16 and reduction, report the best\n"
          "  gen SPEC -o FILE   write a generated matrix as Matrix Market (.mtx or .mtx.gz)\n"
          "  parse FILE         read a Matrix Market file and report the parse throughput\n"
          "\n"
          "options:\n"
          "  -d, --device SEL       P:D index, gpu|cpu|accelerator, or a name substring\n"
          "                         (default: $CMRSCL_DEVICE, else the first GPU)\n"
          "  -p, --precision P      float (default) or double\n"
          "  -g, --gen SPEC         stencil7:N | stencil27:N | random:N:K instead of FILE\n"
          "  -H, --height N         strip height 1..256 (default: chosen for the device)\n"
          "      --warp N           work-items per strip (default: the device's warp)\n"
          "      --work-group N     work-group size (default: 128)\n"
          "      --layout L         auto | packed | unpacked\n"
          "      --order O          auto | rows | columns (in-strip column ordering)\n"
          "      --reduce R         auto | local | shuffle\n"
          "  -r, --repetitions N    timed runs (default 50)\n"
          "      --warmup N         untimed runs first (default 5)\n"
          "      --alpha A, --beta B  scalars (default 1 and 0)\n"
          "      --no-verify        skip the check against the CPU double reference\n"
          "      --json             machine-readable output\n"
          "  -o, --output FILE      output file (gen)\n"
          "  -h, --help             this text;  --version  the library version\n"
          "\n"
          "exit status: 0 success, 1 failure while running, 2 usage error\n",
          out);
}

static bool usage_error(const char *flag, const char *expected, const char *got)
{
    fprintf(stderr, "cmrscl-run: %s: expected %s, got '%s' (see cmrscl-run --help)\n", flag,
            expected, got);
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
    OPT_WARMUP,
    OPT_ALPHA,
    OPT_BETA,
    OPT_NO_VERIFY,
    OPT_JSON,
    OPT_VERSION
};

static bool apply_option(int c, const char *arg, cli_options *o)
{
    static const char *const precisions[] = {"float", "double", NULL};
    static const char *const layouts[] = {"auto", "packed", "unpacked", NULL};
    static const char *const orders[] = {"auto", "rows", "columns", NULL};
    static const char *const reduces[] = {"auto", "local", "shuffle", NULL};
    int k;
    switch (c) {
    case 'd': o->device = arg; return true;
    case 'g': o->gen = arg; return true;
    case 'o': o->output = arg; return true;
    case 'p':
        if (!parse_keyword("--precision", arg, precisions, "float or double", &k))
            return false;
        o->precision = k ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
        return true;
    case 'H': return parse_int("--height", arg, 1, CMRSCL_MAX_HEIGHT, &o->matrix.height);
    case OPT_WARP: return parse_int("--warp", arg, 1, 1024, &o->matrix.warp);
    case OPT_WG: return parse_int("--work-group", arg, 1, 1 << 16, &o->matrix.work_group_size);
    case 'r': return parse_int("--repetitions", arg, 1, 1000000, &o->repetitions);
    case OPT_WARMUP: return parse_int("--warmup", arg, 0, 1000000, &o->warmup);
    case OPT_ALPHA: return parse_double("--alpha", arg, &o->alpha);
    case OPT_BETA: return parse_double("--beta", arg, &o->beta);
    case OPT_NO_VERIFY: o->verify = false; return true;
    case OPT_JSON: o->json = true; return true;
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
    case OPT_REDUCE:
        if (!parse_keyword("--reduce", arg, reduces, "auto, local or shuffle", &k))
            return false;
        o->matrix.reduce = (cmrscl_reduce)k;
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
                                          {"output", required_argument, NULL, 'o'},
                                          {"help", no_argument, NULL, 'h'},
                                          {"version", no_argument, NULL, OPT_VERSION},
                                          {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->precision = CMRSCL_FLOAT;
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
            fprintf(stderr, "cmrscl-run: %s option '%s' (see cmrscl-run --help)\n",
                    c == '?' ? "unknown" : "missing value for", bad);
            return false;
        }
        if (!apply_option(c, optarg, o))
            return false;
    }
    if (optind < argc)
        o->command = argv[optind++];
    if (optind < argc)
        o->file = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "cmrscl-run: unexpected argument '%s' (see cmrscl-run --help)\n",
                argv[optind]);
        return false;
    }
    if (!o->command) {
        fputs("cmrscl-run: missing COMMAND (see cmrscl-run --help)\n", stderr);
        return false;
    }
    if (o->file && o->gen) {
        fputs("cmrscl-run: give either FILE or --gen, not both\n", stderr);
        return false;
    }
    return true;
}
