/* gen_geo.c - geo:N:K, the generator of a mesh-like graph problem (for gen.c). */
#include "io/io.h"

#include <math.h>
#include <stdlib.h>

/* The graph Laplacian of a random geometric graph, the mesh-like graph problem (Delaunay
 * meshes, road networks): n points uniform in the unit square, each joined to every point
 * within the radius that gives a mean degree of k (r = sqrt(k / (pi n))), weights 1, shifted by
 * GEO_SHIFT x k on the diagonal so that it is positive definite: L = D - W + GEO_SHIFT k I.
 * Points are numbered cell by cell of a grid of r-wide cells (a mesh file's spatial order),
 * so neighbours sit in nearby rows. Large-diameter graphs need a thousand Jacobi-CG
 * iterations and more where R-MAT and uniform random graphs (expanders) need tens: the graph
 * problem AMG is for (GEO_SHIFT, io.h). */
typedef struct geo_point {
    double x, y;
    int64_t cell;
} geo_point;

static int geo_by_cell(const void *a, const void *b)
{
    const geo_point *p = a, *q = b;
    if (p->cell != q->cell)
        return p->cell < q->cell ? -1 : 1;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return (p->y > q->y) - (p->y < q->y); /* (equal points are interchangeable) */
}

static int geo_by_column(const void *a, const void *b)
{
    int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
    return (i > j) - (i < j);
}

/* Point i's neighbours within r and itself, in near[] by column; how many. near holds the
 * points of nine cells: about 2.9 k on average, never near its 8 k + 4096 (a Poisson tail). */
static int64_t neighbours(const geo_point *pt, const int64_t *first, int64_t m, double r, int64_t i,
                          int32_t *near)
{
    int64_t cx = pt[i].cell % m, cy = pt[i].cell / m, count = 0;
    for (int64_t y = cy - 1; y <= cy + 1; ++y)
        for (int64_t x = cx - 1; x <= cx + 1; ++x) {
            if (x < 0 || y < 0 || x >= m || y >= m)
                continue;
            for (int64_t j = first[y * m + x]; j < first[y * m + x + 1]; ++j) {
                double dx = pt[j].x - pt[i].x, dy = pt[j].y - pt[i].y;
                if (j != i && dx * dx + dy * dy <= r * r)
                    near[count++] = (int32_t)j;
            }
        }
    near[count++] = (int32_t)i;
    qsort(near, (size_t)count, sizeof *near, geo_by_column);
    return count;
}

cmrscl_status cmrs_gen_geo(long n, long k, uint64_t seed, cmrscl_csr *out)
{
    if (n < 1 || k < 1 || n > INT32_MAX || k > 1000) /* a count too large, or none */
        return cmrscl_fail(n > INT32_MAX || k > 1000 ? CMRSCL_ERROR_TOO_LARGE
                                                     : CMRSCL_ERROR_INVALID_ARGUMENT,
                           "geo:%ld:%ld is outside N 1..%d, K 1..1000", n, k, INT32_MAX);
    const double r = sqrt((double)k / (3.141592653589793 * (double)n));
    const int64_t m = r >= 1 ? 1 : (int64_t)(1.0 / r); /* cells a side, each >= r wide */
    geo_point *pt = cmrscl_alloc((size_t)n, sizeof *pt);
    int64_t *first = cmrscl_alloc((size_t)(m * m + 1), sizeof(int64_t));
    int32_t *near = cmrscl_alloc((size_t)(8 * k + 4096), sizeof(int32_t));
    /* entries: about n (k + 1), grown by doubling where a denser corner needs more */
    int64_t cap = n * (k + 1) + 1024, nnz = 0;
    cmrscl_csr a = {(int32_t)n,
                    (int32_t)n,
                    0,
                    cmrscl_alloc((size_t)n + 1, sizeof(int64_t)),
                    cmrscl_alloc((size_t)cap, sizeof(int32_t)),
                    cmrscl_alloc((size_t)cap, sizeof(double))};
    cmrscl_status st =
        pt && first && near && a.row_ptr && a.col_ind && a.values
            ? CMRSCL_OK
            : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for geo:%ld:%ld", n, k);
    uint64_t state = seed;
    for (long i = 0; st == CMRSCL_OK && i < n; ++i) {
        pt[i].x = cmrs_gen_unit(&state), pt[i].y = cmrs_gen_unit(&state);
        int64_t cx = (int64_t)(pt[i].x * (double)m), cy = (int64_t)(pt[i].y * (double)m);
        pt[i].cell = (cy < m ? cy : m - 1) * m + (cx < m ? cx : m - 1);
    }
    if (st == CMRSCL_OK) {
        qsort(pt, (size_t)n, sizeof *pt, geo_by_cell);
        for (int64_t c = 0, i = 0; c <= m * m; ++c) {
            while (i < n && pt[i].cell < c)
                ++i;
            first[c] = i;
        }
        a.row_ptr[0] = 0;
    }
    for (int64_t i = 0; st == CMRSCL_OK && i < n; ++i) {
        int64_t count = neighbours(pt, first, m, r, i, near);
        if (nnz + count > cap) {
            cap = 2 * cap + count;
            int32_t *ci = realloc(a.col_ind, (size_t)cap * sizeof(int32_t));
            a.col_ind = ci ? ci : a.col_ind;
            double *v = ci ? realloc(a.values, (size_t)cap * sizeof(double)) : NULL;
            a.values = v ? v : a.values;
            if (!v)
                st =
                    cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for geo:%ld:%ld", n, k);
        }
        for (int64_t e = 0; st == CMRSCL_OK && e < count; ++e, ++nnz) {
            a.col_ind[nnz] = near[e];
            a.values[nnz] = near[e] == i ? (double)(count - 1) + GEO_SHIFT * (double)k : -1.0;
        }
        a.row_ptr[i + 1] = nnz;
    }
    free(pt), free(first), free(near);
    a.nnz = nnz;
    if (st != CMRSCL_OK)
        cmrscl_csr_free(&a);
    else
        *out = a;
    return st;
}
