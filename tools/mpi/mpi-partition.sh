#!/usr/bin/env bash
# mpi-partition.sh - row blocks against METIS's parts, side by side: for each matrix, one rank
# (the reference time), then N ranks with --partition rows and with --partition graph
# (cmrscl-run-mpi spmv under mpirun, one GPU per rank by node-local rank), printing the halo
# (x entries received per product, all ranks), the back-to-back time per product (host clock,
# slowest rank), the strong efficiency T1 / (N TN) and the check against the CPU double
# reference. Needs a build with MPI and METIS (libmetis-dev; CMAKE_PREFIX_PATH where it is not
# installed system-wide).
# Environment (defaults in brackets):
#   BUILD_DIR [build-mpi]  LOG_DIR [BUILD_DIR/mpi-partition]  REPS [30]  RANKS [4]
#   MATRICES [kron:A:B of tests/data/suitesparse's 1138_bus and cage8, and 1138_bus.mtx]
#   PRECISIONS ["float double"]  DEVICE [gpu]  RUN_TIMEOUT [150] (s per run)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$top/build-mpi}
log_dir=${LOG_DIR:-$build/mpi-partition}
data=$top/tests/data/suitesparse
matrices=${MATRICES:-"kron:$data/1138_bus.mtx:$data/cage8.mtx $data/1138_bus.mtx"}
ranks=${RANKS:-4}
mkdir -p "$log_dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi_flags=()
if mpirun --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
    mpi_flags+=(--bind-to none)
    [ "$ranks" -le "$(nproc)" ] || mpi_flags+=(--oversubscribe)
fi

# run NAME NP INPUT PRECISION PARTITION: one cmrscl-run-mpi spmv, its output in LOG_DIR/NAME.txt
run() {
    local input=("$3")
    [[ $3 == *:* && $3 != /* ]] && input=(-g "$3") # a generator spec (kron:A:B)
    timeout "${RUN_TIMEOUT:-150}" mpirun -np "$2" "${mpi_flags[@]}" "$build/bin/cmrscl-run-mpi" \
        spmv "${input[@]}" -p "$4" -d "${DEVICE:-gpu}" -r "${REPS:-30}" --partition "$5" \
        >"$log_dir/$1.txt" 2>&1 || echo "run $1 failed (see $log_dir/$1.txt)" >&2
}
loop() { awk '/^loop /{print $2}' "$log_dir/$1.txt"; }
halo() { awk '/^halo /{print $2}' "$log_dir/$1.txt"; }
check() { grep -q "rounding bound: PASS" "$log_dir/$1.txt" && echo PASS || echo FAIL; }

status=0
printf '%-60s %-6s %-6s %5s %10s %10s %10s %6s\n' matrix prec parts ranks halo T_ms efficiency check
for spec in $matrices; do
    name=$(basename "${spec//:/_}")
    for p in ${PRECISIONS:-float double}; do
        run "$name-$p-1" 1 "$spec" "$p" rows
        t1=$(loop "$name-$p-1")
        printf '%-60s %-6s %-6s %5s %10s %10s %10s %6s\n' "${spec//$data\//}" "$p" - 1 0 "$t1" - \
            "$(check "$name-$p-1")"
        for part in rows graph; do
            run "$name-$p-$part" "$ranks" "$spec" "$p" "$part"
            tn=$(loop "$name-$p-$part")
            printf '%-60s %-6s %-6s %5s %10s %10s %10s %6s\n' "${spec//$data\//}" "$p" "$part" \
                "$ranks" "$(halo "$name-$p-$part")" "$tn" \
                "$(awk -v a="$t1" -v b="$tn" -v n="$ranks" 'BEGIN { if (b > 0) printf "%.3f", a / (n * b) }')" \
                "$(check "$name-$p-$part")"
            [ "$(check "$name-$p-$part")" = PASS ] || status=1
        done
    done
done | tee "$log_dir/summary.txt"
grep -q FAIL "$log_dir/summary.txt" && status=1
echo "mpi-partition: logs and summary in $log_dir"
exit $status
