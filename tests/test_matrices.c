/* test_matrices.c - see test_matrices.h. Matrices are built from coordinate lists, so the
 * CSR builder under test elsewhere is also what shapes them here. */
#include "test_matrices.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

typedef struct coo {
    int32_t rows, cols, n, cap;
    int32_t *ri, *ci;
    double *v;
} coo;

static void add(coo *c, int32_t i, int32_t j, double v)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 256;
        c->ri = realloc(c->ri, sizeof(int32_t) * (size_t)c->cap);
        c->ci = realloc(c->ci, sizeof(int32_t) * (size_t)c->cap);
        c->v = realloc(c->v, sizeof(double) * (size_t)c->cap);
    }
    c->ri[c->n] = i, c->ci[c->n] = j, c->v[c->n++] = v;
}

static void random_rows(coo *c, int32_t first, int32_t last, int max_len)
{
    for (int32_t i = first; i < last; ++i) {
        int len = (int)test_uniform(0, max_len + 1);
        for (int k = 0; k < len && c->cols > 0; ++k)
            add(c, i, (int32_t)test_uniform(0, c->cols), test_uniform(-1, 1));
    }
}

static const char *build(int i, coo *c)
{
    switch (i) {
    case 0: c->rows = 0, c->cols = 0; return "0x0";
    case 1: c->rows = 9, c->cols = 0; return "9x0";
    case 2: c->rows = 0, c->cols = 9; return "0x9";
    case 3: c->rows = 50, c->cols = 50; return "50x50 nnz=0";
    case 4: /* the paper's 5x5 example */
        c->rows = c->cols = 5;
        {
            static const int32_t r[] = {0, 0, 1, 1, 2, 2, 3, 3, 3, 4};
            static const int32_t k[] = {0, 3, 1, 4, 2, 4, 2, 3, 4, 4};
            for (int e = 0; e < 10; ++e)
                add(c, r[e], k[e], e + 1);
        }
        return "paper 5x5";
    case 5: /* 37 rows: not a multiple of most heights; every 3rd row and rows 16..31 empty */
        c->rows = c->cols = 37;
        for (int32_t r = 0; r < 37; ++r)
            if (r % 3 && (r < 16 || r > 31))
                add(c, r, (r * 7) % 37, r + 0.5), add(c, r, (r * 11) % 37, -r);
        return "37x37 empty rows and strips";
    case 6: /* one dense row far longer than a warp among short rows */
        c->rows = 70, c->cols = 600;
        random_rows(c, 0, 70, 3);
        for (int32_t j = 0; j < 600; ++j)
            add(c, 33, j, test_uniform(-1, 1));
        return "70x600 one dense row";
    case 7: c->rows = 20, c->cols = 333, random_rows(c, 0, 20, 60); return "20x333 wide";
    case 8: c->rows = 333, c->cols = 20, random_rows(c, 0, 333, 8); return "333x20 tall";
    case 9: c->rows = c->cols = 1500, random_rows(c, 0, 1500, 40); return "1500x1500 random";
    case 10: /* a banded matrix: structure correlated between neighbouring rows */
        c->rows = c->cols = 1001;
        for (int32_t r = 0; r < 1001; ++r)
            for (int32_t j = r - 3; j <= r + 3; ++j)
                if (j >= 0 && j < 1001)
                    add(c, r, j, j == r ? 4.0 : -1.0 + 0.001 * r);
        return "1001x1001 band";
    case 11: /* one row only, with every column */
        c->rows = 1, c->cols = 257;
        for (int32_t j = 0; j < 257; ++j)
            add(c, 0, j, 1.0 / (j + 1));
        return "1x257 single row";
    default: return NULL;
    }
}

int test_matrix_count(void) { return 12; }

const char *test_matrix_build(int i, cmrscl_csr *out)
{
    coo c = {0};
    test_seed(1000 + (unsigned long long)i);
    const char *name = build(i, &c);
    CHECK_OK(cmrscl_csr_from_coo(c.rows, c.cols, c.n, c.ri, c.ci, c.v, out));
    free(c.ri), free(c.ci), free(c.v);
    return name;
}

cmrscl_csr test_csr_rounded(const cmrscl_csr *a, cmrscl_precision precision)
{
    cmrscl_csr b = *a;
    b.row_ptr = malloc(sizeof(int64_t) * ((size_t)a->rows + 1));
    b.col_ind = malloc(sizeof(int32_t) * ((size_t)a->nnz + 1));
    b.values = malloc(sizeof(double) * ((size_t)a->nnz + 1));
    memcpy(b.row_ptr, a->row_ptr, sizeof(int64_t) * ((size_t)a->rows + 1));
    memcpy(b.col_ind, a->col_ind, sizeof(int32_t) * (size_t)a->nnz);
    for (int64_t k = 0; k < a->nnz; ++k)
        b.values[k] = precision == CMRSCL_FLOAT ? (double)(float)a->values[k] : a->values[k];
    return b;
}

void test_csr_reverse_rows(cmrscl_csr *a)
{
    for (int32_t i = 0; i < a->rows; ++i)
        for (int64_t lo = a->row_ptr[i], hi = a->row_ptr[i + 1] - 1; lo < hi; ++lo, --hi) {
            int32_t c = a->col_ind[lo];
            double v = a->values[lo];
            a->col_ind[lo] = a->col_ind[hi], a->values[lo] = a->values[hi];
            a->col_ind[hi] = c, a->values[hi] = v;
        }
}
