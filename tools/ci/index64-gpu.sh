#!/usr/bin/env bash
# index64-gpu.sh - issue 9 on one NVIDIA GPU (H100 80 GB or H200 141 GB, 16 cores, 128 GB):
# the product of a matrix with more than 2^31 stored entries, which runs with 64-bit entry
# indices, against the same kernel on a matrix of the same class below 2^31 (32-bit), in
# float, each verified over all rows against the CPU double reference (on all host threads);
# and the cost of 64-bit indices alone: the small matrix again with them forced.
#   SMALL  stencil27:420  74.1 M rows, 1.99e9 entries (< 2^31: 32-bit indices)
#   LARGE  stencil27:440  85.2 M rows, 2.29e9 entries (> 2^31: 64-bit indices)
# Target (issue 9): beta+/tau of LARGE within 10% of SMALL's (ratio >= 0.90).
#
# Memory of LARGE in float. Host, at the peak (while the CMRS arrays are built): the CSR,
# 12 bytes an entry and 8 a row (28.2 GB), the CMRS column indices and float values, 8 bytes
# an entry (18.3 GB), x and y0 in double (1.4 GB): about 48 GB, so the 128 GB host holds it;
# the verification needs the CSR and the vectors alone (about 31 GB). Device: column indices
# and values (9.2 GB each, each below CL_DEVICE_MAX_MEM_ALLOC_SIZE, usually a quarter of the
# memory on NVIDIA: devices.txt shows it), StripPtr (0.04 GB), x and y (0.34 GB each): about
# 19 GB.
#
# Every step's output goes to $OUT, six files: build.log, devices.txt, one NAME.txt per run
# (the cmrscl-run spmv report, then its stderr with the peak host memory from /usr/bin/time -v
# when installed) and summary.txt. Exits 1 if a run fails or a product is wrong; missing
# the target is reported, not an error. Takes about 3-5 minutes (the build, then three runs of
# 20-60 s of set-up each: generating, converting and uploading 2e9 entries, verifying).
# Environment: OUT (default ./index64-out), BUILD_DIR (default build-index64), SMALL, LARGE,
# REPS (timed products per run, default 100), CMRSCL_DEVICE (default gpu), MIN_HOST_GB (host
# memory that must be available, default 56; lower it for a dry run with small matrices).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$PWD/index64-out}
build=${BUILD_DIR:-$top/build-index64}
small=${SMALL:-stencil27:420}
large=${LARGE:-stencil27:440}
reps=${REPS:-100}
export CMRSCL_DEVICE=${CMRSCL_DEVICE:-gpu}
export CMRSCL_TUNING_DB=off # the matrix rule's plan for both matrices, not a tuned one
mkdir -p "$out"
started=$(date +%s)

"$top/tools/ci/register-nvidia-icd.sh"
echo "index64: building in $build (log: $out/build.log)"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMRSCL_PEER=OFF > "$out/build.log" 2>&1
cmake --build "$build" -j "$(nproc)" --target cmrscl-run >> "$out/build.log" 2>&1
run=$build/bin/cmrscl-run
"$run" devices | tee "$out/devices.txt"
{ grep -E 'MemTotal|MemAvailable' /proc/meminfo; nproc; } | tee -a "$out/devices.txt"
command -v nvidia-smi > /dev/null &&
    nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv | tee -a "$out/devices.txt"

available_gb=$(awk '/MemAvailable/ {printf "%d", $2 / 1048576}' /proc/meminfo)
if [ "$available_gb" -lt "${MIN_HOST_GB:-56}" ]; then
    echo "index64: $available_gb GB of host memory available; $large needs about 50 GB" >&2
    exit 1
fi

# spmv NAME ARGS...: one verified, timed run; its report in $out/NAME.txt.
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -v)
failed=0
spmv() {
    local name=$1
    shift
    echo "index64: $name: cmrscl-run spmv $* -p float -r $reps"
    local err=$out/$name.txt.stderr
    if [ $(($(date +%s) - started)) -gt 360 ]; then # keep the whole within 8 minutes
        echo "index64: $name skipped: $(($(date +%s) - started)) s have passed" | tee "$out/$name.txt"
        failed=1
        return
    fi
    if ! timeout 140 "${timer[@]}" "$run" spmv "$@" -p float -r "$reps" > "$out/$name.txt" \
        2> "$err"; then
        echo "index64: $name FAILED:" >&2
        grep -v $'^\t' "$err" | tail -n 5 >&2 # not /usr/bin/time's lines
        failed=1
    fi
    cat "$err" >> "$out/$name.txt" && rm -f "$err"
    grep -E '^(matrix|plan|generate|convert|upload|first|kernel|bandwidth|error)|-bit entry' \
        "$out/$name.txt" || true
}
spmv small --gen "$small"
spmv large --gen "$large"
spmv small64 --gen "$small" --index-bits 64

# The summary: beta+/tau (GB/s) and the kernel's median per run, and the ratios.
field() { awk -v key="$2" '{for (i = 1; i < NF; ++i) if ($i == key) print $(i + 1)}' \
              "$out/$1.txt" | head -n 1; }
peak_gb() { awk -F: '/Maximum resident set size/ {printf "%.1f", $2 / 1048576}' "$out/$1.txt"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a > 0 && b > 0) printf "%.3f", a / b; else print "-"}'; }
{
    printf "%-8s %-16s %-8s %12s %12s %10s  %s\n" run matrix indices "median ms" "beta+/tau" \
        "host GB" verdict
    for name in small large small64; do
        [ -f "$out/$name.txt" ] || continue
        printf "%-8s %-16s %-8s %12s %12s %10s  %s\n" "$name" \
            "$(field "$name" matrix | sed 's/:$//')" "$(grep -o '[0-9]*-bit entry' "$out/$name.txt" |
                cut -d- -f1)" "$(field "$name" median)" "$(field "$name" beta+/tau)" \
            "$(peak_gb "$name")" "$(grep -o -E 'PASS|FAIL' "$out/$name.txt" || echo '-')"
    done
    plan_small=$(grep -o -- '-cl-std.*' "$out/small.txt" | sed 's/ -DINDEX64=[01]//' || true)
    plan_large=$(grep -o -- '-cl-std.*' "$out/large.txt" | sed 's/ -DINDEX64=[01]//' || true)
    [ "$plan_small" = "$plan_large" ] || echo "note: the two matrices got different plans" \
        "(beyond the index width): the ratio compares different kernels"
    r_large=$(ratio "$(field large beta+/tau)" "$(field small beta+/tau)")
    r_cost=$(ratio "$(field small64 beta+/tau)" "$(field small beta+/tau)")
    echo "beta+/tau $large / $small = $r_large (target >= 0.90: $(awk -v r="$r_large" \
        'BEGIN {print (r != "-" && r >= 0.90) ? "met" : "MISSED"}'))"
    echo "beta+/tau $small with 64-bit indices / with 32-bit = $r_cost (the 64-bit cost alone)"
    echo "total $(($(date +%s) - started)) s on $(sed -n 's/^device *//p' "$out/small.txt")"
} | tee "$out/summary.txt"
exit "$failed"
