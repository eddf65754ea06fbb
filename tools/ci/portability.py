#!/usr/bin/env python3
"""portability.py - docs/PORTABILITY.md's tables from the test runs of several OpenCL
implementations: for each implementation and kernel variant (family x reduction), whether its
kernel tests ran, were skipped (and why) or failed, and each run's totals.

    tools/ci/portability.py "NAME=JUNIT.xml" ... > docs/PORTABILITY.md.tables

NAME labels a column of results (an implementation and its device); JUNIT is CTest's
--output-junit file of that run (tools/quickstart.sh test and tools/ci-gpu.sh write them).
The kernel tests are named kernel_PRECISION_CASE_REDUCTION[WIDTH] (tests/CMakeLists.txt).
Standard library only.
"""
import collections
import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import test_summary  # noqa: E402  (the JUnit reader, beside this file)

FAMILY = {"strip_packed": "strip", "strip_unpacked": "strip", "strip_narrow": "strip",
          "split_strip": "strip", "segment_packed": "segment", "segment_unpacked": "segment",
          "split_segment": "segment", "modulo": "modulo"}
KERNEL = re.compile(r"^kernel_(float|double)_(.+)_(local|shuffle|subgroup)(\d*)$")


def variant_cells(cases):
    """{variant: text} for one run."""
    by_variant = collections.defaultdict(list)
    for name, status, out in cases:
        m = KERNEL.match(name)
        if m:
            variant = f"{FAMILY[m.group(2)]}/{m.group(3)}"
            by_variant[variant].append((m.group(4), status, out))
    cells = {}
    for variant, tests in by_variant.items():
        ran = sorted({int(w) for w, s, _ in tests if s == "run" and w}, key=int)
        failed = sum(1 for _, s, _ in tests if s == "fail")
        skipped = [(w, test_summary.reason_of(o) or "no reason given") for w, s, o in tests
                   if s == "notrun"]
        passed = sum(1 for _, s, _ in tests if s == "run")
        parts = []
        if passed:
            parts.append(f"run, {passed} passed" + (f" (sub-groups of {' '.join(map(str, ran))})"
                                                   if ran else ""))
        if failed:
            parts.append(f"**{failed} FAILED**")
        if skipped:
            widths = sorted({int(w) for w, _ in skipped if w})
            reasons = sorted({r for _, r in skipped})
            parts.append(f"skipped {len(skipped)}" +
                         (f" (widths {' '.join(map(str, widths))})" if widths else "") +
                         ": " + "; ".join(reasons))
        cells[variant] = "; ".join(parts)
    return cells


def main(argv):
    runs = []
    for arg in argv[1:]:
        name, _, path = arg.partition("=")
        runs.append((name, list(test_summary.read(path))))
    variants = sorted({v for _, cases in runs for v in variant_cells(cases)},
                      key=lambda v: (v.split("/")[0] != "strip", v))
    print("| implementation | " + " | ".join(f"`{v}`" for v in variants) + " |")
    print("|---" * (len(variants) + 1) + "|")
    for name, cases in runs:
        cells = variant_cells(cases)
        print(f"| {name} | " + " | ".join(cells.get(v, "-") for v in variants) + " |")
    print()
    print("| implementation | device (as the tests printed it) | tests | passed | failed | "
          "skipped |")
    print("|---|---|---|---|---|---|")
    for name, cases in runs:
        count = collections.Counter(s for _, s, _ in cases)
        device = test_summary.device_of(out for _, _, out in cases)
        print(f"| {name} | {device} | {len(cases)} | {count['run']} | {count['fail']} | "
              f"{count['notrun']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
