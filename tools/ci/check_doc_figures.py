#!/usr/bin/env python3
"""check_doc_figures.py - the docs a user reads quote only figures docs/RESULTS.md has, and
speak to users, not of the project's internal record.

    tools/ci/check_doc_figures.py [--self-test] [ROOT]

The docs a user reads (user_docs below: README.md, CHANGELOG.md, python/README.md, docs/*.md
and docs/api/mainpage.md - not docs/dev/, the developers' docs and engineering log) are
checked for two things:

1. Figures. docs/RESULTS.md is the one current results page; docs/dev/PERFORMANCE.md is the
   history (every measurement, dated) and docs/dev/benchmarks*.md the full tables of earlier
   runs. A user doc may quote a figure only where RESULTS.md holds the same figure, so that no
   doc keeps a number a later measurement has replaced. RESULTS.md itself is not scanned for
   figures.
2. Words of the internal record (RECORD_WORDS below), in every user doc, RESULTS.md included,
   code blocks included: the word "session"; an internal run name - "run AB", "runs Q and R",
   "call F", one to three capitals after run or call that are not a term of the trade
   (ACRONYMS: "run CG", "runs CSR-vector" pass; so does "A" read as the matrix, "run A x");
   an issue reference - "issue 12", "issue #12", "issues 9-11"; "the 2-core (development)
   machine". A user doc names a device, a date and a command instead.

What counts as a figure (regular expressions below; a range such as `1.27-1.75x` or
`0.25-0.45 us` is one figure):

  speedup     a number with a decimal point followed by `x` or ` x`: `1.43x`, `1.08 x`,
              `1.63-3.30 x`. Whole numbers (`2x`, `6000 x 6000`, `53 x entries`) are not
              taken: in these docs they are sizes, counts and round orders of magnitude far
              more often than measurements.
  time        a number with a decimal point and `ms`, `us` or `s`: `0.27 ms`, `21.6 ms`;
              whole numbers (`about 5 us`) are not taken, as for speedups.
  bandwidth   any number with `MB/s`, `GB/s` or `TB/s`: `3 GB/s`, `27.7 GB/s`.
  efficiency  a bare decimal (`0.881`) where it is marked: set in bold (`**0.881**`, how these
              docs set a result) or within 60 characters after the word "efficiency" on its
              line. Other bare decimals (tables of ratios, residuals, versions) are not taken.

A figure passes when RESULTS.md holds the same text, compared after dropping the space before
the unit and bold marks (`1.08 x` on a doc matches `1.08x` on RESULTS.md); an efficiency
passes when its number appears anywhere on RESULTS.md as a number of its own.

Exemptions, for figures that are not measurements:
  - anything inside a fenced code block (``` ... ```) or an inline code span (`...`);
  - a line carrying the HTML comment `<!-- not a result -->`.

RESULTS.md's own rule: every `## ` section must hold at least one source - one paragraph or list
item (its wrapped lines joined; a table row counts alone) with a date (`20YY-MM-DD`), a device
(one of DEVICE_WORDS) and a command in backticks - so that each figure there can be traced to
when, where and how it was measured. The text before the first `## ` (what the page is, how
things are timed) is free.

Prints each figure not on RESULTS.md as FILE:LINE: figure (kind) not on ... | the line, each
word of the record as FILE:LINE: 'words' (what) | the line, and each section of RESULTS.md
without a source, and exits 1 if there is one; on success prints the files checked and how
many figures each quotes. --self-test first runs the checker on a temporary tree (figures of
every kind absent from the page must be reported; present ones, exempt ones and those in code
must not; a section without a source must be; each kind of record word must be reported in a
user doc, RESULTS.md and the changelog included, and not in docs/dev/ nor where the words are
ordinary English) and stops with exit 1 if it does not behave so; the test `doc_figures`
runs it that way.
Standard library only.
"""
import os
import pathlib
import re
import sys
import tempfile

from doc_check import prose_lines, self_test_passes

REQUIRED = ["README.md", "CHANGELOG.md", "docs/USER_GUIDE.md"]
RESULTS = "docs/RESULTS.md"
# Terms of the trade that may follow "run" or "call" in ordinary English ("run CG on it").
ACRONYMS = {"AMG", "API", "CG", "CI", "CPU", "CSR", "ELL", "GPU", "JIT", "MPI", "OK", "PCG", "PTX"}
RECORD_WORDS = [
    ("session", re.compile(r"\b[Ss]essions?\b")),
    ("an internal run name", re.compile(
        r"\b(?:[Rr]uns?|[Cc]alls?) ([A-Z]{1,3})\b(?!\^|\s?x\b)(?:(?:-|, | and )[A-Z]{1,3}\b)*")),
    ("an issue reference", re.compile(r"\b[Ii]ssues? #?\d+(?:\s?[-\u2013]\s?\d+)?")),
    ("the development machine", re.compile(r"\bthe 2-core (?:development )?machine\b")),
]
EXEMPT = "<!-- not a result -->"
DEVICE_WORDS = ["H100", "H200", "NVIDIA", "PoCL", "Intel", "rusticl", "CPU", "GPU"]

NUM = r"\d+(?:\.\d+)?"
DEC = r"\d+\.\d+"
RANGE = r"(?<![\w.])" + NUM + r"(?:\s?[-\u2013]\s?" + NUM + r")?"
SPEEDUP = re.compile(RANGE + r"\s?x(?![\w])")
TIME = re.compile(RANGE + r"\s?(?:ms|us|\u00b5s|s)\b(?!/)")
BANDWIDTH = re.compile(RANGE + r"\s?(?:MB|GB|TB)/s\b")
BOLD_DECIMAL = re.compile(r"\*\*(" + DEC + r")\*\*")
EFFICIENCY_WORD = re.compile(r"[Ee]fficienc(?:y|ies)\b")
BARE_DECIMAL = re.compile(r"(?<![\w.])(" + DEC + r")(?!\w|\.\d)")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
CODE_SPAN = re.compile(r"`[^`]*`")


def normalise(figure):
    figure = figure.replace("\u2013", "-").replace("**", "")
    return re.sub(r"\s+", "", figure)


def has_decimal(figure):
    return "." in figure


def figures_in_line(line):
    """The figures of one line (code spans removed): (kind, text, start) each."""
    text = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
    found, taken = [], []
    for kind, pattern, need_decimal in (("speedup", SPEEDUP, True), ("time", TIME, True),
                                        ("bandwidth", BANDWIDTH, False)):
        for m in pattern.finditer(text):
            if need_decimal and not has_decimal(m.group(0)):
                continue
            if any(a <= m.start() < b for a, b in taken):
                continue
            found.append((kind, m.group(0), m.start()))
            taken.append((m.start(), m.end()))
    marked = [(m.start(1), m.group(1)) for m in BOLD_DECIMAL.finditer(text)]
    for w in EFFICIENCY_WORD.finditer(text):
        window_end = min(len(text), w.end() + 60)
        for m in BARE_DECIMAL.finditer(text, w.end(), window_end):
            marked.append((m.start(1), m.group(1)))
    for start, number in sorted(set(marked)):
        if any(a <= start < b for a, b in taken):
            continue
        found.append(("efficiency", number, start))
        taken.append((start, start + len(number)))
    return sorted(found, key=lambda f: f[2])


def scan(path):
    """(line number, kind, figure, line) for every figure of a doc outside the exemptions."""
    result = []
    for number, line in prose_lines(path):
        if EXEMPT in line:
            continue
        for kind, figure, _ in figures_in_line(line):
            result.append((number, kind, figure, line.strip()))
    return result


def results_holds(text):
    """What RESULTS.md holds: its figures with units, normalised, and every number of its own."""
    units = set()
    for pattern in (SPEEDUP, TIME, BANDWIDTH):
        units.update(normalise(m.group(0)) for m in pattern.finditer(text))
    numbers = set(re.findall(r"(?<![\w.])" + DEC + r"(?![\w]|\.\d)", text))
    return units, numbers


def blocks(lines):
    """The paragraphs and list items of some lines, each joined into one string."""
    out, current = [], []
    for line in lines:
        if not line.strip() or line.lstrip().startswith(("- ", "* ", "|")):
            if current:
                out.append(" ".join(current))
            current = [line] if line.strip() else []
        else:
            current.append(line)
    if current:
        out.append(" ".join(current))
    return out


def is_source(block):
    return bool(DATE.search(block) and CODE_SPAN.search(block) and
                any(re.search(r"\b" + w + r"\b", block) for w in DEVICE_WORDS))


def results_sections(text):
    """Each `## ` section of RESULTS.md without a source: a date, a device and a command."""
    missing, title, lines = [], None, []

    def close():
        if title is not None and not any(is_source(b) for b in blocks(lines)):
            missing.append(title)

    for line in text.splitlines():
        if line.startswith("## "):
            close()
            title, lines = line[3:].strip(), []
        elif title is not None:
            lines.append(line)
    close()
    return missing


def user_docs(root):
    """The docs a user reads, relative to root: not docs/dev/ (nor any other folder of docs/)."""
    root = pathlib.Path(root)
    found = [p for p in ("README.md", "CHANGELOG.md", "python/README.md", "docs/api/mainpage.md")
             if (root / p).is_file()]
    found += sorted(str(p.relative_to(root)) for p in root.glob("docs/*.md"))
    return found


def record_words(path):
    """(line number, what, words, line) for every word of the internal record in a doc."""
    result = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for what, pattern in RECORD_WORDS:
            for m in pattern.finditer(line):
                if what == "an internal run name" and m.group(1) in ACRONYMS:
                    continue
                result.append((number, what, m.group(0), line.strip()))
    return result


def check(root, docs=None, quiet=False):
    """Returns the problems found (strings); prints the summary on success unless quiet.
    docs: the user docs (default: user_docs(root)); figures are looked for in all but
    RESULTS.md, the record's words in all."""
    root = pathlib.Path(root)
    results_path = root / RESULTS
    if not results_path.is_file():
        return ["%s: missing" % RESULTS]
    results_text = results_path.read_text(encoding="utf-8")
    units, numbers = results_holds(results_text)
    problems, counts = [], []
    for title in results_sections(results_text):
        problems.append("%s: section '## %s' has no paragraph or list item with a date "
                        "(20YY-MM-DD), a device (%s) and a command in backticks"
                        % (RESULTS, title, ", ".join(DEVICE_WORDS)))
    if docs is None:
        docs = user_docs(root)
        problems += ["%s: missing" % d for d in REQUIRED if d not in docs]
    for doc in docs:
        path = root / doc
        if not path.is_file():
            problems.append("%s: missing" % doc)
            continue
        for number, what, words, line in record_words(path):
            context = line if len(line) <= 160 else line[:157] + "..."
            problems.append("%s:%d: '%s' (%s) in a doc a user reads | %s"
                            % (doc, number, words, what, context))
        if doc == RESULTS:
            continue
        found = scan(path)
        counts.append((doc, len(found)))
        for number, kind, figure, line in found:
            held = figure in numbers if kind == "efficiency" else normalise(figure) in units
            if not held:
                context = line if len(line) <= 160 else line[:157] + "..."
                problems.append("%s:%d: %s (%s) not on %s | %s"
                                % (doc, number, figure, kind, RESULTS, context))
    if not problems and not quiet:
        total = sum(n for _, n in counts)
        print("doc figures: %d figures in %d docs, every one on %s; %s's sections each name a "
              "date, device and command; no doc a user reads speaks of sessions, internal runs "
              "or issues" % (total, len(counts), RESULTS, RESULTS))
        for doc, n in counts:
            print("  %-22s %d" % (doc, n))
    return problems


def self_test():
    """The checker on a made-up doc and results page; returns the failures (strings)."""
    failures = []
    results = ("# Results\n\nFree text: 9.99x here is not a source.\n\n"
               "## Product\n\n| what | figure |\n|---|---|\n| mean | 1.26x |\n| loop | 43.4 us |\n"
               "| strong efficiency | 0.881 |\n| copy | 27.7 GB/s |\n\n"
               "- 2026-11-27, NVIDIA H100: `bench/compare.sh`\n")
    doc = ("# Doc\n\nIt runs 1.26 x the peer, 43.4 us an iteration, 27.7 GB/s, strong **0.881**.\n"
           "It runs 1.44x the peer, 0.27 ms a product, 3 GB/s, a range 1.1-1.5 x.\n"
           "Efficiency on four GPUs 0.777.\n"
           "An example, 7.77x <!-- not a result -->\n"
           "```\n$ cmrscl-run spmv\n0.0361 ms 8.88x\n```\n"
           "Inline `-r 0.5 s` and a 6000 x 6000 matrix, 2x the rows, about 5 us.\n")
    with tempfile.TemporaryDirectory() as tmp:
        top = pathlib.Path(tmp)
        (top / "docs").mkdir()
        (top / RESULTS).write_text(results, encoding="utf-8")
        (top / "README.md").write_text(doc, encoding="utf-8")
        problems = check(top, docs=["README.md"], quiet=True)
        reported = {p.split(": ", 1)[1].split(" (")[0] for p in problems}
        expected = {"1.44x", "0.27 ms", "3 GB/s", "1.1-1.5 x", "0.777"}
        if reported != expected:
            failures.append("self-test: expected %s reported alone, got %s" % (sorted(expected),
                                                                          sorted(reported)))
        if not all(p.startswith("README.md:") for p in problems):
            failures.append("self-test: reports without FILE:LINE: %s" % problems)
        good = doc.replace("1.44x", "1.26x").replace("0.777", "0.881").replace("0.27 ms", "43.4 us")
        good = good.replace("3 GB/s", "27.7 GB/s").replace("1.1-1.5 x", "1.26 x")
        (top / "README.md").write_text(good, encoding="utf-8")
        if check(top, docs=["README.md"], quiet=True):
            failures.append("self-test: a doc whose figures are all on the page failed")
        (top / RESULTS).write_text(results + "\n## Solvers\n\nCG 1.96x (no date, no command)\n",
                                   encoding="utf-8")
        problems = check(top, docs=["README.md"], quiet=True)
        if not any("'## Solvers'" in p for p in problems):
            failures.append("self-test: a section without a date, device and command passed")
    failures += self_test_record_words(results)
    return failures


def self_test_record_words(results):
    """The record's words on a made-up tree: each kind reported in the user docs it is in (the
    results page and the changelog included), none in docs/dev/ or in ordinary English."""
    failures = []
    ordinary = ("# Guide\n\nTo run the tests, run CG on it: the segment family runs CSR-vector, "
                "the solvers\nrun A x and run A^T x; call MPI_Allgather; a run of 3 products; an "
                "issue of timing.\n")
    guide = (ordinary + "As run AB showed, and runs Q and R before it (call F), see issues 9-11.\n"
             "```sh\ncmrscl-run spmv   # issue 12\n```\nMeasured on the 2-core machine.\n")
    record = "# Log\n\nsession 12, run AB, issue 40, the 2-core machine.\n"
    expected = {("docs/USER_GUIDE.md", "run AB"), ("docs/USER_GUIDE.md", "runs Q and R"),
                ("docs/USER_GUIDE.md", "call F"), ("docs/USER_GUIDE.md", "issues 9-11"),
                ("docs/USER_GUIDE.md", "issue 12"), ("docs/USER_GUIDE.md", "the 2-core machine"),
                ("CHANGELOG.md", "issue #12"), ("CHANGELOG.md", "session"),
                (RESULTS, "Sessions")}
    with tempfile.TemporaryDirectory() as tmp:
        top = pathlib.Path(tmp)
        (top / "docs" / "dev").mkdir(parents=True)
        (top / RESULTS).write_text(results + "\nSessions aside, the figures above.\n",
                                   encoding="utf-8")
        (top / "README.md").write_text("# Top\n\nRead the guide.\n", encoding="utf-8")
        (top / "CHANGELOG.md").write_text("# Changelog\n\n- Fixed (issue #12) in a session.\n",
                                          encoding="utf-8")
        (top / "docs" / "USER_GUIDE.md").write_text(guide, encoding="utf-8")
        (top / "docs" / "dev" / "LOG.md").write_text(record, encoding="utf-8")
        problems = check(top, quiet=True)
        reported = set()
        for p in problems:
            m = re.match(r"([^:]+):\d+: '([^']*)' \(", p)
            reported.add((m.group(1), m.group(2)) if m else ("?", p))
        if reported != expected:
            failures.append("self-test: expected the record's words %s reported, got %s"
                            % (sorted(expected), sorted(reported)))
        (top / "docs" / "USER_GUIDE.md").write_text(ordinary, encoding="utf-8")
        (top / "CHANGELOG.md").write_text("# Changelog\n\n- Fixed.\n", encoding="utf-8")
        (top / RESULTS).write_text(results, encoding="utf-8")
        if check(top, quiet=True):
            failures.append("self-test: ordinary English about runs, calls and issues failed: %s"
                            % check(top, quiet=True))
        (top / "CHANGELOG.md").unlink()
        if not any(p.startswith("CHANGELOG.md: missing") for p in check(top, quiet=True)):
            failures.append("self-test: a tree without CHANGELOG.md passed")
    return failures


def main(argv):
    args = argv[1:]
    if args and args[0] == "--self-test":
        if not self_test_passes(self_test, "doc figures: self-test passed (a figure absent from "
                                "the results page reported, present, exempt and code figures "
                                "not, a section without its source reported; sessions, run "
                                "names, issues and the development machine reported in user "
                                "docs, not in docs/dev/ nor in ordinary English)"):
            return 1
        args = args[1:]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print("doc figures: %d problem(s). Put the figure on %s with its date, device and command, "
              "or stop quoting it and link to %s (or to docs/dev/PERFORMANCE.md); a figure that is "
              "not a measurement may carry '%s'." % (len(problems), RESULTS, RESULTS, EXEMPT))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
