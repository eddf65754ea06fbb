/* split.c - the split path's arrays: the strips longer than two tiles, each cut into tiles of
 * the plan's length, which warps take independently (tiles of one strip kept inside one
 * work-group for the in-group combine, empty slots padding the group), and each long strip's
 * first tile for the combine kernel. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

void cmrs_split_free(split_layout *s)
{
    free(s->tile_start);
    free(s->tile_strip);
    free(s->long_strip);
    free(s->first_tile);
    memset(s, 0, sizeof *s);
}

/* The first slot of a long strip of n tiles placed after slot t: the next group when they
 * would cross into it. */
static int64_t tile_slot(int64_t t, int64_t n, int group_tiles)
{
    if (group_tiles > 0 && t % group_tiles + n > group_tiles)
        t = (t + group_tiles - 1) / group_tiles * group_tiles;
    return t;
}

void cmrs_split_count(int32_t rows, const int64_t *row_ptr, int height, int32_t tile,
                      int group_tiles, int64_t *tiles, int64_t *long_strips)
{
    int64_t strips = ((int64_t)rows + height - 1) / height;
    *tiles = *long_strips = 0;
    for (int64_t s = 0; tile > 0 && s < strips; ++s) {
        int64_t len = csr_strip_length(rows, row_ptr, height, s);
        if (len > 2 * (int64_t)tile) {
            int64_t n = (len + tile - 1) / tile;
            *tiles = tile_slot(*tiles, n, group_tiles) + n;
            ++*long_strips;
        }
    }
}

cmrscl_status cmrs_split_build(int32_t rows, const int64_t *row_ptr, int height, int32_t tile,
                               int group_tiles, split_layout *out)
{
    memset(out, 0, sizeof *out);
    int64_t tiles, longs;
    cmrs_split_count(rows, row_ptr, height, tile, group_tiles, &tiles, &longs);
    if (longs == 0)
        return CMRSCL_OK;
    if (tiles > INT32_MAX) /* the plan checks it first; this is the last line of defence */
        return cmrscl_fail(CMRSCL_ERROR_TOO_LARGE, "%lld tiles of %d entries exceed %d",
                           (long long)tiles, tile, INT32_MAX);
    int64_t strips = ((int64_t)rows + height - 1) / height;
    out->tile = tile;
    out->tiles = (int32_t)tiles;
    out->long_strips = (int32_t)longs;
    out->tile_start = cmrscl_alloc((size_t)tiles, sizeof(uint64_t));
    out->tile_strip = cmrscl_alloc((size_t)tiles, sizeof(uint32_t));
    out->long_strip = cmrscl_alloc((size_t)longs, sizeof(uint32_t));
    out->first_tile = cmrscl_alloc((size_t)longs + 1, sizeof(uint32_t));
    if (!out->tile_start || !out->tile_strip || !out->long_strip || !out->first_tile) {
        cmrs_split_free(out);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for %lld tiles",
                           (long long)tiles);
    }
    int64_t t = 0, k = 0;
    for (int64_t s = 0; s < strips; ++s) {
        int64_t len = csr_strip_length(rows, row_ptr, height, s);
        if (len <= 2 * (int64_t)tile) {
            out->longest_whole = len > out->longest_whole ? len : out->longest_whole;
            continue;
        }
        int64_t begin = row_ptr[s * height];
        for (int64_t slot = tile_slot(t, (len + tile - 1) / tile, group_tiles); t < slot; ++t)
            out->tile_start[t] = 0, out->tile_strip[t] = SPLIT_NO_STRIP;
        out->long_strip[k] = (uint32_t)s;
        out->first_tile[k++] = (uint32_t)t;
        for (int64_t e = 0; e < len; e += tile, ++t) {
            out->tile_start[t] = (uint64_t)(begin + e);
            out->tile_strip[t] = (uint32_t)s;
        }
    }
    out->first_tile[k] = (uint32_t)t;
    return CMRSCL_OK;
}
