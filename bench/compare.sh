#!/usr/bin/env bash
# compare.sh - cmrscl against cuSPARSE on one NVIDIA GPU, in one go: builds both (the peer
# only where a CUDA toolkit is found), runs cmrscl-peer and `cmrscl-run bench --peer` on
# the same suites (identical matrices: both generate or read them through libcmrscl), then
# draws the figures and writes the report.
#
#   bench/compare.sh [OUT_DIR]          (default: bench-results)
#
# Environment: SUITES (default: bench/suite-large.txt bench/suite-small.txt), PRECISIONS
# (float,double), PLANS (auto), REPS (100), BUILD_DIR (build), CMRSCL_DEVICE (gpu),
# TRANSPOSE (1: the transposed product y = A^T x on both sides, rows named MATRIX^T; the
# peer's best of its transposed operation and of the ordinary product on an explicit A^T),
# VECTORS (a list of k, e.g. 4,8,16,32: the block product Y = A X of k vectors at once on both
# sides, --vectors, rows named MATRIX[k=K]; the peer's best cusparseSpMM algorithm; not with
# TRANSPOSE), COLUMN_MAJOR (1, with VECTORS: X and Y column-major on both sides, not row-major).
# Outputs in OUT_DIR: peer.csv, bench.csv, bench.json, bench.txt (the table and the
# geometric means), *.png and report.md (bench/plot_bench.py, when matplotlib is there).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-bench-results}
build=${BUILD_DIR:-$top/build}
suites=${SUITES:-"$top/bench/suite-large.txt $top/bench/suite-small.txt"}
precisions=${PRECISIONS:-float,double}
plans=${PLANS:-auto}
reps=${REPS:-100}
op_args=()
if [ "${TRANSPOSE:-0}" = 1 ]; then op_args=(--transpose); fi
if [ -n "${VECTORS:-}" ]; then op_args+=(--vectors "$VECTORS"); fi
if [ "${COLUMN_MAJOR:-0}" = 1 ]; then op_args+=(--column-major); fi
# refused by both tools too, but before the builds and the peer's whole run
if [ "${TRANSPOSE:-0}" = 1 ] && [ -n "${VECTORS:-}" ]; then
    echo "compare: TRANSPOSE and VECTORS exclude each other" >&2
    exit 2
fi
if [ "${COLUMN_MAJOR:-0}" = 1 ] && [ -z "${VECTORS:-}" ]; then
    echo "compare: COLUMN_MAJOR=1 is the layout of VECTORS' block: set VECTORS too" >&2
    exit 2
fi
export CMRSCL_DEVICE=${CMRSCL_DEVICE:-gpu}
mkdir -p "$out"

cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target cmrscl-run
if ! cmake --build "$build" -j "$(nproc)" --target cmrscl-peer 2>/dev/null; then
    echo "compare: no CUDA toolkit with cuSPARSE: cmrscl-peer was not built" >&2
    exit 1
fi

suite_args=()
for s in $suites; do suite_args+=(--suite "$s"); done

"$build/bin/cmrscl-peer" "${suite_args[@]}" ${op_args[@]+"${op_args[@]}"} -p "$precisions" -r "$reps" \
    --csv "$out/peer.csv" \
    2> >(tee "$out/peer.log" >&2) || echo "compare: cmrscl-peer reported a failure" >&2

status=0
"$build/bin/cmrscl-run" bench "${suite_args[@]}" ${op_args[@]+"${op_args[@]}"} -p "$precisions" -r "$reps" \
    --plans "$plans" \
    --peer "$out/peer.csv" --csv "$out/bench.csv" --json-out "$out/bench.json" \
    | tee "$out/bench.txt" || status=${PIPESTATUS[0]}

# The figures and report.md; Debian's matplotlib lives in the system python3.
plot_python=""
for py in python3 /usr/bin/python3; do
    if "$py" -c "import matplotlib" 2>/dev/null; then plot_python=$py; break; fi
done
if [ -n "$plot_python" ]; then
    "$plot_python" "$top/bench/plot_bench.py" "$out/bench.csv" "$out" --json "$out/bench.json" \
        --command "${TRANSPOSE:+TRANSPOSE=$TRANSPOSE }${VECTORS:+VECTORS=$VECTORS }${COLUMN_MAJOR:+COLUMN_MAJOR=$COLUMN_MAJOR }PRECISIONS=$precisions PLANS=$plans REPS=$reps bench/compare.sh $*"
else
    echo "compare: matplotlib not found: no figures (apt-get install python3-matplotlib)" >&2
fi
exit $status
