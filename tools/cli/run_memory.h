/* run_memory.h - the memory a run will hold, from the matrix's size alone, checked before
 * anything of that size is allocated (run_memory.c). */
#ifndef CMRSCL_TOOLS_RUN_MEMORY_H
#define CMRSCL_TOOLS_RUN_MEMORY_H

#include "cli.h"

typedef struct run_memory {
    cmrscl_precision precision;    /* the widest the run uses */
    bool verify;                   /* the CPU double reference check */
    const cmrscl_device_info *dev; /* NULL: device memory is not checked */
} run_memory;

/* 0 when a run on a matrix of this size fits the device (its vectors; the library checks the
 * matrix's own buffers) and the host; else EXIT_RUN_FAILED, having printed which limit and
 * by how much. `entries`: the CSR's (at most); from_file: the COO of the read comes first. */
int run_memory_check(const run_memory *rm, const char *name, int64_t rows, int64_t cols,
                     int64_t entries, bool from_file);
/* The same for a CSR alone (gen: the matrix built, then written). */
int run_memory_check_csr(const char *name, int64_t rows, int64_t cols, int64_t entries);

#endif
