/* plan_api.c - the whole plan of a matrix, as cmrscl_matrix_create makes it and as
 * cmrscl_plan shows it without a context: the tuning database's plan for the matrix's class
 * when every option is automatic, else (or when that plan no longer fits) the rule's
 * (plan.c); then the matrix's sizes and its split into tiles. */
#include "plan/plan.h"
#include "format/format.h"
#include "io/io.h"

#include <stdio.h>
#include <string.h>

/* Every knob of the plan left to the library; the index width is not one (it changes how
 * entries are counted, not the plan), so a forced width still gets the tuned plan. A matrix
 * for blocks takes the rule: the tuner times single products. */
static bool options_automatic(const cmrscl_options *o)
{
    return !o || (!o->height && !o->warp && !o->work_group_size && !o->layout && !o->order &&
                  !o->reduce && !o->kernel && !o->tile && !o->modulo && !o->cache_hint &&
                  !o->lane_entries && !plan_for_blocks(o));
}

cmrscl_status cmrs_plan_for_matrix(const cmrscl_device_info *dev, cmrscl_precision precision,
                                   const plan_matrix *a, const cmrscl_options *opt,
                                   cmrscl_params *p, cmrscl_options *fallback)
{
    char cls[64];
    cmrs_tuning_class(&a->stats, a->nnz, cls, sizeof cls);
    static const cmrscl_options none;
    cmrscl_options tuned;
    bool from_db = options_automatic(opt) && cmrs_tuning_db_lookup(dev, precision, cls, &tuned);
    if (from_db) /* neither changes the plan's kernel, only how entries are held */
        tuned.index_bits = opt ? opt->index_bits : 0, tuned.values = opt ? opt->values : 0;
    cmrscl_status st = cmrs_plan_choose(dev, precision, a, from_db ? &tuned : opt, p);
    if (st != CMRSCL_OK && from_db) /* a stale entry: the rule decides */
        from_db = false, st = cmrs_plan_choose(dev, precision, a, opt, p);
    if (st == CMRSCL_OK && from_db) {
        p->height_source = "tuning database";
        const char *values = strstr(p->plan_reason, "; values");
        char keep[96] = "";
        if (values)
            snprintf(keep, sizeof keep, "%.95s", values);
        snprintf(p->plan_reason, sizeof p->plan_reason,
                 "the tuning database's fastest plan for matrices of class %.64s%s", cls, keep);
    }
    p->struct_size = sizeof *p;         /* the whole view, as the tuner's reports hand it out */
    p->renumber = CMRSCL_RENUMBER_NONE; /* the matrix's numbering: set by its creator */
    if (fallback)
        *fallback = none;
    /* Sub-groups the user did not ask for: their width is the compiler's to choose (the plan
     * can only ask), known once the kernel is built - then the same options on local memory. */
    if (fallback && st == CMRSCL_OK && p->reduce == CMRSCL_REDUCE_SUBGROUP &&
        !(opt && opt->reduce == CMRSCL_REDUCE_SUBGROUP)) {
        *fallback = from_db ? tuned : opt ? *opt : none;
        fallback->reduce = CMRSCL_REDUCE_LOCAL;
    }
    return st;
}

cmrscl_status cmrs_plan_fallback(const cmrscl_device_info *dev, cmrscl_precision precision,
                                 const plan_matrix *a, const cmrscl_options *fallback,
                                 const char *why, cmrscl_params *p)
{
    const char *source = p->height_source;
    bool tuned = source && !strcmp(source, "tuning database");
    cmrscl_status st = cmrs_plan_choose(dev, precision, a, fallback, p);
    if (st != CMRSCL_OK)
        return st;
    char own[sizeof p->plan_reason];
    snprintf(own, sizeof own, "%s", p->plan_reason);
    p->height_source = source; /* the plan it stands in for chose the rest */
    snprintf(p->plan_reason, sizeof p->plan_reason, "%s%.*s; local reduction: %s",
             tuned ? "the tuning database's plan on local memory: " : "", (int)(sizeof own - 240),
             own, why);
    p->struct_size = sizeof *p;
    return CMRSCL_OK;
}

void cmrs_plan_bytes_per_entry(cmrscl_params *p)
{
    double nnz = p->nnz > 0 ? (double)p->nnz : 1.0, stored = (double)p->stored_entries;
    double vs = (double)cmrscl_precision_size(p->precision), is = p->index_bits / 8.0;
    double value = (double)plan_value_bytes(p);
    double row = p->layout == CMRSCL_LAYOUT_UNPACKED ? 1.0 : 0.0;
    /* the tiles' first entry and strip, and their partial sums written and read back */
    double tiles = (double)p->tiles * (is + 4.0 + 2.0 * vs * p->height);
    /* narrow columns: 2 bytes a position and each strip's first column; implied: the first
     * columns alone */
    double column = p->column_bits / 8.0;
    double first_columns = p->column_bits < 32 ? 4.0 * (double)p->strips : 0.0;
    /* DIAGONAL: the diagonal's own array, a value a row */
    double diagonal = vs * (double)plan_diagonal_values(p);
    p->bytes_per_entry_matrix = (stored * (column + row + value) + first_columns + diagonal +
                                 is * ((double)p->strips + 1.0) + tiles) /
                                nnz;
    p->bytes_per_entry_x = (double)p->cols * vs / nnz;
    p->bytes_per_entry_y = (double)p->rows * vs / nnz;
}

void cmrs_plan_sizes(const plan_matrix *a, int32_t tiles, int32_t long_strips, cmrscl_params *p)
{
    p->rows = a->rows, p->cols = a->cols, p->nnz = a->nnz;
    p->strips = (int32_t)(((int64_t)a->rows + p->height - 1) / p->height);
    p->tiles = tiles, p->long_strips = long_strips;
    if (!long_strips)
        p->tile = 0;
    /* a slice's holes are known from RowPtr alone, and counted by the plan already
     * (choose_index_bits); MODULO's only once laid out */
    if (plan_family(p)->holes != HOLES_AFTER_ROWS)
        p->stored_entries = a->nnz;
    cmrs_plan_bytes_per_entry(p);
    p->block_vectors = cmrs_plan_block_vectors(p);
}

cmrscl_status cmrs_params_room(const cmrscl_params *out, size_t *room)
{
    if (!out)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "out (the cmrscl_params) is NULL");
    size_t size = out->struct_size;
    /* 0: a caller that zeroed the struct without setting it - the first version's bytes, so
     * that a newer library never writes past what such a caller has */
    *room = size == 0 ? CMRSCL_PARAMS_SIZE_V1 : size > sizeof *out ? sizeof *out : size;
    if (size != 0 && size < CMRSCL_PARAMS_SIZE_V1)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "cmrscl_params.struct_size is %zu bytes, fewer than the struct's "
                           "first version (%zu): set it to sizeof(cmrscl_params)",
                           size, (size_t)CMRSCL_PARAMS_SIZE_V1);
    return CMRSCL_OK;
}

void cmrs_params_deliver(const cmrscl_params *plan, cmrscl_params *out, size_t room)
{
    memcpy(out, plan, room);
    out->struct_size = room;
}

void cmrs_plan_note_renumbered(cmrscl_params *p)
{
    p->renumber = CMRSCL_RENUMBER_HUBS;
    size_t used = strlen(p->plan_reason);
    snprintf(p->plan_reason + used, sizeof p->plan_reason - used,
             "; unknowns renumbered, the rows longer than the mean first by length (asked for)");
}

static cmrscl_status plan_of(const cmrscl_device_info *dev, cmrscl_precision precision,
                             const cmrscl_csr *csr, const cmrscl_options *opt, cmrscl_params *out);

/* CMRSCL_RENUMBER_HUBS: the plan of P A P^T, as cmrscl_matrix_create makes it. */
static cmrscl_status renumbered_plan_of(const cmrscl_device_info *dev, cmrscl_precision precision,
                                        const cmrscl_csr *csr, const cmrscl_options *opt,
                                        cmrscl_params *out)
{
    cmrs_renumbered r;
    cmrscl_status st = cmrs_renumber_hubs(csr->rows, csr->cols, csr->row_ptr, csr->col_ind,
                                          csr->values, sizeof(double), &r);
    if (st != CMRSCL_OK)
        return st;
    cmrscl_csr renumbered = {csr->rows, csr->cols, csr->nnz, r.row_ptr, r.col_ind, r.values};
    cmrscl_options plain = *opt;
    plain.renumber = CMRSCL_RENUMBER_NONE;
    st = plan_of(dev, precision, &renumbered, &plain, out);
    if (st == CMRSCL_OK)
        cmrs_plan_note_renumbered(out);
    cmrs_renumbered_free(&r);
    return st;
}

static cmrscl_status plan_of(const cmrscl_device_info *dev, cmrscl_precision precision,
                             const cmrscl_csr *csr, const cmrscl_options *opt, cmrscl_params *out)
{
    cmrscl_status st = cmrs_csr_validate(csr, NULL);
    if (st != CMRSCL_OK)
        return st;
    if (opt && opt->renumber == CMRSCL_RENUMBER_HUBS)
        return renumbered_plan_of(dev, precision, csr, opt, out);
    value_census values = {0}; /* plain values asked for: nothing to examine */
    if (!opt || opt->values != CMRSCL_VALUES_PLAIN)
        cmrs_value_census_take(csr->values, CMRSCL_DOUBLE, csr->rows, csr->row_ptr, csr->col_ind,
                               precision, &values);
    plan_matrix a = {.rows = csr->rows,
                     .cols = csr->cols,
                     .nnz = csr->nnz,
                     .row_ptr = csr->row_ptr,
                     .col_ind = csr->col_ind,
                     .values = &values,
                     .host_layout = true};
    cmrs_analyze_rows(csr->rows, csr->cols, csr->row_ptr, csr->col_ind, &a.stats);
    st = cmrs_plan_for_matrix(dev, precision, &a, opt, out, NULL);
    if (st != CMRSCL_OK)
        return st;
    int64_t tiles = 0, longs = 0;
    if (out->tile > 0)
        cmrs_split_count(a.rows, a.row_ptr, out->height, out->tile, cmrs_plan_group_tiles(out),
                         &tiles, &longs);
    cmrs_plan_sizes(&a, (int32_t)tiles, (int32_t)longs, out);
    return CMRSCL_OK;
}

cmrscl_status cmrscl_plan(const cmrscl_device_info *dev, cmrscl_precision precision,
                          const cmrscl_csr *csr, const cmrscl_options *opt, cmrscl_params *out)
{
    size_t room = 0;
    cmrscl_status st = dev ? cmrs_params_room(out, &room)
                           : cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "device is NULL");
    if (st != CMRSCL_OK)
        return st;
    cmrscl_params plan = {0};
    st = plan_of(dev, precision, csr, opt, &plan);
    if (st != CMRSCL_OK)
        memset(&plan, 0, sizeof plan);
    cmrs_params_deliver(&plan, out, room);
    return st;
}
