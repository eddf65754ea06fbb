#!/usr/bin/env python3
"""test_benchmarks_doc.py - docs/dev/benchmarks.md shows the run whose files are in docs/dev/bench/:
its report, rebuilt from docs/dev/bench/bench.csv and bench.json by bench/plot_bench.py, must
give the document's device line and every row of its tables, and every figure the document
links must be in docs/dev/bench/ (drawn from that CSV; the figures themselves are not compared).

    tests/bench/test_benchmarks_doc.py SOURCE_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

source, work = sys.argv[1], sys.argv[2]
bench = os.path.join(source, "docs", "dev", "bench")
doc = open(os.path.join(source, "docs", "dev", "benchmarks.md")).read()
os.makedirs(work, exist_ok=True)
report_path = os.path.join(work, "report.md")
run = subprocess.run([sys.executable, os.path.join(source, "bench", "plot_bench.py"),
                      os.path.join(bench, "bench.csv"), work, "--json",
                      os.path.join(bench, "bench.json"), "--report", report_path],
                     capture_output=True, text=True)
failures = []
if run.returncode != 0:
    failures.append(f"plot_bench.py failed ({run.returncode}): {run.stderr.strip()}")
report = open(report_path).read() if run.returncode == 0 else ""
rows = [line for line in report.splitlines()
        if line.startswith("Device:") or (line.startswith("| ") and not line.startswith("|---"))]
missing = [r for r in rows if r not in doc]
if not rows:
    failures.append("the rebuilt report has no table rows")
for r in missing[:5]:
    failures.append(f"docs/dev/benchmarks.md lacks the CSV's row: {r[:120]}")
for fig in re.findall(r"!\[[^]]*\]\(([^)]+)\)", doc):
    if not os.path.exists(os.path.join(source, "docs", "dev", fig)):
        failures.append(f"docs/dev/benchmarks.md links {fig}, which is not there")
for f in failures:
    print("FAIL:", f)
print(f"benchmarks.md: {len(rows) - len(missing)} of {len(rows)} rows from docs/dev/bench/bench.csv, "
      f"{'all checks passed' if not failures else f'{len(failures)} check(s) failed'}")
sys.exit(1 if failures else 0)
