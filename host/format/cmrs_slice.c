/* cmrs_slice.c - the layout of the slice kernel (cl/cmrs_slice.cl): each strip of a built,
 * row-ordered CMRS re-laid as a slice - entry i of the strip's row r at position i x HEIGHT +
 * r of the strip, so the strip's HEIGHT lanes, one per row, read consecutive words at each
 * step - with rows shorter than the strip's longest padded by holes (cmrs_holes.c). What it
 * costs is those holes: cmrs_slice_stored counts them for the plan before anything is built. */
#include "format/format.h"

/* The longest row of strip s. */
static int64_t strip_width(int32_t rows, const int64_t *row_ptr, int height, int64_t s)
{
    int64_t r0 = s * height, r1 = r0 + height < rows ? r0 + height : rows, width = 0;
    for (int64_t r = r0; r < r1; ++r)
        if (row_ptr[r + 1] - row_ptr[r] > width)
            width = row_ptr[r + 1] - row_ptr[r];
    return width;
}

typedef struct slice_job {
    holed_source src;
    const int64_t *row_ptr;
    bool write;
    cmrs_holed *out;
    int64_t stored[64]; /* cmrs_slice_stored: per thread */
} slice_job;

/* Pass 1 puts each strip's stored length in out->cmrs.strip_ptr[s + 1] (or, without out,
 * adds it to the thread's count); pass 2 places its positions. */
static void slice_strips(void *ctx, int thread, int threads)
{
    slice_job *j = ctx;
    const cmrscl_cmrs *in = j->src.in;
    const int64_t *row_ptr = j->row_ptr;
    const int64_t h = in->height;
    int64_t s0, s1;
    cmrs_parallel_range(in->strips, thread, threads, &s0, &s1);
    for (int64_t s = s0; s < s1; ++s) {
        const int64_t width = strip_width(in->rows, row_ptr, in->height, s);
        if (!j->out) {
            j->stored[thread] += width * h;
            continue;
        }
        if (!j->write) {
            j->out->cmrs.strip_ptr[s + 1] = (uint64_t)(width * h);
            continue;
        }
        const uint64_t base = j->out->cmrs.strip_ptr[s];
        const int64_t r0 = s * h; /* the input strip is row-ordered: row r0's entries first */
        for (int64_t r = 0; r < h; ++r) {
            const int64_t row = r0 + r;
            const int64_t len = row < in->rows ? row_ptr[row + 1] - row_ptr[row] : 0;
            const uint64_t first =
                row < in->rows ? in->strip_ptr[s] + (uint64_t)(row_ptr[row] - row_ptr[r0]) : 0;
            for (int64_t i = 0; i < width; ++i)
                cmrs_holed_place(&j->src, j->out, base + (uint64_t)(i * h + r),
                                 i < len ? first + (uint64_t)i : UINT64_MAX);
        }
    }
}

int64_t cmrs_slice_stored(int32_t rows, const int64_t *row_ptr, int height)
{
    cmrscl_cmrs shape = {.rows = rows, .height = height, .strips = (rows + height - 1) / height};
    slice_job j = {.src = {.in = &shape}, .row_ptr = row_ptr};
    int threads = format_threads(rows);
    threads = threads > 64 ? 64 : threads;
    cmrs_parallel_run(threads, slice_strips, &j);
    int64_t stored = 0;
    for (int t = 0; t < threads; ++t)
        stored += j.stored[t];
    return stored;
}

cmrscl_status cmrs_slice_layout(const cmrscl_cmrs *in, const int64_t *row_ptr, const void *values,
                                size_t value_size, int perm_bits, cmrs_holed *out)
{
    slice_job j = {{in, values, value_size, NULL, perm_bits}, row_ptr, false, out, {0}};
    int threads = format_threads(in->nnz);
    cmrscl_status st = cmrs_holed_start(&j.src, out);
    if (st == CMRSCL_OK) {
        cmrs_parallel_run(threads, slice_strips, &j); /* pass 1: the lengths */
        st = cmrs_holed_allocate(&j.src, out);
    }
    if (st == CMRSCL_OK) {
        j.write = true;
        cmrs_parallel_run(threads, slice_strips, &j); /* pass 2: the positions */
    }
    return st;
}
