/* test_amg_aggregate.c - AMG's aggregation (host/precond/amg_aggregate.c, issue 57): PyAMG's
 * standard aggregation as written here, one pass after another, on a level of one block; on
 * levels cut into blocks (AGGREGATE_BLOCK_ROWS, lowered by CMRSCL_AMG_AGGREGATE_ROWS) aggregates
 * that are whole neighbourhoods, the same on any number of threads; and, on a matrix all of
 * whose couplings are strong, that matrix in place of the strength's pattern: the same
 * aggregates, and the shortcut refused where a coupling is weak. */
#include "precond/precond.h"
#include "test_matrices.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Aggregation on a itself (every coupling strong: theta 0, no zero stored off the diagonal)
 * gives the aggregates of the strength's pattern, and that shortcut is refused where a coupling
 * is weak: theta > 0, or a zero stored off the diagonal (a row made isolated by it, the case
 * where the two differ). Matrices: stencils, a nonsymmetric pattern, a graph, and a stencil
 * with a row of its diagonal alone and a row of its diagonal and one neighbour. */
static void test_all_strong(void)
{
    const char *specs[] = {"stencil5:20",   "stencil27:8", "convdiff:16",
                           "random:3000:5", "geo:3000:6",  "stencil5:9"};
    for (int m = 0; m < 6; ++m) {
        cmrscl_csr a, s;
        CHECK_OK(cmrscl_csr_generate(specs[m], &a));
        if (m == 5) { /* row 40: its diagonal alone; row 41: the diagonal and row 42 */
            for (int32_t r = 40; r <= 41; ++r)
                for (int64_t k = a.row_ptr[r]; k < a.row_ptr[r + 1]; ++k)
                    if (a.col_ind[k] != r && (r == 40 || a.col_ind[k] != 42))
                        a.values[k] = 0;
            CHECK(!cmrs_amg_all_strong(&a, 0)); /* zeros stored: then dropped from a */
            double *d = NULL;
            bool zeros = false;
            CHECK_OK(cmrs_amg_inverse_diagonal(&a, 0, &d, &zeros));
            CHECK_MSG(zeros, "%s: the diagonal's pass missed the zeros stored", specs[m]);
            free(d);
            int64_t kept = 0;
            for (int32_t r = 0; r < a.rows; ++r) {
                int64_t begin = a.row_ptr[r];
                a.row_ptr[r] = kept;
                for (int64_t k = begin; k < a.row_ptr[r + 1]; ++k)
                    if (a.values[k] != 0 || a.col_ind[k] == r)
                        a.col_ind[kept] = a.col_ind[k], a.values[kept++] = a.values[k];
            }
            a.row_ptr[a.rows] = a.nnz = kept;
        }
        CHECK_MSG(cmrs_amg_all_strong(&a, 0) && !cmrs_amg_all_strong(&a, 0.01),
                  "%s: every coupling strong at theta 0 and not at 0.01", specs[m]);
        double *d = NULL;
        bool zeros = true;
        if (m != 3) /* (random:3000:5 has rows without a diagonal, which the pass refuses) */
            CHECK_OK(cmrs_amg_inverse_diagonal(&a, 0, &d, &zeros));
        CHECK_MSG(m == 3 || !zeros, "%s: the diagonal's pass found zeros where none are stored",
                  specs[m]);
        free(d);
        CHECK_OK(cmrs_amg_strength(&a, 0, &s));
        int32_t *want = malloc(sizeof(int32_t) * (size_t)a.rows),
                *got = malloc(sizeof(int32_t) * (size_t)a.rows), nw = 0, ng = 0;
        CHECK_OK(cmrs_amg_aggregate(&s, want, &nw));
        CHECK_OK(cmrs_amg_aggregate(&a, got, &ng));
        CHECK_MSG(nw == ng && !memcmp(want, got, sizeof(int32_t) * (size_t)a.rows),
                  "%s: %d aggregates on the matrix, %d on its strength", specs[m], ng, nw);
        free(want), free(got);
        cmrscl_csr_free(&s), cmrscl_csr_free(&a);
    }
}

/* PyAMG's standard_aggregation, written from its definition: three passes in the order of the
 * rows, aggregates numbered as they are rooted; a row without neighbours marked in pass 1 (no
 * longer free: a later row with it as a neighbour roots nothing) and -1 at the end. */
static int32_t reference_aggregates(const cmrscl_csr *s, int32_t *agg, int32_t *pass3)
{
    enum { FREE = -2, ALONE = -3 };
    int32_t n = 0, rows = s->rows;
    bool *pass1 = calloc((size_t)rows, sizeof(bool));
    for (int32_t i = 0; i < rows; ++i)
        agg[i] = FREE;
    for (int32_t i = 0; i < rows; ++i) {
        bool neighbours = false, free_all = true;
        for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k)
            if (s->col_ind[k] != i)
                neighbours = true, free_all &= agg[s->col_ind[k]] == FREE;
        if (agg[i] != FREE || (neighbours && !free_all))
            continue;
        if (!neighbours) {
            agg[i] = ALONE;
            continue;
        }
        agg[i] = n, pass1[i] = true;
        for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k)
            agg[s->col_ind[k]] = n, pass1[s->col_ind[k]] = true;
        ++n;
    }
    int32_t *joined = malloc(sizeof(int32_t) * (size_t)rows);
    memcpy(joined, agg, sizeof(int32_t) * (size_t)rows);
    for (int32_t i = 0; i < rows; ++i)
        for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1] && joined[i] == FREE; ++k)
            if (pass1[s->col_ind[k]])
                joined[i] = agg[s->col_ind[k]];
    memcpy(agg, joined, sizeof(int32_t) * (size_t)rows);
    *pass3 = n;
    for (int32_t i = 0; i < rows; ++i) {
        if (agg[i] != FREE)
            continue;
        agg[i] = n;
        for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k)
            if (agg[s->col_ind[k]] == FREE)
                agg[s->col_ind[k]] = n;
        ++n;
    }
    for (int32_t i = 0; i < rows; ++i)
        agg[i] = agg[i] == ALONE ? -1 : agg[i];
    free(pass1), free(joined);
    *pass3 = n - *pass3;
    return n;
}

/* What aggregates of a symmetric pattern s must be however the rows were cut: a row without
 * neighbours in none, every other row in one of 0..count-1, each used; every row of an
 * aggregate of two or more rows beside another of its rows; and every aggregate holding a row
 * with all its neighbours - pass 1 leaves no row whose neighbours are all free, so on a
 * symmetric pattern every row left joins a root's aggregate in pass 2 and pass 3 roots none. */
static void check_aggregates(const char *what, const cmrscl_csr *s, const int32_t *agg,
                             int32_t count)
{
    int32_t *size = calloc((size_t)count + 1, sizeof(int32_t));
    bool *holds = calloc((size_t)count + 1, sizeof(bool));
    int32_t bad = -1;
    for (int32_t i = 0; i < s->rows && bad < 0; ++i) {
        bool neighbours = false;
        for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k)
            neighbours |= s->col_ind[k] != i;
        if (neighbours ? agg[i] < 0 || agg[i] >= count : agg[i] != -1)
            bad = i;
        else if (agg[i] >= 0)
            ++size[agg[i]];
    }
    CHECK_MSG(bad < 0, "%s: row %d in aggregate %d of %d", what, (int)bad,
              bad < 0 ? 0 : (int)agg[bad], (int)count);
    int32_t unused = 0, whole_count = 0;
    for (int32_t g = 0; g < count; ++g)
        unused += size[g] == 0;
    for (int32_t i = 0; i < s->rows && bad < 0; ++i) {
        if (agg[i] < 0)
            continue;
        bool beside = size[agg[i]] == 1, all = true;
        for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k) {
            bool same = agg[s->col_ind[k]] == agg[i];
            beside |= same && s->col_ind[k] != i, all &= same;
        }
        if (!beside)
            bad = i;
        holds[agg[i]] |= all;
    }
    for (int32_t g = 0; g < count; ++g)
        whole_count += holds[g];
    CHECK_MSG(unused == 0 && bad < 0,
              "%s: %d aggregates of %d empty; row %d beside none of its "
              "aggregate's rows",
              what, (int)unused, (int)count, (int)bad);
    CHECK_MSG(whole_count == count, "%s: %d of %d aggregates hold a row with all its neighbours",
              what, (int)whole_count, (int)count);
    free(size), free(holds);
}

/* The caller's CMRSCL_THREADS, kept while a test sets its own, and put back. */
static char *threads_kept(void)
{
    const char *saved = getenv("CMRSCL_THREADS");
    return saved ? strdup(saved) : NULL;
}

static void threads_restore(char *keep)
{
    if (keep)
        setenv("CMRSCL_THREADS", keep, 1);
    else
        unsetenv("CMRSCL_THREADS");
    free(keep);
}

/* One block (rows up to AGGREGATE_BLOCK_ROWS): PyAMG's aggregates, number for number (and on
 * the nonsymmetric pattern, some of them pass 3's). Cut into blocks of 97 rows to half the
 * rows and one: whole, valid aggregates, within 25% as many as one block's, the same on 1, 2
 * and 7 threads. */
static void test_blocks(void)
{
    const char *specs[] = {"stencil7:20",   "stencil27:12", "geo:6000:8",
                           "lap:rmat:12:8", "fem:12:3",     "random:3000:5"};
    int64_t block_rows[] = {97, 1000, 4000, 0}; /* 0: half the rows and one */
    char *keep = threads_kept();
    for (int m = 0; m < 6; ++m) {
        cmrscl_csr a, s;
        const bool symmetric = m < 5; /* random: a pattern that is not, where pass 3 roots */
        CHECK_OK(cmrscl_csr_generate(specs[m], &a));
        CHECK_OK(cmrs_amg_strength(&a, 0, &s));
        size_t bytes = sizeof(int32_t) * (size_t)a.rows;
        int32_t *want = malloc(bytes), *got = malloc(bytes), *again = malloc(bytes), nw, ng, na;
        int32_t pass3 = 0;
        nw = reference_aggregates(&s, want, &pass3);
        CHECK_MSG(symmetric ? pass3 == 0 : pass3 > 0, "%s: %d of PyAMG's aggregates from pass 3",
                  specs[m], (int)pass3);
        unsetenv("CMRSCL_AMG_AGGREGATE_ROWS");
        CHECK_OK(cmrs_amg_aggregate(&s, got, &ng));
        CHECK_MSG(ng == nw && !memcmp(want, got, bytes),
                  "%s, one block: %d aggregates, PyAMG's "
                  "definition %d",
                  specs[m], (int)ng, (int)nw);
        if (symmetric)
            check_aggregates(specs[m], &s, got, ng);
        for (int b = 0; b < 4; ++b) {
            char what[96], rows[24];
            snprintf(rows, sizeof rows, "%lld",
                     (long long)(block_rows[b] ? block_rows[b] : a.rows / 2 + 1));
            snprintf(what, sizeof what, "%s in blocks of %s rows", specs[m], rows);
            setenv("CMRSCL_AMG_AGGREGATE_ROWS", rows, 1);
            setenv("CMRSCL_THREADS", "1", 1);
            CHECK_OK(cmrs_amg_aggregate(&s, got, &ng));
            if (symmetric)
                check_aggregates(what, &s, got, ng);
            CHECK_MSG(ng <= 1.25 * nw && ng >= 0.75 * nw, "%s: %d aggregates, one block's %d", what,
                      (int)ng, (int)nw);
            for (int t = 0; t < 2; ++t) {
                setenv("CMRSCL_THREADS", t ? "7" : "2", 1);
                CHECK_OK(cmrs_amg_aggregate(&s, again, &na));
                CHECK_MSG(na == ng && !memcmp(again, got, bytes),
                          "%s: other aggregates on %s threads than on one", what, t ? "7" : "2");
            }
        }
        unsetenv("CMRSCL_AMG_AGGREGATE_ROWS");
        free(want), free(got), free(again);
        cmrscl_csr_free(&s), cmrscl_csr_free(&a);
    }
    threads_restore(keep);
}

/* The spread check's counts against a count written here (every 16th row's entries, and the
 * distinct aggregates among them, by a stamp a row), on rows short and long (an R-MAT graph's
 * hubs: past the short rows' way of counting), on 1 and 3 threads. */
static void test_spread_counts(void)
{
    const char *specs[] = {"stencil7:20", "lap:rmat:12:8", "random:3000:5"};
    char *keep = threads_kept();
    for (int m = 0; m < 3; ++m) {
        cmrscl_csr a, s;
        CHECK_OK(cmrscl_csr_generate(specs[m], &a));
        CHECK_OK(cmrs_amg_strength(&a, 0, &s));
        int32_t *agg = malloc(sizeof(int32_t) * (size_t)a.rows), n = 0;
        CHECK_OK(cmrs_amg_aggregate(&s, agg, &n));
        int32_t *seen = malloc(sizeof(int32_t) * (size_t)n);
        for (int32_t g = 0; g < n; ++g)
            seen[g] = -1;
        int64_t entries = 0, touched = 0, longest = 0;
        for (int32_t i = 0; i < a.rows; i += 16) {
            int64_t len = a.row_ptr[i + 1] - a.row_ptr[i];
            longest = len > longest ? len : longest;
            for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k, ++entries) {
                int32_t g = agg[a.col_ind[k]];
                if (g >= 0 && seen[g] != i)
                    seen[g] = i, ++touched;
            }
        }
        for (int t = 0; t < 2; ++t) {
            setenv("CMRSCL_THREADS", t ? "3" : "1", 1);
            int64_t e = -1, c = -1;
            CHECK_MSG(cmrs_amg_spread_counts(&a, agg, n, &e, &c) && e == entries && c == touched,
                      "%s on %s threads: %lld entries, %lld aggregates touched; counted here %lld, "
                      "%lld (its longest sampled row %lld)",
                      specs[m], t ? "3" : "1", (long long)e, (long long)c, (long long)entries,
                      (long long)touched, (long long)longest);
        }
        if (m == 1)
            CHECK_MSG(longest > 64,
                      "%s: its longest sampled row of %lld entries takes the long "
                      "rows' way",
                      specs[m], (long long)longest);
        free(agg), free(seen);
        cmrscl_csr_free(&s), cmrscl_csr_free(&a);
    }
    threads_restore(keep);
}

/* The matrix of the nodes (cmrs_amg_amalgamate) against its definition written here: entry
 * (m, n) the Frobenius norm of A's block of node m's rows and node n's columns, where any is
 * stored - each block's squares added row by row, entry by entry, as the library adds them, so
 * the same bits - on nodes of 1 to 4 rows (and elasticity's of 3, also with every row's columns
 * in descending order), on 1 and 3 threads. */
static void test_nodes(void)
{
    const char *specs[] = {"random:3000:9", "elastic:6", "lap:rmat:11:8", "elastic:5"};
    char *keep = threads_kept();
    for (int m = 0; m < 4; ++m) {
        cmrscl_csr a, got;
        CHECK_OK(cmrscl_csr_generate(specs[m], &a));
        if (m == 3) /* each row's columns in descending order: CSR allows any order */
            test_csr_reverse_rows(&a);
        int64_t *node_ptr = malloc(sizeof(int64_t) * ((size_t)a.rows + 1));
        int32_t nodes = 0;
        for (int64_t i = 0; i < a.rows; ++nodes) /* elastic: 3 a node; else 1, 2, 3, 4, ... */
            node_ptr[nodes] = i, i += m % 2 ? 3 : 1 + nodes % 4;
        node_ptr[nodes] = a.rows;
        int32_t *node_of = malloc(sizeof(int32_t) * (size_t)a.rows);
        for (int32_t n = 0; n < nodes; ++n)
            for (int64_t i = node_ptr[n]; i < node_ptr[n + 1]; ++i)
                node_of[i] = n;
        double *sum = calloc((size_t)nodes, sizeof(double));
        char *stored = calloc((size_t)nodes, 1);
        for (int t = 0; t < 2; ++t) {
            setenv("CMRSCL_THREADS", t ? "3" : "1", 1);
            CHECK_OK(cmrs_amg_amalgamate(&a, node_ptr, nodes, &got));
            int64_t bad = -1, entries = 0;
            for (int32_t n = 0; n < nodes && bad < 0; ++n) {
                for (int64_t i = node_ptr[n]; i < node_ptr[n + 1]; ++i)
                    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
                        sum[node_of[a.col_ind[k]]] += a.values[k] * a.values[k];
                        stored[node_of[a.col_ind[k]]] = 1;
                    }
                int64_t e = got.row_ptr[n];
                for (int32_t c = 0; c < nodes; ++c) {
                    if (!stored[c])
                        continue;
                    if (e >= got.row_ptr[n + 1] || got.col_ind[e] != c ||
                        got.values[e] != sqrt(sum[c]))
                        bad = n;
                    ++e, ++entries, sum[c] = 0, stored[c] = 0;
                }
                if (e != got.row_ptr[n + 1])
                    bad = n;
            }
            CHECK_MSG(bad < 0 && got.nnz == entries && got.rows == nodes,
                      "%s on %s threads: the nodes' matrix differs from its definition at node "
                      "%lld",
                      specs[m], t ? "3" : "1", (long long)bad);
            cmrscl_csr_free(&got);
        }
        free(node_ptr), free(node_of), free(sum), free(stored);
        cmrscl_csr_free(&a);
    }
    threads_restore(keep);
}

/* A matrix whose rows list their columns backwards, each row's first entry split in two halves
 * (CSR allows both): the same hierarchy, bit for bit, as from its canonical form - the set-up
 * works on a canonical copy. */
static void test_any_order(void)
{
    const char *specs[] = {"stencil7:12", "lap:rmat:9:8", "elastic:5"};
    for (int m = 0; m < 3; ++m) {
        cmrscl_csr a, b;
        CHECK_OK(cmrscl_csr_generate(specs[m], &a));
        b = (cmrscl_csr){a.rows,
                         a.cols,
                         a.nnz + a.rows,
                         malloc(sizeof(int64_t) * (a.rows + 1)),
                         malloc(sizeof(int32_t) * (size_t)(a.nnz + a.rows)),
                         malloc(sizeof(double) * (size_t)(a.nnz + a.rows))};
        int64_t o = 0;
        for (int32_t i = 0; i < a.rows; ++i) {
            b.row_ptr[i] = o;
            for (int64_t k = a.row_ptr[i + 1] - 1; k >= a.row_ptr[i]; --k) {
                const bool split = k == a.row_ptr[i];
                b.col_ind[o] = a.col_ind[k], b.values[o++] = split ? a.values[k] / 2 : a.values[k];
                if (split)
                    b.col_ind[o] = a.col_ind[k], b.values[o++] = a.values[k] / 2;
            }
        }
        b.row_ptr[a.rows] = o;
        cmrs_amg_hierarchy want, got;
        CHECK_OK(cmrs_amg_setup(&a, NULL, &want));
        CHECK_OK(cmrs_amg_setup(&b, NULL, &got));
        bool same = want.levels == got.levels;
        for (int l = 0; same && l < want.levels; ++l) {
            const cmrs_amg_level *x = &want.level[l], *y = &got.level[l];
            same = test_same_csr(&x->A, &y->A) && !memcmp(&x->rho, &y->rho, sizeof x->rho) &&
                   (l + 1 == want.levels ||
                    (test_same_csr(&x->P, &y->P) && test_same_csr(&x->R, &y->R)));
        }
        CHECK_MSG(same, "%s, its rows backwards and a repeat: not the canonical form's hierarchy",
                  specs[m]);
        cmrs_amg_free(&want), cmrs_amg_free(&got);
        cmrscl_csr_free(&b), cmrscl_csr_free(&a);
    }
}

/* T of one candidate against its definition (T[i][J] = b_i / ||b_J||, the coarse candidate
 * ||b_J||, an aggregate whose candidate is 0 without a column, columns numbered in the order of
 * the aggregates kept) over more aggregates than a piece of AMG_PIECE holds, so that the
 * numbering crosses the pieces: aggregates of 1-4 rows, a row in none now and then; the
 * constant, and a candidate 0 on every aggregate of a stretch; 1 and 3 threads. */
static void test_tentative_single(void)
{
    const int32_t count = 3 * AMG_PIECE + 123;
    int32_t *agg = malloc(sizeof(int32_t) * 4 * (size_t)count), rows = 0;
    for (int32_t g = 0; g < count; ++g)
        for (int32_t m = 0; m < 1 + g % 4; ++m) {
            if ((rows + g) % 97 == 0)
                agg[rows++] = -1;
            agg[rows++] = g;
        }
    double *b = malloc(sizeof(double) * (size_t)rows);
    for (int32_t i = 0; i < rows; ++i) /* 0 on the aggregates of the second piece */
        b[i] = agg[i] >= AMG_PIECE && agg[i] < 2 * AMG_PIECE ? 0 : 1 + i % 5;
    char *keep = threads_kept();
    for (int t = 1; t <= 3; t += 2)
        for (int given = 0; given < 2; ++given) {
            char threads[4];
            snprintf(threads, sizeof threads, "%d", t);
            setenv("CMRSCL_THREADS", threads, 1);
            cmrs_amg_coarse c;
            CHECK_OK(cmrs_amg_tentative(agg, rows, count, given ? b : NULL, 1, &c));
            double *norm2 = calloc((size_t)count, sizeof(double));
            for (int32_t i = 0; i < rows; ++i)
                if (agg[i] >= 0)
                    norm2[agg[i]] += given ? b[i] * b[i] : 1;
            int32_t kept = 0, bad = 0;
            for (int32_t g = 0; g < count; ++g) {
                bad += c.node_ptr[g] != kept;
                if (norm2[g] != 0)
                    bad += c.b[kept++] != sqrt(norm2[g]);
            }
            for (int32_t i = 0; i < rows; ++i) {
                const int32_t g = agg[i];
                const bool entry = g >= 0 && norm2[g] != 0;
                bad += c.t.row_ptr[i + 1] - c.t.row_ptr[i] != entry;
                if (entry && c.t.row_ptr[i + 1] > c.t.row_ptr[i]) {
                    const int64_t k = c.t.row_ptr[i];
                    bad += c.t.col_ind[k] != c.node_ptr[g] ||
                           c.t.values[k] != (given ? b[i] : 1) / sqrt(norm2[g]);
                }
            }
            CHECK_MSG(!bad && c.rows == kept && c.t.cols == kept && c.nodes == count,
                      "T of %s on %d threads: %d differences from the definition, %d columns "
                      "(%d kept)",
                      given ? "a given candidate" : "the constant", t, bad, (int)c.rows, (int)kept);
            free(norm2);
            cmrs_amg_coarse_free(&c);
        }
    threads_restore(keep);
    free(agg), free(b);
}

int main(void)
{
    test_tentative_single();
    test_all_strong();
    test_blocks();
    test_spread_counts();
    test_nodes();
    test_any_order();
    return test_finish("amg_aggregate");
}
