#!/usr/bin/env bash
# ci-gpu.sh - what a GPU CI runner executes: make sure a GPU OpenCL platform is visible
# (registering NVIDIA's ICD when the driver is installed but unregistered), build, run the
# whole CTest suite on the GPU, a short `cmrscl-run spmv` smoke run, and a short benchmark
# of the small suite whose CSV the runner keeps (an instrument, never a pass/fail gate).
# Exits non-zero on any failure. Environment:
#   BUILD_DIR      build directory (default: build-gpu)
#   CMRSCL_DEVICE  device selector for the tests (default: gpu)
#   LOG_DIR        where the benchmark's CSV and table go (default: BUILD_DIR/ci-gpu)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build-gpu}
log_dir=${LOG_DIR:-$build/ci-gpu}
export CMRSCL_DEVICE=${CMRSCL_DEVICE:-gpu}

# shellcheck source=tools/nvidia-icd.sh
. "$top/tools/nvidia-icd.sh"
register_nvidia_icd
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$(nproc)"
"$build/bin/cmrscl-run" devices
if ! "$build/bin/cmrscl-run" devices --json | grep -q '"type": "gpu"'; then
    echo "ci-gpu: no GPU OpenCL device is visible" >&2
    exit 1
fi
ctest --test-dir "$build" --output-on-failure -j 4
"$build/bin/cmrscl-run" spmv --repetitions 20
"$build/bin/cmrscl-run" spmv --precision double --repetitions 20
mkdir -p "$log_dir"
"$build/bin/cmrscl-run" bench --suite "$top/bench/suite-small.txt" -p float,double -r 20 \
    --csv "$log_dir/bench-small.csv" | tee "$log_dir/bench-small.txt"
echo "ci-gpu: all passed on $CMRSCL_DEVICE; benchmark in $log_dir"
