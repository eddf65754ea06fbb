#!/usr/bin/env python3
"""bench_diff.py - two versions of cmrscl side by side, from `cmrscl-run bench --csv` files
taken in one lease: per matrix and precision the time before / after (above 1: the new code
is faster), for the device time (median of the profiling events) and the back-to-back loop,
with their geometric means.

    bench/bench_diff.py --before OLD.csv [OLD2.csv ...] --after NEW.csv [NEW2.csv ...]

Several files of one version are rounds of the same run: each row takes the fastest round
(the least disturbed), so that noise between rounds does not read as a change. Rows are
matched by matrix, precision and plan name. Standard library only.
"""
import argparse
import csv
import math
import sys


def fastest(paths):
    """{(matrix, precision, plan_name): (median_ms, loop_ms, plan)} over the rounds."""
    best = {}
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                key = (row["matrix"], row["precision"], row["plan_name"])
                t = (float(row["median_ms"]), float(row["loop_ms"]), row["plan"])
                old = best.get(key)
                best[key] = t if not old else (min(old[0], t[0]), min(old[1], t[1]), t[2])
    return best


def geomean(values):
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", nargs="+", required=True)
    ap.add_argument("--after", nargs="+", required=True)
    args = ap.parse_args()
    before, after = fastest(args.before), fastest(args.after)
    keys = [k for k in before if k in after]
    if not keys:
        print("bench_diff: no matrix is in both runs", file=sys.stderr)
        return 1
    print(f"{'matrix':32} {'prec':6} {'before us':>10} {'after us':>10} {'device':>7} "
          f"{'loop':>7}  plan after")
    device, loop = [], []
    for k in keys:
        (b, bl, _), (a, al, plan) = before[k], after[k]
        device.append(b / a)
        loop.append(bl / al)
        print(f"{k[0]:32} {k[1]:6} {1e3 * b:10.2f} {1e3 * a:10.2f} {b / a:7.3f} {bl / al:7.3f}"
              f"  {plan}")
    print(f"geometric mean, before / after: device {geomean(device):.4f}, loop "
          f"{geomean(loop):.4f} ({len(keys)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
