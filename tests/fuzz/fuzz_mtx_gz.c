/* fuzz_mtx_gz.c - libFuzzer target for the reader's gzip path. The input is the text:
 * the harness gzips it, so mutations stay meaningful to the parser, and the inflated read
 * must agree exactly (status, message, matrix) with a plain read of the same text. Inputs
 * that already start with the gzip magic are also read as they are, from memory and
 * through the file reader (zlib's gzread), so corrupt, truncated and multi-member
 * streams get fuzzed too. */
#include "fuzz_check.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define NAME "<fuzz.gz>"

/* mtx.c inflates into a buffer of CHUNK / 16 bytes: text longer than that is parsed in
 * pieces, with a partial line carried over from one piece to the next. */
enum { READ_PIECE = (1 << 20) / 16 };

static bool is_gzip(const uint8_t *p, size_t n) { return n >= 2 && p[0] == 0x1f && p[1] == 0x8b; }

/* Appends one gzip member holding in[0..n) at out + *len. The stream lives as long as
 * the process: setting up deflate's window for every member would dominate the time. */
static void gzip_member(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *len)
{
    static z_stream zs;
    static bool ready;
    if (!ready) {
        /* 15 + 16: the largest window with a gzip header and trailer, as gzip(1) writes. */
        FUZZ_CHECK(deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK,
                   "deflateInit2 failed");
        ready = true;
    }
    FUZZ_CHECK(deflateReset(&zs) == Z_OK, "deflateReset failed");
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)n;
    zs.next_out = out + *len;
    zs.avail_out = (uInt)(cap - *len);
    FUZZ_CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END, "deflate did not finish");
    *len += zs.total_out;
}

/* The text to compress and how to split it into members, from the input size alone (so
 * the bytes reach the parser unchanged): odd sizes give two members split mid-text;
 * sizes 2 and 7 mod 8 put a blank line first - blank lines before the banner are
 * allowed - either so the input's middle straddles the end of the first piece, or
 * longer than a piece so the line buffer has to grow. */
static uint8_t *make_text(const uint8_t *data, size_t size, size_t *text_len, size_t *split)
{
    size_t pad = 0;
    if (size % 8 == 2 && size / 2 + 1 < READ_PIECE)
        pad = READ_PIECE - size / 2;
    else if (size % 8 == 7)
        pad = READ_PIECE + size;
    uint8_t *text = malloc(pad + size + 1);
    FUZZ_CHECK(text != NULL, "no memory");
    if (pad) {
        memset(text, ' ', pad - 1);
        text[pad - 1] = '\n';
    }
    if (size)
        memcpy(text + pad, data, size);
    *text_len = pad + size;
    *split = size % 2 ? *text_len / 2 : *text_len;
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cmrscl_csr csr;
    cmrscl_status st;
    if (is_gzip(data, size)) {
        st = cmrs_mtx_read_memory(data, size, NAME, &csr);
        fuzz_check_read(st, &csr, NAME, size);
        fuzz_check_same_as_file(data, size, st, &csr, NAME);
        cmrscl_csr_free(&csr);
    }

    size_t text_len, split, gz_len = 0;
    uint8_t *text = make_text(data, size, &text_len, &split);
    size_t cap = text_len + text_len / 8 + 256; /* level 1 never grows text by more */
    uint8_t *gz = malloc(cap);
    FUZZ_CHECK(gz != NULL, "no memory");
    gzip_member(text, split, gz, cap, &gz_len);
    if (split < text_len)
        gzip_member(text + split, text_len - split, gz, cap, &gz_len);
    st = cmrs_mtx_read_memory(gz, gz_len, NAME, &csr);
    fuzz_check_read(st, &csr, NAME, size);
    fuzz_check_same_in_parallel(gz, gz_len, st, &csr, NAME);
    char *message = st == CMRSCL_OK ? NULL : strdup(cmrscl_last_error());

    /* Text that starts with the magic would be inflated again by a plain read. */
    if (!is_gzip(text, text_len)) {
        cmrscl_csr plain;
        cmrscl_status plain_st = cmrs_mtx_read_memory(text, text_len, NAME, &plain);
        FUZZ_CHECK(plain_st == st, "gzip read gave %s, plain read %s", cmrscl_status_name(st),
                   cmrscl_status_name(plain_st));
        if (st == CMRSCL_OK)
            FUZZ_CHECK(fuzz_csr_identical(&csr, &plain), "gzip and plain reads differ");
        else
            FUZZ_CHECK(strcmp(message, cmrscl_last_error()) == 0,
                       "gzip read said '%s', plain read another message", message);
        cmrscl_csr_free(&plain);
    }
    free(message);
    cmrscl_csr_free(&csr);
    free(gz);
    free(text);
    return 0;
}
