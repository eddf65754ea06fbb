#!/usr/bin/env python3
"""compare_solve.py - the library's solvers against what a user writes with cuSPARSE and cuBLAS,
side by side on one NVIDIA GPU, in one run: for each matrix, precision and method,

  cmrscl-peer --solve METHOD   (CSR and SELL, each on a stream and as a CUDA graph)
  cmrscl-run solve --method METHOD --iterations N   (the time per iteration, median of -r)
  cmrscl-run solve --method METHOD --tol R          (the time to solution)

and prints the time per iteration of each side (the peer's fastest variant named), their
ratio, the iterations and time to solution of each, and the true residuals.

    bench/compare_solve.py [-g SPEC]... [--suite FILE]... [--methods cg,pcg,bicgstab]
                           [-p float,double] [--iterations N] [--tol R] [--reps N]
                           [--renumber none|hubs] [--values auto|plain|float|dict|diagonal]
                           [--build DIR] [--out DIR]

--suite reads a suite file's specs (bench/suite-spd.txt: SPD matrices for CG; '#' starts a
comment; a kron: factor's path is relative to the file). --renumber hubs has our side store
each matrix renumbered (cmrscl-run --renumber; the peer multiplies the matrix as given);
--values asks our side for a values codec (cmrscl-run --values: plain against auto shows what
the codecs buy).

Both tools generate the matrices through libcmrscl: the same matrix bit for bit. The ratio is
the peer's time over ours (above 1: ours is faster). Standard library only.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

DEFAULT_MATRICES = ["stencil7:32", "stencil7:64", "stencil7:128", "stencil27:100", "fem:80:2"]


def run(cmd, log):
    log.write("$ " + " ".join(cmd) + "\n")
    log.flush()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log.write(p.stdout + p.stderr)
    return p


def ours(build, spec, precision, method, extra, log):
    cmd = [os.path.join(build, "bin", "cmrscl-run"), "solve", "-g", spec, "-p", precision,
           "--method", method, "--json"] + extra
    p = run(cmd, log)
    try:
        return json.loads(p.stdout)
    except ValueError:
        sys.stderr.write("compare_solve: %s failed: %s\n" % (" ".join(cmd), p.stderr.strip()))
        return None


def peer(build, spec, precision, method, iterations, tol, out, log):
    path = os.path.join(out, "peer-%s-%s-%s.csv" % (label(spec).replace(":", "_"), precision,
                                                     method))
    cmd = [os.path.join(build, "bin", "cmrscl-peer"), "--solve", method, "-g", spec, "-p",
           precision, "--iterations", str(iterations), "--tol", str(tol), "--csv", path]
    p = run(cmd, log)
    if p.returncode != 0 or not os.path.exists(path):
        sys.stderr.write("compare_solve: the peer failed on %s: %s\n" % (spec, p.stderr[-300:]))
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def read_suite(path):
    """The specs of a suite file, kron: factors' paths made absolute from the file's folder."""
    specs, folder = [], os.path.dirname(os.path.abspath(path))
    with open(path) as f:
        for line in f:
            spec = line.split("#")[0].strip()
            lap = "lap:" if spec.startswith("lap:kron:") else ""  # a Kronecker product's Laplacian
            if spec[len(lap):].startswith("kron:"):
                spec = lap + "kron:" + ":".join(os.path.normpath(os.path.join(folder, p))
                                                for p in spec[len(lap) + 5:].split(":"))
            if spec:
                specs.append(spec)
    return specs


def label(spec):
    """A spec as the table prints it: kron's factors by their file names."""
    lap = "lap:" if spec.startswith("lap:kron:") else ""
    if not spec[len(lap):].startswith("kron:"):
        return spec
    return lap + "kron:" + ":".join(os.path.basename(p).replace(".mtx", "")
                                    for p in spec[len(lap) + 5:].split(":"))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-g", "--gen", action="append", dest="matrices")
    ap.add_argument("--suite", action="append", default=[])
    ap.add_argument("--methods", default="cg,pcg,bicgstab")
    ap.add_argument("-p", "--precisions", default="double,float")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--renumber", choices=("none", "hubs"), default="none")
    ap.add_argument("--values", choices=("auto", "plain", "float", "dict", "diagonal"),
                    default="auto")
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="solve-results")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    log = open(os.path.join(a.out, "compare_solve.log"), "w")
    rows = []
    header = ("%-16s %-6s %-8s %9s %9s %-12s %6s | %5s %9s %5s %9s %6s | %9s %9s"
              % ("matrix", "prec", "method", "ours ms", "peer ms", "peer best", "x", "its",
                 "ours ms", "its", "peer ms", "x", "true res", "peer res"))
    print("time per iteration (%d iterations, median of %d)   |   time to ||r|| <= %g ||b||   |"
          % (a.iterations, a.reps, a.tol))
    print(header)
    matrices = (a.matrices or []) + [spec for path in a.suite for spec in read_suite(path)]
    numbering = ["--renumber", a.renumber, "--values", a.values]
    for spec in matrices or DEFAULT_MATRICES:
        for precision in a.precisions.split(","):
            for method in a.methods.split(","):
                count = a.iterations
                fixed = ours(a.build, spec, precision, method,
                             ["--iterations", str(count), "-r", str(a.reps)] + numbering, log)
                if fixed and 10 <= fixed["iterations"] < count:
                    # the method reached the precision's end (r = 0, a NaN) before N: both sides
                    # time the iterations it runs
                    count = fixed["iterations"] - 2
                    fixed = ours(a.build, spec, precision, method,
                                 ["--iterations", str(count), "-r", str(a.reps)] + numbering,
                                 log)
                solved = ours(a.build, spec, precision, method,
                              ["--tol", str(a.tol), "-r", str(a.reps)] + numbering, log)
                theirs = peer(a.build, spec, precision, method, count, a.tol, a.out, log)
                if not fixed or not solved or not theirs:
                    continue
                best = min(theirs, key=lambda r: float(r["iteration_ms"]))
                fastest_solve = min(theirs, key=lambda r: float(r["solve_ms"]))
                speed = float(best["iteration_ms"]) / fixed["iteration_ms"]
                solve_speed = float(fastest_solve["solve_ms"]) / solved["solve_ms"]
                row = {"matrix": spec, "precision": precision, "method": method,
                       "renumber": a.renumber, "values": a.values,
                       "timed_iterations": count,
                       "ours_iteration_ms": fixed["iteration_ms"],
                       "peer_iteration_ms": float(best["iteration_ms"]),
                       "peer_best": best["format"] + "/" + best["mode"], "iteration_ratio": speed,
                       "ours_iterations": solved["iterations"],
                       "ours_solve_ms": solved["solve_ms"],
                       "peer_iterations": int(fastest_solve["solve_iterations"]),
                       "peer_solve_ms": float(fastest_solve["solve_ms"]),
                       "solve_ratio": solve_speed,
                       "ours_true_residual": solved["cpu_true_residual"],
                       "peer_true_residual": float(fastest_solve["true_residual"]),
                       "b_norm": solved["b_norm"], "converged": solved["converged"],
                       "launches": fixed["launches_per_iteration"]}
                rows.append(row)
                # a residual the CLI did not compute (a solve that ended in NaN) prints as "-"
                residuals = tuple("%9.2e" % v if v is not None else "%9s" % "-"
                                  for v in (row["ours_true_residual"], row["peer_true_residual"]))
                print("%-16s %-6s %-8s %9.4f %9.4f %-12s %6.2f | %5d %9.3f %5d %9.3f %6.2f | "
                      "%s %s" % ((label(spec), precision, method, row["ours_iteration_ms"],
                                  row["peer_iteration_ms"], row["peer_best"], speed,
                                  row["ours_iterations"], row["ours_solve_ms"],
                                  row["peer_iterations"], row["peer_solve_ms"], solve_speed)
                                 + residuals))
                sys.stdout.flush()
    with open(os.path.join(a.out, "compare_solve.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
