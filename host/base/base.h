/* base.h - what every stage of the library uses: errors and tracing (status.c), host threads
 * for the set-up steps (parallel.c) and the per-user cache folder (cache_dir.c). The stages
 * are folders of src/, each with a header of what it offers the next:
 *   io/ -> format/, plan/ -> runtime/ -> exec/   (docs/dev/ARCHITECTURE.md)
 * Nothing here is public API; the library's files and the tests include it. */
#ifndef CMRSCL_BASE_H
#define CMRSCL_BASE_H

#include "cmrscl.h"

#include <locale.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CMRSCL_HIDDEN __attribute__((visibility("hidden")))

/* ---- status.c: errors, tracing, small utilities ---- */

/* Records a formatted detail message for cmrscl_last_error() and returns `status`. */
CMRSCL_HIDDEN cmrscl_status cmrscl_fail(cmrscl_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Like cmrscl_fail for a failed OpenCL call: maps allocation failures to the
 * out-of-memory codes and keeps the OpenCL code and its name in the message. */
CMRSCL_HIDDEN cmrscl_status cmrscl_fail_cl(cl_int err, const char *what);
/* Appends text (e.g. a build log) to the current detail message. */
CMRSCL_HIDDEN void cmrscl_fail_append(const char *text);
CMRSCL_HIDDEN const char *cmrscl_cl_error_name(cl_int err);
/* Writes one line to stderr when CMRSCL_TRACE is set; the library's only output. */
CMRSCL_HIDDEN void cmrscl_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether CMRSCL_TRACE is set (for traces that cost something to gather). */
CMRSCL_HIDDEN bool cmrscl_tracing(void);
CMRSCL_HIDDEN double cmrscl_seconds(void);
/* malloc of n*size bytes with an overflow check; never returns NULL for n == 0. */
CMRSCL_HIDDEN void *cmrscl_alloc(size_t n, size_t size);
CMRSCL_HIDDEN size_t cmrscl_precision_size(cmrscl_precision p);
/* The least power of two >= n (1 for n <= 1). */
CMRSCL_HIDDEN int cmrs_pow2_at_least(int n);
/* Matrix Market numbers use '.' whatever LC_NUMERIC the application chose: readers and
 * writers switch the calling thread to the C numeric locale in between (uselocale). */
typedef struct c_numeric_scope {
    locale_t c, previous;
} c_numeric_scope;
CMRSCL_HIDDEN void cmrs_c_numeric_enter(c_numeric_scope *scope);
CMRSCL_HIDDEN void cmrs_c_numeric_leave(c_numeric_scope *scope);
CMRSCL_HIDDEN const char *cmrscl_precision_name(cmrscl_precision p);

/* ---- parallel.c: host threads for the set-up steps ---- */

/* Threads for the host's set-up work: $CMRSCL_THREADS, else the CPUs this process may run
 * on (at most 256). */
CMRSCL_HIDDEN int cmrs_parallel_threads(void);
/* At most *limit threads (read as each piece of parallel work starts; 0 or NULL: no limit) for
 * the work the calling thread starts from now on: for a thread that runs beside another's
 * parallel work, whose shares an oversubscribed core would hold back, and whose owner may
 * raise the limit once that work is done. Results never depend on the count. Returns the
 * limit it replaces. */
CMRSCL_HIDDEN const atomic_int *cmrs_parallel_limit(const atomic_int *limit);
/* Runs fn(ctx, t, threads) for t = 0..threads-1 on as many threads (t = 0 on the caller's)
 * and returns when all are done. A thread that cannot be created runs its share on the
 * caller's thread: the result never depends on it. */
typedef void (*parallel_fn)(void *ctx, int thread, int threads);
CMRSCL_HIDDEN void cmrs_parallel_run(int threads, parallel_fn fn, void *ctx);
/* Runs fn(ctx, piece) for piece = 0..pieces-1 on `threads` threads, each taking the next
 * unclaimed piece when it finishes one, so a thread on a slower CPU (a virtual CPU sharing
 * its core, say) takes fewer. Which thread runs a piece varies; what a piece does must not
 * depend on it. */
typedef void (*parallel_piece_fn)(void *ctx, int64_t piece);
CMRSCL_HIDDEN void cmrs_parallel_pieces(int threads, int64_t pieces, parallel_piece_fn fn,
                                        void *ctx);
/* Like cmrscl_alloc, for the set-up's big arrays: from 8 MB on, on 2 MB boundaries with
 * huge pages advised, since faulting in fresh 4 KB pages costs as much as filling them
 * (and more in virtual machines). free() releases it. */
CMRSCL_HIDDEN void *cmrs_parallel_alloc(size_t n, size_t size);
/* memcpy on the host's threads, each a contiguous share: fresh pages are faulted in and
 * filled at the rate of all the cores, not one's. */
CMRSCL_HIDDEN void cmrs_parallel_copy(void *dst, const void *src, size_t bytes);
/* Thread `thread`'s contiguous share [begin, end) of n items. */
CMRSCL_HIDDEN void cmrs_parallel_range(int64_t n, int thread, int threads, int64_t *begin,
                                       int64_t *end);

/* ---- cache_dir.c: the per-user cache directory ---- */

/* $XDG_CACHE_HOME/cmrscl, else ~/.cache/cmrscl; false when neither is set. */
CMRSCL_HIDDEN bool cmrs_cache_dir(char *path, size_t size);
/* mkdir -p (mode 0700) of the directories above `file` (not its last part); 0 or -1. */
CMRSCL_HIDDEN int cmrs_make_parent_dirs(const char *file);

#endif /* CMRSCL_BASE_H */
