/* mtx_parallel.c - the Matrix Market reader on all host threads: the file read into memory
 * by several threads at once, the header parsed on the calling thread, the entry lines cut
 * at line ends into shares (several per thread, each thread taking the next when done, so
 * that a slower CPU holds nobody up), each share parsed into its own COO piece by the
 * serial parser's own entry routine, and the pieces turned into CSR together
 * (coo_to_csr.c). Pieces keep the file's order, so the CSR is the serial reader's, bit for
 * bit. Anything unusual - a bad line, a count that does not match the header, a line too
 * long - makes it fail quietly, and the caller runs the serial reader for the message. */
#include "mtx_parser.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- reading: the file mapped, or each thread preads its own range of it ---- */

typedef struct file_read {
    int fd;
    char *text;
    uint64_t size;
    bool failed;
} file_read;

static void read_range(void *ctx, int thread, int threads)
{
    file_read *r = ctx;
    int64_t begin, end;
    cmrs_parallel_range((int64_t)r->size, thread, threads, &begin, &end);
    while (begin < end && !r->failed) {
        size_t want = (size_t)(end - begin) < (1u << 30) ? (size_t)(end - begin) : (1u << 30);
        ssize_t got = pread(r->fd, r->text + begin, want, (off_t)begin);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) { /* an error, or the file shrank under us */
            r->failed = true;
            return;
        }
        begin += got;
    }
}

cmrscl_status cmrs_mtx_load_text(int fd, uint64_t file_size, const char *name, int threads,
                                 mtx_text *out)
{
    memset(out, 0, sizeof *out);
    if (file_size >= SIZE_MAX)
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE, "%s: too large to read into memory", name);
    /* Mapped, the page cache is parsed in place: no copy, no fresh pages to fault in. The
     * bytes after the end of the file up to the page's end read as zeros, which gives
     * the '\0' after the text the scanner needs, unless the file fills its last page. */
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0 && file_size % (uint64_t)page != 0) {
        void *map = mmap(NULL, (size_t)file_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            *out = (mtx_text){map, (size_t)file_size, true};
            return CMRSCL_OK;
        }
    }
    file_read r = {fd, malloc((size_t)file_size + 1), file_size, false};
    if (!r.text)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "%s: no memory for the text", name);
    cmrs_parallel_run(threads, read_range, &r);
    if (r.failed) {
        free(r.text);
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "%s: read failed", name);
    }
    r.text[file_size] = '\0';
    *out = (mtx_text){r.text, (size_t)file_size, false};
    return CMRSCL_OK;
}

void cmrs_mtx_text_free(mtx_text *t)
{
    if (t->mapped)
        munmap((void *)t->text, t->size);
    else
        free((void *)t->text);
    memset(t, 0, sizeof *t);
}

/* ---- parsing: the entry lines in shares ---- */

/* Shares per thread. With one share each, the last thread to finish sets the time, and
 * threads do not run equally fast: on a 16-vCPU GPU host, of 16 equal shares the first was
 * parsed after 0.08-0.11 s and the last after 0.17-0.21 s. 16 per thread measured best
 * there (docs/dev/PERFORMANCE.md); each is still megabytes of text on a large file. */
#define SHARES_PER_THREAD 16

typedef struct share {
    parser ps;      /* the header's state, writing into this share's part of the arrays */
    int64_t lines;  /* lines in the share: at most this many entries (twice, mirrored) */
    int64_t offset; /* where its part of the COO arrays starts */
    bool in_order;  /* its entries are row-major with ascending columns */
    cmrscl_status status;
} share;

typedef struct parallel_parse {
    const parser *header;
    const char *body, *end; /* the entry lines; *end == '\0' */
    share *shares;
    int nshares;
    int32_t *ri, *ci; /* the COO arrays of all shares, share after share */
    double *val;
    int64_t *row_ptr; /* the in-order path: rows from the sorted row indices */
    int64_t count;
} parallel_parse;

const char *cmrs_mtx_share_start(const char *body, const char *end, int t, int shares)
{
    if (t == 0)
        return body;
    if (t == shares)
        return end;
    uint64_t bytes = (uint64_t)(end - body);
    const char *p = body + bytes * (uint64_t)t / (uint64_t)shares;
    if (p[-1] == '\n')
        return p;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl + 1 : end;
}

static const char *share_start(const parallel_parse *pp, int64_t t)
{
    return cmrs_mtx_share_start(pp->body, pp->end, (int)t, pp->nshares);
}

static void count_lines(void *ctx, int64_t t)
{
    parallel_parse *pp = ctx;
    const char *p = share_start(pp, t), *e = share_start(pp, t + 1);
    int64_t n = e > p && e[-1] != '\n'; /* the file's last line may lack its '\n' */
    for (const char *nl; p < e && (nl = memchr(p, '\n', (size_t)(e - p))) != NULL; p = nl + 1)
        ++n;
    pp->shares[t].lines = n;
}

static void parse_share(void *ctx, int64_t t)
{
    parallel_parse *pp = ctx;
    share *sh = &pp->shares[t];
    const char *p = share_start(pp, t), *e = share_start(pp, t + 1);
    /* The state lives on this thread's stack while it parses: in the shares array, next to
     * a share another thread is parsing, each entry's update would be false sharing. */
    parser ps = *pp->header;
    ps.ri = pp->ri + sh->offset, ps.ci = pp->ci + sh->offset;
    ps.val = pp->val ? pp->val + sh->offset : NULL;
    ps.count = ps.seen = 0;
    ps.declared = INT64_MAX; /* the total is checked after all shares */
    /* Room for every line's entries; should it ever run out, growing fails (cap has
     * reached max_count) instead of reallocating a part of someone else's array. */
    ps.cap = ps.max_count = sh->lines * (pp->header->symmetry == SYM_GENERAL ? 1 : 2);
    cmrscl_status st = CMRSCL_OK;
    c_numeric_scope numeric; /* uselocale is per thread */
    cmrs_c_numeric_enter(&numeric);
    while (st == CMRSCL_OK && p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p)), *line_end = nl ? nl : e;
        st = line_end - p >= MTX_MAX_LINE ? CMRSCL_ERROR_PARSE
                                          : cmrs_mtx_parse_entry(&ps, p, line_end);
        p = nl ? nl + 1 : e;
    }
    cmrs_c_numeric_leave(&numeric);
    bool in_order = true;
    for (int64_t k = 1; k < ps.count && in_order; ++k)
        in_order = ps.ri[k - 1] < ps.ri[k] || (ps.ri[k - 1] == ps.ri[k] && ps.ci[k - 1] < ps.ci[k]);
    *sh = (share){ps, sh->lines, sh->offset, in_order, st};
}

/* Is the whole file row-major with ascending columns and no gaps (every line an entry)?
 * Then the COO arrays are the CSR arrays already. */
static bool all_in_order(const parallel_parse *pp)
{
    int64_t last_row = -1, last_col = -1, next = 0;
    for (int t = 0; t < pp->nshares; ++t) {
        const share *sh = &pp->shares[t];
        /* A share that stored fewer entries than it had room for (a comment line, or
         * mirrored entries that were diagonal) leaves a gap before the next one. */
        if (!sh->in_order || sh->offset != next)
            return false;
        next += sh->ps.count;
        if (sh->ps.count == 0)
            continue;
        int32_t r = sh->ps.ri[0], c = sh->ps.ci[0];
        if (r < last_row || (r == last_row && c <= last_col))
            return false;
        last_row = sh->ps.ri[sh->ps.count - 1], last_col = sh->ps.ci[sh->ps.count - 1];
    }
    return true;
}

/* row_ptr from sorted row indices: where the row index steps from a to b, rows a+1..b
 * start there; each thread takes a range of entries, each row is written once. */
static void rows_from_sorted(void *ctx, int thread, int threads)
{
    parallel_parse *pp = ctx;
    int64_t k0, k1, n = pp->count;
    int32_t rows = pp->header->rows;
    cmrs_parallel_range(n, thread, threads, &k0, &k1);
    for (int64_t k = k0; k < k1; ++k)
        for (int32_t r = k ? pp->ri[k - 1] + 1 : 0; r <= pp->ri[k]; ++r)
            pp->row_ptr[r] = k;
    if (thread == threads - 1)
        for (int64_t r = n ? pp->ri[n - 1] + 1 : 0; r <= rows; ++r)
            pp->row_ptr[r] = n;
}

cmrscl_status cmrs_mtx_parse_header(parser *ps, const char *text, const char *end,
                                    const char **body)
{
    const char *p = text;
    cmrscl_status st = CMRSCL_OK;
    c_numeric_scope numeric;
    cmrs_c_numeric_enter(&numeric);
    while (st == CMRSCL_OK && ps->stage != STAGE_ENTRIES && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *line_end = nl ? nl : end;
        ps->line++;
        st = line_end - p >= MTX_MAX_LINE ? CMRSCL_ERROR_PARSE
                                          : cmrs_mtx_parse_line(ps, p, line_end);
        p = nl ? nl + 1 : end;
    }
    cmrs_c_numeric_leave(&numeric);
    *body = p;
    return st == CMRSCL_OK && ps->stage != STAGE_ENTRIES ? CMRSCL_ERROR_PARSE : st;
}

/* The in-order path: row_ptr from the row indices; the column and value arrays become
 * the CSR's (ones for a pattern file). */
static cmrscl_status csr_in_place(parallel_parse *pp, int threads, cmrscl_csr *out)
{
    int64_t n = pp->count;
    int32_t rows = pp->header->rows;
    pp->row_ptr = cmrscl_alloc((size_t)rows + 1, sizeof(int64_t));
    double *val = pp->val ? pp->val : cmrs_parallel_alloc((size_t)n, sizeof(double));
    if (!pp->row_ptr || !val) {
        if (!pp->val)
            free(val);
        return CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (int64_t k = 0; !pp->val && k < n; ++k)
        val[k] = 1.0;
    cmrs_parallel_run(threads, rows_from_sorted, pp);
    *out = (cmrscl_csr){rows, pp->header->cols, n, pp->row_ptr, pp->ci, val};
    pp->row_ptr = NULL, pp->ci = NULL, pp->val = NULL; /* now the caller's */
    return CMRSCL_OK;
}

cmrscl_status cmrs_mtx_parse_parallel(const char *text, size_t size, const char *name, int threads,
                                      cmrscl_csr *out)
{
    memset(out, 0, sizeof *out);
    parser header = {.name = name, .stage = STAGE_BANNER};
    parallel_parse pp = {.header = &header, .end = text + size};
    cmrscl_status st = cmrs_mtx_parse_header(&header, text, pp.end, &pp.body);
    if (st != CMRSCL_OK)
        return st;
    threads = threads < 1 ? 1 : threads > 256 ? 256 : threads;
    pp.nshares = threads == 1 ? 1 : threads * SHARES_PER_THREAD;
    pp.shares = calloc((size_t)pp.nshares, sizeof *pp.shares);
    coo_piece *pieces = calloc((size_t)pp.nshares, sizeof *pieces);
    if (!pp.shares || !pieces) {
        free(pp.shares), free(pieces);
        return CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    }
    double t0 = cmrscl_seconds();
    cmrs_parallel_pieces(threads, pp.nshares, count_lines, &pp);
    int64_t room = 0, mirror = header.symmetry == SYM_GENERAL ? 1 : 2;
    for (int t = 0; t < pp.nshares; ++t)
        pp.shares[t].offset = room, room += pp.shares[t].lines * mirror;
    pp.ri = cmrs_parallel_alloc((size_t)room, sizeof(int32_t));
    pp.ci = cmrs_parallel_alloc((size_t)room, sizeof(int32_t));
    pp.val =
        header.field == FIELD_PATTERN ? NULL : cmrs_parallel_alloc((size_t)room, sizeof(double));
    if (!pp.ri || !pp.ci || (header.field != FIELD_PATTERN && !pp.val))
        st = CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    if (st == CMRSCL_OK)
        cmrs_parallel_pieces(threads, pp.nshares, parse_share, &pp);
    double t1 = cmrscl_seconds();
    int64_t seen = 0;
    for (int t = 0; st == CMRSCL_OK && t < pp.nshares; ++t) {
        const parser *ps = &pp.shares[t].ps;
        if (pp.shares[t].status != CMRSCL_OK)
            st = pp.shares[t].status;
        seen += ps->seen, pp.count += ps->count;
        pieces[t] = (coo_piece){ps->ri, ps->ci, ps->val, ps->count};
    }
    /* What the serial reader checks line by line, checked on the totals. */
    if (st == CMRSCL_OK && (seen != header.declared || pp.count > header.max_count))
        st = CMRSCL_ERROR_PARSE;
    bool in_order = st == CMRSCL_OK && all_in_order(&pp);
    if (st == CMRSCL_OK)
        st = in_order ? csr_in_place(&pp, threads, out)
                      : cmrs_csr_from_coo_pieces(header.rows, header.cols, pieces, pp.nshares,
                                                 threads, out);
    cmrscl_trace("%s: parsed in %.3f s, CSR in %.3f s (%d threads, %s)", name, t1 - t0,
                 cmrscl_seconds() - t1, threads, in_order ? "in order" : "sorted");
    free(pp.ri), free(pp.ci), free(pp.val), free(pp.shares), free(pieces);
    return st;
}
