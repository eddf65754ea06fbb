#!/usr/bin/env python3
"""check_format.py - the C sources as .clang-format lays them out (the house rules).

    tools/ci/check_format.py TOP CLANG_FORMAT

Runs CLANG_FORMAT --dry-run on every .c and .h file under host/, include/, mpi/, tools/,
tests/ and examples/ (not cl/: the kernels' layout is by hand, their macros read as tables) and
fails, naming the files, where it would change one. The layout differs between clang-format's
major versions: the tree follows the one Debian 12 ships (FORMAT_MAJOR); with another the
check is skipped (exit 77) and says so. Standard library only.
"""
import os
import subprocess
import sys

from llvm_version import other_major

FORMAT_MAJOR = 14
FOLDERS = ("host", "include", "mpi", "tools", "tests", "examples")


def main(argv):
    top, tool = argv[1], argv[2]
    other = other_major(tool, FORMAT_MAJOR)
    if other:
        print("format: not checked - %s is not clang-format %d, whose layout the tree follows"
              % (other, FORMAT_MAJOR))
        return 77
    files = sorted(os.path.join(d, f) for folder in FOLDERS
                   for d, _, names in os.walk(os.path.join(top, folder))
                   for f in names if f.endswith((".c", ".h")))
    out = subprocess.run([tool, "--dry-run", "--style=file"] + files, cwd=top,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    bad = sorted({line.split(":", 1)[0] for line in out.splitlines() if ": warning:" in line})
    for f in bad:
        print("format: %s differs from .clang-format's layout (clang-format -i %s)"
              % (os.path.relpath(f, top), os.path.relpath(f, top)))
    print("format: %d files, %d to reformat" % (len(files), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
