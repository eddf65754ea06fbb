#!/usr/bin/env python3
"""portability.py - docs/PORTABILITY.md's tables from the test runs of several OpenCL
implementations: for each implementation and kernel variant (family x reduction), whether its
kernel tests ran, were skipped (and why) or failed, and each run's totals.

    tools/ci/portability.py [--update FILE] "NAME=JUNIT.xml" ...

NAME labels a row of results (an implementation and its device); JUNIT is CTest's
--output-junit file of that run (tools/quickstart.sh test and tools/ci/ci-gpu.sh write them).
The kernel tests are named kernel_PRECISION_CASE_REDUCTION[WIDTH] (tests/CMakeLists.txt); a
NAME starting with "Oclgrind" takes the oclgrind_* tests of a run instead (they run under
Oclgrind whatever device the rest used). With --update, the tables replace what lies between the
markers in FILE; else they are printed. Standard library only.
"""
import collections
import re
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import test_summary  # noqa: E402  (the JUnit reader, beside this file)

FAMILY = {"strip_packed": "strip", "strip_unpacked": "strip", "strip_narrow": "strip",
          "split_strip": "strip", "segment_packed": "segment", "segment_unpacked": "segment",
          "split_segment": "segment", "modulo": "modulo", "slice": "slice"}
KERNEL = re.compile(r"^kernel_(float|double)_(.+)_(local|shuffle|subgroup)(\d*)$")
BEGIN = "<!-- tables: tools/ci/portability.py writes from here -->"
END = "<!-- end of the tables -->"


def oclgrind_variant(name):
    """The variant an Oclgrind test checks (all on the local backend), or None."""
    if not name.startswith("oclgrind_") or name == "oclgrind_refuses_warp_primitives":
        return None
    if "segment" in name:
        return "segment/local"
    if "modulo" in name:
        return "modulo/local"
    if "slice" in name:
        return "slice/local"
    if "convert" in name:
        return None
    return "strip/local"


def variant_cells(cases, notes, oclgrind=False):
    """{variant: text} for one run (its Oclgrind tests, with oclgrind); the reasons of skips
    go to `notes` (reason -> number), the cells cite their numbers."""
    by_variant = collections.defaultdict(list)
    for name, status, out in cases:
        m = KERNEL.match(name)
        if oclgrind and oclgrind_variant(name):
            by_variant[oclgrind_variant(name)].append(("", status, out))
        elif oclgrind and name == "oclgrind_refuses_warp_primitives":
            for v in ("strip/shuffle", "strip/subgroup"):
                by_variant[v].append(("", "refused" if status == "run" else status, out))
        elif m and not oclgrind:
            variant = f"{FAMILY[m.group(2)]}/{m.group(3)}"
            by_variant[variant].append((m.group(4), status, out))
    cells = {}
    for variant, tests in by_variant.items():
        ran = sorted({int(w) for w, s, _ in tests if s == "run" and w})
        passed = sum(1 for _, s, _ in tests if s == "run")
        failed = sum(1 for _, s, _ in tests if s == "fail")
        skipped = [(w, test_summary.reason_of(o) or "no reason given") for w, s, o in tests
                   if s == "notrun"]
        parts = []
        if any(s == "refused" for _, s, _ in tests):
            parts.append("refused (checked)")
        if passed:
            parts.append(f"**ran {passed}**" + (f" (widths {' '.join(map(str, ran))})"
                                               if ran else ""))
        if failed:
            parts.append(f"**FAILED {failed}**")
        if skipped:
            refs = sorted({notes.setdefault(r, len(notes) + 1) for _, r in skipped})
            parts.append(f"skipped {len(skipped)} " + " ".join(f"[{n}]" for n in refs))
        cells[variant] = ", ".join(parts)
    return cells


def tables(runs):
    """The markdown tables of [(name, cases)]."""
    lines = []
    notes = {}
    cells = [(name, variant_cells(cases, notes, name.startswith("Oclgrind"))) for name, cases in runs]
    variants = sorted({v for _, c in cells for v in c},
                      key=lambda v: (["strip", "segment", "modulo", "slice"].index(v.split("/")[0]),
                                     ["shuffle", "subgroup", "local"].index(v.split("/")[1])))
    lines.append("| implementation | " + " | ".join(f"`{v}`" for v in variants) + " |")
    lines.append("|---" * (len(variants) + 1) + "|")
    for name, c in cells:
        lines.append(f"| {name} | " + " | ".join(c.get(v, "-") for v in variants) + " |")
    lines.append("")
    for reason, n in sorted(notes.items(), key=lambda kv: kv[1]):
        lines.append(f"[{n}] {reason}  ")
    lines.append("")
    lines.append("| implementation | device (as the tests printed it) | tests | passed | failed "
                 "| skipped |")
    lines.append("|---|---|---|---|---|---|")
    for name, cases in runs:
        if name.startswith("Oclgrind"):
            cases = [c for c in cases if c[0].startswith("oclgrind_")]
        count = collections.Counter(s for _, s, _ in cases)
        device = test_summary.device_of(out for _, _, out in cases)
        lines.append(f"| {name} | {device} | {len(cases)} | {count['run']} | {count['fail']} | "
                     f"{count['notrun']} |")
    return "\n".join(lines)


def main(argv):
    args = argv[1:]
    update = None
    if args[:1] == ["--update"]:
        update, args = args[1], args[2:]
    runs = []
    for arg in args:
        name, _, path = arg.partition("=")
        runs.append((name, list(test_summary.read(path))))
    text = tables(runs)
    if not update:
        print(text)
        return 0
    with open(update) as f:
        doc = f.read()
    head, _, rest = doc.partition(BEGIN)
    _, _, tail = rest.partition(END)
    with open(update, "w") as f:
        f.write(f"{head}{BEGIN}\n{text}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
