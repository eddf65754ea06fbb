#!/usr/bin/env bash
# mpi-scaling.sh - strong and weak scaling of the distributed product on 1, 2 and 4 GPUs of
# one host, as many as it has (cmrscl-run-mpi under mpirun, one GPU per rank by node-local
# rank), float and double:
#   strong: the same matrix (default stencil27:270, 19.7 M rows, 531 M nonzeros) on N ranks;
#           efficiency = T1 / (N TN)
#   weak:   stencil27:216 (10.1 M rows) on 1 rank, stencil27:272 (20.1 M rows, 2.0 x) on 2,
#           stencil27:343 (40.4 M rows, 4.0 x) on 4; efficiency = per-rank rate on N ranks /
#           rate on 1 = (nnzN / N / TN) / (nnz1 / T1)
# T is the back-to-back time per product with the overlap (the host clock of the slowest
# rank: what a solver loop sees); the device-event time of a product is shown beside it.
# Then distributed CG on the strong matrix, per-iteration strong efficiency.
# Also the halo volume, the communication time (pack + MPI exchange + unpack, measured
# without the overlap) and the share of it the overlap hides. Every product is verified
# against the CPU double reference (VERIFY=0 skips that, to save set-up time).
# Needs: CMake, a C compiler, OpenCL headers and loader, an MPI (mpicc, mpirun) and 2 GPUs;
# registers NVIDIA's OpenCL driver when it is installed but unregistered (as root).
# About 2-3 minutes on 2 H100/H200s (most of it set-up: generating, converting, uploading
# and verifying half a billion entries per run). Environment (defaults in brackets):
#   BUILD_DIR [build-mpi]  LOG_DIR [BUILD_DIR/mpi-scaling]  REPS [30]
#   STRONG [stencil27:270]  WEAK1 [stencil27:216]  WEAK2 [stencil27:272]  WEAK4 [stencil27:343]
#   RANKS [1 2 4, as far as the host has devices of the type]
#   PRECISIONS ["float double"]  VERIFY [1]  DEVICE [gpu]  RUN_TIMEOUT [240] (s per run)
#   SOLVE [1]: also distributed CG on STRONG, SOLVE_ITERATIONS [50] iterations a solve
#   CMRSCL_DIST_EXCHANGE [shared where the ranks share the host] or messages
# A WEAK2 equal to STRONG is run once; its log serves both. The Kronecker product of session
# 20 (docs/dev/MPI.md), with grid100.mtx and grid71.mtx from `cmrscl-run gen stencil5:100|71`:
#   STRONG=kron:grid100.mtx:cage8.mtx WEAK1=kron:grid71.mtx:cage8.mtx WEAK2=$STRONG
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$top/build-mpi}
log_dir=${LOG_DIR:-$build/mpi-scaling}
reps=${REPS:-30}
strong=${STRONG:-stencil27:270}
weak1=${WEAK1:-stencil27:216}
weak2=${WEAK2:-stencil27:272}
weak4=${WEAK4:-stencil27:343}
solve_iterations=${SOLVE_ITERATIONS:-50}
precisions=${PRECISIONS:-float double}
device=${DEVICE:-gpu}

"$top/tools/ci/register-nvidia-icd.sh"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMRSCL_MPI=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target cmrscl-run-mpi cmrscl-run
"$build/bin/cmrscl-run" devices | grep -E "^[0-9]+:[0-9]+" || true
# 1, 2 and 4 ranks, as far as the host has devices of the type (RANKS overrides).
devices=$("$build/bin/cmrscl-run" devices | grep -cE "^[0-9]+:[0-9]+ .*\[$device\]" || true)
ranks_list=${RANKS:-$(for n in 1 2 4; do [ "$n" -le "${devices:-1}" ] || [ "$n" = 1 ] && echo "$n"; done)}
echo "ranks: $ranks_list ($devices devices of type $device)"
mkdir -p "$log_dir"

# Open MPI: allowed as root; ranks not pinned to one core each (the set-up uses host threads).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi_flags=()
if mpirun --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then mpi_flags+=(--bind-to none); fi
verify=()
[ "${VERIFY:-1}" = 0 ] && verify=(--no-verify)

# run NAME RANKS SPEC PRECISION: one cmrscl-run-mpi spmv, its output kept in LOG_DIR/NAME.txt.
run() {
    local log="$log_dir/$1.txt"
    echo "== mpirun -np $2 cmrscl-run-mpi spmv -g $3 -p $4 -d $device -r $reps ${verify[*]}"
    timeout "${RUN_TIMEOUT:-240}" mpirun -np "$2" "${mpi_flags[@]}" "$build/bin/cmrscl-run-mpi" \
        spmv -g "$3" -p "$4" -d "$device" -r "$reps" "${verify[@]}" | tee "$log"
}
# field NAME WHAT: a number from a run's output.
field() {
    local log="$log_dir/$1.txt"
    case "$2" in
    loop) awk '/^loop /{print $2}' "$log" ;;
    product) awk '/^product /{print $2}' "$log" ;;
    nnz) sed -n 's/^matrix .*nnz \([0-9]*\).*/\1/p' "$log" ;;
    halo) awk '/^halo /{print $2}' "$log" ;;
    comm) awk '/^overlap /{print $3}' "$log" ;;
    hidden) sed -n 's/^overlap .*hides \([0-9]*\)%.*/\1/p' "$log" ;;
    check) grep -q "rounding bound: PASS" "$log" && echo PASS || { grep -q "not verified" "$log" && echo - || echo FAIL; } ;;
    esac
}

summary="$log_dir/summary.txt"
: >"$summary"
status=0
# weak_spec N: the weak-scaling matrix of N ranks (about N times WEAK1's rows).
weak_spec() {
    case "$1" in 1) echo "$weak1" ;; 2) echo "$weak2" ;; 4) echo "$weak4" ;; *) echo "" ;; esac
}
for p in $precisions; do
    for n in $ranks_list; do
        run "strong-$n-$p" "$n" "$strong" "$p" || status=1
        w=$(weak_spec "$n")
        if [ -z "$w" ]; then
            continue
        elif [ "$w" = "$strong" ]; then # the same run: its log serves both
            cp "$log_dir/strong-$n-$p.txt" "$log_dir/weak-$n-$p.txt"
        else
            run "weak-$n-$p" "$n" "$w" "$p" || status=1
        fi
    done
    {
        printf '\n%s, %s: T = back-to-back ms per product (device-event ms in brackets)\n' "$p" "$(date -u +%F)"
        printf '%-6s %-16s %5s %12s %9s %9s %10s %9s %7s %6s\n' kind matrix ranks nnz T_ms event_ms halo comm_ms hidden check
        for n in $ranks_list; do
            for k in strong weak; do
                [ -f "$log_dir/$k-$n-$p.txt" ] || continue
                spec=$([ "$k" = strong ] && echo "$strong" || weak_spec "$n")
                printf '%-6s %-16s %5s %12s %9s %9s %10s %9s %6s%% %6s\n' "$k" "$spec" "$n" \
                    "$(field "$k-$n-$p" nnz)" "$(field "$k-$n-$p" loop)" "$(field "$k-$n-$p" product)" \
                    "$(field "$k-$n-$p" halo)" "$(field "$k-$n-$p" comm)" "$(field "$k-$n-$p" hidden)" \
                    "$(field "$k-$n-$p" check)"
            done
        done
        for n in $ranks_list; do
            [ "$n" = 1 ] && continue
            awk -v n="$n" -v t1="$(field "strong-1-$p" loop)" -v t2="$(field "strong-$n-$p" loop)" \
                -v e1="$(field "strong-1-$p" product)" -v e2="$(field "strong-$n-$p" product)" \
                'BEGIN { if (t2 > 0) printf "strong scaling 1 -> %d GPUs: efficiency %.3f (device events: %.3f)\n", n, t1 / (n * t2), e1 / (n * e2) }'
            [ -f "$log_dir/weak-$n-$p.txt" ] || continue
            awk -v n="$n" -v t1="$(field "weak-1-$p" loop)" -v t2="$(field "weak-$n-$p" loop)" \
                -v n1="$(field "weak-1-$p" nnz)" -v n2="$(field "weak-$n-$p" nnz)" \
                -v e1="$(field "weak-1-$p" product)" -v e2="$(field "weak-$n-$p" product)" \
                'BEGIN { if (t2 > 0) printf "weak scaling 1 -> %d GPUs: efficiency %.3f (device events: %.3f)\n", n, (n2 / n / t2) / (n1 / t1), (n2 / n / e2) / (n1 / e1) }'
        done
    } | tee -a "$summary"
done
# Distributed CG on the strong matrix: time per iteration over a fixed count (no convergence
# test: the same work on every rank count), strong efficiency = T1 / (N TN).
if [ "${SOLVE:-1}" != 0 ]; then
    for p in $precisions; do
        for n in $ranks_list; do
            log="$log_dir/solve-$n-$p.txt"
            echo "== mpirun -np $n cmrscl-run-mpi solve -g $strong -p $p -d $device --iterations $solve_iterations -r 2 --no-verify"
            timeout "${RUN_TIMEOUT:-240}" mpirun -np "$n" "${mpi_flags[@]}" "$build/bin/cmrscl-run-mpi" \
                solve -g "$strong" -p "$p" -d "$device" --iterations "$solve_iterations" -r 2 \
                --no-verify | tee "$log" || status=1
        done
        {
            printf '\n%s CG on %s, %d iterations: ms per iteration (slowest rank)\n' "$p" "$strong" "$solve_iterations"
            t1=$(awk '/^time /{print $2}' "$log_dir/solve-1-$p.txt")
            for n in $ranks_list; do
                tn=$(awk '/^time /{print $2}' "$log_dir/solve-$n-$p.txt")
                awk -v n="$n" -v t1="$t1" -v tn="$tn" 'BEGIN { if (tn > 0) printf "solve %d GPUs: %.4f ms per iteration, strong efficiency %.3f\n", n, tn, t1 / (n * tn) }'
            done
        } | tee -a "$summary"
    done
fi
grep -q FAIL "$summary" && status=1
echo "mpi-scaling: logs and summary in $log_dir"
exit $status
