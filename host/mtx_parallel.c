/* mtx_parallel.c - the Matrix Market reader on all host threads: the file read into memory
 * by several threads at once, the header parsed on the calling thread, the entry lines cut
 * at line ends into one share per thread, each share parsed into its own COO piece by the
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
    parallel_range((int64_t)r->size, thread, threads, &begin, &end);
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

cmrscl_status mtx_load_text(int fd, uint64_t file_size, const char *name, int threads,
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
    parallel_run(threads, read_range, &r);
    if (r.failed) {
        free(r.text);
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "%s: read failed", name);
    }
    r.text[file_size] = '\0';
    *out = (mtx_text){r.text, (size_t)file_size, false};
    return CMRSCL_OK;
}

void mtx_text_free(mtx_text *t)
{
    if (t->mapped)
        munmap((void *)t->text, t->size);
    else
        free((void *)t->text);
    memset(t, 0, sizeof *t);
}

/* ---- parsing: one share of the entry lines per thread ---- */

typedef struct share {
    parser ps; /* the header's state, with this share's own COO arrays */
    cmrscl_status status;
} share;

typedef struct parallel_parse {
    const parser *header;
    const char *body, *end; /* the entry lines; *end == '\0' */
    share *shares;
} parallel_parse;

/* Where share t starts: the first line start at or after its even cut of the bytes. */
static const char *share_start(const parallel_parse *pp, int t, int threads)
{
    if (t == 0)
        return pp->body;
    if (t == threads)
        return pp->end;
    uint64_t bytes = (uint64_t)(pp->end - pp->body);
    const char *p = pp->body + bytes * (uint64_t)t / (uint64_t)threads;
    if (p[-1] == '\n')
        return p;
    const char *nl = memchr(p, '\n', (size_t)(pp->end - p));
    return nl ? nl + 1 : pp->end;
}

/* A first capacity from the share's part of the declared entries, bounded by what its
 * bytes can hold (an entry line takes at least 4), so a lying header costs nothing. */
static int64_t share_capacity(const parser *h, uint64_t share_bytes, uint64_t body_bytes)
{
    int64_t mirror = h->symmetry == SYM_GENERAL ? 1 : 2;
    double part = body_bytes ? (double)share_bytes / (double)body_bytes : 0.0;
    int64_t guess = (int64_t)(part * 1.02 * (double)h->declared) * mirror + 64;
    int64_t most = (int64_t)(share_bytes / 4 + 1) * mirror;
    guess = guess < most ? guess : most;
    return guess < h->max_count ? guess : h->max_count;
}

static void parse_share(void *ctx, int thread, int threads)
{
    parallel_parse *pp = ctx;
    share *sh = &pp->shares[thread];
    const char *p = share_start(pp, thread, threads), *e = share_start(pp, thread + 1, threads);
    sh->ps = *pp->header;
    sh->ps.ri = sh->ps.ci = NULL, sh->ps.val = NULL;
    sh->ps.count = sh->ps.cap = sh->ps.seen = 0;
    sh->ps.declared = INT64_MAX; /* the total is checked after all shares */
    sh->status = mtx_reserve_entries(
        &sh->ps, share_capacity(pp->header, (uint64_t)(e - p), (uint64_t)(pp->end - pp->body)));
    c_numeric_scope numeric; /* uselocale is per thread */
    c_numeric_enter(&numeric);
    while (sh->status == CMRSCL_OK && p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p)), *line_end = nl ? nl : e;
        sh->status = line_end - p >= MTX_MAX_LINE ? CMRSCL_ERROR_PARSE
                                                  : mtx_parse_entry(&sh->ps, p, line_end);
        p = nl ? nl + 1 : e;
    }
    c_numeric_leave(&numeric);
}

/* The banner, comments and size line, up to the first entry line. */
static cmrscl_status parse_header(parser *ps, const char *text, const char *end, const char **body)
{
    const char *p = text;
    cmrscl_status st = CMRSCL_OK;
    c_numeric_scope numeric;
    c_numeric_enter(&numeric);
    while (st == CMRSCL_OK && ps->stage != STAGE_ENTRIES && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *line_end = nl ? nl : end;
        ps->line++;
        st = line_end - p >= MTX_MAX_LINE ? CMRSCL_ERROR_PARSE : mtx_parse_line(ps, p, line_end);
        p = nl ? nl + 1 : end;
    }
    c_numeric_leave(&numeric);
    *body = p;
    return st == CMRSCL_OK && ps->stage != STAGE_ENTRIES ? CMRSCL_ERROR_PARSE : st;
}

cmrscl_status mtx_parse_parallel(const char *text, size_t size, const char *name, int threads,
                                 cmrscl_csr *out)
{
    memset(out, 0, sizeof *out);
    parser header = {.name = name, .stage = STAGE_BANNER};
    parallel_parse pp = {.header = &header, .end = text + size};
    cmrscl_status st = parse_header(&header, text, pp.end, &pp.body);
    if (st != CMRSCL_OK)
        return st;
    threads = threads < 1 ? 1 : threads > 256 ? 256 : threads;
    pp.shares = calloc((size_t)threads, sizeof *pp.shares);
    if (!pp.shares)
        return CMRSCL_ERROR_OUT_OF_HOST_MEMORY;
    double t0 = cmrscl_seconds();
    parallel_run(threads, parse_share, &pp);
    double t1 = cmrscl_seconds();
    int64_t seen = 0, count = 0;
    coo_piece pieces[256];
    for (int t = 0; t < threads; ++t) {
        const parser *ps = &pp.shares[t].ps;
        if (pp.shares[t].status != CMRSCL_OK)
            st = pp.shares[t].status;
        seen += ps->seen, count += ps->count;
        pieces[t] = (coo_piece){ps->ri, ps->ci, ps->val, ps->count};
    }
    /* What the serial reader checks line by line, checked on the totals. */
    if (st == CMRSCL_OK && (seen != header.declared || count > header.max_count))
        st = CMRSCL_ERROR_PARSE;
    if (st == CMRSCL_OK)
        st = csr_from_coo_pieces(header.rows, header.cols, pieces, threads, threads, out);
    cmrscl_trace("%s: parsed in %.3f s, CSR in %.3f s (%d threads)", name, t1 - t0,
                 cmrscl_seconds() - t1, threads);
    for (int t = 0; t < threads; ++t) {
        free(pp.shares[t].ps.ri);
        free(pp.shares[t].ps.ci);
        free(pp.shares[t].ps.val);
    }
    free(pp.shares);
    return st;
}
