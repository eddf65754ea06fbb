/* analyze.c - what the plan looks at before choosing a kernel, in one pass over RowPtr:
 * row statistics (mean, spread, longest, empty rows), the lengths of the strips a HEIGHT
 * would make, and the split of long strips into tiles: each tile is summed by its own warp
 * and cmrs_combine (or the tiles' work-group) adds a strip's tiles in order, so one huge
 * strip no longer keeps one warp busy while the device idles (the dense matrix and the hubs
 * of power-law graphs).
 * Also whether rows keep sorted columns, which values-only updates need to know. */
#include "plan/plan.h"
#include "format/format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* At most SPREAD_ROWS rows, evenly spaced, and SPREAD_ENTRIES entries of each, evenly
 * spaced: a sample that costs microseconds on any matrix and sees its band. The device path
 * (matrix_device.c) gathers the same sample on the device and passes its columns in sample
 * order, so both paths sum the same terms in the same order: a bit-identical spread. */
#define SPREAD_ROWS 16384
#define SPREAD_ENTRIES 16

/* At most SPREAD_ENTRIES of a row. (The device path reads the sample back and sums it on
 * the host: 65,536 rows of up to 31 entries cost NVIDIA 3.7 ms of a 6.9 ms create.) */
static int64_t spread_entry_step(int64_t len)
{
    return len > SPREAD_ENTRIES ? (len + SPREAD_ENTRIES - 1) / SPREAD_ENTRIES : 1;
}

/* The columns come from col_ind, or, one per sampled entry in sample order, from sampled;
 * the sampled rows' lengths from row_ptr, or, one per sampled row, from sample_len. */
static double column_spread(int32_t rows, int32_t cols, const int64_t *row_ptr,
                            const int32_t *sample_len, const int32_t *col_ind,
                            const int32_t *sampled)
{
    if ((!col_ind && !sampled) || rows <= 0 || cols <= 0)
        return 0.0;
    int64_t row_step = rows > SPREAD_ROWS ? rows / SPREAD_ROWS : 1, seen = 0;
    double sum = 0.0;
    for (int64_t i = 0; i < rows; i += row_step) {
        int64_t len = row_ptr ? row_ptr[i + 1] - row_ptr[i] : sample_len[i / row_step];
        int64_t step = spread_entry_step(len);
        double diagonal = (double)i * cols / rows;
        for (int64_t k = 0; k < len; k += step, ++seen)
            sum += fabs((col_ind ? col_ind[row_ptr[i] + k] : sampled[seen]) - diagonal);
    }
    return seen ? sum / ((double)seen * cols) : 0.0;
}

void cmrs_analyze_spread_layout(int32_t rows, int32_t cols, spread_sample *s)
{
    s->row_step = rows > SPREAD_ROWS ? rows / SPREAD_ROWS : 1;
    s->rows = rows > 0 && cols > 0 ? (rows + s->row_step - 1) / s->row_step : 0;
    s->entries = SPREAD_ENTRIES;
}

int64_t cmrs_analyze_spread_compact(int32_t rows, int32_t cols, const int32_t *sample_len,
                                    const int32_t *slots, int32_t *sampled)
{
    spread_sample s;
    cmrs_analyze_spread_layout(rows, cols, &s);
    int64_t seen = 0;
    for (int64_t j = 0; j < s.rows; ++j) {
        int64_t len = sample_len[j];
        int64_t step = spread_entry_step(len);
        for (int32_t t = 0; t * step < len; ++t)
            sampled[seen++] = slots[j * s.entries + t];
    }
    return seen;
}

/* Row lengths summed in integers: exact (below 2^63: rows of 2^28 entries and more would
 * be needed to reach it), so any split among threads gives the same
 * statistics, bit for bit. */
typedef struct row_sums {
    const int64_t *row_ptr;
    int32_t rows;
    struct {
        int64_t sum, sum_sq, empty;
        int32_t longest;
    } part[256];
} row_sums;

static void sum_rows(void *ctx, int thread, int threads)
{
    row_sums *r = ctx;
    int64_t i0, i1, sum = 0, sum_sq = 0, empty = 0;
    int32_t longest = 0;
    cmrs_parallel_range(r->rows, thread, threads, &i0, &i1);
    for (int64_t i = i0; i < i1; ++i) {
        int64_t len = r->row_ptr[i + 1] - r->row_ptr[i];
        sum += len, sum_sq += len * len, empty += len == 0;
        longest = len > longest ? (int32_t)len : longest;
    }
    r->part[thread].sum = sum, r->part[thread].sum_sq = sum_sq;
    r->part[thread].empty = empty, r->part[thread].longest = longest;
}

/* Rows from which the row sums take all threads. */
#define PARALLEL_ROWS (1 << 18)

/* The statistics from the exact totals: the same doubles whoever summed them. */
static void stats_from_totals(int32_t rows, int64_t sum, int64_t sum_sq, int64_t empty,
                              int64_t longest, cmrscl_matrix_stats *out)
{
    memset(out, 0, sizeof *out);
    if (rows <= 0)
        return;
    out->empty_rows = (int32_t)empty;
    out->max_row = (int32_t)longest; /* a valid row holds at most cols <= INT32_MAX entries */
    out->mu = (double)sum / rows;
    double var = (double)sum_sq / rows - out->mu * out->mu;
    out->row_cv = out->mu > 0 ? sqrt(var > 0 ? var : 0) / out->mu : 0.0;
}

void cmrs_analyze_rows(int32_t rows, int32_t cols, const int64_t *row_ptr, const int32_t *col_ind,
                       cmrscl_matrix_stats *out)
{
    int64_t sum = 0, sum_sq = 0, empty = 0, longest = 0;
    if (rows > 0) {
        row_sums r = {.row_ptr = row_ptr, .rows = rows};
        int threads = rows < PARALLEL_ROWS ? 1 : cmrs_parallel_threads();
        threads = threads > 256 ? 256 : threads;
        cmrs_parallel_run(threads, sum_rows, &r);
        for (int t = 0; t < threads; ++t) {
            sum += r.part[t].sum, sum_sq += r.part[t].sum_sq, empty += r.part[t].empty;
            longest = r.part[t].longest > longest ? r.part[t].longest : longest;
        }
    }
    stats_from_totals(rows, sum, sum_sq, empty, longest, out);
    if (rows > 0)
        out->col_spread = column_spread(rows, cols, row_ptr, NULL, col_ind, NULL);
}

void cmrs_analyze_rows_totals(int32_t rows, int32_t cols, const row_totals *t,
                              const int32_t *sample_len, const int32_t *sampled,
                              cmrscl_matrix_stats *out)
{
    stats_from_totals(rows, t->sum, t->sum_sq, t->empty, t->longest_strip[0], out);
    if (rows > 0)
        out->col_spread = column_spread(rows, cols, NULL, sample_len, NULL, sampled);
}

cmrscl_status cmrscl_csr_stats(const cmrscl_csr *csr, cmrscl_matrix_stats *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    cmrscl_status st = cmrscl_csr_validate(csr);
    if (st == CMRSCL_OK)
        cmrs_analyze_rows(csr->rows, csr->cols, csr->row_ptr, csr->col_ind, out);
    return st;
}

int64_t cmrs_analyze_longest_strip(int32_t rows, const int64_t *row_ptr, int height)
{
    int64_t strips = ((int64_t)rows + height - 1) / height, longest = 0;
    for (int64_t s = 0; s < strips; ++s) {
        int64_t len = csr_strip_length(rows, row_ptr, height, s);
        if (len > longest)
            longest = len;
    }
    return longest;
}
