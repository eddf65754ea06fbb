"""The host AMG hierarchy of issue 57 (host/precond) against PyAMG's smoothed_aggregation_solver
set up the same way: symmetric strength with theta 0, standard aggregation, the constant
near-null space without improving it, P smoothed by Jacobi with omega 4/3 / rho, max_coarse
500, one sweep of damped Jacobi (4/3 / rho) before and after. For each generated matrix: the
levels' sizes, operator complexity and the iterations of CG to rtol 1e-8 on b = A x*
(x*_i = 1 + (i mod 7) / 7, from x = 0), ours printed by build/bin/test_amg_setup SPEC (its
report mode), PyAMG's through scipy's CG with the hierarchy's V-cycle as M. The last column
is PyAMG with its own defaults (symmetric Gauss-Seidel, improved candidates), for scale.
Not a CI test (PyAMG is not a dependency):

    build-venv/bin/python python/benchmarks/compare_pyamg.py [--build build] [SPEC ...]
"""
import argparse
import os
import re
import subprocess
import tempfile

import numpy as np
import pyamg
import scipy.io
import scipy.sparse.linalg as sla

SPECS = ["stencil5:64", "stencil5:256", "stencil7:16", "stencil7:40", "stencil27:24"]


def pcg_iterations(A, M):
    n = A.shape[0]
    b = A @ (1.0 + (np.arange(n) % 7) / 7.0)
    count = [0]

    def step(_):
        count[0] += 1
    x, info = sla.cg(A, b, rtol=1e-8, maxiter=500, M=M, callback=step)
    assert info == 0, f"CG stopped with info {info}"
    return count[0]


def pyamg_row(A, **changes):
    jacobi = ("jacobi", {"omega": 4.0 / 3.0, "iterations": 1})
    args = dict(strength=("symmetric", {"theta": 0.0}), aggregate="standard",
                smooth=("jacobi", {"omega": 4.0 / 3.0}), presmoother=jacobi,
                postsmoother=jacobi, improve_candidates=None, max_coarse=500, max_levels=10)
    args.update(changes)
    ml = pyamg.smoothed_aggregation_solver(A, **args)
    return ml, pcg_iterations(A, ml.aspreconditioner(cycle="V"))


def ours(build, spec):
    out = subprocess.run([os.path.join(build, "bin", "test_amg_setup"), spec], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"levels (\d+) rows ([\d ]+) nnz [\d ]+ oc ([\d.]+) gc [\d.]+ pcg (\d+) "
                  r"cg (\d+) setup ([\d.]+)", out)
    return (int(m.group(1)), m.group(2).split(), float(m.group(3)), int(m.group(4)),
            int(m.group(5)), float(m.group(6)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("specs", nargs="*", default=SPECS)
    args = ap.parse_args()
    print(f"{'matrix':14} {'':7} {'levels':>6} {'sizes':28} {'op.cx':>6} {'PCG':>4} "
          f"{'CG':>5} {'setup s':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.specs:
            path = os.path.join(tmp, "a.mtx")
            subprocess.run([os.path.join(args.build, "bin", "cmrscl-run"), "gen", "-g", spec,
                            "-o", path], check=True, capture_output=True)
            A = scipy.io.mmread(path).tocsr()
            levels, sizes, oc, pcg, cg, setup = ours(args.build, spec)
            print(f"{spec:14} {'cmrscl':7} {levels:6} {' '.join(sizes):28} {oc:6.3f} {pcg:4} "
                  f"{cg:5} {setup:8.3f}")
            ml, its = pyamg_row(A)
            psizes = " ".join(str(lv.A.shape[0]) for lv in ml.levels)
            ml_default = pyamg.smoothed_aggregation_solver(A, max_coarse=500)
            default_its = pcg_iterations(A, ml_default.aspreconditioner(cycle="V"))
            print(f"{'':14} {'PyAMG':7} {len(ml.levels):6} {psizes:28} "
                  f"{ml.operator_complexity():6.3f} {its:4} {'':5} {'':8} "
                  f"(PyAMG defaults: {default_its}); ours / PyAMG {pcg / its:.2f}")


if __name__ == "__main__":
    main()
