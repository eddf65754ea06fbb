#!/usr/bin/env python3
"""check_layout.py - the house rules of docs/ARCHITECTURE.md, checked on the source tree:

  1. no C or OpenCL source file over 600 lines;
  2. no two files of one program or library that call each other (a function defined in
     one, called in the other, and the other way round);
  3. the library's stages (host/) in pipeline order - base, io, format, plan, runtime, exec, solve -
     each including the headers of its own and earlier stages only, and none the old shared
     header.

    tools/ci/check_layout.py [ROOT]

Prints each breach and exits 1 if there is one (0 otherwise). The call graph is read with
regular expressions, not a compiler: a function is defined where its name and '(' start a
line (after the return type) and the body follows; static functions belong to their file
alone. Standard library only.
"""
import collections
import pathlib
import re
import sys

MAX_LINES = 600
STAGES = ["base", "io", "format", "plan", "runtime", "exec", "solve"]
# the units whose files may not call each other in a circle of two
UNITS = ["host", "mpi", "tools/cli", "tools/mpi", "tools/peer", "examples"]
DEFINITION = re.compile(r"^(?!static)[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;]*?\)\s*\{", re.M | re.S)


def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


def definitions(text):
    return {m.group(1) for m in DEFINITION.finditer(text)} - {"if", "for", "while", "switch"}


def check(root):
    errors = []
    sources = sorted(p for d in ["host", "mpi", "tools", "tests", "examples", "cl"]
                     for p in (root / d).rglob("*") if p.suffix in (".c", ".h", ".cl"))
    for p in sources:
        n = p.read_text(errors="replace").count("\n")
        if n > MAX_LINES:
            errors.append(f"{p.relative_to(root)}: {n} lines (at most {MAX_LINES})")
    for unit in UNITS:
        files = sorted((root / unit).rglob("*.c"))
        text = {f: strip_comments(f.read_text(errors="replace")) for f in files}
        defined = {f: definitions(t) for f, t in text.items()}
        owner = {}
        for f, names in defined.items():
            for name in names:
                owner.setdefault(name, f)
        calls = collections.defaultdict(set)
        for f, t in text.items():
            for name in set(re.findall(r"\b(\w+)\s*\(", t)):
                g = owner.get(name)
                if g and g != f and name not in defined[f]:
                    calls[f].add(g)
        for f in files:
            for g in calls[f]:
                if f < g and f in calls[g]:
                    errors.append(f"{f.relative_to(root)} and {g.relative_to(root)} call each "
                                  f"other")
    for p in sorted((root / "host").rglob("*")):
        if p.suffix not in (".c", ".h") or p.parent.name not in STAGES:
            continue
        mine = STAGES.index(p.parent.name)
        for inc in re.findall(r'#include\s+"([^"]+)"', p.read_text(errors="replace")):
            stage = inc.split("/")[0]
            if inc == "internal.h" or (stage in STAGES and STAGES.index(stage) > mine):
                errors.append(f"{p.relative_to(root)}: includes {inc}, a later stage than "
                              f"{p.parent.name}")
    return errors


def main(argv):
    root = pathlib.Path(argv[1] if len(argv) > 1 else ".").resolve()
    errors = check(root)
    for e in errors:
        print(e)
    print(f"check_layout: {len(errors)} breach(es) of the house rules" if errors
          else "check_layout: file sizes, call graph and stage order as docs/ARCHITECTURE.md says")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
