#!/usr/bin/env python3
"""compare_read.py - Matrix Market -> CSR: cmrscl against fast_matrix_market + scipy,
side by side in one run on the same file (issue 8's reading target).

    python3 bench/compare_read.py FILE.mtx [--cmrscl build/bin/cmrscl-run] [--rounds 3]

Each round times both readers once, alternating, so both see the same page cache and
machine load; the best of the rounds is reported, with the ratio. The two CSR matrices
are compared (shape, nonzeros, the sum of the values) so neither side skips work.
Needs fast_matrix_market and scipy (bench/compare_read.sh installs them in a venv)."""
import argparse
import json
import os
import subprocess
import sys
import time

import fast_matrix_market as fmm
import numpy as np
import scipy.sparse


def read_fmm(path):
    t0 = time.perf_counter()
    (data, (rows, cols)), shape = fmm.read_coo(path)
    csr = scipy.sparse.coo_matrix((data, (rows, cols)), shape=shape).tocsr()
    csr.sum_duplicates()
    return time.perf_counter() - t0, csr


def read_cmrscl(exe, path, threads):
    out = subprocess.run([exe, "parse", path, "--json", "-r", "1", "--threads", str(threads)],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    return r["runs"][0]["best_s"], r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--cmrscl", default="build/bin/cmrscl-run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="cmrscl threads (0: all CPUs)")
    a = ap.parse_args()
    mb = os.path.getsize(a.file) / 1e6
    best_fmm = best_cm = float("inf")
    for _ in range(a.rounds):
        t, csr = read_fmm(a.file)
        best_fmm = min(best_fmm, t)
        t, r = read_cmrscl(a.cmrscl, a.file, a.threads)
        best_cm = min(best_cm, t)
    if (r["rows"], r["cols"], r["nnz"]) != (csr.shape[0], csr.shape[1], csr.nnz):
        sys.exit(f"the readers disagree: cmrscl {r['rows']} x {r['cols']}, nnz {r['nnz']}; "
                 f"scipy {csr.shape}, nnz {csr.nnz}")
    print(f"{a.file}: {mb:.1f} MB, {csr.shape[0]} x {csr.shape[1]}, nnz {csr.nnz}, "
          f"{os.cpu_count()} CPUs, best of {a.rounds}")
    print(f"  fast_matrix_market {fmm.__version__} + scipy {scipy.__version__} tocsr: "
          f"{best_fmm:.3f} s ({mb / best_fmm:.0f} MB/s)")
    print(f"  cmrscl-run parse (threads {a.threads or 'all'}): "
          f"{best_cm:.3f} s ({mb / best_cm:.0f} MB/s)")
    print(f"  cmrscl is {best_fmm / best_cm:.2f}x as fast")


if __name__ == "__main__":
    main()
