#!/usr/bin/env python3
"""check_doc_links.py - every Markdown link of a tree's docs to a local file resolves.

    tools/ci/check_doc_links.py [--self-test] [--source] ROOT [FILE.md ...]

Reads every `*.md` below ROOT (or the files named, relative to ROOT; with --source, a source
tree's docs: SOURCE_DOCS below, build folders left out) and each inline link
`[text](target)` and image `![alt](target)` outside fenced code blocks and code spans. A
target with a scheme (`https:`, `mailto:`) is left alone; any other is a path relative to the
file (or to ROOT where it starts with `/`), which must exist - a file or a folder - inside
ROOT. Where the target is a Markdown file with a `#fragment` (or the fragment alone, `#x`: the
file itself), the fragment must be one of its headings' anchors as GitHub makes them
(lower case, punctuation but `-` and `_` dropped, spaces as `-`, `-1`, `-2` for repeats).

Run on the source tree (the test `doc_links`) and on an installed tree's share/doc/cmrscl
(`tests/install/run_install_test.cmake`): the docs a user opens must not lead nowhere.
Prints FILE:LINE: target - why for each broken link and exits 1 if there is one; on success
one line with the counts. --self-test first runs it on a made-up tree (broken files, folders
and anchors must be reported; good ones, web links and links in code must not). Standard
library only.
"""
import pathlib
import re
import sys
import tempfile

from doc_check import prose_lines, self_test_passes

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"`[^`]*`")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def anchors(path):
    """The GitHub anchors of a Markdown file's headings."""
    seen, out = {}, set()
    for _, line in prose_lines(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out


def links(path):
    """(line number, target) of each link of a Markdown file outside code."""
    out = []
    for number, line in prose_lines(path):
        for m in LINK.finditer(CODE_SPAN.sub("", line)):
            out.append((number, m.group(1)))
    return out


SOURCE_DOCS = ["*.md", "docs/**/*.md", "python/*.md", "tests/**/*.md"]


def source_docs(root):
    """The Markdown files of a source tree (not those of build folders beside them)."""
    root = pathlib.Path(root)
    return sorted({p.relative_to(root) for g in SOURCE_DOCS for p in root.glob(g)})


def check(root, files=None):
    """(problems, links checked) for the Markdown files below root (or those named)."""
    root = pathlib.Path(root).resolve()
    docs = [root / f for f in files] if files else sorted(root.rglob("*.md"))
    problems, count, cache = [], 0, {}
    for doc in docs:
        if not doc.is_file():
            problems.append("%s: missing" % doc.relative_to(root))
            continue
        for number, target in links(doc):
            if SCHEME.match(target):
                continue
            count += 1
            where = "%s:%d: %s" % (doc.relative_to(root), number, target)
            path, _, fragment = target.partition("#")
            dest = doc if not path else ((root / path.lstrip("/")) if path.startswith("/")
                                         else doc.parent / path).resolve()
            if root != dest and root not in dest.parents:
                problems.append(where + " - outside the tree")
            elif not dest.exists():
                problems.append(where + " - no such file")
            elif fragment and dest.suffix == ".md":
                if dest not in cache:
                    cache[dest] = anchors(dest)
                if fragment not in cache[dest]:
                    problems.append(where + " - no heading with that anchor")
    return problems, count, len(docs)


def self_test():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        top = pathlib.Path(tmp)
        (top / "docs" / "dev").mkdir(parents=True)
        (top / "examples").mkdir()
        (top / "examples" / "cg.c").write_text("int main(void) { return 0; }\n")
        (top / "docs" / "GUIDE.md").write_text(
            "# Guide\n\n## Building and linking: CMake\n\n## Solving\n\n## Solving\n\n"
            "Back [up](../README.md), [cg](../examples/cg.c), [here](#solving-1), "
            "[log](dev/LOG.md#the-floor).\n")
        (top / "docs" / "dev" / "LOG.md").write_text("# Log\n\n## The floor\n\n[guide](../GUIDE.md)\n")
        (top / "README.md").write_text(
            "# Top\n\n[guide](docs/GUIDE.md#building-and-linking-cmake) [web](https://example.org/x)\n"
            "[folder](docs/dev) ![fig](docs/dev) [mail](mailto:a@b.c)\n"
            "`[in code](nowhere.md)`\n```\n[in a block](nowhere.md)\n```\n")
        problems, count, _ = check(top)
        if problems or count != 8:
            failures.append("self-test: a good tree gave %s (%d links)" % (problems, count))
        (top / "README.md").write_text(
            "# Top\n\n[a](docs/NOPE.md) [b](docs/GUIDE.md#nope) [c](#nope) [d](../outside.md)\n"
            "![e](docs/img/fig.png) [f](examples/missing.c)\n")
        problems, _, _ = check(top)
        reported = sorted(p.split(": ", 1)[1].split(" - ")[0] for p in problems)
        expected = sorted(["docs/NOPE.md", "docs/GUIDE.md#nope", "#nope", "../outside.md",
                           "docs/img/fig.png", "examples/missing.c"])
        if reported != expected:
            failures.append("self-test: expected %s reported, got %s" % (expected, reported))
        if not all(p.startswith("README.md:3: ") or p.startswith("README.md:4: ")
                   for p in problems):
            failures.append("self-test: reports without FILE:LINE: %s" % problems)
    return failures


def main(argv):
    args = argv[1:]
    source = "--source" in args
    args = [a for a in args if a != "--source"]
    if args and args[0] == "--self-test":
        if not self_test_passes(self_test, "doc links: self-test passed (broken files, anchors "
                                "and links out of the tree reported; good ones, web links and "
                                "links in code not)"):
            return 1
        args = args[1:]
    if not args:
        print("usage: check_doc_links.py [--self-test] [--source] ROOT [FILE.md ...]")
        return 2
    files = args[1:] or (source_docs(args[0]) if source else None)
    problems, count, docs = check(args[0], files)
    for p in problems:
        print(p)
    if problems:
        print("doc links: %d broken link(s) in %s" % (len(problems), args[0]))
        return 1
    print("doc links: %d local links in %d files under %s, every one resolves"
          % (count, docs, args[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
