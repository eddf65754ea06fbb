#!/usr/bin/env bash
# compare_read.sh FILE.mtx [VENV] - installs fast_matrix_market and scipy from PyPI into a
# virtual environment (default .venv-read, git-ignored) and runs bench/compare_read.py on
# FILE against build/bin/cmrscl-run. Generate a file with, e.g.,
#   build/bin/cmrscl-run gen stencil27:100 -o /tmp/stencil27_100.mtx
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:?usage: bench/compare_read.sh FILE.mtx [VENV]}
venv=${2:-.venv-read}
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q fast_matrix_market scipy numpy
fi
"$venv/bin/python" bench/compare_read.py "$file" --cmrscl build/bin/cmrscl-run
