/* cli_table.c - cmrscl-run's commands and options, one table each: what a command is for and
 * which options it takes, each option's help. The parser (cli_options.c) refuses an option
 * the command does not take, and `cmrscl-run COMMAND --help` shows that command's options
 * only: the help and the parser cannot disagree. */
#include "cli.h"

#include <string.h>

/* Options that shape the plan: every command that makes a device matrix to run. */
#define PLAN_CMDS (CMD_SPMV | CMD_BENCH | CMD_SETUP | CMD_SOLVE)
/* Options of a command that reads or generates one matrix and runs it. */
#define RUN_CMDS (CMD_SPMV | CMD_TUNE | CMD_BENCH | CMD_SETUP | CMD_SOLVE | CMD_MULTIPLY)
/* The run commands that take one matrix (bench takes lists). */
#define ONE_CMDS (RUN_CMDS & ~CMD_BENCH)

#define GEN_SPECS                                                                                  \
    "stencil5:N stencil7:N stencil27:N convdiff:N random:N:K perm:N dense:N rmat:SCALE:EDGES "     \
    "fem:N:B skewed:N:K:D:LEN geo:N:K [@SEED], kron:A.mtx:B.mtx (Kronecker product of two "        \
    "files), "                                                                                     \
    "lap:SPEC (SPEC's pattern as a shifted graph Laplacian: SPD)"

const cli_command cli_commands[] = {
    {"devices", CMD_DEVICES, "",
     "list every OpenCL device: its facts and the kernel variants it runs"},
    {"spmv", CMD_SPMV, "[FILE]",
     "run, verify and time y = alpha*A*x + beta*y (default matrix: " DEFAULT_MATRIX
     ", a 27-point 3-D stencil on a 100^3 grid)"},
    {"tune", CMD_TUNE, "[FILE]",
     "time every plan the device runs (variant x HEIGHT), verified; report the fastest and "
     "remember it in the tuning database"},
    {"bench", CMD_BENCH, "[FILE...]", "matrices x plans x precisions: tables, --csv, --json-out"},
    {"bandwidth", CMD_BANDWIDTH, "",
     "the device's stream read, copy and triad bandwidth, and its rate of scattered loads "
     "from buffers of 1-256 MiB"},
    {"solve", CMD_SOLVE, "[FILE]",
     "solve A x = b on the device (CG, CG with Jacobi, BiCGStab, GMRES) and check x on the CPU: "
     "iterations, residuals, time per iteration (default matrix: " DEFAULT_MATRIX ")"},
    {"multiply", CMD_MULTIPLY, "[FILE]",
     "the sparse product C = A A (A A^T where A is not square) on the device, as AMG's Galerkin "
     "products make it: timed, against the host's threads, and C checked against the host's, "
     "bit for bit"},
    {"gen", CMD_GEN, "SPEC -o FILE", "write a generated matrix as Matrix Market (.mtx or .mtx.gz)"},
    {"parse", CMD_PARSE, "FILE",
     "read a Matrix Market file and report the parse throughput (with each --threads count; "
     "the same CSR from each)"},
    {"setup", CMD_SETUP, "[FILE]",
     "time every set-up step: read, analyze, convert, upload, program (JIT and on-disk "
     "cache), first product, and the device-side conversion and values-only updates"},
    {NULL, 0, NULL, NULL}};

const cli_flag cli_flags[] = {
    {"device", 'd', "SEL", RUN_CMDS | CMD_BANDWIDTH, CLI_GROUP_MAIN,
     "P:D index, gpu|cpu|accelerator, or a name substring (default: $CMRSCL_DEVICE, else the "
     "first GPU)"},
    {"precision", 'p', "P", RUN_CMDS, CLI_GROUP_MAIN,
     "float (default), double, or float,double (bench)"},
    {"gen", 'g', "SPEC", RUN_CMDS | CMD_GEN, CLI_GROUP_MAIN,
     "a generated matrix instead of FILE (bench: repeatable): " GEN_SPECS},
    {"kernel", OPT_KERNEL, "K", PLAN_CMDS, CLI_GROUP_PLAN,
     "auto | strip | segment | modulo | slice (modulo: chosen only by hand, not yet measured on "
     "a GPU)"},
    {"modulo", OPT_MODULO, "N", PLAN_CMDS, CLI_GROUP_PLAN,
     "modulo kernel: 2, 4, 8, 16 or 32 slot sets per strip (default 8, or the warp when "
     "narrower)"},
    {"height", 'H', "N", PLAN_CMDS, CLI_GROUP_PLAN, "strip height 1..256"},
    {"warp", OPT_WARP, "N", PLAN_CMDS, CLI_GROUP_PLAN,
     "work-items per strip: a power of two (sub-groups: a width the device has)"},
    {"work-group", OPT_WG, "N", PLAN_CMDS, CLI_GROUP_PLAN,
     "work-group size: a power of two, a multiple of the warp"},
    {"layout", OPT_LAYOUT, "L", PLAN_CMDS, CLI_GROUP_PLAN, "auto | packed | unpacked"},
    {"order", OPT_ORDER, "O", PLAN_CMDS, CLI_GROUP_PLAN,
     "auto | rows | columns (in-strip column ordering)"},
    {"reduce", OPT_REDUCE, "R", PLAN_CMDS, CLI_GROUP_PLAN,
     "auto | local | shuffle | subgroup: the warp layer's backend"},
    {"tile", OPT_TILE, "N", PLAN_CMDS, CLI_GROUP_PLAN,
     "split strips longer than 2N entries into tiles of N; 0 automatic, -1 never"},
    {"combine", OPT_COMBINE, "C", PLAN_CMDS, CLI_GROUP_PLAN,
     "auto | kernel | group | last: tiles summed by a second kernel, by their work-group (one "
     "kernel; the tile and the work-group grow so a long strip fits one group), or by the "
     "work-group that finishes a strip's last tile (one kernel; NVIDIA and CPUs)"},
    {"cache-hint", OPT_CACHE_HINT, "H", PLAN_CMDS, CLI_GROUP_PLAN,
     "auto | off | stream (NVIDIA: evict-first matrix loads)"},
    {"values", OPT_VALUES, "V", PLAN_CMDS, CLI_GROUP_PLAN,
     "auto | plain | float | dict | diagonal: how the device stores the values (auto: the "
     "smallest exact one - a dictionary of up to 16 values in the column words; up to 15 off "
     "the diagonal and the diagonal in an array of its own; doubles that are floats as floats)"},
    {"renumber", OPT_RENUMBER, "R", PLAN_CMDS, CLI_GROUP_PLAN,
     "auto | none | hubs: the unknowns' numbering on the device (hubs: P A P^T with the rows "
     "longer than the mean first, by length - a power-law graph's hubs, the entries of x most "
     "rows gather, side by side; square matrices; auto: none)"},
    {"index-bits", OPT_INDEX_BITS, "N", PLAN_CMDS, CLI_GROUP_PLAN,
     "0 | 32 | 64: the device's entry indices (default 0: 32, and 64 from 2^31 stored entries "
     "on)"},
    {"column-bits", OPT_COLUMN_BITS, "N", PLAN_CMDS, CLI_GROUP_PLAN,
     "0 | 16 | 32 | implied: the slice and strip kernels' column words (default 0: 16-bit steps "
     "within a slice's rows, or offsets from a strip's first column, where they fit - none where "
     "a strip is one row whose columns are one run (implied); else 32)"},
    {"plan-vectors", OPT_PLAN_VECTORS, "K", CMD_SPMV | CMD_BENCH, CLI_GROUP_PLAN,
     "the block width the plan lays the matrix out for (default: --vectors' K; 1: as for "
     "single products)"},
    {"repetitions", 'r', "N", RUN_CMDS | CMD_BANDWIDTH | CMD_PARSE, CLI_GROUP_TIMING,
     "timed runs (default 50; bandwidth: the best of 5; solve: solves, default 1)"},
    {"warmup", OPT_WARMUP, "N", CMD_SPMV | CMD_TUNE | CMD_BENCH, CLI_GROUP_TIMING,
     "untimed runs first (default 5)"},
    {"alpha", OPT_ALPHA, "A", CMD_SPMV | CMD_BENCH, CLI_GROUP_TIMING, "alpha (default 1)"},
    {"beta", OPT_BETA, "B", CMD_SPMV | CMD_BENCH, CLI_GROUP_TIMING, "beta (default 0)"},
    {"transpose", OPT_TRANSPOSE, NULL, CMD_SPMV | CMD_BENCH, CLI_GROUP_TIMING,
     "the transposed product y = alpha*A^T*x + beta*y (the plan's options then shape A^T's "
     "plan: the library keeps A^T as a matrix of its own)"},
    {"vectors", OPT_VECTORS, "K", CMD_SPMV | CMD_BENCH, CLI_GROUP_TIMING,
     "the block product Y = alpha*A*X + beta*Y for K vectors at once (1..4096; bench: a "
     "list like 4,8,16,32, rows named MATRIX[k=K])"},
    {"column-major", OPT_COLUMN_MAJOR, NULL, CMD_SPMV | CMD_BENCH, CLI_GROUP_TIMING,
     "with --vectors: X and Y column-major (each vector contiguous; default row-major)"},
    {"no-verify", OPT_NO_VERIFY, NULL, CMD_SPMV | CMD_BENCH | CMD_SOLVE | CMD_MULTIPLY,
     CLI_GROUP_TIMING, "skip the check against the CPU double reference (solve: of ||b - A x||)"},
    {"json", OPT_JSON, NULL,
     CMD_DEVICES | CMD_SPMV | CMD_TUNE | CMD_BENCH | CMD_BANDWIDTH | CMD_GEN | CMD_PARSE |
         CMD_SOLVE | CMD_MULTIPLY,
     CLI_GROUP_TIMING, "machine-readable output on stdout"},
    {"method", OPT_METHOD, "M", CMD_SOLVE, CLI_GROUP_SOLVE,
     "cg (default) | pcg (CG with the Jacobi preconditioner) | bicgstab | gmres"},
    {"precond", OPT_PRECOND, "P", CMD_SOLVE, CLI_GROUP_SOLVE,
     "none (default) | jacobi | amg (smoothed aggregation: the hierarchy set up on the host, "
     "its cycle on the device; cg, and bicgstab and gmres on the right)"},
    {"amg-float", OPT_AMG_FLOAT, NULL, CMD_SOLVE, CLI_GROUP_SOLVE,
     "with --precond amg in double: the hierarchy and its cycle in float (mixed precision)"},
    {"amg-chebyshev", OPT_AMG_CHEBYSHEV, "K", CMD_SOLVE, CLI_GROUP_SOLVE,
     "with --precond amg: a Chebyshev smoother of degree K (2..8; K products a sweep) instead "
     "of damped Jacobi"},
    {"amg-cycle", OPT_AMG_CYCLE, "C", CMD_SOLVE, CLI_GROUP_SOLVE,
     "with --precond amg: v (default) a V-cycle, or w a W-cycle (each level corrected twice "
     "from the next: fewer iterations, each dearer)"},
    {"amg-unsmoothed", OPT_AMG_UNSMOOTHED, NULL, CMD_SOLVE, CLI_GROUP_SOLVE,
     "with --precond amg: plain aggregation (P the tentative prolongator: cheaper set-up and "
     "cycle, more iterations)"},
    {"amg-theta", OPT_AMG_THETA, "T", CMD_SOLVE, CLI_GROUP_SOLVE,
     "with --precond amg: the strength threshold - a coupling is strong where |a_ij| >= T "
     "sqrt(|a_ii a_jj|); 0 (default) every coupling, but 0.25 on levels with hubs or that "
     "expand (power-law and random graphs)"},
    {"amg-rigid-body", OPT_AMG_RIGID_BODY, NULL, CMD_SOLVE, CLI_GROUP_SOLVE,
     "with --precond amg on elastic:N: the six rigid-body modes of its points as the near-null "
     "space, x, y, z of a point aggregated together"},
    {"tol", OPT_TOL, "R", CMD_SOLVE, CLI_GROUP_SOLVE,
     "relative tolerance: stop once ||r|| <= max(R ||b||, atol) (default 1e-5; 0 with --atol: "
     "absolute alone)"},
    {"atol", OPT_ATOL, "A", CMD_SOLVE, CLI_GROUP_SOLVE, "absolute tolerance (default 0)"},
    {"max-iter", OPT_MAX_ITER, "N", CMD_SOLVE, CLI_GROUP_SOLVE,
     "iterations at most (default 10 x rows; GMRES: inner iterations)"},
    {"iterations", OPT_ITERATIONS, "N", CMD_SOLVE, CLI_GROUP_SOLVE,
     "exactly N iterations, no convergence test: the time per iteration"},
    {"rhs", OPT_RHS, "B", CMD_SOLVE, CLI_GROUP_SOLVE,
     "ones (default) | random | FILE (a Matrix Market vector, array or coordinate, or n numbers)"},
    {"restart", OPT_RESTART, "M", CMD_SOLVE, CLI_GROUP_SOLVE,
     "GMRES: Krylov vectors per cycle (default 20, scipy's)"},
    {"check-interval", OPT_CHECK_INTERVAL, "K", CMD_SOLVE, CLI_GROUP_SOLVE,
     "iterations between the host's convergence checks (default: chosen as measured)"},
    {"plans", OPT_PLANS, "LIST", CMD_BENCH, CLI_GROUP_BENCH,
     "comma-separated: auto, csr-vector, csr-scalar, strip[:H], segment[:H], modulo[:H], "
     "slice[:H], each "
     "with optional +stream, +nosplit, +w=N (lanes per strip), +wg=N (work-group), +tile=N, "
     "+group, +combine, +last (--combine), +m=N (modulo's slot sets), +local, +shuffle, +subgroup "
     "(default: auto)"},
    {"suite", OPT_SUITE, "FILE", CMD_BENCH, CLI_GROUP_BENCH,
     "matrices listed one per line (a .mtx path or a spec); repeatable"},
    {"csv", OPT_CSV, "FILE", CMD_BENCH, CLI_GROUP_BENCH, "the results as CSV"},
    {"json-out", OPT_JSON_OUT, "FILE", CMD_BENCH, CLI_GROUP_BENCH, "the results as JSON"},
    {"peer", OPT_PEER, "FILE", CMD_BENCH, CLI_GROUP_BENCH,
     "a peer's CSV (cmrscl-peer): times and speedups side by side"},
    {"bandwidth", OPT_BANDWIDTH, "GBS", CMD_BENCH, CLI_GROUP_BENCH,
     "B for eta (default: measured with the stream kernels)"},
    {"no-baseline", OPT_NO_BASELINE, NULL, CMD_BENCH, CLI_GROUP_BENCH,
     "skip the csr-vector run behind the speedup column"},
    {"threads", OPT_THREADS, "LIST", RUN_CMDS | CMD_PARSE, CLI_GROUP_OTHER,
     "host threads reading files, e.g. 1,2,4,16; 0 = all CPUs (default: $CMRSCL_THREADS, else "
     "all; parse: 1,0)"},
    {"size", OPT_SIZE, "MB", CMD_BANDWIDTH, CLI_GROUP_OTHER,
     "MB per buffer (default 1 GiB = 1073.7 MB, or less where the device allows less; a CPU: 8x "
     "its cache, at least 64 MiB)"},
    {"output", 'o', "FILE", CMD_GEN, CLI_GROUP_OTHER, "the file to write"},
    {"help", 'h', NULL, ~0u, CLI_GROUP_OTHER, "this text (COMMAND --help: that command's)"},
    {"version", OPT_VERSION, NULL, ~0u, CLI_GROUP_OTHER, "the library version"},
    {NULL, 0, NULL, 0, 0, NULL}};

/* Where the general help above speaks of other commands, what a command's own help says. */
const cli_note cli_notes[] = {
    {'p', ONE_CMDS & ~CMD_MULTIPLY, "float (default) or double"},
    {'p', CMD_BENCH, "float (default), double, or both: float,double"},
    {'g', ONE_CMDS, "a generated matrix instead of FILE: " GEN_SPECS},
    {'g', CMD_BENCH, "a generated matrix beside the FILEs, repeatable: " GEN_SPECS},
    {'g', CMD_GEN, "the matrix to write, instead of SPEC: " GEN_SPECS},
    {'r', CMD_SPMV | CMD_TUNE | CMD_BENCH | CMD_SETUP, "timed runs (default 50)"},
    {'r', CMD_PARSE, "reads of the file with each thread count, the best reported (default 50)"},
    {'r', CMD_BANDWIDTH, "runs of each measurement, the best reported (default 5)"},
    {'r', CMD_SOLVE, "timed solves (default 1)"},
    {'p', CMD_MULTIPLY,
     "the precision of C's matrix (float, the default, or double; C is formed in "
     "double)"},
    {'r', CMD_MULTIPLY, "timed products (default 10)"},
    {OPT_VECTORS, CMD_SPMV,
     "the block product Y = alpha*A*X + beta*Y for K vectors at once (1..4096)"},
    {OPT_VECTORS, CMD_BENCH,
     "the block product Y = alpha*A*X + beta*Y for each K of a list like 4,8,16,32 (1..4096), "
     "rows named MATRIX[k=K]"},
    {OPT_NO_VERIFY, CMD_SPMV | CMD_BENCH, "skip the check against the CPU double reference"},
    {OPT_NO_VERIFY, CMD_SOLVE, "skip the check of ||b - A x|| against the CPU double reference"},
    {OPT_NO_VERIFY, CMD_MULTIPLY, "skip the check of C against the host's"},
    {OPT_THREADS, ONE_CMDS,
     "host threads reading the file; 0 = all CPUs (default: $CMRSCL_THREADS, else all)"},
    {OPT_THREADS, CMD_BENCH,
     "host threads reading the files; 0 = all CPUs (default: $CMRSCL_THREADS, else all)"},
    {OPT_THREADS, CMD_PARSE,
     "the host thread counts to read the file with, e.g. 1,2,4,16; 0 = all CPUs (default: 1,0)"},
    {0, 0, NULL}};

const cli_command *cli_command_named(const char *name)
{
    for (const cli_command *c = cli_commands; name && c->name; ++c)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

const cli_flag *cli_flag_of(int id)
{
    for (const cli_flag *f = cli_flags; f->name; ++f)
        if (f->id == id)
            return f;
    return NULL;
}

/* Writes `text` indented by `indent`, folded before `width` columns, from column `at`. */
static void folded(FILE *out, const char *text, int at, int indent, int width)
{
    while (*text) {
        size_t n = strlen(text), room = (size_t)(width - at);
        size_t cut = n;
        if (n > room) {
            cut = room;
            while (cut > 0 && text[cut] != ' ')
                --cut;
            if (cut == 0)
                cut = room;
        }
        fprintf(out, "%.*s\n", (int)cut, text);
        text += cut;
        while (*text == ' ')
            ++text;
        if (*text)
            fprintf(out, "%*s", indent, "");
        at = indent;
    }
}

/* The option's help in `command`'s (NULL: the general help). */
static const char *flag_help(const cli_flag *f, const cli_command *command)
{
    for (const cli_note *n = cli_notes; command && n->help; ++n)
        if (n->id == f->id && (n->commands & command->bit))
            return n->help;
    return f->help;
}

static void print_flag(FILE *out, const cli_flag *f, const cli_command *command)
{
    char left[48];
    if (f->id < 256)
        snprintf(left, sizeof left, "  -%c, --%s%s%s", f->id, f->name, f->arg ? " " : "",
                 f->arg ? f->arg : "");
    else
        snprintf(left, sizeof left, "      --%s%s%s", f->name, f->arg ? " " : "",
                 f->arg ? f->arg : "");
    int n = fprintf(out, "%-25s", left);
    folded(out, flag_help(f, command), n, 25, 92);
}

void cli_usage(FILE *out, const char *command)
{
    static const char plan_heading[] = "the plan (default: chosen from the device and the matrix):";
    static const char *const groups[] = {
        "options:", plan_heading, "timing and output:", "solve:", "bench:", "other:"};
    const cli_command *c = cli_command_named(command);
    if (c) {
        fprintf(out, "usage: %s %s %s%s[options]\n\n", cli_name, c->name, c->args,
                c->args[0] ? " " : "");
        fputs("  ", out);
        folded(out, c->text, 2, 2, 92);
        fputs("\n", out); /* a heading per group of options the command takes */
    } else {
        fprintf(out, "usage: %s COMMAND [FILE...] [options]\n\ncommands:\n", cli_name);
        for (const cli_command *k = cli_commands; k->name; ++k) {
            char left[40];
            snprintf(left, sizeof left, "  %s %s", k->name, k->args);
            int n = fprintf(out, "%-21s", left);
            folded(out, k->text, n, 21, 92);
        }
        fprintf(out, "\n%s COMMAND --help shows the options that COMMAND takes.\n\n", cli_name);
    }
    for (int g = CLI_GROUP_MAIN; g <= CLI_GROUP_OTHER; ++g) {
        bool header = false;
        for (const cli_flag *f = cli_flags; f->name; ++f) {
            if (f->group != g || (c && !(f->commands & c->bit)))
                continue;
            if (!header && groups[g][0])
                fprintf(out, "%s\n", groups[g]);
            header = true;
            print_flag(out, f, c);
        }
    }
    fputs("\nexit status: 0 success, 1 failure while running, 2 usage error (a bad option or\n"
          "value, whether the parser or the library finds it)\n",
          out);
}
