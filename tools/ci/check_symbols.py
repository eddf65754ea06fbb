#!/usr/bin/env python3
"""check_symbols.py - every symbol a static library of the project defines for the linker
starts with cmrscl_ (public) or cmrs_ (internal), so that a program linking libcmrscl.a or
libcmrscl_mpi.a meets none of its names (plan_split, halo_setup, ...) by accident, and no two
of the libraries define one name (a program linking both would not link).

    tools/ci/check_symbols.py LIBRARY.a...

Prints each bare symbol and exits 1 if there is one. Needs nm (binutils)."""
import re
import subprocess
import sys


def bare(library):
    out = subprocess.run(["nm", "-g", "--defined-only", library], capture_output=True, text=True,
                         check=True).stdout
    names = {m.group(1) for m in re.finditer(r"^[0-9a-fA-F]+ [TDBRVW] (\S+)$", out, re.M)}
    # "__" names are the implementation's (a sanitizer's __odr_asan.*, the compiler's own)
    return sorted(n for n in names if not n.startswith(("cmrscl_", "cmrs_", "__")))


def defined(library):
    out = subprocess.run(["nm", "-g", "--defined-only", library], capture_output=True, text=True,
                         check=True).stdout
    return {n for n in re.findall(r"^[0-9a-fA-F]+ [TDBR] (\S+)$", out, re.M)
            if not n.startswith("__")}


def main():
    status = 0
    seen = {}
    for library in sys.argv[1:]:
        for name in sorted(defined(library)):
            if name in seen:
                print(f"{library}: {name} is defined in {seen[name]} too")
                status = 1
            seen.setdefault(name, library)
    for library in sys.argv[1:]:
        names = bare(library)
        for n in names:
            print(f"{library}: {n} has neither the cmrscl_ nor the cmrs_ prefix")
        status |= bool(names)
        print(f"check_symbols: {library}: {'every symbol prefixed' if not names else f'{len(names)} bare'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
