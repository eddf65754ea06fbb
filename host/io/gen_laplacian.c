/* gen_laplacian.c - lap:SPEC, the shifted graph Laplacian of another spec's pattern (for gen.c).
 *
 * The graph joins i and j wherever A holds a_ij or a_ji (i != j), weights 1:
 * L = D - W + GEO_SHIFT k I, k the mean degree - the shift geo:N:K takes (io.h). It is
 * symmetric positive definite and keeps the rows of the pattern it came from: R-MAT's hubs
 * and the skewed class's long rows in a matrix CG and AMG can solve, the graph problems of
 * power-law graphs, where the classes that have such rows are not symmetric. */
#include "io/io.h"

#include <stdlib.h>

/* Row i's neighbours: the union of a's row i and t's (a's transpose) row i without i itself,
 * both ascending, written to cols[] (NULL: counted only); how many. */
static int64_t neighbours(const cmrscl_csr *a, const cmrscl_csr *t, int32_t i, int32_t *cols)
{
    int64_t p = a->row_ptr[i], pe = a->row_ptr[i + 1], q = t->row_ptr[i], qe = t->row_ptr[i + 1];
    int64_t n = 0;
    int32_t last = -1;
    while (p < pe || q < qe) {
        int32_t j = q == qe || (p < pe && a->col_ind[p] <= t->col_ind[q]) ? a->col_ind[p++]
                                                                          : t->col_ind[q++];
        if (j == i || j == last)
            continue;
        if (cols)
            cols[n] = j;
        ++n, last = j;
    }
    return n;
}

cmrscl_status cmrs_gen_laplacian(const cmrscl_csr *a, cmrscl_csr *out)
{
    if (a->rows != a->cols)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "lap: a graph Laplacian needs a square pattern, not %d x %d", a->rows,
                           a->cols);
    cmrscl_csr t = {0}, l = {a->rows, a->cols, 0, NULL, NULL, NULL};
    cmrscl_status st = cmrscl_csr_transpose(a, &t);
    if (st != CMRSCL_OK)
        return st;
    const int32_t n = a->rows;
    l.row_ptr = cmrscl_alloc((size_t)n + 1, sizeof(int64_t));
    if (!l.row_ptr) {
        cmrscl_csr_free(&t);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d rows", n);
    }
    l.row_ptr[0] = 0;
    int64_t edges = 0; /* off-diagonal entries: twice the edges */
    for (int32_t i = 0; i < n; ++i) {
        int64_t degree = neighbours(a, &t, i, NULL);
        edges += degree;
        l.row_ptr[i + 1] = l.row_ptr[i] + degree + 1;
    }
    l.nnz = l.row_ptr[n];
    l.col_ind = cmrscl_alloc((size_t)l.nnz, sizeof(int32_t));
    l.values = cmrscl_alloc((size_t)l.nnz, sizeof(double));
    if (!l.col_ind || !l.values) {
        cmrscl_csr_free(&t), cmrscl_csr_free(&l);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld entries",
                           (long long)l.nnz);
    }
    const double shift = GEO_SHIFT * (n ? (double)edges / n : 0.0);
    for (int32_t i = 0; i < n; ++i) {
        int32_t *cols = l.col_ind + l.row_ptr[i];
        double *vals = l.values + l.row_ptr[i];
        int64_t degree = l.row_ptr[i + 1] - l.row_ptr[i] - 1;
        neighbours(a, &t, i, cols + 1); /* after the slot the diagonal may take */
        int64_t k = 0;                  /* the diagonal's place among the ascending columns */
        for (; k < degree && cols[k + 1] < i; ++k) {
            cols[k] = cols[k + 1];
            vals[k] = -1.0;
        }
        cols[k] = i;
        vals[k] = (double)degree + shift;
        for (++k; k <= degree; ++k)
            vals[k] = -1.0;
    }
    cmrscl_csr_free(&t);
    *out = l;
    return CMRSCL_OK;
}
