/* graph.c - rows divided among the ranks by a graph partitioner (METIS k-way), for matrices
 * whose consecutive rows share few columns: a mesh or a graph numbered without locality and
 * cut into row blocks needs most of x on every rank; parts cut along the graph need only
 * their boundary.
 *
 * The pattern of A (no values) is gathered on rank 0, which partitions the graph of A + A^T
 * (vertex weight: the row's entries + 1, as the row blocks balance) into one part per rank,
 * counts the halo of both layouts and chooses. With the graph's parts the library numbers the
 * rows part by part, each part's rows in their original order, so rank r's rows are
 * consecutive in the library's numbering and everything after this file (blocks, halo,
 * exchange, solvers) is the row-block layout's. Each row travels to its part's rank once
 * (MPI_Alltoallv), its columns renumbered and sorted; the rank keeps its rows' original
 * indices (cmrscl_dist_owned_rows), so its slices of x and y hold its rows in the user's
 * numbering and order, and nothing is permuted per product.
 *
 * Serial METIS, not ParMETIS (non-free in Debian): the whole pattern sits on one rank, so
 * graph partitioning is limited to DIST_GRAPH_MAX_ENTRIES entries. METIS is seeded: the same
 * parts, so the same bits, run after run. */
#include "dist_internal.h"

#include <stdlib.h>
#include <string.h>

#ifdef CMRSCL_HAVE_METIS
#include <metis.h>
#endif

/* The pattern sits on rank 0, and METIS holds A + A^T: about 20 bytes an entry there; METIS's
 * time grows with the entries too (about a minute near this limit). */
#define DIST_GRAPH_MAX_ENTRIES (INT64_C(1) << 28)

/* AUTO takes the graph's parts where their halo is at most this share of the row blocks':
 * METIS balances the parts' weights within 3%, so a local product up to 3% longer, which a
 * smaller cut must repay (docs/dev/PERFORMANCE.md, "graph partition"). */
#define DIST_GRAPH_HALO_SHARE 0.75

static cmrscl_status asked_partition(cmrscl_dist_partition *out)
{
    const char *env = getenv("CMRSCL_DIST_PARTITION");
    *out = CMRSCL_PARTITION_ROWS;
    if (!env || !*env || strcmp(env, "rows") == 0)
        return CMRSCL_OK;
    if (strcmp(env, "graph") == 0)
        *out = CMRSCL_PARTITION_GRAPH;
    else if (strcmp(env, "auto") == 0)
        *out = CMRSCL_PARTITION_AUTO;
    else
        return cmrs_dist_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                              "CMRSCL_DIST_PARTITION='%s': expected 'rows', 'graph' or 'auto'",
                              env);
    return CMRSCL_OK;
}

/* ---- rank 0: the whole pattern, the parts, the halos ---- */

typedef struct pattern {
    int64_t rows, nnz;
    int64_t *row_ptr;
    int32_t *col;
    int32_t *len; /* gathered row lengths */
} pattern;

static void pattern_free(pattern *g) { free(g->row_ptr), free(g->col), free(g->len); }

/* The pattern of every rank's rows on rank 0 (rows in rank order: first[] the blocks). */
static cmrscl_status gather_pattern(MPI_Comm comm, const cmrscl_csr *a, const int64_t *first,
                                    pattern *g)
{
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    int *counts = calloc(4 * (size_t)ranks, sizeof *counts); /* entries: rank 0's alone */
    int32_t *len = malloc(sizeof *len * ((size_t)a->rows + 1));
    bool ok = counts && len;
    if (rank == 0) {
        g->row_ptr = malloc(sizeof *g->row_ptr * ((size_t)g->rows + 1));
        g->col = malloc(sizeof *g->col * ((size_t)g->nnz + 1));
        g->len = malloc(sizeof *g->len * ((size_t)g->rows + 1));
        ok = ok && g->row_ptr && g->col && g->len;
    }
    cmrscl_status st = cmrs_dist_agree(
        comm, ok ? CMRSCL_OK
                 : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                  "no memory for the pattern (%lld entries)", (long long)g->nnz));
    int rc = MPI_SUCCESS;
    if (st == CMRSCL_OK) {
        int *at = counts + ranks, *entries = at + ranks, *entries_at = entries + ranks;
        int mine = (int)a->row_ptr[a->rows];
        for (int32_t i = 0; i < a->rows; ++i)
            len[i] = (int32_t)(a->row_ptr[i + 1] - a->row_ptr[i]);
        for (int r = 0; r < ranks; ++r)
            counts[r] = (int)(first[r + 1] - first[r]), at[r] = (int)first[r];
        rc = MPI_Gather(&mine, 1, MPI_INT, entries, 1, MPI_INT, 0, comm);
        for (int r = 0; r < ranks; ++r)
            entries_at[r] = r ? entries_at[r - 1] + entries[r - 1] : 0;
        if (rc == MPI_SUCCESS)
            rc = MPI_Gatherv(len, a->rows, MPI_INT32_T, g->len, counts, at, MPI_INT32_T, 0, comm);
        if (rc == MPI_SUCCESS)
            rc = MPI_Gatherv(a->col_ind, mine, MPI_INT32_T, g->col, entries, entries_at,
                             MPI_INT32_T, 0, comm);
        if (rc != MPI_SUCCESS)
            st = cmrs_dist_fail_mpi(rc, "MPI_Gatherv (the pattern)");
    }
    if (st == CMRSCL_OK && rank == 0) {
        g->row_ptr[0] = 0;
        for (int64_t i = 0; i < g->rows; ++i)
            g->row_ptr[i + 1] = g->row_ptr[i] + g->len[i];
    }
    free(counts), free(len);
    if (st != CMRSCL_OK)
        pattern_free(g);
    return st;
}

/* The x entries every rank receives in all when rank owner[i] holds row i; rows visited in
 * `order` (NULL: ascending), which lists each owner's rows together. stamp: rows ints. */
static int64_t halo_of(const pattern *g, const int32_t *owner, const int32_t *order, int32_t *stamp)
{
    int64_t total = 0;
    for (int64_t i = 0; i < g->rows; ++i)
        stamp[i] = -1;
    for (int64_t t = 0; t < g->rows; ++t) {
        int64_t i = order ? order[t] : t;
        int32_t p = owner[i];
        for (int64_t k = g->row_ptr[i]; k < g->row_ptr[i + 1]; ++k) {
            int32_t c = g->col[k];
            if (owner[c] != p && stamp[c] != p)
                stamp[c] = p, ++total;
        }
    }
    return total;
}

#ifdef CMRSCL_HAVE_METIS
/* The graph of A + A^T without loops, each neighbour once, in METIS's arrays. */
static bool symmetric_graph(const pattern *g, idx_t **xadj_out, idx_t **adj_out)
{
    idx_t n = (idx_t)g->rows;
    idx_t *xadj = calloc((size_t)n + 2, sizeof *xadj),
          *mark = malloc(sizeof *mark * ((size_t)n + 1));
    idx_t *adj = NULL;
    if (xadj && mark) {
        for (idx_t i = 0; i < n; ++i)
            for (int64_t k = g->row_ptr[i]; k < g->row_ptr[i + 1]; ++k)
                if (g->col[k] != i)
                    ++xadj[i + 2], ++xadj[g->col[k] + 2];
        for (idx_t i = 0; i < n; ++i) /* xadj[i + 1]: where vertex i's list starts */
            xadj[i + 2] += xadj[i + 1];
        adj = malloc(sizeof *adj * ((size_t)xadj[n + 1] + 1));
    }
    if (!adj) {
        free(xadj), free(mark);
        return false;
    }
    for (idx_t i = 0; i < n; ++i)
        for (int64_t k = g->row_ptr[i]; k < g->row_ptr[i + 1]; ++k)
            if (g->col[k] != i)
                adj[xadj[i + 1]++] = g->col[k], adj[xadj[g->col[k] + 1]++] = i;
    /* Now xadj[i] starts list i and xadj[i + 1] ends it; repeated neighbours dropped in place. */
    idx_t out = 0;
    for (idx_t i = 0; i < n; ++i)
        mark[i] = -1;
    for (idx_t i = 0; i < n; ++i) {
        idx_t begin = xadj[i], end = xadj[i + 1];
        xadj[i] = out;
        for (idx_t k = begin; k < end; ++k)
            if (mark[adj[k]] != i)
                mark[adj[k]] = i, adj[out++] = adj[k];
    }
    xadj[n] = out;
    free(mark);
    *xadj_out = xadj, *adj_out = adj;
    return true;
}

/* METIS's parts of the graph, as owners. */
static cmrscl_status metis_parts(const pattern *g, int parts, int32_t *owner)
{
    idx_t *xadj = NULL, *adj = NULL;
    idx_t *weight = malloc(sizeof *weight * ((size_t)g->rows + 1));
    idx_t *part = malloc(sizeof *part * ((size_t)g->rows + 1));
    if (!weight || !part || !symmetric_graph(g, &xadj, &adj)) {
        free(weight), free(part);
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the graph");
    }
    for (int64_t i = 0; i < g->rows; ++i)
        weight[i] = g->len[i] + 1;
    idx_t n = (idx_t)g->rows, constraints = 1, nparts = parts, cut = 0;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 1;
    int rc = METIS_PartGraphKway(&n, &constraints, xadj, adj, weight, NULL, NULL, &nparts, NULL,
                                 NULL, options, &cut, part);
    for (int64_t i = 0; rc == METIS_OK && i < g->rows; ++i)
        owner[i] = (int32_t)part[i];
    free(xadj), free(adj), free(weight), free(part);
    if (rc == METIS_OK)
        return CMRSCL_OK;
    return cmrs_dist_fail(rc == METIS_ERROR_MEMORY ? CMRSCL_ERROR_OUT_OF_HOST_MEMORY
                                                   : CMRSCL_ERROR_UNSUPPORTED,
                          "METIS_PartGraphKway failed (status %d)", rc);
}
#endif

/* Rank 0's choice: the graph's parts where asked (GRAPH) or where they cut the halo enough
 * (AUTO). On the graph's parts, *renumber gets each row's index in the library's numbering
 * and part_first the parts' first rows. halo[0], halo[1]: the row blocks' and the graph's. */
static cmrscl_status choose_on_root(const pattern *g, const int64_t *first, int ranks,
                                    cmrscl_dist_partition asked, cmrscl_dist_partition *chosen,
                                    int64_t halo[2], int32_t *renumber, int64_t *part_first)
{
    int32_t *blocks = malloc(sizeof *blocks * ((size_t)g->rows + 1));
    int32_t *parts = malloc(sizeof *parts * ((size_t)g->rows + 1));
    int32_t *order = malloc(sizeof *order * ((size_t)g->rows + 1));
    if (!blocks || !parts || !order) {
        free(blocks), free(parts), free(order);
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the partition");
    }
    for (int r = 0; r < ranks; ++r)
        for (int64_t i = first[r]; i < first[r + 1]; ++i)
            blocks[i] = r;
    halo[0] = halo_of(g, blocks, NULL, order);
#ifdef CMRSCL_HAVE_METIS
    cmrscl_status st = metis_parts(g, ranks, parts);
#else
    cmrscl_status st = CMRSCL_ERROR_UNSUPPORTED; /* not reached: the caller checks */
#endif
    if (st == CMRSCL_OK) {
        /* The library's numbering: part by part, each part's rows ascending. */
        for (int r = 0; r <= ranks; ++r)
            part_first[r] = 0;
        for (int64_t i = 0; i < g->rows; ++i)
            ++part_first[parts[i] + 1];
        for (int r = 0; r < ranks; ++r)
            part_first[r + 1] += part_first[r];
        int64_t *next = malloc(sizeof *next * ((size_t)ranks + 1));
        if (!next)
            st = cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the partition");
        for (int r = 0; next && r < ranks; ++r)
            next[r] = part_first[r];
        for (int64_t i = 0; next && i < g->rows; ++i)
            renumber[i] = (int32_t)next[parts[i]]++, order[renumber[i]] = (int32_t)i;
        free(next);
    }
    if (st == CMRSCL_OK) {
        int32_t *stamp = blocks; /* the row blocks' owners are no longer needed */
        halo[1] = halo_of(g, parts, order, stamp);
        *chosen = asked == CMRSCL_PARTITION_GRAPH ||
                          (halo[0] > 0 && halo[1] <= DIST_GRAPH_HALO_SHARE * halo[0])
                      ? CMRSCL_PARTITION_GRAPH
                      : CMRSCL_PARTITION_ROWS;
    }
    free(blocks), free(parts), free(order);
    return st;
}

/* ---- every rank: the rows to their parts ---- */

/* An entry of a row being sorted. */
typedef struct entry {
    int32_t col;
    int32_t at; /* its place in the row: equal columns keep their order */
    double value;
} entry;

static int compare_entries(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return x->col != y->col ? (x->col > y->col) - (x->col < y->col)
                            : (x->at > y->at) - (x->at < y->at);
}

/* Each row's entries in ascending column order (equal columns in their order). */
static cmrscl_status sort_rows(cmrscl_csr *c)
{
    int64_t longest = 0;
    for (int32_t i = 0; i < c->rows; ++i)
        if (c->row_ptr[i + 1] - c->row_ptr[i] > longest)
            longest = c->row_ptr[i + 1] - c->row_ptr[i];
    entry *e = malloc(sizeof *e * ((size_t)longest + 1));
    if (!e)
        return cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to sort a row");
    for (int32_t i = 0; i < c->rows; ++i) {
        int64_t b = c->row_ptr[i], n = c->row_ptr[i + 1] - b;
        for (int64_t k = 0; k < n; ++k)
            e[k] = (entry){c->col_ind[b + k], (int32_t)k, c->values[b + k]};
        qsort(e, (size_t)n, sizeof *e, compare_entries);
        for (int64_t k = 0; k < n; ++k)
            c->col_ind[b + k] = e[k].col, c->values[b + k] = e[k].value;
    }
    free(e);
    return CMRSCL_OK;
}

/* The rows of a, whose first row is global row `first`, sent to their parts' ranks; *out
 * this rank's part in the library's numbering (columns renumbered, ascending within each row),
 * *owned its rows' original indices. Rows arrive from the ranks in rank order, each rank's in
 * ascending order: ascending original indices, which the numbering keeps. */
static cmrscl_status move_rows(MPI_Comm comm, const cmrscl_csr *a, int64_t first,
                               const int32_t *renumber, const int64_t *part_first, cmrscl_csr *out,
                               int32_t **owned)
{
    int ranks;
    MPI_Comm_size(comm, &ranks);
    int64_t nnz = a->row_ptr[a->rows];
    /* counts: rows and entries to and from each rank, and where they sit */
    int *counts = calloc(8 * (size_t)ranks, sizeof *counts);
    int *rows_to = counts, *rows_to_at = counts + ranks, *nnz_to = counts + 2 * ranks,
        *nnz_to_at = counts + 3 * ranks, *rows_from = counts + 4 * ranks,
        *rows_from_at = counts + 5 * ranks, *nnz_from = counts + 6 * ranks,
        *nnz_from_at = counts + 7 * ranks;
    int *dest = malloc(sizeof *dest * ((size_t)a->rows + 1));
    int32_t *row_out = malloc(sizeof *row_out * 2 * ((size_t)a->rows + 1));
    int32_t *col_out = malloc(sizeof *col_out * ((size_t)nnz + 1));
    double *val_out = malloc(sizeof *val_out * ((size_t)nnz + 1));
    int32_t *row_in = NULL;
    cmrscl_status st =
        counts && dest && row_out && col_out && val_out
            ? CMRSCL_OK
            : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to move %d rows", a->rows);
    int rc = MPI_SUCCESS;
    if ((st = cmrs_dist_agree(comm, st)) != CMRSCL_OK) {
        free(counts), free(dest), free(row_out), free(col_out), free(val_out);
        return st;
    }
    for (int32_t i = 0; i < a->rows; ++i) {
        dest[i] = cmrs_dist_owner(part_first, ranks, renumber[first + i]);
        rows_to[dest[i]] += 2; /* the original index and the length */
        nnz_to[dest[i]] += (int)(a->row_ptr[i + 1] - a->row_ptr[i]);
    }
    for (int r = 1; r < ranks; ++r)
        rows_to_at[r] = rows_to_at[r - 1] + rows_to[r - 1],
        nnz_to_at[r] = nnz_to_at[r - 1] + nnz_to[r - 1];
    int *row_next = rows_from, *nnz_next = nnz_from; /* cursors, until the counts come */
    memcpy(row_next, rows_to_at, sizeof *row_next * (size_t)ranks);
    memcpy(nnz_next, nnz_to_at, sizeof *nnz_next * (size_t)ranks);
    for (int32_t i = 0; i < a->rows; ++i) {
        int d = dest[i];
        row_out[row_next[d]++] = (int32_t)(first + i);
        row_out[row_next[d]++] = (int32_t)(a->row_ptr[i + 1] - a->row_ptr[i]);
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            col_out[nnz_next[d]] = renumber[a->col_ind[k]], val_out[nnz_next[d]++] = a->values[k];
    }
    rc = MPI_Alltoall(rows_to, 1, MPI_INT, rows_from, 1, MPI_INT, comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Alltoall(nnz_to, 1, MPI_INT, nnz_from, 1, MPI_INT, comm);
    int64_t words = 0, nnz_in = 0;
    for (int r = 0; r < ranks; ++r) {
        rows_from_at[r] = (int)words, nnz_from_at[r] = (int)nnz_in;
        words += rows_from[r], nnz_in += nnz_from[r];
    }
    if (rc != MPI_SUCCESS)
        st = cmrs_dist_fail_mpi(rc, "MPI_Alltoall (rows to their parts)");
    else if ((st = cmrs_dist_csr_alloc((int32_t)(words / 2), a->cols, nnz_in, out)) == CMRSCL_OK &&
             !(row_in = malloc(sizeof *row_in * ((size_t)words + 1))))
        st = cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld rows",
                            (long long)words / 2);
    st = cmrs_dist_agree(comm, st);
    if (st == CMRSCL_OK) {
        rc = MPI_Alltoallv(row_out, rows_to, rows_to_at, MPI_INT32_T, row_in, rows_from,
                           rows_from_at, MPI_INT32_T, comm);
        if (rc == MPI_SUCCESS)
            rc = MPI_Alltoallv(col_out, nnz_to, nnz_to_at, MPI_INT32_T, out->col_ind, nnz_from,
                               nnz_from_at, MPI_INT32_T, comm);
        if (rc == MPI_SUCCESS)
            rc = MPI_Alltoallv(val_out, nnz_to, nnz_to_at, MPI_DOUBLE, out->values, nnz_from,
                               nnz_from_at, MPI_DOUBLE, comm);
        if (rc != MPI_SUCCESS)
            st = cmrs_dist_fail_mpi(rc, "MPI_Alltoallv (rows to their parts)");
    }
    if (st == CMRSCL_OK) {
        for (int32_t i = 0; i < out->rows; ++i) /* the indices, packed to the front */
            out->row_ptr[i + 1] = out->row_ptr[i] + row_in[2 * i + 1], row_in[i] = row_in[2 * i];
        st = sort_rows(out);
    }
    free(counts), free(dest), free(row_out), free(col_out), free(val_out);
    if (st != CMRSCL_OK)
        free(row_in), row_in = NULL, cmrscl_csr_free(out);
    *owned = row_in;
    return st;
}

cmrscl_status cmrs_dist_repartition(MPI_Comm comm, const cmrscl_csr *a, cmrscl_csr *out,
                                    int32_t **owned, cmrscl_dist_partition *chosen, int64_t halo[2])
{
    int rank, ranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    *owned = NULL, *chosen = CMRSCL_PARTITION_ROWS, halo[0] = halo[1] = -1;
    memset(out, 0, sizeof *out);
    cmrscl_dist_partition asked;
    cmrscl_status st = cmrs_dist_agree(comm, asked_partition(&asked));
    if (st == CMRSCL_OK)
        st = cmrs_dist_same_setting(comm, (int)asked, "CMRSCL_DIST_PARTITION");
    if (st != CMRSCL_OK || asked == CMRSCL_PARTITION_ROWS)
        return st;
    /* The row blocks as given, and whether the graph can be partitioned here at all. */
    int64_t *first = malloc(sizeof *first * ((size_t)ranks + 1)), mine = a->rows;
    int64_t nnz = 0, own = a->row_ptr[a->rows];
    st = cmrs_dist_agree(
        comm, first ? CMRSCL_OK : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory"));
    if (st != CMRSCL_OK)
        return free(first), st;
    int rc = MPI_Allgather(&mine, 1, MPI_INT64_T, first + 1, 1, MPI_INT64_T, comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Allreduce(&own, &nnz, 1, MPI_INT64_T, MPI_SUM, comm);
    if (rc != MPI_SUCCESS)
        return free(first), cmrs_dist_fail_mpi(rc, "MPI_Allgather (the partition's rows)");
    first[0] = 0;
    for (int r = 0; r < ranks; ++r)
        first[r + 1] += first[r];
    pattern g = {.rows = first[ranks], .nnz = nnz};
    const char *why = NULL; /* the same verdict on every rank */
#ifndef CMRSCL_HAVE_METIS
    why = "this build has no METIS (libmetis-dev)";
#endif
    if (!why && g.rows != a->cols)
        why = "the matrix is not square";
    else if (!why &&
             (nnz > DIST_GRAPH_MAX_ENTRIES || g.rows + nnz > INT32_MAX || g.rows > INT32_MAX / 2))
        why = "the matrix has too many entries for a partition on one rank";
    else if (!why && ranks == 1)
        why = "one rank";
    if (why) {
        free(first);
        return asked == CMRSCL_PARTITION_GRAPH && ranks > 1
                   ? cmrs_dist_agree(comm, cmrs_dist_fail(CMRSCL_ERROR_UNSUPPORTED,
                                                          "graph partitioning: %s", why))
                   : CMRSCL_OK;
    }
    int64_t verdict[3] = {CMRSCL_PARTITION_ROWS, -1, -1};
    int32_t *renumber = malloc(sizeof *renumber * ((size_t)g.rows + 1));
    int64_t *part_first = malloc(sizeof *part_first * ((size_t)ranks + 1));
    st = cmrs_dist_agree(comm, renumber && part_first
                                   ? CMRSCL_OK
                                   : cmrs_dist_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                                                    "no memory to renumber %lld rows",
                                                    (long long)g.rows));
    if (st == CMRSCL_OK && (st = gather_pattern(comm, a, first, &g)) == CMRSCL_OK) {
        cmrscl_dist_partition c = CMRSCL_PARTITION_ROWS;
        if (rank == 0)
            st = choose_on_root(&g, first, ranks, asked, &c, verdict + 1, renumber, part_first);
        verdict[0] = c;
        pattern_free(&g);
        st = cmrs_dist_agree(comm, st);
    }
    if (st == CMRSCL_OK && (rc = MPI_Bcast(verdict, 3, MPI_INT64_T, 0, comm)) == MPI_SUCCESS &&
        verdict[0] == CMRSCL_PARTITION_GRAPH) {
        rc = MPI_Bcast(renumber, (int)first[ranks], MPI_INT32_T, 0, comm);
        if (rc == MPI_SUCCESS)
            rc = MPI_Bcast(part_first, ranks + 1, MPI_INT64_T, 0, comm);
    }
    if (st == CMRSCL_OK && rc != MPI_SUCCESS)
        st = cmrs_dist_fail_mpi(rc, "MPI_Bcast (the partition)");
    if (st == CMRSCL_OK) {
        *chosen = (cmrscl_dist_partition)verdict[0];
        halo[0] = verdict[1], halo[1] = verdict[2];
        if (*chosen == CMRSCL_PARTITION_GRAPH)
            st = cmrs_dist_agree(comm,
                                 move_rows(comm, a, first[rank], renumber, part_first, out, owned));
    }
    free(first), free(renumber), free(part_first);
    return st;
}
