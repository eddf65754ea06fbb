/* format.h - the format stage: the arrays the device holds, built on the host from a valid
 * CSR structure and the plan's parameters - CMRS (StripPtr, packed or unpacked ColInd, the
 * values, column-ordered strips; cmrs.c), the layouts with holes (cmrs_holes.c: MODULO's,
 * cmrs_modulo.c, and the slices, cmrs_slice.c), and the split of long strips into tiles
 * (split.c) - with their sentinels from the kernels'
 * contract, cl/cmrs_abi.h. */
#ifndef CMRSCL_FORMAT_H
#define CMRSCL_FORMAT_H

#include "base/base.h"
#include "cmrs_abi.h" /* the kernels' contract: sentinels, argument order, option codes */

/* Threads for a pass over n entries: the calling thread alone below 2^16 entries, where
 * starting threads costs more than it saves. */
static inline int format_threads(int64_t n) { return n < (1 << 16) ? 1 : cmrs_parallel_threads(); }

/* ---- cmrs.c: CSR -> CMRS ---- */

/* The flag of a long strip (split path) in StripPtr, its top bit at the matrix's entry index
 * width (cmrs_abi.h). */
#define STRIP_PTR_LONG(index_bits) ((uint64_t)1 << CMRS_LONG_STRIP_BIT(index_bits))

/* The values cmrs_build moves with the entries: src (CSR order) converted into dst (CMRS
 * order, nnz + CMRS_ENTRY_PAD elements, the padding zeroed) as each strip is placed, so no
 * permutation array is needed for them. */
typedef struct cmrs_values {
    const void *src;
    cmrscl_precision src_precision;
    void *dst;
    cmrscl_precision dst_precision;
} cmrs_values;
/* Builds the CMRS arrays of a valid CSR structure: strip_ptr, col_ind (followed by
 * CMRS_ENTRY_PAD zeros), row_in_strip, and the values when `values` is not NULL
 * (out->values is left NULL: the caller owns values->dst). perm_bits 32 or 64 (0: none)
 * asks for *perm: for each CMRS position the CSR position of its entry, as uint32_t or
 * uint64_t (what the device's values updates read); NULL when the two orders agree (no
 * column ordering). */
CMRSCL_HIDDEN cmrscl_status cmrs_build(int32_t rows, int32_t cols, const int64_t *row_ptr,
                                       const int32_t *col_ind, int height, unsigned flags,
                                       const cmrs_values *values, int perm_bits, cmrscl_cmrs *out,
                                       void **perm);

/* ---- cmrs_holes.c: layouts with holes (MODULO, slice) ---- */

/* A layout with holes: cmrs (strip_ptr, col_ind with CMRS_ENTRY_PAD zeros after it,
 * row_in_strip; cmrs.values NULL, cmrs.nnz the stored positions), the values (value_size
 * bytes a position + CMRS_ENTRY_PAD, holes 0) and the permutation (CSR entry per position,
 * all bits set for a hole). */
typedef struct cmrs_holed {
    cmrscl_cmrs cmrs;
    void *values;
    void *perm;
} cmrs_holed;
/* What a layout with holes places: the positions of a CMRS built by cmrs_build, their values
 * (value_size bytes a position; NULL: none) and their CSR entries (perm, perm_bits wide; NULL:
 * the identity, row-ordered strips); perm_bits 32 or 64 asks for the output's permutation, 0
 * for none. (The slices place their entries from the CSR themselves: for their holes, `in`
 * is the header of the CMRS they stand for.) */
typedef struct holed_source {
    const cmrscl_cmrs *in;
    const void *values;
    size_t value_size;
    const void *perm;
    int perm_bits;
} holed_source;
/* The steps of a layout: start (out->cmrs a copy of in's header and a zeroed StripPtr), each
 * strip's stored length into out->cmrs.strip_ptr[s + 1], allocate (their prefix sums, the
 * arrays), then position q of the output takes input position k, or a hole for UINT64_MAX.
 * On failure out is freed. */
CMRSCL_HIDDEN cmrscl_status cmrs_holed_start(const holed_source *src, cmrs_holed *out);
CMRSCL_HIDDEN cmrscl_status cmrs_holed_allocate(const holed_source *src, cmrs_holed *out);
CMRSCL_HIDDEN void cmrs_holed_place(const holed_source *src, cmrs_holed *out, uint64_t q,
                                    uint64_t k);
CMRSCL_HIDDEN void cmrs_holed_free(cmrs_holed *out);
/* Drops the holes in place (strip_ptr, col_ind, row_in_strip, values, nnz): a valid CMRS of
 * the matrix again. */
CMRSCL_HIDDEN void cmrs_drop_holes(cmrscl_cmrs *c);

/* ---- cmrs_modulo.c: the MODULO kernel's layout ---- */

/* Re-lays each strip of `in` (built by cmrs_build) so that within a step of `warp`
 * positions, positions with the same (position in strip) % modulo never hold the same row,
 * with holes where needed. values: value_size bytes per position of in (may be NULL). perm:
 * the CSR entry of each position of in, perm_bits wide (NULL: the identity, row-ordered
 * strips); perm_bits 32 or 64 asks for out->perm, 0 for none. On all host threads; the
 * result does not depend on their number. */
CMRSCL_HIDDEN cmrscl_status cmrs_modulo_layout(const cmrscl_cmrs *in, const void *values,
                                               size_t value_size, const void *perm, int perm_bits,
                                               int modulo, int warp, cmrs_holed *out);

/* ---- cmrs_slice.c: the slice kernel's layout ---- */

/* Positions the slice layout of HEIGHT `height` stores for a CSR structure: each strip's
 * longest row times height - a row's length counting, where jump_above is not 0, a jump
 * position before each of its steps longer than jump_above (narrow columns with jumps,
 * cmrs_narrow.c; col_ind may be NULL without); *jumps (unless NULL): the jump positions. */
CMRSCL_HIDDEN int64_t cmrs_slice_stored(int32_t rows, const int64_t *row_ptr,
                                        const int32_t *col_ind, int height, int64_t jump_above,
                                        int64_t *jumps);
/* Stored positions an entry of that layout (its holes included) for a CSR structure of nnz > 0
 * entries, or INFINITY where the layout cannot hold the matrix (a hole's column word must
 * stay unique: cmrs_packing_fits). What the plan weighs slices by. */
CMRSCL_HIDDEN double cmrs_slice_holes(int32_t rows, int32_t cols, const int64_t *row_ptr,
                                      int height);
/* The slice layout of a CSR structure with sorted rows (the plan checked), in strips of
 * `height` rows: word i of strip s's row r at strip_ptr[s] + i * height + r, its words its
 * entries in order and, where jump_above is not 0, a hole before each step longer than it,
 * rows shorter than the strip's longest padded with holes. The column words packed as
 * cmrs_build packs them (flags: CMRSCL_CMRS_UNPACKED; never column-ordered), the values
 * converted to values->dst_precision as it converts them (values->dst unused; values NULL:
 * none; values->src NULL only without entries); perm_bits 32 or 64 asks for out->perm (the
 * CSR entry of each position), 0 for none. On all host threads; the result does not depend
 * on their number. */
CMRSCL_HIDDEN cmrscl_status cmrs_slice_from_csr(int32_t rows, int32_t cols, const int64_t *row_ptr,
                                                const int32_t *col_ind, int height, unsigned flags,
                                                const cmrs_values *values, int64_t jump_above,
                                                int perm_bits, cmrs_holed *out);

/* ---- cmrs_narrow.c: narrow columns, 2-byte steps (slices) or offsets (strips; see the
 * file) ---- */

/* The largest step a narrow slice of `height` rows would store for this CSR structure: each
 * row's first column from its strip's smallest first column, then each column from the one
 * before; -1 when some row's columns go down (unsorted: no steps). */
CMRSCL_HIDDEN int64_t cmrs_narrow_largest_step(int32_t rows, const int64_t *row_ptr,
                                               const int32_t *col_ind, int height);
/* The largest offset a narrow strip of `height` rows would store: over the strips, the
 * largest column less the smallest. */
CMRSCL_HIDDEN int64_t cmrs_narrow_largest_offset(int32_t rows, const int64_t *row_ptr,
                                                 const int32_t *col_ind, int height);
/* Bits of the row in strip in a strip's 16-bit offset word: as few as `height` needs when
 * packed (0 for one row), none unpacked. */
CMRSCL_HIDDEN int cmrs_narrow_row_bits(int height, bool packed);
/* Device bytes of the narrow columns: a 32-bit first column per strip, then a 16-bit word
 * per stored position and CMRS_ENTRY_PAD more, rounded to 4 bytes. */
CMRSCL_HIDDEN size_t cmrs_narrow_bytes(int32_t strips, int64_t stored);
/* Narrow steps with jumps (cl/cmrs_abi.h, CMRS_NARROW_JUMP): the longest step an entry's
 * word holds beside a dictionary index of dict_bits (its top bit clear), and the longest a
 * jump and its entry reach together. */
static inline int64_t cmrs_narrow_jump_above(int dict_bits)
{
    return (1ll << (15 - dict_bits)) - 1;
}
#define CMRS_NARROW_JUMP_REACH                                                                     \
    (((int64_t)CMRS_NARROW_JUMP - 2) << CMRS_NARROW_JUMP_SHIFT |                                   \
     ((1 << CMRS_NARROW_JUMP_SHIFT) - 1))
/* How the words of cmrs_narrow_encode read: a strip's offsets, a slice's steps, or steps
 * with a jump word in each hole that comes before an entry (cmrs_slice_from_csr put them). */
typedef enum { NARROW_STEPS, NARROW_STEPS_JUMPS, NARROW_OFFSETS } narrow_kind;
/* The narrow columns (*out, cmrs_narrow_bytes, the caller frees) of a CMRS whose column
 * words carry dict_bits of dictionary index above the row_bits of the row. Every step must
 * fit 16 - dict_bits bits and stay below the all-ones (with jumps: a step longer than
 * cmrs_narrow_jump_above has its jump), every offset 16 - cmrs_narrow_row_bits - dict_bits
 * bits (the plan checked). */
CMRSCL_HIDDEN cmrscl_status cmrs_narrow_encode(const cmrscl_cmrs *c, int dict_bits,
                                               narrow_kind kind, void **out);
/* The reverse: c's column words (c: strip_ptr and the shape) from the narrow columns; a
 * jump's position reads back as a hole. */
CMRSCL_HIDDEN void cmrs_narrow_decode(const void *narrow, const cmrscl_cmrs *c, int dict_bits,
                                      narrow_kind kind, uint32_t *col_ind);
/* Implied columns (strips of one row, each row's columns one ascending run): whether every
 * row's columns are such a run; the device bytes (a 32-bit first column a strip); the
 * strips' first columns (*out, the caller frees) of a CMRS of HEIGHT 1 without dictionary
 * bits; and the reverse, c's column words (row 0) from them. */
CMRSCL_HIDDEN bool cmrs_rows_are_runs(int32_t rows, const int64_t *row_ptr, const int32_t *col_ind);
CMRSCL_HIDDEN size_t cmrs_implied_bytes(int32_t strips);
CMRSCL_HIDDEN cmrscl_status cmrs_implied_encode(const cmrscl_cmrs *c, void **out);
CMRSCL_HIDDEN void cmrs_implied_decode(const void *implied, const cmrscl_cmrs *c,
                                       uint32_t *col_ind);

/* dst[k] = src[k] converted between float and double, for k < n, on all host threads. */
CMRSCL_HIDDEN void cmrs_values_convert(void *dst, cmrscl_precision dst_precision, const void *src,
                                       cmrscl_precision src_precision, int64_t n);
/* Does the matrix fit the packed layout with this height? */
CMRSCL_HIDDEN bool cmrs_packing_fits(int32_t cols, int height);

/* ---- values_codec.c: how the device stores the values (cmrscl_values) ---- */

/* What the plan knows of the values: the distinct ones in the matrix's precision (compared
 * by their bits) and whether doubles are all exactly floats; where they are too many for a
 * dictionary, the distinct ones off the diagonal (a graph Laplacian's -1 beside its degrees, a
 * shifted stencil's coefficients beside a varying diagonal). */
typedef struct value_census {
    bool examined;    /* false: not looked at (made on the device): the values stay plain */
    int distinct;     /* 0 .. CMRSCL_MAX_DICT, or CMRSCL_MAX_DICT + 1 for "more" */
    bool float_exact; /* a double matrix whose values are all floats */
    uint64_t dict[CMRSCL_MAX_DICT]; /* the distinct values' bits, ascending (a float's in the
                                       low 32): the dictionary, index = position */
    /* DIAGONAL (taken only where `distinct` is "more"): the distinct values off the diagonal,
     * as dict above, when they leave a dictionary index for the diagonal's entries and no row
     * holds two entries on its diagonal; off_distinct is -1 where they are more, -2 where a
     * row holds two (0: a diagonal matrix) */
    int off_distinct;
    uint64_t off_dict[CMRSCL_MAX_DICT - 1];
} value_census;
/* The census of the values of a CSR matrix (src precision) as the matrix's precision sees
 * them; stops counting past CMRSCL_MAX_DICT distinct. On all host threads; the result does
 * not depend on their number. */
CMRSCL_HIDDEN void cmrs_value_census_take(const void *values, cmrscl_precision src, int32_t rows,
                                          const int64_t *row_ptr, const int32_t *col_ind,
                                          cmrscl_precision precision, value_census *out);
/* Bits of a dictionary index for `distinct` values (0 for one). */
CMRSCL_HIDDEN int cmrs_value_dict_bits(int distinct);
/* A dictionary as the device holds it: `distinct` values' bits (a census's) of `precision`
 * into out. */
CMRSCL_HIDDEN void cmrs_value_dictionary(const uint64_t *bits, int distinct,
                                         cmrscl_precision precision, void *out);
/* Puts each entry's dictionary index in its column word, above the row_bits of the row in
 * strip (0 when unpacked): col << (row_bits + dict_bits) | index << row_bits | row. values:
 * the entries' values in CMRS order and the matrix's precision, every one in the census
 * (holes, CMRS_HOLE, are left as they are). */
CMRSCL_HIDDEN void cmrs_values_encode_dict(uint32_t *col_ind, int64_t n, int row_bits,
                                           int dict_bits, const void *values,
                                           cmrscl_precision precision, const value_census *c);
/* DIAGONAL: the same words for the entries off the diagonal (indices into c->off_dict), the
 * last index, 2^dict_bits - 1, for those on it, whose values go to diagonal[row] (the
 * matrix's precision; rows without one keep what diagonal held). c: the CMRS arrays, packed
 * or not, with their plain column words. */
CMRSCL_HIDDEN void cmrs_values_encode_diagonal(cmrscl_cmrs *c, int dict_bits, const void *values,
                                               cmrscl_precision precision,
                                               const value_census *census, void *diagonal);
/* The reverse of both: plain column words and each entry's value from the dictionary, with
 * DIAGONAL (diagonal not NULL) the last index's from diagonal[column] (a hole's 0). */
CMRSCL_HIDDEN void cmrs_values_decode_dict(uint32_t *col_ind, double *values, int64_t n,
                                           int row_bits, int dict_bits, const double *dict,
                                           const double *diagonal);

/* ---- split.c: long strips cut into tiles ---- */

/* Entries of strip s of `height` rows. */
static inline int64_t csr_strip_length(int32_t rows, const int64_t *row_ptr, int height, int64_t s)
{
    int64_t r0 = s * height, r1 = r0 + height < rows ? r0 + height : rows;
    return row_ptr[r1] - row_ptr[r0];
}
/* The split path's counts: the strips of more than 2 * tile entries ("long") and the tiles
 * of `tile` entries (the last one of a strip shorter) they make. group_tiles > 0 (the
 * in-group combine, warps per work-group): no long strip's tiles cross a multiple of it -
 * empty slots pad the group instead, counted in *tiles. */
CMRSCL_HIDDEN void cmrs_split_count(int32_t rows, const int64_t *row_ptr, int height, int32_t tile,
                                    int group_tiles, int64_t *tiles, int64_t *long_strips);
/* The split path's arrays: the long strips, in order, each cut into tiles (tile_strip
 * SPLIT_NO_STRIP on padding slots). Strip and tile numbers are 32-bit (tiles <= INT32_MAX:
 * the plan checks it); a tile's first entry is an entry index, 64-bit here and narrowed
 * for a 32-bit device (matrix.c). */
#define SPLIT_NO_STRIP CMRS_NO_STRIP
typedef struct split_layout {
    int32_t tile; /* entries per tile; 0: nothing is split */
    int32_t tiles, long_strips;
    int64_t longest_whole; /* entries of the longest strip not split */
    uint64_t *tile_start;  /* tiles: first entry */
    uint32_t *tile_strip;  /* tiles: the strip */
    uint32_t *long_strip;  /* long_strips: the strip */
    uint32_t *first_tile;  /* long_strips + 1: its first tile */
} split_layout;
CMRSCL_HIDDEN cmrscl_status cmrs_split_build(int32_t rows, const int64_t *row_ptr, int height,
                                             int32_t tile, int group_tiles, split_layout *out);
CMRSCL_HIDDEN void cmrs_split_free(split_layout *s);

/* ---- renumber.c: P A P^T, the hub sort (cmrscl_renumber) ---- */

/* An entry (its index) by a column (or any key). cmrs_sort_entries sorts n of them by col,
 * stably (runs of 16 by insertion, then merged in pairs between e and tmp, n each; no call a
 * comparison); the result ends in e. */
typedef struct cmrs_entry {
    int32_t col;
    int64_t entry;
} cmrs_entry;
CMRSCL_HIDDEN void cmrs_sort_entries(cmrs_entry *e, cmrs_entry *tmp, int64_t n);

typedef struct cmrs_renumbered {
    int32_t rows;
    int64_t nnz;
    int64_t *row_ptr; /* rows + 1 */
    int32_t *col_ind; /* each row's columns ascending, in the new numbering */
    void *values;     /* the values moved with their entries (NULL when none were given) */
    int32_t *order;   /* new unknown -> old: P's rows */
    int64_t *entry;   /* old entry -> its new position */
    atomic_bool failed;
} cmrs_renumbered;
/* The renumbered CSR of a valid CSR structure (floats or doubles, value_size 4 or 8, or NULL):
 * the rows longer than the mean first, by descending length, then the others in their order.
 * ERROR_INVALID_ARGUMENT names a matrix that is not square. */
CMRSCL_HIDDEN cmrscl_status cmrs_renumber_hubs(int32_t rows, int32_t cols, const int64_t *row_ptr,
                                               const int32_t *col_ind, const void *values,
                                               size_t value_size, cmrs_renumbered *out);
/* nnz floats or doubles (value_size 4 or 8) in the old entry order moved to the new (entry:
 * old -> new position, cmrs_renumbered.entry), on the host's threads. */
CMRSCL_HIDDEN void cmrs_renumber_move_values(const int64_t *entry, int64_t nnz, const void *values,
                                             size_t value_size, void *out);
CMRSCL_HIDDEN void cmrs_renumbered_free(cmrs_renumbered *r);

#endif /* CMRSCL_FORMAT_H */
