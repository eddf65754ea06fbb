#!/usr/bin/env python3
"""test_summary.py - what one run of the test suite checked, from CTest's JUnit file.

    tools/ci/test_summary.py JUNIT.xml [--name IMPLEMENTATION] [--expected-skips FILE]
                             [--require-oclgrind]

Prints the device the tests ran on (from their own output), how many passed, failed and were
skipped, and every skipped test grouped under the reason it printed ("skipped: ..."): a test
that could not run its path says so and is never counted as checked. Exits 1 when a test
failed, a skipped test gave no reason, no test ran at all, or (with the options) a test
skipped that the implementation's list does not expect to, a listed test ran instead of
skipping, a line of the list named no test, or no Oclgrind check ran. The list (tools/ci/
expected-skips/): a test name or shell pattern a line, '#' comments. Standard library only.
"""
import argparse
import collections
import fnmatch
import re
import sys
import xml.etree.ElementTree as ET


def read(path):
    """(name, status, output) of every test case: status run, fail or notrun."""
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        out = case.findtext("system-out") or ""
        yield case.get("name"), case.get("status"), out


def device_of(outputs):
    """The most frequent 'device P:D NAME (PLATFORM)' line the tests printed."""
    seen = collections.Counter()
    for out in outputs:
        m = re.search(r"^device \d+:\d+ (.*?)(?:, warp|, sub-group|;|$)", out, re.M)
        if m:
            seen[m.group(1)] += 1
    return seen.most_common(1)[0][0] if seen else "(no test named its device)"


# What CTest's SKIP_REGULAR_EXPRESSION skips on (tests/CMakeLists.txt, CMRSCL_TEST_NO_FP64):
# the library's or bench's words for a device without fp64, and a user's work-group the
# device's kernels cannot run.
SKIP_MESSAGES = [(re.compile(r"double precision needs cl_khr_fp64|double skipped, the device "
                             r"has no fp64"), "the device has no fp64"),
                 (re.compile(r"work-group size (\d+) exceeds the device's maximum of (\d+)"),
                  "the device's kernels run fewer work-items a group than the test asks")]


def reason_of(output):
    """The reason a skipped test gave, or None."""
    m = re.search(r"^skipped: (.*)$", output, re.M)
    if m:
        return m.group(1).strip()
    return next((why for pattern, why in SKIP_MESSAGES if pattern.search(output)), None)


def skip_problems(path, cases):
    """What disagrees between the list of expected skips in `path` and the run."""
    with open(path, encoding="utf-8") as f:
        patterns = [line.split("#")[0].strip() for line in f]
    patterns = [p for p in patterns if p]
    problems = []
    for p in patterns:
        named = [(n, s) for n, s, _ in cases if fnmatch.fnmatchcase(n, p)]
        if not named:
            problems.append(f"'{p}' (expected to skip) names no test of this run")
        problems += [f"{n} was expected to skip ('{p}') but {'ran' if s == 'run' else 'failed'}"
                     for n, s in named if s != "notrun"]
    problems += [f"{n} skipped, which {path} does not expect" for n, s, _ in cases
                 if s == "notrun" and not any(fnmatch.fnmatchcase(n, p) for p in patterns)]
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("junit")
    ap.add_argument("--name", default="", help="the implementation, for the heading")
    ap.add_argument("--expected-skips", help="the tests this implementation must skip")
    ap.add_argument("--require-oclgrind", action="store_true",
                    help="fail when no Oclgrind kernel check ran")
    args = ap.parse_args()
    cases = list(read(args.junit))
    passed = [n for n, s, _ in cases if s == "run"]
    failed = [n for n, s, _ in cases if s == "fail"]
    skipped = collections.defaultdict(list)
    for n, s, out in cases:
        if s == "notrun":
            skipped[reason_of(out) or "NO REASON GIVEN"].append(n)
    heading = args.name or "tests"
    print(f"== {heading}: {device_of(out for _, _, out in cases)}")
    print(f"   {len(cases)} tests: {len(passed)} passed, {len(failed)} failed, "
          f"{sum(map(len, skipped.values()))} skipped")
    oclgrind = [n for n, _, _ in cases if n.startswith("oclgrind_")]
    if not oclgrind:
        print("   Oclgrind kernel checks: none in this run (oclgrind not installed, or not "
              "selected)")
    for reason, names in sorted(skipped.items(), key=lambda kv: -len(kv[1])):
        print(f"   skipped {len(names)}: {reason}")
        print("      " + " ".join(sorted(names)))
    for n in failed:
        print(f"   FAILED: {n}")
    problems = [] if passed else ["no test passed: nothing was checked"]
    if args.expected_skips:
        problems += skip_problems(args.expected_skips, cases)
    if args.require_oclgrind and not any(s == "run" for n, s, _ in cases
                                         if n.startswith("oclgrind_")):
        problems.append("no Oclgrind kernel check ran, and this run requires them")
    for p in problems:
        print(f"   PROBLEM: {p}")
    bad = failed or "NO REASON GIVEN" in skipped or problems
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
