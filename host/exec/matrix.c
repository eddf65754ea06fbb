/* matrix.c - creating a device matrix from host CSR, one pipeline: row statistics -> plan
 * (a sub-group plan's kernel confirmed, or the planner's fallback) -> split of long strips
 * -> the device's limits checked -> CMRS arrays -> device buffers -> kernels. The plan and
 * layout steps are shared with the device path (matrix_device.c); the arrays, kernels and
 * lifetime are matrix_arrays.c's. */
#include "exec/exec.h"
#include "io/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The device sizes of a layout with holes (host/format/cmrs_holes.c: MODULO's or the
 * slices): holes make the entry arrays longer, so they are known, and checked, only now. */
static cmrscl_status holes_sized(cmrscl_matrix m, const cmrscl_cmrs *host, int perm_bits,
                                 size_t bytes[BUF_COUNT])
{
    cmrscl_params *p = &m->params;
    size_t stored = (size_t)host->nnz;
    p->stored_entries = host->nnz;
    bytes[BUF_COL_IND] = cmrs_matrix_column_bytes(p, stored);
    bytes[BUF_ROW_IN_STRIP] = p->layout == CMRSCL_LAYOUT_UNPACKED ? stored : 0;
    bytes[BUF_VALUES] = cmrs_matrix_values_bytes(p, stored);
    bytes[BUF_PERM] = (size_t)perm_bits / 8 * stored;
    cmrs_plan_bytes_per_entry(p);
    return cmrs_matrix_check_device_memory(m->ctx, bytes);
}

/* The values as the plan stores them (cmrscl_values): DICT puts each entry's dictionary
 * index in its column word and hands back the dictionary for the values buffer, DIAGONAL
 * the dictionary of the values off the diagonal and after its 2^dict_bits slots the
 * diagonal, a value a row; FLOAT was converted with the layout (cmrs_build,
 * cmrs_slice_from_csr); PLAIN stays. */
static cmrscl_status encode_values(const cmrscl_params *p, cmrscl_cmrs *host, void **values,
                                   const value_census *census)
{
    const value_codec *codec = plan_value_codec(p);
    if (!codec->in_column_words)
        return CMRSCL_OK;
    size_t slots = (size_t)1 << p->dict_bits, size = cmrscl_precision_size(p->precision);
    void *dict = calloc(slots + plan_diagonal_values(p), size);
    if (!dict)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for a dictionary");
    if (codec->diagonal_apart) {
        cmrs_values_encode_diagonal(host, p->dict_bits, *values, p->precision, census,
                                    (char *)dict + slots * size);
        cmrs_value_dictionary(census->off_dict, census->off_distinct, p->precision, dict);
    } else {
        cmrs_values_encode_dict(host->col_ind, host->nnz, p->row_bits, p->dict_bits, *values,
                                p->precision, census);
        cmrs_value_dictionary(census->dict, census->distinct, p->precision, dict);
    }
    free(*values);
    *values = dict;
    return CMRSCL_OK;
}

/* The MODULO layout (host/format/cmrs_modulo.c) of the built arrays, in their place. */
static cmrscl_status modulo_relayout(cmrscl_matrix m, cmrscl_cmrs *host, void **values, void **perm,
                                     int perm_bits, size_t bytes[BUF_COUNT])
{
    cmrscl_params *p = &m->params;
    size_t vs = cmrscl_precision_size(plan_stored_precision(p));
    cmrs_holed lay;
    cmrscl_status st =
        cmrs_modulo_layout(host, *values, vs, *perm, perm_bits, p->modulo, p->warp, &lay);
    if (st != CMRSCL_OK)
        return st;
    cmrscl_cmrs_free(host);
    free(*values), free(*perm);
    *host = lay.cmrs, *values = lay.values, *perm = lay.perm;
    return holes_sized(m, host, perm_bits, bytes);
}

/* Host CMRS arrays of the plan, values in the matrix's precision, and the long strips
 * flagged in StripPtr for the kernels; then the upload. perm_bits (32, 64; 0: none): the
 * column order's permutation goes to the device too (rows that were not sorted; every
 * layout with holes, which move positions away from CSR entries). The slices are laid out
 * from the CSR itself (host/format/cmrs_slice.c), every other layout from the built CMRS. */
static cmrscl_status convert_and_upload(cmrscl_matrix m, const int64_t *row_ptr,
                                        const int32_t *col_ind, const void *values,
                                        cmrscl_precision values_precision,
                                        const value_census *census, int perm_bits, split_layout *sp,
                                        size_t bytes[BUF_COUNT])
{
    cmrscl_params *p = &m->params;
    double convert_start = cmrscl_seconds();
    cmrscl_cmrs host = {0};
    void *perm = NULL;
    unsigned flags = (p->order == CMRSCL_ORDER_COLUMNS ? CMRSCL_CMRS_ORDER_COLUMNS : 0) |
                     (p->layout == CMRSCL_LAYOUT_UNPACKED ? CMRSCL_CMRS_UNPACKED : 0);
    /* FLOAT: the doubles go straight to floats, exactly (the census said so) */
    cmrscl_precision stored = plan_stored_precision(p);
    size_t value_size = cmrscl_precision_size(stored);
    cmrs_values vals = {values, values_precision, NULL, stored};
    cmrscl_status st;
    if (plan_family(p)->holes == HOLES_AFTER_ROWS) { /* the slices: row-ordered strips */
        cmrs_holed lay;
        st = cmrs_slice_from_csr(p->rows, p->cols, row_ptr, col_ind, p->height, flags, &vals,
                                 plan_jump_above(p), perm_bits, &lay);
        if (st == CMRSCL_OK) {
            host = lay.cmrs, vals.dst = lay.values, perm = lay.perm;
            st = holes_sized(m, &host, perm_bits, bytes);
        }
    } else {
        vals.dst = cmrs_parallel_alloc((size_t)p->nnz + CMRS_ENTRY_PAD, value_size);
        st = vals.dst ? cmrs_build(p->rows, p->cols, row_ptr, col_ind, p->height, flags, &vals,
                                   perm_bits, &host, &perm)
                      : cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld values",
                                    (long long)p->nnz);
        if (st == CMRSCL_OK && plan_has_holes(p->kernel))
            st = modulo_relayout(m, &host, &vals.dst, &perm, perm_bits, bytes);
    }
    if (st == CMRSCL_OK)
        st = encode_values(p, &host, &vals.dst, census);
    void *narrow = NULL; /* the column words as the device holds them: narrow, or host's */
    if (st == CMRSCL_OK && p->column_bits == 16)
        st = cmrs_narrow_encode(&host, p->dict_bits, plan_narrow_kind(p), &narrow);
    else if (st == CMRSCL_OK && p->column_bits == 0)
        st = cmrs_implied_encode(&host, &narrow);
    if (st == CMRSCL_OK) {
        for (int32_t k = 0; k < sp->long_strips; ++k)
            host.strip_ptr[sp->long_strip[k]] |= STRIP_PTR_LONG(p->index_bits);
        void *up[BUF_COUNT] = {
            cmrs_index_narrow(host.strip_ptr, (size_t)host.strips + 1, p->index_bits),
            narrow ? narrow : host.col_ind,
            host.row_in_strip,
            vals.dst,
            cmrs_index_narrow(sp->tile_start, (size_t)sp->tiles, p->index_bits),
            sp->tile_strip,
            NULL,
            sp->long_strip,
            sp->first_tile,
            perm};
        double t0 = cmrscl_seconds();
        p->convert_seconds = t0 - convert_start;
        st = cmrs_matrix_upload_buffers(m, up, bytes);
        p->upload_seconds = cmrscl_seconds() - t0;
    }
    cmrscl_cmrs_free(&host);
    free(narrow);
    free(perm);
    free(vals.dst);
    return st;
}

/* A sub-group plan holds only if the compiler gives its kernel the plan's sub-group width
 * (subgroups.c): the kernel is built now (it stays in the context's cache for the matrix),
 * and where its width differs the planner's fallback - the local reduction - takes its
 * place, saying why; without one (the user asked for sub-groups) the error stands. */
static cmrscl_status confirm_subgroups(cmrscl_matrix m, cmrscl_precision precision,
                                       const plan_matrix *a, const cmrscl_options *fallback)
{
    cmrscl_params *p = &m->params;
    cl_program prog;
    cl_kernel k = NULL;
    cl_int err;
    cmrscl_status st =
        cmrs_program_get(m->ctx, cmrs_variant_family_of(p->kernel)->file, p->build_options, &prog,
                         &p->build_seconds, &p->program_source);
    if (st == CMRSCL_OK && !(k = clCreateKernel(prog, "cmrs_spmv", &err)))
        st = cmrscl_fail_cl(err, "clCreateKernel");
    if (st == CMRSCL_OK)
        st = cmrs_subgroups_check_kernel(m->ctx, k, p);
    if (k)
        clReleaseKernel(k);
    if (st != CMRSCL_ERROR_UNSUPPORTED || fallback->reduce != CMRSCL_REDUCE_LOCAL)
        return st;
    char why[200];
    snprintf(why, sizeof why, "%s", cmrscl_last_error());
    return cmrs_plan_fallback(&m->ctx->info, precision, a, fallback, why, p); /* kernel: later */
}

cmrscl_status cmrs_matrix_plan(cmrscl_matrix m, cmrscl_precision precision, const plan_matrix *a,
                               const cmrscl_options *opt)
{
    cmrscl_options fallback;
    cmrscl_status st =
        cmrs_plan_for_matrix(&m->ctx->info, precision, a, opt, &m->params, &fallback);
    if (st == CMRSCL_OK && m->params.reduce == CMRSCL_REDUCE_SUBGROUP)
        st = confirm_subgroups(m, precision, a, &fallback);
    return st;
}

cmrscl_status cmrs_matrix_layout(cmrscl_matrix m, const plan_matrix *a, split_layout *sp,
                                 size_t bytes[BUF_COUNT])
{
    cmrscl_params *p = &m->params;
    cmrscl_status st =
        cmrs_split_build(a->rows, a->row_ptr, p->height, p->tile, cmrs_plan_group_tiles(p), sp);
    if (st != CMRSCL_OK)
        return st;
    cmrs_plan_sizes(a, sp->tiles, sp->long_strips, p);
    size_t wpg = (size_t)(p->work_group_size / p->warp);
    m->strip_groups = sp->long_strips == p->strips ? 0 : ((size_t)p->strips + wpg - 1) / wpg;
    m->tile_groups = ((size_t)sp->tiles + wpg - 1) / wpg;
    /* Longest chains first: the tiles when none of the strips left whole is longer than a
     * tile (a few very long rows among short ones), else the strips (measured on an H200,
     * docs/dev/PERFORMANCE.md, longest chains first). */
    m->first_tile_group = sp->tile >= sp->longest_whole ? 0 : m->strip_groups;
    cmrs_matrix_device_sizes(p, sp, bytes);
    return CMRSCL_OK;
}

/* Layouts with holes: the CSR entry where each strip starts, which updates from the host
 * need (holes move positions away from CSR entries). MODULO's permutation is built with the
 * layout and uploaded at creation: the device could not rebuild it from the arrays. A
 * slice's can be (each row keeps its order, and these starts place the strip's rows), so
 * like that of column-ordered strips it is built on the device by the first values update
 * (matrix_update.c): most matrices are never updated, and it would cost them index_bits / 8
 * bytes an entry of device memory - as much as the dictionary-coded entries themselves. */
static cmrscl_status holes_prepare(cmrscl_matrix m, const int64_t *row_ptr, int *perm_bits)
{
    const cmrscl_params *p = &m->params;
    bool pending = plan_family(p)->holes == HOLES_AFTER_ROWS;
    *perm_bits = pending ? 0 : p->index_bits;
    uint64_t *strip_csr = cmrscl_alloc((size_t)p->strips + 1, sizeof *strip_csr);
    if (!strip_csr)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d strips", p->strips);
    for (int64_t s = 0; s <= p->strips; ++s) {
        int64_t row = s * p->height < p->rows ? s * p->height : p->rows;
        strip_csr[s] = (uint64_t)row_ptr[row];
    }
    return cmrs_update_prepare(m, pending, strip_csr);
}

static cmrscl_status renumbered_create(cmrscl_context ctx, cmrscl_precision precision, int32_t rows,
                                       int32_t cols, const int64_t *row_ptr, const int32_t *col_ind,
                                       const void *values, cmrscl_precision values_precision,
                                       const bool *validated, const cmrscl_options *opt,
                                       cmrscl_matrix *out);

/* The host path. `validated` NULL: the arrays are validated here; else the caller has done
 * it, and *validated says whether every row's columns are non-decreasing. */
static cmrscl_status matrix_create(cmrscl_context ctx, cmrscl_precision precision, int32_t rows,
                                   int32_t cols, const int64_t *row_ptr, const int32_t *col_ind,
                                   const void *values, cmrscl_precision values_precision,
                                   const bool *validated, const cmrscl_options *opt,
                                   cmrscl_matrix *out)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!ctx)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "context is NULL");
    if (opt && opt->renumber == CMRSCL_RENUMBER_HUBS)
        return renumbered_create(ctx, precision, rows, cols, row_ptr, col_ind, values,
                                 values_precision, validated, opt, out);
    bool sorted = validated && *validated;
    cmrscl_status st =
        validated ? CMRSCL_OK : cmrs_csr_validate_structure(rows, cols, row_ptr, col_ind, &sorted);
    if (st != CMRSCL_OK)
        return st;
    if (row_ptr[rows] > 0 && !values)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "values is NULL");
    cmrscl_matrix m = NULL;
    st = cmrs_matrix_new(ctx, &m);
    if (st != CMRSCL_OK)
        return st;
    cmrscl_params *p = &m->params;
    double t0 = cmrscl_seconds();
    cmrscl_matrix_stats stats;
    cmrs_analyze_rows(rows, cols, row_ptr, col_ind, &stats);
    value_census census = {0}; /* plain values asked for: nothing to examine */
    if (!opt || opt->values != CMRSCL_VALUES_PLAIN)
        cmrs_value_census_take(values, values_precision, rows, row_ptr, col_ind, precision,
                               &census);
    split_layout sp = {0};
    size_t bytes[BUF_COUNT];
    plan_matrix pm = {.rows = rows,
                      .cols = cols,
                      .nnz = row_ptr[rows],
                      .row_ptr = row_ptr,
                      .col_ind = col_ind,
                      .stats = stats,
                      .values = &census,
                      .host_layout = true};
    st = cmrs_matrix_plan(m, precision, &pm, opt);
    if (st == CMRSCL_OK)
        st = cmrs_matrix_layout(m, &pm, &sp, bytes);
    int perm_bits = 0;
    if (st == CMRSCL_OK && p->order == CMRSCL_ORDER_COLUMNS && p->nnz > 0) {
        /* Updating values later needs each CMRS position's CSR entry. With sorted rows the
         * device rebuilds it from the CMRS arrays on the first update (matrix_update.c);
         * unsorted rows lose their CSR order in the column sort, so their permutation
         * goes to the device now. One row per strip keeps sorted rows as they are. */
        st = cmrs_update_prepare(m, sorted && p->height > 1, NULL);
        perm_bits = sorted ? 0 : p->index_bits;
        bytes[BUF_PERM] = (size_t)perm_bits / 8 * (size_t)p->nnz;
    }
    if (st == CMRSCL_OK && plan_has_holes(p->kernel) && p->nnz > 0)
        st = holes_prepare(m, row_ptr, &perm_bits);
    if (st == CMRSCL_OK)
        st = cmrs_matrix_check_device_memory(ctx, bytes);
    p->analyze_seconds = cmrscl_seconds() - t0;
    if (st == CMRSCL_OK)
        st = convert_and_upload(m, row_ptr, col_ind, values, values_precision, &census, perm_bits,
                                &sp, bytes);
    cmrs_split_free(&sp);
    if (st == CMRSCL_OK)
        st = cmrs_matrix_create_kernels(m);
    if (st != CMRSCL_OK) {
        cmrscl_matrix_free(m);
        return st;
    }
    *out = m;
    return CMRSCL_OK;
}

/* CMRSCL_RENUMBER_HUBS: the matrix made of P A P^T (matrix_create, the arrays validated and
 * sorted), then what it keeps of P (matrix_renumber.c). */
static cmrscl_status renumbered_create(cmrscl_context ctx, cmrscl_precision precision, int32_t rows,
                                       int32_t cols, const int64_t *row_ptr, const int32_t *col_ind,
                                       const void *values, cmrscl_precision values_precision,
                                       const bool *validated, const cmrscl_options *opt,
                                       cmrscl_matrix *out)
{
    cmrscl_status st =
        validated ? CMRSCL_OK : cmrs_csr_validate_structure(rows, cols, row_ptr, col_ind, NULL);
    if (st != CMRSCL_OK)
        return st;
    if (row_ptr[rows] > 0 && !values)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "values is NULL");
    double t0 = cmrscl_seconds();
    cmrs_renumbered r;
    st = cmrs_renumber_hubs(rows, cols, row_ptr, col_ind, values,
                            cmrscl_precision_size(values_precision), &r);
    if (st != CMRSCL_OK)
        return st;
    double seconds = cmrscl_seconds() - t0;
    cmrscl_options plain = *opt;
    plain.renumber = CMRSCL_RENUMBER_NONE;
    const bool sorted = true;
    st = matrix_create(ctx, precision, rows, cols, r.row_ptr, r.col_ind, r.values, values_precision,
                       &sorted, &plain, out);
    if (st == CMRSCL_OK) {
        (*out)->params.analyze_seconds += seconds;
        st = cmrs_renumber_attach(*out, &r);
    }
    if (st != CMRSCL_OK && *out)
        cmrscl_matrix_free(*out), *out = NULL;
    cmrs_renumbered_free(&r);
    return st;
}

cmrscl_status cmrscl_matrix_create_i64(cmrscl_context ctx, cmrscl_precision precision, int32_t rows,
                                       int32_t cols, const int64_t *row_ptr, const int32_t *col_ind,
                                       const void *values, const cmrscl_options *opt,
                                       cmrscl_matrix *out)
{
    return matrix_create(ctx, precision, rows, cols, row_ptr, col_ind, values, precision, NULL, opt,
                         out);
}

cmrscl_status cmrscl_matrix_create(cmrscl_context ctx, cmrscl_precision precision, int32_t rows,
                                   int32_t cols, const int32_t *row_ptr, const int32_t *col_ind,
                                   const void *values, const cmrscl_options *opt,
                                   cmrscl_matrix *out)
{
    if (out)
        *out = NULL;
    if (rows < 0 || !row_ptr) /* the messages of the validation, before widening */
        return cmrs_csr_validate_structure(rows, cols, NULL, col_ind, NULL);
    int64_t *wide = cmrs_csr_widen_row_ptr(row_ptr, rows);
    if (!wide)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY,
                           "no memory for the row pointers of %d rows", rows);
    cmrscl_status st =
        matrix_create(ctx, precision, rows, cols, wide, col_ind, values, precision, NULL, opt, out);
    free(wide);
    return st;
}

cmrscl_status cmrscl_matrix_create_from_csr(cmrscl_context ctx, cmrscl_precision precision,
                                            const cmrscl_csr *csr, const cmrscl_options *opt,
                                            cmrscl_matrix *out)
{
    if (out)
        *out = NULL;
    bool sorted;
    cmrscl_status st = cmrs_csr_validate(csr, &sorted); /* once: matrix_create trusts it */
    if (st != CMRSCL_OK)
        return st;
    return matrix_create(ctx, precision, csr->rows, csr->cols, csr->row_ptr, csr->col_ind,
                         csr->values, CMRSCL_DOUBLE, &sorted, opt, out);
}
