/* cmd_spmv.c - `cmrscl-run spmv` (run, verify and time one configuration) and
 * `cmrscl-run tune` (sweep HEIGHT and the reductions, report the fastest verified one). */
#include "bench.h"

#include <string.h>

static const char *layout_name(cmrscl_layout l)
{
    return l == CMRSCL_LAYOUT_UNPACKED ? "unpacked" : "packed";
}
static const char *order_name(cmrscl_order o)
{
    return o == CMRSCL_ORDER_ROWS ? "rows" : "columns";
}
static const char *reduce_name(cmrscl_reduce r)
{
    return r == CMRSCL_REDUCE_SHUFFLE ? "shuffle" : "local";
}
static bool passed(const bench_result *r) { return !r->verified || r->bound_ratio <= 1.0; }

/* Sets up what both commands need: the matrix (rounded to the precision), the vectors and
 * the context. */
typedef struct session {
    loaded_matrix m;
    bench_vectors v;
    cmrscl_context ctx;
    cmrscl_device_info dev;
} session;

static int session_open(const cli_options *opt, session *s)
{
    memset(s, 0, sizeof *s);
    int rc = load_matrix(opt, &s->m);
    if (rc)
        return rc;
    cmrscl_status st = cmrscl_context_create(opt->device, &s->ctx);
    if (st != CMRSCL_OK)
        return cli_fail("selecting the device", st);
    cmrscl_context_device_info(s->ctx, &s->dev);
    bench_round_values(&s->m.csr, opt->precision);
    return bench_vectors_make(&s->m.csr, opt, &s->v) ? 0 : EXIT_RUN_FAILED;
}

static void session_close(session *s)
{
    bench_vectors_free(&s->v);
    cmrscl_context_free(s->ctx);
    cmrscl_csr_free(&s->m.csr);
}

static void print_text(const session *s, const bench_result *r)
{
    const cmrscl_params *p = &r->params;
    const cmrscl_csr *a = &s->m.csr;
    printf("matrix     %s: %d x %d, nnz %d, mu %.2f\n", s->m.name, a->rows, a->cols, a->nnz,
           a->rows ? (double)a->nnz / a->rows : 0.0);
    printf("device     %u:%u %s (%s)\n", s->dev.platform_index, s->dev.device_index,
           s->dev.device_name, s->dev.platform_name);
    printf("params     %s, HEIGHT %d (%s), warp %d, work-group %d, %s, order %s, %s reduction\n",
           p->precision == CMRSCL_DOUBLE ? "double" : "float", p->height, p->height_source, p->warp,
           p->work_group_size, layout_name(p->layout), order_name(p->order),
           reduce_name(p->reduce));
    printf("           %s\n", p->build_options);
    if (s->m.file_mb > 0)
        printf("load       %.3f s (%.1f MB/s)\n", s->m.load_seconds,
               s->m.file_mb / s->m.load_seconds);
    else
        printf("generate   %.3f s\n", s->m.load_seconds);
    printf("convert    %.3f s (CSR -> CMRS on the host)\n", p->convert_seconds);
    printf("jit        %.3f s\n", p->build_seconds);
    printf("kernel     median %.4f ms, min %.4f ms (%d runs after %d warm-up)\n", r->median_ms,
           r->min_ms, r->repetitions, r->warmup);
    printf("rate       %.1f GFLOP/s (2 nnz / median)\n", r->gflops);
    printf("bandwidth  beta-/tau %.1f GB/s, beta+/tau %.1f GB/s (paper eq. 6.1)\n",
           r->beta_minus_gbs, r->beta_plus_gbs);
    if (r->verified)
        printf("error      relative %.3g vs CPU double reference; %.3g x rounding bound: %s\n",
               r->relative_error, r->bound_ratio, passed(r) ? "PASS" : "FAIL");
    else
        printf("error      not verified (--no-verify)\n");
}

static void json_params(const cmrscl_params *p)
{
    json_open("params", '{');
    json_string("precision", p->precision == CMRSCL_DOUBLE ? "double" : "float");
    json_int("height", p->height);
    json_string("height_source", p->height_source);
    json_int("warp", p->warp);
    json_int("work_group_size", p->work_group_size);
    json_string("layout", layout_name(p->layout));
    json_string("order", order_name(p->order));
    json_string("reduce", reduce_name(p->reduce));
    json_string("build_options", p->build_options);
    json_close('}');
}

static void json_result(const bench_result *r)
{
    json_params(&r->params);
    json_open("time", '{');
    json_number("convert_s", r->params.convert_seconds);
    json_number("jit_s", r->params.build_seconds);
    json_number("kernel_median_ms", r->median_ms);
    json_number("kernel_min_ms", r->min_ms);
    json_int("repetitions", r->repetitions);
    json_int("warmup", r->warmup);
    json_close('}');
    json_number("gflops", r->gflops);
    json_number("beta_minus_gbs", r->beta_minus_gbs);
    json_number("beta_plus_gbs", r->beta_plus_gbs);
    json_open("verification", '{');
    json_bool("verified", r->verified);
    json_number("relative_error", r->relative_error);
    json_number("bound_ratio", r->bound_ratio);
    json_bool("passed", passed(r));
    json_close('}');
}

static void json_head(const session *s)
{
    const cmrscl_csr *a = &s->m.csr;
    json_open("matrix", '{');
    json_string("name", s->m.name);
    json_int("rows", a->rows);
    json_int("cols", a->cols);
    json_int("nnz", a->nnz);
    json_number("mu", a->rows ? (double)a->nnz / a->rows : 0.0);
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
        rc = bench_run(s.ctx, &s.m.csr, &s.v, opt, &opt->matrix, &r);
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

int cmd_tune(const cli_options *opt)
{
    session s;
    int rc = session_open(opt, &s);
    if (rc) {
        session_close(&s);
        return rc;
    }
    bench_result best = {0};
    if (opt->json) {
        json_open(NULL, '{');
        json_head(&s);
        json_open("results", '[');
    } else {
        printf("tuning %s (%d x %d, nnz %d) on %s, %s\n", s.m.name, s.m.csr.rows, s.m.csr.cols,
               s.m.csr.nnz, s.dev.device_name,
               opt->precision == CMRSCL_DOUBLE ? "double" : "float");
        printf("height  reduce   median_ms  beta+/tau GB/s  check\n");
    }
    for (int reduce = CMRSCL_REDUCE_LOCAL; reduce <= CMRSCL_REDUCE_SHUFFLE && !rc; ++reduce) {
        if (reduce == CMRSCL_REDUCE_SHUFFLE && !s.dev.warp_shuffle)
            continue;
        for (int h = 1; h <= CMRSCL_MAX_PACKED_HEIGHT && !rc; ++h) {
            cmrscl_options o = opt->matrix;
            o.height = h;
            o.reduce = (cmrscl_reduce)reduce;
            bench_result r;
            rc = bench_run(s.ctx, &s.m.csr, &s.v, opt, &o, &r);
            if (rc)
                break;
            if (opt->json) {
                json_open(NULL, '{');
                json_result(&r);
                json_close('}');
            } else {
                printf("%6d  %-7s  %9.4f  %14.1f  %s\n", h, reduce_name(r.params.reduce),
                       r.median_ms, r.beta_plus_gbs, passed(&r) ? "pass" : "FAIL");
            }
            if (!passed(&r))
                rc = EXIT_RUN_FAILED;
            else if (!best.repetitions || r.median_ms < best.median_ms)
                best = r;
        }
    }
    if (opt->json) {
        json_close(']');
        if (best.repetitions) {
            json_open("best", '{');
            json_result(&best);
            json_close('}');
        }
        json_close('}');
        json_end();
    } else if (best.repetitions) {
        printf("best: HEIGHT %d, %s reduction, %.4f ms (%.1f GB/s beta+/tau)\n", best.params.height,
               reduce_name(best.params.reduce), best.median_ms, best.beta_plus_gbs);
    }
    session_close(&s);
    return rc;
}
