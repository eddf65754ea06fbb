/* amg_rho.c - each level's diagonal and its estimate of rho(D^-1 A), which weighs the
 * smoothers (Jacobi's omega = 4/3 / rho; Chebyshev's interval [1/30, 1.1] x rho) and the
 * prolongator's smoothing. An estimate below rho makes a Chebyshev cycle indefinite (CG then
 * breaks down) and over-weights Jacobi, so it must come close from below in few steps:
 *   - symmetric A: Lanczos on D^-1 A, self-adjoint in the D inner product - the largest
 *     eigenvalue of the k x k tridiagonal it builds (PyAMG's approximate_spectral_radius);
 *     its extreme Ritz value converges far faster than the power method's Rayleigh quotient
 *     on clustered spectra, at the same cost a step (one product, two sums);
 *   - any other A: the power method's Rayleigh quotient x^T A x / x^T D x, the estimate of
 *     the symmetric part (Arnoldi would keep k vectors of the rows).
 * Both start from a fixed vector and add their sums in pieces of AMG_PIECE rows in order, so
 * the estimate is the same bits whatever the host's threads - and on a device
 * (amg_rho_device.c), whose passes make the same pieces' sums for the same steps. */
#include "precond/precond.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the diagonal ---- */

typedef struct diagonal_job {
    const cmrscl_csr *a;
    double *d;
    int32_t *bad; /* a piece's first row whose diagonal is missing, zero or negative; -1 */
    bool *zeros;  /* a piece's: an entry off the diagonal stored as 0 */
} diagonal_job;

static void diagonal_piece(void *ctx, int64_t piece)
{
    const diagonal_job *j = ctx;
    const cmrscl_csr *a = j->a;
    int64_t begin, end;
    cmrs_amg_piece_rows(piece, a->rows, &begin, &end);
    j->bad[piece] = -1;
    bool zeros = false;
    for (int64_t i = begin; i < end; ++i) {
        double v = 0;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            if (a->col_ind[k] == i)
                v += a->values[k];
            else
                zeros |= a->values[k] == 0;
        if (!(v > 0) && j->bad[piece] < 0)
            j->bad[piece] = (int32_t)i;
        j->d[i] = 1.0 / v;
    }
    j->zeros[piece] = zeros;
}

cmrscl_status cmrs_amg_inverse_diagonal(const cmrscl_csr *a, int level, double **out,
                                        bool *zero_couplings)
{
    int64_t pieces = cmrs_amg_pieces(a->rows);
    double *d = cmrscl_alloc((size_t)a->rows, sizeof(double));
    int32_t *bad = cmrscl_alloc((size_t)pieces + 1, sizeof(int32_t));
    bool *zeros = cmrscl_alloc((size_t)pieces + 1, sizeof(bool));
    if (!d || !bad || !zeros) {
        free(d), free(bad), free(zeros);
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG diagonal: %d rows", (int)a->rows);
    }
    diagonal_job job = {a, d, bad, zeros};
    cmrs_parallel_pieces(cmrs_parallel_threads(), pieces, diagonal_piece, &job);
    bool any = false;
    for (int64_t p = 0; p < pieces; ++p)
        any |= zeros[p];
    free(zeros);
    if (zero_couplings)
        *zero_couplings = any;
    for (int64_t p = 0; p < pieces; ++p)
        if (bad[p] >= 0) {
            int32_t i = bad[p];
            double v = 1.0 / d[i];
            free(d), free(bad);
            return cmrscl_fail(CMRSCL_ERROR_INVALID_MATRIX,
                               "AMG needs a positive diagonal: a(%d,%d) = %g on level %d (%s)",
                               (int)i, (int)i, v, level, v == 0 ? "zero or missing" : "negative");
        }
    free(bad);
    *out = d;
    return CMRSCL_OK;
}

/* ---- symmetry ---- */

typedef struct symmetry_job {
    const cmrscl_csr *a;
    char *asymmetric; /* a piece's verdict */
} symmetry_job;

/* Entry (i, j)'s value, 0 when it is not stored (columns sorted: canonical CSR). */
static double entry(const cmrscl_csr *a, int32_t i, int32_t j)
{
    int64_t lo = a->row_ptr[i], hi = a->row_ptr[i + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a->col_ind[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->row_ptr[i + 1] && a->col_ind[lo] == j ? a->values[lo] : 0.0;
}

static void symmetry_piece(void *ctx, int64_t piece)
{
    const symmetry_job *j = ctx;
    const cmrscl_csr *a = j->a;
    int64_t begin, end;
    cmrs_amg_piece_rows(piece, a->rows, &begin, &end);
    j->asymmetric[piece] = 0;
    /* every off-diagonal entry against its mirror, below the diagonal too: an entry whose
     * mirror is not stored is one-sided whichever side it is on */
    for (int64_t i = begin; i < end && !j->asymmetric[piece]; ++i)
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            if (a->col_ind[k] != i && entry(a, a->col_ind[k], (int32_t)i) != a->values[k]) {
                j->asymmetric[piece] = 1;
                break;
            }
}

cmrscl_status cmrs_amg_symmetric(const cmrscl_csr *a, bool *symmetric)
{
    int64_t pieces = cmrs_amg_pieces(a->rows);
    char *asymmetric = cmrscl_alloc((size_t)pieces + 1, 1);
    if (!asymmetric)
        return cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG symmetry: %d rows", (int)a->rows);
    symmetry_job job = {a, asymmetric};
    cmrs_parallel_pieces(cmrs_parallel_threads(), pieces, symmetry_piece, &job);
    *symmetric = true;
    for (int64_t p = 0; p < pieces; ++p)
        *symmetric = *symmetric && !asymmetric[p];
    free(asymmetric);
    return CMRSCL_OK;
}

/* cmrs_amg_symmetric_sending: the decision on a thread of its own while the sink sends A ahead
 * (the host's memory and the link's are both busy then, neither waits for the other). */
typedef struct symmetry_task {
    const cmrscl_csr *a;
    bool symmetric;
    cmrscl_status st;
    char message[256]; /* a failure's, for the caller's thread */
} symmetry_task;

static void *symmetry_run(void *arg)
{
    symmetry_task *s = arg;
    s->st = cmrs_amg_symmetric(s->a, &s->symmetric);
    if (s->st != CMRSCL_OK)
        snprintf(s->message, sizeof s->message, "%s", cmrscl_last_error());
    return NULL;
}

cmrscl_status cmrs_amg_symmetric_sending(const cmrscl_csr *a, const cmrs_amg_sink *sink,
                                         bool *symmetric)
{
    /* SYMMETRY_THERE: decided where A was sent, a kernel's millisecond (a GPU's), where the
     * host's bisections beside the upload held it back and took the host's threads from
     * aggregation meanwhile */
    if (sink && sink->send_ahead && sink->symmetric) {
        sink->send_ahead(sink->ctx, 0, a);
        if (sink->symmetric(sink->ctx, 0, a, symmetric) == CMRSCL_OK)
            return CMRSCL_OK;
        return cmrs_amg_symmetric(a, symmetric);
    }
    symmetry_task s = {.a = a};
    pthread_t id;
    bool beside = sink && sink->send_ahead && cmrs_parallel_threads() > 1 &&
                  pthread_create(&id, NULL, symmetry_run, &s) == 0;
    if (sink && sink->send_ahead)
        sink->send_ahead(sink->ctx, 0, a);
    if (beside)
        pthread_join(id, NULL);
    else
        symmetry_run(&s);
    *symmetric = s.symmetric;
    return s.st == CMRSCL_OK ? CMRSCL_OK : cmrscl_fail(s.st, "%s", s.message);
}

/* ---- the estimate ---- */

/* A rough start v in (-1, 1), from a hash of the index: rich in every frequency; and p = 0
 * where Lanczos keeps it (its first step takes 0 times p: 0, not 0 times whatever malloc
 * left). Both in pieces on the host's threads: on one, the hash of a fine level's rows took
 * longer than a Lanczos step. */
typedef struct start_job {
    double *v, *p;
    int64_t rows;
} start_job;

static void start_piece(void *ctx, int64_t piece)
{
    const start_job *j = ctx;
    int64_t begin, end;
    cmrs_amg_piece_rows(piece, j->rows, &begin, &end);
    for (int64_t i = begin; i < end; ++i) {
        uint64_t h = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 31;
        j->v[i] = (double)(h % 2001) / 1000.0 - 1.0 + 1e-3;
        if (j->p)
            j->p[i] = 0;
    }
}

void cmrs_amg_rho_start(double *v, double *p, int64_t rows)
{
    start_job start = {v, p, rows};
    cmrs_parallel_pieces(cmrs_parallel_threads(), cmrs_amg_pieces(rows), start_piece, &start);
}

/* The host's passes over pieces of rows (cmrs_rho_passes): vec, the three vectors. */
typedef struct host_passes {
    const cmrscl_csr *a;
    const double *diag_inv;
    double *vec[3];
    const cmrs_rho_state *s;
    double *sums; /* 3 a piece */
    int64_t pieces;
} host_passes;

static void product_piece(void *ctx, int64_t piece)
{
    const host_passes *j = ctx;
    const cmrscl_csr *a = j->a;
    const double *v = j->vec[j->s->v], *d = j->diag_inv;
    double *u = j->vec[j->s->u];
    int64_t begin, end;
    cmrs_amg_piece_rows(piece, a->rows, &begin, &end);
    double vav = 0, vdv = 0, uu = 0, s = j->s->sv;
    for (int64_t i = begin; i < end; ++i) {
        double av = 0;
        for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
            av += a->values[k] * v[a->col_ind[k]];
        av *= s;
        double vi = s * v[i];
        vav += vi * av;
        vdv += vi * vi / d[i];
        u[i] = av * d[i];
        uu += u[i] * u[i];
    }
    double *out = j->sums + 3 * piece;
    out[0] = vav, out[1] = vdv, out[2] = uu;
}

static void update_piece(void *ctx, int64_t piece)
{
    const host_passes *j = ctx;
    const cmrs_rho_state *st = j->s;
    const double *u = j->vec[st->u], *v = j->vec[st->v], *d = j->diag_inv;
    double *p = j->vec[st->p];
    int64_t begin, end;
    cmrs_amg_piece_rows(piece, j->a->rows, &begin, &end);
    double wdw = 0, av = st->alpha * st->sv, bp = st->beta * st->sp, su = st->su;
    for (int64_t i = begin; i < end; ++i) {
        double w = su * u[i] - av * v[i] - bp * p[i];
        p[i] = w;
        wdw += w * w / d[i];
    }
    j->sums[3 * piece] = wdw;
}

void cmrs_amg_rho_add(const double *sums, int64_t pieces, double sum[3])
{
    sum[0] = sum[1] = sum[2] = 0;
    for (int64_t p = 0; p < pieces; ++p)
        for (int c = 0; c < 3; ++c)
            sum[c] += sums[3 * p + c];
}

static cmrscl_status host_pass(host_passes *j, const cmrs_rho_state *s, parallel_piece_fn piece,
                               double sum[3])
{
    j->s = s;
    cmrs_parallel_pieces(cmrs_parallel_threads(), j->pieces, piece, j);
    cmrs_amg_rho_add(j->sums, j->pieces, sum);
    return CMRSCL_OK;
}

static cmrscl_status host_product(void *ctx, const cmrs_rho_state *s, double sum[3])
{
    return host_pass(ctx, s, product_piece, sum);
}

static cmrscl_status host_update(void *ctx, const cmrs_rho_state *s, double sum[3])
{
    return host_pass(ctx, s, update_piece, sum);
}

/* The largest eigenvalue of the symmetric tridiagonal matrix (diagonal alpha[k], off-diagonal
 * beta[k - 1]) by bisection on Sturm counts, to the last bits of its Gershgorin interval. */
static double tridiagonal_largest(const double *alpha, const double *beta, int k)
{
    double lo = alpha[0], hi = alpha[0];
    for (int i = 0; i < k; ++i) {
        double r = (i > 0 ? fabs(beta[i - 1]) : 0) + (i + 1 < k ? fabs(beta[i]) : 0);
        lo = fmin(lo, alpha[i] - r), hi = fmax(hi, alpha[i] + r);
    }
    for (int it = 0; it < 200 && lo < hi; ++it) {
        double mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi)
            break;
        int above = 0; /* eigenvalues above mid: sign changes of the LDL^T pivots of T - mid */
        double q = 1;
        for (int i = 0; i < k; ++i) {
            q = alpha[i] - mid - (i > 0 ? beta[i - 1] * beta[i - 1] / q : 0);
            if (q == 0)
                q = -1e-300;
            above += q > 0;
        }
        if (above > 0)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/* Vectors are kept unnormalised with a scale each (the true vector = scale * stored), so
 * normalising costs no pass of its own. */
static cmrscl_status lanczos(const cmrs_rho_passes *x, int steps, double *estimate)
{
    double alpha[AMG_MAX_RHO_STEPS] = {0}, beta[AMG_MAX_RHO_STEPS] = {0}, sum[3];
    int k = 0;
    /* the first product also measures v^T D v: v is normalised (v^T D v = 1) by scales */
    cmrs_rho_state s = {.v = 0, .p = 1, .u = 2, .sv = 1, .sp = 0, .su = 1};
    cmrscl_status st = x->product(x->ctx, &s, sum);
    if (st != CMRSCL_OK)
        return st;
    s.sv = s.su = 1.0 / sqrt(sum[1]);
    s.alpha = sum[0] * s.sv * s.sv;
    for (; k < steps && k < AMG_MAX_RHO_STEPS; ++k) {
        if (k > 0) { /* u = D^-1 A v of the normalised v, alpha = v^T A v */
            if ((st = x->product(x->ctx, &s, sum)) != CMRSCL_OK)
                return st;
            s.su = 1, s.alpha = sum[0];
        }
        alpha[k] = s.alpha;
        if ((st = x->update(x->ctx, &s, sum)) != CMRSCL_OK)
            return st;
        beta[k] = sqrt(sum[0]);
        if (!(beta[k] > 1e-14 * fabs(alpha[k]))) { /* an invariant subspace: T is exact */
            ++k;
            break;
        }
        /* p holds w: it becomes v (scale 1 / beta), v becomes p */
        int t = s.p;
        s.p = s.v, s.sp = s.sv;
        s.v = t, s.sv = 1.0 / beta[k];
        s.beta = beta[k];
    }
    *estimate = tridiagonal_largest(alpha, beta, k);
    return CMRSCL_OK;
}

static cmrscl_status power_method(const cmrs_rho_passes *x, int steps, double *estimate)
{
    double sum[3];
    cmrs_rho_state s = {.v = 0, .p = 1, .u = 2, .sv = 1};
    *estimate = 0;
    for (int k = 0; k < steps; ++k) {
        cmrscl_status st = x->product(x->ctx, &s, sum);
        if (st != CMRSCL_OK)
            return st;
        *estimate = sum[1] > 0 ? sum[0] / sum[1] : 0;
        int t = s.v;
        s.v = s.u, s.u = t;
        s.sv = sum[2] > 0 ? 1.0 / sqrt(sum[2]) : 0;
    }
    return CMRSCL_OK;
}

cmrscl_status cmrs_amg_rho_run(const cmrs_rho_passes *passes, bool symmetric, int steps,
                               double *rho)
{
    double estimate = 0;
    cmrscl_status st =
        symmetric ? lanczos(passes, steps, &estimate) : power_method(passes, steps, &estimate);
    *rho = estimate > 0 ? estimate : 1.0;
    return st;
}

cmrscl_status cmrs_amg_spectral_radius(const cmrscl_csr *a, const double *diag_inv, bool symmetric,
                                       int steps, double *rho)
{
    size_t n = (size_t)a->rows;
    int64_t pieces = cmrs_amg_pieces(a->rows);
    host_passes j = {a, diag_inv, {NULL, NULL, NULL}, NULL, NULL, pieces};
    for (int k = 0; k < 3; ++k) /* (p, vec[1], is Lanczos' alone) */
        j.vec[k] = k != 1 || symmetric ? cmrs_parallel_alloc(n, sizeof(double)) : NULL;
    j.sums = cmrscl_alloc((size_t)pieces * 3 + 3, sizeof(double));
    cmrscl_status st = CMRSCL_OK;
    if (!j.vec[0] || (symmetric && !j.vec[1]) || !j.vec[2] || !j.sums)
        st = cmrscl_fail(CMRSCL_ERROR_OUT_OF_HOST_MEMORY, "AMG spectral radius: %zu rows", n);
    if (st == CMRSCL_OK) {
        cmrs_amg_rho_start(j.vec[0], j.vec[1], a->rows);
        cmrs_rho_passes passes = {host_product, host_update, &j};
        st = cmrs_amg_rho_run(&passes, symmetric, steps, rho);
    }
    for (int k = 0; k < 3; ++k)
        free(j.vec[k]);
    free(j.sums);
    return st;
}
