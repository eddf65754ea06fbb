/* program.c - kernel sources (embedded at build time by cmake/embed_kernels.cmake, or read
 * from $CMRSCL_KERNEL_DIR during development), JIT builds with the build log kept for the
 * caller, and the per-context cache: one program per (context, device, options), loaded
 * from the on-disk cache (program_cache.c) when it can be. */
#include "runtime/runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct embedded_kernel {
    const char *name;
    const char *text;
    size_t size;
};
extern const struct embedded_kernel cmrscl_embedded_kernels[];

static cmrscl_status read_kernel_file(const char *dir, const char *name, char **out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot open kernel %s (CMRSCL_KERNEL_DIR): %s",
                           path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    while (text) {
        n += fread(text + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *grown = realloc(text, cap *= 2);
        if (!grown)
            free(text);
        text = grown;
    }
    bool failed = ferror(f);
    fclose(f);
    if (!text)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory to read kernel %s", path);
    if (failed) {
        free(text);
        return cmrscl_fail(CMRSCL_ERROR_FILE_IO, "cannot read kernel %s", path);
    }
    text[n] = '\0';
    *out = text;
    return CMRSCL_OK;
}

cmrscl_status cmrs_program_source(const char *name, char **out)
{
    *out = NULL;
    const char *dir = getenv("CMRSCL_KERNEL_DIR");
    if (dir && *dir)
        return read_kernel_file(dir, name, out);
    for (const struct embedded_kernel *k = cmrscl_embedded_kernels; k->name; ++k) {
        if (strcmp(k->name, name) != 0)
            continue;
        *out = malloc(k->size + 1);
        if (!*out)
            return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for kernel %s", name);
        memcpy(*out, k->text, k->size + 1);
        return CMRSCL_OK;
    }
    return cmrscl_fail(CMRSCL_ERROR_INVALID_ARGUMENT, "no embedded kernel named %s", name);
}

/* The program's build log for the device (malloc'ed), or NULL. */
static char *build_log(cl_program prog, cl_device_id device)
{
    size_t size = 0;
    if (clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) != CL_SUCCESS)
        return NULL;
    char *log = malloc(size + 1);
    if (log &&
        clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, size, log, NULL) != CL_SUCCESS)
        free(log), log = NULL;
    if (log)
        log[size] = '\0';
    return log;
}

static void append_build_log(cl_program prog, cl_device_id device)
{
    char *log = build_log(prog, device);
    if (log) {
        cmrscl_fail_append("\nbuild log:\n");
        cmrscl_fail_append(log);
    }
    free(log);
}

/* Whether a failed build's log holds a compiler's diagnostic ("error"). PoCL 5 fails builds
 * with none - "failed to build the program" alone - when processes of one host write its kernel
 * cache at once (pocl/pocl#1480: the ranks of an MPI job), and the same build then passes: a
 * build that fails so is tried once more. */
static bool build_log_diagnoses(cl_program prog, cl_device_id device)
{
    char *log = build_log(prog, device);
    bool diagnosed = !log || strstr(log, "error") || strstr(log, "Error") || strstr(log, "ERROR");
    free(log);
    return diagnosed;
}

cmrscl_status cmrs_program_build(cl_context context, cl_device_id device, const char *source,
                                 const char *options, cl_program *out)
{
    *out = NULL;
    cl_int err;
    cl_program prog = NULL;
    for (int attempt = 0; attempt < 2; ++attempt) {
        prog = clCreateProgramWithSource(context, 1, &source, NULL, &err);
        if (!prog)
            return cmrscl_fail_cl(err, "clCreateProgramWithSource");
        err = clBuildProgram(prog, 1, &device, options, NULL, NULL);
        if (err != CL_BUILD_PROGRAM_FAILURE || attempt == 1 || build_log_diagnoses(prog, device))
            break;
        clReleaseProgram(prog);
    }
    if (err != CL_SUCCESS) {
        cmrscl_fail(CMRSCL_ERROR_BUILD, "kernel build with options \"%s\" failed: %s (%d)", options,
                    cmrscl_cl_error_name(err), (int)err);
        append_build_log(prog, device);
        clReleaseProgram(prog);
        return CMRSCL_ERROR_BUILD;
    }
    *out = prog;
    return CMRSCL_OK;
}

/* Development aid: with CMRSCL_DUMP_DIR set, each program built for the cache is written
 * there (PTX on NVIDIA) as cmrs-<hash of options>.bin, its options in a .txt beside it,
 * to check what the compiler made of the kernel. Failures are ignored. */
static void dump_binary(cl_program prog, const char *options)
{
    const char *dir = getenv("CMRSCL_DUMP_DIR");
    size_t size = 0;
    if (!dir || !*dir ||
        clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
        size == 0)
        return;
    unsigned char *bin = malloc(size);
    if (bin && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS) {
        uint64_t h = cmrs_fnv1a64(options, strlen(options));
        char path[4096];
        for (int text = 0; text < 2; ++text) {
            snprintf(path, sizeof path, "%s/cmrs-%016llx.%s", dir, (unsigned long long)h,
                     text ? "txt" : "bin");
            FILE *f = fopen(path, "wb");
            if (f) {
                fwrite(text ? (const void *)options : bin, 1, text ? strlen(options) : size, f);
                fclose(f);
            }
        }
    }
    free(bin);
}

/* What every SpMV program is built from, before the family's own file: the host's contract
 * (sentinels, argument order, option codes), the shared options and helpers, the warp layer. */
static const char *const program_prelude[] = {"cmrs_abi.h", "spmv_common.cl", "warp.cl",
                                              "dots.cl",    "cg_fused.cl",    "combine.cl"};
#define PRELUDE_FILES (sizeof program_prelude / sizeof program_prelude[0])

/* The source of a program: the prelude, then the family's (or convert.cl's) file. */
static cmrscl_status family_source(const char *file, char **out)
{
    char *part[PRELUDE_FILES + 1] = {NULL};
    size_t length[PRELUDE_FILES + 1], total = 0;
    cmrscl_status st = CMRSCL_OK;
    *out = NULL;
    for (size_t i = 0; i <= PRELUDE_FILES && st == CMRSCL_OK; ++i) {
        st = cmrs_program_source(i < PRELUDE_FILES ? program_prelude[i] : file, &part[i]);
        length[i] = st == CMRSCL_OK ? strlen(part[i]) : 0;
        total += length[i] + 1;
    }
    char *text = st == CMRSCL_OK ? malloc(total + 1) : NULL;
    if (st == CMRSCL_OK && !text)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for kernel %s", file);
    for (size_t i = 0, at = 0; text && i <= PRELUDE_FILES; ++i) {
        memcpy(text + at, part[i], length[i]);
        at += length[i];
        text[at++] = '\n';
        text[at] = '\0';
    }
    for (size_t i = 0; i <= PRELUDE_FILES; ++i)
        free(part[i]);
    *out = text;
    return st;
}

/* A program not yet in the context: from the on-disk cache when it holds a valid entry,
 * else compiled from source (and then written to the disk cache). */
static cmrscl_status program_load_or_build(cmrscl_context ctx, const char *file,
                                           const char *options, cl_program *out,
                                           cmrscl_program_source *from)
{
    char *source = NULL;
    program_key key;
    cmrscl_status st = family_source(file, &source);
    bool cached =
        st == CMRSCL_OK && cmrs_program_key_make(ctx->device, file, source, options, &key);
    *out = cached ? cmrs_program_disk_load(&key, ctx->context, ctx->device, options) : NULL;
    *from = *out ? CMRSCL_PROGRAM_DISK : CMRSCL_PROGRAM_JIT;
    if (st == CMRSCL_OK && !*out) {
        st = cmrs_program_build(ctx->context, ctx->device, source, options, out);
        if (st == CMRSCL_OK && cached)
            cmrs_program_disk_store(&key, *out);
    }
    if (cached)
        cmrs_program_key_free(&key);
    free(source);
    return st;
}

cmrscl_status cmrs_program_get(cmrscl_context ctx, const char *file, const char *options,
                               cl_program *out, double *build_seconds, cmrscl_program_source *from)
{
    *build_seconds = 0.0;
    *from = CMRSCL_PROGRAM_CONTEXT;
    pthread_mutex_lock(&ctx->lock);
    for (program_cache_entry *e = ctx->programs; e; e = e->next)
        if (strcmp(e->file, file) == 0 && strcmp(e->options, options) == 0) {
            *out = e->program;
            pthread_mutex_unlock(&ctx->lock);
            return CMRSCL_OK;
        }
    /* Build under the lock: two threads asking for the same program build it once. */
    double t0 = cmrscl_seconds();
    cl_program prog = NULL;
    cmrscl_program_source where;
    cmrscl_status st = program_load_or_build(ctx, file, options, &prog, &where);
    if (st == CMRSCL_OK) {
        program_cache_entry *entry = malloc(sizeof *entry);
        char *key = strdup(options), *name = strdup(file);
        if (!entry || !key || !name) {
            free(entry), free(key), free(name);
            clReleaseProgram(prog);
            st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "no memory for the program cache");
        } else {
            *entry = (program_cache_entry){name, key, prog, ctx->programs};
            ctx->programs = entry;
            *out = prog;
            *build_seconds = cmrscl_seconds() - t0;
            *from = where;
            cmrscl_trace("%s %s with \"%s\" in %.3f s",
                         where == CMRSCL_PROGRAM_DISK ? "loaded" : "built", file, options,
                         *build_seconds);
            dump_binary(prog, options);
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

void cmrs_program_cache_free(program_cache_entry *head)
{
    while (head) {
        program_cache_entry *next = head->next;
        clReleaseProgram(head->program);
        free(head->file);
        free(head->options);
        free(head);
        head = next;
    }
}
