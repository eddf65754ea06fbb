/* suite.h - suite files, shared by `cmrscl-run bench --suite` and cmrscl-peer: one matrix per
 * line, either a Matrix Market path (.mtx or .mtx.gz, relative to the suite file unless
 * absolute) or a generator spec; '#' starts a comment, blank lines are skipped. The files of
 * a "kron:A.mtx:B.mtx" spec are relative to the suite file too. */
#ifndef CMRSCL_TOOLS_SUITE_H
#define CMRSCL_TOOLS_SUITE_H

#include <stdbool.h>
#include <stddef.h>

/* Receives each entry (a resolved path, or a spec); false stops the reading. */
typedef bool (*suite_entry_fn)(void *user, const char *entry, bool is_file);

/* 0 when every line was read, -1 when the file cannot be opened (errno says why), 1 when
 * `add` stopped the reading. */
int suite_read(const char *path, suite_entry_fn add, void *user);

/* The name a matrix goes by in tables and CSV files, the same in both tools: a file's base
 * name, "kron:" and the base names of its factors, or the spec itself. */
void suite_matrix_name(const char *input, bool is_file, char *name, size_t size);

#endif
