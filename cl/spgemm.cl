/* spgemm.cl - C = A B of CSR matrices in double on the device, for AMG's Galerkin product
 * (host/precond/amg_galerkin.c); after the prelude of every program, built with -DHEIGHT=1
 * -DWARP=1 -DWG_SIZE=... -DVALUE_DOUBLE=1 -DSPGEMM_TABLE=... (a power of two).
 *
 * A work-item a row of C, in two launches: spgemm_count counts the row's columns, the host
 * places the rows, spgemm_fill sums and writes them. Each row's sums are kept in a table of its
 * own (open addressing, SPGEMM_TABLE slots in global memory, as many as the product needs, 16
 * at least): a column's products are added in the order of A's row and B's rows, as the host's
 * product (amg_spgemm.c) adds them, and contraction into fma is off, so C is the host's C bit
 * for bit. A row whose columns do not fit its table is reported (count -1): the host then
 * makes the whole product itself. */
#pragma OPENCL FP_CONTRACT OFF

#define EMPTY (-1)

/* The slots row i takes: twice its products, a power of two, 16 .. SPGEMM_TABLE. */
static uint table_size(__global const int *a_ptr, __global const int *a_col,
                       __global const int *b_ptr, uint i)
{
    uint products = 0;
    for (int k = a_ptr[i]; k < a_ptr[i + 1]; ++k)
        products += (uint)(b_ptr[a_col[k] + 1] - b_ptr[a_col[k]]);
    uint size = 16;
    while (size < 2 * products && size < SPGEMM_TABLE)
        size *= 2;
    return size;
}

/* The slot of column j: where it is, or the empty one it now takes (*added); size when the
 * table is full without it. */
static uint slot_of(__global int *keys, uint size, int j, bool *added)
{
    uint h = ((uint)j * 2654435761u) & (size - 1);
    for (uint probes = 0; probes < size; ++probes) {
        int k = keys[h];
        if (k == j) {
            *added = false;
            return h;
        }
        if (k == EMPTY) {
            keys[h] = j;
            *added = true;
            return h;
        }
        h = (h + 1) & (size - 1);
    }
    return size;
}

/* count[i]: the columns of C's row i (i = first + the work-item), -1 where they overflow. */
__kernel void spgemm_count(const uint first, const uint rows, __global const int *a_ptr,
                           __global const int *a_col, __global const int *b_ptr,
                           __global const int *b_col, __global int *table_keys,
                           __global int *count)
{
    const uint t = get_global_id(0);
    if (t >= rows)
        return;
    const uint i = first + t;
    __global int *keys = table_keys + (size_t)t * SPGEMM_TABLE;
    const uint size = table_size(a_ptr, a_col, b_ptr, i);
    for (uint s = 0; s < size; ++s)
        keys[s] = EMPTY;
    int n = 0;
    for (int ka = a_ptr[i]; ka < a_ptr[i + 1]; ++ka) {
        const int r = a_col[ka];
        for (int kb = b_ptr[r]; kb < b_ptr[r + 1]; ++kb) {
            bool added;
            if (slot_of(keys, size, b_col[kb], &added) == size) {
                count[i] = -1;
                return;
            }
            n += added;
        }
    }
    count[i] = n;
}

/* Row i's columns (ascending) and sums at c_ptr[i]. */
__kernel void spgemm_fill(const uint first, const uint rows, __global const int *a_ptr,
                          __global const int *a_col, __global const double *a_val,
                          __global const int *b_ptr, __global const int *b_col,
                          __global const double *b_val, __global const int *c_ptr,
                          __global int *table_keys, __global double *table_sums,
                          __global int *c_col, __global double *c_val)
{
    const uint t = get_global_id(0);
    if (t >= rows)
        return;
    const uint i = first + t;
    __global int *keys = table_keys + (size_t)t * SPGEMM_TABLE;
    __global double *sums = table_sums + (size_t)t * SPGEMM_TABLE;
    const uint size = table_size(a_ptr, a_col, b_ptr, i);
    for (uint s = 0; s < size; ++s)
        keys[s] = EMPTY;
    for (int ka = a_ptr[i]; ka < a_ptr[i + 1]; ++ka) {
        const int r = a_col[ka];
        const double v = a_val[ka];
        for (int kb = b_ptr[r]; kb < b_ptr[r + 1]; ++kb) {
            bool added;
            const uint s = slot_of(keys, size, b_col[kb], &added);
            if (added)
                sums[s] = 0.0;
            sums[s] = sums[s] + v * b_val[kb];
        }
    }
    const int begin = c_ptr[i];
    int end = begin;
    for (uint s = 0; s < size; ++s)
        if (keys[s] != EMPTY) {
            c_col[end] = keys[s];
            c_val[end++] = sums[s];
        }
    for (int k = begin + 1; k < end; ++k) { /* by column: the rows are short */
        const int j = c_col[k];
        const double v = c_val[k];
        int m = k;
        for (; m > begin && c_col[m - 1] > j; --m) {
            c_col[m] = c_col[m - 1];
            c_val[m] = c_val[m - 1];
        }
        c_col[m] = j;
        c_val[m] = v;
    }
}
