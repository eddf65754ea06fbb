"""What the Python binding costs, and what it buys a scipy solver (issue 23's targets).

1. Per-product overhead: the C library's back-to-back loop (cmrscl_spmv_time's loop_ms:
   products enqueued from C, waited for once) against the same loop driven from Python
   (M.matvec on device arrays, ctx.finish() once), per product; then numpy in and out
   (M @ x: a copy each way) against the device time.
2. scipy's cg on a 3-D Poisson problem through M.aslinearoperator() (the products on the
   device, numpy vectors copied per product) against scipy's own CSR product on the CPU,
   the same number of iterations each.

    python3 python/benchmarks/bench_python.py [--overhead SPEC,...] [--cg SPEC]
        [--iterations N] [--repetitions R] [--precision float|double]
"""
import argparse
import inspect
import time

import numpy as np
import scipy.sparse.linalg as sla

import cmrscl


def overhead(spec, precision, repetitions):
    A = cmrscl.generate(spec)
    M = cmrscl.Matrix(A, precision)
    ctx = M.context
    c_loop_us = min(M.time(warmup=20, repetitions=repetitions)["loop_ms"] for _ in range(3)) * 1e3
    dx = ctx.to_device(np.ones(A.shape[1], M.dtype))
    dy = ctx.zeros(A.shape[0], M.dtype)
    best = float("inf")
    for _ in range(3):
        for _ in range(20):
            M.matvec(dx, y=dy)
        ctx.finish()
        start = time.perf_counter()
        for _ in range(repetitions):
            M.matvec(dx, y=dy)
        enqueued = time.perf_counter()
        ctx.finish()
        done = time.perf_counter()
        if done - start < best:
            best, enqueue_us = done - start, (enqueued - start) / repetitions * 1e6
    python_loop_us = best / repetitions * 1e6
    x = np.ones(A.shape[1], M.dtype)
    M @ x
    start = time.perf_counter()
    for _ in range(max(repetitions // 10, 10)):
        M @ x
    numpy_us = (time.perf_counter() - start) / max(repetitions // 10, 10) * 1e6
    device_us = M.time(warmup=5, repetitions=50)["median_ms"] * 1e3
    print(f"overhead {spec} {precision} rows={A.shape[0]} nnz={A.nnz}: C loop {c_loop_us:.2f} us"
          f"/product, Python loop {python_loop_us:.2f} us/product (enqueue {enqueue_us:.2f} us),"
          f" difference {python_loop_us - c_loop_us:+.2f} us; numpy in/out M @ x {numpy_us:.1f}"
          f" us (device time {device_us:.1f} us, transfers {numpy_us - device_us:.1f} us)")


def run_cg(operator, b, iterations):
    """cg for exactly `iterations` iterations (a tolerance it cannot reach)."""
    count = [0]

    def callback(_):
        count[0] += 1

    # scipy < 1.12 names the relative tolerance tol, later ones rtol
    relative = "rtol" if "rtol" in inspect.signature(sla.cg).parameters else "tol"
    start = time.perf_counter()
    x, _ = sla.cg(operator, b, atol=0, maxiter=iterations, callback=callback,
                  **{relative: 1e-30})
    return x, time.perf_counter() - start, count[0]


def cg(spec, precision, iterations):
    A = cmrscl.generate(spec)
    M = cmrscl.Matrix(A, precision)
    b = np.ones(A.shape[0])
    ops = {"scipy CSR (CPU)": A.astype(M.dtype), "cmrscl (device)": M.aslinearoperator()}
    times = {}
    for name, op in ops.items():
        run_cg(op, b.astype(M.dtype), 3)  # warm: the kernels built, the caches filled
        x, seconds, done = run_cg(op, b.astype(M.dtype), iterations)
        residual = np.linalg.norm(A @ x - b) / np.linalg.norm(b)
        times[name] = seconds
        print(f"cg {spec} {precision} rows={A.shape[0]} nnz={A.nnz} {name}: {done} iterations "
              f"in {seconds:.3f} s ({seconds / done * 1e3:.2f} ms each), residual {residual:.2e}")
    ratio = times["scipy CSR (CPU)"] / times["cmrscl (device)"]
    print(f"cg {spec} {precision}: cmrscl through LinearOperator is {ratio:.2f}x scipy's CPU "
          f"product ({M.context.device.name})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--overhead", default="stencil7:20,stencil7:100")
    parser.add_argument("--cg", default="stencil7:100")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--repetitions", type=int, default=2000)
    parser.add_argument("--precision", default="double")
    args = parser.parse_args()
    print(f"cmrscl {cmrscl.library_version()} on {cmrscl.default_context().device}")
    for spec in filter(None, args.overhead.split(",")):
        overhead(spec, args.precision, args.repetitions)
    if args.cg:
        cg(args.cg, args.precision, args.iterations)


if __name__ == "__main__":
    main()
