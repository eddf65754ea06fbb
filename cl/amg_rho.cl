/* amg_rho.cl - the passes of AMG's estimate of rho(D^-1 A) on the device
 * (host/precond/amg_rho_device.c): Lanczos' or the power method's product and update over CSR
 * in double; after the prelude of every program, built with -DHEIGHT=1 -DWARP=1 -DWG_SIZE=...
 * -DVALUE_DOUBLE=1 -DAMG_PIECE=... .
 *
 * The host's passes (amg_rho.c) add each sum over a piece of AMG_PIECE rows from 0 in the rows'
 * order. Here a work-item a row writes the row's terms, then a work-item a piece and sum adds
 * its piece's terms in that order, and contraction into fma is off: the pieces' sums are the
 * host's bit for bit, and so is the estimate the host makes of them. A sum over a loop is kept
 * in a volatile: Intel's CPU compiler otherwise reorders the additions of a register's
 * running sum (a row's product differed in the last bit, FP_CONTRACT OFF notwithstanding); the
 * volatile pins each one in the loop's order, at the cost of a private store a term. */
#pragma OPENCL FP_CONTRACT OFF

/* D^-1 and the start v, made here from A rather than sent (host/precond/amg_rho.c's
 * cmrs_amg_inverse_diagonal and cmrs_amg_rho_start, the same bits: a row's diagonal entries
 * added in order, then one correctly rounded division; the start's hash in integers, then the
 * host's three operations in its order). */
__kernel void rho_start(const int rows, __global const int *a_ptr, __global const int *a_col,
                        __global const double *a_val, __global double *diag_inv,
                        __global double *v)
{
    const int i = (int)get_global_id(0);
    if (i >= rows)
        return;
    volatile double d = 0;
    for (int k = a_ptr[i]; k < a_ptr[i + 1]; ++k)
        if (a_col[k] == i)
            d = d + a_val[k];
    diag_inv[i] = 1.0 / d;
    ulong h = (ulong)(i + 1) * 0x9E3779B97F4A7C15UL;
    h ^= h >> 31;
    v[i] = (double)(h % 2001) / 1000.0 - 1.0 + 1e-3;
}

/* Whether A equals its transpose (host/precond/amg_rho.c's cmrs_amg_symmetric, the same
 * verdict): a work-item a row compares each entry off the diagonal with its mirror - 0 where
 * that is not stored, found by bisection (columns ascend: canonical CSR) - and a difference
 * sets *asymmetric. */
__kernel void rho_symmetric(const int rows, __global const int *a_ptr, __global const int *a_col,
                            __global const double *a_val, __global int *asymmetric)
{
    const int i = (int)get_global_id(0);
    if (i >= rows)
        return;
    for (int k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
        const int j = a_col[k];
        if (j == i)
            continue;
        int lo = a_ptr[j], hi = a_ptr[j + 1];
        while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            if (a_col[mid] < i)
                lo = mid + 1;
            else
                hi = mid;
        }
        const double mirror = lo < a_ptr[j + 1] && a_col[lo] == i ? a_val[lo] : 0.0;
        if (mirror != a_val[k]) {
            atomic_or(asymmetric, 1);
            return;
        }
    }
}

/* u = D^-1 A (sv v); terms: (sv v_i) (A sv v)_i, (sv v_i)^2 / d_i, u_i^2 (3 columns of rows) */
__kernel void rho_product(const int rows, const double sv, __global const int *a_ptr,
                          __global const int *a_col, __global const double *a_val,
                          __global const double *v, __global const double *diag_inv,
                          __global double *u, __global double *terms)
{
    const int i = (int)get_global_id(0);
    if (i >= rows)
        return;
    volatile double row = 0;
    for (int k = a_ptr[i]; k < a_ptr[i + 1]; ++k)
        row = row + a_val[k] * v[a_col[k]];
    const double av = row * sv;
    const double vi = sv * v[i], d = diag_inv[i], ui = av * d;
    u[i] = ui;
    terms[i] = vi * av;
    terms[(size_t)rows + i] = vi * vi / d;
    terms[2 * (size_t)rows + i] = ui * ui;
}

/* p = su u - av v - bp p (av = alpha sv, bp = beta sp); terms: p_i^2 / d_i */
__kernel void rho_update(const int rows, const double su, const double av, const double bp,
                         __global const double *u, __global const double *v,
                         __global double *p, __global const double *diag_inv,
                         __global double *terms)
{
    const int i = (int)get_global_id(0);
    if (i >= rows)
        return;
    const double w = su * u[i] - av * v[i] - bp * p[i];
    p[i] = w;
    terms[i] = w * w / diag_inv[i];
}

/* sums[3 piece + c]: column c's terms over the piece's rows, in order (c < columns). */
__kernel void rho_pieces(const int rows, const int pieces, const int columns,
                         __global const double *terms, __global double *sums)
{
    const int t = (int)get_global_id(0), piece = t / 3, c = t % 3;
    if (piece >= pieces || c >= columns)
        return;
    const int begin = piece * AMG_PIECE, end = min(begin + AMG_PIECE, rows);
    __global const double *x = terms + (size_t)c * rows;
    volatile double sum = 0;
    for (int i = begin; i < end; ++i)
        sum = sum + x[i];
    sums[3 * piece + c] = sum;
}
