/* amg_tentative.c - what smoothed aggregation carries to the coarse level (issue 57): the
 * tentative prolongator of k near-null candidates - each aggregate's block of them made
 * orthonormal, PyAMG's fit_candidates - and the coarse level's nodes (an aggregate's candidates
 * together, which the coarse level aggregates as one: amg_nodes.c). */
#include "precond/precond.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A candidate whose part on an aggregate, the candidates before it taken out, keeps at most
 * this share of its norm is dependent on them there (an aggregate of fewer unknowns than
 * candidates): its column of T is dropped rather than made of rounding. */
#define CANDIDATE_DROP 1e-10

static double candidate_at(const double *b, int32_t rows, int c, int32_t i)
{
    return b ? b[(size_t)c * (size_t)rows + (size_t)i] : 1.0;
}

/* One candidate (k 1, the usual case): T's row i is b_i over the norm of b on i's aggregate.
 * A given candidate's norms are summed in one pass over the rows in ascending order - each
 * aggregate's members in the order the general path takes them, so the same bits - and the
 * constant's are its members counted (members_piece); T is filled in pieces on the host's
 * threads: no member lists, no gathers. */
typedef struct single_job {
    const int32_t *aggregate;
    const double *b, *norm;  /* an aggregate's norm; 0 where its column is dropped */
    const int64_t *node_ptr; /* an aggregate's coarse row (its node's first) */
    int64_t *piece_entries;  /* first each piece's entries, then where they start */
    cmrscl_csr *t;
    bool fill;
} single_job;

static void single_piece(void *ctx, int64_t piece)
{
    const single_job *j = ctx;
    int64_t begin, end;
    cmrs_amg_piece_rows(piece, j->t->rows, &begin, &end);
    int64_t at = j->fill ? j->piece_entries[piece] : 0;
    for (int64_t i = begin; i < end; ++i) {
        int32_t g = j->aggregate[i];
        bool entry = g >= 0 && j->norm[g] != 0;
        if (j->fill && entry) {
            j->t->col_ind[at] = (int32_t)j->node_ptr[g];
            j->t->values[at] = candidate_at(j->b, j->t->rows, 0, (int32_t)i) / j->norm[g];
        }
        at += entry;
        if (j->fill)
            j->t->row_ptr[i + 1] = at;
    }
    if (!j->fill)
        j->piece_entries[piece] = at;
}

/* The constant candidate's squared norm on each aggregate is its count of members: counted
 * in pieces on the host's threads (integer additions, so in any order the same), where the
 * sum of ones in row order would take one thread over all the rows. */
typedef struct members_job {
    const int32_t *aggregate;
    int32_t rows;
    atomic_int *members;
} members_job;

static void members_piece(void *ctx, int64_t piece)
{
    const members_job *j = ctx;
    int64_t begin, end;
    cmrs_amg_piece_rows(piece, j->rows, &begin, &end);
    /* a run of rows in one aggregate (an aggregate's rows lie close) counted by one add: the
     * atomic adds, not the reads, were the pass's time */
    for (int64_t i = begin, run; i < end; i += run) {
        const int32_t g = j->aggregate[i];
        for (run = 1; i + run < end && j->aggregate[i + run] == g;)
            ++run;
        if (g >= 0)
            atomic_fetch_add_explicit(&j->members[g], (int)run, memory_order_relaxed);
    }
}

/* Each aggregate's norm from its squared norm (members[g], or norm[g] where members is NULL)
 * - 0 where its column is dropped - and the coarse numbering: in pieces of aggregates on the
 * host's threads, each piece's kept columns counted, then (number) numbered from the pieces'
 * prefix, the coarse candidate written. One thread over the aggregates took as long as the
 * member count: their arrays' fresh pages touched one by one. */
typedef struct norms_job {
    const atomic_int *members;
    double *norm, *b;    /* b: the coarse candidate (number) */
    int64_t *node_ptr;   /* an aggregate's coarse row */
    int64_t *piece_kept; /* first each piece's kept columns, then its first coarse row */
    int32_t count;
    bool number;
} norms_job;

static void norms_piece(void *ctx, int64_t piece)
{
    const norms_job *j = ctx;
    int64_t begin, end, at = j->number ? j->piece_kept[piece] : 0;
    cmrs_amg_piece_rows(piece, j->count, &begin, &end);
    for (int64_t g = begin; g < end; ++g) {
        if (j->number) {
            j->node_ptr[g] = at;
            if (j->norm[g] != 0)
                j->b[at++] = j->norm[g];
            continue;
        }
        double before = j->members ? (double)j->members[g] : j->norm[g], n = sqrt(before);
        j->norm[g] = n > 0 && n > CANDIDATE_DROP * sqrt(before) ? n : 0;
        at += j->norm[g] != 0;
    }
    if (!j->number)
        j->piece_kept[piece] = at;
}

static cmrscl_status tentative_single(const int32_t *aggregate, int32_t rows, int32_t count,
                                      const double *b, cmrs_amg_coarse *out)
{
    double *norm = cmrs_parallel_alloc((size_t)count + 1, sizeof(double));
    int64_t pieces = cmrs_amg_pieces(rows), spans = cmrs_amg_pieces(count);
    int64_t *piece_entries =
        cmrscl_alloc((size_t)(pieces > spans ? pieces : spans) + 1, sizeof(int64_t));
    cmrscl_csr *t = &out->t;
    *t = (cmrscl_csr){rows, 0,   0, cmrs_parallel_alloc((size_t)rows + 1, sizeof(int64_t)),
                      NULL, NULL};
    out->node_ptr = cmrs_parallel_alloc((size_t)count + 1, sizeof(int64_t));
    members_job members = {aggregate, rows,
                           b ? NULL : calloc((size_t)count + 1, sizeof(atomic_int))};
    int threads = cmrs_parallel_threads();
    cmrscl_status st = CMRSCL_OK;
    if (!norm || !piece_entries || !t->row_ptr || !out->node_ptr || (!b && !members.members)) {
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG tentative prolongator: %d rows",
                         (int)rows);
        goto done;
    }
    if (b) { /* summed in row order, one thread: the general path's order */
        memset(norm, 0, ((size_t)count + 1) * sizeof(double));
        for (int32_t i = 0; i < rows; ++i) {
            double v = candidate_at(b, rows, 0, i);
            if (aggregate[i] >= 0)
                norm[aggregate[i]] += v * v;
        }
    } else
        cmrs_parallel_pieces(threads, pieces, members_piece, &members);
    norms_job norms = {members.members, norm, NULL, out->node_ptr, piece_entries, count, false};
    cmrs_parallel_pieces(threads, spans, norms_piece, &norms);
    int64_t coarse = 0;
    for (int64_t p = 0; p < spans; ++p) {
        int64_t n = piece_entries[p];
        piece_entries[p] = coarse, coarse += n;
    }
    out->node_ptr[count] = coarse;
    out->rows = t->cols = (int32_t)coarse, out->nodes = count;
    out->b = cmrscl_alloc((size_t)coarse + 1, sizeof(double));
    if (!out->b) {
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG tentative prolongator");
        goto done;
    }
    norms.b = out->b, norms.number = true;
    cmrs_parallel_pieces(threads, spans, norms_piece, &norms);
    single_job job = {aggregate, b, norm, out->node_ptr, piece_entries, t, false};
    cmrs_parallel_pieces(threads, pieces, single_piece, &job);
    int64_t entries = 0;
    for (int64_t p = 0; p < pieces; ++p) {
        int64_t n = piece_entries[p];
        piece_entries[p] = entries, entries += n;
    }
    t->nnz = entries, t->row_ptr[0] = 0;
    t->col_ind = cmrs_parallel_alloc((size_t)entries + 1, sizeof(int32_t));
    t->values = cmrs_parallel_alloc((size_t)entries + 1, sizeof(double));
    if (!t->col_ind || !t->values) {
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG tentative prolongator");
        goto done;
    }
    job.fill = true;
    cmrs_parallel_pieces(threads, pieces, single_piece, &job);
done:
    if (st != CMRSCL_OK)
        cmrs_amg_coarse_free(out);
    free(norm), free(piece_entries), free(members.members);
    return st;
}

/* The first row whose aggregate is count or more, or -1: each piece's first on the host's
 * threads, the lowest of them. */
typedef struct outside_job {
    const int32_t *aggregate;
    int32_t rows, count;
    int32_t *first; /* a piece's */
} outside_job;

static void outside_piece(void *ctx, int64_t piece)
{
    const outside_job *j = ctx;
    int64_t begin, end;
    cmrs_amg_piece_rows(piece, j->rows, &begin, &end);
    j->first[piece] = -1;
    for (int64_t i = begin; i < end && j->first[piece] < 0; ++i)
        if (j->aggregate[i] >= j->count)
            j->first[piece] = (int32_t)i;
}

static int32_t first_outside(const int32_t *aggregate, int32_t rows, int32_t count)
{
    int64_t pieces = cmrs_amg_pieces(rows);
    outside_job job = {aggregate, rows, count, cmrscl_alloc((size_t)pieces + 1, sizeof(int32_t))};
    if (!job.first) { /* (no memory for the pieces: one pass) */
        for (int32_t i = 0; i < rows; ++i)
            if (aggregate[i] >= count)
                return i;
        return -1;
    }
    cmrs_parallel_pieces(cmrs_parallel_threads(), pieces, outside_piece, &job);
    int32_t first = -1;
    for (int64_t p = 0; p < pieces && first < 0; ++p)
        first = job.first[p];
    free(job.first);
    return first;
}

/* The general path (k candidates). Each aggregate's block of them is made orthonormal apart
 * from the others, in pieces of aggregates on the host's threads; the coarse unknowns are
 * numbered after (each aggregate's first, a running count of the columns kept), then T's rows
 * and the coarse candidates are written in pieces too. Each aggregate as one thread would make
 * it: the same bits on any number of threads. */
typedef struct blocks_job {
    const int32_t *aggregate;
    const double *b;
    int32_t rows, count;
    int k;
    int64_t span;           /* aggregates a piece: about AMG_PIECE rows */
    const int64_t *start;   /* each aggregate's first in member */
    const int32_t *member;  /* the aggregates' rows, ascending in each */
    const int32_t *at;      /* i's place in member */
    double *q;              /* the orthonormal blocks, k columns of rows, in member's order */
    double *r;              /* each aggregate's R, k x k */
    uint32_t *kept;         /* each aggregate's columns kept, bits */
    int32_t *first;         /* each aggregate's first coarse unknown */
    int64_t *piece_entries; /* T's entries in each piece of rows, then where they start */
    cmrs_amg_coarse *out;
} blocks_job;

/* Gram-Schmidt on aggregate J's block (modified: each column against the kept ones before
 * it), R upper triangular; the first column's norm from its own sum. */
static void orthonormal_block(const blocks_job *jb, int32_t j)
{
    const int k = jb->k;
    const int64_t b0 = jb->start[j], b1 = jb->start[j + 1];
    double *rj = jb->r + (size_t)j * (size_t)k * (size_t)k;
    uint32_t kept = 0;
    for (int c = 0; c < k; ++c) {
        double *v = jb->q + (size_t)c * (size_t)jb->rows, before = 0, norm = 0;
        for (int64_t m = b0; m < b1; ++m) {
            v[m] = candidate_at(jb->b, jb->rows, c, jb->member[m]);
            before += v[m] * v[m];
        }
        for (int d = 0; d < c; ++d) {
            rj[d * k + c] = 0;
            if (!(kept >> d & 1))
                continue;
            const double *u = jb->q + (size_t)d * (size_t)jb->rows;
            double dot = 0;
            for (int64_t m = b0; m < b1; ++m)
                dot += u[m] * v[m];
            for (int64_t m = b0; m < b1; ++m)
                v[m] -= dot * u[m];
            rj[d * k + c] = dot;
        }
        for (int64_t m = b0; m < b1; ++m)
            norm += v[m] * v[m];
        norm = c ? sqrt(norm) : sqrt(before);
        bool keep = norm > 0 && norm > CANDIDATE_DROP * sqrt(before);
        rj[c * k + c] = keep ? norm : 0;
        if (keep) {
            kept |= 1u << c;
            for (int64_t m = b0; m < b1; ++m)
                v[m] /= norm;
        }
    }
    jb->kept[j] = kept;
}

/* The aggregates [begin, end) of a piece. */
static void aggregates_of(const blocks_job *jb, int64_t piece, int64_t *begin, int64_t *end)
{
    *begin = piece * jb->span;
    *end = *begin + jb->span < jb->count ? *begin + jb->span : jb->count;
}

static void blocks_piece(void *ctx, int64_t piece)
{
    const blocks_job *jb = ctx;
    int64_t begin, end;
    aggregates_of(jb, piece, &begin, &end);
    for (int64_t j = begin; j < end; ++j)
        orthonormal_block(jb, (int32_t)j);
}

/* The coarse candidates of a piece of aggregates: R's rows of the columns each kept. */
static void candidates_piece(void *ctx, int64_t piece)
{
    const blocks_job *jb = ctx;
    const int k = jb->k;
    const int32_t coarse = jb->out->rows;
    int64_t begin, end;
    aggregates_of(jb, piece, &begin, &end);
    for (int64_t j = begin; j < end; ++j) {
        const double *rj = jb->r + (size_t)j * (size_t)k * (size_t)k;
        int32_t row = jb->first[j];
        for (int d = 0; d < k; ++d)
            if (jb->kept[j] >> d & 1) {
                for (int c = 0; c < k; ++c)
                    jb->out->b[(size_t)c * (size_t)coarse + (size_t)row] =
                        c < d ? 0 : rj[d * k + c];
                ++row;
            }
        jb->out->node_ptr[j] = jb->first[j];
    }
}

/* T's rows of a piece: row i of aggregate J holds J's kept columns - counted, or (fill) written
 * from the piece's first entry on. */
static void t_rows_piece(void *ctx, int64_t piece, bool fill)
{
    const blocks_job *jb = ctx;
    cmrscl_csr *t = &jb->out->t;
    int64_t begin, end;
    cmrs_amg_piece_rows(piece, jb->rows, &begin, &end);
    int64_t o = fill ? jb->piece_entries[piece] : 0;
    for (int64_t i = begin; i < end; ++i) {
        const int32_t j = jb->aggregate[i];
        if (j < 0) {
            if (fill)
                t->row_ptr[i + 1] = o;
            continue;
        }
        if (!fill) {
            o += __builtin_popcount(jb->kept[j]);
            continue;
        }
        int32_t col = jb->first[j];
        for (int c = 0; c < jb->k; ++c)
            if (jb->kept[j] >> c & 1) {
                t->col_ind[o] = col++;
                t->values[o++] = jb->q[(size_t)c * (size_t)jb->rows + (size_t)jb->at[i]];
            }
        t->row_ptr[i + 1] = o;
    }
    if (!fill)
        jb->piece_entries[piece] = o;
}

static void t_count_piece(void *ctx, int64_t piece) { t_rows_piece(ctx, piece, false); }

static void t_fill_piece(void *ctx, int64_t piece) { t_rows_piece(ctx, piece, true); }

static cmrscl_status tentative_blocks(const int32_t *aggregate, int32_t rows, int32_t count,
                                      const double *b, int k, cmrs_amg_coarse *out)
{
    const int64_t row_pieces = cmrs_amg_pieces(rows);
    int64_t *start = calloc((size_t)count + 2, sizeof(int64_t));
    int32_t *member = cmrscl_alloc((size_t)rows + 1, sizeof(int32_t));
    int32_t *at = cmrscl_alloc((size_t)rows + 1, sizeof(int32_t));
    blocks_job jb = {
        .aggregate = aggregate,
        .b = b,
        .rows = rows,
        .count = count,
        .k = k,
        .start = start,
        .member = member,
        .at = at,
        .q = cmrs_parallel_alloc((size_t)rows * (size_t)k + 1, sizeof(double)),
        .r = cmrs_parallel_alloc((size_t)count * (size_t)k * (size_t)k + 1, sizeof(double)),
        .kept = cmrscl_alloc((size_t)count + 1, sizeof(uint32_t)),
        .first = cmrscl_alloc((size_t)count + 1, sizeof(int32_t)),
        .piece_entries = cmrscl_alloc((size_t)row_pieces + 1, sizeof(int64_t)),
        .out = out};
    cmrscl_status st = CMRSCL_OK;
    if (!start || !member || !at || !jb.q || !jb.r || !jb.kept || !jb.first || !jb.piece_entries) {
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG tentative prolongator: %d rows",
                         (int)rows);
        goto done;
    }
    /* each aggregate's rows, ascending */
    for (int32_t i = 0; i < rows; ++i)
        if (aggregate[i] >= 0)
            ++start[aggregate[i] + 2];
    for (int32_t j = 0; j < count; ++j)
        start[j + 2] += start[j + 1];
    for (int32_t i = 0; i < rows; ++i)
        if (aggregate[i] >= 0) {
            at[i] = (int32_t)start[aggregate[i] + 1]++;
            member[at[i]] = i;
        }
    const int threads = cmrs_parallel_threads();
    jb.span = cmrs_amg_span(count, rows, AMG_PIECE);
    const int64_t pieces = (count + jb.span - 1) / jb.span;
    cmrs_parallel_pieces(threads, pieces, blocks_piece, &jb);
    int32_t coarse = 0;
    for (int32_t j = 0; j < count; ++j)
        jb.first[j] = coarse, coarse += __builtin_popcount(jb.kept[j]);
    /* T, the coarse candidates, and each coarse unknown's node: its aggregate */
    cmrscl_csr *t = &out->t;
    *t = (cmrscl_csr){rows, coarse, 0, cmrs_parallel_alloc((size_t)rows + 1, sizeof(int64_t)),
                      NULL, NULL};
    out->rows = coarse, out->nodes = count;
    out->b = cmrscl_alloc((size_t)coarse * (size_t)k + 1, sizeof(double));
    out->node_ptr = cmrscl_alloc((size_t)count + 1, sizeof(int64_t));
    if (!t->row_ptr || !out->b || !out->node_ptr) {
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG tentative prolongator");
        goto done;
    }
    cmrs_parallel_pieces(threads, pieces, candidates_piece, &jb);
    out->node_ptr[count] = coarse;
    cmrs_parallel_pieces(threads, row_pieces, t_count_piece, &jb);
    for (int64_t p = 0; p < row_pieces; ++p) {
        const int64_t n = jb.piece_entries[p];
        jb.piece_entries[p] = t->nnz, t->nnz += n;
    }
    t->row_ptr[0] = 0;
    t->col_ind = cmrs_parallel_alloc((size_t)t->nnz + 1, sizeof(int32_t));
    t->values = cmrs_parallel_alloc((size_t)t->nnz + 1, sizeof(double));
    if (!t->col_ind || !t->values) {
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG tentative prolongator");
        goto done;
    }
    cmrs_parallel_pieces(threads, row_pieces, t_fill_piece, &jb);
done:
    if (st != CMRSCL_OK)
        cmrs_amg_coarse_free(out);
    free(start), free(member), free(at), free(jb.q), free(jb.first), free(jb.kept), free(jb.r);
    free(jb.piece_entries);
    return st;
}

cmrscl_status cmrs_amg_tentative(const int32_t *aggregate, int32_t rows, int32_t count,
                                 const double *b, int k, cmrs_amg_coarse *out)
{
    *out = (cmrs_amg_coarse){0};
    int32_t bad = first_outside(aggregate, rows, count);
    if (bad >= 0)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "AMG tentative prolongator: row %d in aggregate %d of %d", (int)bad,
                           (int)aggregate[bad], (int)count);
    return k == 1 ? tentative_single(aggregate, rows, count, b, out)
                  : tentative_blocks(aggregate, rows, count, b, k, out);
}

void cmrs_amg_coarse_free(cmrs_amg_coarse *c)
{
    cmrscl_csr_free(&c->t);
    free(c->b), free(c->node_ptr);
    *c = (cmrs_amg_coarse){0};
}
