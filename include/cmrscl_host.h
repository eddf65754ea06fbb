/* cmrscl_host.h - the host half of libcmrscl's API, which needs no OpenCL: the version,
 * status codes and error messages, precisions, host CSR and CMRS matrices, and Matrix
 * Market input/output. cmrscl.h includes it (and states the conventions every function
 * follows); include this header alone in code that only reads, builds or converts
 * matrices on the host.
 */
#ifndef CMRSCL_HOST_H
#define CMRSCL_HOST_H

#include <stddef.h>
#include <stdint.h>

#if defined(CMRSCL_BUILDING) && defined(__GNUC__)
#define CMRSCL_API __attribute__((visibility("default")))
#else
#define CMRSCL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version -------------------------------------------------------------------- */

#define CMRSCL_VERSION_MAJOR 0
#define CMRSCL_VERSION_MINOR 1
#define CMRSCL_VERSION_PATCH 0
#define CMRSCL_VERSION_NUMBER                                                                      \
    (CMRSCL_VERSION_MAJOR * 10000 + CMRSCL_VERSION_MINOR * 100 + CMRSCL_VERSION_PATCH)

/* The version of the library actually linked (compare with CMRSCL_VERSION_NUMBER). */
CMRSCL_API unsigned cmrscl_version_number(void);
CMRSCL_API const char *cmrscl_version_string(void);

/* ---- Status codes ----------------------------------------------------------------- */

/* X(name, value, message): one list generates the enum, the names and the messages. */
#define CMRSCL_STATUS_LIST(X)                                                                      \
    X(OK, 0, "success")                                                                            \
    X(ERROR_INVALID_ARGUMENT, -1, "invalid argument")                                              \
    X(ERROR_INVALID_MATRIX, -2, "invalid sparse matrix")                                           \
    X(ERROR_FILE_IO, -3, "cannot read or write file")                                              \
    X(ERROR_PARSE, -4, "malformed Matrix Market file")                                             \
    X(ERROR_UNSUPPORTED, -5, "unsupported feature")                                                \
    X(ERROR_TOO_LARGE, -6, "size exceeds the library's index range")                               \
    X(ERROR_OUT_OF_HOST_MEMORY, -7, "out of host memory")                                          \
    X(ERROR_OUT_OF_DEVICE_MEMORY, -8, "out of device memory")                                      \
    X(ERROR_NO_DEVICE, -9, "no matching OpenCL device")                                            \
    X(ERROR_OPENCL, -10, "OpenCL call failed")                                                     \
    X(ERROR_BUILD, -11, "kernel build failed")                                                     \
    X(ERROR_DEVICE_LIMIT, -12, "parameters exceed a device limit")                                 \
    X(ERROR_CONTEXT_MISMATCH, -13, "objects belong to different contexts or devices")              \
    X(ERROR_COMMUNICATION, -14, "communication between processes failed")                          \
    X(ERROR_BREAKDOWN, -15, "the iterative solver broke down")

typedef enum cmrscl_status {
#define CMRSCL_STATUS_ENUM_(name, value, message) CMRSCL_##name = (value),
    CMRSCL_STATUS_LIST(CMRSCL_STATUS_ENUM_)
#undef CMRSCL_STATUS_ENUM_
} cmrscl_status;

/* "CMRSCL_ERROR_PARSE" etc.; "CMRSCL_UNKNOWN_STATUS" for values not in the list. */
CMRSCL_API const char *cmrscl_status_name(cmrscl_status status);
/* A short fixed message for the code. */
CMRSCL_API const char *cmrscl_status_message(cmrscl_status status);
/* The detailed description of the most recent failure in the calling thread (never
 * NULL; empty before any failure). Valid until the next failing call in this thread. */
CMRSCL_API const char *cmrscl_last_error(void);
/* Records `message` as the calling thread's cmrscl_last_error() and returns `status`: for
 * layers built on the library (the MPI layer, libcmrscl_mpi) whose failures the caller reads
 * the same way. A NULL message records the status's fixed message. */
CMRSCL_API cmrscl_status cmrscl_set_error(cmrscl_status status, const char *message);

typedef enum cmrscl_precision { CMRSCL_FLOAT = 1, CMRSCL_DOUBLE = 2 } cmrscl_precision;

/* ---- Host CSR (no OpenCL needed) --------------------------------------------------- */

/* Compressed sparse rows with 0-based indices: 32-bit rows and columns (rows, cols <=
 * INT32_MAX), 64-bit row pointers, so nnz is limited only by memory (8 bytes per row are
 * little next to the 12 bytes of every entry, and one form serves every size).
 * Validity: rows, cols >= 0; row_ptr has rows+1 entries, row_ptr[0] = 0, non-decreasing,
 * row_ptr[rows] = nnz; 0 <= col_ind[k] < cols. Columns within a row may be in any order
 * and may repeat: a repeated (row, col) entry contributes its sum to A*x, exactly as the
 * kernels compute it. Readers that build CSR (cmrscl_csr_from_coo, cmrscl_mtx_read)
 * always produce canonical CSR: columns ascending within each row, duplicates summed. */
typedef struct cmrscl_csr {
    int32_t rows, cols;
    int64_t nnz;
    int64_t *row_ptr; /* rows + 1 */
    int32_t *col_ind; /* nnz */
    double *values;   /* nnz */
} cmrscl_csr;

/* Checks the validity rules above; the message names the first offending entry. */
CMRSCL_API cmrscl_status cmrscl_csr_validate(const cmrscl_csr *csr);
/* Builds canonical CSR from coordinate triplets (0-based). values == NULL means every
 * entry is 1 (pattern). Duplicates are summed (explicit zeros are kept). */
CMRSCL_API cmrscl_status cmrscl_csr_from_coo(int32_t rows, int32_t cols, int64_t nnz,
                                             const int32_t *row_idx, const int32_t *col_idx,
                                             const double *values, cmrscl_csr *out);
/* y = alpha*A*x + beta*y on the CPU in double: the ground truth for every check. Each row is
 * summed with its rounding carried (the products' by fma, the sums' by two-sum: as exact as
 * twice double's precision), so y holds its digits where the row cancels, as b - A x does
 * near a solution. When beta == 0, y is not read (so it may hold NaN). Large matrices run on
 * all host threads ($CMRSCL_THREADS); every row is summed in order, so y is the same for any
 * count. */
CMRSCL_API cmrscl_status cmrscl_csr_spmv(const cmrscl_csr *csr, double alpha, const double *x,
                                         double beta, double *y);
/* Checks y, computed by any means as alpha*A*x + beta*y0, against the reference above.
 * *relative_error = ||y - ref||_2 / ||ref||_2 (the plain difference when ref = 0), and
 * *bound_ratio = max over rows of |y_i - ref_i| / bound_i, where
 *     bound_i = (len_i + 10) * unit_roundoff * (|alpha| sum_j |a_ij x_j| + |beta y0_i|)
 * bounds the rounding of any summation order (len_i: entries in row i; unit_roundoff:
 * 2^-24 for float, 2^-53 for double). bound_ratio <= 1 means y is right; a NaN or
 * infinity where the reference has none (or the reverse) gives infinity. y0 is only read
 * when beta != 0. Either output may be NULL; on failure both are infinity. Large matrices
 * are checked on all host threads, in fixed blocks of rows summed in order: the same
 * outputs for any thread count. */
CMRSCL_API cmrscl_status cmrscl_csr_spmv_check(const cmrscl_csr *csr, double alpha, const double *x,
                                               double beta, const double *y0, const double *y,
                                               double unit_roundoff, double *relative_error,
                                               double *bound_ratio);
/* The transpose of a valid CSR (cols x rows) into a new CSR (out must not be csr): each of
 * its rows lists A's entries of that column in ascending row order (a repeated entry stays
 * repeated, in A's order), so the transpose of a canonical CSR is canonical. */
CMRSCL_API cmrscl_status cmrscl_csr_transpose(const cmrscl_csr *csr, cmrscl_csr *out);
/* Frees the arrays and zeroes the struct. */
CMRSCL_API void cmrscl_csr_free(cmrscl_csr *csr);
/* Builds a generated matrix from a spec, deterministically (the same spec gives the same
 * matrix on every host), in canonical CSR:
 *   stencil5:N        5-point 2-D Laplacian on an N x N grid
 *   stencil7:N        7-point 3-D Laplacian on an N^3 grid
 *   stencil27:N       27-point 3-D stencil on an N^3 grid
 *   convdiff:N        stencil7:N with upwind convection along (1, 1, 1) and a reaction
 *                     term: nonsymmetric, strictly diagonally dominant
 *   random:N:K        N x N, row lengths uniform in 0..2K (mean K), columns uniform
 *   perm:N            a random N x N permutation (one entry per row and column)
 *   dense:N           N x N with every entry stored
 *   rmat:S:E          R-MAT power-law graph: 2^S vertices, E * 2^S edges (Graph500
 *                     parameters, vertex labels permuted, duplicates summed)
 *   fem:N:B           FEM-like block rows: 27-point stencil on N^3 nodes, B x B blocks
 *   skewed:N:K:D:L    short rows (uniform 0..2K) plus D evenly spread rows of L entries
 *   geo:N:K           the graph Laplacian of a random geometric graph (N points in the unit
 *                     square joined within the radius of mean degree K; a mesh-like graph,
 *                     numbered in space), shifted by 1e-4 K: symmetric positive definite
 *   kron:A.mtx:B.mtx  the Kronecker product of two Matrix Market files (.mtx or .mtx.gz,
 *                     read with cmrscl_mtx_read): rows of real matrices, at scale
 *   lap:SPEC          the graph Laplacian of SPEC's square pattern (i and j joined where
 *                     either stores the other, weights 1), shifted as geo's: symmetric
 *                     positive definite with SPEC's rows, e.g. "lap:rmat:21:16"
 * A suffix @SEED (e.g. "rmat:21:16@2") picks another instance of the random classes.
 * Errors: ERROR_INVALID_ARGUMENT for an unknown or malformed spec, ERROR_TOO_LARGE when the
 * matrix would have more than INT32_MAX rows or columns (the message names the limit), a
 * reading error of cmrscl_mtx_read for a kron factor,
 * ERROR_OUT_OF_HOST_MEMORY when its entries do not fit in memory (12 bytes each); for lap:,
 * ERROR_INVALID_ARGUMENT when SPEC's pattern is not square. */
CMRSCL_API cmrscl_status cmrscl_csr_generate(const char *spec, cmrscl_csr *out);
/* Rows first_row .. first_row + row_count - 1 of the matrix cmrscl_csr_generate(spec) builds,
 * bit for bit, as a CSR of those rows (out->rows; row_count is clipped to the rows the matrix
 * has) over all of its columns (out->cols); *total_rows (may be NULL) receives the whole
 * matrix's rows. For a distributed matrix each process builds only its own rows. The stencils
 * and fem build just the rows asked for, on all host threads; the random classes and lap: build
 * the whole matrix and keep the range (for tests, not for huge runs). Errors as
 * cmrscl_csr_generate's, and
 * ERROR_INVALID_ARGUMENT for a negative first_row or row_count. */
CMRSCL_API cmrscl_status cmrscl_csr_generate_rows(const char *spec, int64_t first_row,
                                                  int64_t row_count, cmrscl_csr *out,
                                                  int64_t *total_rows);
/* The shape of the matrix a spec generates, without generating it: rows, cols and its entries
 * (exact for the stencils and fem; the expected count for the random classes, whose rows
 * draw their lengths; rmat's edges before duplicates merge), so that a caller can refuse a
 * matrix too large for its memory before building it. ERROR_UNSUPPORTED for kron (its
 * factors must be read) and lap (its pattern's transpose must be built), and cmrscl_csr_generate's
 * errors for a malformed spec or more than INT32_MAX rows. */
CMRSCL_API cmrscl_status cmrscl_csr_generate_size(const char *spec, int64_t *rows, int64_t *cols,
                                                  int64_t *entries);

/* ---- Host CMRS (no OpenCL needed) -------------------------------------------------- */

/* Rows are grouped into strips of `height` rows; entry k of strip s (strip_ptr[s] <= k <
 * strip_ptr[s+1]) lies in row s*height + row_in_strip(k). Two layouts:
 * - packed: col_ind[k] = column << row_bits | row_in_strip; row_in_strip is NULL.
 *   row_bits = cmrscl_cmrs_row_bits(height): the paper's 4 bits up to height 16
 *   (cols <= 2^28), then ceil(log2(height)) bits up to height 256 (cols <= 2^24).
 * - unpacked: col_ind[k] = column and row_in_strip[k] holds the row in strip;
 *   height <= CMRSCL_MAX_HEIGHT. Used whenever the packing does not fit. */
#define CMRSCL_CMRS_BITS 4
#define CMRSCL_MAX_PACKED_HEIGHT 256
#define CMRSCL_MAX_HEIGHT 256

typedef struct cmrscl_cmrs {
    int32_t rows, cols, height, strips;
    int64_t nnz;
    int packed;            /* 1: row in strip packed into col_ind */
    int row_bits;          /* packed: bits of the row in strip (cmrscl_cmrs_row_bits) */
    int column_ordered;    /* 1: entries of each strip sorted by column (paper, sec. 4) */
    uint64_t *strip_ptr;   /* strips + 1 (the device holds 32 or 64 bits: index_bits) */
    uint32_t *col_ind;     /* nnz */
    uint8_t *row_in_strip; /* nnz when unpacked, else NULL */
    double *values;        /* nnz */
} cmrscl_cmrs;

/* Bits of the row in strip in the packed layout: 4 (the paper's) for height <= 16, else
 * ceil(log2(height)); 0 for a height outside 1..CMRSCL_MAX_HEIGHT. */
CMRSCL_API int cmrscl_cmrs_row_bits(int height);
/* Flags for cmrscl_cmrs_from_csr. */
#define CMRSCL_CMRS_ORDER_COLUMNS 1u /* sort each strip's entries by column (stable) */
#define CMRSCL_CMRS_UNPACKED 2u      /* force the unpacked layout even where packing fits */

/* CSR -> CMRS for 1 <= height <= CMRSCL_MAX_HEIGHT. Packed unless the flag forces the
 * unpacked layout or the matrix does not fit the packing. Entries keep their CSR order
 * unless CMRSCL_CMRS_ORDER_COLUMNS is set; column ordering is a stable sort by column. */
CMRSCL_API cmrscl_status cmrscl_cmrs_from_csr(const cmrscl_csr *csr, int height, unsigned flags,
                                              cmrscl_cmrs *out);
/* CMRS -> CSR. Entries of a row keep their order within the strip, so the round trip
 * CSR -> CMRS -> CSR is exact when the strips are not column-ordered, and also when they
 * are and the CSR had ascending columns in every row (canonical CSR). Validates the
 * input (ERROR_INVALID_MATRIX naming the offending entry). */
CMRSCL_API cmrscl_status cmrscl_cmrs_to_csr(const cmrscl_cmrs *cmrs, cmrscl_csr *out);
CMRSCL_API void cmrscl_cmrs_free(cmrscl_cmrs *cmrs);

/* ---- Matrix Market input/output ---------------------------------------------------- */

typedef struct cmrscl_mtx_options {
    /* Called now and then while reading: bytes of the file consumed so far and the file
     * size (compressed bytes for .gz). May be NULL. */
    void (*progress)(void *user, uint64_t done_bytes, uint64_t total_bytes);
    void *user;
    /* Threads that read and convert a file of 4 MB or more (0: $CMRSCL_THREADS, else all
     * the CPUs the process may use; 1: the serial streaming reader, least memory). The
     * result is the same CSR, bit for bit, for any number. */
    int threads;
} cmrscl_mtx_options;

/* Reads a Matrix Market `coordinate` file (real, integer or pattern; general, symmetric
 * or skew-symmetric), plain or gzip-compressed (detected from the content), into
 * canonical CSR. Symmetric and skew-symmetric files are expanded to both triangles.
 * Errors name the file and line. opt may be NULL. */
CMRSCL_API cmrscl_status cmrscl_mtx_read(const char *path, const cmrscl_mtx_options *opt,
                                         cmrscl_csr *out);
/* The size line of a Matrix Market file, read with the banner and nothing else (plain or
 * gzip, the rules of cmrscl_mtx_read): rows, columns, and the entries the CSR will hold at
 * most (symmetric files: twice the declared ones, the mirror images counted). What a caller
 * checks against its memory before cmrscl_mtx_read allocates for them. */
CMRSCL_API cmrscl_status cmrscl_mtx_read_size(const char *path, int32_t *rows, int32_t *cols,
                                              int64_t *entries);
/* Writes `coordinate real general`, gzip-compressed when path ends in ".gz". Reading
 * the file back gives the same CSR bit for bit, but for NaN payloads (NaN stays NaN). */
CMRSCL_API cmrscl_status cmrscl_mtx_write(const char *path, const cmrscl_csr *csr);

/* One share of a Matrix Market file's entries as coordinates: what a process of a
 * distributed reader parses, so that no process reads or holds the whole matrix. */
typedef struct cmrscl_mtx_share {
    int32_t rows, cols;         /* the whole matrix's, from the size line */
    int64_t declared;           /* entries the size line declares */
    int64_t lines;              /* entry lines in this share (comments not counted) */
    int64_t count;              /* coordinates stored: mirror images of symmetric files too */
    int32_t *row_idx, *col_idx; /* count each, 0-based, in the file's order */
    double *values;             /* count each; ones for a pattern file */
} cmrscl_mtx_share;

/* Reads the header of a Matrix Market file (the rules of cmrscl_mtx_read) and share
 * `share` of `shares` (0 <= share < shares) of its entry lines: the entry bytes cut into
 * `shares` even parts, each moved to the next line start, so every line belongs to exactly
 * one share and share after share keeps the file's order. Symmetric and skew-symmetric
 * entries are mirrored as cmrscl_mtx_read mirrors them. A plain file is mapped and only the
 * share's bytes are read; a gzip file is inflated whole (its text, not its coordinates,
 * passes through memory). Errors name the file and the line, numbered in the whole file.
 * Whether the shares together hold `declared` entries is the caller's check (add up
 * `lines`). Free with cmrscl_mtx_share_free. */
CMRSCL_API cmrscl_status cmrscl_mtx_read_share(const char *path, int share, int shares,
                                               cmrscl_mtx_share *out);
/* Frees the arrays and zeroes the struct. */
CMRSCL_API void cmrscl_mtx_share_free(cmrscl_mtx_share *s);

#ifdef __cplusplus
}
#endif
#endif /* CMRSCL_HOST_H */
