/* plan_values.c - how the plan stores the values (cmrscl_values in cmrscl.h), from the
 * census of the values (format/values_codec.c) and the column word's free bits: the reason
 * says what was chosen and why. The kernels decode it (cl/spmv_common.cl, "the values"). */
#include "plan/plan.h"

#include <stdio.h>
#include <string.h>

/* The smallest exact storage of the values (cmrscl_values in cmrscl.h): a dictionary when
 * its index fits the column word beside the row in strip, else floats for doubles that are
 * floats, else plain. Bytes an entry moves, float / double: plain 8 / 12, float - / 8,
 * dictionary 4 / 4 (the index rides in the column word; the dictionary stays in L1). */
cmrscl_status plan_choose_values(const plan_matrix *a, const cmrscl_options *opt, cmrscl_params *p)
{
    const value_census *c = a->values && a->values->examined ? a->values : NULL;
    const char *why = NULL;
    p->values = CMRSCL_VALUES_PLAIN;
    int bits = c && c->distinct <= CMRSCL_MAX_DICT ? value_dict_bits(c->distinct) : 0;
    /* a hole's word is all ones: with holes the column field may never be */
    int64_t columns_fit = (1ll << (32 - p->row_bits - bits)) - (plan_has_holes(p->kernel) ? 1 : 0);
    bool dict_fits = (int64_t)a->cols <= columns_fit;
    if (p->kernel == CMRSCL_KERNEL_MODULO)
        why = "MODULO's holes store zeros";
    else if (a->nnz == 0)
        why = "no entries";
    else if (!c)
        why = "values not examined (made on the device)";
    else if (c->distinct <= CMRSCL_MAX_DICT && dict_fits)
        p->values = CMRSCL_VALUES_DICT;
    else if (c->float_exact)
        p->values = CMRSCL_VALUES_FLOAT;
    else if (c->distinct <= CMRSCL_MAX_DICT)
        why = "the columns leave no bits for a dictionary";
    else
        why = p->precision == CMRSCL_DOUBLE ? "many distinct values, not all floats"
                                            : "many distinct values";
    if (opt->values == CMRSCL_VALUES_PLAIN) {
        p->values = CMRSCL_VALUES_PLAIN, why = "plain values chosen by the user";
    } else if (opt->values == CMRSCL_VALUES_DICT && p->values != CMRSCL_VALUES_DICT) {
        return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                           "values: a dictionary needs at most %d distinct values and columns "
                           "that leave its bits free (%s)",
                           CMRSCL_MAX_DICT, why ? why : "the values are floats: FLOAT fits");
    } else if (opt->values == CMRSCL_VALUES_FLOAT) {
        if (p->precision != CMRSCL_DOUBLE || !c || !c->float_exact ||
            p->kernel == CMRSCL_KERNEL_MODULO)
            return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT,
                               "values: FLOAT stores double values that are all exactly floats "
                               "(%s)",
                               p->precision != CMRSCL_DOUBLE ? "the matrix is float"
                               : why                         ? why
                                                             : "some are not");
        p->values = CMRSCL_VALUES_FLOAT;
    }
    p->dict_bits = p->values == CMRSCL_VALUES_DICT ? bits : 0;
    p->dict_size = p->values == CMRSCL_VALUES_DICT ? c->distinct : 0;
    size_t n = strlen(p->plan_reason);
    if (p->values == CMRSCL_VALUES_DICT)
        snprintf(p->plan_reason + n, sizeof p->plan_reason - n,
                 "; values: a dictionary of %d, %d bit%s an entry in its column word", c->distinct,
                 bits, bits == 1 ? "" : "s");
    else if (p->values == CMRSCL_VALUES_FLOAT)
        snprintf(p->plan_reason + n, sizeof p->plan_reason - n,
                 "; values: doubles stored as floats");
    else
        snprintf(p->plan_reason + n, sizeof p->plan_reason - n, "; values plain: %s", why);
    return CMRSCL_OK;
}
