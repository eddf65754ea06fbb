/* io.h - the reading stage: Matrix Market files and memory (mtx*.c) and COO triplets
 * (coo_to_csr.c) to the canonical host CSR (csr.c) that every later stage takes; the
 * generators (gen.c, their specs in gen_spec.c) are public API, but for the spec parser. */
#ifndef CMRSCL_IO_H
#define CMRSCL_IO_H

#include "base/base.h"

/* ---- mtx.c: Matrix Market -> CSR ---- */

/* Parses a whole Matrix Market file held in memory (plain or gzip), naming it `name` in
 * messages. The fuzz targets and tests use it; cmrscl_mtx_read streams from disk. */
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_read_memory(const void *data, size_t size, const char *name,
                                                 cmrscl_csr *out);
/* The same through the parallel reader with `threads` threads (whatever the size; 1 is
 * cmrs_mtx_read_memory): the same result and the same messages. */
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_read_memory_threads(const void *data, size_t size,
                                                         const char *name, int threads,
                                                         cmrscl_csr *out);

/* ---- gen_spec.c: generator specs ---- */

/* A spec other than kron's: its class (the index in gen_spec.c's table: stencil5, stencil7,
 * stencil27, random, perm, dense, rmat, fem, skewed, convdiff), its numbers and its seed;
 * ERROR_INVALID_ARGUMENT naming the classes for anything else. */
CMRSCL_HIDDEN cmrscl_status cmrs_gen_parse_spec(const char *spec, int *cls, long v[4],
                                                uint64_t *seed);
/* The generators' random numbers: SplitMix64, a small counter-based generator - fast, seedable,
 * the same on every host. The next 64 bits, and the next value in [0, 1), from *state. */
static inline uint64_t cmrs_gen_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline double cmrs_gen_unit(uint64_t *state)
{
    return (double)(cmrs_gen_next(state) >> 11) * 0x1p-53;
}
/* ---- gen_elastic.c: elastic:N, 3-D linear elasticity on N^3 hexahedra ---- */
typedef struct cmrs_elastic {
    int64_t n;
    double k[24][24]; /* the element stiffness */
} cmrs_elastic;
CMRSCL_HIDDEN void cmrs_gen_elastic_init(int64_t n, cmrs_elastic *e);
/* Row i's columns and values, ascending (gen.c's row_fn); at most 81. */
CMRSCL_HIDDEN int64_t cmrs_gen_elastic_row(const void *shape, int64_t i, int32_t *cols,
                                           double *vals);

/* ---- gen_geo.c: geo:N:K, a random geometric graph's shifted Laplacian ---- */
/* The graph Laplacians' shift, times the mean degree k (geo:N:K, lap:SPEC): L = D - W +
 * GEO_SHIFT k I, positive definite yet small enough that a large-diameter graph needs a
 * thousand Jacobi-CG iterations and more (docs/dev/PERFORMANCE.md, GEO_SHIFT). */
#define GEO_SHIFT 1e-4
CMRSCL_HIDDEN cmrscl_status cmrs_gen_geo(long n, long k, uint64_t seed, cmrscl_csr *out);

/* ---- gen_laplacian.c: lap:SPEC, the shifted graph Laplacian of a square pattern ---- */
CMRSCL_HIDDEN cmrscl_status cmrs_gen_laplacian(const cmrscl_csr *a, cmrscl_csr *out);

/* ---- coo_to_csr.c: COO -> canonical CSR on all host threads ---- */

/* A run of COO entries (0-based, inside the matrix); val NULL means ones (pattern). */
typedef struct coo_piece {
    const int32_t *row, *col;
    const double *val;
    int64_t count;
} coo_piece;
/* Canonical CSR of the entries of all pieces, taken in order: rows in order, ascending
 * columns, duplicates summed in input order. The same CSR for any thread count. */
CMRSCL_HIDDEN cmrscl_status cmrs_csr_from_coo_pieces(int32_t rows, int32_t cols,
                                                     const coo_piece *pieces, int npieces,
                                                     int threads, cmrscl_csr *out);

/* ---- csr.c: checks and conversions of host CSR ---- */

/* The first row that starts at or after entry e (rows if none): where a thread's equal
 * share of the entries begins. */
CMRSCL_HIDDEN int64_t cmrs_csr_row_at(const int64_t *row_ptr, int32_t rows, int64_t e);
/* The checks of cmrscl_csr_validate on bare arrays (values are not looked at), on all host
 * threads for large matrices; the message names the first offending entry whatever the
 * thread count. On the way, *rows_sorted (may be NULL) says whether every row's columns
 * are non-decreasing. */
CMRSCL_HIDDEN cmrscl_status cmrs_csr_validate_structure(int32_t rows, int32_t cols,
                                                        const int64_t *row_ptr,
                                                        const int32_t *col_ind, bool *rows_sorted);
/* Entries of the longest row (0 without rows). */
CMRSCL_HIDDEN int64_t cmrs_csr_longest_row(int32_t rows, const int64_t *row_ptr);
/* row_ptr widened to 64 bits (rows + 1 entries, malloc'ed; NULL when out of memory). */
CMRSCL_HIDDEN int64_t *cmrs_csr_widen_row_ptr(const int32_t *row_ptr, int32_t rows);
/* ... and narrowed to 32 (the caller knows the entries fit). */
CMRSCL_HIDDEN int32_t *cmrs_csr_narrow_row_ptr(const int64_t *row_ptr, int32_t rows);
/* a (valid) in canonical CSR: each row's columns in ascending order, repeats summed
 * (cmrscl_csr_from_coo's). */
CMRSCL_HIDDEN cmrscl_status cmrs_csr_canonical_copy(const cmrscl_csr *a, cmrscl_csr *out);
/* cmrscl_csr_validate, also saying whether the rows are sorted (rows_sorted may be NULL). */
CMRSCL_HIDDEN cmrscl_status cmrs_csr_validate(const cmrscl_csr *csr, bool *rows_sorted);
/* ... and whether it is canonical: every row's columns increasing (canonical may be NULL). */
CMRSCL_HIDDEN cmrscl_status cmrs_csr_validate_canonical(const cmrscl_csr *csr, bool *rows_sorted,
                                                        bool *canonical);

#endif /* CMRSCL_IO_H */
