"""Time to solution of AMG-preconditioned CG, cmrscl against PyAMG, on the same machine: the
matrix generated once (cmrscl.generate), b = ones, rtol 1e-8. cmrscl: `cmrscl-run solve -g SPEC
-p double --tol 1e-8 --precond amg` (its set-up and solve times, the solve a median of
--repetitions); PyAMG: smoothed_aggregation_solver(A) with its defaults, then scipy's cg to
rtol 1e-8 with ml.aspreconditioner() as M, each timed (one run: PyAMG's set-up is deterministic
and long). Both report the iterations and ||b - A x|| / ||b||. The last column is PyAMG's total
over cmrscl's.
Not a CI test (PyAMG is not a dependency):

    python3 python/benchmarks/pyamg_time_to_solution.py [--build build] [SPEC ...]
"""
import argparse
import inspect
import os
import re
import subprocess
import time

import numpy as np
import pyamg
import scipy.sparse
import scipy.sparse.linalg as sla

import cmrscl

SPECS = ["stencil7:128", "geo:2000000:8"]


def ours(build, spec, repetitions):
    out = subprocess.run([os.path.join(build, "bin", "cmrscl-run"), "solve", "-g", spec, "-p",
                          "double", "--tol", "1e-8", "--precond", "amg", "-r",
                          str(repetitions)], capture_output=True, text=True).stdout
    setup = float(re.search(r"set-up ([\d.]+) s", out).group(1))
    m = re.search(r"result +(\S+) after (\d+) iterations.*?\(CPU, double\); \|\|b\|\| ([\d.e+-]+)",
                  out)
    cpu = float(re.search(r"([\d.e+-]+) \(CPU, double\)", out).group(1))
    solve = float(re.search(r"solve ([\d.]+) ms", out).group(1)) / 1e3
    return m.group(1), int(m.group(2)), setup, solve, cpu / float(m.group(3))


def theirs(A, b):
    t = time.perf_counter()
    ml = pyamg.smoothed_aggregation_solver(A)
    setup = time.perf_counter() - t
    count = [0]

    def step(_):
        count[0] += 1
    # scipy's CG with the V-cycle as M (PyAMG's own ml.solve(accel="cg") calls a scipy helper
    # whose signature scipy 1.18 changed); rtol spelled as the installed scipy spells it
    kw = {"rtol": 1e-8} if "rtol" in inspect.signature(sla.cg).parameters else {"tol": 1e-8}
    t = time.perf_counter()
    x, _ = sla.cg(A, b, M=ml.aspreconditioner(cycle="V"), maxiter=1000, callback=step, **kw)
    solve = time.perf_counter() - t
    return count[0], setup, solve, np.linalg.norm(b - A @ x) / np.linalg.norm(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("specs", nargs="*", default=SPECS)
    a = ap.parse_args()
    print(f"threads: {os.cpu_count()} cores; PyAMG {pyamg.__version__}")
    print(f"{'matrix':16} {'':7} {'its':>4} {'setup s':>8} {'solve s':>8} {'total s':>8} "
          f"{'||b-Ax||/||b||':>14} {'PyAMG/cmrscl':>12}")
    for spec in a.specs:
        reason, its, setup, solve, rel = ours(a.build, spec, a.repetitions)
        print(f"{spec:16} {'cmrscl':7} {its:4} {setup:8.3f} {solve:8.4f} {setup + solve:8.3f} "
              f"{rel:14.3e} ({reason})", flush=True)
        G = cmrscl.generate(spec)  # PyAMG takes a matrix (not an array) of 32-bit indices
        A = scipy.sparse.csr_matrix((G.data, G.indices.astype(np.int32),
                                     G.indptr.astype(np.int32)), shape=G.shape)
        b = np.ones(A.shape[0])
        pits, psetup, psolve, prel = theirs(A, b)
        print(f"{'':16} {'PyAMG':7} {pits:4} {psetup:8.3f} {psolve:8.4f} {psetup + psolve:8.3f} "
              f"{prel:14.3e} {(psetup + psolve) / (setup + solve):12.1f}", flush=True)


if __name__ == "__main__":
    main()
