/* test_program_cache.c - the on-disk program cache on CMRSCL_DEVICE: a first context
 * compiles and writes an entry, a fresh context loads it and computes the same y bit for
 * bit; truncated, corrupted, foreign and driver-rejected entries are rebuilt from source
 * and replaced by good ones; CMRSCL_PROGRAM_CACHE=off reads and writes nothing; processes
 * and threads filling an empty cache at once leave one valid entry. Each case gets its own
 * directory through CMRSCL_CACHE_DIR. */
#include "test_matrices.h"
#include "test_util.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#define WORKERS 4

static cmrscl_csr matrix;
static float *x_host;
static double *x_ref; /* x as doubles */
static char root[4096];

/* Two plans, so that two different programs (and entries) exist; local memory's sums, which
 * every device runs and compiles fastest (the cache is the same whatever the program; each
 * case here builds from source again, and Intel's CPU compiler takes seconds a program at
 * wide sub-groups). */
static const cmrscl_options plan_a = {
    .kernel = CMRSCL_KERNEL_STRIP, .height = 4, .reduce = CMRSCL_REDUCE_LOCAL};
static const cmrscl_options plan_b = {
    .kernel = CMRSCL_KERNEL_SEGMENT, .height = 16, .reduce = CMRSCL_REDUCE_LOCAL};

static bool product_ok(const float *y)
{
    double *yd = malloc(sizeof(double) * (size_t)matrix.rows), ratio = INFINITY;
    for (int32_t i = 0; i < matrix.rows; ++i)
        yd[i] = y[i];
    cmrscl_csr ref = test_csr_rounded(&matrix, CMRSCL_FLOAT);
    bool ok = cmrscl_csr_spmv_check(&ref, 1.0, x_ref, 0.0, NULL, yd, 0x1p-24, NULL, &ratio) ==
                  CMRSCL_OK &&
              ratio <= 1.0;
    cmrscl_csr_free(&ref);
    free(yd);
    return ok;
}

/* The matrix in `ctx` - where its program is built, or loaded from the cache - and where
 * the program came from. */
static cmrscl_matrix build(cmrscl_context ctx, const cmrscl_options *plan,
                           cmrscl_program_source *from)
{
    cmrscl_matrix m = NULL;
    cmrscl_params p = CMRSCL_PARAMS_INIT;
    if (!ctx || cmrscl_matrix_create_from_csr(ctx, CMRSCL_FLOAT, &matrix, plan, &m) != CMRSCL_OK ||
        cmrscl_matrix_params(m, &p) != CMRSCL_OK) {
        fprintf(stderr, "build: %s\n", cmrscl_last_error());
        cmrscl_matrix_free(m);
        return NULL;
    }
    if (from)
        *from = p.program_source;
    return m;
}

/* y = A x with `m` (rows floats), checked. */
static bool multiply(cmrscl_matrix m, float *y)
{
    bool ok = m && cmrscl_spmv_host(m, 1.0, x_host, 0.0, y) == CMRSCL_OK;
    if (m && !ok)
        fprintf(stderr, "product: %s\n", cmrscl_last_error());
    return ok && product_ok(y);
}

/* One product in `ctx`: y (rows floats) and where the program came from. */
static bool product(cmrscl_context ctx, const cmrscl_options *plan, float *y,
                    cmrscl_program_source *from)
{
    cmrscl_matrix m = build(ctx, plan, from);
    bool ok = multiply(m, y);
    cmrscl_matrix_free(m);
    return ok;
}

/* The same in a fresh context, which never has the program yet. */
static bool run(const cmrscl_options *plan, float *y, cmrscl_program_source *from)
{
    cmrscl_context ctx = NULL;
    cmrscl_context_create(NULL, &ctx);
    bool ok = product(ctx, plan, y, from);
    cmrscl_context_free(ctx);
    return ok;
}

static const char *source_name(cmrscl_program_source s)
{
    return s == CMRSCL_PROGRAM_DISK ? "disk" : s == CMRSCL_PROGRAM_JIT ? "jit" : "context";
}

/* Expects a fresh context to get its program from `expect`, and y bit-identical to `y0`. */
#define EXPECT_RUN(plan, expect, y0)                                                               \
    do {                                                                                           \
        float *y_ = malloc(sizeof(float) * (size_t)matrix.rows);                                   \
        cmrscl_program_source from_ = CMRSCL_PROGRAM_CONTEXT;                                      \
        CHECK_MSG(run(plan, y_, &from_), "product wrong or failed");                               \
        CHECK_MSG(from_ == (expect), "program from %s, expected %s", source_name(from_),           \
                  source_name(expect));                                                            \
        CHECK_MSG(!memcmp(y_, y0, sizeof(float) * (size_t)matrix.rows),                            \
                  "y differs from the JIT-built program's");                                       \
        free(y_);                                                                                  \
    } while (0)

/* A new empty directory below root, made the cache directory. */
static const char *use_dir(const char *name)
{
    static char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    CHECK(mkdir(dir, 0700) == 0);
    setenv("CMRSCL_CACHE_DIR", dir, 1);
    return dir;
}

/* Entries (*.bin) in dir, the name of the last one, and the other files (temporaries). */
static int entries(const char *dir, char *last, size_t size, int *others)
{
    int n = 0;
    *others = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (e->d_name[0] != '.' && len > 4 && !strcmp(e->d_name + len - 4, ".bin")) {
            ++n;
            if (last)
                snprintf(last, size, "%s/%s", dir, e->d_name);
        } else {
            ++*others;
        }
    }
    if (d)
        closedir(d);
    return n;
}

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        rewind(f);
        data = malloc(n > 0 ? (size_t)n : 1);
        *size = fread(data, 1, (size_t)n, f);
    }
    if (f)
        fclose(f);
    return data;
}

static void spill(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, size, f) == size);
    if (f)
        fclose(f);
}

static uint64_t le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

/* A valid entry with the same key whose binary is junk under a correct crc (the layout
 * of host/runtime/program_cache.c): only the driver can tell. */
static void junk_binary(unsigned char *data, size_t size)
{
    uint64_t klen = le(data + 16, 8), blen = le(data + 24, 8);
    CHECK(32 + klen + blen == size);
    if (32 + klen + blen != size)
        return;
    unsigned char *bin = data + 32 + klen;
    for (uint64_t i = 0; i < blen; ++i)
        bin[i] = (unsigned char)(0x5a ^ i);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), bin, (uInt)blen);
    for (int i = 0; i < 4; ++i)
        data[12 + i] = (unsigned char)(crc >> (8 * i));
}

/* Mesa's rusticl (22.3) aborts the process on a binary it cannot read ("unknown version",
 * program.rs) instead of returning CL_INVALID_BINARY: a junk binary under a right checksum,
 * which only the driver can tell, cannot be tried there. */
static bool driver_aborts_on_junk(void)
{
    cmrscl_context ctx = NULL;
    cmrscl_device_info info = {0};
    bool rusticl = cmrscl_context_create(NULL, &ctx) == CMRSCL_OK &&
                   cmrscl_context_device_info(ctx, &info) == CMRSCL_OK &&
                   strstr(info.platform_name, "rusticl");
    cmrscl_context_free(ctx);
    return rusticl;
}

/* First build, then loads; then each kind of damage is caught and repaired. */
static void test_load_and_damage(void)
{
    const char *dir = use_dir("main");
    float *y_jit = malloc(sizeof(float) * (size_t)matrix.rows);
    cmrscl_program_source from = CMRSCL_PROGRAM_CONTEXT;
    CHECK(run(&plan_a, y_jit, &from));
    CHECK(from == CMRSCL_PROGRAM_JIT);
    char a[4400], b[4400];
    int others;
    CHECK(entries(dir, a, sizeof a, &others) == 1 && others == 0);
    EXPECT_RUN(&plan_a, CMRSCL_PROGRAM_DISK, y_jit);

    size_t size = 0;
    unsigned char *good = slurp(a, &size);
    CHECK(good && size > 64);
    /* Truncated: empty, inside the header, inside the binary. */
    size_t cuts[] = {0, 20, size / 2, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
        spill(a, good, cuts[i]);
        EXPECT_RUN(&plan_a, CMRSCL_PROGRAM_JIT, y_jit);
        EXPECT_RUN(&plan_a, CMRSCL_PROGRAM_DISK, y_jit); /* replaced by a good one */
    }
    /* Flipped bytes in the binary (it ends the file), and in the magic. */
    size_t flips[] = {size - 1, size - 100, 3};
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; ++i) {
        free(good);
        good = slurp(a, &size);
        good[flips[i]] ^= 0x40;
        spill(a, good, size);
        EXPECT_RUN(&plan_a, CMRSCL_PROGRAM_JIT, y_jit);
        EXPECT_RUN(&plan_a, CMRSCL_PROGRAM_DISK, y_jit);
    }
    /* A junk binary with a right checksum: the driver rejects it. */
    if (driver_aborts_on_junk()) {
        printf("program_cache: the junk binary under a right checksum is not tried (not "
               "checked): Mesa's rusticl aborts the process on a binary it cannot read\n");
    } else {
        free(good);
        good = slurp(a, &size);
        junk_binary(good, size);
        spill(a, good, size);
        EXPECT_RUN(&plan_a, CMRSCL_PROGRAM_JIT, y_jit);
        EXPECT_RUN(&plan_a, CMRSCL_PROGRAM_DISK, y_jit);
    }

    /* A foreign entry: another program's file under this name. */
    float *y_b = malloc(sizeof(float) * (size_t)matrix.rows);
    CHECK(run(&plan_b, y_b, &from));
    CHECK(from == CMRSCL_PROGRAM_JIT);
    CHECK(entries(dir, NULL, 0, &others) == 2 && others == 0);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strlen(e->d_name) > 4 && !strstr(a, e->d_name) && e->d_name[0] != '.')
            snprintf(b, sizeof b, "%s/%s", dir, e->d_name);
    if (d)
        closedir(d);
    free(good);
    good = slurp(b, &size);
    spill(a, good, size);
    EXPECT_RUN(&plan_a, CMRSCL_PROGRAM_JIT, y_jit);
    EXPECT_RUN(&plan_a, CMRSCL_PROGRAM_DISK, y_jit);
    EXPECT_RUN(&plan_b, CMRSCL_PROGRAM_DISK, y_b);
    CHECK(entries(dir, NULL, 0, &others) == 2 && others == 0);
    free(good), free(y_b), free(y_jit);
}

/* CMRSCL_PROGRAM_CACHE=off (or 0): no directory made, no entry read or written. */
static void test_off(void)
{
    float *y = malloc(sizeof(float) * (size_t)matrix.rows);
    const char *dir = use_dir("off");
    char missing[4400];
    snprintf(missing, sizeof missing, "%s/not-made", dir);
    const char *modes[] = {"off", "0"};
    for (int i = 0; i < 2; ++i) {
        setenv("CMRSCL_PROGRAM_CACHE", modes[i], 1);
        setenv("CMRSCL_CACHE_DIR", missing, 1);
        cmrscl_program_source from = CMRSCL_PROGRAM_CONTEXT;
        CHECK(run(&plan_a, y, &from) && from == CMRSCL_PROGRAM_JIT);
        struct stat sb;
        CHECK_MSG(stat(missing, &sb) != 0, "CMRSCL_PROGRAM_CACHE=%s made the directory", modes[i]);
        /* A good entry is not read either. */
        setenv("CMRSCL_CACHE_DIR", dir, 1);
        unsetenv("CMRSCL_PROGRAM_CACHE");
        CHECK(run(&plan_a, y, &from)); /* writes it (i == 0) */
        setenv("CMRSCL_PROGRAM_CACHE", modes[i], 1);
        CHECK(run(&plan_a, y, &from) && from == CMRSCL_PROGRAM_JIT);
    }
    unsetenv("CMRSCL_PROGRAM_CACHE");
    free(y);
}

/* An unwritable place: the library carries on without the cache. */
static void test_unwritable(void)
{
    float *y = malloc(sizeof(float) * (size_t)matrix.rows);
    setenv("CMRSCL_CACHE_DIR", "/dev/null/cmrscl", 1);
    cmrscl_program_source from = CMRSCL_PROGRAM_CONTEXT;
    CHECK(run(&plan_a, y, &from) && from == CMRSCL_PROGRAM_JIT);
    free(y);
}

/* After a race to fill `dir`: one entry, no temporary left, and it loads. */
static void check_one_entry(const char *dir)
{
    int others;
    CHECK_MSG(entries(dir, NULL, 0, &others) == 1 && others == 0,
              "%s: expected one entry and nothing else", dir);
    setenv("CMRSCL_CACHE_DIR", dir, 1);
    float *y = malloc(sizeof(float) * (size_t)matrix.rows);
    cmrscl_program_source from = CMRSCL_PROGRAM_CONTEXT;
    CHECK(run(&plan_a, y, &from));
    CHECK_MSG(from == CMRSCL_PROGRAM_DISK, "program from %s after the race", source_name(from));
    free(y);
}

/* Processes building the same program into an empty directory at once. Runs before the
 * parent touches OpenCL, so the children fork from a process without driver threads. Each
 * child makes its context, says so on `ready`, and all build when the parent closes
 * `gate`. Returns the directory. */
static const char *race_processes(void)
{
    static char dir[4200];
    snprintf(dir, sizeof dir, "%s", use_dir("processes"));
    int gate[2], ready[2];
    CHECK(pipe(gate) == 0 && pipe(ready) == 0);
    pid_t pids[WORKERS];
    for (int i = 0; i < WORKERS; ++i) {
        pids[i] = fork();
        if (pids[i] == 0) {
            char c = 'r';
            close(gate[1]);
            close(ready[0]);
            /* PoCL 5's own kernel cache is not safe for processes compiling the same
             * source at once (a child's build failed there): each child gets its own,
             * so what races is cmrscl's cache alone. */
            char pocl_dir[4300];
            snprintf(pocl_dir, sizeof pocl_dir, "%s-pocl-%d", dir, i);
            setenv("POCL_CACHE_DIR", pocl_dir, 1);
            cmrscl_context ctx = NULL;
            cmrscl_context_create(NULL, &ctx);
            (void)!write(ready[1], &c, 1);
            (void)!read(gate[0], &c, 1);
            float *y = malloc(sizeof(float) * (size_t)matrix.rows);
            _exit(product(ctx, &plan_a, y, NULL) ? 0 : 1);
        }
        CHECK(pids[i] > 0);
    }
    close(gate[0]);
    close(ready[1]);
    char c;
    for (int i = 0; i < WORKERS && read(ready[0], &c, 1) == 1; ++i)
        ;
    close(gate[1]);
    close(ready[0]);
    for (int i = 0; i < WORKERS; ++i) {
        int status = 0;
        CHECK(pids[i] > 0 && waitpid(pids[i], &status, 0) == pids[i]);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d failed", i);
    }
    return dir;
}

static pthread_barrier_t start;

static void *race_worker(void *arg)
{
    float *y = malloc(sizeof(float) * (size_t)matrix.rows);
    cmrscl_context ctx = NULL;
    cmrscl_context_create(NULL, &ctx);
    pthread_barrier_wait(&start); /* all contexts made: the builds overlap */
    cmrscl_matrix m = build(ctx, &plan_a, NULL);
    /* The products wait for every build: PoCL 5.0 aborted now and then (in
     * pocl_release_dlhandle_cache, its cache of compiled kernels, which releases an entry
     * found by kernel and local size alone) when one context's kernel ran while another
     * context built the same program; the frees wait for every product, as a release beside
     * another context's run shares that cache the same way. What races here is cmrscl's
     * cache: the builds. */
    pthread_barrier_wait(&start);
    *(bool *)arg = multiply(m, y);
    pthread_barrier_wait(&start);
    cmrscl_matrix_free(m);
    cmrscl_context_free(ctx);
    free(y);
    return NULL;
}

/* Threads, each with its own context, doing the same. */
static void test_race_threads(void)
{
    const char *dir = use_dir("threads");
    char copy[4200];
    snprintf(copy, sizeof copy, "%s", dir);
    pthread_t threads[WORKERS];
    bool ok[WORKERS];
    CHECK(pthread_barrier_init(&start, NULL, WORKERS) == 0);
    for (int i = 0; i < WORKERS; ++i)
        CHECK(pthread_create(&threads[i], NULL, race_worker, &ok[i]) == 0);
    for (int i = 0; i < WORKERS; ++i) {
        pthread_join(threads[i], NULL);
        CHECK_MSG(ok[i], "thread %d failed", i);
    }
    pthread_barrier_destroy(&start);
    check_one_entry(copy);
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char child[4400];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        remove_tree(child);
    }
    if (d)
        closedir(d);
    remove(path);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/cmrscl-program-cache-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("CMRSCL_TUNING_DB", "off", 1); /* the plans above, whatever a user tuned */
    unsetenv("CMRSCL_PROGRAM_CACHE");
    test_matrix_build(9, &matrix); /* 1500 x 1500 random */
    x_host = malloc(sizeof(float) * (size_t)matrix.cols);
    x_ref = malloc(sizeof(double) * (size_t)matrix.cols);
    test_seed(17);
    for (int32_t j = 0; j < matrix.cols; ++j)
        x_ref[j] = x_host[j] = (float)test_uniform(-1, 1);

    const char *processes = race_processes(); /* first: no OpenCL in this process yet */
    check_one_entry(processes);
    test_load_and_damage();
    test_off();
    test_unwritable();
    test_race_threads();

    remove_tree(root);
    free(x_host), free(x_ref);
    cmrscl_csr_free(&matrix);
    return test_finish("program_cache");
}
