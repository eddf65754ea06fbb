#!/usr/bin/env python3
"""test_plot_bench.py - bench/plot_bench.py on a bench CSV without a peer (tests/data/bench):
the report must say the peer is missing instead of showing empty comparisons ("0 of 0", a
cuSPARSE column of dashes), link only figures that exist, and say why when there are none.
On one whose peer was fastest in sliced ELL (sell-peer.csv), the report must show the
speedup over the peer's CSR alone beside the speedup over its best.

    tests/bench/test_plot_bench.py SOURCE_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

source, work = sys.argv[1], sys.argv[2]
csv = os.path.join(source, "tests", "data", "bench", "no-peer.csv")
run = subprocess.run([sys.executable, os.path.join(source, "bench", "plot_bench.py"), csv, work],
                     capture_output=True, text=True)
report = open(os.path.join(work, "report.md")).read() if run.returncode == 0 else ""
failures = []
if run.returncode != 0:
    failures.append(f"plot_bench.py failed ({run.returncode}): {run.stderr.strip()}")
if "No peer's times in this CSV" not in report:
    failures.append("the report does not say that the CSV has no peer")
if re.search(r"\b0 of 0\b", report) or "cuSPARSE |" in report:
    failures.append("the report shows empty comparisons with the peer")
figures = re.findall(r"!\[[^]]*\]\(([^)]+)\)", report)
for fig in figures:
    if not os.path.exists(os.path.join(work, fig)):
        failures.append(f"the report links {fig}, which was not drawn")
if not figures and "No figures: matplotlib is not installed" not in report:
    failures.append("no figures and no word why")
if "speedup_peer" in " ".join(figures):
    failures.append("a figure of the speedup over a peer that is not there")
sell_csv = os.path.join(source, "tests", "data", "bench", "sell-peer.csv")
sell_dir = os.path.join(work, "sell")
run = subprocess.run([sys.executable, os.path.join(source, "bench", "plot_bench.py"), sell_csv,
                      sell_dir], capture_output=True, text=True)
sell = open(os.path.join(sell_dir, "report.md")).read() if run.returncode == 0 else ""
if run.returncode != 0:
    failures.append(f"plot_bench.py failed on sell-peer.csv: {run.stderr.strip()}")
if "over cuSPARSE CSR alone (device time)" not in sell or "| vs CSR alone |" not in sell:
    failures.append("a peer fastest in SELL, but no comparison with its CSR alone")
if not re.search(r"\| SELL \| [0-9.]+ \|", sell):
    failures.append("the SELL row does not name SELL as the peer's algorithm")
for f in failures:
    print("FAIL:", f)
print(f"plot_bench: {len(figures)} figures linked, "
      f"{'all checks passed' if not failures else f'{len(failures)} check(s) failed'}")
sys.exit(1 if failures else 0)
