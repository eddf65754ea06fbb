#!/usr/bin/env python3
"""rule_vs_tuned.py - the plan rule against the tuner, matrix by matrix, on CMRSCL_DEVICE.

    bench/rule_vs_tuned.py [--build DIR] [-p float|double] [--rounds N] [--reps R] [--warmup W]
                           MATRIX|SPEC...

For each matrix: `cmrscl-run tune` records the fastest plan in a tuning database of its own,
then `cmrscl-run spmv -r R --warmup W` (defaults 50 and 5; on CPUs the first few dozen
products of a process run slower: give W 50 there) runs N times (default 4) with the database off (the
rule's plan) and N times with it (the tuned plan), alternated, each first in turn (on a small
machine a run right after another is faster); prints the median of each N kernel medians
(ms), their ratio, the ratio of the fastest products of each side (min) and both plans ("the same plan" where their build options agree). Products of a few microseconds (launch-sized)
need more rounds and repetitions than large ones for a steady ratio. The tuner's own table is not used for the ratio: its
fastest of many noisy timings is biased low. Standard library only.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def run(cli, args, db):
    env = dict(os.environ, CMRSCL_TUNING_DB=db)
    return subprocess.run([cli] + args, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True).stdout


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("-p", "--precision", default="float")
    ap.add_argument("--rounds", type=int, default=4)  # even: each side first as often
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("matrices", nargs="+")
    a = ap.parse_args(argv)
    cli = os.path.join(a.build, "bin", "cmrscl-run")
    with tempfile.TemporaryDirectory() as tmp:
        for k, m in enumerate(a.matrices):
            args = [m] if m.endswith((".mtx", ".mtx.gz")) else ["-g", m]
            db = os.path.join(tmp, "tuning-%d.txt" % k)
            run(cli, ["tune"] + args + ["-p", a.precision, "-r", "30"], db)
            times = {"rule": [], "tuned": []}
            mins = {"rule": [], "tuned": []}
            plans, options = {}, {}
            pair = (("rule", "off"), ("tuned", db))
            failed = False
            for rnd in range(a.rounds):  # each first in turn: a run after another runs faster
                for which, d in pair if rnd % 2 == 0 else pair[::-1]:
                    if failed:
                        break
                    out = run(cli, ["spmv"] + args + ["-p", a.precision, "-r", str(a.reps),
                                                "--warmup", str(a.warmup)], d)
                    t = re.search(r"kernel\s+median\s+([0-9.]+) ms", out)
                    plan = re.search(r"plan\s+(.*)", out)
                    if not t:
                        print("%s: no time (%s)" % (m, out.strip().splitlines()[-1:]))
                        failed = True
                        break
                    times[which].append(float(t.group(1)))
                    fastest = re.search(r"min\s+([0-9.]+) ms", out)
                    if fastest:
                        mins[which].append(float(fastest.group(1)))
                    plans[which] = plan.group(1).split(",")[0:3] if plan else "?"
                    # the plan line (without where its height came from), the split and the
                    # build options: all the plan says
                    said = re.findall(r"^(?:plan\s.*|\s+split:.*|\s+-cl-std\S* .*)$", out, re.M)
                    options[which] = "\n".join(re.sub(r" \([^)]*\)", "", x) for x in said)
            if failed or len(times["rule"]) < a.rounds or len(times["tuned"]) < a.rounds:
                continue
            r, t = median(times["rule"]), median(times["tuned"])
            same = options["rule"] == options["tuned"]
            print("%-24s rule %.4f tuned %.4f rule/tuned %.2f (min %.2f) | rule: %s | tuned: %s"
                  % (os.path.basename(m), r, t, r / t, min(mins["rule"]) / min(mins["tuned"]),
                     ",".join(plans["rule"]),
                     "the same plan" if same else ",".join(plans["tuned"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
