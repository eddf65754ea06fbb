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
# peer's best of its transposed operation and of the ordinary product on an explicit A^T).
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
        --command "${TRANSPOSE:+TRANSPOSE=$TRANSPOSE }PRECISIONS=$precisions PLANS=$plans REPS=$reps bench/compare.sh $*"
else
    echo "compare: matplotlib not found: no figures (apt-get install python3-matplotlib)" >&2
fi
exit $status
