/* cli.h - what the pieces of cmrscl-run share: parsed options, the built-in matrix
 * generators, a minimal JSON writer, and the subcommands. */
#ifndef CMRSCL_CLI_H
#define CMRSCL_CLI_H

#include "cmrscl.h"

#include <stdbool.h>
#include <stdio.h>

/* Exit statuses: 0 success, 1 a failure while running (library error, wrong result),
 * 2 a usage error (bad flag or value, whether the parser or the library finds it). */
enum { EXIT_RUN_FAILED = 1, EXIT_USAGE = 2 };

#define DEFAULT_MATRIX "stencil27:100"

#define CLI_MAX_INPUTS 256

typedef struct cli_options {
    const char *command;
    /* Matrices in the order given: FILE arguments and --gen SPECs (bench takes many, the
     * other commands one); is_gen[i] says which. file/gen: the single one's, or NULL. */
    const char *inputs[CLI_MAX_INPUTS];
    bool is_gen[CLI_MAX_INPUTS];
    int ninputs;
    const char *file, *gen;
    const char *device;         /* --device SEL (NULL: CMRSCL_DEVICE, then the default) */
    const char *output;         /* --output FILE (gen) */
    cmrscl_precision precision; /* the first of --precision's list */
    unsigned precisions;        /* bench: bit 0 float, bit 1 double */
    cmrscl_options matrix;      /* the plan's knobs: kernel, height, warp, ... */
    const char *plans;          /* bench: comma-separated plan names (tools/cli/plans.c) */
    const char *suites[8];      /* bench: files listing matrices (--suite, repeatable) */
    int nsuites;
    const char *csv, *json_out; /* bench: result files */
    const char *peer;           /* bench: a peer's CSV (tools/peer) to compare with */
    double bandwidth_gbs;       /* bench: B for eta; 0: measure it */
    double size_mb;             /* bandwidth: MB per buffer; 0: the default */
    int threads[16];            /* --threads LIST: parse tries each; reading takes the first */
    int nthreads;               /* 0: not given (0 in the list: all CPUs) */
    int repetitions, warmup;
    bool repetitions_given;
    const char *help_for; /* command "help": the command whose help was asked, or NULL */
    double alpha, beta;
    bool verify, json, progress, baseline;
    bool transpose; /* spmv, bench: the transposed product, y = alpha*A^T*x + beta*y */
    /* spmv, bench: --vectors, the block product Y = alpha*A*X + beta*Y for each k listed
     * (spmv: one); `block` is the run's k (0: the single product), column_major X and Y's
     * order */
    int vectors[16], nvectors, block;
    bool column_major;
    /* solve: the solver's options, the right-hand side (ones, random or a file) and
     * --iterations (a fixed count for timing: no convergence test) */
    cmrscl_solve_options solve;
    const char *rhs;
    bool fixed_iterations, tol_given, rtol_given;
    bool amg_float;      /* --amg-float: AMG's cycle in float under a double solve */
    int amg_chebyshev;   /* --amg-chebyshev K: the smoother's degree (0: Jacobi) */
    int amg_cycle;       /* --amg-cycle v|w: 1 + CMRSCL_AMG_CYCLE_V or _W; 0: not given */
    bool amg_unsmoothed; /* --amg-unsmoothed: plain aggregation, P = T */
    bool amg_rigid_body; /* --amg-rigid-body: elastic:N's rigid-body modes as the near-null space */
    double amg_theta;    /* --amg-theta T: the strength threshold (0: every coupling strong) */
} cli_options;

/* The tool's name in messages ("cmrscl-run" unless the tool sets it). */
extern const char *cli_name;

/* The commands, as bits of the options' masks. */
enum {
    CMD_DEVICES = 1 << 0,
    CMD_SPMV = 1 << 1,
    CMD_TUNE = 1 << 2,
    CMD_BENCH = 1 << 3,
    CMD_BANDWIDTH = 1 << 4,
    CMD_GEN = 1 << 5,
    CMD_PARSE = 1 << 6,
    CMD_SETUP = 1 << 7,
    CMD_SOLVE = 1 << 8,
    CMD_MULTIPLY = 1 << 9
};
/* Option ids past the short options' characters. */
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
    OPT_VALUES,
    OPT_RENUMBER,
    OPT_COMBINE,
    OPT_INDEX_BITS,
    OPT_COLUMN_BITS,
    OPT_PLAN_VECTORS,
    OPT_MODULO,
    OPT_WARMUP,
    OPT_ALPHA,
    OPT_BETA,
    OPT_NO_VERIFY,
    OPT_TRANSPOSE,
    OPT_VECTORS,
    OPT_COLUMN_MAJOR,
    OPT_JSON,
    OPT_VERSION,
    OPT_PLANS,
    OPT_SUITE,
    OPT_CSV,
    OPT_JSON_OUT,
    OPT_PEER,
    OPT_BANDWIDTH,
    OPT_NO_BASELINE,
    OPT_SIZE,
    OPT_METHOD,
    OPT_PRECOND,
    OPT_AMG_FLOAT,
    OPT_AMG_CHEBYSHEV,
    OPT_AMG_CYCLE,
    OPT_AMG_UNSMOOTHED,
    OPT_AMG_THETA,
    OPT_AMG_RIGID_BODY,
    OPT_TOL,
    OPT_ATOL,
    OPT_MAX_ITER,
    OPT_ITERATIONS,
    OPT_RHS,
    OPT_RESTART,
    OPT_CHECK_INTERVAL
};
enum {
    CLI_GROUP_MAIN,
    CLI_GROUP_PLAN,
    CLI_GROUP_TIMING,
    CLI_GROUP_SOLVE,
    CLI_GROUP_BENCH,
    CLI_GROUP_OTHER
};
/* cli_table.c: the commands and the options, with what each option is for and the commands
 * that take it (cli_parse refuses it elsewhere). */
typedef struct cli_command {
    const char *name;
    unsigned bit;
    const char *args, *text;
} cli_command;
typedef struct cli_flag {
    const char *name; /* long name, without "--" */
    int id;           /* the short option's character, or an OPT_ id */
    const char *arg;  /* the value's name, or NULL: a switch */
    unsigned commands;
    int group;
    const char *help;
} cli_flag;
/* An option's help in the commands a note names: the general help speaks of every command
 * ("default 50; solve: default 1"), a command's own help of that command alone. */
typedef struct cli_note {
    int id; /* the option's */
    unsigned commands;
    const char *help;
} cli_note;
extern const cli_command cli_commands[]; /* ends with a NULL name */
extern const cli_flag cli_flags[];       /* ends with a NULL name */
extern const cli_note cli_notes[];       /* ends with a NULL help */
const cli_command *cli_command_named(const char *name);
const cli_flag *cli_flag_of(int id);
/* The whole help, or one command's (its options only) when `command` names one. */
void cli_usage(FILE *out, const char *command);

/* Parses argv; on a usage error prints one line and returns false. A COMMAND --help (or
 * --help alone) leaves command "help" and help_for the command (or NULL). */
bool cli_parse(int argc, char **argv, cli_options *opt);

/* A monotonic clock in seconds, for host-side timings (loading, parsing). */
double cli_seconds(void);
/* The median of n > 0 values (sorts them). */
double cli_median(double *v, int n);

/* Prints "<cli_name>: <what>: <status>: <detail>" and returns EXIT_RUN_FAILED, or EXIT_USAGE
 * for the library's INVALID_ARGUMENT (a value of the user's the device or matrix refuses). */
int cli_fail(const char *what, cmrscl_status status);
/* The device the options select, in a context of its own, and its facts: 0, or cli_fail's
 * status (the reason printed). */
int cli_open_device(const cli_options *opt, cmrscl_context *ctx, cmrscl_device_info *dev);

/* A generated matrix (cmrscl_csr_generate lists the specs). Returns 0, or an exit status
 * (EXIT_USAGE for a bad spec, EXIT_RUN_FAILED when memory runs out) with the reason in
 * `error`. */
int gen_matrix(const char *spec, cmrscl_csr *out, char *error, size_t error_size);
/* A large matrix takes seconds to build: on a terminal, says so before it is built (its size
 * from cmrscl_csr_generate_size) and returns true. */
bool gen_announce(const char *spec, int64_t rows, int64_t cols, int64_t entries);

/* The matrix a command works on: FILE, --gen SPEC, or the default generated matrix.
 * Reports load time and throughput through the out parameters. */
typedef struct loaded_matrix {
    cmrscl_csr csr;
    char name[256];
    double load_seconds;
    double file_mb; /* 0 for generated matrices */
} loaded_matrix;
struct run_memory;
/* `check` (run_memory.h; NULL: none): refuse a matrix the run cannot hold, a file from its
 * size line before reading its entries. */
int load_matrix(const cli_options *opt, const struct run_memory *check, loaded_matrix *out);
/* The device the options select (cli_open_device) and the command's matrix (load_matrix),
 * refused where the run could not hold it in the options' precision: 0, or an exit status
 * with the context freed. */
int open_with_matrix(const cli_options *opt, cmrscl_context *ctx, cmrscl_device_info *dev,
                     loaded_matrix *lm);
/* The same for one input: a file path (read with `threads` threads, 0: all CPUs), or a spec
 * when is_gen. */
int load_input(const char *input, bool is_gen, int threads, const struct run_memory *check,
               loaded_matrix *out);

/* Minimal streaming JSON writer to stdout: nested objects/arrays, commas handled. */
void json_open(const char *key, char bracket);
void json_close(char bracket);
void json_string(const char *key, const char *value);
void json_number(const char *key, double value);
void json_int(const char *key, long long value);
void json_bool(const char *key, bool value);
void json_end(void);
/* Where the writer goes: a file (e.g. bench --json-out), or stdout after json_to(NULL). */
void json_to(FILE *file);

int cmd_devices(const cli_options *opt);
int cmd_spmv(const cli_options *opt);
int cmd_tune(const cli_options *opt);
int cmd_gen(const cli_options *opt);
int cmd_parse(const cli_options *opt);
int cmd_setup(const cli_options *opt);
int cmd_bench(const cli_options *opt);
int cmd_bandwidth(const cli_options *opt);
int cmd_solve(const cli_options *opt);
int cmd_multiply(const cli_options *opt);

#endif
