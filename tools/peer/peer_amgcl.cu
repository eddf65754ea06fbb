/* peer_amgcl.cu - the AMG peer of the benchmark: amgcl (ddemidov/amgcl, header-only) with its
 * CUDA backend (cuSPARSE products, Thrust vectors), what a C++ user would pick for
 * smoothed-aggregation AMG on an NVIDIA GPU. Built only where CMRSCL_AMGCL_DIR names a copy
 * of amgcl's headers (git-ignored; never vendored) and a CUDA compiler is found
 * (tools/CMakeLists.txt). The matrix comes from libcmrscl (cmrscl_csr_generate or
 * cmrscl_mtx_read): the same matrix, bit for bit, as cmrscl-run solve's.
 *
 *     cmrscl-peer-amgcl (-g SPEC | FILE) [-p double|float] [--tol R] [--rhs ones|random]
 *                       [--relax jacobi|spai0|chebyshev] [-r N]
 *
 * amgcl's setup runs on the host's threads (OpenMP), then copies the hierarchy to the GPU;
 * CG runs on the GPU. It prints one line per repetition: setup and solve seconds (the solve
 * between two device synchronisations), iterations, amgcl's residual, and ||b - A x|| / ||b||
 * computed here in double from x. amgcl's own defaults but for the tolerance (a user's
 * choice): its strength threshold, coarsest size and smoother weights are not ours, and it is
 * compared as what it is. */
#define AMGCL_NO_BOOST
#include <amgcl/adapter/crs_tuple.hpp>
#include <amgcl/amg.hpp>
#include <amgcl/backend/cuda.hpp>
#include <amgcl/coarsening/smoothed_aggregation.hpp>
#include <amgcl/make_solver.hpp>
#include <amgcl/relaxation/chebyshev.hpp>
#include <amgcl/relaxation/damped_jacobi.hpp>
#include <amgcl/relaxation/spai0.hpp>
#include <amgcl/solver/cg.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cmrscl.h"

namespace {

double seconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

struct options {
    std::string matrix;
    bool generated = false, single = false, random_rhs = false;
    double tol = 1e-8;
    std::string relax = "jacobi";
    int reps = 3;
};

bool parse(int argc, char **argv, options &o)
{
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        bool more = i + 1 < argc;
        if ((a == "-g" || a == "--gen") && more)
            o.matrix = argv[++i], o.generated = true;
        else if ((a == "-p" || a == "--precision") && more)
            o.single = std::string(argv[++i]) == "float";
        else if (a == "--tol" && more)
            o.tol = std::atof(argv[++i]);
        else if (a == "--rhs" && more)
            o.random_rhs = std::string(argv[++i]) == "random";
        else if (a == "--relax" && more)
            o.relax = argv[++i];
        else if ((a == "-r" || a == "--reps") && more)
            o.reps = std::atoi(argv[++i]);
        else if (a[0] != '-' && o.matrix.empty())
            o.matrix = a;
        else
            return false;
    }
    return !o.matrix.empty() && o.tol > 0 && o.reps > 0 &&
           (o.relax == "jacobi" || o.relax == "spai0" || o.relax == "chebyshev");
}

/* b as cmrscl-run solve makes it (tools/cli/cmd_solve.c, make_rhs): ones, or uniform in
 * [-1, 1] from the same xorshift and seed. */
std::vector<double> right_hand_side(size_t n, bool random)
{
    std::vector<double> b(n, 1.0);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; random && i < n; ++i) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        b[i] = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
    }
    return b;
}

template <class Real, template <class> class Relax>
int run(const cmrscl_csr &a, const options &o)
{
    typedef amgcl::backend::cuda<Real> Backend;
    typedef amgcl::make_solver<
        amgcl::amg<Backend, amgcl::coarsening::smoothed_aggregation, Relax>,
        amgcl::solver::cg<Backend>>
        Solver;
    size_t n = (size_t)a.rows;
    std::vector<ptrdiff_t> ptr(a.row_ptr, a.row_ptr + n + 1), col(a.col_ind, a.col_ind + a.nnz);
    std::vector<Real> val(a.values, a.values + a.nnz);
    std::vector<double> b = right_hand_side(n, o.random_rhs);
    std::vector<Real> bh(b.begin(), b.end());
    auto A = std::tie(n, ptr, col, val);
    typename Backend::params bprm;
    cusparseCreate(&bprm.cusparse_handle);
    typename Solver::params prm;
    prm.solver.tol = o.tol;
    prm.solver.maxiter = 100000;
    double bnorm = 0;
    for (double v : b)
        bnorm += v * v;
    bnorm = std::sqrt(bnorm);
    for (int rep = 0; rep < o.reps; ++rep) {
        cudaDeviceSynchronize();
        double t0 = seconds();
        Solver solve(A, prm, bprm);
        cudaDeviceSynchronize();
        double t1 = seconds();
        thrust::device_vector<Real> f(bh), x(n, Real(0));
        cudaDeviceSynchronize();
        double t2 = seconds();
        int iterations = 0;
        double error = 0;
        std::tie(iterations, error) = solve(f, x);
        cudaDeviceSynchronize();
        double t3 = seconds();
        std::vector<Real> xh(n);
        thrust::copy(x.begin(), x.end(), xh.begin());
        std::vector<double> xd(xh.begin(), xh.end()), r(b); /* r = b - A x, in double */
        cmrscl_csr_spmv(&a, -1.0, xd.data(), 1.0, r.data());
        double rr = 0;
        for (double v : r)
            rr += v * v;
        if (rep == 0) { /* amgcl's own report: levels, complexities, memory */
            std::ostringstream report;
            report << solve.precond();
            std::printf("%s\n", report.str().c_str());
        }
        std::printf("amgcl      %s %s, relax %s: setup %.4f s, solve %.4f s (%d iterations, "
                    "%.4f ms each), amgcl's residual %.3e, ||b - A x|| / ||b|| %.3e\n",
                    o.matrix.c_str(), o.single ? "float" : "double", o.relax.c_str(), t1 - t0,
                    t3 - t2, iterations, iterations ? (t3 - t2) * 1e3 / iterations : 0.0, error,
                    std::sqrt(rr) / bnorm);
        std::fflush(stdout);
    }
    cusparseDestroy(bprm.cusparse_handle);
    return 0;
}

template <class Real> int run_relax(const cmrscl_csr &a, const options &o)
{
    if (o.relax == "spai0")
        return run<Real, amgcl::relaxation::spai0>(a, o);
    if (o.relax == "chebyshev")
        return run<Real, amgcl::relaxation::chebyshev>(a, o);
    return run<Real, amgcl::relaxation::damped_jacobi>(a, o);
}

} // namespace

int main(int argc, char **argv)
{
    options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr, "usage: cmrscl-peer-amgcl (-g SPEC | FILE) [-p double|float] "
                             "[--tol R] [--rhs ones|random] [--relax jacobi|spai0|chebyshev] "
                             "[-r N]\n");
        return 2;
    }
    cmrscl_csr a;
    cmrscl_status st = o.generated ? cmrscl_csr_generate(o.matrix.c_str(), &a)
                                   : cmrscl_mtx_read(o.matrix.c_str(), NULL, &a);
    if (st != CMRSCL_OK) {
        std::fprintf(stderr, "cmrscl-peer-amgcl: %s: %s\n", o.matrix.c_str(),
                     cmrscl_last_error());
        return 1;
    }
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    std::printf("device     %s; amgcl (CUDA backend), CG\n", prop.name);
    int rc = o.single ? run_relax<float>(a, o) : run_relax<double>(a, o);
    cmrscl_csr_free(&a);
    return rc;
}
