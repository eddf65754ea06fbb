"""doc_check.py - what the docs checks share (check_doc_figures.py, check_doc_links.py): the
lines of a Markdown file outside its fenced code blocks, and running a check's self-test.
Standard library only."""


def prose_lines(path):
    """(line number, line) for each line of the file outside ``` fences (the fences left out)."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def self_test_passes(self_test, passed):
    """Runs self_test() (which returns its failures as strings) and prints them, or `passed`
    when there are none; True when there are none."""
    failures = self_test()
    for f in failures:
        print(f)
    if not failures:
        print(passed)
    return not failures
