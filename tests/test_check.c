/* test_check.c - the checker every product is judged by (cmrscl_csr_spmv_check) must reject
 * what is wrong, not only accept what is right. On the catalogue and generated matrices, for
 * each (alpha, beta) of the grid the product tests use, with y0 random:
 *   - the reference itself, and the reference summed in another order (rows backwards),
 *     pass;
 *   - one entry moved to just inside its bound passes, just beyond it (a part in 2^30 past)
 *     fails, and so do all rows wrong by twice their own bounds;
 *   - two rows of a strip swapped (a kernel's indexing slip) fails where they differ;
 *   - NaN or Inf in y where the reference has none fails (bound ratio infinity), and so does
 *     a finite y where the reference is NaN;
 *   - beta = 0 reads no y0 (NaN there changes nothing);
 *   - the reference's own sums are exact where double's cancel (1e16 + 10 - 1e16; 1 - 0.1 x 10);
 * and the relative error it reports is ||y - ref|| / ||ref||, computed here apart. The bound
 * (cmrscl_host.h) is computed here again, row by row, from its definition. */
#include "test_matrices.h"
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double grid[][2] = {{1, 0}, {-1.5, 0.5}, {2.5, 1}, {0, 1}, {1, -1}};
static int rejected, accepted; /* the cases that ran, counted (a case on no row is no check) */

/* The bound of row i by its definition: (len + 10) u (|alpha| sum |a x| + |beta y0|). */
static double row_bound(const cmrscl_csr *a, int i, double alpha, const double *x, double beta,
                        const double *y0, double u)
{
    double mag = 0;
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
        mag += fabs(a->values[k] * x[a->col_ind[k]]);
    mag = fabs(alpha) * mag + (beta != 0 ? fabs(beta * y0[i]) : 0);
    return (double)(a->row_ptr[i + 1] - a->row_ptr[i] + 10) * u * mag;
}

static double ratio_of(const cmrscl_csr *a, double alpha, const double *x, double beta,
                       const double *y0, const double *y, double u, double *rel)
{
    double ratio = -1, r = -1;
    CHECK_OK(cmrscl_csr_spmv_check(a, alpha, x, beta, y0, y, u, &r, &ratio));
    if (rel)
        *rel = r;
    return ratio;
}

static void expect(bool pass, double ratio, const char *what, const char *name, double alpha,
                   double beta)
{
    bool ok = pass ? ratio <= 1.0 : !(ratio <= 1.0);
    CHECK_MSG(ok, "%s, alpha %g beta %g: %s gives bound ratio %g, expected %s", name, alpha, beta,
              what, ratio, pass ? "<= 1" : "> 1");
    pass ? ++accepted : ++rejected;
}

/* The double nearest ref + b whose distance from ref, as the checker computes it, is on the
 * side of f |b| that f asks for: inside the bound for f < 1, past it for f > 1 (ref's own
 * rounding is a tenth of a bound in double: stepping by ulps, not scaling b, decides). */
static double near_bound(double ref, double b, double f)
{
    double y = ref + b, target = f * fabs(b), toward = f < 1 ? ref : (b > 0 ? INFINITY : -INFINITY);
    while (f < 1 ? fabs(y - ref) > target : fabs(y - ref) <= target)
        y = nextafter(y, toward);
    return y;
}

/* y = alpha A x + beta y0 with each row summed from its last entry to its first. */
static void backwards(const cmrscl_csr *a, double alpha, const double *x, double beta,
                      const double *y0, double *y)
{
    for (int i = 0; i < a->rows; ++i) {
        double s = 0;
        for (int64_t k = a->row_ptr[i + 1] - 1; k >= a->row_ptr[i]; --k)
            s += a->values[k] * x[a->col_ind[k]];
        y[i] = alpha * s + (beta != 0 ? beta * y0[i] : 0);
    }
}

static void check_matrix(const cmrscl_csr *a, const char *name)
{
    int n = a->rows;
    size_t rows = (size_t)n + 1, cols = (size_t)a->cols + 1;
    double *x = malloc(sizeof(double) * cols), *y0 = malloc(sizeof(double) * rows);
    double *ref = malloc(sizeof(double) * rows), *y = malloc(sizeof(double) * rows);
    for (int j = 0; j < a->cols; ++j)
        x[j] = test_uniform(-1, 1);
    for (int i = 0; i < n; ++i)
        y0[i] = test_uniform(-2, 2);
    for (size_t g = 0; g < sizeof grid / sizeof grid[0]; ++g) {
        for (int p = 0; p < 2; ++p) {
            double alpha = grid[g][0], beta = grid[g][1], u = p ? 0x1p-24 : 0x1p-53;
            memcpy(ref, y0, sizeof(double) * (size_t)n);
            CHECK_OK(cmrscl_csr_spmv(a, alpha, x, beta, ref));
            memcpy(y, ref, sizeof(double) * (size_t)n);
            expect(true, ratio_of(a, alpha, x, beta, y0, y, u, NULL), "the reference", name, alpha,
                   beta);
            backwards(a, alpha, x, beta, y0, y);
            expect(true, ratio_of(a, alpha, x, beta, y0, y, u, NULL), "rows summed backwards", name,
                   alpha, beta);
            /* the row of the largest bound, and one entry moved inside and past it */
            int worst = -1;
            double wb = 0;
            for (int i = 0; i < n; ++i) {
                double b = row_bound(a, i, alpha, x, beta, y0, u);
                if (b > wb)
                    wb = b, worst = i;
            }
            if (worst >= 0) {
                memcpy(y, ref, sizeof(double) * (size_t)n);
                y[worst] = near_bound(ref[worst], wb, 1 - 0x1p-30);
                expect(true, ratio_of(a, alpha, x, beta, y0, y, u, NULL), "one entry inside", name,
                       alpha, beta);
                y[worst] = near_bound(ref[worst], -wb, 1 + 0x1p-30);
                expect(false, ratio_of(a, alpha, x, beta, y0, y, u, NULL), "one entry past", name,
                       alpha, beta);
                for (int i = 0; i < n; ++i) /* every row by twice its own bound */
                    y[i] = ref[i] + 2 * row_bound(a, i, alpha, x, beta, y0, u);
                double rel, want2 = 0, ref2 = 0;
                expect(false, ratio_of(a, alpha, x, beta, y0, y, u, &rel), "every row twice out",
                       name, alpha, beta);
                for (int i = 0; i < n; ++i)
                    want2 += (y[i] - ref[i]) * (y[i] - ref[i]), ref2 += ref[i] * ref[i];
                double want = ref2 > 0 ? sqrt(want2 / ref2) : sqrt(want2);
                CHECK_MSG(fabs(rel - want) <= 1e-12 * want + DBL_MIN,
                          "%s: relative error %g, expected %g", name, rel, want);
                /* NaN and Inf where the reference is finite */
                memcpy(y, ref, sizeof(double) * (size_t)n);
                y[worst] = NAN;
                double r = ratio_of(a, alpha, x, beta, y0, y, u, NULL);
                expect(false, r, "NaN in y", name, alpha, beta);
                CHECK_MSG(isinf(r), "%s: NaN in y gives %g, not infinity", name, r);
                y[worst] = -INFINITY;
                expect(false, ratio_of(a, alpha, x, beta, y0, y, u, NULL), "-Inf in y", name, alpha,
                       beta);
            }
            /* two neighbouring rows swapped where they differ beyond their bounds */
            for (int i = 0; i + 1 < n; ++i) {
                double d = fabs(ref[i] - ref[i + 1]);
                if (d > 4 * (row_bound(a, i, alpha, x, beta, y0, u) +
                             row_bound(a, i + 1, alpha, x, beta, y0, u))) {
                    memcpy(y, ref, sizeof(double) * (size_t)n);
                    y[i] = ref[i + 1], y[i + 1] = ref[i];
                    expect(false, ratio_of(a, alpha, x, beta, y0, y, u, NULL), "rows swapped", name,
                           alpha, beta);
                    break;
                }
            }
        }
    }
    /* beta = 0: y0 is not read; a NaN reference row (x has NaN) with a finite y fails */
    if (n > 0 && a->cols > 0 && a->nnz > 0) {
        for (int i = 0; i < n; ++i)
            y0[i] = NAN;
        CHECK_OK(cmrscl_csr_spmv(a, 1.5, x, 0.0, ref));
        expect(true, ratio_of(a, 1.5, x, 0.0, y0, ref, 0x1p-53, NULL), "NaN y0, beta 0", name, 1.5,
               0.0);
        int c = a->col_ind[a->row_ptr[n] - 1];
        double saved = x[c];
        x[c] = NAN;
        memcpy(y, ref, sizeof(double) * (size_t)n);
        expect(false, ratio_of(a, 1.5, x, 0.0, y0, y, 0x1p-53, NULL), "finite y, NaN reference",
               name, 1.5, 0.0);
        x[c] = saved;
    }
    free(x), free(y0), free(ref), free(y);
}

/* The reference carries its sums' and products' rounding: a row that cancels in double keeps
 * its value, as b - A x must where x nearly solves A x = b (the solvers' checks). */
static void exact_sums(void)
{
    int64_t ptr[] = {0, 3, 4};
    int32_t col[] = {0, 1, 2, 1};
    double val[] = {1e16, 1, -1e16, 0.1}, y[] = {0, 1};
    cmrscl_csr a = {.rows = 2, .cols = 3, .nnz = 4, .row_ptr = ptr, .col_ind = col, .values = val};
    /* row 0: 1e16 + 10 - 1e16 (double sums lose the 10); row 1: 1 - 0.1 x 10, where 0.1 x 10
     * rounds to 1 and the exact product is above it by fma's remainder */
    double x0[] = {1, 10, 1};
    CHECK_OK(cmrscl_csr_spmv(&a, -1.0, x0, 1.0, y));
    double rest = fma(0.1, 10.0, -1.0);
    CHECK_MSG(y[0] == -10 && y[1] == -rest && rest != 0,
              "the reference: %g and %g where -10 and %g are exact", y[0], y[1], -rest);
    /* beyond the range: Inf stays Inf (the carried rounding would make it Inf - Inf) */
    double x_inf[] = {1, INFINITY, 1};
    y[0] = 0, y[1] = 1;
    CHECK_OK(cmrscl_csr_spmv(&a, 1.0, x_inf, 0.0, y));
    CHECK_MSG(y[0] == INFINITY && y[1] == INFINITY, "the reference of x with Inf: %g, %g", y[0],
              y[1]);
}

int main(void)
{
    exact_sums();
    test_seed(45);
    for (int i = 0; i < test_matrix_count(); ++i) {
        cmrscl_csr a;
        const char *name = test_matrix_build(i, &a);
        check_matrix(&a, name);
        cmrscl_csr_free(&a);
    }
    static const char *specs[] = {"stencil7:12", "random:2000:9", "convdiff:8"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
        cmrscl_csr a;
        CHECK_OK(cmrscl_csr_generate(specs[i], &a));
        check_matrix(&a, specs[i]);
        cmrscl_csr_free(&a);
    }
    /* what ran: every kind of rejection on some matrix, or the test proves nothing */
    printf("%d wrong results rejected, %d right ones accepted\n", rejected, accepted);
    CHECK_MSG(rejected > 500 && accepted > 300, "too few cases ran: %d rejected, %d accepted",
              rejected, accepted);
    return test_finish("check");
}
