"""llvm_version.py - which major version an LLVM tool is (clang-format, clang-tidy).

The source checks (check_format.py, check_tidy.py) hold the tree to the tools Debian 12 ships:
their layouts and findings differ between major versions, so with another version a check is
skipped, not failed. Standard library only.
"""
import re
import subprocess


def other_major(tool, want):
    """None when TOOL is major version WANT; else what it is, in words, for the skip message."""
    version = subprocess.run([tool, "--version"], stdout=subprocess.PIPE, text=True).stdout
    major = re.search(r"version (\d+)", version)
    if major and int(major.group(1)) == want:
        return None
    return version.strip().splitlines()[0] if version.strip() else tool
