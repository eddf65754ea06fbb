/* test_files.h - scratch files for the Matrix Market tests (see test_files.c). */
#ifndef CMRSCL_TEST_FILES_H
#define CMRSCL_TEST_FILES_H

#include "cmrscl.h"

#include <stdbool.h>
#include <stddef.h>

extern char tmp_dir[64];
/* Creates the private scratch directory; false (with a message) if it cannot. */
bool tmp_init(void);
/* A path in the scratch directory, remembered for tmp_cleanup (each call its own). */
const char *tmp_path(const char *name);
/* Removes every file handed out by tmp_path, then the directory. */
void tmp_cleanup(void);
bool write_file(const char *path, const void *data, size_t size);
/* The whole file in a malloc'ed buffer (NUL-terminated), or NULL. */
char *slurp(const char *path, size_t *size);
bool gzip_file(const char *path, const void *data, size_t size);
/* Identical sizes and arrays (values compared bit for bit). */
bool same_csr(const cmrscl_csr *a, const cmrscl_csr *b);

#endif
