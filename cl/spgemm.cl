/* spgemm.cl - C = A B of CSR matrices in double on the device, for AMG's smoothed
 * prolongator and Galerkin product (host/precond/amg_galerkin.c); after the prelude of every
 * program, built with -DHEIGHT=1 -DWARP=1 -DWG_SIZE=... -DVALUE_DOUBLE=1 -DSPGEMM_TABLE=...
 * (a power of two) -DSORT_IN_ITEM=... -DSORT_LOCAL=....
 *
 * A work-item a row of C, in two launches (three where a row is long): spgemm_count counts the
 * row's columns, the host places the rows, spgemm_fill sums and writes them (sort_long_rows
 * orders the long ones). Each row's sums are kept in a table of its
 * own (open addressing in global memory: twice the row's columns, 32 slots at least and
 * SPGEMM_TABLE at most): a column's products are added in the order of A's row and B's rows,
 * as the host's product (amg_spgemm.c) adds them, and contraction into fma is off, so C is the
 * host's C bit for bit. A row whose columns do not fit its table is reported (count -1): the
 * host then makes the whole product itself.
 *
 * A product whose rows all have few columns (SPGEMM_LOCAL at most: A T and A P of AMG's levels,
 * a 7-point stencil's square) is filled by spgemm_fill_local instead, its tables in local
 * memory: a table in global memory spread over a batch's rows is a DRAM sector a probe, one
 * probe after another, where local memory answers in a few cycles. Its rows are written in
 * order by each entry's rank among the row's columns, so no sort follows them. Only there: a
 * kernel that holds local memory keeps fewer work-groups resident, which cost the rows of
 * many columns more than the tables saved (docs/dev/PERFORMANCE.md, SPGEMM_LOCAL).
 *
 * On a GPU the other products are filled, and those of many products a row counted, a
 * work-group a row (spgemm_count_group, spgemm_fill_group): the row's table in local memory
 * sized for the product's longest row, the lanes over each of B's rows in turn, so a row's
 * probes run side by side where a work-item's run one after another (docs/dev/PERFORMANCE.md,
 * SPGEMM_GROUPS). The fill keeps the host's order: B's row holds distinct columns, so a step's
 * lanes touch distinct sums, and barriers order the steps. */
#pragma OPENCL FP_CONTRACT OFF

#define EMPTY (-1)

/* A row's table: slot s of work-item t at [s * stride + t] (stride: the batch's rows), so the
 * work-items' passes over their tables touch neighbouring words. */
#define SLOT(table, s) (table)[(size_t)(s) * stride + t]

/* The slot of column j: where it is, or the empty one it now takes (*added); size when the
 * table is full without it. */
static uint slot_of(__global int *keys, uint stride, uint t, uint size, int j, bool *added)
{
    uint h = ((uint)j * 2654435761u) & (size - 1);
    for (uint probes = 0; probes < size; ++probes) {
        int k = SLOT(keys, h);
        if (k == j) {
            *added = false;
            return h;
        }
        if (k == EMPTY) {
            SLOT(keys, h) = j;
            *added = true;
            return h;
        }
        h = (h + 1) & (size - 1);
    }
    return size;
}

/* Entries [begin, end) of a row by column (its columns distinct): insertion, by one work-item -
 * for rows of at most SORT_IN_ITEM entries; sort_long_rows takes the longer ones, a work-group a
 * row (host/precond/amg_galerkin.c). */
static void sort_row(__global int *col, __global double *val, const int begin, const int end)
{
    for (int k = begin + 1; k < end; ++k) {
        const int j = col[k];
        const double v = val[k];
        int m = k;
        for (; m > begin && col[m - 1] > j; --m) {
            col[m] = col[m - 1];
            val[m] = val[m - 1];
        }
        col[m] = j;
        val[m] = v;
    }
}

#ifndef SPGEMM_LOCAL
#define SPGEMM_LOCAL 0
#endif
#if SPGEMM_LOCAL
/* Slot s of work-item l's table in local memory: the group's items' slot s side by side. */
#define LSLOT(table, s) (table)[(s) * WG_SIZE + l]

/* slot_of's, in a table in local memory. */
static uint local_slot(__local int *keys, uint l, uint size, int j, bool *added)
{
    uint h = ((uint)j * 2654435761u) & (size - 1);
    for (uint probes = 0; probes < size; ++probes) {
        int k = LSLOT(keys, h);
        if (k == j) {
            *added = false;
            return h;
        }
        if (k == EMPTY) {
            LSLOT(keys, h) = j;
            *added = true;
            return h;
        }
        h = (h + 1) & (size - 1);
    }
    return size;
}

/* Row i of A B, of n <= SPGEMM_LOCAL columns, summed in a table in local memory (twice its
 * columns where they fit), then each entry written at its rank among the row's columns. */
static void fill_local(__local int *keys, __local double *sums, uint l, uint i, int n,
                       __global const int *a_ptr, __global const int *a_col,
                       __global const double *a_val, __global const int *b_ptr,
                       __global const int *b_col, __global const double *b_val, const int begin,
                       __global int *c_col, __global double *c_val)
{
    uint size = 2;
    while (size < SPGEMM_LOCAL && (int)size < 2 * n)
        size *= 2;
    for (uint s = 0; s < size; ++s)
        LSLOT(keys, s) = EMPTY;
    for (int ka = a_ptr[i]; ka < a_ptr[i + 1]; ++ka) {
        const int r = a_col[ka];
        const double v = a_val[ka];
        for (int kb = b_ptr[r]; kb < b_ptr[r + 1]; ++kb) {
            bool added = false;
            const uint s = local_slot(keys, l, size, b_col[kb], &added);
            if (added)
                LSLOT(sums, s) = 0.0;
            LSLOT(sums, s) = LSLOT(sums, s) + v * b_val[kb];
        }
    }
    for (uint s = 0; s < size; ++s) {
        const int j = LSLOT(keys, s);
        if (j == EMPTY)
            continue;
        int rank = 0; /* (EMPTY, as a uint, above every column) */
        for (uint m = 0; m < size; ++m)
            rank += (uint)LSLOT(keys, m) < (uint)j;
        c_col[begin + rank] = j;
        c_val[begin + rank] = LSLOT(sums, s);
    }
}
#endif

static void clear_keys(__global int *keys, uint stride, uint t, uint size)
{
    for (uint s = 0; s < size; ++s)
        SLOT(keys, s) = EMPTY;
}

/* count[i]: the columns of C's row i (i = first + the work-item), -1 where they overflow. A
 * row's products may be many more than its columns (a Galerkin row's are tens of times more):
 * the table starts small, 32 slots, and is doubled and the row counted again while more than
 * half of it is taken, up to SPGEMM_TABLE. */
__kernel void spgemm_count(const uint first, const uint rows, __global const int *a_ptr,
                           __global const int *a_col, __global const int *b_ptr,
                           __global const int *b_col, __global int *keys, __global int *count)
{
    const uint t = get_global_id(0);
    if (t >= rows)
        return;
    const uint i = first + t, stride = rows;
    for (uint size = 32;; size *= 2) {
        clear_keys(keys, stride, t, size);
        int n = 0;
        bool full = false;
        for (int ka = a_ptr[i]; ka < a_ptr[i + 1] && !full; ++ka) {
            const int r = a_col[ka];
            for (int kb = b_ptr[r]; kb < b_ptr[r + 1] && !full; ++kb) {
                bool added = false;
                full = slot_of(keys, stride, t, size, b_col[kb], &added) == size;
                n += added;
                full = full || (size < SPGEMM_TABLE && (uint)n > size / 2);
            }
        }
        if (!full) {
            count[i] = n;
            return;
        }
        if (size == SPGEMM_TABLE) {
            count[i] = -1;
            return;
        }
    }
}

/* Row i's columns (ascending) and sums at c_ptr[i]. */
__kernel void spgemm_fill(const uint first, const uint rows, __global const int *a_ptr,
                          __global const int *a_col, __global const double *a_val,
                          __global const int *b_ptr, __global const int *b_col,
                          __global const double *b_val, __global const int *c_ptr,
                          __global int *keys, __global double *sums, __global int *c_col,
                          __global double *c_val)
{
    const uint t = get_global_id(0);
    if (t >= rows)
        return;
    const uint i = first + t, stride = rows;
    const int begin = c_ptr[i];
    uint size = 32; /* the count's: at least twice the row's columns (or SPGEMM_TABLE) */
    while (size < SPGEMM_TABLE && (uint)(c_ptr[i + 1] - begin) > size / 2)
        size *= 2;
    clear_keys(keys, stride, t, size);
    for (int ka = a_ptr[i]; ka < a_ptr[i + 1]; ++ka) {
        const int r = a_col[ka];
        const double v = a_val[ka];
        for (int kb = b_ptr[r]; kb < b_ptr[r + 1]; ++kb) {
            bool added = false;
            const uint s = slot_of(keys, stride, t, size, b_col[kb], &added);
            if (added)
                SLOT(sums, s) = 0.0;
            SLOT(sums, s) = SLOT(sums, s) + v * b_val[kb];
        }
    }
    int end = begin;
    for (uint s = 0; s < size; ++s)
        if (SLOT(keys, s) != EMPTY) {
            c_col[end] = SLOT(keys, s);
            c_val[end++] = SLOT(sums, s);
        }
    if (end - begin <= SORT_IN_ITEM)
        sort_row(c_col, c_val, begin, end);
}

#if SPGEMM_LOCAL
/* Row i's columns (ascending) and sums at c_ptr[i], every row of at most SPGEMM_LOCAL columns. */
__kernel void spgemm_fill_local(const uint first, const uint rows, __global const int *a_ptr,
                                __global const int *a_col, __global const double *a_val,
                                __global const int *b_ptr, __global const int *b_col,
                                __global const double *b_val, __global const int *c_ptr,
                                __global int *keys, __global double *sums, __global int *c_col,
                                __global double *c_val)
{
    __local int local_keys[SPGEMM_LOCAL * WG_SIZE];
    __local double local_sums[SPGEMM_LOCAL * WG_SIZE];
    (void)keys, (void)sums; /* (spgemm_fill's arguments, so the host binds both alike) */
    const uint t = get_global_id(0);
    if (t >= rows)
        return;
    const uint i = first + t;
    fill_local(local_keys, local_sums, get_local_id(0), i, c_ptr[i + 1] - c_ptr[i], a_ptr, a_col,
               a_val, b_ptr, b_col, b_val, c_ptr[i], c_col, c_val);
}
#endif

/* ---- a work-group a row: the row's table in local memory, B's rows across the lanes ---- */

/* The slot of column j in a group's table (size slots), claimed by an atomic compare-exchange:
 * lanes of other columns may probe the same slots at once. size when full without it. */
static uint group_slot(__local int *keys, uint size, int j, bool *added)
{
    uint h = ((uint)j * 2654435761u) & (size - 1);
    for (uint probes = 0; probes < size; ++probes) {
        const int k = atomic_cmpxchg(&keys[h], EMPTY, j);
        if (k == EMPTY || k == j) {
            *added = k == EMPTY;
            return h;
        }
        h = (h + 1) & (size - 1);
    }
    return size;
}

/* The group's sum of each lane's `mine` (every lane's call, in step; *shared a local word). */
static int group_sum(__local int *shared, int mine)
{
    if (get_local_id(0) == 0)
        *shared = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(shared, mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    const int sum = *shared;
    barrier(CLK_LOCAL_MEM_FENCE); /* (read by every lane before the word is used again) */
    return sum;
}

/* The slots of a row's table: the least power of two of at least 32 and twice `columns`, `most`
 * at most. */
static uint group_table(int columns, uint most)
{
    uint size = 32;
    while (size < most && (int)size < 2 * columns)
        size *= 2;
    return size;
}

/* spgemm_count's counts, a work-group a row (groups walking the rows in turn): each of A's
 * entries in turn, the lanes over B's row, every column claimed in a table of local memory
 * (`table`: `most` slots, twice SPGEMM_TABLE) as large as twice the row's products at most. */
__kernel void spgemm_count_group(const uint first, const uint rows, __global const int *a_ptr,
                                 __global const int *a_col, __global const int *b_ptr,
                                 __global const int *b_col, __local int *table, const uint most,
                                 __global int *count)
{
    __local int shared;
    const uint l = get_local_id(0), lanes = get_local_size(0);
    for (uint g = get_group_id(0); g < rows; g += get_num_groups(0)) {
        const uint i = first + g;
        const int a_begin = a_ptr[i], a_end = a_ptr[i + 1];
        int products = 0;
        for (int ka = a_begin + (int)l; ka < a_end; ka += (int)lanes)
            products += b_ptr[a_col[ka] + 1] - b_ptr[a_col[ka]];
        const uint size = group_table(group_sum(&shared, products), most);
        for (uint s = l; s < size; s += lanes)
            table[s] = EMPTY;
        barrier(CLK_LOCAL_MEM_FENCE);
        int taken = 0, full = 0; /* (a lane that found the table full goes no further) */
        for (int ka = a_begin; ka < a_end && !full; ++ka) {
            const int r = a_col[ka], b_end = b_ptr[r + 1];
            for (int kb = b_ptr[r] + (int)l; kb < b_end && !full; kb += (int)lanes) {
                bool added = false;
                full |= group_slot(table, size, b_col[kb], &added) == size;
                taken += added;
            }
        }
        /* (every claim made before the sums read the counter: group_sum's first barrier) */
        taken = group_sum(&shared, taken);
        full = group_sum(&shared, full);
        if (l == 0)
            count[i] = full || taken > SPGEMM_TABLE ? -1 : taken;
    }
}

/* spgemm_fill's rows, a work-group a row: each of A's entries in turn, the lanes over B's row -
 * a row's columns are distinct, so each slot is one lane's in a step, and the steps are ordered
 * by barriers: a column's products are added in the host's order. Then the row's columns
 * gathered (`order`, in any order) and each written at its rank among them. table and sums:
 * `most` slots (twice the product's longest row), order: half as many pairs. */
__kernel void spgemm_fill_group(const uint first, const uint rows, __global const int *a_ptr,
                                __global const int *a_col, __global const double *a_val,
                                __global const int *b_ptr, __global const int *b_col,
                                __global const double *b_val, __global const int *c_ptr,
                                __local int *table, __local double *sums, __local int *order,
                                const uint most, __global int *c_col, __global double *c_val)
{
    __local int shared;
    const uint l = get_local_id(0), lanes = get_local_size(0);
    for (uint g = get_group_id(0); g < rows; g += get_num_groups(0)) {
        const uint i = first + g;
        const int begin = c_ptr[i], n = c_ptr[i + 1] - begin;
        const uint size = group_table(n, most);
        for (uint s = l; s < size; s += lanes)
            table[s] = EMPTY;
        if (l == 0)
            shared = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int ka = a_ptr[i]; ka < a_ptr[i + 1]; ++ka) {
            const int r = a_col[ka], b_begin = b_ptr[r], b_end = b_ptr[r + 1];
            const double v = a_val[ka];
            for (int kb0 = b_begin; kb0 < b_end; kb0 += (int)lanes) {
                const int kb = kb0 + (int)l;
                if (kb < b_end) {
                    bool added = false;
                    const uint s = group_slot(table, size, b_col[kb], &added);
                    if (added)
                        sums[s] = 0.0;
                    sums[s] = sums[s] + v * b_val[kb];
                }
                barrier(CLK_LOCAL_MEM_FENCE); /* this step's sums before the next one's */
            }
        }
        for (uint s = l; s < size; s += lanes)
            if (table[s] != EMPTY) {
                const int at = atomic_inc(&shared);
                order[2 * at] = table[s];
                order[2 * at + 1] = (int)s;
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int at = (int)l; at < n; at += (int)lanes) {
            const int j = order[2 * at];
            int rank = 0;
            for (int m = 0; m < n; ++m)
                rank += order[2 * m] < j;
            c_col[begin + rank] = j;
            c_val[begin + rank] = sums[order[2 * at + 1]];
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* the row read before the next one's table is cleared */
    }
}

/* Rows of more than `sorted` entries by column (their columns distinct; those up to `sorted`
 * were sorted by the kernel that wrote them: SORT_IN_ITEM, a product's up to SPGEMM_LOCAL
 * too), a work-group a row,
 * the groups walking the rows in turn: the row into local memory, each entry's place its rank -
 * how many of the row's columns are smaller - so no entry waits for another's move. An
 * insertion by one work-item moves a long row's entries a square of its length times, one
 * after another (a Galerkin row of elasticity's rigid-body modes has hundreds). Rows past
 * SORT_LOCAL entries by one work-item still: no product's (SPGEMM_TABLE columns at most), but
 * an R's may be - a coarse row of a large aggregate with many candidates. */
__kernel void sort_long_rows(const uint first, const uint rows, const int sorted,
                             __global const int *ptr, __global int *col, __global double *val)
{
    __local int lc[SORT_LOCAL];
    __local double lv[SORT_LOCAL];
    const uint l = get_local_id(0), items = get_local_size(0);
    for (uint g = get_group_id(0); g < rows; g += get_num_groups(0)) {
        const uint i = first + g;
        const int begin = ptr[i], n = ptr[i + 1] - begin;
        if (n <= sorted)
            continue; /* sorted by the kernel that wrote it */
        if (n > SORT_LOCAL) {
            if (l == 0)
                sort_row(col, val, begin, begin + n);
            continue;
        }
        for (int k = (int)l; k < n; k += (int)items)
            lc[k] = col[begin + k], lv[k] = val[begin + k];
        /* the row read by every work-item before any writes it back (its global memory too) */
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        for (int k = (int)l; k < n; k += (int)items) {
            const int c = lc[k];
            int rank = 0;
            for (int m = 0; m < n; ++m)
                rank += lc[m] < c;
            col[begin + rank] = c;
            val[begin + rank] = lv[k];
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* the row read before the next one's loads */
    }
}

/* ---- the transpose of A (R = P^T, made here and read back for the hierarchy) ---- */

/* count[j]: A's entries in column j (zero before), a work-item a row. */
__kernel void transpose_count(const uint first, const uint rows, __global const int *a_ptr,
                              __global const int *a_col, __global int *count)
{
    const uint t = get_global_id(0);
    if (t >= rows)
        return;
    const uint i = first + t;
    for (int k = a_ptr[i]; k < a_ptr[i + 1]; ++k)
        atomic_inc(&count[a_col[k]]);
}

/* Each entry of A's row i into row j of the transpose at its next free slot (next[j], from the
 * row's start): in whatever order the work-items come - transpose_sort orders each row. */
__kernel void transpose_scatter(const uint first, const uint rows, __global const int *a_ptr,
                                __global const int *a_col, __global const double *a_val,
                                __global int *next, __global int *t_col, __global double *t_val)
{
    const uint t = get_global_id(0);
    if (t >= rows)
        return;
    const int i = (int)(first + t);
    for (int k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
        const int slot = atomic_inc(&next[a_col[k]]);
        t_col[slot] = i;
        t_val[slot] = a_val[k];
    }
}

/* Row i of the transpose by column (its columns are distinct, so the order is A's), where it
 * has at most SORT_IN_ITEM entries (sort_long_rows the others). */
__kernel void transpose_sort(const uint first, const uint rows, __global const int *t_ptr,
                             __global int *t_col, __global double *t_val)
{
    const uint t = get_global_id(0);
    if (t >= rows)
        return;
    const uint i = first + t;
    if (t_ptr[i + 1] - t_ptr[i] <= SORT_IN_ITEM)
        sort_row(t_col, t_val, t_ptr[i], t_ptr[i + 1]);
}

/* ---- the smoothed prolongator P = T - omega D^-1 (A T), in place of A T ---- */

/* Row i as amg_setup.c's smooth_prolongator makes it, bit for bit: each entry of A T times
 * -omega d_i, then T's entry of that column added (A T's row holds T's columns, both rows'
 * ascending). */
__kernel void smooth_prolongator(const uint first, const uint rows, __global const int *p_ptr,
                                 __global const int *p_col, __global double *p_val,
                                 __global const int *t_ptr, __global const int *t_col,
                                 __global const double *t_val, __global const double *diag_inv,
                                 const double omega)
{
    const uint item = get_global_id(0);
    if (item >= rows)
        return;
    const uint i = first + item;
    const double w = omega * diag_inv[i];
    int e = t_ptr[i];
    const int e_end = t_ptr[i + 1];
    for (int k = p_ptr[i]; k < p_ptr[i + 1]; ++k) {
        double v = p_val[k] * -w;
        if (e < e_end && p_col[k] == t_col[e])
            v += t_val[e++];
        p_val[k] = v;
    }
}
