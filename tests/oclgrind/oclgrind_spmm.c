/* oclgrind_spmm.c - the block product (cl/cmrs_spmm.cl) under Oclgrind: test_oclgrind spmm
 * float|double. */
#include "oclgrind_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One block product Y = alpha*A*X + beta*Y of k vectors (packed) on exact-size device buffers,
 * each vector checked against the CPU double reference (test_block_ratio). */
static void check_block(const env *e, cmrscl_matrix m, const cmrscl_csr *ref_a,
                        cmrscl_precision prec, cmrscl_dense_order order, int k, const char *what)
{
    size_t vs = cmrscl_precision_size(prec);
    size_t xn = (size_t)ref_a->cols * (size_t)k, yn = (size_t)ref_a->rows * (size_t)k;
    void *xd = malloc(vs * (xn + 1)), *y0 = malloc(vs * (yn + 1)), *yd = malloc(vs * (yn + 1));
    for (size_t i = 0; i < xn; ++i)
        put(xd, prec, i, test_uniform(-1, 1));
    for (size_t i = 0; i < yn; ++i)
        put(y0, prec, i, test_uniform(-1, 1));
    memcpy(yd, y0, vs * yn);
    cl_mem xb = exact_buffer(e, CL_MEM_READ_ONLY, vs * xn, xd);
    cl_mem yb = exact_buffer(e, CL_MEM_READ_WRITE, vs * yn, yd);
    CHECK_OK(cmrscl_spmm(m, order, k, -1.5, xb, 0, 0.5, yb, 0, NULL, 0, NULL, NULL));
    if (yb) {
        cl_int err = clEnqueueReadBuffer(e->queue, yb, CL_TRUE, 0, vs * yn, yd, 0, NULL, NULL);
        CHECK_MSG(err == CL_SUCCESS, "%s: clEnqueueReadBuffer failed (%d)", what, (int)err);
    }
    bool rm = order == CMRSCL_ROW_MAJOR;
    double worst =
        test_block_ratio(ref_a, prec, -1.5, 0.5, order, k, xd, rm ? (size_t)k : (size_t)ref_a->cols,
                         y0, yd, rm ? (size_t)k : (size_t)ref_a->rows);
    CHECK_MSG(worst <= 1.0, "%s, k %d %s: error %.3g x the rounding bound", what, k,
              rm ? "row-major" : "column-major", worst);
    if (xb)
        clReleaseMemObject(xb);
    if (yb)
        clReleaseMemObject(yb);
    free(xd), free(y0), free(yd);
}

int run_spmm(const env *e, cmrscl_precision prec)
{
    enum { PLANS = 4 };
    static const char *const names[PLANS] = {"slice h32 (narrow where the steps fit)",
                                             "strip h4 unpacked", "segment h8",
                                             "strip h1, long strips in tiles of 8"};
    static const struct {
        cmrscl_dense_order order;
        int k;
    } blocks[] = {{CMRSCL_ROW_MAJOR, 24}, {CMRSCL_ROW_MAJOR, 8}, {CMRSCL_COLUMN_MAJOR, 3}};
    /* Every matrix is kept to the end: when a matrix's buffers were freed and the next one's
     * made, Oclgrind 21.10's uninitialised-value check flagged cmrs_spmm_combine's reads of
     * partial sums cmrs_spmm had written (NaN in a fresh buffer never reached the results;
     * each matrix alone, or all kept: no report) - session 22, strips in tiles of 8. */
    cmrscl_matrix kept[PLANS * MATRIX_COUNT] = {0};
    int products = 0;
    for (int pl = 0; pl < PLANS; ++pl) {
        cmrscl_options opt = {0};
        opt.kernel = pl == 0   ? CMRSCL_KERNEL_SLICE
                     : pl == 2 ? CMRSCL_KERNEL_SEGMENT
                               : CMRSCL_KERNEL_STRIP;
        opt.height = (int[]){32, 4, 8, 1}[pl];
        opt.layout = pl == 1 ? CMRSCL_LAYOUT_UNPACKED : CMRSCL_LAYOUT_PACKED;
        opt.reduce = CMRSCL_REDUCE_LOCAL;
        opt.tile = pl == 3 ? 8 : -1;
        opt.index_bits = index_bits;
        for (int i = 0; i < MATRIX_COUNT; ++i) {
            cmrscl_csr a;
            const char *name = build_matrix(i, &a);
            cmrscl_csr ref_a = test_csr_rounded(&a, prec);
            char what[200];
            snprintf(what, sizeof what, "%s, %s", name, names[pl]);
            cmrscl_matrix *m = &kept[pl * MATRIX_COUNT + i];
            CHECK_OK(cmrscl_matrix_create_from_csr(e->ctx, prec, &a, &opt, m));
            for (size_t b = 0; *m && b < sizeof blocks / sizeof blocks[0]; ++b, ++products)
                check_block(e, *m, &ref_a, prec, blocks[b].order, blocks[b].k, what);
            cmrscl_csr_free(&ref_a);
            cmrscl_csr_free(&a);
        }
    }
    for (int i = 0; i < PLANS * MATRIX_COUNT; ++i)
        cmrscl_matrix_free(kept[i]);
    printf("spmm %s: %d block products checked (%d plans, %d matrices, k 24 and 8 row-major, 3 "
           "column-major)\n",
           cmrscl_precision_name(prec), products, PLANS, MATRIX_COUNT);
    return test_finish("oclgrind spmm");
}
