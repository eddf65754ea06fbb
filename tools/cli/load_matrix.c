/* load_matrix.c - loading a command's matrix: a Matrix Market file, or a generated matrix from a
 * spec (cmrscl_csr_generate in the library, so the cuSPARSE peer builds the same ones). */
#include "cli.h"
#include "run_memory.h"
#include "suite.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Entries past which generating takes long enough (seconds on a CPU's threads) to announce. */
#define GEN_SAYS_ENTRIES 20000000

bool gen_announce(const char *spec, int64_t rows, int64_t cols, int64_t entries)
{
    if (entries <= GEN_SAYS_ENTRIES || !isatty(fileno(stderr)))
        return false;
    fprintf(stderr, "cmrscl-run: generating %s: %lld x %lld, about %lld entries...\n", spec,
            (long long)rows, (long long)cols, (long long)entries);
    return true;
}

int gen_matrix(const char *spec, cmrscl_csr *out, char *error, size_t error_size)
{
    cmrscl_status st = cmrscl_csr_generate(spec, out);
    if (st == CMRSCL_OK)
        return 0;
    snprintf(error, error_size, "%s", cmrscl_last_error());
    /* A spec the generator refuses is the user's mistake; running out of memory is not. */
    return st == CMRSCL_ERROR_INVALID_ARGUMENT || st == CMRSCL_ERROR_TOO_LARGE ? EXIT_USAGE
                                                                               : EXIT_RUN_FAILED;
}

/* Progress on a terminal only: "\r" updates would litter logs and pipes. */
static void show_progress(void *user, uint64_t done, uint64_t total)
{
    if (total)
        fprintf(stderr, "\rloading %s: %3d%%", (const char *)user, (int)(100.0 * done / total));
}

int load_input(const char *input, bool is_gen, int threads, const run_memory *check,
               loaded_matrix *out)
{
    memset(out, 0, sizeof *out);
    /* Named the way the peer tool names it, so their rows match. */
    suite_matrix_name(input, !is_gen, out->name, sizeof out->name);
    double t0 = cli_seconds();
    if (!is_gen && check) { /* the size line first: nothing read or allocated yet */
        int32_t rows, cols;
        int64_t entries;
        cmrscl_status s = cmrscl_mtx_read_size(input, &rows, &cols, &entries);
        if (s != CMRSCL_OK)
            return cli_fail("reading the matrix", s);
        int rc = run_memory_check(check, out->name, rows, cols, entries, true);
        if (rc)
            return rc;
    }
    if (!is_gen) {
        struct stat st;
        if (stat(input, &st) == 0)
            out->file_mb = (double)st.st_size / 1e6;
        cmrscl_mtx_options mo = {.user = (void *)input, .threads = threads};
        bool tty = isatty(fileno(stderr)) && out->file_mb > 16.0;
        if (tty)
            mo.progress = show_progress;
        cmrscl_status s = cmrscl_mtx_read(input, &mo, &out->csr);
        if (tty)
            fputs("\r\033[K", stderr);
        if (s != CMRSCL_OK)
            return cli_fail("reading the matrix", s);
    } else {
        char error[512];
        int64_t rows = 0, cols = 0, entries = 0; /* the spec sized first: nothing built yet */
        int rc = check && cmrscl_csr_generate_size(input, &rows, &cols, &entries) == CMRSCL_OK
                     ? run_memory_check(check, out->name, rows, cols, entries, false)
                     : 0;
        if (rc)
            return rc;
        if (check)
            gen_announce(input, rows, cols, entries);
        if ((rc = gen_matrix(input, &out->csr, error, sizeof error)) != 0) {
            fprintf(stderr, "cmrscl-run: generating %s: %s\n", input, error);
            return rc;
        }
        const cmrscl_csr *a = &out->csr;
        if (check && (rc = run_memory_check(check, out->name, a->rows, a->cols, a->nnz, false))) {
            cmrscl_csr_free(&out->csr);
            return rc;
        }
    }
    out->load_seconds = cli_seconds() - t0;
    return 0;
}

int load_matrix(const cli_options *opt, const run_memory *check, loaded_matrix *out)
{
    int threads = opt->nthreads ? opt->threads[0] : 0;
    if (opt->file)
        return load_input(opt->file, false, threads, check, out);
    return load_input(opt->gen ? opt->gen : DEFAULT_MATRIX, true, threads, check, out);
}

int open_with_matrix(const cli_options *opt, cmrscl_context *ctx, cmrscl_device_info *dev,
                     loaded_matrix *lm)
{
    int rc = cli_open_device(opt, ctx, dev);
    if (rc)
        return rc;
    run_memory check = {opt->precision, opt->verify, dev};
    rc = load_matrix(opt, &check, lm);
    if (rc)
        cmrscl_context_free(*ctx), *ctx = NULL;
    return rc;
}
