#!/usr/bin/env python3
"""rule_vs_tuned.py - the plan rule against the tuner, matrix by matrix, on CMRSCL_DEVICE.

    bench/rule_vs_tuned.py [--build DIR] [-p float|double] MATRIX|SPEC...

For each matrix: `cmrscl-run tune` records the fastest plan in a tuning database of its own,
then `cmrscl-run spmv` runs three times with the database off (the rule's plan) and three
times with it (the tuned plan), alternated; prints the middle of each three kernel medians
(ms), their ratio and both plans. The tuner's own table is not used for the ratio: its
fastest of many noisy timings is biased low. Standard library only.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def run(cli, args, db):
    env = dict(os.environ, CMRSCL_TUNING_DB=db)
    return subprocess.run([cli] + args, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True).stdout


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("-p", "--precision", default="float")
    ap.add_argument("matrices", nargs="+")
    a = ap.parse_args(argv)
    cli = os.path.join(a.build, "bin", "cmrscl-run")
    with tempfile.TemporaryDirectory() as tmp:
        for k, m in enumerate(a.matrices):
            args = [m] if m.endswith((".mtx", ".mtx.gz")) else ["-g", m]
            db = os.path.join(tmp, "tuning-%d.txt" % k)
            run(cli, ["tune"] + args + ["-p", a.precision, "-r", "30"], db)
            times = {"rule": [], "tuned": []}
            plans = {}
            for _ in range(3):
                for which, d in (("rule", "off"), ("tuned", db)):
                    out = run(cli, ["spmv"] + args + ["-p", a.precision, "-r", "50"], d)
                    t = re.search(r"kernel\s+median\s+([0-9.]+) ms", out)
                    plan = re.search(r"plan\s+(.*)", out)
                    if not t:
                        print("%s: no time (%s)" % (m, out.strip().splitlines()[-1:]))
                        break
                    times[which].append(float(t.group(1)))
                    plans[which] = plan.group(1).split(",")[0:3] if plan else "?"
            if len(times["rule"]) < 3 or len(times["tuned"]) < 3:
                continue
            r, t = sorted(times["rule"])[1], sorted(times["tuned"])[1]
            print("%-24s rule %.4f tuned %.4f rule/tuned %.2f | rule: %s | tuned: %s"
                  % (os.path.basename(m), r, t, r / t, ",".join(plans["rule"]),
                     ",".join(plans["tuned"])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
