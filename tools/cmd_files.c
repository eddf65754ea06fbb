/* cmd_files.c - `cmrscl-run gen` (write a generated matrix as Matrix Market) and
 * `cmrscl-run parse` (read a file and report the parse throughput: the benchmark for
 * the Matrix Market reader). */
#include "cli.h"

#include <sys/stat.h>

int cmd_gen(const cli_options *opt)
{
    const char *spec = opt->gen ? opt->gen : opt->file;
    if (!spec || !opt->output) {
        fputs("cmrscl-run: gen needs a SPEC and --output FILE (see cmrscl-run --help)\n", stderr);
        return EXIT_USAGE;
    }
    cmrscl_csr a;
    char error[256];
    int rc = gen_matrix(spec, &a, error, sizeof error);
    if (rc) {
        fprintf(stderr, "cmrscl-run: %s\n", error);
        return rc;
    }
    cmrscl_status st = cmrscl_mtx_write(opt->output, &a);
    if (st == CMRSCL_OK && opt->json) {
        json_open(NULL, '{');
        json_string("file", opt->output);
        json_string("spec", spec);
        json_int("rows", a.rows);
        json_int("cols", a.cols);
        json_int("nnz", a.nnz);
        json_close('}');
        json_end();
    } else if (st == CMRSCL_OK) {
        printf("wrote %s: %d x %d, nnz %d\n", opt->output, a.rows, a.cols, a.nnz);
    }
    cmrscl_csr_free(&a);
    return st == CMRSCL_OK ? 0 : cli_fail("writing the matrix", st);
}

int cmd_parse(const cli_options *opt)
{
    if (!opt->file) {
        fputs("cmrscl-run: parse needs a FILE (see cmrscl-run --help)\n", stderr);
        return EXIT_USAGE;
    }
    struct stat sb;
    double mb = stat(opt->file, &sb) == 0 ? (double)sb.st_size / 1e6 : 0.0;
    double best = 0.0;
    cmrscl_csr a = {0};
    for (int i = 0; i < opt->repetitions; ++i) {
        cmrscl_csr_free(&a);
        double t0 = cli_seconds();
        cmrscl_status st = cmrscl_mtx_read(opt->file, NULL, &a);
        double t = cli_seconds() - t0;
        if (st != CMRSCL_OK)
            return cli_fail("reading the matrix", st);
        if (i == 0 || t < best)
            best = t;
    }
    if (opt->json) {
        json_open(NULL, '{');
        json_string("file", opt->file);
        json_number("file_mb", mb);
        json_int("rows", a.rows);
        json_int("cols", a.cols);
        json_int("nnz", a.nnz);
        json_number("best_s", best);
        json_number("mb_per_s", mb / best);
        json_close('}');
        json_end();
    } else {
        printf("%s: %d x %d, nnz %d; %.1f MB in %.3f s: %.1f MB/s (best of %d)\n", opt->file,
               a.rows, a.cols, a.nnz, mb, best, mb / best, opt->repetitions);
    }
    cmrscl_csr_free(&a);
    return 0;
}
