/* plan_values.c - how the plan stores the values (cmrscl_values in cmrscl.h), from the
 * census of the values (format/values_codec.c) and the column word's free bits: the reason
 * says what was chosen and why. The kernels decode it (cl/spmv_common.cl, "the values"). */
#include "plan/plan.h"

#include <stdio.h>
#include <string.h>

/* Why DIAGONAL cannot be taken (census c, not NULL), or NULL. */
static const char *no_diagonal(const value_census *c, bool dict_fits)
{
    return c->distinct <= CMRSCL_MAX_DICT ? "DICT fits: few values in all"
           : c->off_distinct == -2        ? "a row holds two entries on its diagonal"
           : c->off_distinct < 0          ? "more than 15 values off the diagonal"
           : !dict_fits                   ? "the columns leave no bits for a dictionary"
                                          : NULL;
}

/* Whether an index in the column word pays in this plan: not where a work-item walks a whole
 * strip of the segment family alone (WARP 1, PoCL's CPU plans), whose LANE_ENTRIES values load
 * as one vector - a dictionary turns that load into indexed loads and selects, which cost
 * the CPU more than the bytes they save (docs/dev/PERFORMANCE.md, SEGMENT_ITEM_VALUES: DICT
 * and DIAGONAL 1.3x slower there, both faster in the same family on warps of 16). */
static bool index_pays(const cmrscl_params *p)
{
    return !(p->kernel == CMRSCL_KERNEL_SEGMENT && p->warp == 1);
}

/* The smallest exact storage of the values (cmrscl_values in cmrscl.h): a dictionary when
 * its index fits the column word beside the row in strip, else a dictionary of the values
 * off the diagonal with the diagonal apart where its array is smaller than the values, else
 * floats for doubles that are floats, else plain. Bytes an entry moves, float / double: plain
 * 8 / 12, float - / 8, dictionary 4 / 4 (the index rides in the column word; the dictionary
 * stays in L1), the diagonal apart 4 / 4 and a value a row. AUTO takes an index only where it
 * pays (index_pays) and where implied columns, if asked for, leave it bits: with them only a
 * dictionary of one value (no index bits). */
cmrscl_status cmrs_plan_choose_values(const plan_matrix *a, const cmrscl_options *opt,
                                      cmrscl_params *p)
{
    const value_census *c = a->values && a->values->examined ? a->values : NULL;
    const char *why = NULL;
    p->values = CMRSCL_VALUES_PLAIN;
    const bool few = c && c->distinct <= CMRSCL_MAX_DICT;
    const bool apart = c && !few && c->off_distinct >= 0;
    /* implied columns asked for: no word to hold an index (cmrs_plan_choose_columns) */
    const bool no_index = opt->column_bits == CMRSCL_COLUMNS_IMPLIED;
    int bits = few     ? cmrs_value_dict_bits(c->distinct)
               : apart ? cmrs_value_dict_bits(c->off_distinct + 1) /* and the diagonal's */
                       : 0;
    /* a hole's word is all ones: with holes the column field may never be */
    int64_t columns_fit = (1ll << (32 - p->row_bits - bits)) - (plan_has_holes(p->kernel) ? 1 : 0);
    bool dict_fits = (int64_t)a->cols <= columns_fit;
    bool index_fits = dict_fits && !(no_index && bits > 0) && index_pays(p); /* AUTO's */
    /* DIAGONAL's values - the dictionary's slots and the diagonal - against FLOAT's or PLAIN's */
    double vs = (double)cmrscl_precision_size(p->precision);
    bool apart_smaller =
        apart && vs * (double)((1ll << bits) + plan_diagonal_length(a->rows, a->cols)) <
                     (c->float_exact ? 4.0 : vs) * (double)a->nnz;
    if (plan_family(p)->holes == HOLES_BETWEEN)
        why = "MODULO's holes store zeros";
    else if (a->nnz == 0)
        why = "no entries";
    else if (!c)
        why = "values not examined (made on the device)";
    else if (few && index_fits)
        p->values = CMRSCL_VALUES_DICT;
    else if (apart && index_fits && apart_smaller)
        p->values = CMRSCL_VALUES_DIAGONAL;
    else if (c->float_exact)
        p->values = CMRSCL_VALUES_FLOAT;
    else if ((few || apart) && !dict_fits)
        why = "the columns leave no bits for a dictionary";
    else if ((few || apart) && no_index)
        why = "implied columns asked for: no index bits";
    else if ((few || apart) && !index_pays(p))
        why = "a work-item walks each strip: its values load as a vector";
    else if (apart)
        why = "the diagonal's own array would outweigh the values";
    else
        why = p->precision == CMRSCL_DOUBLE ? "many distinct values, not all floats"
                                            : "many distinct values";
    if (opt->values == CMRSCL_VALUES_PLAIN) {
        p->values = CMRSCL_VALUES_PLAIN, why = "plain values chosen by the user";
    } else if (opt->values == CMRSCL_VALUES_DICT && p->values != CMRSCL_VALUES_DICT) {
        const char *no = !c || plan_family(p)->holes == HOLES_BETWEEN || a->nnz == 0 ? why
                         : !few       ? "more than 16 distinct values"
                         : !dict_fits ? "the columns leave no bits for a dictionary"
                                      : NULL;
        if (no)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "values: a dictionary needs at most %d distinct values and "
                               "columns that leave its bits free (%s)",
                               CMRSCL_MAX_DICT, no);
        p->values = CMRSCL_VALUES_DICT; /* asked for beside implied columns: they say why not */
    } else if (opt->values == CMRSCL_VALUES_DIAGONAL && p->values != CMRSCL_VALUES_DIAGONAL) {
        const char *no = !c || plan_family(p)->holes == HOLES_BETWEEN || a->nnz == 0
                             ? why
                             : no_diagonal(c, dict_fits);
        if (no)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "values: DIAGONAL needs more than %d distinct values, at most %d "
                               "of them off the diagonal, at most one entry on it a row, and "
                               "columns that leave the dictionary's bits free (%s)",
                               CMRSCL_MAX_DICT, CMRSCL_MAX_DICT - 1, no);
        p->values = CMRSCL_VALUES_DIAGONAL; /* asked for where AUTO found it larger */
    } else if (opt->values == CMRSCL_VALUES_FLOAT) {
        if (p->precision != CMRSCL_DOUBLE || !c || !c->float_exact ||
            plan_family(p)->holes == HOLES_BETWEEN)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "values: FLOAT stores double values that are all exactly floats "
                               "(%s)",
                               p->precision != CMRSCL_DOUBLE ? "the matrix is float"
                               : why                         ? why
                                                             : "some are not");
        p->values = CMRSCL_VALUES_FLOAT;
    }
    const bool coded = plan_value_codec(p)->in_column_words;
    p->dict_bits = coded ? bits : 0;
    /* the dictionary's values; DIAGONAL's last index (2^dict_bits - 1) is the diagonal's */
    p->dict_size = !coded ? 0 : p->values == CMRSCL_VALUES_DICT ? c->distinct : c->off_distinct;
    size_t n = strlen(p->plan_reason);
    if (p->values == CMRSCL_VALUES_DICT)
        snprintf(p->plan_reason + n, sizeof p->plan_reason - n,
                 "; values: a dictionary of %d, %d bit%s an entry in its column word", c->distinct,
                 bits, bits == 1 ? "" : "s");
    else if (p->values == CMRSCL_VALUES_DIAGONAL)
        snprintf(p->plan_reason + n, sizeof p->plan_reason - n,
                 "; values: the diagonal apart (a value a row), the %d off it a dictionary, %d "
                 "bit%s an entry in its column word",
                 c->off_distinct, bits, bits == 1 ? "" : "s");
    else if (p->values == CMRSCL_VALUES_FLOAT)
        snprintf(p->plan_reason + n, sizeof p->plan_reason - n,
                 "; values: doubles stored as floats");
    else
        snprintf(p->plan_reason + n, sizeof p->plan_reason - n, "; values plain: %s", why);
    return CMRSCL_OK;
}

/* Implied columns (cmrs_narrow.c): strips of one row whose columns are one run store no
 * column word, only each strip's first column - 4 bytes a row against 2 an entry for narrow
 * offsets. Where they fit they move fewer bytes than offsets, so they come first, under the
 * offsets' rule (beyond the device's cache; dense:6000 is the suite's case). Returns what
 * they need that the matrix or plan lacks, or NULL having taken them. */
static const char *choose_implied(const plan_matrix *a, cmrscl_params *p)
{
    if (!plan_family(p)->implied_columns || p->height != 1)
        return "strips of one row (the strip kernel at HEIGHT 1)";
    if (a->nnz && !a->col_ind)
        return "the columns on the host";
    if (!cmrs_rows_are_runs(a->rows, a->row_ptr, a->col_ind))
        return "each row's columns to be one ascending run";
    if (p->dict_bits)
        return "values without a dictionary index in a column word";
    p->column_bits = 0;
    size_t n = strlen(p->plan_reason);
    snprintf(p->plan_reason + n, sizeof p->plan_reason - n,
             "; columns implied: each row's columns one run, its first column alone stored");
    return NULL;
}

/* Narrow columns (cmrs_narrow.c): 16-bit words where they fit and make the matrix smaller (the
 * strips' first columns cost 4 bytes each: not for strips of about 2 entries). Slices store
 * steps along each row, beside the dictionary index: the largest at most 2^(16 - dict_bits)
 * - 2 (below the hole's all ones); they halve the column bytes and cost the lane one add an
 * entry, measured on an H100 (docs/dev/PERFORMANCE.md, narrow columns). Strips store each entry's
 * offset from the strip's first column beside its dictionary index and its row (in as few
 * bits as the height needs): at most 2^(16 - those bits) - 2. They pay where the matrix
 * streams from memory (H100: dense:6000 0.108 -> 0.087 ms in float, 0.155 -> 0.135 in
 * double), and cost up to 9% of a small one's device time where it stays in the cache
 * (rajat01 double, fem:10:4 float; docs/dev/PERFORMANCE.md, narrow strips): taken only for a
 * matrix whose 32-bit entries exceed the device's cache. The segment and MODULO families
 * have none. Implied columns before them, where they fit. */
/* Jump words (cmrs_narrow.c) where a slice's steps are too long for 16 bits beside their
 * dictionary index: steps up to cmrs_narrow_jump_above in an entry's word, a longer one
 * with a jump word before it. The walk of narrow words is bound by its positions, not its
 * bytes: a jump is a position more, as dear as an entry, so jumps are taken where they are at
 * most NARROW_JUMPS_PER_ENTRY of the entries (a 27-point stencil's two an entry in 27 gained,
 * a 7-point stencil's two in 7 lost to 32-bit words: docs/dev/PERFORMANCE.md,
 * NARROW_JUMPS_PER_ENTRY); asked for (column_bits 16), wherever they reach. Returns whether
 * it took them; `why` says why not, or what they cost. */
#define NARROW_JUMPS_PER_ENTRY 0.125
static bool choose_jumps(const plan_matrix *a, const cmrscl_options *opt, int64_t largest,
                         cmrscl_params *p, char *why, size_t size)
{
    if (largest > CMRS_NARROW_JUMP_REACH) {
        snprintf(why, size, "a step of %lld columns, beyond a jump's %lld", (long long)largest,
                 (long long)CMRS_NARROW_JUMP_REACH);
        return false;
    }
    int64_t jumps = 0, above = cmrs_narrow_jump_above(p->dict_bits);
    int64_t stored = cmrs_slice_stored(a->rows, a->row_ptr, a->col_ind, p->height, above, &jumps);
    double per_entry = (double)jumps / (double)a->nnz;
    if (p->index_bits == 32 && stored > INT32_MAX) {
        snprintf(why, size, "with jump words %lld positions, beyond 32-bit indices",
                 (long long)stored);
        return false;
    }
    const bool over = !opt->column_bits && per_entry > NARROW_JUMPS_PER_ENTRY;
    int n = snprintf(why, size, "%lld jump words, %.3f an entry", (long long)jumps, per_entry);
    if (over && n > 0 && (size_t)n < size)
        snprintf(why + n, size - (size_t)n, ", above %.3f", NARROW_JUMPS_PER_ENTRY);
    if (over)
        return false;
    p->column_jumps = jumps, p->stored_entries = stored;
    return true;
}

cmrscl_status cmrs_plan_choose_columns(const cmrscl_device_info *dev, const plan_matrix *a,
                                       const cmrscl_options *opt, cmrscl_params *p)
{
    p->column_bits = 32;
    p->column_jumps = 0;
    const variant_family *f = plan_family(p);
    bool steps = f->lane_per_row; /* narrow words: steps along a row, else offsets in a strip */
    bool implied = f->implied_columns;
    if (!f->narrow_columns && !opt->column_bits)
        return CMRSCL_OK;
    if (opt->column_bits == 32) {
        size_t n = strlen(p->plan_reason);
        snprintf(p->plan_reason + n, sizeof p->plan_reason - n,
                 "; columns 32-bit: chosen by the user");
        return CMRSCL_OK;
    }
    if (!f->narrow_columns)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "column_bits %d: narrow and implied columns are the slice and strip "
                           "kernels' (kernel %s)",
                           opt->column_bits, cmrs_variant_family_name(p->kernel));
    int field = 16 - p->dict_bits - plan_narrow_row_bits(p);
    int64_t limit = (1ll << field) - 2;
    int32_t strips = (int32_t)(((int64_t)a->rows + p->height - 1) / p->height);
    /* a 32-bit first column a strip against 2 bytes saved a position (the plan counted them) */
    int64_t stored = f->holes == HOLES_AFTER_ROWS ? p->stored_entries : a->nnz;
    size_t narrow_bytes = cmrs_narrow_bytes(strips, stored),
           wide_bytes = 4 * ((size_t)stored + CMRS_ENTRY_PAD);
    const char *kind = steps ? "step" : "offset";
    /* strips: the matrix's bytes with 32-bit column words, as its values are stored; where
     * the device reports no cache size (Oclgrind), nothing is known to be beyond it */
    size_t value_bytes = plan_value_bytes(p);
    double entry_bytes = (double)stored * (double)(4 + value_bytes);
    bool cached = !opt->column_bits && implied &&
                  (!dev->cache_bytes || entry_bytes <= (double)dev->cache_bytes);
    if (opt->column_bits == CMRSCL_COLUMNS_IMPLIED || (!opt->column_bits && implied && !cached)) {
        const char *no = choose_implied(a, p);
        if (!no)
            return CMRSCL_OK;
        if (opt->column_bits == CMRSCL_COLUMNS_IMPLIED)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "column_bits %d: implied columns need %s", opt->column_bits, no);
    }
    int64_t largest = -2; /* not counted: no columns, or a cached strip layout */
    if (a->col_ind && a->nnz > 0 && !cached)
        largest = steps ? cmrs_narrow_largest_step(a->rows, a->row_ptr, a->col_ind, p->height)
                        : cmrs_narrow_largest_offset(a->rows, a->row_ptr, a->col_ind, p->height);
    char why[96];
    if (cached && !dev->cache_bytes)
        snprintf(why, sizeof why, "the device reports no cache size");
    else if (cached)
        snprintf(why, sizeof why, "the matrix fits the device's cache (%.1f MB of entries)",
                 entry_bytes / 1e6);
    else if (largest == -2)
        snprintf(why, sizeof why, "%s", a->nnz ? "columns not on the host" : "no entries");
    else if (largest < 0)
        snprintf(why, sizeof why, "a row's columns are not sorted");
    else if (largest > limit && !steps)
        snprintf(why, sizeof why, "an offset of %lld columns, above %lld", (long long)largest,
                 (long long)limit);
    else if (largest > limit && !choose_jumps(a, opt, largest, p, why, sizeof why))
        ; /* why says why not */
    else if (largest <= limit && !opt->column_bits && narrow_bytes >= wide_bytes)
        snprintf(why, sizeof why, "strips of %.1f entries: their first columns cost more",
                 (double)stored / strips);
    else /* narrow, with jump words where a step outgrows its word (why says what they cost) */
        p->column_bits = 16;
    if (opt->column_bits == 16 && p->column_bits != 16)
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "column_bits 16: narrow columns need each %s to fit %d bits: %s",
                           steps ? "step (from the column before in its row, or from its "
                                   "strip's first column)"
                                 : "column's offset from its strip's first column",
                           field, why);
    size_t n = strlen(p->plan_reason);
    if (p->column_bits == 16 && p->column_jumps)
        snprintf(p->plan_reason + n, sizeof p->plan_reason - n,
                 "; columns: 16-bit steps (the largest %lld), a jump word before each above "
                 "%lld - %s",
                 (long long)largest, (long long)cmrs_narrow_jump_above(p->dict_bits), why);
    else if (p->column_bits == 16)
        snprintf(p->plan_reason + n, sizeof p->plan_reason - n,
                 "; columns: 16-bit %ss (the largest %lld)", kind, (long long)largest);
    else
        snprintf(p->plan_reason + n, sizeof p->plan_reason - n, "; columns 32-bit: %s", why);
    return CMRSCL_OK;
}
