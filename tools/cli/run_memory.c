/* run_memory.c - what a run of spmv, tune, bench or setup holds in memory, worked out from the
 * matrix's size before anything of that size is allocated, so a matrix too large for the
 * device or the machine is named as such at once. (A 5e8 x 5e8 matrix with one entry used to
 * run 68 s and 17.7 GB, then fail reading y back with OpenCL error -6.)
 *
 * The host model, phase by phase, each holding what earlier phases left (bytes per row r,
 * column c, entry e; v = 4 or 8 for the precision):
 *   read      the file's COO (16 e) beside the CSR (8 r + 12 e)
 *   vectors   x and y0 in double (bench.c: 8 c + 8 r)
 *   create    the CMRS arrays on the host ((4 + v) e, and r for StripPtr: 8 bytes a strip of
 *             8 rows or more)
 *   upload    x and y converted to the precision (v max(r, c), freed after)
 *   verify    y read back and widened (v r + 8 r)
 * A CPU device's buffers are host memory as well: x, y (v (r + c)) and the matrix. Checked
 * with `cmrscl-run spmv` on 1-entry files on PoCL 3.1 (peak resident set, 2026-11-24):
 * 5e7 x 5e7 2.24 GB (model 2.25), 5e7 x 1 1.65 GB (1.65), 1 x 5e7 0.86 GB (0.80),
 * 5e8 x 5e8 21.7 GB (22.5). */
#include "run_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "17.2 GB", or "54 MB" below a gigabyte: a size a person reads (decimal units), with
 * `more` digits beyond those. */
typedef struct size_text {
    char s[32];
} size_text;
static size_text human_digits(uint64_t bytes, int more)
{
    size_text t;
    if (bytes >= 1000000000u)
        snprintf(t.s, sizeof t.s, "%.*f GB", 1 + more, (double)bytes * 1e-9);
    else
        snprintf(t.s, sizeof t.s, "%.*f MB", more, (double)bytes * 1e-6);
    return t;
}
static size_text human(uint64_t bytes) { return human_digits(bytes, 0); }

/* A size that exceeds a limit and the limit, with the digits it takes to tell them apart
 * ("1.4 MB" against "1.0 MB", not "1 MB" against "1 MB"). */
typedef struct size_pair {
    size_text need, limit;
} size_pair;
static size_pair human_pair(uint64_t need, uint64_t limit)
{
    size_pair p;
    for (int more = 0; more < 4; ++more) {
        p.need = human_digits(need, more), p.limit = human_digits(limit, more);
        if (strcmp(p.need.s, p.limit.s))
            break;
    }
    return p;
}

/* What this process may still take: CMRSCL_HOST_MEMORY_MB when set, else the smaller of the
 * kernel's MemAvailable and the cgroup's room (a container's limit); false when unknown. */
static bool host_available(uint64_t *bytes, const char **source)
{
    const char *env = getenv("CMRSCL_HOST_MEMORY_MB");
    if (env && *env) {
        *source = "CMRSCL_HOST_MEMORY_MB";
        *bytes = (uint64_t)strtoull(env, NULL, 10) * 1000000u; /* as the messages count */
        return true;
    }
    uint64_t avail = 0;
    char line[256];
    FILE *f = fopen("/proc/meminfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lu kB", &avail) == 1) {
            avail <<= 10;
            *source = "MemAvailable in /proc/meminfo";
            break;
        }
    if (f)
        fclose(f);
    unsigned long long limit = 0, used = 0;
    FILE *max = fopen("/sys/fs/cgroup/memory.max", "r"),
         *cur = fopen("/sys/fs/cgroup/memory.current", "r");
    if (max && cur && fscanf(max, "%llu", &limit) == 1 && fscanf(cur, "%llu", &used) == 1 &&
        limit > used && (!avail || limit - used < avail)) {
        avail = limit - used;
        *source = "the cgroup's memory.max";
    }
    if (max)
        fclose(max);
    if (cur)
        fclose(cur);
    *bytes = avail;
    return avail > 0;
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* The host bytes at the run's peak (the model above). */
static uint64_t host_peak(const run_memory *rm, uint64_t r, uint64_t c, uint64_t e, bool from_file,
                          bool verify)
{
    uint64_t v = rm->precision == CMRSCL_DOUBLE ? 8 : 4;
    uint64_t csr = 8 * (r + 1) + 12 * e;
    uint64_t read = from_file ? 16 * e + csr : csr;
    uint64_t held = csr + 8 * (r + c);
    bool cpu = rm->dev && (rm->dev->type & CL_DEVICE_TYPE_CPU);
    uint64_t matrix = (4 + v) * e + r, device = cpu ? matrix + v * (r + c) : 0;
    uint64_t create = held + matrix + (cpu ? matrix : 0);
    uint64_t upload = held + device + v * (r > c ? r : c);
    uint64_t check = verify ? held + device + (v + 8) * r : 0;
    return max3(read, create, upload > check ? upload : check);
}

int run_memory_check(const run_memory *rm, const char *name, int64_t rows, int64_t cols,
                     int64_t entries, bool from_file)
{
    uint64_t r = (uint64_t)rows, c = (uint64_t)cols, e = (uint64_t)entries;
    uint64_t v = rm->precision == CMRSCL_DOUBLE ? 8 : 4;
    const cmrscl_device_info *d = rm->dev;
    const char *prec = rm->precision == CMRSCL_DOUBLE ? "double" : "float";
    if (d) { /* the vectors: the library checks the matrix's own buffers */
        uint64_t largest = v * (r > c ? r : c);
        if (largest > d->max_alloc_bytes) {
            size_pair t = human_pair(largest, d->max_alloc_bytes);
            fprintf(stderr,
                    "cmrscl-run: %s: %lld x %lld in %s needs a %s vector %s, but device "
                    "\"%s\" allocates at most %s at once (CL_DEVICE_MAX_MEM_ALLOC_SIZE)\n",
                    name, (long long)rows, (long long)cols, prec, t.need.s, r > c ? "y" : "x",
                    d->device_name, t.limit.s);
            return EXIT_RUN_FAILED;
        }
        uint64_t device = v * (r + c) + (4 + v) * e;
        if (device > d->global_mem_bytes) {
            size_pair t = human_pair(device, d->global_mem_bytes);
            fprintf(stderr,
                    "cmrscl-run: %s: %lld x %lld, nnz %lld, in %s needs at least %s "
                    "on the device (x, y and the entries), but device \"%s\" has %s\n",
                    name, (long long)rows, (long long)cols, (long long)entries, prec, t.need.s,
                    d->device_name, t.limit.s);
            return EXIT_RUN_FAILED;
        }
    }
    const char *source = NULL;
    uint64_t avail = 0, need = host_peak(rm, r, c, e, from_file, rm->verify);
    if (host_available(&avail, &source) && need > avail) {
        uint64_t unverified = host_peak(rm, r, c, e, from_file, false);
        size_pair t = human_pair(need, avail);
        fprintf(stderr,
                "cmrscl-run: %s: %lld x %lld, nnz %lld, in %s needs about %s of host "
                "memory (the CSR, x and y in double for the reference%s), but %s are "
                "available (%s)%s%s\n",
                name, (long long)rows, (long long)cols, (long long)entries, prec, t.need.s,
                d && (d->type & CL_DEVICE_TYPE_CPU) ? ", and the CPU device's buffers" : "",
                t.limit.s, source,
                rm->verify && unverified <= avail ? "; --no-verify needs about " : "",
                rm->verify && unverified <= avail ? human(unverified).s : "");
        return EXIT_RUN_FAILED;
    }
    return 0;
}

int run_memory_check_csr(const char *name, int64_t rows, int64_t cols, int64_t entries)
{
    const char *source = NULL;
    uint64_t avail = 0, need = 8 * ((uint64_t)rows + 1) + 12 * (uint64_t)entries;
    if (!host_available(&avail, &source) || need <= avail)
        return 0;
    size_pair t = human_pair(need, avail);
    fprintf(stderr,
            "cmrscl-run: %s: %lld x %lld, nnz %lld, needs about %s of host memory for its CSR, "
            "but %s are available (%s)\n",
            name, (long long)rows, (long long)cols, (long long)entries, t.need.s, t.limit.s,
            source);
    return EXIT_RUN_FAILED;
}
