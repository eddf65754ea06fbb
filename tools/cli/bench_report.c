/* bench_report.c - see bench_report.h. */
#include "bench_report.h"
#include "plans.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *precision_name(cmrscl_precision p)
{
    return p == CMRSCL_DOUBLE ? "double" : "float";
}

/* ---- the peer's CSV ---- */

/* Splits a CSV line in place (no quoting: the writers never need it). */
static int split_csv(char *line, char **fields, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *f = line; n < max;) {
        fields[n++] = f;
        char *comma = strchr(f, ',');
        if (!comma)
            break;
        *comma = '\0';
        f = comma + 1;
    }
    return n;
}

static int column(char **names, int n, const char *name)
{
    for (int i = 0; i < n; ++i)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

static peer_entry *peer_find(peer_table *t, const char *matrix, cmrscl_precision p)
{
    for (int i = 0; i < t->n; ++i)
        if (t->e[i].precision == p && !strcmp(t->e[i].matrix, matrix))
            return &t->e[i];
    return NULL;
}

int peer_table_read(const char *path, peer_table *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "peer");
    FILE *f = fopen(path, "r");
    char header[1024], line[1024], *names[32], *fields[32];
    if (!f || !fgets(header, sizeof header, f)) {
        fprintf(stderr, "cmrscl-run: cannot read the peer's CSV %s\n", path);
        if (f)
            fclose(f);
        return EXIT_RUN_FAILED;
    }
    int nn = split_csv(header, names, 32);
    int c_peer = column(names, nn, "peer"), c_matrix = column(names, nn, "matrix"),
        c_prec = column(names, nn, "precision"), c_alg = column(names, nn, "alg"),
        c_med = column(names, nn, "median_ms"), c_loop = column(names, nn, "loop_ms");
    int rc = 0;
    if (c_matrix < 0 || c_prec < 0 || c_med < 0 || c_loop < 0) {
        fprintf(stderr, "cmrscl-run: %s: expected columns matrix, precision, median_ms, loop_ms\n",
                path);
        rc = EXIT_RUN_FAILED;
    }
    while (!rc && fgets(line, sizeof line, f)) {
        int n = split_csv(line, fields, 32);
        if (n <= c_matrix || n <= c_prec || n <= c_med || n <= c_loop)
            continue;
        cmrscl_precision p = !strcmp(fields[c_prec], "double") ? CMRSCL_DOUBLE : CMRSCL_FLOAT;
        double med = atof(fields[c_med]), loop = atof(fields[c_loop]);
        if (!(med > 0) || !(loop > 0))
            continue; /* a failed or unchecked run */
        if (c_peer >= 0 && c_peer < n)
            snprintf(out->name, sizeof out->name, "%s", fields[c_peer]);
        peer_entry *e = peer_find(out, fields[c_matrix], p);
        if (!e) {
            peer_entry *grown = realloc(out->e, sizeof *grown * (size_t)(out->n + 1));
            if (!grown) {
                rc = EXIT_RUN_FAILED;
                break;
            }
            out->e = grown;
            e = &out->e[out->n++];
            memset(e, 0, sizeof *e);
            snprintf(e->matrix, sizeof e->matrix, "%s", fields[c_matrix]);
            e->precision = p;
            e->median_ms = e->loop_ms = e->csr_median_ms = e->csr_loop_ms = INFINITY;
        }
        const char *alg = c_alg >= 0 && c_alg < n ? fields[c_alg] : "";
        if (med < e->median_ms) {
            e->median_ms = med;
            snprintf(e->alg, sizeof e->alg, "%s", alg);
        }
        if (loop < e->loop_ms)
            e->loop_ms = loop;
        if (strstr(alg, "SELL")) /* cmrscl-peer's one format beside CSR (or explicit:SELL) */
            continue;
        e->csr_median_ms = med < e->csr_median_ms ? med : e->csr_median_ms;
        e->csr_loop_ms = loop < e->csr_loop_ms ? loop : e->csr_loop_ms;
    }
    fclose(f);
    for (int i = 0; i < out->n; ++i) /* no CSR row: nothing to compare with */
        if (isinf(out->e[i].csr_median_ms))
            out->e[i].csr_median_ms = out->e[i].csr_loop_ms = 0.0;
    return rc;
}

void peer_table_free(peer_table *t)
{
    free(t->e);
    memset(t, 0, sizeof *t);
}

/* ---- rows ---- */

/* The paper's model (eq. 5.1-5.2): with lambda-byte memory segments and b-byte values, a
 * strip of h rows of mu entries wastes f(h, mu) = 1 + (lambda - b) / (h mu b) of each byte
 * moved, so CMRS should beat CSR-vector by a = f(1, mu) / f(h, mu). lambda = 128. */
static double model_a(int h, double mu, double b)
{
    const double lambda = 128.0;
    if (mu <= 0)
        return 1.0;
    double f1 = 1.0 + (lambda - b) / (mu * b), fh = 1.0 + (lambda - b) / (h * mu * b);
    return f1 / fh;
}

void bench_row_fill(bench_row *row, const loaded_matrix *m, const cli_options *o,
                    cmrscl_precision precision, const char *plan_name, double csrvec_ms,
                    double bandwidth_gbs, const bench_roof *roof, const peer_table *peer)
{
    char product[24] = "";
    if (o->transpose)
        snprintf(product, sizeof product, "^T");
    else if (o->block)
        snprintf(product, sizeof product, "[k=%d]", o->block);
    snprintf(row->matrix, sizeof row->matrix, "%.*s%s",
             (int)(sizeof row->matrix - 1 - strlen(product)), m->name, product);
    row->rows = row->r.params.rows, row->cols = row->r.params.cols, row->nnz = row->r.params.nnz;
    row->stats = row->r.params.stats;
    row->precision = precision;
    snprintf(row->plan_name, sizeof row->plan_name, "%s", plan_name);
    plan_describe(&row->r.params, row->plan, sizeof row->plan);
    row->csrvec_ms = csrvec_ms;
    row->model_a =
        model_a(row->r.params.height, row->stats.mu, (double)(precision == CMRSCL_DOUBLE ? 8 : 4));
    row->eta_plus = bandwidth_gbs > 0 ? row->r.beta_plus_gbs / bandwidth_gbs : 0.0;
    row->roof = *roof;
    row->peer = NULL;
    for (int i = 0; peer && i < peer->n; ++i)
        if (peer->e[i].precision == precision && !strcmp(peer->e[i].matrix, row->matrix))
            row->peer = &peer->e[i];
}

bool bench_rows_add(bench_rows *rows, const bench_row *row)
{
    if (rows->n == rows->cap) {
        int cap = rows->cap ? 2 * rows->cap : 64;
        bench_row *grown = realloc(rows->row, sizeof *grown * (size_t)cap);
        if (!grown)
            return false;
        rows->row = grown, rows->cap = cap;
    }
    rows->row[rows->n++] = *row;
    return true;
}

void bench_rows_free(bench_rows *rows)
{
    free(rows->row);
    memset(rows, 0, sizeof *rows);
}

static double ratio(double a, double b) { return a > 0 && b > 0 ? a / b : 0.0; }

/* ---- the table ---- */

/* The plan comes last, whole: its description has no bound on its length, and a column cut
 * to a width lost what told two plans apart. */
void bench_table_header(FILE *out, int name_width)
{
    fprintf(out, "%-*s %-6s %11s %6s %9s %9s %9s %5s %5s %12s %13s  %s\n", name_width, "matrix",
            "prec", "nnz", "mu", "med_ms", "loop_ms", "b+/t GB/s", "eta+", "roof", "x csrv (a)",
            "x peer (loop)", "plan");
}

void bench_row_print(const bench_row *row, FILE *out, bool json, int name_width)
{
    const bench_result *r = &row->r;
    if (json) {
        json_open(NULL, '{');
        json_string("matrix", row->matrix);
        json_int("rows", row->rows);
        json_int("cols", row->cols);
        json_int("nnz", row->nnz);
        json_number("mu", row->stats.mu);
        json_number("row_cv", row->stats.row_cv);
        json_int("max_row", row->stats.max_row);
        json_number("col_spread", row->stats.col_spread);
        json_string("precision", precision_name(row->precision));
        json_string("plan_name", row->plan_name);
        json_string("plan", row->plan);
        json_string("reason", r->params.plan_reason);
        json_number("median_ms", r->timing.median_ms);
        json_number("min_ms", r->timing.min_ms);
        json_number("loop_ms", r->timing.loop_ms);
        json_number("gflops", r->gflops);
        json_number("beta_minus_gbs", r->beta_minus_gbs);
        json_number("beta_plus_gbs", r->beta_plus_gbs);
        json_number("eta_plus", row->eta_plus);
        json_number("csrvec_ms", row->csrvec_ms);
        json_number("speedup_csrvec", ratio(row->csrvec_ms, r->timing.median_ms));
        json_number("model_a", row->model_a);
        json_number("bound_ratio", r->verified ? r->bound_ratio : NAN);
        json_number("x_sectors", row->roof.x_sectors);
        json_number("gather_gloads", row->roof.gather_gloads);
        json_number("dram_roof_ms", row->roof.dram_ms);
        json_number("l2_roof_ms", row->roof.l2_ms);
        json_number("roof_ms", row->roof.roof_ms);
        json_number("of_roof", ratio(row->roof.roof_ms, r->timing.median_ms));
        if (row->peer) {
            json_string("peer_alg", row->peer->alg);
            json_number("peer_median_ms", row->peer->median_ms);
            json_number("peer_loop_ms", row->peer->loop_ms);
            json_number("speedup_peer", ratio(row->peer->median_ms, r->timing.median_ms));
            json_number("speedup_peer_loop", ratio(row->peer->loop_ms, r->timing.loop_ms));
            json_number("peer_of_roof", ratio(row->roof.roof_ms, row->peer->median_ms));
            json_number("peer_csr_median_ms", row->peer->csr_median_ms);
            json_number("speedup_peer_csr", ratio(row->peer->csr_median_ms, r->timing.median_ms));
        }
        json_close('}');
        fflush(stdout);
        return;
    }
    char csrv[32] = "-", peer[32] = "-";
    if (row->csrvec_ms > 0)
        snprintf(csrv, sizeof csrv, "%.2f (%.1f)", ratio(row->csrvec_ms, r->timing.median_ms),
                 row->model_a);
    if (row->peer)
        snprintf(peer, sizeof peer, "%.2f (%.2f)", ratio(row->peer->median_ms, r->timing.median_ms),
                 ratio(row->peer->loop_ms, r->timing.loop_ms));
    /* GB/s with a decimal: a CPU's are a few, a GPU's thousands */
    fprintf(out, "%-*s %-6s %11lld %6.1f %9.4f %9.4f %9.1f %5.2f %5.2f %12s %13s  %s%s\n",
            name_width, row->matrix, precision_name(row->precision), (long long)row->nnz,
            row->stats.mu, r->timing.median_ms, r->timing.loop_ms, r->beta_plus_gbs, row->eta_plus,
            ratio(row->roof.roof_ms, r->timing.median_ms), csrv, peer, row->plan,
            r->verified && !(r->bound_ratio <= 1.0) ? "  WRONG RESULT" : "");
    fflush(out);
}

/* ---- CSV ---- */

void bench_csv_header(FILE *out)
{
    fputs("matrix,rows,cols,nnz,mu,row_cv,max_row,empty_rows,col_spread,precision,plan_name,plan,"
          "kernel,"
          "height,warp,reduce,tile,long_strips,cache_hint,values,matrix_bytes_per_nnz,median_ms,"
          "min_ms,loop_ms,gflops,"
          "beta_minus_gbs,beta_plus_gbs,eta_plus,csrvec_ms,speedup_csrvec,model_a,bound_ratio,"
          "x_sectors,gather_gloads,dram_roof_ms,l2_roof_ms,roof_ms,of_roof,"
          "peer_alg,peer_median_ms,peer_loop_ms,speedup_peer,speedup_peer_loop,peer_of_roof,"
          "peer_csr_median_ms,speedup_peer_csr\n",
          out);
    fflush(out);
}

/* Text fields never hold commas in practice; replace any, so columns stay put. */
static void csv_text(FILE *out, const char *s)
{
    for (; *s; ++s)
        fputc(*s == ',' || *s == '\n' ? ';' : *s, out);
    fputc(',', out);
}

void bench_row_csv(const bench_row *row, FILE *out)
{
    const bench_result *r = &row->r;
    const cmrscl_params *p = &r->params;
    csv_text(out, row->matrix);
    fprintf(out, "%d,%d,%lld,%.6g,%.6g,%d,%d,%.4g,", row->rows, row->cols, (long long)row->nnz,
            row->stats.mu, row->stats.row_cv, row->stats.max_row, row->stats.empty_rows,
            row->stats.col_spread);
    csv_text(out, precision_name(row->precision));
    csv_text(out, row->plan_name);
    csv_text(out, row->plan);
    fprintf(out, "%s,%d,%d,%s,%d,%d,%s,%s,%.4g,", plan_kernel_name(p->kernel), p->height, p->warp,
            plan_reduce_name(p->reduce), p->tile, p->long_strips,
            p->cache_hint == CMRSCL_CACHE_HINT_STREAM ? "stream" : "off", plan_values_name(p),
            p->bytes_per_entry_matrix);
    fprintf(out, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,", r->timing.median_ms,
            r->timing.min_ms, r->timing.loop_ms, r->gflops, r->beta_minus_gbs, r->beta_plus_gbs,
            row->eta_plus, row->csrvec_ms, ratio(row->csrvec_ms, r->timing.median_ms), row->model_a,
            r->verified ? r->bound_ratio : NAN);
    const bench_roof *f = &row->roof;
    fprintf(out, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,", f->x_sectors, f->gather_gloads, f->dram_ms,
            f->l2_ms, f->roof_ms, ratio(f->roof_ms, r->timing.median_ms));
    if (row->peer)
        fprintf(
            out, "%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", row->peer->alg, row->peer->median_ms,
            row->peer->loop_ms, ratio(row->peer->median_ms, r->timing.median_ms),
            ratio(row->peer->loop_ms, r->timing.loop_ms), ratio(f->roof_ms, row->peer->median_ms),
            row->peer->csr_median_ms, ratio(row->peer->csr_median_ms, r->timing.median_ms));
    else
        fputs(",,,,,,,\n", out);
    fflush(out);
}

/* ---- JSON ---- */

void bench_json_device(const cmrscl_device_info *dev, double bandwidth_gbs)
{
    json_open("device", '{');
    json_string("name", dev->device_name);
    json_string("platform", dev->platform_name);
    json_string("driver", dev->driver_version);
    json_close('}');
    json_number("bandwidth_gbs", bandwidth_gbs);
}

int bench_json_write(const char *path, const cmrscl_device_info *dev, double bandwidth_gbs,
                     const bench_rows *rows)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cmrscl-run: cannot write %s\n", path);
        return EXIT_RUN_FAILED;
    }
    json_to(f);
    json_open(NULL, '{');
    bench_json_device(dev, bandwidth_gbs);
    json_open("results", '[');
    for (int i = 0; i < rows->n; ++i)
        bench_row_print(&rows->row[i], f, true, 0);
    json_close(']');
    json_close('}');
    json_end();
    json_to(NULL);
    return fclose(f) == 0 ? 0 : EXIT_RUN_FAILED;
}

/* ---- summary ---- */

typedef struct mean {
    double log_sum;
    int n;
} mean;
static void mean_add(mean *m, double v)
{
    if (v > 0)
        m->log_sum += log(v), ++m->n;
}
static double mean_get(const mean *m) { return m->n ? exp(m->log_sum / m->n) : 0.0; }

void bench_summary(const bench_rows *rows, FILE *out)
{
    bool *done = calloc((size_t)rows->n + 1, sizeof *done);
    if (!done)
        return;
    bool header = false;
    for (int i = 0; i < rows->n; ++i) {
        if (done[i])
            continue;
        const bench_row *a = &rows->row[i];
        mean csrv = {0, 0}, peer = {0, 0}, loop = {0, 0}, csr = {0, 0};
        bool formats = false; /* the peer's best is another format somewhere */
        int below = 0, n = 0;
        double worst = INFINITY;
        const char *worst_matrix = "";
        for (int j = i; j < rows->n; ++j) {
            const bench_row *b = &rows->row[j];
            if (done[j] || b->precision != a->precision || strcmp(b->plan_name, a->plan_name))
                continue;
            done[j] = true;
            ++n;
            mean_add(&csrv, ratio(b->csrvec_ms, b->r.timing.median_ms));
            if (!b->peer)
                continue;
            double s = ratio(b->peer->median_ms, b->r.timing.median_ms);
            mean_add(&peer, s);
            mean_add(&loop, ratio(b->peer->loop_ms, b->r.timing.loop_ms));
            mean_add(&csr, ratio(b->peer->csr_median_ms, b->r.timing.median_ms));
            formats |= b->peer->csr_median_ms != b->peer->median_ms;
            below += s < 0.9;
            if (s < worst)
                worst = s, worst_matrix = b->matrix;
        }
        if (!header)
            fputs("\nsummary (geometric means)\n", out), header = true;
        fprintf(out, "  %-12s %-6s %3d matrices", a->plan_name, precision_name(a->precision), n);
        if (csrv.n)
            fprintf(out, ": x csr-vector %.2f", mean_get(&csrv));
        if (peer.n)
            fprintf(
                out, "%s x peer %.2f (device time), %.2f (loop); lowest %.2f (%s); %d below 0.9",
                csrv.n ? ";" : ":", mean_get(&peer), mean_get(&loop), worst, worst_matrix, below);
        if (formats && csr.n)
            fprintf(out, "; x its CSR alone %.2f (device time)", mean_get(&csr));
        fputc('\n', out);
    }
    free(done);
}
