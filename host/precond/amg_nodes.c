/* amg_nodes.c - the matrix of the nodes (issue 57): where a level's unknowns come in nodes (3-D
 * elasticity: a point's x, y and z; a coarse level: one aggregate's candidates), strength and
 * aggregation work on a matrix of the nodes, each entry the Frobenius norm of A's block.
 *
 * Made in pieces of nodes on the host's threads, twice - first each node's columns counted,
 * then written where the counts place them - each node as one thread would make it: its rows'
 * columns merged in ascending order (sorted first where a row's are not: CSR's columns may come
 * in any order), a column's squares added in the order of the rows and of their entries, so the
 * same bits on any number of threads. */
#include "precond/precond.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

/* A's entries a piece of nodes takes: elasticity's nodes hold three rows of about 80 entries,
 * its coarse levels' six of about 150 - pieces of AMG_PIECE nodes would leave a coarse level's
 * matrix of the nodes to one or two threads. */
#define NODES_PIECE_ENTRIES ((int64_t)1 << 16)

typedef struct nodes_job {
    const cmrscl_csr *a;
    const int64_t *node_ptr;
    const int32_t *node_of; /* each row's node */
    int32_t nodes;
    int32_t longest;      /* the most rows a node has */
    int64_t most_entries; /* the most entries a node's rows have */
    int64_t span;         /* nodes a piece */
    cmrscl_csr *out;      /* row_ptr: the counts first (at n + 1), then where rows start */
    bool fill;            /* the second pass: write */
    atomic_bool failed;   /* a piece without memory for its rows' places */
} nodes_job;

/* A piece's scratch: the next entry of each of a node's rows, and where a node's rows are not
 * each in ascending order of their nodes (A's columns may come in any order), its entries by
 * their columns' nodes. */
typedef struct node_scratch {
    int64_t *at;
    cmrs_entry *e, *tmp;
} node_scratch;

/* Whether every row of node n lists its columns' nodes in ascending order (repeats allowed). */
static bool rows_ascend(const nodes_job *j, int64_t first, int32_t rows)
{
    const cmrscl_csr *a = j->a;
    for (int32_t r = 0; r < rows; ++r)
        for (int64_t k = a->row_ptr[first + r] + 1; k < a->row_ptr[first + r + 1]; ++k)
            if (j->node_of[a->col_ind[k]] < j->node_of[a->col_ind[k - 1]])
                return false;
    return true;
}

/* Writes (filling) column m's norm from its squares' sum as entry `written` of node n. */
static void put(const nodes_job *j, int32_t n, int64_t written, int32_t m, double sum)
{
    if (j->fill) {
        j->out->col_ind[j->out->row_ptr[n] + written] = m;
        j->out->values[j->out->row_ptr[n] + written] = sqrt(sum);
    }
}

/* Node n's entries sorted by their nodes, stably: each column's squares then add up in the
 * order of the rows and entries, as for rows that ascend. */
static int64_t node_row_sorted(const nodes_job *j, int32_t n, node_scratch *w)
{
    const cmrscl_csr *a = j->a;
    int64_t count = 0;
    for (int64_t i = j->node_ptr[n]; i < j->node_ptr[n + 1]; ++i)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            w->e[count++] = (cmrs_entry){j->node_of[a->col_ind[k]], k};
    cmrs_sort_entries(w->e, w->tmp, count);
    int64_t written = 0;
    for (int64_t x = 0; x < count;) {
        const int32_t m = w->e[x].col;
        double sum = 0;
        for (; x < count && w->e[x].col == m; ++x)
            sum += a->values[w->e[x].entry] * a->values[w->e[x].entry];
        put(j, n, written++, m, sum);
    }
    return written;
}

/* Node n's columns (ascending) and, filling, their norms from row_ptr[n] on; returns how many.
 * Where each row ascends, the rows are merged by column (at[r]: row r's next entry), a tie
 * taken from the lower row first, so a column's squares add up in the order of the rows and
 * entries; else its entries are sorted (node_row_sorted). */
static int64_t node_row(const nodes_job *j, int32_t n, node_scratch *w)
{
    const cmrscl_csr *a = j->a;
    const int64_t first = j->node_ptr[n];
    const int32_t rows = (int32_t)(j->node_ptr[n + 1] - first);
    if (!rows_ascend(j, first, rows))
        return node_row_sorted(j, n, w);
    int64_t *at = w->at;
    for (int32_t r = 0; r < rows; ++r)
        at[r] = a->row_ptr[first + r];
    int64_t written = 0;
    for (;;) {
        int32_t m = -1; /* the lowest column left in any of the rows */
        for (int32_t r = 0; r < rows; ++r)
            if (at[r] < a->row_ptr[first + r + 1]) {
                int32_t c = j->node_of[a->col_ind[at[r]]];
                m = m < 0 || c < m ? c : m;
            }
        if (m < 0)
            return written;
        double sum = 0;
        for (int32_t r = 0; r < rows; ++r)
            for (; at[r] < a->row_ptr[first + r + 1] && j->node_of[a->col_ind[at[r]]] == m; ++at[r])
                sum += a->values[at[r]] * a->values[at[r]];
        put(j, n, written++, m, sum);
    }
}

static void nodes_piece(void *ctx, int64_t piece)
{
    nodes_job *j = ctx;
    const int64_t begin = piece * j->span,
                  end = begin + j->span < j->nodes ? begin + j->span : j->nodes;
    node_scratch w = {malloc(((size_t)j->longest + 1) * sizeof *w.at),
                      malloc(((size_t)j->most_entries + 1) * sizeof *w.e),
                      malloc(((size_t)j->most_entries + 1) * sizeof *w.tmp)};
    for (int64_t n = begin; w.at && w.e && w.tmp && n < end; ++n) {
        int64_t count = node_row(j, (int32_t)n, &w);
        if (!j->fill)
            j->out->row_ptr[n + 1] = count;
    }
    if (!w.at || !w.e || !w.tmp)
        atomic_store(&j->failed, true);
    free(w.at), free(w.e), free(w.tmp);
}

cmrscl_status cmrs_amg_amalgamate(const cmrscl_csr *a, const int64_t *node_ptr, int32_t nodes,
                                  cmrscl_csr *out)
{
    *out = (cmrscl_csr){nodes, nodes, 0, NULL, NULL, NULL};
    int32_t *node_of = cmrs_parallel_alloc((size_t)a->rows + 1, sizeof(int32_t));
    out->row_ptr = cmrscl_alloc((size_t)nodes + 1, sizeof(int64_t));
    if (!node_of || !out->row_ptr) {
        free(node_of);
        cmrscl_csr_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG nodes: %d", (int)nodes);
    }
    nodes_job job = {.a = a, .node_ptr = node_ptr, .node_of = node_of, .nodes = nodes, .out = out};
    for (int32_t n = 0; n < nodes; ++n) {
        const int64_t rows = node_ptr[n + 1] - node_ptr[n];
        const int64_t entries = a->row_ptr[node_ptr[n + 1]] - a->row_ptr[node_ptr[n]];
        job.longest = rows > job.longest ? (int32_t)rows : job.longest;
        job.most_entries = entries > job.most_entries ? entries : job.most_entries;
        for (int64_t i = node_ptr[n]; i < node_ptr[n + 1]; ++i)
            node_of[i] = n;
    }
    atomic_init(&job.failed, false);
    const int threads = cmrs_parallel_threads();
    /* (a piece about NODES_PIECE_ENTRIES of A's entries) */
    job.span = cmrs_amg_span(nodes, a->nnz, NODES_PIECE_ENTRIES);
    const int64_t pieces = (nodes + job.span - 1) / job.span;
    cmrs_parallel_pieces(threads, pieces, nodes_piece, &job);
    if (atomic_load(&job.failed)) { /* (some counts not written) */
        free(node_of);
        cmrscl_csr_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG nodes: %d", (int)nodes);
    }
    out->row_ptr[0] = 0;
    for (int32_t n = 0; n < nodes; ++n)
        out->row_ptr[n + 1] += out->row_ptr[n];
    out->nnz = out->row_ptr[nodes];
    out->col_ind = cmrs_parallel_alloc((size_t)out->nnz + 1, sizeof(int32_t));
    out->values = cmrs_parallel_alloc((size_t)out->nnz + 1, sizeof(double));
    job.fill = true;
    if (!atomic_load(&job.failed) && out->col_ind && out->values)
        cmrs_parallel_pieces(threads, pieces, nodes_piece, &job);
    free(node_of);
    if (!atomic_load(&job.failed) && out->col_ind && out->values)
        return CMRSCL_OK;
    cmrscl_csr_free(out);
    return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG nodes: %d", (int)nodes);
}
