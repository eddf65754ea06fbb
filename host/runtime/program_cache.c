/* program_cache.c - the on-disk cache of compiled program binaries, so that a new process
 * (or context) loads a kernel instead of compiling it again. One file per program:
 *   <dir>/<16 hex digits of the key's FNV-1a hash>.bin
 * holding, little-endian:
 *   0  char[8]  magic "cmrsclPC"
 *   8  u32      format version (ENTRY_VERSION)
 *   12 u32      crc32 of the binary
 *   16 u64      key length K
 *   24 u64      binary length B
 *   32 K bytes  the key text: library version, platform, device, driver, options, source
 *   .. B bytes  the binary (CL_PROGRAM_BINARIES)
 * The hash only names the file. A file is used only when its whole key text equals ours
 * (a hash collision or a file from elsewhere is caught there), its size is exactly
 * 32 + K + B (not truncated), the crc matches and the driver accepts and builds the
 * binary; anything else is a miss: the entry is removed and the caller compiles from
 * source, which overwrites it. Writers write a temporary file and rename() it over the
 * name, so no reader ever sees half an entry. */
#include "runtime/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define ENTRY_MAGIC "cmrsclPC"
#define ENTRY_VERSION 1u
#define HEADER_SIZE 32
/* Larger files are not ours: a program binary is kilobytes to a few megabytes. */
#define ENTRY_MAX ((uint64_t)1 << 30)

uint64_t cmrs_fnv1a64(const void *data, size_t size)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; ++i)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* zlib's crc32 takes 32-bit lengths. */
static uint32_t crc_of(const unsigned char *data, size_t size)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t done = 0; done < size;) {
        uInt n = size - done > (1u << 30) ? (1u << 30) : (uInt)(size - done);
        crc = crc32(crc, data + done, n);
        done += n;
    }
    return (uint32_t)crc;
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

/* The programs' directory, or false when the cache is off or there is no home. */
static bool programs_dir(char *path, size_t size)
{
    const char *mode = getenv("CMRSCL_PROGRAM_CACHE");
    if (mode && (!strcmp(mode, "off") || !strcmp(mode, "0")))
        return false;
    const char *env = getenv("CMRSCL_CACHE_DIR");
    if (env && *env)
        return snprintf(path, size, "%s", env) < (int)size;
    char dir[4000];
    return cmrs_cache_dir(dir, sizeof dir) && snprintf(path, size, "%s/programs", dir) < (int)size;
}

/* A growing text buffer; on allocation failure it stays NULL and the key is not made. */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void text_add(text *t, const char *label, const char *value)
{
    size_t a = strlen(label), b = strlen(value);
    if (!t->s || t->len + a + b + 2 > t->cap) {
        size_t cap = (t->cap ? t->cap : 4096) * 2 + a + b;
        char *grown = realloc(t->s, cap);
        if (!grown) {
            free(t->s);
            *t = (text){0};
            return;
        }
        t->s = grown, t->cap = cap;
    }
    memcpy(t->s + t->len, label, a);
    memcpy(t->s + t->len + a, value, b);
    t->len += a + b;
    t->s[t->len++] = '\n';
    t->s[t->len] = '\0';
}

/* A device or platform string of any length (malloc'ed; "" when the query fails). */
static char *cl_string(cl_device_id device, cl_platform_id platform, cl_uint param)
{
    size_t size = 0;
    cl_int err = device ? clGetDeviceInfo(device, param, 0, NULL, &size)
                        : clGetPlatformInfo(platform, param, 0, NULL, &size);
    char *s = malloc(err == CL_SUCCESS ? size + 1 : 1);
    if (!s)
        return NULL;
    if (err == CL_SUCCESS)
        err = device ? clGetDeviceInfo(device, param, size, s, NULL)
                     : clGetPlatformInfo(platform, param, size, s, NULL);
    s[err == CL_SUCCESS ? size : 0] = '\0';
    return s;
}

bool cmrs_program_key_make(cl_device_id device, const char *file, const char *source,
                           const char *options, program_key *out)
{
    *out = (program_key){0};
    char dir[4096];
    if (!programs_dir(dir, sizeof dir))
        return false;
    /* Everything that changes the binary: a new library, a driver update, another device
     * or options, an edited kernel (CMRSCL_KERNEL_DIR) all give another key. */
    cl_platform_id platform = NULL;
    clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL);
    struct {
        const char *label;
        cl_device_id device;
        cl_platform_id platform;
        cl_uint param;
    } fields[] = {
        {"platform ", NULL, platform, CL_PLATFORM_NAME},
        {"platform version ", NULL, platform, CL_PLATFORM_VERSION},
        {"device ", device, NULL, CL_DEVICE_NAME},
        {"device version ", device, NULL, CL_DEVICE_VERSION},
        {"driver ", device, NULL, CL_DRIVER_VERSION},
    };
    text t = {0};
    text_add(&t, "cmrscl program cache, library ", cmrscl_version_string());
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i) {
        char *value = cl_string(fields[i].device, fields[i].platform, fields[i].param);
        text_add(&t, fields[i].label, value ? value : "");
        free(value);
    }
    text_add(&t, "kernel ", file);
    text_add(&t, "options ", options);
    text_add(&t, "source\n", source);
    if (!t.s)
        return false;
    if (snprintf(out->path, sizeof out->path, "%s/%016llx.bin", dir,
                 (unsigned long long)cmrs_fnv1a64(t.s, t.len)) >= (int)sizeof out->path) {
        free(t.s);
        return false;
    }
    out->text = t.s, out->length = t.len;
    return true;
}

void cmrs_program_key_free(program_key *key)
{
    free(key->text);
    *key = (program_key){0};
}

/* The whole file, when it has a plausible size. */
static unsigned char *read_entry(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat sb;
    unsigned char *data = NULL;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= HEADER_SIZE &&
        (uint64_t)sb.st_size <= ENTRY_MAX && (data = malloc((size_t)sb.st_size)) != NULL) {
        size_t done = 0;
        while (done < (size_t)sb.st_size) {
            ssize_t n = read(fd, data + done, (size_t)sb.st_size - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            done += (size_t)n;
        }
        *size = done;
    }
    close(fd);
    return data;
}

/* What is wrong with an entry, or NULL when its binary may be handed to the driver. */
static const char *check_entry(const unsigned char *data, size_t size, const program_key *key,
                               const unsigned char **binary, size_t *binary_size)
{
    if (memcmp(data, ENTRY_MAGIC, 8) != 0 || get_le(data + 8, 4) != ENTRY_VERSION)
        return "not an entry of this format";
    uint64_t klen = get_le(data + 16, 8), blen = get_le(data + 24, 8);
    if (klen > ENTRY_MAX || blen > ENTRY_MAX || HEADER_SIZE + klen + blen != size)
        return "truncated or wrong size";
    if (klen != key->length || memcmp(data + HEADER_SIZE, key->text, klen) != 0)
        return "another program's key";
    *binary = data + HEADER_SIZE + klen;
    *binary_size = (size_t)blen;
    if (blen == 0 || crc_of(*binary, *binary_size) != (uint32_t)get_le(data + 12, 4))
        return "checksum mismatch";
    return NULL;
}

cl_program cmrs_program_disk_load(const program_key *key, cl_context context, cl_device_id device,
                                  const char *options)
{
    size_t size = 0, binary_size = 0;
    const unsigned char *binary = NULL;
    unsigned char *data = read_entry(key->path, &size);
    if (!data)
        return NULL; /* a plain miss */
    const char *why = check_entry(data, size, key, &binary, &binary_size);
    cl_program prog = NULL;
    if (!why) {
        cl_int err, status = CL_SUCCESS;
        prog = clCreateProgramWithBinary(context, 1, &device, &binary_size, &binary, &status, &err);
        if (!prog || err != CL_SUCCESS || status != CL_SUCCESS)
            why = "binary rejected by the driver";
        else if (clBuildProgram(prog, 1, &device, options, NULL, NULL) != CL_SUCCESS)
            why = "build from the binary failed";
        if (why && prog)
            clReleaseProgram(prog), prog = NULL;
    }
    free(data);
    if (why) {
        /* Never trusted again; the source build that follows writes a good entry. */
        cmrscl_trace("program cache: ignoring %s: %s", key->path, why);
        remove(key->path);
    }
    return prog;
}

static bool write_all(int fd, const void *data, size_t size)
{
    const unsigned char *p = data;
    while (size) {
        ssize_t n = write(fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n, size -= (size_t)n;
    }
    return true;
}

void cmrs_program_disk_store(const program_key *key, cl_program prog)
{
    size_t size = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
        size == 0)
        return; /* the driver keeps no binary: nothing to cache */
    unsigned char *binary = malloc(size);
    if (!binary ||
        clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) != CL_SUCCESS) {
        free(binary);
        return;
    }
    unsigned char header[HEADER_SIZE];
    /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): 8 bytes of magic, no string */
    memcpy(header, ENTRY_MAGIC, 8);
    put_le(header + 8, ENTRY_VERSION, 4);
    put_le(header + 12, crc_of(binary, size), 4);
    put_le(header + 16, key->length, 8);
    put_le(header + 24, size, 8);
    /* The temporary name starts with a dot so it never looks like an entry. */
    char tmp[sizeof key->path + 16];
    const char *base = strrchr(key->path, '/');
    snprintf(tmp, sizeof tmp, "%.*s/.%s.XXXXXX", (int)(base - key->path), key->path, base + 1);
    int fd = cmrs_make_parent_dirs(tmp) == 0 ? mkstemp(tmp) : -1;
    bool ok = fd >= 0 && write_all(fd, header, sizeof header) &&
              write_all(fd, key->text, key->length) && write_all(fd, binary, size);
    if (fd >= 0) {
        ok &= close(fd) == 0;
        ok = ok && rename(tmp, key->path) == 0;
        if (!ok)
            unlink(tmp);
    }
    cmrscl_trace("program cache: %s %s", ok ? "wrote" : "could not write", key->path);
    free(binary);
}
