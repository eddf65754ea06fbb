#!/usr/bin/env python3
"""check_tidy.py - the C sources through clang-tidy with the house's checks (.clang-tidy).

    tools/ci/check_tidy.py [--analyzer] TOP BUILD CLANG_TIDY

Runs CLANG_TIDY -p BUILD (its compile_commands.json) on every .c file under host/ and tools/
that the build compiled - the library and its tools; the tests and examples assert and abort
by design - as many at once as the machine has cores, and fails, printing each warning, where
any file gives one (headers under include/ and host/ are checked through them). The checks
and the reasons for those left out are in .clang-tidy. Without --analyzer the Clang Static
Analyzer's checks (clang-analyzer-*) are left out: they are nearly all of the run's time (about
4 CPU minutes for the tree against 20 s), which the CTest run in CI cannot spare; with it,
every check of .clang-tidy runs (tools/ci/ci-gpu.sh, on a runner of many cores). Tidy's
findings differ between major versions: the tree is kept clean for the one Debian 12 ships
(TIDY_MAJOR); with another the check is skipped (exit 77) and says so. Standard library only.
"""
import concurrent.futures
import json
import os
import subprocess
import sys

from llvm_version import other_major

TIDY_MAJOR = 14
FOLDERS = ("host", "tools")


def main(argv):
    analyzer = "--analyzer" in argv
    args = [a for a in argv[1:] if a != "--analyzer"]
    if len(args) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    top, build, tool = args
    other = other_major(tool, TIDY_MAJOR)
    if other:
        print("tidy: not checked - %s is not clang-tidy %d, whose findings the tree follows"
              % (other, TIDY_MAJOR))
        return 77
    with open(os.path.join(build, "compile_commands.json")) as f:
        compiled = {os.path.realpath(e["file"]) for e in json.load(f)}
    roots = [os.path.realpath(os.path.join(top, d)) + os.sep for d in FOLDERS]
    files = sorted(f for f in compiled if f.endswith(".c") and f.startswith(tuple(roots)))

    def tidy(path):
        checks = [] if analyzer else ["--checks=-clang-analyzer-*"]
        p = subprocess.run([tool, "-p", build, "--quiet"] + checks + [path], cwd=top,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return [line for line in p.stdout.splitlines() if ": warning:" in line or ": error:" in line]

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        found = sorted(set(w for ws in pool.map(tidy, files) for w in ws))
    prefix = os.path.realpath(top) + os.sep
    for w in found:
        print("tidy: " + w.replace(prefix, ""))
    print("tidy: %d files, %d warnings%s" % (len(files), len(found),
                                             "" if analyzer else " (without the analyzer)"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
