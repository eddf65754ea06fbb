/* cmd_spmv.c - `cmrscl-run spmv` (run, verify and time one configuration) and
 * `cmrscl-run tune` (sweep HEIGHT and the reductions, report the fastest verified one). */
#include "bench.h"
#include "plans.h"
#include "run_memory.h"

#include <string.h>

static const char *layout_name(cmrscl_layout l)
{
    return l == CMRSCL_LAYOUT_UNPACKED ? "unpacked" : "packed";
}
static const char *order_name(cmrscl_order o)
{
    return o == CMRSCL_ORDER_ROWS ? "rows" : "columns";
}
static bool passed(const bench_result *r) { return !r->verified || r->bound_ratio <= 1.0; }

/* Sets up what both commands need: the context, then the matrix (refused at once when the
 * run cannot hold it; rounded to the precision) and the vectors. */
typedef struct session {
    loaded_matrix m;
    cmrscl_csr t;              /* --transpose: A^T on the host */
    const cmrscl_csr *product; /* the product's matrix: &m.csr or &t */
    bench_vectors v;
    cmrscl_context ctx;
    cmrscl_device_info dev;
} session;

static int session_open(const cli_options *opt, session *s)
{
    memset(s, 0, sizeof *s);
    int rc = cli_open_device(opt, &s->ctx, &s->dev);
    if (rc)
        return rc;
    run_memory check = {opt->precision, opt->verify, &s->dev};
    rc = load_matrix(opt, &check, &s->m);
    if (rc)
        return rc;
    bench_round_values(&s->m.csr, opt->precision);
    if (!(s->product = bench_product_matrix(&s->m.csr, opt, &s->t)))
        return EXIT_RUN_FAILED;
    return bench_vectors_make(s->product, opt, &s->v) ? 0 : EXIT_RUN_FAILED;
}

static void session_close(session *s)
{
    bench_vectors_free(&s->v);
    cmrscl_context_free(s->ctx);
    cmrscl_csr_free(&s->m.csr);
    cmrscl_csr_free(&s->t);
}

static const char *program_source_name(cmrscl_program_source s)
{
    return s == CMRSCL_PROGRAM_JIT    ? "compiled now"
           : s == CMRSCL_PROGRAM_DISK ? "from the on-disk program cache"
                                      : "already built in this context";
}

static void print_text(const session *s, const bench_result *r)
{
    const cmrscl_params *p = &r->params;
    const cmrscl_csr *a = s->product;
    printf("matrix     %s%s: %d x %d, nnz %lld, mu %.2f, row spread %.2f, longest row %d, "
           "empty rows %d, column spread %.3f\n",
           s->m.name, a == &s->t ? " transposed" : "", a->rows, a->cols, (long long)a->nnz,
           p->stats.mu, p->stats.row_cv, p->stats.max_row, p->stats.empty_rows,
           p->stats.col_spread);
    printf("device     %u:%u %s (%s)\n", s->dev.platform_index, s->dev.device_index,
           s->dev.device_name, s->dev.platform_name);
    printf("plan       %s kernel, %s, HEIGHT %d (%s), warp %d, work-group %d, %s, order %s, "
           "%s reduction\n",
           plan_kernel_name(p->kernel), p->precision == CMRSCL_DOUBLE ? "double" : "float",
           p->height, p->height_source, p->warp, p->work_group_size, layout_name(p->layout),
           order_name(p->order), plan_reduce_name(p->reduce));
    printf("           why: %s\n", p->plan_reason);
    printf("           %d-bit entry indices (%lld stored entries; automatic: 64-bit from 2^31 "
           "on)\n",
           p->index_bits, (long long)p->stored_entries);
    if (p->modulo)
        printf("           MODULO %d: %lld stored entries for %lld nonzeros, padding overhead "
               "%.3f (stored / nnz)\n",
               p->modulo, (long long)p->stored_entries, (long long)p->nnz,
               p->nnz ? (double)p->stored_entries / (double)p->nnz : 1.0);
    if (p->long_strips)
        printf("           split: %d long strips in %d tiles of %d entries, summed %s\n",
               p->long_strips, p->tiles, p->tile,
               p->combine == CMRSCL_COMBINE_GROUP  ? "in their work-group (one kernel)"
               : p->combine == CMRSCL_COMBINE_LAST ? "by the work-group of each strip's last tile "
                                                     "(one kernel)"
                                                   : "by a second kernel");
    if (p->renumber == CMRSCL_RENUMBER_HUBS)
        printf("           renumbered: P A P^T, the rows longer than the mean first by length (x "
               "gathered and y scattered by each product)\n");
    if (p->cache_hint == CMRSCL_CACHE_HINT_STREAM)
        printf("           matrix loads with the evict-first (streaming) cache hint\n");
    if (p->column_bits == 16)
        printf("           narrow columns: 16-bit words, 2 bytes an entry (the reason above says "
               "how they code a column)\n");
    if (p->column_bits == 16 && p->column_jumps)
        printf("           %lld jump words, one before each step too long for its word\n",
               (long long)p->column_jumps);
    if (p->column_bits == 0)
        printf("           implied columns: each row's columns one run, its first column alone "
               "stored\n");
    printf("           values %s; bytes per entry a product moves: matrix %.2f, x %.2f, y %.2f "
           "(device matrix %llu bytes)\n",
           plan_values_name(p), p->bytes_per_entry_matrix, p->bytes_per_entry_x,
           p->bytes_per_entry_y, (unsigned long long)p->device_bytes);
    printf("           %s\n", p->build_options);
    if (s->m.file_mb > 0)
        printf("load       %.3f s (%.1f MB/s)\n", s->m.load_seconds,
               s->m.file_mb / s->m.load_seconds);
    else
        printf("generate   %.3f s\n", s->m.load_seconds);
    printf("analyze    %.3f s (row statistics, plan, split)\n", p->analyze_seconds);
    printf("convert    %.3f s (CSR -> CMRS arrays)\n", p->convert_seconds);
    printf("upload     %.3f s (device buffers)\n", p->upload_seconds);
    printf("program    %.3f s (%s)\n", p->build_seconds, program_source_name(p->program_source));
    if (r->transpose_seconds > 0)
        printf("transpose  %.3f s (A^T built: A read back, transposed on the host, created; "
               "the steps above are its create's)\n",
               r->transpose_seconds);
    if (r->verified)
        printf("first      %.4f s (the first product, launch to finish)\n",
               r->first_product_seconds);
    if (s->v.k > 1)
        printf("block      %d vectors, %s, in launches of up to %d (each reads the matrix once): "
               "a product is the whole block (per vector %.4f ms)\n",
               s->v.k, s->v.column_major ? "column-major" : "row-major", p->block_vectors,
               r->timing.median_ms / s->v.k);
    printf("kernel     median %.4f ms, min %.4f ms per product (device, %d runs after %d "
           "warm-up)\n",
           r->timing.median_ms, r->timing.min_ms, r->timing.repetitions, r->timing.warmup);
    printf("loop       %.4f ms per product, %d back to back (host clock)\n", r->timing.loop_ms,
           r->timing.repetitions);
    printf("rate       %.1f GFLOP/s (2 nnz%s / median)\n", r->gflops, s->v.k > 1 ? " k" : "");
    printf("bandwidth  beta-/tau %.1f GB/s, beta+/tau %.1f GB/s (paper eq. 6.1)\n",
           r->beta_minus_gbs, r->beta_plus_gbs);
    if (r->verified)
        printf("error      relative %.3g vs CPU double reference; %.3g x rounding bound: %s\n",
               r->relative_error, r->bound_ratio, passed(r) ? "PASS" : "FAIL");
    else
        printf("error      not verified (--no-verify)\n");
    if (r->verified && r->nonfinite_y)
        printf("           y holds %lld NaN or Inf (the matrix or x holds NaN or Inf: the "
               "CPU's y has them in the same rows)\n",
               (long long)r->nonfinite_y);
}

static void json_params(const cmrscl_params *p)
{
    json_open("params", '{');
    json_string("kernel", plan_kernel_name(p->kernel));
    json_string("precision", p->precision == CMRSCL_DOUBLE ? "double" : "float");
    json_int("height", p->height);
    json_string("height_source", p->height_source);
    json_int("warp", p->warp);
    json_int("work_group_size", p->work_group_size);
    json_string("layout", layout_name(p->layout));
    json_string("order", order_name(p->order));
    json_string("reduce", plan_reduce_name(p->reduce));
    json_string("reason", p->plan_reason);
    json_int("tile", p->tile);
    json_int("tiles", p->tiles);
    json_int("long_strips", p->long_strips);
    json_string("combine", p->combine == CMRSCL_COMBINE_GROUP    ? "group"
                           : p->combine == CMRSCL_COMBINE_KERNEL ? "kernel"
                           : p->combine == CMRSCL_COMBINE_LAST   ? "last"
                                                                 : "none");
    json_int("index_bits", p->index_bits);
    json_int("column_bits", p->column_bits);
    json_int("modulo", p->modulo);
    json_int("stored_entries", p->stored_entries);
    json_bool("cache_hint_stream", p->cache_hint == CMRSCL_CACHE_HINT_STREAM);
    json_string("values", plan_values_name(p));
    json_bool("renumbered", p->renumber == CMRSCL_RENUMBER_HUBS);
    json_int("dict_size", p->dict_size);
    json_int("block_vectors", p->block_vectors);
    json_number("bytes_per_entry_matrix", p->bytes_per_entry_matrix);
    json_number("bytes_per_entry_x", p->bytes_per_entry_x);
    json_number("bytes_per_entry_y", p->bytes_per_entry_y);
    json_int("device_bytes", (long long)p->device_bytes);
    json_string("build_options", p->build_options);
    json_close('}');
}

static void json_result(const bench_result *r)
{
    json_params(&r->params);
    json_open("time", '{');
    json_number("analyze_s", r->params.analyze_seconds);
    json_number("convert_s", r->params.convert_seconds);
    json_number("upload_s", r->params.upload_seconds);
    json_number("jit_s", r->params.build_seconds);
    json_string("program", program_source_name(r->params.program_source));
    json_number("first_product_s", r->first_product_seconds);
    json_number("transpose_s", r->transpose_seconds);
    json_number("kernel_median_ms", r->timing.median_ms);
    json_number("kernel_min_ms", r->timing.min_ms);
    json_number("loop_ms", r->timing.loop_ms);
    json_int("repetitions", r->timing.repetitions);
    json_int("warmup", r->timing.warmup);
    json_close('}');
    json_number("gflops", r->gflops);
    json_number("beta_minus_gbs", r->beta_minus_gbs);
    json_number("beta_plus_gbs", r->beta_plus_gbs);
    json_open("verification", '{');
    json_bool("verified", r->verified);
    json_number("relative_error", r->relative_error);
    json_int("nonfinite_y", r->nonfinite_y);
    json_number("bound_ratio", r->bound_ratio);
    json_bool("passed", passed(r));
    json_close('}');
}

static void json_head(const session *s)
{
    const cmrscl_csr *a = s->product;
    json_open("matrix", '{');
    json_string("name", s->m.name);
    json_bool("transposed", a == &s->t);
    json_int("vectors", s->v.k);
    json_string("vectors_order", s->v.column_major ? "column-major" : "row-major");
    json_int("rows", a->rows);
    json_int("cols", a->cols);
    json_int("nnz", a->nnz);
    cmrscl_matrix_stats st = {0};
    cmrscl_csr_stats(a, &st);
    json_number("mu", st.mu);
    json_number("row_cv", st.row_cv);
    json_int("max_row", st.max_row);
    json_int("empty_rows", st.empty_rows);
    json_number("col_spread", st.col_spread);
    json_number("load_s", s->m.load_seconds);
    if (s->m.file_mb > 0)
        json_number("load_mb_per_s", s->m.file_mb / s->m.load_seconds);
    json_close('}');
    json_open("device", '{');
    char index[32];
    snprintf(index, sizeof index, "%u:%u", s->dev.platform_index, s->dev.device_index);
    json_string("index", index);
    json_string("name", s->dev.device_name);
    json_string("platform", s->dev.platform_name);
    json_close('}');
}

int cmd_spmv(const cli_options *opt)
{
    session s;
    int rc = session_open(opt, &s);
    bench_result r;
    if (!rc)
        rc = bench_run(s.ctx, &s.m.csr, s.product, &s.v, opt, &opt->matrix, &r);
    if (!rc) {
        if (opt->json) {
            json_open(NULL, '{');
            json_head(&s);
            json_result(&r);
            json_close('}');
            json_end();
        } else {
            print_text(&s, &r);
        }
        if (!passed(&r)) {
            fprintf(stderr,
                    "cmrscl-run: verification failed: the result is %.3g x the rounding "
                    "bound away from the CPU double reference\n",
                    r.bound_ratio);
            rc = EXIT_RUN_FAILED;
        }
    }
    session_close(&s);
    return rc;
}

/* One line (or JSON object) per candidate the library's tuner timed: the plan last, whole, as
 * its description's length has no bound the columns could keep to. */
static void tune_report(void *user, const cmrscl_params *p, const cmrscl_timing *t,
                        double bound_ratio, const char *why)
{
    const cli_options *opt = user;
    char plan[128];
    if (p)
        plan_describe(p, plan, sizeof plan);
    if (opt->json) {
        json_open(NULL, '{');
        if (p) {
            json_params(p);
            json_number("kernel_median_ms", t->median_ms);
            json_number("kernel_min_ms", t->min_ms);
            json_number("loop_ms", t->loop_ms);
            json_number("bound_ratio", bound_ratio);
            json_bool("passed", bound_ratio <= 1.0);
        } else {
            json_string("skipped", why);
        }
        json_close('}');
    } else if (p) {
        printf("%10.4f %10.4f  %-5s  %s\n", t->median_ms, t->loop_ms,
               bound_ratio <= 1.0 ? "pass" : "FAIL", plan);
    } else {
        printf("%10s %10s  %-5s  a plan the device cannot build: %.100s\n", "-", "-", "skip", why);
    }
    fflush(stdout);
}

int cmd_tune(const cli_options *opt)
{
    session s;
    int rc = session_open(opt, &s);
    if (rc) {
        session_close(&s);
        return rc;
    }
    if (opt->json) {
        json_open(NULL, '{');
        json_head(&s);
        json_open("results", '[');
    } else {
        printf("tuning %s (%d x %d, nnz %lld) on %s, %s\n", s.m.name, s.m.csr.rows, s.m.csr.cols,
               (long long)s.m.csr.nnz, s.dev.device_name,
               opt->precision == CMRSCL_DOUBLE ? "double" : "float");
        printf("%10s %10s  %-5s  %s\n", "median_ms", "loop_ms", "check", "plan");
    }
    cmrscl_tune_options to = {opt->warmup, opt->repetitions, 0, tune_report, (void *)opt};
    cmrscl_matrix m = NULL;
    cmrscl_status st = cmrscl_matrix_tune(s.ctx, opt->precision, &s.m.csr, &to, &m);
    cmrscl_params best = CMRSCL_PARAMS_INIT;
    if (st == CMRSCL_OK)
        cmrscl_matrix_params(m, &best);
    if (opt->json) {
        json_close(']');
        if (st == CMRSCL_OK) {
            json_open("best", '{');
            json_params(&best);
            json_close('}');
        }
        json_close('}');
        json_end();
    } else if (st == CMRSCL_OK) {
        char plan[128];
        plan_describe(&best, plan, sizeof plan);
        printf("best: %s (recorded for matrices of this class on this device)\n", plan);
    }
    if (st != CMRSCL_OK)
        rc = cli_fail("tuning", st);
    cmrscl_matrix_free(m);
    session_close(&s);
    return rc;
}
