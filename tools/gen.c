/* gen.c - the built-in matrices of cmrscl-run (3-D stencils and random matrices, built
 * straight into canonical CSR) and loading a command's matrix from a file or a spec. */
#include "cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A 7- or 27-point stencil on an n^3 grid, x fastest: the Laplacian-like operator with
 * the centre weight equal to the number of neighbours. Columns come out ascending. */
static int stencil(long n, int points, cmrscl_csr *out, char *error, size_t error_size)
{
    /* Bound n before cubing it: rows and nnz must stay within 32-bit indices. */
    long limit = 1;
    while ((limit + 1) * (limit + 1) * (limit + 1) * points <= INT32_MAX)
        ++limit;
    if (n < 1 || n > limit) {
        snprintf(error, error_size, "stencil grid %ld^3 is outside 1..%ld^3 for %d points", n,
                 limit, points);
        return EXIT_USAGE;
    }
    int64_t rows = (int64_t)n * n * n;
    int64_t cap = rows * points;
    cmrscl_csr a = {(int32_t)rows,
                    (int32_t)rows,
                    0,
                    malloc(sizeof(int32_t) * (size_t)(rows + 1)),
                    malloc(sizeof(int32_t) * (size_t)cap),
                    malloc(sizeof(double) * (size_t)cap)};
    if (!a.row_ptr || !a.col_ind || !a.values) {
        cmrscl_csr_free(&a);
        snprintf(error, error_size, "no memory for a %lld-row stencil", (long long)rows);
        return EXIT_RUN_FAILED;
    }
    int32_t k = 0;
    for (int z = 0; z < n; ++z)
        for (int y = 0; y < n; ++y)
            for (int x = 0; x < n; ++x) {
                a.row_ptr[(x + n * (y + (int64_t)n * z))] = k;
                for (int dz = -1; dz <= 1; ++dz)
                    for (int dy = -1; dy <= 1; ++dy)
                        for (int dx = -1; dx <= 1; ++dx) {
                            int off = (dx != 0) + (dy != 0) + (dz != 0);
                            if ((points == 7 && off > 1) || x + dx < 0 || x + dx >= n ||
                                y + dy < 0 || y + dy >= n || z + dz < 0 || z + dz >= n)
                                continue;
                            a.col_ind[k] = (x + dx) + n * ((y + dy) + n * (z + dz));
                            a.values[k++] = off == 0 ? points - 1.0 : -1.0;
                        }
            }
    a.row_ptr[rows] = a.nnz = k;
    *out = a;
    return 0;
}

/* n x n with about k entries per row (uniform 0..2k), columns uniform; duplicates summed. */
static int random_matrix(long n, long k, cmrscl_csr *out, char *error, size_t error_size)
{
    if (n < 1 || k < 0 || n > INT32_MAX || k > INT32_MAX || n * 2 * k > INT32_MAX) {
        snprintf(error, error_size, "random:%ld:%ld is outside the 32-bit index range", n, k);
        return EXIT_USAGE;
    }
    size_t cap = (size_t)n * 2 * (size_t)k + 1;
    int32_t *ri = malloc(sizeof(int32_t) * cap), *ci = malloc(sizeof(int32_t) * cap);
    double *v = malloc(sizeof(double) * cap);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    int64_t m = 0;
    for (int32_t i = 0; ri && ci && v && i < n; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int len = (int)((s >> 33) % (uint64_t)(2 * k + 1));
        for (int e = 0; e < len; ++e, ++m) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            ri[m] = i;
            ci[m] = (int32_t)((s >> 33) % (uint64_t)n);
            v[m] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
        }
    }
    cmrscl_status st = ri && ci && v ? cmrscl_csr_from_coo(n, n, m, ri, ci, v, out)
                                     : CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    free(ri), free(ci), free(v);
    if (st != CMRSCL_OK)
        snprintf(error, error_size, "random matrix: %s", cmrscl_status_message(st));
    return st == CMRSCL_OK ? 0 : EXIT_RUN_FAILED;
}

/* Reads "N" or "N:K" after a spec's prefix, strictly (no sign games, no overflow). */
static int parse_sizes(const char *text, long *values, int max)
{
    int n = 0;
    while (n < max) {
        char *end;
        errno = 0;
        if (*text < '0' || *text > '9')
            return -1;
        values[n++] = strtol(text, &end, 10);
        if (errno)
            return -1;
        if (*end == '\0')
            return n;
        if (*end != ':')
            return -1;
        text = end + 1;
    }
    return -1;
}

int gen_matrix(const char *spec, cmrscl_csr *out, char *error, size_t error_size)
{
    static const struct {
        const char *prefix;
        int sizes;
    } kinds[] = {{"stencil27:", 1}, {"stencil7:", 1}, {"random:", 2}};
    for (int i = 0; i < 3; ++i) {
        size_t len = strlen(kinds[i].prefix);
        long v[2];
        if (strncmp(spec, kinds[i].prefix, len) != 0)
            continue;
        if (parse_sizes(spec + len, v, 2) != kinds[i].sizes)
            break;
        if (i == 2)
            return random_matrix(v[0], v[1], out, error, error_size);
        return stencil(v[0], i == 0 ? 27 : 7, out, error, error_size);
    }
    snprintf(error, error_size,
             "unknown matrix spec '%s' (expected stencil7:N, stencil27:N or random:N:K)", spec);
    return EXIT_USAGE;
}

/* Progress on a terminal only: "\r" updates would litter logs and pipes. */
static void show_progress(void *user, uint64_t done, uint64_t total)
{
    if (total)
        fprintf(stderr, "\rloading %s: %3d%%", (const char *)user, (int)(100.0 * done / total));
}

int load_matrix(const cli_options *opt, loaded_matrix *out)
{
    memset(out, 0, sizeof *out);
    double t0 = cli_seconds();
    if (opt->file) {
        struct stat st;
        if (stat(opt->file, &st) == 0)
            out->file_mb = (double)st.st_size / 1e6;
        cmrscl_mtx_options mo = {NULL, (void *)opt->file};
        bool tty = isatty(fileno(stderr)) && out->file_mb > 16.0;
        if (tty)
            mo.progress = show_progress;
        cmrscl_status s = cmrscl_mtx_read(opt->file, &mo, &out->csr);
        if (tty)
            fputs("\r\033[K", stderr);
        if (s != CMRSCL_OK)
            return cli_fail("reading the matrix", s);
        snprintf(out->name, sizeof out->name, "%s", opt->file);
    } else {
        const char *spec = opt->gen ? opt->gen : DEFAULT_MATRIX;
        char error[256];
        int rc = gen_matrix(spec, &out->csr, error, sizeof error);
        if (rc) {
            fprintf(stderr, "cmrscl-run: %s\n", error);
            return rc;
        }
        snprintf(out->name, sizeof out->name, "%s", spec);
    }
    out->load_seconds = cli_seconds() - t0;
    return 0;
}
