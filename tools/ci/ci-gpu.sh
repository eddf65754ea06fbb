#!/usr/bin/env bash
# ci-gpu.sh - what a GPU CI runner executes: make sure a GPU OpenCL platform is visible
# (registering NVIDIA's ICD when the driver is installed but unregistered), build, run the
# whole CTest suite on the GPU, then the tests that run kernels on the host's CPU OpenCL
# (PoCL 5 on the project's GPU hosts: sub-groups), each with its summary (what ran, what was
# skipped and why) and its JUnit file for docs/PORTABILITY.md (tools/ci/portability.py); a
# short `cmrscl-run spmv` smoke run, and a short benchmark of the small suite whose CSV the
# runner keeps (an instrument, never a pass/fail gate); where clang-tidy is installed, the
# sources through it with the analyzer. Exits non-zero on any failure.
# Environment:
#   BUILD_DIR      build directory (default: build-gpu)
#   CMRSCL_DEVICE  device selector for the GPU run (default: gpu)
#   CPU_DEVICE     device selector for the CPU run (default: cpu; empty: no CPU run)
#   LOG_DIR        where the JUnit files, the benchmark's CSV and table go
#                  (default: BUILD_DIR/ci-gpu)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$top/build-gpu}
log_dir=${LOG_DIR:-$build/ci-gpu}
gpu=${CMRSCL_DEVICE:-gpu}
cpu=${CPU_DEVICE-cpu}
mkdir -p "$log_dir"

"$top/tools/ci/register-nvidia-icd.sh"
mkdir -p "$build"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build/build.log"
cmake --build "$build" -j "$(nproc)" >>"$build/build.log"
"$build/bin/cmrscl-run" devices | tee "$log_dir/devices.txt"
devices_json=$("$build/bin/cmrscl-run" devices --json)
if ! grep -q '"type": "gpu"' <<<"$devices_json"; then
    echo "ci-gpu: no GPU OpenCL device is visible" >&2
    exit 1
fi

# run_suite NAME DEVICE [LABEL]: the suite (or one label of it) on one device, summarised.
status=0
run_suite() {
    local junit="$log_dir/junit-$1.xml"
    CMRSCL_DEVICE=$2 ctest --test-dir "$build" --output-on-failure -j 8 --output-junit "$junit" \
        ${3:+-L "$3"} >"$log_dir/ctest-$1.log" 2>&1 || status=1
    python3 "$top/tools/ci/test_summary.py" "$junit" --name "$1" || status=1
}
run_suite gpu "$gpu"
[ -z "$cpu" ] || run_suite cpu "$cpu" device

# The sources through clang-tidy with the Clang Static Analyzer (tools/ci/check_tidy.py): its
# minutes of CPU, which CPU CI's two cores cannot spare, are seconds on this runner's cores.
if tidy=$(command -v clang-tidy-14 || command -v clang-tidy); then
    python3 "$top/tools/ci/check_tidy.py" --analyzer "$top" "$build" "$tidy" || [ $? -eq 77 ] ||
        status=1
fi

export CMRSCL_DEVICE=$gpu
"$build/bin/cmrscl-run" spmv --repetitions 20
"$build/bin/cmrscl-run" spmv --precision double --repetitions 20
"$build/bin/cmrscl-run" bench --suite "$top/bench/suite-small.txt" -p float,double -r 20 \
    --csv "$log_dir/bench-small.csv" >"$log_dir/bench-small.txt"
if [ "$status" -ne 0 ]; then
    echo "ci-gpu: failures above; logs in $log_dir" >&2
    exit 1
fi
echo "ci-gpu: all passed on $gpu${cpu:+ and $cpu}; logs and benchmark in $log_dir"
