/* mtx_parser.h - the Matrix Market parser's state and its line-level entry points
 * (mtx_parser.c), shared by the serial stream (mtx.c) and the threads of the parallel reader
 * (mtx_parallel.c),
 * which each run a copy of the header's state over their share of the entry lines, and
 * the share reader of a distributed process (mtx_share.c). Private to those files. */
#ifndef CMRSCL_MTX_PARSER_H
#define CMRSCL_MTX_PARSER_H

#include "io/io.h"

/* The longest accepted line, without its '\n'. */
#define MTX_MAX_LINE (1 << 20)

typedef enum { FIELD_REAL, FIELD_INTEGER, FIELD_PATTERN } field_kind;
typedef enum { SYM_GENERAL, SYM_SYMMETRIC, SYM_SKEW } symmetry_kind;
typedef enum { STAGE_BANNER, STAGE_SIZE, STAGE_ENTRIES } stage_kind;

typedef struct parser {
    const char *name;
    long long line; /* number of the line being parsed, from 1 */
    stage_kind stage;
    field_kind field;
    symmetry_kind symmetry;
    int32_t rows, cols;
    int64_t declared, seen;        /* entries in the size line / entry lines read */
    int64_t count, cap, max_count; /* COO entries stored, mirrored ones included */
    int32_t *ri, *ci;              /* 0-based */
    double *val;                   /* NULL for pattern files: ones */
    bool header_only;              /* stop at the first entry line (cmrscl_mtx_read_size) */
} parser;

/* A parse error at the parser's line: "<name>:<line>: <what>". */
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_line_fail(const parser *ps, cmrscl_status status,
                                               const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One line [p, e) (without its '\n'; the text must go on with a '\n' or '\0') of whatever
 * stage the parser is in: banner, size line, or entries. */
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_parse_line(parser *ps, const char *p, const char *e);
/* One entry line (or a comment or blank line among them). */
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_parse_entry(parser *ps, const char *p, const char *e);
/* Room for cap COO entries. */
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_reserve_entries(parser *ps, int64_t cap);

/* The banner, comments and size line of text[0..end), up to the first entry line (*body).
 * Fails quietly (no message) when the header is incomplete; a bad line's message is set. */
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_parse_header(parser *ps, const char *text, const char *end,
                                                  const char **body);
/* Where share t of `shares` of the entry lines [body, end) starts: the first line start at
 * or after its even cut of the bytes (end for t == shares); *end must be '\0'. */
CMRSCL_HIDDEN const char *cmrs_mtx_share_start(const char *body, const char *end, int t,
                                               int shares);

/* The parallel reader (mtx_parallel.c) on text[0..size) with text[size] == '\0': the
 * header on the calling thread, then the entry lines cut at line ends into shares (several
 * per thread, taken as threads come free), each parsed into its own COO piece, then
 * cmrs_csr_from_coo_pieces. It fails on any
 * problem without saying where: the caller then runs the serial reader, whose message
 * (file and line) is the one the user sees, and whose result this always equals. */
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_parse_parallel(const char *text, size_t size, const char *name,
                                                    int threads, cmrscl_csr *out);
/* A plain file's whole text for cmrs_mtx_parse_parallel, with a '\0' after its size bytes:
 * mapped, or read by `threads` threads. */
typedef struct mtx_text {
    const char *text;
    size_t size;
    bool mapped;
} mtx_text;
CMRSCL_HIDDEN cmrscl_status cmrs_mtx_load_text(int fd, uint64_t file_size, const char *name,
                                               int threads, mtx_text *out);
CMRSCL_HIDDEN void cmrs_mtx_text_free(mtx_text *t);

#endif
