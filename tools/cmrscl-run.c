/* cmrscl-run - the command-line tool: list devices, run, verify, benchmark and tune CMRS
 * SpMV on a Matrix Market file or a built-in generated matrix. `cmrscl-run --help`. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double cli_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int cli_fail(const char *what, cmrscl_status status)
{
    fprintf(stderr, "cmrscl-run: %s: %s: %s\n", what, cmrscl_status_name(status),
            *cmrscl_last_error() ? cmrscl_last_error() : cmrscl_status_message(status));
    return EXIT_RUN_FAILED;
}

int main(int argc, char **argv)
{
    cli_options opt;
    if (!cli_parse(argc, argv, &opt))
        return EXIT_USAGE;
    static const struct {
        const char *name;
        int (*run)(const cli_options *);
    } commands[] = {{"devices", cmd_devices}, {"spmv", cmd_spmv},           {"tune", cmd_tune},
                    {"bench", cmd_bench},     {"bandwidth", cmd_bandwidth}, {"gen", cmd_gen},
                    {"parse", cmd_parse},     {"setup", cmd_setup}};
    if (strcmp(opt.command, "help") == 0) {
        cli_usage(stdout);
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
