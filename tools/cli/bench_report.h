/* bench_report.h - the rows of `cmrscl-run bench` and where they go: the derived measures
 * (the paper's model a(h, mu), eta, speedups), the terminal table, CSV, JSON, the summary
 * of geometric means, and the peer's CSV they are compared with. */
#ifndef CMRSCL_BENCH_REPORT_H
#define CMRSCL_BENCH_REPORT_H

#include "bench.h"
#include "bench_roof.h"

/* A peer's results (tools/peer/cmrscl_peer.c writes them), best per matrix and precision. */
typedef struct peer_entry {
    char matrix[256];
    cmrscl_precision precision;
    char alg[32];     /* the algorithm with the best median */
    double median_ms; /* best median device time over the algorithms (and formats) */
    double loop_ms;   /* best back-to-back time over the algorithms */
    double csr_median_ms, csr_loop_ms; /* the same over its CSR algorithms alone (0: none) */
} peer_entry;
typedef struct peer_table {
    peer_entry *e;
    int n;
    char name[32]; /* e.g. "cuSPARSE" */
} peer_table;
int peer_table_read(const char *path, peer_table *out);
void peer_table_free(peer_table *t);

typedef struct bench_row {
    char matrix[256];
    int32_t rows, cols;
    int64_t nnz;
    cmrscl_matrix_stats stats;
    cmrscl_precision precision;
    char plan_name[64]; /* as asked: auto, csr-vector, segment:64, ... */
    char plan[160];     /* as built (plan_describe) */
    bench_result r;
    double csrvec_ms;       /* 0: no baseline */
    double model_a;         /* the paper's a(h, mu), eq. (5.2) */
    double eta_plus;        /* beta+/tau / B */
    bench_roof roof;        /* the device's lower bound on this product's time */
    const peer_entry *peer; /* NULL: none */
} bench_row;
typedef struct bench_rows {
    bench_row *row;
    int n, cap;
} bench_rows;

/* The row of run row->r on matrix m, named m's name, with "^T" for --transpose and "[k=K]"
 * for a block of K vectors (the names the peer gives those runs). */
void bench_row_fill(bench_row *row, const loaded_matrix *m, const cli_options *o,
                    cmrscl_precision precision, const char *plan_name, double csrvec_ms,
                    double bandwidth_gbs, const bench_roof *roof, const peer_table *peer);
bool bench_rows_add(bench_rows *rows, const bench_row *row);
void bench_rows_free(bench_rows *rows);

/* The table's matrix column is name_width wide (its longest name, known before the runs). */
void bench_table_header(FILE *out, int name_width);
/* A table line, or (json) one object of the "results" array on stdout. */
void bench_row_print(const bench_row *row, FILE *out, bool json, int name_width);
void bench_csv_header(FILE *out);
void bench_row_csv(const bench_row *row, FILE *out);
void bench_json_device(const cmrscl_device_info *dev, double bandwidth_gbs);
int bench_json_write(const char *path, const cmrscl_device_info *dev, double bandwidth_gbs,
                     const bench_rows *rows);
/* Geometric means per plan and precision: over csr-vector, and over the peer (and its CSR
 * alone when the peer's CSV has other formats). */
void bench_summary(const bench_rows *rows, FILE *out);

#endif
