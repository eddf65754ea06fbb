/* cmd_files.c - `cmrscl-run gen` (write a generated matrix as Matrix Market) and
 * `cmrscl-run parse` (read a file with each --threads count, check that each gives the
 * same matrix, and report the throughput: the benchmark for the Matrix Market reader). */
#include "cli.h"
#include "run_memory.h"

#include <string.h>
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
    int64_t rows, cols, entries; /* sized first: refused before it is built */
    bool sized = cmrscl_csr_generate_size(spec, &rows, &cols, &entries) == CMRSCL_OK;
    int rc = sized ? run_memory_check_csr(spec, rows, cols, entries) : 0;
    if (rc)
        return rc;
    bool said = sized && gen_announce(spec, rows, cols, entries);
    rc = gen_matrix(spec, &a, error, sizeof error);
    if (rc) {
        fprintf(stderr, "cmrscl-run: %s\n", error);
        return rc;
    }
    if (said) /* the text takes longer than the build */
        fprintf(stderr, "cmrscl-run: writing %s...\n", opt->output);
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
        printf("wrote %s: %d x %d, nnz %lld\n", opt->output, a.rows, a.cols, (long long)a.nnz);
    }
    cmrscl_csr_free(&a);
    return st == CMRSCL_OK ? 0 : cli_fail("writing the matrix", st);
}

/* Bit-for-bit equality of two CSR matrices. */
static bool same_csr(const cmrscl_csr *a, const cmrscl_csr *b)
{
    return a->rows == b->rows && a->cols == b->cols && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, sizeof(int64_t) * ((size_t)a->rows + 1)) &&
           !memcmp(a->col_ind, b->col_ind, sizeof(int32_t) * (size_t)a->nnz) &&
           !memcmp(a->values, b->values, sizeof(double) * (size_t)a->nnz);
}

/* Best of the repetitions with `threads` threads (0: all CPUs). */
static int best_read(const cli_options *opt, int threads, cmrscl_csr *a, double *best)
{
    cmrscl_mtx_options mo = {.threads = threads};
    for (int i = 0; i < opt->repetitions; ++i) {
        cmrscl_csr_free(a);
        double t0 = cli_seconds();
        cmrscl_status st = cmrscl_mtx_read(opt->file, &mo, a);
        double t = cli_seconds() - t0;
        if (st != CMRSCL_OK)
            return cli_fail("reading the matrix", st);
        if (i == 0 || t < *best)
            *best = t;
    }
    return 0;
}

int cmd_parse(const cli_options *opt)
{
    if (!opt->file) {
        fputs("cmrscl-run: parse needs a FILE (see cmrscl-run --help)\n", stderr);
        return EXIT_USAGE;
    }
    struct stat sb;
    double mb = stat(opt->file, &sb) == 0 ? (double)sb.st_size / 1e6 : 0.0;
    static const int both[] = {1, 0};
    const int *counts = opt->nthreads ? opt->threads : both;
    int ncounts = opt->nthreads ? opt->nthreads : 2;
    cmrscl_csr first = {0}, a = {0};
    if (opt->json) {
        json_open(NULL, '{');
        json_string("file", opt->file);
        json_number("file_mb", mb);
        json_open("runs", '[');
    }
    int rc = 0;
    double base = 0.0;
    for (int c = 0; c < ncounts && !rc; ++c) {
        double best = 0.0;
        rc = best_read(opt, counts[c], c ? &a : &first, &best);
        if (rc)
            break;
        if (c && !same_csr(&first, &a)) {
            fprintf(stderr, "cmrscl-run: %d threads read a different matrix than %d\n", counts[c],
                    counts[0]);
            rc = EXIT_RUN_FAILED;
            break;
        }
        base = c ? base : best;
        double entries = (double)first.nnz / best / 1e6;
        if (opt->json) {
            json_open(NULL, '{');
            json_int("threads", counts[c]);
            json_number("best_s", best);
            json_number("mb_per_s", mb / best);
            json_number("mentries_per_s", entries);
            json_close('}');
        } else {
            if (c == 0)
                printf("%s: %d x %d, nnz %lld, %.1f MB (best of %d)\n", opt->file, first.rows,
                       first.cols, (long long)first.nnz, mb, opt->repetitions);
            char label[16];
            snprintf(label, sizeof label, counts[c] ? "%d" : "all", counts[c]);
            printf("  threads %-4s %8.3f s %9.1f MB/s %8.1f M entries/s  x%.2f\n", label, best,
                   mb / best, entries, base / best);
        }
    }
    if (opt->json && !rc) {
        json_close(']');
        json_int("rows", first.rows);
        json_int("cols", first.cols);
        json_int("nnz", first.nnz);
        json_close('}');
        json_end();
    }
    cmrscl_csr_free(&first);
    cmrscl_csr_free(&a);
    return rc;
}
