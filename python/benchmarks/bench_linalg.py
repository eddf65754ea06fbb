"""cmrscl.linalg.cg on the device against scipy.sparse.linalg.cg on the CPU, as a user who
has a scipy matrix times them: the time to solution of each, transfers included on the device
side (the matrix's creation - conversion, upload, kernels - printed apart, since a solver is
made once for many solves), with the iterations and the true residual ||b - A x|| / ||b|| of
each.

    python3 python/benchmarks/bench_linalg.py [--spec stencil7:100] [--rtol 1e-8]
        [--precision double|float] [--repetitions 3]
"""
import argparse
import time

import numpy as np
import scipy.sparse.linalg as sla

import cmrscl
import cmrscl.linalg as la


def scipy_cg(A, b, rtol, counter):
    try:
        return sla.cg(A, b, rtol=rtol, atol=0, callback=counter)
    except TypeError:  # scipy before 1.12
        return sla.cg(A, b, tol=rtol, atol=0, callback=counter)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", default="stencil7:100")
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--precision", default="double")
    ap.add_argument("--repetitions", type=int, default=3)
    a = ap.parse_args()
    A = cmrscl.generate(a.spec)
    dtype = np.float64 if a.precision == "double" else np.float32
    A = A.astype(dtype)
    b = np.ones(A.shape[0], dtype)
    t0 = time.perf_counter()
    M = cmrscl.Matrix(A, a.precision)
    create = time.perf_counter() - t0
    ours = []
    for _ in range(a.repetitions):
        t0 = time.perf_counter()
        x, result = la.solve(M, b, method="cg", rtol=a.rtol)
        ours.append(time.perf_counter() - t0)
    ours_res = np.linalg.norm(A @ x.astype(np.float64) - b) / np.linalg.norm(b)
    theirs = []
    for _ in range(a.repetitions):
        its = [0]
        t0 = time.perf_counter()
        y, info = scipy_cg(A, b, a.rtol, lambda xk: its.__setitem__(0, its[0] + 1))
        theirs.append(time.perf_counter() - t0)
    theirs_res = np.linalg.norm(A @ y.astype(np.float64) - b) / np.linalg.norm(b)
    device = M.context.device
    print(f"{a.spec}: {A.shape[0]} rows, {A.nnz} entries, {a.precision}, rtol {a.rtol:g}")
    print(f"cmrscl.linalg.cg  on {device.name}: {min(ours) * 1e3:9.2f} ms to solution (b and x "
          f"across the bus included; best of {a.repetitions}), {result.iterations} iterations, "
          f"{result.seconds_per_iteration * 1e6:.1f} us each, ||b - A x|| / ||b|| {ours_res:.2e}; "
          f"the Matrix made once in {create * 1e3:.1f} ms")
    print(f"scipy cg          on the CPU: {min(theirs) * 1e3:9.2f} ms to solution, {its[0]} "
          f"iterations, ||b - A x|| / ||b|| {theirs_res:.2e}")
    print(f"ratio (scipy / cmrscl): {min(theirs) / min(ours):.1f}x; with the Matrix's making "
          f"{min(theirs) / (min(ours) + create):.1f}x")


if __name__ == "__main__":
    main()
