/* gen.c - generated matrices by spec string, the classes of the paper's test set and
 * beyond: stencils, uniform random rows, permutations, dense, R-MAT power-law graphs,
 * FEM-like block rows, short rows with a few dense ones, graph Laplacians of random geometric
 * graphs, and Kronecker products of two Matrix Market files (large matrices built from real
 * ones). Every class is deterministic
 * for its spec (an optional "@SEED" suffix picks another instance), so a benchmark, its
 * cuSPARSE peer and a test build bit-identical matrices from the same text. */
#include "io/io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* gen's random numbers (io.h, cmrs_gen_next) */
typedef struct rng {
    uint64_t state;
} rng;
static uint64_t rng_next(rng *g) { return cmrs_gen_next(&g->state); }
static double rng_unit(rng *g) { return cmrs_gen_unit(&g->state); } /* [0, 1) */
static uint64_t rng_below(rng *g, uint64_t n) { return (uint64_t)(rng_unit(g) * (double)n); }

/* Rows and columns are 32-bit (the limits below); entries are limited by memory alone. */
static cmrscl_status no_memory(int64_t entries)
{
    return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld entries",
                       (long long)entries);
}

/* Builder for matrices written row by row in canonical order (ascending columns). */
typedef struct rows_builder {
    cmrscl_csr a;
    int64_t cap, n;
} rows_builder;

static cmrscl_status builder_init(rows_builder *b, int64_t rows, int64_t cols, int64_t cap)
{
    memset(b, 0, sizeof *b);
    b->a.rows = (int32_t)rows;
    b->a.cols = (int32_t)cols;
    b->cap = cap;
    b->a.row_ptr = cmrscl_alloc((size_t)rows + 1, sizeof(int64_t));
    b->a.col_ind = cmrs_parallel_alloc((size_t)cap, sizeof(int32_t));
    b->a.values = cmrs_parallel_alloc((size_t)cap, sizeof(double));
    if (!b->a.row_ptr || !b->a.col_ind || !b->a.values) {
        cmrscl_csr_free(&b->a);
        return no_memory(cap);
    }
    b->a.row_ptr[0] = 0;
    return CMRSCL_OK;
}
static void builder_add(rows_builder *b, int64_t col, double v)
{
    b->a.col_ind[b->n] = (int32_t)col;
    b->a.values[b->n++] = v;
}
static void builder_end_row(rows_builder *b, int64_t row) { b->a.row_ptr[row + 1] = b->n; }
static void builder_finish(rows_builder *b, cmrscl_csr *out)
{
    b->a.nnz = b->n;
    *out = b->a;
}

/* Matrices whose rows are functions of their index (stencils, FEM blocks), generated on all
 * host threads: a first pass counts each row's entries, a second writes every row in place,
 * so a matrix of billions of entries takes seconds, and it does not depend on the thread
 * count. The function writes row i's entries in ascending column order (at most max_len)
 * and returns how many. */
typedef int64_t (*row_fn)(const void *shape, int64_t i, int32_t *cols, double *vals);

typedef struct row_generation {
    row_fn fn;
    const void *shape;
    int64_t first, rows, max_len; /* rows first .. first + rows - 1 of the matrix */
    cmrscl_csr *a; /* counting: row_ptr[i + 1] = row i's length; filling: the entries */
    bool fill, out_of_memory;
} row_generation;

static void generate_rows(void *ctx, int thread, int threads)
{
    row_generation *g = ctx;
    int64_t r0, r1;
    cmrs_parallel_range(g->rows, thread, threads, &r0, &r1);
    cmrscl_csr *a = g->a;
    if (g->fill) {
        for (int64_t i = r0; i < r1; ++i)
            g->fn(g->shape, g->first + i, a->col_ind + a->row_ptr[i], a->values + a->row_ptr[i]);
        return;
    }
    int32_t *cols = cmrscl_alloc((size_t)g->max_len, sizeof *cols);
    double *vals = cmrscl_alloc((size_t)g->max_len, sizeof *vals);
    for (int64_t i = r0; cols && vals && i < r1; ++i)
        a->row_ptr[i + 1] = g->fn(g->shape, g->first + i, cols, vals);
    if (!cols || !vals)
        g->out_of_memory = true;
    free(cols), free(vals);
}

/* A range of rows [first, first + count) of a matrix of `rows` rows, clipped to the matrix. */
typedef struct row_range {
    int64_t first, count;
} row_range;

static row_range clip_range(row_range r, int64_t rows)
{
    int64_t first = r.first < rows ? r.first : rows;
    return (row_range){first, r.count < rows - first ? r.count : rows - first};
}

/* The rows r (already clipped) of a matrix with `cols` columns, built by fn. */
static cmrscl_status gen_rows(row_range r, int64_t cols, int64_t max_len, row_fn fn,
                              const void *shape, cmrscl_csr *out)
{
    int64_t rows = r.count;
    cmrscl_csr a = {(int32_t)rows, (int32_t)cols, 0, NULL, NULL, NULL};
    if (!(a.row_ptr = cmrscl_alloc((size_t)rows + 1, sizeof(int64_t))))
        return no_memory(rows);
    row_generation g = {fn, shape, r.first, rows, max_len, &a, false, false};
    int threads = rows * max_len < (1 << 16) ? 1 : cmrs_parallel_threads();
    cmrs_parallel_run(threads, generate_rows, &g);
    a.row_ptr[0] = 0;
    for (int64_t i = 0; !g.out_of_memory && i < rows; ++i)
        a.row_ptr[i + 1] += a.row_ptr[i];
    a.nnz = g.out_of_memory ? 0 : a.row_ptr[rows];
    a.col_ind = cmrs_parallel_alloc((size_t)a.nnz, sizeof(int32_t));
    a.values = cmrs_parallel_alloc((size_t)a.nnz, sizeof(double));
    if (g.out_of_memory || !a.col_ind || !a.values) {
        int64_t wanted = g.out_of_memory ? max_len : a.nnz; /* before the free zeroes a */
        cmrscl_csr_free(&a);
        return no_memory(wanted);
    }
    g.fill = true;
    cmrs_parallel_run(threads, generate_rows, &g);
    *out = a;
    return CMRSCL_OK;
}

/* Builder for matrices generated as coordinates in any order (duplicates summed). */
typedef struct coo_builder {
    int32_t *ri, *ci;
    double *v;
    int64_t n, cap;
} coo_builder;

static cmrscl_status coo_init(coo_builder *c, int64_t cap)
{
    memset(c, 0, sizeof *c);
    c->cap = cap;
    c->ri = cmrs_parallel_alloc((size_t)cap, sizeof(int32_t));
    c->ci = cmrs_parallel_alloc((size_t)cap, sizeof(int32_t));
    c->v = cmrs_parallel_alloc((size_t)cap, sizeof(double));
    if (!c->ri || !c->ci || !c->v) {
        free(c->ri), free(c->ci), free(c->v);
        return no_memory(cap);
    }
    return CMRSCL_OK;
}
static cmrscl_status coo_finish(coo_builder *c, int64_t rows, int64_t cols, cmrscl_csr *out)
{
    cmrscl_status st =
        cmrscl_csr_from_coo((int32_t)rows, (int32_t)cols, c->n, c->ri, c->ci, c->v, out);
    free(c->ri), free(c->ci), free(c->v);
    return st;
}

/* Stencils on an n^dims grid, x fastest: the Laplacian-like operator with the centre
 * weight equal to the number of neighbours; 5 points (2-D), 7 or 27 points (3-D). With
 * convection (convdiff:N), -laplace(u) + b.grad(u) on the unit cube, b = CONVDIFF_VELOCITY
 * (1, 1, 1), upwind, scaled by h^2 (h = 1 / (N + 1)): the centre 3 b h more, each upstream
 * neighbour b h more negative - nonsymmetric, an M-matrix. A velocity fixed on the cube, not
 * per cell: with b h fixed instead, the operator's eigenvectors drift apart as (1 + b h)^N
 * and BiCGStab's residual parted from b - A x from N = 128 on (docs/dev/PERFORMANCE.md, session
 * 25: convdiff:N). */
#define CONVDIFF_VELOCITY 10.0
typedef struct stencil {
    int64_t n, nz;
    int dims, points;
    double convection; /* b h */
} stencil;

static int64_t stencil_row(const void *shape, int64_t i, int32_t *cols, double *vals)
{
    const stencil *s = shape;
    int64_t n = s->n, x = i % n, y = i / n % n, z = i / (n * n), len = 0;
    int dzr = s->dims == 2 ? 0 : 1;
    for (int dz = -dzr; dz <= dzr; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                int off = (dx != 0) + (dy != 0) + (dz != 0);
                if ((s->points != 27 && off > 1) || x + dx < 0 || x + dx >= n || y + dy < 0 ||
                    y + dy >= n || z + dz < 0 || z + dz >= s->nz)
                    continue;
                cols[len] = (int32_t)((x + dx) + n * ((y + dy) + n * (z + dz)));
                vals[len++] = (off == 0 ? s->points - 1.0 + 3 * s->convection : -1.0) -
                              s->convection * (dx + dy + dz < 0);
            }
    return len;
}

/* Row i depends on i alone, so any range of rows is built on its own, the same bit for bit. */
static cmrscl_status gen_stencil(long n, int dims, int points, bool convection, row_range want,
                                 cmrscl_csr *out, int64_t *total)
{
    long limit = 1; /* the largest n whose rows fit 32-bit row indices */
    while ((dims == 2 ? (limit + 1) * (limit + 1) : (limit + 1) * (limit + 1) * (limit + 1)) <=
           INT32_MAX)
        ++limit;
    if (n < 1 || n > limit)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                           "stencil grid %ld^%d is outside 1..%ld^%d (at most %d rows)", n, dims,
                           limit, dims, INT32_MAX);
    stencil s = {n, dims == 2 ? 1 : n, dims, points, convection ? CONVDIFF_VELOCITY / (n + 1) : 0};
    int64_t rows = (int64_t)n * n * s.nz;
    *total = rows;
    return gen_rows(clip_range(want, rows), rows, points, stencil_row, &s, out);
}

/* n x n, row lengths uniform in 0..2k (mean k), columns uniform; duplicates summed. */
static cmrscl_status gen_random(long n, long k, uint64_t seed, cmrscl_csr *out)
{
    if (n < 1 || k < 0 || n > INT32_MAX || k > INT32_MAX / 2)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE, "random:%ld:%ld is outside N 1..%d, K 0..%d", n,
                           k, INT32_MAX, INT32_MAX / 2);
    rng g = {seed};
    coo_builder c;
    cmrscl_status st = coo_init(&c, n * 2 * k + 1);
    for (int64_t i = 0; st == CMRSCL_OK && i < n; ++i) {
        uint64_t len = rng_below(&g, (uint64_t)(2 * k + 1));
        for (uint64_t e = 0; e < len; ++e, ++c.n) {
            c.ri[c.n] = (int32_t)i;
            c.ci[c.n] = (int32_t)rng_below(&g, (uint64_t)n);
            c.v[c.n] = rng_unit(&g) - 0.5;
        }
    }
    return st == CMRSCL_OK ? coo_finish(&c, n, n, out) : st;
}

/* A random permutation of 0..n-1 (Fisher-Yates). */
static int32_t *random_permutation(long n, rng *g)
{
    int32_t *p = cmrscl_alloc((size_t)n, sizeof(int32_t));
    for (long i = 0; p && i < n; ++i)
        p[i] = (int32_t)i;
    for (long i = n - 1; p && i > 0; --i) {
        long j = (long)rng_below(g, (uint64_t)i + 1);
        int32_t t = p[i];
        p[i] = p[j], p[j] = t;
    }
    return p;
}

/* The paper's p7 class: one entry per row and per column, scattered. */
static cmrscl_status gen_perm(long n, uint64_t seed, cmrscl_csr *out)
{
    if (n < 1 || n > INT32_MAX)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE, "perm:%ld is outside 1..%d", n, INT32_MAX);
    rng g = {seed};
    int32_t *p = random_permutation(n, &g);
    rows_builder b;
    cmrscl_status st =
        p ? builder_init(&b, n, n, n)
          : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for perm:%ld", n);
    for (long i = 0; st == CMRSCL_OK && i < n; ++i) {
        builder_add(&b, p[i], 1.0 + rng_unit(&g));
        builder_end_row(&b, i);
    }
    free(p);
    if (st == CMRSCL_OK)
        builder_finish(&b, out);
    return st;
}

/* The paper's dense4 class: every entry of an n x n matrix stored. */
static cmrscl_status gen_dense(long n, uint64_t seed, cmrscl_csr *out)
{
    if (n < 1 || n > INT32_MAX)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE, "dense:%ld is outside 1..%d", n, INT32_MAX);
    rng g = {seed};
    rows_builder b;
    cmrscl_status st = builder_init(&b, n, n, n * n);
    for (long i = 0; st == CMRSCL_OK && i < n; ++i) {
        for (long j = 0; j < n; ++j)
            builder_add(&b, j, rng_unit(&g) - 0.5);
        builder_end_row(&b, i);
    }
    if (st == CMRSCL_OK)
        builder_finish(&b, out);
    return st;
}

/* R-MAT (Chakrabarti et al. 2004) with the Graph500 parameters a, b, c = 0.57, 0.19, 0.19:
 * 2^scale vertices, edge_factor * 2^scale edges, power-law row and column lengths. Vertex
 * labels are permuted as in Graph500, so the hubs are scattered rather than clustered at
 * the first rows. Duplicate edges are summed. */
static cmrscl_status gen_rmat(long scale, long edge_factor, uint64_t seed, cmrscl_csr *out)
{
    if (scale < 1 || scale > 30 || edge_factor < 1 || edge_factor > INT32_MAX)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                           "rmat:%ld:%ld is outside SCALE 1..30, EDGES 1..%d", scale, edge_factor,
                           INT32_MAX);
    long n = 1L << scale, edges = edge_factor << scale;
    rng g = {seed};
    int32_t *p = random_permutation(n, &g);
    coo_builder c;
    cmrscl_status st = p ? coo_init(&c, edges)
                         : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for rmat");
    /* Quadrant thresholds a, a + b, a + b + c in 16-bit fixed point: one 64-bit draw
     * decides four levels. */
    const uint32_t ta = 37356, tab = 49807, tabc = 62259;
    for (long e = 0; st == CMRSCL_OK && e < edges; ++e, ++c.n) {
        uint32_t r = 0, col = 0;
        uint64_t bits = 0;
        for (long level = 0; level < scale; ++level) {
            if (level % 4 == 0)
                bits = rng_next(&g);
            uint32_t u = (uint32_t)(bits & 0xffff);
            bits >>= 16;
            uint32_t down = u >= tab, right = (u >= ta && u < tab) || u >= tabc;
            r = r << 1 | down;
            col = col << 1 | right;
        }
        c.ri[c.n] = p[r];
        c.ci[c.n] = p[col];
        c.v[c.n] = rng_unit(&g) - 0.5;
    }
    free(p);
    return st == CMRSCL_OK ? coo_finish(&c, n, n, out) : st;
}

/* FEM-like block rows: a 27-point stencil on n^3 nodes with b unknowns per node, so each
 * row holds up to 27 dense blocks of b entries (mu about 27 b), diagonally dominant. */
typedef struct fem {
    int64_t n, bs;
} fem;

static int64_t fem_row(const void *shape, int64_t i, int32_t *cols, double *vals)
{
    const fem *f = shape;
    int64_t n = f->n, bs = f->bs, node = i / bs, a = i % bs, len = 0;
    int64_t x = node % n, y = node / n % n, z = node / (n * n);
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                if (x + dx < 0 || x + dx >= n || y + dy < 0 || y + dy >= n || z + dz < 0 ||
                    z + dz >= n)
                    continue;
                int64_t other = (x + dx) + n * ((y + dy) + n * (z + dz));
                bool self = dx == 0 && dy == 0 && dz == 0;
                for (int64_t c = 0; c < bs; ++c, ++len) {
                    cols[len] = (int32_t)(other * bs + c);
                    vals[len] =
                        self && c == a ? 27.0 * (double)bs : -1.0 / (double)(1 + labs(c - a));
                }
            }
    return len;
}

static cmrscl_status gen_elastic(long n, row_range want, cmrscl_csr *out, int64_t *total)
{
    if (n < 1 || n > 1200 || 3 * (int64_t)(n + 1) * (n + 1) * (n + 1) > INT32_MAX)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                           "elastic:%ld is outside N 1..1200, 3 (N + 1)^3 <= %d rows", n,
                           INT32_MAX);
    cmrs_elastic shape;
    cmrs_gen_elastic_init(n, &shape);
    int64_t rows = 3 * (int64_t)(n + 1) * (n + 1) * (n + 1);
    *total = rows;
    return gen_rows(clip_range(want, rows), rows, 81, cmrs_gen_elastic_row, &shape, out);
}

static cmrscl_status gen_fem(long n, long bs, row_range want, cmrscl_csr *out, int64_t *total)
{
    if (n < 1 || bs < 1 || n > 2048 || bs > 64 || (int64_t)n * n * n * bs > INT32_MAX)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                           "fem:%ld:%ld is outside N 1..2048, B 1..64, N^3 B <= %d rows", n, bs,
                           INT32_MAX);
    fem f = {n, bs};
    int64_t rows = (int64_t)n * n * n * bs;
    *total = rows;
    return gen_rows(clip_range(want, rows), rows, 27 * (int64_t)bs, fem_row, &f, out);
}

/* Mostly short rows (uniform 0..2k) plus d rows of len entries each, evenly spread: the
 * "a few very long rows among short ones" class that balances badly. */
static cmrscl_status gen_skewed(long n, long k, long d, long len, uint64_t seed, cmrscl_csr *out)
{
    /* k below 2^29: the capacity n (2k + 1) + d len stays below 2^63 */
    if (n < 1 || k < 0 || d < 0 || d > n || len < 0 || len > n || n > INT32_MAX || k >= 1 << 29)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                           "skewed:%ld:%ld:%ld:%ld is outside N 1..%d, K 0..2^29, D and LEN 0..N",
                           n, k, d, len, INT32_MAX);
    rng g = {seed};
    coo_builder c;
    cmrscl_status st = coo_init(&c, n * (2 * k + 1) + d * len + 1);
    long stride = d ? n / d : 0;
    for (int64_t i = 0; st == CMRSCL_OK && i < n; ++i) {
        bool dense = d && i % stride == stride / 2 && i / stride < d;
        uint64_t count = dense ? (uint64_t)len : rng_below(&g, (uint64_t)(2 * k + 1));
        uint64_t offset = rng_below(&g, (uint64_t)n);
        for (uint64_t e = 0; e < count; ++e, ++c.n) {
            c.ri[c.n] = (int32_t)i;
            /* a dense row's columns are distinct: evenly spaced from a random offset */
            c.ci[c.n] = (int32_t)(dense ? (offset + e * (uint64_t)n / (uint64_t)len) % (uint64_t)n
                                        : rng_below(&g, (uint64_t)n));
            c.v[c.n] = rng_unit(&g) - 0.5;
        }
    }
    return st == CMRSCL_OK ? coo_finish(&c, n, n, out) : st;
}

/* The Kronecker product A (x) B of two Matrix Market files: row i*rb + k holds a_ij b_kl at
 * column j*cb + l, so each factor's structure repeats at the other's scale - large matrices
 * with the rows of real ones (the held-out matrices of docs/dev/PERFORMANCE.md). Canonical
 * factors (sorted, duplicates summed, as cmrscl_mtx_read gives them) give canonical rows. */
typedef struct kron {
    cmrscl_csr a, b;
} kron;

static int64_t kron_row(const void *shape, int64_t i, int32_t *cols, double *vals)
{
    const kron *k = shape;
    int64_t ia = i / k->b.rows, ib = i % k->b.rows, len = 0;
    for (int64_t p = k->a.row_ptr[ia]; p < k->a.row_ptr[ia + 1]; ++p)
        for (int64_t q = k->b.row_ptr[ib]; q < k->b.row_ptr[ib + 1]; ++q, ++len) {
            cols[len] = (int32_t)((int64_t)k->a.col_ind[p] * k->b.cols + k->b.col_ind[q]);
            vals[len] = k->a.values[p] * k->b.values[q];
        }
    return len;
}

static bool names_mtx(const char *begin, const char *end)
{
    size_t n = (size_t)(end - begin);
    return (n > 4 && !strncmp(end - 4, ".mtx", 4)) || (n > 7 && !strncmp(end - 7, ".mtx.gz", 7));
}

/* files: "A.mtx:B.mtx" (either may end in .mtx.gz); split after the first factor's suffix. */
static cmrscl_status gen_kron(const char *files, row_range want, cmrscl_csr *out, int64_t *total)
{
    const char *colon = files;
    while ((colon = strchr(colon, ':')) && !names_mtx(files, colon))
        ++colon;
    if (!colon || !names_mtx(colon + 1, colon + strlen(colon)))
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "kron:%s: expected two Matrix Market files, kron:A.mtx:B.mtx", files);
    char first[4096];
    snprintf(first, sizeof first, "%.*s", (int)(colon - files), files);
    kron k = {{0}, {0}};
    cmrscl_status st = cmrscl_mtx_read(first, NULL, &k.a);
    if (st == CMRSCL_OK)
        st = cmrscl_mtx_read(colon + 1, NULL, &k.b);
    int64_t rows = (int64_t)k.a.rows * k.b.rows, cols = (int64_t)k.a.cols * k.b.cols;
    if (st == CMRSCL_OK && (rows > INT32_MAX || cols > INT32_MAX))
        st = cmrscl_fail(CMRSCL_ERROR_TOO_LARGE,
                         "kron:%s is %lld x %lld: more than %d rows or columns", files,
                         (long long)rows, (long long)cols, INT32_MAX);
    if (st == CMRSCL_OK) {
        *total = rows;
        st = gen_rows(clip_range(want, rows), cols,
                      cmrs_csr_longest_row(k.a.rows, k.a.row_ptr) *
                          cmrs_csr_longest_row(k.b.rows, k.b.row_ptr),
                      kron_row, &k, out);
    }
    cmrscl_csr_free(&k.a);
    cmrscl_csr_free(&k.b);
    return st;
}

/* The rows [r.first, r.first + r.count) of a whole matrix, which is freed. */
static cmrscl_status keep_rows(cmrscl_csr *whole, row_range want, cmrscl_csr *out, int64_t *total)
{
    row_range r = clip_range(want, whole->rows);
    *total = whole->rows;
    if (r.first == 0 && r.count == whole->rows) {
        *out = *whole;
        return CMRSCL_OK;
    }
    int32_t first = (int32_t)r.first, count = (int32_t)r.count;
    int64_t base = whole->row_ptr[first], nnz = whole->row_ptr[first + count] - base;
    cmrscl_csr a = {count,
                    whole->cols,
                    nnz,
                    cmrscl_alloc((size_t)count + 1, sizeof(int64_t)),
                    cmrscl_alloc((size_t)nnz, sizeof(int32_t)),
                    cmrscl_alloc((size_t)nnz, sizeof(double))};
    cmrscl_status st = CMRSCL_OK;
    if (!a.row_ptr || !a.col_ind || !a.values) {
        cmrscl_csr_free(&a);
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d rows", count);
    } else {
        for (int32_t i = 0; i <= count; ++i)
            a.row_ptr[i] = whole->row_ptr[first + i] - base;
        memcpy(a.col_ind, whole->col_ind + base, sizeof(int32_t) * (size_t)nnz);
        memcpy(a.values, whole->values + base, sizeof(double) * (size_t)nnz);
        *out = a;
    }
    cmrscl_csr_free(whole);
    return st;
}

/* The random classes draw their rows from one sequence: they build the whole matrix. */
static cmrscl_status gen_whole(int cls, const long *v, uint64_t seed, cmrscl_csr *out)
{
    switch (cls) {
    case 3: return gen_random(v[0], v[1], seed, out);
    case 4: return gen_perm(v[0], seed, out);
    case 5: return gen_dense(v[0], seed, out);
    case 6: return gen_rmat(v[0], v[1], seed, out);
    case 10: return cmrs_gen_geo(v[0], v[1], seed, out);
    default: return gen_skewed(v[0], v[1], v[2], v[3], seed, out);
    }
}

cmrscl_status cmrscl_csr_generate(const char *spec, cmrscl_csr *out)
{
    return cmrscl_csr_generate_rows(spec, 0, INT64_MAX, out, NULL);
}

cmrscl_status cmrscl_csr_generate_rows(const char *spec, int64_t first_row, int64_t row_count,
                                       cmrscl_csr *out, int64_t *total_rows)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (total_rows)
        *total_rows = 0;
    if (!spec || !out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "spec or out is NULL");
    if (first_row < 0 || row_count < 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "rows %lld + %lld: negative",
                           (long long)first_row, (long long)row_count);
    row_range want = {first_row, row_count};
    int64_t total = 0;
    cmrscl_status st;
    if (!strncmp(spec, "kron:", 5)) {
        st = gen_kron(spec + 5, want, out, &total);
    } else if (!strncmp(spec, "lap:", 4)) { /* the whole pattern, for its transpose */
        cmrscl_csr pattern = {0}, whole = {0};
        st = cmrscl_csr_generate(spec + 4, &pattern);
        if (st == CMRSCL_OK)
            st = cmrs_gen_laplacian(&pattern, &whole);
        cmrscl_csr_free(&pattern);
        if (st == CMRSCL_OK)
            st = keep_rows(&whole, want, out, &total);
    } else {
        int cls = 0;
        long v[4];
        uint64_t seed;
        if ((st = cmrs_gen_parse_spec(spec, &cls, v, &seed)) != CMRSCL_OK)
            return st;
        cmrscl_csr whole = {0};
        switch (cls) {
        case 0: st = gen_stencil(v[0], 2, 5, false, want, out, &total); break;
        case 1: st = gen_stencil(v[0], 3, 7, false, want, out, &total); break;
        case 2: st = gen_stencil(v[0], 3, 27, false, want, out, &total); break;
        case 9: st = gen_stencil(v[0], 3, 7, true, want, out, &total); break;
        case 7: st = gen_fem(v[0], v[1], want, out, &total); break;
        case 11: st = gen_elastic(v[0], want, out, &total); break;
        default:
            st = gen_whole(cls, v, seed, &whole);
            if (st == CMRSCL_OK)
                st = keep_rows(&whole, want, out, &total);
        }
    }
    if (st == CMRSCL_OK && total_rows)
        *total_rows = total;
    return st;
}
