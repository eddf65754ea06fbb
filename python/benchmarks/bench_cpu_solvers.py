"""The solvers per iteration on a CPU's OpenCL (PoCL, Intel's runtime) against scipy's on the
same machine: for each matrix and method, cmrscl.linalg.solve's time per iteration (the
library's own figure: the iterations alone, between the host's first and last read) and
scipy.sparse.linalg's (the whole call over the iterations its callback counted), both running
a fixed number of iterations (a tolerance no solve meets), the two in turn, median of
--repetitions (and the best of each, the last column: the machine's own noise left out). Above 1
in the ratios: cmrscl is faster.

    CMRSCL_DEVICE=Portable python3 python/benchmarks/bench_cpu_solvers.py
        [--spec SPEC ... [--methods cg,bicgstab,gmres]] [--iterations 200]
        [--precision double|float] [--repetitions 3]
"""
import argparse
import statistics
import time

import numpy as np
import scipy.sparse.linalg as sla

import cmrscl
import cmrscl.linalg as la

# (matrix, its methods): CG on the symmetric positive definite ones
SPECS = [("stencil7:40", "cg,bicgstab,gmres"), ("stencil27:40", "cg,bicgstab,gmres"),
         ("fem:26:3", "cg,bicgstab,gmres"), ("convdiff:40", "bicgstab,gmres")]


def scipy_solve(method, A, b, iterations, restart):
    """scipy's time per iteration of `method` over `iterations` (inner ones for gmres)."""
    count = [0]

    def counter(_):
        count[0] += 1

    kw = {"callback": counter, "atol": 0.0}
    try:  # scipy >= 1.12 spells it rtol
        sla.cg(A[:2, :2], b[:2], rtol=1e-30, maxiter=1)
        kw["rtol"] = 1e-300
    except TypeError:
        kw["tol"] = 1e-300
    t = time.perf_counter()
    if method == "gmres":
        sla.gmres(A, b, restart=restart, maxiter=max(1, iterations // restart),
                  callback_type="pr_norm", **kw)
    else:
        getattr(sla, method)(A, b, maxiter=iterations, **kw)
    t = time.perf_counter() - t
    return t / max(count[0], 1), count[0]


def ours(method, M, b, iterations, restart):
    _, r = la.solve(M, b, method=method, rtol=1e-300, maxiter=iterations,
                    restart=restart if method == "gmres" else None)
    if r.iterations < iterations:
        raise RuntimeError(f"{method} stopped after {r.iterations} iterations ({r.reason})")
    return r.seconds_per_iteration, r.iterations


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", action="append", help="a generated matrix (default: the suite)")
    ap.add_argument("--methods", default="cg,bicgstab,gmres", help="with --spec")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--restart", type=int, default=20)
    ap.add_argument("--precision", default="double")
    ap.add_argument("--repetitions", type=int, default=3)
    a = ap.parse_args()
    dtype = np.float64 if a.precision == "double" else np.float32
    print(f"{'matrix':<18} {'rows':>8} {'method':<9} {'cmrscl ms/it':>12} {'scipy ms/it':>12} "
          f"{'scipy/cmrscl':>12} {'(best)':>9}")
    for spec, methods in [(s, a.methods) for s in a.spec] if a.spec else SPECS:
        A = cmrscl.generate(spec).astype(dtype)
        b = np.ones(A.shape[0], dtype)
        M = cmrscl.Matrix(A, a.precision)
        for method in methods.split(","):
            ours(method, M, b, 5, a.restart)  # the kernels built, the caches warm
            # the two sides in turn, so that a slow minute of the machine falls on both
            mine, theirs = [], []
            for _ in range(a.repetitions):
                mine.append(ours(method, M, b, a.iterations, a.restart)[0])
                theirs.append(scipy_solve(method, A, b, a.iterations, a.restart)[0])
            med = statistics.median(theirs) / statistics.median(mine)
            print(f"{spec:<18} {A.shape[0]:>8} {method:<9} {1e3 * statistics.median(mine):>12.4f} "
                  f"{1e3 * statistics.median(theirs):>12.4f} {med:>12.2f} "
                  f"{min(theirs) / min(mine):>9.2f}", flush=True)


if __name__ == "__main__":
    main()
