/* plans.h - plans by name, for `bench --plans` and the reports: a name maps to the
 * cmrscl_options that ask the library for that plan, and a built plan prints compactly. */
#ifndef CMRSCL_PLANS_H
#define CMRSCL_PLANS_H

#include "cmrscl.h"

#include <stdbool.h>
#include <stddef.h>

/* NAME[:HEIGHT][+MODIFIER...], NAME one of
 *   auto        the library's choice (the options given on the command line apply)
 *   csr-vector  strip family, HEIGHT 1, one warp per row, never split (paper's baseline)
 *   csr-scalar  strip family, HEIGHT 1, one work-item per row, never split
 *   strip       Algorithm 1 (HEIGHT: the device's unless given)
 *   segment     the segmented warp scan (HEIGHT: the rule's unless given)
 *   modulo      the paper's MODULO kernel (HEIGHT 16 unless given; never chosen by auto)
 * and MODIFIER one of stream (cache hint), nosplit, rows, columns, local, shuffle,
 * subgroup, w=N (lanes per strip), tile=N, m=N (modulo's slot sets, 2..32). On a bad name prints
 * the reason and returns false. */
bool plan_from_name(const char *name, const cmrscl_options *base, cmrscl_options *out);

/* "segment h128 w32/32 shuffle rows packed" plus "split 1024" and "stream" when used. */
void plan_describe(const cmrscl_params *p, char *buf, size_t size);
/* How the plan stores the values, in a word: plain, float, dict1 .. dict16 (the dictionary's
 * capacity, 2^dict_bits), diagonal1 .. diagonal16 (the same, its last index the diagonal's). */
const char *plan_values_name(const cmrscl_params *p);

const char *plan_kernel_name(cmrscl_kernel k);
const char *plan_reduce_name(cmrscl_reduce r);
/* The kernel family or reduction of a name of the variant table; false if none. */
bool plan_kernel_by_name(const char *name, cmrscl_kernel *out);
bool plan_reduce_by_name(const char *name, cmrscl_reduce *out);

#endif
