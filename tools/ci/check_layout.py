#!/usr/bin/env python3
"""check_layout.py - the house rules of docs/dev/ARCHITECTURE.md, checked on the source tree:

  1. no C or OpenCL source file over 600 lines;
  2. no circle of calls between the files of one program or library, of any length: two files
     that call each other (a function defined in one, called in the other, and the other way
     round), or a chain a -> b -> c -> a; each circle is printed as its chain of files with
     the functions that make each step;
  3. the library's stages (host/) in pipeline order - base, io, format, plan, runtime, exec,
     precond, solve - each including the headers of its own and earlier stages only, and none
     the old shared header (a stage's folder may not exist yet: precond is in the order before
     it is in the tree).

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
STAGES = ["base", "io", "format", "plan", "runtime", "exec", "precond", "solve"]
# the units whose files may not call each other in a circle
UNITS = ["host", "mpi", "tools/cli", "tools/mpi", "tools/peer", "examples"]
DEFINITION = re.compile(r"^(?!static)[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;]*?\)\s*\{", re.M | re.S)


def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


def definitions(text):
    return {m.group(1) for m in DEFINITION.finditer(text)} - {"if", "for", "while", "switch"}


def components(files, calls):
    """The strongly connected components of the call graph (Tarjan's, without recursion)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for start in files:
        if start in index:
            continue
        work = [(start, iter(sorted(calls[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            f, rest = work[-1]
            g = next(rest, None)
            if g is not None:
                if g not in index:
                    index[g] = low[g] = len(index)
                    stack.append(g)
                    on_stack.add(g)
                    work.append((g, iter(sorted(calls[g]))))
                elif g in on_stack:
                    low[f] = min(low[f], index[g])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[f])
            if low[f] == index[f]:
                component = []
                while True:
                    g = stack.pop()
                    on_stack.discard(g)
                    component.append(g)
                    if g == f:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def shortest_circle(start, members, calls):
    """The shortest circle from start back to start inside one component (breadth first)."""
    came_from = {start: None}
    queue = collections.deque([start])
    while queue:
        f = queue.popleft()
        for g in sorted(calls[f]):
            if g == start:
                chain = [f]
                while came_from[chain[-1]] is not None:
                    chain.append(came_from[chain[-1]])
                return chain[::-1]
            if g in members and g not in came_from:
                came_from[g] = f
                queue.append(g)
    return None


def circles(files, calls):
    """Circles of calls, each a list of files (the last calls the first): for each strongly
    connected component of two or more files, a shortest circle through each of its files,
    each circle once - enough to name every file and every step that ties the component,
    without listing the many circles a large tangle holds."""
    found, seen = [], set()
    for members in components(files, calls):
        members = set(members)
        for start in sorted(members):
            chain = shortest_circle(start, members, calls)
            if chain is None:
                continue
            turn = chain.index(min(chain))
            chain = chain[turn:] + chain[:turn]
            if tuple(chain) not in seen:
                seen.add(tuple(chain))
                found.append(chain)
    return found


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
        # calls[f][g]: the functions of g that f calls
        calls = collections.defaultdict(lambda: collections.defaultdict(set))
        for f, t in text.items():
            for name in set(re.findall(r"\b(\w+)\s*\(", t)):
                g = owner.get(name)
                if g and g != f and name not in defined[f]:
                    calls[f][g].add(name)
        for cycle in circles(files, calls):
            steps = []
            for f, g in zip(cycle, cycle[1:] + cycle[:1]):
                steps.append(f"{f.relative_to(root)} -> {g.relative_to(root)} "
                             f"({', '.join(sorted(calls[f][g]))})")
            what = "call each other" if len(cycle) == 2 else f"call in a circle of {len(cycle)}"
            errors.append(f"{len(cycle)} files {what}: " + "; ".join(steps))
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
          else "check_layout: file sizes, call graph and stage order as docs/dev/ARCHITECTURE.md says")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
