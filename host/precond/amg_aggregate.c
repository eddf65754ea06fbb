/* amg_aggregate.c - the first phases of a level of smoothed aggregation (issue 57): which
 * couplings are strong and the aggregates that group the rows (amg_tentative.c then carries
 * the near-null candidates to the coarse level). Each follows PyAMG's definition, in the order
 * of the rows (aggregation's first pass, on large levels, a block at a time first), so the same
 * matrix gives the same aggregates on every run and machine. */
#include "precond/precond.h"

#include <math.h>
#include <stdlib.h>

/* a_ii, or 0 when row i stores none (the setup has checked that none is missing). */
static double diagonal_of(const cmrscl_csr *a, int32_t i)
{
    double d = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
        if (a->col_ind[k] == i)
            d += a->values[k];
    return d;
}

/* With theta 0 every nonzero off-diagonal entry is strong: no diagonal is needed. */
static bool strong(const cmrscl_csr *a, const double *diag, int32_t i, int64_t k, double theta)
{
    int32_t j = a->col_ind[k];
    double v = fabs(a->values[k]);
    return j != i && v != 0 && v >= (theta > 0 ? theta * sqrt(fabs(diag[i] * diag[j])) : 0);
}

/* One pass of the strength of connection over a thread's rows (host/base/parallel.c): each
 * row's diagonal, or its strong entries counted, or their columns written - row by row, so
 * the same pattern whatever the threads. */
typedef struct strength_job {
    const cmrscl_csr *a;
    double theta, *diag;
    int64_t *row_ptr;
    int32_t *col_ind;
    int pass; /* 0 the diagonal, 1 the counts (into row_ptr[i + 1]), 2 the columns */
} strength_job;

static void strength_share(void *ctx, int thread, int threads)
{
    const strength_job *j = ctx;
    const cmrscl_csr *a = j->a;
    int64_t begin, end;
    cmrs_parallel_range(a->rows, thread, threads, &begin, &end);
    for (int64_t i = begin; i < end; ++i) {
        if (j->pass == 0) {
            j->diag[i] = diagonal_of(a, (int32_t)i);
            continue;
        }
        int64_t n = 0, out = j->pass == 2 ? j->row_ptr[i] : 0;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            if (strong(a, j->diag, (int32_t)i, k, j->theta)) {
                if (j->pass == 2)
                    j->col_ind[out++] = a->col_ind[k];
                ++n;
            }
        if (j->pass == 1)
            j->row_ptr[i + 1] = n;
    }
}

/* Each row's first entry from the counts in row_ptr[i + 1] (row_ptr[0] = 0), in pieces on the
 * host's threads. */
typedef struct starts_job {
    int64_t *row_ptr, *piece_sum, rows;
    bool write;
} starts_job;

static void starts_piece(void *ctx, int64_t piece)
{
    const starts_job *j = ctx;
    int64_t begin, end, run = j->write ? j->piece_sum[piece] : 0;
    cmrs_amg_piece_rows(piece, j->rows, &begin, &end);
    for (int64_t i = begin; i < end; ++i) {
        run += j->row_ptr[i + 1];
        if (j->write)
            j->row_ptr[i + 1] = run;
    }
    if (!j->write)
        j->piece_sum[piece] = run;
}

static cmrscl_status row_starts(int64_t *row_ptr, int64_t rows)
{
    int64_t pieces = cmrs_amg_pieces(rows);
    starts_job job = {row_ptr, cmrscl_alloc((size_t)pieces + 1, sizeof(int64_t)), rows, false};
    if (!job.piece_sum)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG: the starts of %lld rows",
                           (long long)rows);
    int threads = cmrs_parallel_threads();
    cmrs_parallel_pieces(threads, pieces, starts_piece, &job);
    for (int64_t p = 0, run = 0; p < pieces; ++p) { /* each piece's count -> its first entry */
        int64_t count = job.piece_sum[p];
        job.piece_sum[p] = run, run += count;
    }
    job.write = true;
    cmrs_parallel_pieces(threads, pieces, starts_piece, &job);
    row_ptr[0] = 0;
    free(job.piece_sum);
    return CMRSCL_OK;
}

cmrscl_status cmrs_amg_strength(const cmrscl_csr *a, double theta, cmrscl_csr *s)
{
    *s = (cmrscl_csr){0};
    strength_job job = {a,
                        theta,
                        theta > 0 ? cmrscl_alloc((size_t)a->rows + 1, sizeof(double)) : NULL,
                        cmrscl_alloc((size_t)a->rows + 1, sizeof(int64_t)),
                        NULL,
                        0};
    if ((theta > 0 && !job.diag) || !job.row_ptr)
        goto oom;
    int threads = cmrs_parallel_threads();
    if ((int64_t)threads > a->rows / 4096 + 1) /* a few rows: not worth a thread */
        threads = (int)(a->rows / 4096 + 1);
    if (theta > 0)
        cmrs_parallel_run(threads, strength_share, &job);
    job.pass = 1;
    cmrs_parallel_run(threads, strength_share, &job);
    if (row_starts(job.row_ptr, a->rows) != CMRSCL_OK)
        goto oom;
    job.col_ind = cmrscl_alloc((size_t)job.row_ptr[a->rows] + 1, sizeof(int32_t));
    if (!job.col_ind)
        goto oom;
    job.pass = 2;
    cmrs_parallel_run(threads, strength_share, &job);
    free(job.diag);
    *s = (cmrscl_csr){a->rows, a->cols, job.row_ptr[a->rows], job.row_ptr, job.col_ind, NULL};
    return CMRSCL_OK;
oom:
    free(job.diag);
    free(job.row_ptr);
    return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG strength of connection: %d rows",
                       (int)a->rows);
}

/* cmrs_amg_filter_on's rows over a thread's share: row i of f is the strong pattern's row i with
 * the diagonal in its place (so it starts i entries after the pattern's), a's entries at those
 * columns, every other entry of a's row summed into the diagonal. */
typedef struct filter_job {
    const cmrscl_csr *a, *strong;
    cmrscl_csr *f;
} filter_job;

static void filter_share(void *ctx, int thread, int threads)
{
    const filter_job *j = ctx;
    const cmrscl_csr *a = j->a, *s = j->strong;
    cmrscl_csr *f = j->f;
    int64_t begin, end;
    cmrs_parallel_range(a->rows, thread, threads, &begin, &end);
    for (int64_t i = begin; i < end; ++i) {
        int64_t out = s->row_ptr[i] + i, at = -1; /* at: the diagonal's slot */
        for (int64_t e = s->row_ptr[i]; e <= s->row_ptr[i + 1]; ++e) {
            bool more = e < s->row_ptr[i + 1];
            if (at < 0 && (!more || s->col_ind[e] > i))
                f->col_ind[at = out++] = (int32_t)i;
            if (more)
                f->col_ind[out] = s->col_ind[e], f->values[out++] = 0;
        }
        f->row_ptr[i + 1] = out;
        double lumped = 0, aii = 0;
        for (int64_t k = a->row_ptr[i], q = s->row_ptr[i] + i; k < a->row_ptr[i + 1]; ++k) {
            int32_t c = a->col_ind[k];
            while (q < out && f->col_ind[q] < c)
                ++q;
            aii += c == i ? a->values[k] : 0;
            if (c != i && q < out && f->col_ind[q] == c)
                f->values[q] = a->values[k];
            else
                lumped += a->values[k];
        }
        /* a coarse level is no M-matrix: where its weak entries would leave the diagonal not
         * positive, the row keeps a_ii (PyAMG's filter: unlumped) */
        f->values[at] = lumped > 0 ? lumped : aii;
    }
}

cmrscl_status cmrs_amg_filter_on(const cmrscl_csr *a, const cmrscl_csr *strong, cmrscl_csr *f)
{
    int64_t nnz = strong->nnz + a->rows;
    *f = (cmrscl_csr){a->rows,
                      a->cols,
                      nnz,
                      cmrscl_alloc((size_t)a->rows + 1, sizeof(int64_t)),
                      cmrscl_alloc((size_t)nnz + 1, sizeof(int32_t)),
                      cmrscl_alloc((size_t)nnz + 1, sizeof(double))};
    if (!f->row_ptr || !f->col_ind || !f->values) {
        cmrscl_csr_free(f);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG filtered matrix: %d rows",
                           (int)a->rows);
    }
    f->row_ptr[0] = 0;
    filter_job job = {a, strong, f};
    cmrs_parallel_run(cmrs_parallel_threads(), filter_share, &job);
    return CMRSCL_OK;
}

cmrscl_status cmrs_amg_filter(const cmrscl_csr *a, double theta, cmrscl_csr *f)
{
    cmrscl_csr s;
    *f = (cmrscl_csr){0};
    cmrscl_status st = cmrs_amg_strength(a, theta, &s);
    if (st == CMRSCL_OK)
        st = cmrs_amg_filter_on(a, &s, f);
    cmrscl_csr_free(&s);
    return st;
}

/* Whether every off-diagonal entry of a is strong at theta: theta 0 and none stored as zero
 * (a row's scan stops at its first), in pieces on the host's threads. */
typedef struct zeros_job {
    const cmrscl_csr *a;
    atomic_bool found;
} zeros_job;

static void zeros_piece(void *ctx, int64_t piece)
{
    zeros_job *j = ctx;
    const cmrscl_csr *a = j->a;
    int64_t begin, end;
    cmrs_amg_piece_rows(piece, a->rows, &begin, &end);
    for (int64_t i = begin; i < end && !atomic_load_explicit(&j->found, memory_order_relaxed); ++i)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            if (a->values[k] == 0 && a->col_ind[k] != i) {
                atomic_store(&j->found, true);
                break;
            }
}

bool cmrs_amg_all_strong(const cmrscl_csr *a, double theta)
{
    if (theta != 0)
        return false;
    zeros_job job = {.a = a};
    atomic_init(&job.found, false);
    cmrs_parallel_pieces(cmrs_parallel_threads(), cmrs_amg_pieces(a->rows), zeros_piece, &job);
    return !atomic_load(&job.found);
}

/* AMG_HUB_ROWS, AMG_SPREAD: where theta 0 gives way (cmrs_amg_has_hubs, precond.h). */
#define AMG_HUB_ROWS 16.0
#define AMG_SPREAD 0.75

bool cmrs_amg_has_hubs(const cmrscl_csr *a)
{
    double mean = (double)a->nnz / (double)a->rows;
    return (double)cmrs_csr_longest_row(a->rows, a->row_ptr) >= AMG_HUB_ROWS * mean;
}

/* The aggregates that rows touch, every 16th row, in pieces on the host's threads: a row's
 * distinct aggregates counted among its own entries (a short row's by comparing them, a long
 * one's sorted), so the counts are the same whatever the threads. */
#define SPREAD_SHORT_ROW 64

typedef struct spread_job {
    const cmrscl_csr *a;
    const int32_t *aggregate;
    int64_t *entries, *touched; /* a piece's */
    atomic_bool failed;         /* no memory for a long row's copy */
} spread_job;

static int by_value(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

static int64_t distinct_aggregates(spread_job *j, int64_t begin, int64_t end)
{
    const int32_t *col = j->a->col_ind, *agg = j->aggregate;
    int64_t n = end - begin, touched = 0;
    if (n <= SPREAD_SHORT_ROW) {
        int32_t seen[SPREAD_SHORT_ROW];
        for (int64_t k = 0; k < n; ++k) {
            int32_t g = agg[col[begin + k]];
            bool again = g < 0;
            for (int64_t q = 0; q < touched && !again; ++q)
                again = seen[q] == g;
            if (!again)
                seen[touched++] = g;
        }
        return touched;
    }
    int32_t *copy = cmrscl_alloc((size_t)n, sizeof(int32_t));
    if (!copy) {
        atomic_store(&j->failed, true);
        return 0;
    }
    for (int64_t k = 0; k < n; ++k)
        copy[k] = agg[col[begin + k]];
    qsort(copy, (size_t)n, sizeof(int32_t), by_value);
    for (int64_t k = 0; k < n; ++k)
        touched += copy[k] >= 0 && (k == 0 || copy[k] != copy[k - 1]);
    free(copy);
    return touched;
}

static void spread_piece(void *ctx, int64_t piece)
{
    spread_job *j = ctx;
    const int64_t *row_ptr = j->a->row_ptr;
    int64_t begin, end, entries = 0, touched = 0;
    cmrs_amg_piece_rows(piece, j->a->rows, &begin, &end); /* (AMG_PIECE: a multiple of 16) */
    for (int64_t i = begin; i < end; i += 16) {
        entries += row_ptr[i + 1] - row_ptr[i];
        touched += distinct_aggregates(j, row_ptr[i], row_ptr[i + 1]);
    }
    j->entries[piece] = entries, j->touched[piece] = touched;
}

bool cmrs_amg_spread_counts(const cmrscl_csr *a, const int32_t *aggregate, int32_t count,
                            int64_t *entries, int64_t *touched)
{
    int64_t pieces = cmrs_amg_pieces(a->rows);
    spread_job job = {.a = a,
                      .aggregate = aggregate,
                      .entries = cmrscl_alloc((size_t)pieces, sizeof(int64_t)),
                      .touched = cmrscl_alloc((size_t)pieces, sizeof(int64_t))};
    atomic_init(&job.failed, false);
    bool counted = count > 0 && job.entries && job.touched;
    if (counted)
        cmrs_parallel_pieces(cmrs_parallel_threads(), pieces, spread_piece, &job);
    *entries = *touched = 0;
    for (int64_t p = 0; counted && p < pieces; ++p)
        *entries += job.entries[p], *touched += job.touched[p];
    free(job.entries), free(job.touched);
    return counted && !atomic_load(&job.failed);
}

bool cmrs_amg_spreads(const cmrscl_csr *a, const int32_t *aggregate, int32_t count)
{
    int64_t entries, touched;
    if (!cmrs_amg_spread_counts(a, aggregate, count, &entries, &touched))
        return false; /* no aggregate, or no memory for the count: keep theta 0 */
    cmrscl_trace("AMG: %lld entries of sampled rows in %lld aggregates", (long long)entries,
                 (long long)touched);
    return entries > 0 && (double)touched >= AMG_SPREAD * (double)entries;
}

/* Pass 1 is greedy in the order of the rows, which keeps it on one core: on a level of
 * millions of rows the longest phase of the set-up. Past AGGREGATE_BLOCK_ROWS rows it runs in
 * two stages: first a block of that many rows at a time on the host's threads, each rooting
 * aggregates only at rows whose neighbours all lie in the block; then, in the order of the
 * rows on one thread, the rows left free (those at the blocks' edges), rooting where all their
 * neighbours are still free wherever they lie. Every aggregate is then a whole neighbourhood,
 * as in one pass; they are numbered in the order of their roots. The blocks are fixed by the
 * rows, never by the threads, so a matrix has the same aggregates on every machine, and a
 * level of one block has PyAMG's. Where few rows keep all their neighbours in their block (a
 * random graph's), the second stage does nearly all of the one pass's work (not quite its
 * result on a nonsymmetric pattern: the blocks have marked their rows without neighbours, which
 * then keep an earlier row that has them as neighbours from rooting). What the different order
 * at the blocks' edges costs the hierarchy is measured with the time it saves
 * (docs/dev/PERFORMANCE.md, AGGREGATE_BLOCK_ROWS). */
#define AGGREGATE_BLOCK_ROWS ((int64_t)1 << 20)

static int64_t aggregate_block_rows(void)
{
    const char *asked = getenv("CMRSCL_AMG_AGGREGATE_ROWS"); /* for measuring it */
    long long rows = asked ? atoll(asked) : 0;
    return rows > 0 ? (int64_t)rows : AGGREGATE_BLOCK_ROWS;
}

/* Marks of agg before the numbers: free, isolated (no neighbour), placed by pass 1 (its root
 * in `root`). */
enum { FREE = -2, ISOLATED = -3, PLACED = -4 };

/* Pass 1 at row i, roots only where its neighbours all lie in [n0, n1): a row with neighbours,
 * none of them aggregated yet, roots a new aggregate of itself and all its neighbours. A row's
 * own column, where s stores it (a matrix all of whose couplings are strong), is no neighbour:
 * it is free when read here and aggregated with the row - no decision of any pass changes with
 * it. root[i]: the root of a placed row, else -1. Whether the row is left for later: free, its
 * neighbours in [n0, n1) free, and one beyond. */
static bool pass1_row(const cmrscl_csr *s, int32_t *agg, int32_t *root, int64_t i, int64_t n0,
                      int64_t n1)
{
    if (agg[i] != FREE)
        return false;
    int64_t begin = s->row_ptr[i], end = s->row_ptr[i + 1];
    if (begin == end || (end - begin == 1 && s->col_ind[begin] == i)) {
        agg[i] = ISOLATED;
        return false;
    }
    bool beyond = false;
    for (int64_t k = begin; k < end; ++k) {
        int32_t j = s->col_ind[k];
        if (j < n0 || j >= n1)
            beyond = true;
        else if (agg[j] != FREE)
            return false; /* never a root: a mark stays */
    }
    if (beyond)
        return true;
    agg[i] = PLACED, root[i] = (int32_t)i;
    for (int64_t k = begin; k < end; ++k)
        agg[s->col_ind[k]] = PLACED, root[s->col_ind[k]] = (int32_t)i;
    return false;
}

/* The passes that need no order run a piece of AMG_PIECE rows (pass 1's first stage a block)
 * a task on the host's threads: the marks before pass 1, its roots counted and numbered, its
 * other rows given their root's number, pass 2 (each free row reads only rows placed in pass
 * 1, which no longer change), and the isolated rows' -1 after pass 3. */
typedef enum {
    MARK_FREE,
    PASS1_BLOCKS,
    COUNT_ROOTS,
    NUMBER_ROOTS,
    NUMBER_PLACED,
    JOIN_PASS1,
    ISOLATED_TO_NONE
} aggregate_step;

typedef struct aggregate_job {
    const cmrscl_csr *s;
    int32_t *aggregate, *root;
    int64_t block_rows;
    int32_t *later; /* a block's rows left for the second stage, from its first row on */
    int64_t *left;  /* how many a block left */
    int32_t *tally; /* a piece's: pass 1's roots (then the number of its first), pass 2's rows
                       left free */
    aggregate_step step;
} aggregate_job;

static void aggregate_task(void *ctx, int64_t task)
{
    const aggregate_job *j = ctx;
    const cmrscl_csr *s = j->s;
    int32_t *agg = j->aggregate, *root = j->root;
    int64_t begin, end;
    if (j->step == PASS1_BLOCKS) {
        begin = task * j->block_rows;
        end = begin + j->block_rows < s->rows ? begin + j->block_rows : s->rows;
        int64_t left = 0;
        for (int64_t i = begin; i < end; ++i)
            if (pass1_row(s, agg, root, i, begin, end))
                j->later[begin + left++] = (int32_t)i;
        j->left[task] = left;
        return;
    }
    cmrs_amg_piece_rows(task, s->rows, &begin, &end);
    int32_t counted = 0;
    for (int64_t i = begin; i < end; ++i) {
        if (j->step == MARK_FREE) {
            agg[i] = FREE, root[i] = -1;
        } else if (j->step == COUNT_ROOTS) {
            counted += root[i] == i;
        } else if (j->step == NUMBER_ROOTS) {
            if (root[i] == i)
                agg[i] = j->tally[task] + counted++;
        } else if (j->step == NUMBER_PLACED) {
            if (root[i] >= 0 && root[i] != i)
                agg[i] = agg[root[i]];
        } else if (j->step == ISOLATED_TO_NONE) {
            agg[i] = agg[i] == ISOLATED ? -1 : agg[i];
        } else if (agg[i] == FREE) { /* pass 2: joins the aggregate of its first neighbour
                                        placed in pass 1 (not one that joined in this pass, so
                                        aggregates grow by one ring at most) */
            for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k)
                if (root[s->col_ind[k]] >= 0) {
                    agg[i] = agg[s->col_ind[k]];
                    break;
                }
            counted += agg[i] == FREE;
        }
    }
    if (j->step == COUNT_ROOTS || j->step == JOIN_PASS1)
        j->tally[task] = counted;
}

static void run_step(aggregate_job *job, aggregate_step step, int64_t tasks)
{
    job->step = step;
    cmrs_parallel_pieces(cmrs_parallel_threads(), tasks, aggregate_task, job);
}

cmrscl_status cmrs_amg_aggregate(const cmrscl_csr *s, int32_t *aggregate, int32_t *count)
{
    int64_t pieces = cmrs_amg_pieces(s->rows), block_rows = aggregate_block_rows();
    /* (one block: no row has a neighbour beyond it, and the second stage has none to take) */
    int64_t blocks = (s->rows + block_rows - 1) / block_rows;
    aggregate_job job = {s,
                         aggregate,
                         cmrscl_alloc((size_t)s->rows + 1, sizeof(int32_t)),
                         block_rows,
                         cmrscl_alloc((size_t)s->rows + 1, sizeof(int32_t)),
                         cmrscl_alloc((size_t)blocks + 1, sizeof(int64_t)),
                         cmrscl_alloc((size_t)pieces + 1, sizeof(int32_t)),
                         MARK_FREE};
    if (!job.root || !job.later || !job.left || !job.tally) {
        free(job.root), free(job.later), free(job.left), free(job.tally);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG aggregation: %d rows",
                           (int)s->rows);
    }
    run_step(&job, MARK_FREE, pieces);
    run_step(&job, PASS1_BLOCKS, blocks);
    int64_t left = 0;
    for (int64_t b = 0; b < blocks; ++b) /* the rows left, in their order */
        for (int64_t k = b * block_rows, end = k + job.left[b]; k < end; ++k, ++left)
            pass1_row(s, aggregate, job.root, job.later[k], 0, s->rows);
    cmrscl_trace("AMG aggregation of %lld rows: %lld blocks, %lld rows to the second stage",
                 (long long)s->rows, (long long)blocks, (long long)left);
    run_step(&job, COUNT_ROOTS, pieces);
    int32_t n = 0; /* pass 1's aggregates, numbered in the order of their roots */
    for (int64_t p = 0; p < pieces; ++p) {
        int32_t roots = job.tally[p];
        job.tally[p] = n, n += roots;
    }
    run_step(&job, NUMBER_ROOTS, pieces);
    run_step(&job, NUMBER_PLACED, pieces);
    run_step(&job, JOIN_PASS1, pieces);
    /* Pass 3: a row still free roots an aggregate of itself and its free neighbours (only
     * the pieces that pass 2 left a row free in). */
    for (int64_t p = 0; p < pieces; ++p) {
        int64_t begin, end;
        cmrs_amg_piece_rows(p, s->rows, &begin, &end);
        for (int64_t i = begin; job.tally[p] && i < end; ++i) {
            if (aggregate[i] != FREE)
                continue;
            aggregate[i] = n;
            for (int64_t k = s->row_ptr[i]; k < s->row_ptr[i + 1]; ++k)
                if (aggregate[s->col_ind[k]] == FREE)
                    aggregate[s->col_ind[k]] = n;
            ++n;
        }
    }
    run_step(&job, ISOLATED_TO_NONE, pieces);
    free(job.root), free(job.later), free(job.left), free(job.tally);
    *count = n;
    return CMRSCL_OK;
}
