/* cli.h - what the pieces of cmrscl-run share: parsed options, the built-in matrix
 * generators, a minimal JSON writer, and the subcommands. */
#ifndef CMRSCL_CLI_H
#define CMRSCL_CLI_H

#include "cmrscl.h"

#include <stdbool.h>
#include <stdio.h>

/* Exit statuses: 0 success, 1 a failure while running (library error, wrong result),
 * 2 a usage error (bad flag or value). */
enum { EXIT_RUN_FAILED = 1, EXIT_USAGE = 2 };

#define DEFAULT_MATRIX "stencil27:100"

typedef struct cli_options {
    const char *command;
    const char *file;   /* positional FILE, or NULL */
    const char *gen;    /* --gen SPEC */
    const char *device; /* --device SEL (NULL: CMRSCL_DEVICE, then the default) */
    const char *output; /* --output FILE (gen) */
    cmrscl_precision precision;
    cmrscl_options matrix; /* height, warp, work-group, layout, order, reduce */
    int repetitions, warmup;
    double alpha, beta;
    bool verify, json, progress;
} cli_options;

/* Parses argv; on a usage error prints one line and returns false. */
bool cli_parse(int argc, char **argv, cli_options *opt);
void cli_usage(FILE *out);

/* A monotonic clock in seconds, for host-side timings (loading, parsing). */
double cli_seconds(void);

/* Prints "cmrscl-run: <what>: <status>: <detail>" and returns EXIT_RUN_FAILED. */
int cli_fail(const char *what, cmrscl_status status);

/* Generated matrices: "stencil7:N", "stencil27:N" (N^3 rows), "random:N:K" (N x N with
 * K entries per row on average). Returns 0, or an exit status (EXIT_USAGE for a bad spec,
 * EXIT_RUN_FAILED when memory runs out) with the reason in `error`. */
int gen_matrix(const char *spec, cmrscl_csr *out, char *error, size_t error_size);

/* The matrix a command works on: FILE, --gen SPEC, or the default generated matrix.
 * Reports load time and throughput through the out parameters. */
typedef struct loaded_matrix {
    cmrscl_csr csr;
    char name[256];
    double load_seconds;
    double file_mb; /* 0 for generated matrices */
} loaded_matrix;
int load_matrix(const cli_options *opt, loaded_matrix *out);

/* Minimal streaming JSON writer to stdout: nested objects/arrays, commas handled. */
void json_open(const char *key, char bracket);
void json_close(char bracket);
void json_string(const char *key, const char *value);
void json_number(const char *key, double value);
void json_int(const char *key, long long value);
void json_bool(const char *key, bool value);
void json_end(void);

int cmd_devices(const cli_options *opt);
int cmd_spmv(const cli_options *opt);
int cmd_tune(const cli_options *opt);
int cmd_gen(const cli_options *opt);
int cmd_parse(const cli_options *opt);

#endif
