/* test_amg_setup.c - the host AMG hierarchy (issue 57) on generated matrices: Galerkin
 * operators symmetric, tentative prolongators that partition the rows with unit columns,
 * shrinking levels, complexities recomputed here, a second setup (on 3 threads) bit for bit the
 * same, the sparse product against a dense one and the same bits on any threads, AMG-preconditioned
 * CG converging in few iterations (far fewer than plain CG), Chebyshev's coefficients against
 * the polynomial they make, and bad input refused with a message that names it.
 * test_amg_setup [SPEC...]   with specs: only print each one's hierarchy and
 * iterations (python/benchmarks/compare_pyamg.py reads that line) */
#include "precond/precond.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |a_ij - a_ji| <= tol max|a| for every entry (a canonical CSR: look a_ji up by search). */
static double asymmetry(const cmrscl_csr *a)
{
    double worst = 0, biggest = 0;
    for (int32_t i = 0; i < a->rows; ++i)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
            int32_t j = a->col_ind[k];
            double other = 0;
            for (int64_t m = a->row_ptr[j]; m < a->row_ptr[j + 1]; ++m)
                if (a->col_ind[m] == i)
                    other = a->values[m];
            worst = fmax(worst, fabs(a->values[k] - other));
            biggest = fmax(biggest, fabs(a->values[k]));
        }
    return biggest > 0 ? worst / biggest : 0;
}

static void check_tentative(const cmrscl_csr *t, const char *what, int l)
{
    double *norm2 = calloc((size_t)t->cols, sizeof(double));
    for (int32_t i = 0; i < t->rows; ++i) {
        CHECK_MSG(t->row_ptr[i + 1] - t->row_ptr[i] == 1, "%s level %d: T row %d has %lld entries",
                  what, l, (int)i, (long long)(t->row_ptr[i + 1] - t->row_ptr[i]));
        for (int64_t k = t->row_ptr[i]; k < t->row_ptr[i + 1]; ++k)
            norm2[t->col_ind[k]] += t->values[k] * t->values[k];
    }
    for (int32_t c = 0; c < t->cols; ++c)
        CHECK_MSG(fabs(norm2[c] - 1) < 1e-14, "%s level %d: T column %d has norm^2 %.17g", what, l,
                  (int)c, norm2[c]);
    free(norm2);
}

/* T_l reproduces level l's near-null candidate from the next level's (fit_candidates: B_l =
 * T_l B_(l+1)), the constant on level 0: so T_0 T_1 ... keeps level 0's constant exactly. */
static void check_candidates(const cmrs_amg_hierarchy *h, const char *what)
{
    for (int l = 0; l + 1 < h->levels; ++l) {
        const cmrs_amg_level *lv = &h->level[l];
        const double *coarse = h->level[l + 1].near_null;
        double worst = 0;
        for (int32_t i = 0; i < lv->T.rows; ++i) {
            double tb = 0, want = lv->near_null ? lv->near_null[i] : 1.0;
            for (int64_t k = lv->T.row_ptr[i]; k < lv->T.row_ptr[i + 1]; ++k)
                tb += lv->T.values[k] * (coarse ? coarse[lv->T.col_ind[k]] : 1.0);
            worst = fmax(worst, fabs(tb - want) / fabs(want));
        }
        CHECK_MSG(coarse && worst < 1e-14, "%s level %d: T B_(l+1) differs from B_l by %.3g", what,
                  l, worst);
    }
}

static bool same_csr(const cmrscl_csr *a, const cmrscl_csr *b)
{
    return a->rows == b->rows && a->cols == b->cols && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, ((size_t)a->rows + 1) * sizeof(int64_t)) &&
           !memcmp(a->col_ind, b->col_ind, (size_t)a->nnz * sizeof(int32_t)) &&
           !memcmp(a->values, b->values, (size_t)a->nnz * sizeof(double));
}

static void check_hierarchy(const cmrscl_csr *a, const cmrs_amg_hierarchy *h, const char *what)
{
    double entries = 0, rows = 0;
    for (int l = 0; l < h->levels; ++l) {
        const cmrs_amg_level *lv = &h->level[l];
        entries += (double)lv->A.nnz;
        rows += (double)lv->A.rows;
        double asym = asymmetry(&lv->A);
        CHECK_MSG(asym < 1e-12, "%s level %d: A asymmetric by %g", what, l, asym);
        if (l + 1 == h->levels)
            break;
        CHECK_MSG(h->level[l + 1].A.rows < lv->A.rows, "%s: level %d has %d rows, level %d %d",
                  what, l + 1, (int)h->level[l + 1].A.rows, l, (int)lv->A.rows);
        CHECK(lv->P.rows == lv->A.rows && lv->P.cols == h->level[l + 1].A.rows);
        CHECK(lv->R.rows == lv->P.cols && lv->R.nnz == lv->P.nnz);
        check_tentative(&lv->T, what, l);
    }
    CHECK_MSG(fabs(h->operator_complexity - entries / (double)a->nnz) < 1e-15,
              "%s: operator complexity %.17g, summed here %.17g", what, h->operator_complexity,
              entries / (double)a->nnz);
    CHECK(fabs(h->grid_complexity - rows / (double)a->rows) < 1e-15);
    CHECK_MSG(h->coarse_rows <= 500 || h->levels == 10, "%s: coarsest level %d rows", what,
              (int)h->coarse_rows);
}

/* A rows x cols matrix of random entries, row i holding 1 + i % longest of them (repeats
 * merged away: canonical CSR), values in [-1, 1]. */
static cmrscl_csr random_sparse(int32_t rows, int32_t cols, int longest)
{
    cmrscl_csr a = {rows,
                    cols,
                    0,
                    malloc(sizeof(int64_t) * ((size_t)rows + 1)),
                    malloc(sizeof(int32_t) * (size_t)rows * longest),
                    malloc(sizeof(double) * (size_t)rows * longest)};
    char *seen = calloc((size_t)cols, 1);
    a.row_ptr[0] = 0;
    for (int32_t i = 0; i < rows; ++i) {
        int64_t begin = a.nnz;
        for (int e = 0; e <= i % longest; ++e) {
            int32_t j = (int32_t)(test_uniform(0, 1) * cols) % cols;
            if (seen[j])
                continue;
            seen[j] = 1;
            int64_t k = a.nnz++; /* kept ascending */
            for (; k > begin && a.col_ind[k - 1] > j; --k)
                a.col_ind[k] = a.col_ind[k - 1], a.values[k] = a.values[k - 1];
            a.col_ind[k] = j, a.values[k] = test_uniform(-1, 1);
        }
        for (int64_t k = begin; k < a.nnz; ++k)
            seen[a.col_ind[k]] = 0;
        a.row_ptr[i + 1] = a.nnz;
    }
    free(seen);
    return a;
}

/* The sparse product against a dense one, on rows short and long (past INSERTION_ROW),
 * canonical CSR with every nonzero of the dense one, the same bits on 1, 2, 3 and 7 threads
 * (rows enough for 7: the product takes a thread for each 1024 rows at most); and the
 * product given up where asked. */
static void test_products(void)
{
    test_seed(57);
    cmrscl_csr a = random_sparse(7200, 400, 9), b = random_sparse(400, 350, 60);
    double *dense = calloc((size_t)a.rows * b.cols, sizeof(double));
    for (int32_t i = 0; i < a.rows; ++i)
        for (int64_t ka = a.row_ptr[i]; ka < a.row_ptr[i + 1]; ++ka)
            for (int64_t kb = b.row_ptr[a.col_ind[ka]]; kb < b.row_ptr[a.col_ind[ka] + 1]; ++kb)
                dense[(size_t)i * b.cols + b.col_ind[kb]] += a.values[ka] * b.values[kb];
    const char *saved = getenv("CMRSCL_THREADS");
    char *keep = saved ? strdup(saved) : NULL;
    const char *counts[] = {"1", "2", "3", "7"};
    cmrscl_csr first = {0};
    for (int n = 0; n < 4; ++n) {
        setenv("CMRSCL_THREADS", counts[n], 1);
        cmrscl_csr c;
        CHECK_OK(cmrs_amg_spgemm(&a, &b, &c));
        double worst = 0;
        int64_t stored = 0, found = 0, bad_order = 0;
        for (int32_t i = 0; i < c.rows; ++i)
            for (int64_t k = c.row_ptr[i]; k < c.row_ptr[i + 1]; ++k) {
                double want = dense[(size_t)i * b.cols + c.col_ind[k]];
                bad_order += k > c.row_ptr[i] && c.col_ind[k] <= c.col_ind[k - 1];
                worst = fmax(worst, fabs(c.values[k] - want));
                found += want != 0;
            }
        for (size_t e = 0; e < (size_t)a.rows * b.cols; ++e)
            stored += dense[e] != 0;
        CHECK_MSG(c.rows == a.rows && c.cols == b.cols && !bad_order && worst < 1e-13 &&
                      found == stored,
                  "product on %s threads: %lld entries, %lld of the dense one's %lld nonzeros, "
                  "%lld out of order, worst difference %g",
                  counts[n], (long long)c.nnz, (long long)found, (long long)stored,
                  (long long)bad_order, worst);
        if (n == 0) {
            first = c;
            continue;
        }
        bool same = c.nnz == first.nnz &&
                    !memcmp(c.row_ptr, first.row_ptr, sizeof(int64_t) * ((size_t)c.rows + 1)) &&
                    !memcmp(c.col_ind, first.col_ind, sizeof(int32_t) * (size_t)c.nnz) &&
                    !memcmp(c.values, first.values, sizeof(double) * (size_t)c.nnz);
        CHECK_MSG(same, "product on %s threads differs from one thread's", counts[n]);
        cmrscl_csr_free(&c);
    }
    if (keep)
        setenv("CMRSCL_THREADS", keep, 1);
    else
        unsetenv("CMRSCL_THREADS");
    free(keep);
    /* given up once unwanted (the host's A T, the device's rho in first): nothing made */
    atomic_bool stop;
    bool stopped = false;
    for (int wanted = 0; wanted < 2; ++wanted) {
        cmrscl_csr c;
        atomic_init(&stop, !wanted);
        CHECK_OK(cmrs_amg_spgemm_unless(&a, &b, &c, &stop, &stopped));
        bool same = c.nnz == first.nnz && c.row_ptr &&
                    !memcmp(c.col_ind, first.col_ind, sizeof(int32_t) * (size_t)c.nnz) &&
                    !memcmp(c.values, first.values, sizeof(double) * (size_t)c.nnz);
        CHECK_MSG(wanted ? !stopped && same : stopped && !c.row_ptr && c.nnz == 0,
                  "the product %s: stopped %d, %lld entries", wanted ? "wanted" : "given up",
                  (int)stopped, (long long)c.nnz);
        cmrscl_csr_free(&c);
    }
    cmrscl_csr_free(&first), cmrscl_csr_free(&a), cmrscl_csr_free(&b);
    free(dense);
}

/* Iterations of CG to rtol 1e-8 on b = A * ones from x = 0, with and without AMG. */
static void iterations(const cmrscl_csr *a, const cmrs_amg_hierarchy *h, int *amg, int *plain)
{
    double *ones = malloc((size_t)a->rows * sizeof(double));
    double *b = malloc((size_t)a->rows * sizeof(double));
    double *x = calloc((size_t)a->rows, sizeof(double));
    for (int32_t i = 0; i < a->rows; ++i)
        ones[i] = 1.0 + (double)(i % 7) / 7.0; /* not constant, so not in the near-null space */
    cmrscl_csr_spmv(a, 1.0, ones, 0.0, b);
    double relres = 0;
    CHECK_OK(cmrs_amg_pcg(a, h, b, x, 1e-8, 500, amg, &relres));
    CHECK_MSG(relres <= 1e-8, "AMG PCG stopped at relative residual %g", relres);
    memset(x, 0, (size_t)a->rows * sizeof(double));
    CHECK_OK(cmrs_amg_pcg(a, NULL, b, x, 1e-8, 5000, plain, NULL));
    free(ones);
    free(b);
    free(x);
}

static void report(const char *spec, const cmrs_amg_options *o, int *amg_iterations)
{
    cmrscl_csr a = {0};
    cmrs_amg_hierarchy h = {0};
    CHECK_OK(cmrscl_csr_generate(spec, &a));
    CHECK_OK(cmrs_amg_setup(&a, o, &h));
    int amg = 0, plain = 0;
    iterations(&a, &h, &amg, &plain);
    printf("%s: %s levels %d rows", spec, o->smooth ? "SA" : "plain", h.levels);
    for (int l = 0; l < h.levels; ++l)
        printf(" %d", (int)h.level[l].A.rows);
    printf(" nnz");
    for (int l = 0; l < h.levels; ++l)
        printf(" %lld", (long long)h.level[l].A.nnz);
    printf(" oc %.4f gc %.4f pcg %d cg %d setup %.4f s (strength %.4f aggregation %.4f P %.4f "
           "RAP %.4f coarse %.4f)\n",
           h.operator_complexity, h.grid_complexity, amg, plain, h.times.total, h.times.strength,
           h.times.aggregation, h.times.prolongator, h.times.rap, h.times.coarse_inverse);
    if (amg_iterations)
        *amg_iterations = amg;
    cmrs_amg_free(&h);
    cmrscl_csr_free(&a);
}

static void test_matrix(const char *spec, int max_iterations)
{
    cmrscl_csr a = {0};
    cmrs_amg_hierarchy h = {0}, again = {0};
    CHECK_OK(cmrscl_csr_generate(spec, &a));
    CHECK_OK(cmrs_amg_setup(&a, NULL, &h));
    /* again on 3 host threads (the Galerkin products take rows in ranges a thread) */
    const char *threads = getenv("CMRSCL_THREADS");
    char *saved = threads ? strdup(threads) : NULL;
    setenv("CMRSCL_THREADS", "3", 1);
    CHECK_OK(cmrs_amg_setup(&a, NULL, &again));
    if (saved)
        setenv("CMRSCL_THREADS", saved, 1), free(saved);
    else
        unsetenv("CMRSCL_THREADS");
    check_hierarchy(&a, &h, spec);
    check_candidates(&h, spec);
    CHECK(h.levels >= 2 && again.levels == h.levels);
    for (int l = 0; l < h.levels && l < again.levels; ++l) {
        CHECK_MSG(same_csr(&h.level[l].A, &again.level[l].A), "%s: level %d differs", spec, l);
        if (l + 1 < h.levels)
            CHECK_MSG(same_csr(&h.level[l].P, &again.level[l].P), "%s: P %d differs", spec, l);
    }
    int amg = 0, plain = 0;
    iterations(&a, &h, &amg, &plain);
    printf("%s: %d levels, operator complexity %.3f, PCG %d iterations, CG %d\n", spec, h.levels,
           h.operator_complexity, amg, plain);
    CHECK_MSG(amg <= max_iterations, "%s: AMG PCG took %d iterations (at most %d)", spec, amg,
              max_iterations);
    CHECK_MSG(2 * amg < plain, "%s: AMG PCG %d iterations, plain CG %d", spec, amg, plain);
    cmrs_amg_free(&h);
    cmrs_amg_free(&again);
    cmrscl_csr_free(&a);
}

/* The 1-D Laplacian tridiag(lower, 2, upper) of n rows (canonical CSR, malloc'ed). */
static cmrscl_csr tridiagonal(int32_t n, double lower, double upper)
{
    cmrscl_csr a = {n,
                    n,
                    3 * (int64_t)n - 2,
                    malloc(((size_t)n + 1) * sizeof(int64_t)),
                    malloc((3 * (size_t)n) * sizeof(int32_t)),
                    malloc(3 * (size_t)n * sizeof(double))};
    int64_t k = 0;
    for (int32_t i = 0; i < n; ++i) {
        a.row_ptr[i] = k;
        if (i > 0)
            a.col_ind[k] = i - 1, a.values[k++] = lower;
        a.col_ind[k] = i, a.values[k++] = 2;
        if (i + 1 < n)
            a.col_ind[k] = i + 1, a.values[k++] = upper;
    }
    a.row_ptr[n] = k;
    return a;
}

/* rho(D^-1 A) estimated from below and close: on the 1-D Laplacian, whose top eigenvalues
 * cluster (1 + cos(pi k / (n + 1))) - the power method's 15 steps stop 1.7% short there -
 * within 0.5% and never above; a nonsymmetric matrix is told apart (it takes the power
 * method). On Trefethen_2000, where a short estimate made the Chebyshev cycle indefinite, CG
 * with the Chebyshev(3) cycle converges. */
static void test_spectral_radius(void)
{
    cmrscl_csr a = tridiagonal(1000, -1, -1);
    cmrs_amg_hierarchy h = {0};
    CHECK_OK(cmrs_amg_setup(&a, NULL, &h));
    double exact = 1 + cos(acos(-1.0) / 1001), rho = h.levels ? h.level[0].rho : 0;
    printf("1-D Laplacian (1000 rows): rho estimate %.9f, exact %.9f\n", rho, exact);
    CHECK(h.symmetric);
    CHECK_MSG(rho <= exact * (1 + 1e-12) && rho >= 0.995 * exact, "rho %.9f, exact %.9f", rho,
              exact);
    cmrs_amg_free(&h);
    a.values[1] = -1.5; /* a_01 */
    CHECK_OK(cmrs_amg_setup(&a, NULL, &h));
    CHECK(!h.symmetric);
    cmrs_amg_free(&h);
    a.values[1] = -1, a.values[2] = -1.5; /* a_10, below the diagonal */
    CHECK_OK(cmrs_amg_setup(&a, NULL, &h));
    CHECK(!h.symmetric);
    cmrs_amg_free(&h);
    cmrscl_csr_free(&a);
    /* [[2, 0], [-1, 2]]: an entry whose mirror is not stored at all */
    int64_t rp[] = {0, 1, 3};
    int32_t ci[] = {0, 0, 1};
    double one_sided[] = {2, -1, 2};
    a = (cmrscl_csr){2, 2, 3, rp, ci, one_sided};
    CHECK_OK(cmrs_amg_setup(&a, NULL, &h));
    CHECK_MSG(!h.symmetric, "a lower entry without its mirror was taken as symmetric");
    cmrs_amg_free(&h);

    cmrs_amg_options o;
    cmrs_amg_options_default(&o);
    o.degree = 3;
    a = (cmrscl_csr){0};
    CHECK_OK(cmrscl_mtx_read(test_shared_matrix("Trefethen_2000.mtx"), NULL, &a));
    CHECK_OK(cmrs_amg_setup(&a, &o, &h));
    double *b = malloc((size_t)a.rows * sizeof(double)),
           *x = calloc((size_t)a.rows, sizeof(double));
    for (int32_t i = 0; i < a.rows; ++i)
        b[i] = 1;
    int its = 0;
    double relres = 1;
    CHECK_OK(cmrs_amg_pcg(&a, &h, b, x, 1e-8, 100, &its, &relres));
    printf("Trefethen_2000, Chebyshev(3) cycle: rho %.6f, PCG %d iterations to %.2e\n",
           h.level[0].rho, its, relres);
    CHECK_MSG(relres <= 1e-8, "Trefethen_2000: PCG with Chebyshev(3) stopped at %g", relres);
    free(b), free(x);
    cmrs_amg_free(&h);
    cmrscl_csr_free(&a);
}

/* 3-D elasticity (elastic:N) with the six rigid-body modes and nodes of 3 unknowns: a node's
 * x, y, z share an aggregate; T's columns on each aggregate are orthonormal and T B_(l+1)
 * reproduces every candidate B_l; level 1 holds up to six unknowns an aggregate, nodes of
 * them; PCG needs at most half the iterations of the constant vector's hierarchy, within 25%
 * of PyAMG's on the same settings (elastic:10: 18, python/tests/test_amg_pyamg.py). */
static void test_rigid_body(void)
{
    const int n = 10, m = n + 1, nodes = m * m * m;
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate("elastic:10", &a));
    double *xyz = malloc(sizeof(double) * 3 * (size_t)nodes);
    double *modes = malloc(sizeof(double) * 6 * (size_t)a.rows);
    for (int p = 0; p < nodes; ++p)
        xyz[3 * p] = p % m, xyz[3 * p + 1] = p / m % m, xyz[3 * p + 2] = p / (m * m);
    CHECK_OK(cmrscl_rigid_body_modes(nodes, xyz, modes));
    cmrs_amg_options o;
    cmrs_amg_options_default(&o);
    o.near_null_count = 6, o.near_null = modes, o.block_size = 3;
    cmrs_amg_hierarchy h = {0}, constant = {0};
    CHECK_OK(cmrs_amg_setup(&a, &o, &h));
    for (int l = 0; l + 1 < h.levels; ++l) {
        const cmrs_amg_level *lv = &h.level[l];
        const double *fine = lv->near_null, *coarse = h.level[l + 1].near_null;
        int32_t rows = lv->T.rows, crows = lv->T.cols;
        /* a node's unknowns together */
        for (int32_t d = 0; lv->node_ptr && d < lv->nodes; ++d)
            for (int64_t i = lv->node_ptr[d] + 1; i < lv->node_ptr[d + 1]; ++i)
                CHECK_MSG(lv->aggregate[i] == lv->aggregate[lv->node_ptr[d]],
                          "elastic level %d: node %d's unknowns in aggregates %d and %d", l, (int)d,
                          (int)lv->aggregate[lv->node_ptr[d]], (int)lv->aggregate[i]);
        /* T^T T = I on each aggregate: a row's entries are its aggregate's columns, the
         * first of them its first column */
        double *gram = calloc((size_t)crows * 6 + 1, sizeof(double)), worst_gram = 0;
        double worst_fit = 0;
        int32_t *first = malloc(sizeof(int32_t) * ((size_t)crows + 1));
        for (int32_t i = 0; i < rows; ++i)
            for (int64_t k = lv->T.row_ptr[i]; k < lv->T.row_ptr[i + 1]; ++k) {
                int32_t c0 = lv->T.col_ind[lv->T.row_ptr[i]], c = lv->T.col_ind[k];
                first[c] = c0;
                for (int64_t q = lv->T.row_ptr[i]; q < lv->T.row_ptr[i + 1]; ++q)
                    gram[(size_t)c * 6 + (size_t)(lv->T.col_ind[q] - c0)] +=
                        lv->T.values[k] * lv->T.values[q];
            }
        for (int32_t c = 0; c < crows; ++c)
            for (int32_t j = 0; j < 6; ++j)
                worst_gram = fmax(worst_gram, fabs(gram[(size_t)c * 6 + (size_t)j] -
                                                   (c - first[c] == j ? 1.0 : 0.0)));
        free(first);
        /* B_l = T B_(l+1), every candidate */
        for (int j = 0; j < 6; ++j)
            for (int32_t i = 0; i < rows; ++i) {
                if (lv->aggregate[i] < 0)
                    continue;
                double tb = 0, want = fine[(size_t)j * (size_t)rows + (size_t)i];
                for (int64_t k = lv->T.row_ptr[i]; k < lv->T.row_ptr[i + 1]; ++k)
                    tb += lv->T.values[k] *
                          coarse[(size_t)j * (size_t)crows + (size_t)lv->T.col_ind[k]];
                worst_fit = fmax(worst_fit, fabs(tb - want) / (1 + fabs(want)));
            }
        CHECK_MSG(worst_gram < 1e-12 && worst_fit < 1e-12,
                  "elastic level %d: T^T T - I %.3g, T B_(l+1) - B_l %.3g", l, worst_gram,
                  worst_fit);
        CHECK_MSG(crows <= 6 * (h.level[l + 1].nodes) && h.level[l + 1].nodes > 0,
                  "elastic level %d: %d coarse unknowns on %d nodes", l, (int)crows,
                  (int)h.level[l + 1].nodes);
        free(gram);
    }
    /* set up again on the same aggregates (a values update): the same hierarchy */
    cmrs_amg_aggregates g = {0};
    cmrs_amg_hierarchy again = {0};
    CHECK_OK(cmrs_amg_take_aggregates(&h, &g));
    CHECK_OK(cmrs_amg_setup_again(&a, &o, &g, &again));
    CHECK_MSG(again.levels == h.levels, "elastic again: %d levels, %d before", again.levels,
              h.levels);
    for (int l = 0; l < h.levels && l < again.levels; ++l)
        CHECK_MSG(again.level[l].A.rows == h.level[l].A.rows &&
                      again.level[l].A.nnz == h.level[l].A.nnz &&
                      (l == 0 || !memcmp(again.level[l].A.values, h.level[l].A.values,
                                         sizeof(double) * (size_t)h.level[l].A.nnz)),
                  "elastic again: level %d differs", l);
    cmrs_amg_free(&again);
    cmrs_amg_aggregates_free(&g);
    CHECK_OK(cmrs_amg_setup(&a, NULL, &constant));
    int rbm = 0, scalar = 0, plain = 0;
    iterations(&a, &h, &rbm, &plain);
    iterations(&a, &constant, &scalar, &plain);
    printf("elastic:10: PCG %d iterations with the rigid-body modes, %d with the constant, CG %d "
           "(levels %d, level 1 %d rows)\n",
           rbm, scalar, plain, h.levels, h.levels > 1 ? (int)h.level[1].A.rows : 0);
    CHECK_MSG(rbm > 0 && 2 * rbm <= scalar, "elastic:10: %d iterations with the modes, %d without",
              rbm, scalar);
    cmrs_amg_free(&h);
    cmrs_amg_free(&constant);
    /* a candidate zero on some aggregates: their columns dropped, the coarse level smaller
     * than the aggregates are many - and set up again on them all the same */
    cmrscl_csr poisson;
    CHECK_OK(cmrscl_csr_generate("stencil5:40", &poisson));
    double *partly = malloc(sizeof(double) * (size_t)poisson.rows);
    for (int32_t i = 0; i < poisson.rows; ++i)
        partly[i] = i < 200 ? 0.0 : 1.0;
    cmrs_amg_options po;
    cmrs_amg_options_default(&po);
    po.near_null = partly;
    cmrs_amg_hierarchy ph = {0}, pa = {0};
    CHECK_OK(cmrs_amg_setup(&poisson, &po, &ph));
    int32_t dropped_rows = ph.levels > 1 ? ph.level[1].A.rows : -1;
    CHECK_MSG(ph.levels > 1 && ph.level[0].aggregates > dropped_rows,
              "stencil5:40, b zero on 200 rows: %d aggregates, %d coarse rows",
              ph.levels > 1 ? (int)ph.level[0].aggregates : -1, (int)dropped_rows);
    cmrs_amg_aggregates pg = {0};
    CHECK_OK(cmrs_amg_take_aggregates(&ph, &pg));
    CHECK_OK(cmrs_amg_setup_again(&poisson, &po, &pg, &pa));
    CHECK_MSG(pa.levels > 1 && pa.level[1].A.rows == dropped_rows,
              "stencil5:40 again: %d coarse rows, %d before",
              pa.levels > 1 ? pa.level[1].A.rows : -1, (int)dropped_rows);
    cmrs_amg_free(&pa), cmrs_amg_free(&ph);
    cmrs_amg_aggregates_free(&pg);
    free(partly);
    cmrscl_csr_free(&poisson);
    /* the rows must be whole nodes */
    o.block_size = 7;
    CHECK_STATUS(cmrs_amg_setup(&a, &o, &h), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(test_contains(cmrscl_last_error(), "not whole nodes of 7"), "%s",
              cmrscl_last_error());
    free(xyz), free(modes);
    cmrscl_csr_free(&a);
}

/* Chebyshev's coefficients (cmrs_amg_chebyshev) against the polynomial they must make: on
 * an eigenvector of D^-1 A with eigenvalue lambda, k steps d = c1 d + c2 (b - lambda x),
 * x += d from x = 0 leave the error T_k((theta - lambda) / delta) / T_k(theta / delta) of it,
 * [theta - delta, theta + delta] the bounds [1.1 rho / 30, 1.1 rho] (Saad, Algorithm 12.1).
 * The device and host cycles share these coefficients: only this checks them. */
static void test_chebyshev(void)
{
    const double rho = 1.7, upper = 1.1 * rho, lower = upper / 30;
    const double theta = (upper + lower) / 2, delta = (upper - lower) / 2;
    for (int k = 1; k <= 5; ++k)
        for (int i = 0; i <= 10; ++i) {
            double lambda = lower + (upper - lower) * i / 10, x = 0, d = 0;
            for (int step = 0; step < k; ++step) {
                double c1, c2;
                cmrs_amg_chebyshev(rho, step, &c1, &c2);
                d = (step ? c1 * d : 0) + c2 * (lambda - lambda * x); /* b = lambda: x* = 1 */
                x += d;
            }
            double z = (theta - lambda) / delta, s = theta / delta;
            double tz0 = 1, tz = z, ts0 = 1, ts = s; /* T_1 */
            for (int j = 1; j < k; ++j) {
                double nz = 2 * z * tz - tz0, ns = 2 * s * ts - ts0;
                tz0 = tz, tz = nz, ts0 = ts, ts = ns;
            }
            double want = tz / ts, got = 1 - x;
            CHECK_MSG(fabs(got - want) <= 1e-12,
                      "Chebyshev, %d steps, lambda %g: error %.15g, the polynomial's %.15g", k,
                      lambda, got, want);
        }
}

static void test_bad_input(void)
{
    int64_t rp[] = {0, 1, 2};
    int32_t ci[] = {0, 1};
    double zero_diag[] = {2, 0}, negative[] = {2, -1};
    cmrs_amg_hierarchy h = {0};
    cmrscl_csr a = {2, 2, 2, rp, ci, zero_diag};
    CHECK_STATUS(cmrs_amg_setup(&a, NULL, &h), CMRSCL_ERROR_INVALID_MATRIX);
    CHECK_MSG(test_contains(cmrscl_last_error(), "a(1,1) = 0"), "%s", cmrscl_last_error());
    a.values = negative;
    CHECK_STATUS(cmrs_amg_setup(&a, NULL, &h), CMRSCL_ERROR_INVALID_MATRIX);
    CHECK_MSG(test_contains(cmrscl_last_error(), "negative"), "%s", cmrscl_last_error());
    cmrscl_csr rect = {0};
    CHECK_OK(cmrscl_csr_generate("random:50:3", &rect));
    rect.cols = 60;
    CHECK_STATUS(cmrs_amg_setup(&rect, NULL, &h), CMRSCL_ERROR_INVALID_MATRIX);
    CHECK_MSG(test_contains(cmrscl_last_error(), "square matrix, not 50 x 60"), "%s",
              cmrscl_last_error());
    cmrscl_csr_free(&rect);
    CHECK(h.levels == 0 && h.level == NULL);
}

/* A hierarchy that stops coarsening above max_coarse would end in a dense inverse of
 * thousands of rows (minutes, gigabytes): refused at once past AMG_DENSE_ROWS (2048), with
 * the reason; below it, inverted. */
static void test_coarsening_stopped(void)
{
    cmrscl_csr a = {0}, small = {0}, big = {0};
    CHECK_OK(cmrscl_csr_generate("stencil27:14", &a));     /* 2,744 rows, couplings 1/26 */
    CHECK_OK(cmrscl_csr_generate("stencil27:10", &small)); /* 1,000 rows */
    CHECK_OK(cmrscl_csr_generate("stencil7:40", &big));    /* 64,000 rows: level 1 ~ 8,000 */
    cmrs_amg_options o;
    cmrs_amg_options_default(&o);
    o.theta = 0.08; /* no coupling strong: every row isolated, no aggregate */
    cmrs_amg_hierarchy h = {0};
    double t = cmrscl_seconds();
    CHECK_STATUS(cmrs_amg_setup(&a, &o, &h), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(test_contains(cmrscl_last_error(), "coarsening stopped at 2744 rows") &&
                  test_contains(cmrscl_last_error(), "no coupling is strong at theta 0.08") &&
                  test_contains(cmrscl_last_error(), "lower theta"),
              "%s", cmrscl_last_error());
    CHECK_MSG(cmrscl_seconds() - t < 5, "refused after %.1f s", cmrscl_seconds() - t);
    CHECK(h.levels == 0 && h.level == NULL);
    /* above max_coarse (500) but within the dense limit: one level, inverted */
    CHECK_OK(cmrs_amg_setup(&small, &o, &h));
    CHECK_MSG(h.levels == 1 && h.coarse_rows == 1000, "levels %d, coarsest %d rows", h.levels,
              (int)h.coarse_rows);
    cmrs_amg_free(&h);
    cmrs_amg_options_default(&o);
    o.max_levels = 2;
    CHECK_STATUS(cmrs_amg_setup(&big, &o, &h), CMRSCL_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(test_contains(cmrscl_last_error(), "the last of max_levels 2 (allow more levels)"),
              "%s", cmrscl_last_error());
    CHECK(h.levels == 0 && h.level == NULL);
    cmrscl_csr_free(&a), cmrscl_csr_free(&small), cmrscl_csr_free(&big);
}

int main(int argc, char **argv)
{
    cmrs_amg_options o;
    cmrs_amg_options_default(&o);
    if (argc > 1) {
        for (int i = 1; i < argc; ++i)
            report(argv[i], &o, NULL);
        return test_finish("amg_setup report");
    }
    test_matrix("stencil5:64", 20);
    test_matrix("stencil7:16", 20);
    test_matrix("stencil27:12", 20);
    o.smooth = false; /* plain aggregation: converges, more slowly */
    int plain_aggregation = 0;
    report("stencil5:64", &o, &plain_aggregation);
    CHECK(plain_aggregation > 0 && plain_aggregation < 200);
    test_spectral_radius();
    test_chebyshev();
    test_products();
    test_rigid_body();
    test_bad_input();
    test_coarsening_stopped();
    return test_finish("amg_setup");
}
