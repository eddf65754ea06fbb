/* cmrscl-run - the command-line tool: list devices, run, verify, benchmark and tune CMRS
 * SpMV on a Matrix Market file or a built-in generated matrix. `cmrscl-run --help`. */
#include "cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    cli_options opt;
    if (!cli_parse(argc, argv, &opt))
        return EXIT_USAGE;
    /* The library takes what it can of the variable; a user's typo should not pass unseen. */
    const char *threads = getenv("CMRSCL_THREADS");
    char *end = NULL;
    if (threads && *threads && (strtol(threads, &end, 10) < 0 || *end)) {
        fprintf(stderr,
                "cmrscl-run: CMRSCL_THREADS='%s': expected a number of host threads (0: every "
                "CPU)\n",
                threads);
        return EXIT_USAGE;
    }
    const char *memory = getenv("CMRSCL_HOST_MEMORY_MB");
    errno = 0;
    long long mb = memory && *memory ? strtoll(memory, &end, 10) : 0;
    /* a count that fits the bytes it stands for (the limit is compared in bytes) */
    if (memory && *memory && (mb < 0 || *end || errno == ERANGE || mb > INT64_MAX / 1000000)) {
        fprintf(stderr,
                "cmrscl-run: CMRSCL_HOST_MEMORY_MB='%s': expected the host memory a run may "
                "count on, in MB (10^6 bytes)\n",
                memory);
        return EXIT_USAGE;
    }
    static const struct {
        const char *name;
        int (*run)(const cli_options *);
    } commands[] = {{"devices", cmd_devices},  {"spmv", cmd_spmv},           {"tune", cmd_tune},
                    {"bench", cmd_bench},      {"bandwidth", cmd_bandwidth}, {"gen", cmd_gen},
                    {"parse", cmd_parse},      {"setup", cmd_setup},         {"solve", cmd_solve},
                    {"multiply", cmd_multiply}};
    if (strcmp(opt.command, "help") == 0) {
        if (opt.help_for && !cli_command_named(opt.help_for)) {
            fprintf(stderr, "cmrscl-run: unknown command '%s' (see cmrscl-run --help)\n",
                    opt.help_for);
            return EXIT_USAGE;
        }
        cli_usage(stdout, opt.help_for);
        return 0;
    }
    if (strcmp(opt.command, "version") == 0) {
        printf("cmrscl-run %s (built against %d.%d.%d)\n", cmrscl_version_string(),
               CMRSCL_VERSION_MAJOR, CMRSCL_VERSION_MINOR, CMRSCL_VERSION_PATCH);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
        if (strcmp(opt.command, commands[i].name) == 0)
            return commands[i].run(&opt);
    fprintf(stderr, "cmrscl-run: unknown command '%s' (see cmrscl-run --help)\n", opt.command);
    return EXIT_USAGE;
}
