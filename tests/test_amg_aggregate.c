/* test_amg_aggregate.c - AMG's aggregation (host/precond/amg_aggregate.c, issue 57) on a
 * matrix all of whose couplings are strong, in place of the strength's pattern: the same
 * aggregates, and the shortcut refused where a coupling is weak. */
#include "precond/precond.h"
#include "test_util.h"

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

int main(void)
{
    test_all_strong();
    return test_finish("amg_aggregate");
}
