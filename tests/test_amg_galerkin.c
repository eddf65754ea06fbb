/* test_amg_galerkin.c - AMG's Galerkin operator and estimate of rho(D^-1 A) made on the device
 * (host/precond/amg_galerkin.c, cl/spgemm.cl; amg_rho_device.c, cl/amg_rho.cl), on the device
 * chosen by CMRSCL_DEVICE:
 *   - every level's estimate of rho (Lanczos; the power method on a nonsymmetric matrix), and
 *     one of rows in several pieces: the host's, bit for bit;
 *   - R A P of every level of hierarchies of stencils, a convection-diffusion matrix, a graph
 *     Laplacian and elasticity with the rigid-body modes: the host's product, bit for bit;
 *   - the same in batches of 7 rows, from A kept on the device and P alone (R transposed
 *     there), through the pinned ring in small slots; and on an out-of-order queue;
 *   - the set-up asking the device for its Galerkin products (CMRSCL_AMG_GALERKIN=device, a
 *     builder's sink): every one made there, and every estimate of rho, every level's A the
 *     host set-up's, bit for bit, and the builder's matrices of every R and coarse A made
 *     from the device's copies, entry for entry; with CMRSCL_AMG_GALERKIN=host none made there;
 *   - the rows' tables in local memory (up to 32 columns, or 4: both kinds of table in one
 *     product) and in global memory alone: the same bits;
 *   - a row of more columns than its table holds (a dense row of 1,100): ERROR_UNSUPPORTED
 *     naming it; a device without fp64: ERROR_UNSUPPORTED saying so, for both.
 * Usage: test_amg_galerkin. */
#include "precond/precond.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* got (values read back from floats) is want with its values rounded to float. */
static bool same_in_float(const cmrscl_csr *got, const cmrscl_csr *want)
{
    bool same = got->rows == want->rows && got->cols == want->cols && got->nnz == want->nnz &&
                !memcmp(got->row_ptr, want->row_ptr, sizeof(int64_t) * ((size_t)want->rows + 1)) &&
                !memcmp(got->col_ind, want->col_ind, sizeof(int32_t) * (size_t)want->nnz);
    for (int64_t k = 0; same && k < want->nnz; ++k)
        same = got->values[k] == (double)(float)want->values[k];
    return same;
}

/* The builder's matrices made from the device's copies (expected: every level's R and the A below
 * it - the coarsest's, inverted, is never made) hold the hierarchy's operators, entry for entry;
 * with the products on the host, none is. With one thread the builder makes nothing. */
static void check_made_there(cmrs_amg_builder *b, const cmrs_amg_hierarchy *h, const char *spec,
                             const char *where, bool device, bool in_float)
{
    cmrs_amg_builder_finish(b);
    int want = device && cmrs_parallel_threads() > 1 ? 2 * (h->levels - 1) - 1 : 0;
    CHECK_MSG(cmrs_amg_builder_made_there(b) == want,
              "%s with CMRSCL_AMG_GALERKIN=%s: %d matrices made from the device's copies, not %d",
              spec, where, cmrs_amg_builder_made_there(b), want);
    for (int l = 0; want && l + 1 < h->levels; ++l)
        for (int which = AMG_OPERATOR_A; which <= AMG_OPERATOR_R; ++which) {
            int level = which == AMG_OPERATOR_A ? l + 1 : l;
            const cmrscl_csr *op = which == AMG_OPERATOR_A   ? &h->level[level].A
                                   : which == AMG_OPERATOR_P ? &h->level[level].P
                                                             : &h->level[level].R;
            cmrscl_matrix m = cmrs_amg_builder_take(b, level, (cmrs_amg_operator)which);
            if ((level + 1 == h->levels && which == AMG_OPERATOR_A) || which == AMG_OPERATOR_P) {
                cmrscl_matrix_free(m);
                continue;
            }
            cmrscl_cmrs cmrs = {0};
            cmrscl_csr got = {0};
            CHECK_MSG(m && cmrscl_matrix_read_cmrs(m, &cmrs) == CMRSCL_OK &&
                          cmrscl_cmrs_to_csr(&cmrs, &got) == CMRSCL_OK &&
                          (in_float ? same_in_float(&got, op) : test_same_csr(&got, op)),
                      "%s: level %d's %c made from the device's copy is not the host's (%s)", spec,
                      level, "APR"[which], m ? "its arrays differ" : "not made");
            cmrscl_csr_free(&got);
            cmrscl_cmrs_free(&cmrs);
            cmrscl_matrix_free(m);
        }
}

/* elastic:n's six rigid-body modes (column-major, malloc'ed) in o, nodes of 3 unknowns. */
static double *rigid_body(int n, const cmrscl_csr *a, cmrs_amg_options *o)
{
    int m = n + 1, nodes = m * m * m;
    double *xyz = malloc(sizeof(double) * 3 * (size_t)nodes);
    double *modes = malloc(sizeof(double) * 6 * (size_t)a->rows);
    for (int p = 0; xyz && p < nodes; ++p)
        xyz[3 * p] = p % m, xyz[3 * p + 1] = p / m % m, xyz[3 * p + 2] = p / (m * m);
    CHECK_OK(cmrscl_rigid_body_modes(nodes, xyz, modes));
    free(xyz);
    o->near_null_count = 6, o->near_null = modes, o->block_size = 3;
    return modes;
}

/* Level l's estimate of rho on the device: the host's, bit for bit, and A kept there after
 * it. from (may be NULL): A left there by the Galerkin product above - that copy taken, not
 * another made (and released here). */
static void check_rho(cmrscl_context ctx, const char *spec, const cmrscl_csr *a,
                      const double *diag_inv, bool symmetric, int l, cmrs_device_csr *from)
{
    double host = 0, device = -1;
    CHECK_OK(cmrs_amg_spectral_radius(a, diag_inv, symmetric, 15, &host));
    cmrs_device_csr kept = from ? *from : (cmrs_device_csr){0};
    const cl_mem given = kept.ptr;
    CHECK_OK(cmrs_amg_spectral_radius_device(ctx, a, symmetric, 15, &device, &kept));
    CHECK_MSG(kept.ptr && kept.rows == a->rows && kept.nnz == a->nnz &&
                  (!from || kept.ptr == given),
              "%s level %d: A not kept on the device after rho's estimate%s", spec, l,
              from ? ", or not the Galerkin product's C taken" : "");
    cmrs_device_csr_release(&kept);
    if (from)
        *from = (cmrs_device_csr){0};
    CHECK_MSG(!memcmp(&host, &device, sizeof host),
              "%s level %d: rho on the device %.17g, on the host %.17g (%s%s)", spec, l, device,
              host, symmetric ? "Lanczos" : "the power method",
              from ? ", from the Galerkin product's C" : "");
}

/* The symmetry decided on the device (cl/amg_rho.cl, rho_symmetric): the host's verdict on
 * 3 x 3 matrices whose only difference from a symmetric one is an entry's last bit, a stored
 * zero or -0 whose mirror is not stored, a one-sided entry - and on generated ones. */
static void check_symmetric(cmrscl_context ctx)
{
    int64_t ptr[] = {0, 3, 6, 8};
    int32_t col[] = {0, 1, 2, 0, 1, 2, 1, 2};
    const double ulp = nextafter(-1.0, 0.0);
    struct {
        const char *name;
        double v02; /* entry (0, 2), whose mirror (2, 0) is not stored */
        double v01;
        bool symmetric;
    } cases[] = {{"a stored zero without its mirror", 0.0, -1, true},
                 {"-0 without its mirror", -0.0, -1, true},
                 {"a one-sided entry", 0.5, -1, false},
                 {"an entry's last bit", 0.0, ulp, false}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        double val[] = {4, cases[c].v01, cases[c].v02, -1, 4, -1, -1, 4};
        cmrscl_csr a = {3, 3, 8, ptr, col, val};
        bool host = !cases[c].symmetric, device = !host;
        cmrs_device_csr d;
        CHECK_OK(cmrs_amg_symmetric(&a, &host));
        CHECK_OK(cmrs_device_csr_upload(ctx, &a, &d));
        CHECK_OK(cmrs_amg_symmetric_device(ctx, &d, &device));
        cmrs_device_csr_release(&d);
        CHECK_MSG(host == cases[c].symmetric && device == host,
                  "symmetry of %s: the host says %d, the device %d, not %d", cases[c].name, host,
                  device, cases[c].symmetric);
    }
    const char *specs[] = {"stencil7:12", "convdiff:20", "lap:rmat:10:8", "random:500:6"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; ++k) {
        cmrscl_csr a;
        cmrs_device_csr d;
        bool host = false, device = true;
        CHECK_OK(cmrscl_csr_generate(specs[k], &a));
        CHECK_OK(cmrs_amg_symmetric(&a, &host));
        CHECK_OK(cmrs_device_csr_upload(ctx, &a, &d));
        CHECK_OK(cmrs_amg_symmetric_device(ctx, &d, &device));
        CHECK_MSG(device == host, "%s: the device's symmetry %d, the host's %d", specs[k], device,
                  host);
        cmrs_device_csr_release(&d);
        cmrscl_csr_free(&a);
    }
}

static void check_levels(cmrscl_context ctx, const char *spec, int elastic)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate(spec, &a));
    cmrs_amg_options o;
    cmrs_amg_options_default(&o);
    double *modes = elastic ? rigid_body(elastic, &a, &o) : NULL;
    cmrs_amg_hierarchy h = {0}, again = {0};
    CHECK_OK(cmrs_amg_setup(&a, &o, &h));
    for (int l = 0; l < h.levels; ++l)
        check_rho(ctx, spec, &h.level[l].A, h.level[l].diag_inv, h.symmetric, l, NULL);
    /* in one batch from R, A and P; then in batches of 7 rows from A already on the device and
     * P alone (R its transpose there), every array through the ring in slots of 4 KB
     * (runtime/upload.c: the reads back too) */
    for (int l = 0; l + 1 < h.levels; ++l)
        for (size_t batch = 0; batch <= 7; batch += 7) {
            cmrscl_csr c;
            const cmrs_amg_level *lv = &h.level[l];
            cmrs_device_csr a_on_device = {0};
            if (batch) {
                setenv("CMRSCL_UPLOAD_RING", "4096", 1);
                CHECK_OK(cmrs_device_csr_upload(ctx, &lv->A, &a_on_device));
            }
            /* P smoothed there, from A there in the batches of 7 (and kept there for R A P) */
            cmrscl_csr r = {0}, p = {0};
            cmrs_device_csr p_on_device = {0};
            CHECK_OK(cmrs_amg_prolongator_device(ctx, &lv->A, batch ? &a_on_device : NULL, &lv->T,
                                                 lv->diag_inv, o.smooth_scale / lv->rho, batch, &p,
                                                 batch ? &p_on_device : NULL));
            CHECK_MSG(test_same_csr(&p, &lv->P),
                      "%s level %d, batches of %zu rows: P smoothed on the device is not the "
                      "host's",
                      spec, l, batch);
            cmrscl_csr_free(&p);
            cmrs_device_csr c_on_device = {0};
            CHECK_OK(cmrs_amg_galerkin_device(
                ctx, batch ? NULL : &lv->R, &lv->A, batch ? &a_on_device : NULL, &lv->P,
                batch ? &p_on_device : NULL, batch, &c, &r, batch ? &c_on_device : NULL, NULL));
            if (batch) /* C left there: the next level's estimate of rho from it */
                check_rho(ctx, spec, &h.level[l + 1].A, h.level[l + 1].diag_inv, h.symmetric, l + 1,
                          &c_on_device);
            unsetenv("CMRSCL_UPLOAD_RING");
            cmrs_device_csr_release(&a_on_device), cmrs_device_csr_release(&p_on_device);
            CHECK_MSG(batch ? test_same_csr(&r, &lv->R) : !r.row_ptr,
                      "%s level %d, batches of %zu rows: R read back %s", spec, l, batch,
                      batch ? "is not the host's transpose" : "though it was given");
            cmrscl_csr_free(&r);
            CHECK_MSG(test_same_csr(&c, &h.level[l + 1].A),
                      "%s level %d, batches of %zu rows%s: R A P on the device (%lld entries) is "
                      "not the host's (%lld)",
                      spec, l, batch, batch ? ", R made there" : "", (long long)c.nnz,
                      (long long)h.level[l + 1].A.nnz);
            cmrscl_csr_free(&c);
        }
    /* the set-up asking the device for every product, then the host; and, but for elasticity,
     * plain aggregation's (whose P does not wait for rho) asking the device; then every product
     * on the device but P only where rho is in once T is made, else the host's A T (stopped
     * when it comes in): the same bits whichever made P */
    const char *where[] = {"device", "host", "device", "shadow"};
    for (int w = 0; w < 4; ++w) {
        if (w == 2 && elastic)
            continue;
        if (w >= 2) {
            cmrs_amg_free(&h);
            o.smooth = w == 3;
            CHECK_OK(cmrs_amg_setup(&a, &o, &h));
        }
        setenv("CMRSCL_AMG_GALERKIN", where[w], 1);
        cmrs_amg_builder *b = NULL;
        CHECK_OK(cmrs_amg_builder_create(ctx, CMRSCL_DOUBLE, false, a.rows, &b));
        unsetenv("CMRSCL_AMG_GALERKIN");
        cmrs_amg_sink sink = cmrs_amg_builder_sink(b);
        CHECK_OK(cmrs_amg_setup_to(&a, &o, &sink, &again));
        int made = cmrs_amg_builder_galerkins(b), rhos = cmrs_amg_builder_rhos(b),
            smoothed = cmrs_amg_builder_prolongators(b);
        check_made_there(b, &again, spec, w == 1 ? "host" : "device", w != 1, false);
        cmrs_amg_builder_free(b);
        if (w == 3)
            printf("%s, CMRSCL_AMG_GALERKIN=shadow: %d of %d prolongators the device's\n", spec,
                   smoothed, h.levels - 1);
        CHECK_MSG(again.levels == h.levels && made == (w != 1 ? h.levels - 1 : 0) &&
                      rhos == (w != 1 ? h.levels : 0) &&
                      (w == 3 ? smoothed <= h.levels - 1 : smoothed == (w == 0 ? h.levels - 1 : 0)),
                  "%s: %d levels with CMRSCL_AMG_GALERKIN=%s (%d products, %d estimates of rho "
                  "and %d prolongators made on the device), %d",
                  spec, again.levels, w == 2 ? "device, plain aggregation" : where[w], made, rhos,
                  smoothed, h.levels);
        for (int l = 1; l < h.levels && l < again.levels; ++l)
            CHECK_MSG(test_same_csr(&again.level[l].A, &h.level[l].A) &&
                          test_same_csr(&again.level[l - 1].P, &h.level[l - 1].P) &&
                          test_same_csr(&again.level[l - 1].R, &h.level[l - 1].R),
                      "%s: level %d's A or level %d's P or R with CMRSCL_AMG_GALERKIN=%s differs",
                      spec, l, l - 1, w == 2 ? "device, plain aggregation" : where[w]);
        cmrs_amg_free(&again);
    }
    /* a float cycle's builder: the device's double copies rounded there as the host rounds */
    setenv("CMRSCL_AMG_GALERKIN", "device", 1);
    cmrs_amg_builder *fb = NULL;
    CHECK_OK(cmrs_amg_builder_create(ctx, CMRSCL_FLOAT, false, a.rows, &fb));
    unsetenv("CMRSCL_AMG_GALERKIN");
    cmrs_amg_sink float_sink = cmrs_amg_builder_sink(fb);
    CHECK_OK(cmrs_amg_setup_to(&a, &o, &float_sink, &again));
    check_made_there(fb, &again, spec, "device, a float cycle", true, true);
    cmrs_amg_builder_free(fb);
    cmrs_amg_free(&again);
    printf("%s: %d levels, every P, R and R A P the host's on the device\n", spec, h.levels);
    cmrs_amg_free(&h);
    free(modes);
    cmrscl_csr_free(&a);
}

/* The device's kernels each way, by the tests' switches (space-separated NAME=VALUE, set for the
 * case alone), on a matrix's levels (elastic: its candidates, 0 for the constant). */
typedef struct kernel_case {
    const char *settings;
    const char *spec;
    int elastic;
} kernel_case;

static const kernel_case kernel_cases[] = {
    /* rows sorted each way: by their work-item up to 4 entries, a work-group's ranks in local
     * memory up to 16, past that by one work-item again (cl/spgemm.cl, sort_long_rows) */
    {"CMRSCL_AMG_SORT_IN_ITEM=4 CMRSCL_AMG_SORT_LOCAL=16", "stencil27:12", 0},
    /* the rows' tables in local memory where every row of a product has at most 4 columns, in
     * global memory where one has more (cl/spgemm.cl, SPGEMM_LOCAL; a CPU's kernels); then
     * never in local memory */
    {"CMRSCL_AMG_SPGEMM_LOCAL=4", "stencil7:16", 0},
    {"CMRSCL_AMG_SPGEMM_LOCAL=4", "elastic:6", 6},
    {"CMRSCL_AMG_SPGEMM_LOCAL=0", "convdiff:48", 0},
    /* a work-group a row, its table in local memory (cl/spgemm.cl, spgemm_count_group and
     * spgemm_fill_group: a GPU's), with 4 lanes, so B's rows take several steps, and 32; then a
     * work-item a row where a GPU would take groups */
    {"CMRSCL_AMG_SPGEMM_GROUPS=1 CMRSCL_AMG_SPGEMM_LOCAL=4 CMRSCL_AMG_SPGEMM_LANES=4",
     "stencil27:12", 0},
    {"CMRSCL_AMG_SPGEMM_GROUPS=1 CMRSCL_AMG_SPGEMM_LOCAL=4 CMRSCL_AMG_SPGEMM_LANES=4", "elastic:6",
     6},
    {"CMRSCL_AMG_SPGEMM_GROUPS=1 CMRSCL_AMG_SPGEMM_LOCAL=4 CMRSCL_AMG_SPGEMM_LANES=32",
     "geo:4000:8", 0},
    {"CMRSCL_AMG_SPGEMM_GROUPS=0", "stencil27:12", 0},
};

/* The case's switches set or (set = false) unset. */
static void apply_settings(const char *settings, bool set)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", settings);
    for (char *save = NULL, *item = strtok_r(copy, " ", &save); item;
         item = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(item, '=');
        *eq = '\0';
        if (set)
            setenv(item, eq + 1, 1);
        else
            unsetenv(item);
    }
}

static void check_kernel_case(cmrscl_context ctx, const kernel_case *c)
{
    apply_settings(c->settings, true);
    check_levels(ctx, c->spec, c->elastic);
    apply_settings(c->settings, false);
}

/* The builder's rule on its own (no CMRSCL_AMG_GALERKIN): a level goes to a GPU with fp64 from
 * GALERKIN_DEVICE_ROWS rows or GALERKIN_DEVICE_ENTRIES entries - here the entries set at level
 * 1's, so levels 0 and 1 and no other - and to no other device. */
static void check_entries_rule(cmrscl_context ctx, const char *spec)
{
    cmrscl_csr a;
    CHECK_OK(cmrscl_csr_generate(spec, &a));
    cmrs_amg_options o;
    cmrs_amg_options_default(&o);
    cmrs_amg_hierarchy h = {0};
    CHECK_OK(cmrs_amg_setup(&a, &o, &h));
    char entries[32];
    snprintf(entries, sizeof entries, "%lld", (long long)(h.levels > 1 ? h.level[1].A.nnz : 1));
    setenv("CMRSCL_AMG_DEVICE_ENTRIES", entries, 1);
    cmrs_amg_builder *b = NULL;
    CHECK_OK(cmrs_amg_builder_create(ctx, CMRSCL_DOUBLE, false, a.rows, &b));
    unsetenv("CMRSCL_AMG_DEVICE_ENTRIES");
    cmrs_amg_sink sink = cmrs_amg_builder_sink(b);
    cmrs_amg_hierarchy again = {0};
    CHECK_OK(cmrs_amg_setup_to(&a, &o, &sink, &again));
    const bool gpu = (ctx->info.type & CL_DEVICE_TYPE_GPU) && ctx->info.fp64;
    int expected = 0;
    for (int l = 0; gpu && l + 1 < h.levels; ++l)
        expected += h.level[l].A.nnz >= h.level[1].A.nnz;
    int made = cmrs_amg_builder_galerkins(b);
    CHECK_MSG(h.levels >= 3 && made == expected,
              "%s, CMRSCL_AMG_DEVICE_ENTRIES=%s: %d Galerkin products on the device, not %d (%d "
              "levels)",
              spec, entries, made, expected, h.levels);
    for (int l = 1; l < h.levels && l < again.levels; ++l)
        CHECK_MSG(test_same_csr(&again.level[l].A, &h.level[l].A),
                  "%s: level %d's A differs with the entries rule", spec, l);
    printf("%s: the entries rule made %d of %d Galerkin products on the device (%s)\n", spec, made,
           h.levels - 1, gpu ? "a GPU with fp64: levels 0 and 1" : "not a GPU with fp64: none");
    cmrs_amg_builder_free(b);
    cmrs_amg_free(&again);
    cmrs_amg_free(&h);
    cmrscl_csr_free(&a);
}

/* A dense row of 1,100 columns in A P (P the identity), then in R (A P) alone: too many for a
 * row's table. */
static void check_overflow(cmrscl_context ctx)
{
    cmrscl_csr a, eye = {0};
    CHECK_OK(cmrscl_csr_generate("dense:1100", &a));
    int32_t n = a.rows;
    eye = (cmrscl_csr){n,
                       n,
                       n,
                       malloc(sizeof(int64_t) * ((size_t)n + 1)),
                       malloc(sizeof(int32_t) * (size_t)n),
                       malloc(sizeof(double) * (size_t)n)};
    for (int32_t i = 0; i <= n; ++i)
        eye.row_ptr[i] = i;
    for (int32_t i = 0; i < n; ++i)
        eye.col_ind[i] = i, eye.values[i] = 1;
    cmrscl_csr c;
    cmrscl_status st =
        cmrs_amg_galerkin_device(ctx, &eye, &a, NULL, &eye, NULL, 0, &c, NULL, NULL, NULL);
    CHECK_MSG(st == CMRSCL_ERROR_UNSUPPORTED && c.nnz == 0 && !c.row_ptr &&
                  test_contains(cmrscl_last_error(), "more than 1024 columns"),
              "a row of 1100 columns: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
    /* Only the second product overflows: A = I, P = I with every row's column 0 set too, so A P
     * has rows of two columns and R = P^T a row of n, whose R (A P) row has n columns. R, made
     * on the device, still comes back - the host's product takes it (amg_setup.c) - and is the
     * host's transpose. */
    cmrscl_csr p = {n,
                    n,
                    2 * (int64_t)n - 1,
                    malloc(sizeof(int64_t) * ((size_t)n + 1)),
                    malloc(sizeof(int32_t) * 2 * (size_t)n),
                    malloc(sizeof(double) * 2 * (size_t)n)},
               r = {0}, want = {0};
    p.row_ptr[0] = 0;
    for (int32_t i = 0, k = 0; i < n; ++i) {
        p.col_ind[k] = 0, p.values[k++] = 0.5;
        if (i > 0)
            p.col_ind[k] = i, p.values[k++] = 1.0 + i;
        p.row_ptr[i + 1] = k;
    }
    st = cmrs_amg_galerkin_device(ctx, NULL, &eye, NULL, &p, NULL, 0, &c, &r, NULL, NULL);
    CHECK_OK(cmrscl_csr_transpose(&p, &want));
    CHECK_MSG(st == CMRSCL_ERROR_UNSUPPORTED && !c.row_ptr && test_same_csr(&r, &want),
              "R (A P) with a row of %d columns: %s (%s), R %s", (int)n, cmrscl_status_name(st),
              cmrscl_last_error(), r.row_ptr ? "not the host's" : "not read back");
    cmrscl_csr_free(&p), cmrscl_csr_free(&r), cmrscl_csr_free(&want);
    cmrscl_csr_free(&eye);
    cmrscl_csr_free(&a);
}

/* On an out-of-order queue (a context made from the caller's): the in-order queue's bits. */
static void check_out_of_order(cmrscl_context ctx)
{
    cl_context c;
    cl_device_id dev = test_cl_device(ctx, &c);
    cl_int err;
    cl_command_queue ooo =
        clCreateCommandQueue(c, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    cmrscl_context octx = NULL;
    if (!ooo || cmrscl_context_create_from_cl(c, ooo, &octx) != CMRSCL_OK) {
        printf("not checked: the device takes no out-of-order queue (%d)\n", (int)err);
        if (ooo)
            clReleaseCommandQueue(ooo);
        return;
    }
    cmrscl_csr a, got;
    CHECK_OK(cmrscl_csr_generate("stencil7:16", &a));
    cmrs_amg_hierarchy h = {0};
    CHECK_OK(cmrs_amg_setup(&a, NULL, &h));
    const cmrs_amg_level *lv = &h.level[0];
    cmrscl_csr r;
    CHECK_OK(
        cmrs_amg_galerkin_device(octx, NULL, &lv->A, NULL, &lv->P, NULL, 7, &got, &r, NULL, NULL));
    CHECK_MSG(test_same_csr(&got, &h.level[1].A) && test_same_csr(&r, &lv->R),
              "an out-of-order queue: R A P or R on the device is not the host's");
    printf("stencil7:16 on an out-of-order queue: R A P and R the host's\n");
    cmrscl_csr_free(&got);
    cmrscl_csr_free(&r);
    cmrs_amg_free(&h);
    cmrscl_csr_free(&a);
    cmrscl_context_free(octx);
    clReleaseCommandQueue(ooo);
}

int main(void)
{
    cmrscl_context ctx;
    CHECK_OK(cmrscl_context_create(NULL, &ctx));
    if (test_failures)
        return test_finish("amg_galerkin");
    if (!ctx->info.fp64) {
        cmrscl_csr a, c;
        CHECK_OK(cmrscl_csr_generate("stencil5:8", &a));
        cmrscl_status st =
            cmrs_amg_galerkin_device(ctx, &a, &a, NULL, &a, NULL, 0, &c, NULL, NULL, NULL);
        CHECK_MSG(st == CMRSCL_ERROR_UNSUPPORTED && test_contains(cmrscl_last_error(), "no fp64"),
                  "no fp64: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
        double rho, *d = calloc((size_t)a.rows, sizeof(double));
        st = cmrs_amg_spectral_radius_device(ctx, &a, true, 15, &rho, NULL);
        CHECK_MSG(st == CMRSCL_ERROR_UNSUPPORTED && test_contains(cmrscl_last_error(), "no fp64"),
                  "no fp64, rho: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
        cmrs_device_csr none = {0};
        bool symmetric;
        st = cmrs_amg_symmetric_device(ctx, &none, &symmetric);
        CHECK_MSG(st == CMRSCL_ERROR_UNSUPPORTED && test_contains(cmrscl_last_error(), "no fp64"),
                  "no fp64, symmetry: %s (%s)", cmrscl_status_name(st), cmrscl_last_error());
        free(d);
        cmrscl_csr_free(&a);
        printf("skipped: the device has no fp64, and the Galerkin product, rho and the symmetry "
               "on it are refused\n");
        cmrscl_context_free(ctx);
        return test_failures ? test_finish("amg_galerkin") : 77;
    }
    check_symmetric(ctx);
    check_levels(ctx, "stencil7:16", 0);
    check_levels(ctx, "stencil27:12", 0);
    check_levels(ctx, "convdiff:48", 0);
    check_levels(ctx, "geo:4000:8", 0);
    check_levels(ctx, "elastic:6", 6);
    for (size_t k = 0; k < sizeof kernel_cases / sizeof *kernel_cases; ++k)
        check_kernel_case(ctx, &kernel_cases[k]);
    check_entries_rule(ctx, "convdiff:48");
    cmrscl_csr big; /* rows in three pieces of AMG_PIECE, the last one short */
    double *d = NULL;
    CHECK_OK(cmrscl_csr_generate("stencil7:28", &big));
    CHECK_OK(cmrs_amg_inverse_diagonal(&big, 0, &d, NULL));
    check_rho(ctx, "stencil7:28", &big, d, true, 0, NULL);
    check_rho(ctx, "stencil7:28", &big, d, false, 0, NULL);
    free(d);
    cmrscl_csr_free(&big);
    check_overflow(ctx);
    check_out_of_order(ctx);
    cmrscl_context_free(ctx);
    return test_finish("amg_galerkin");
}
