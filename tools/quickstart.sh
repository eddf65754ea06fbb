#!/usr/bin/env bash
# quickstart.sh - everything a fresh machine needs, in one command:
#   tools/quickstart.sh run    install dependencies (Debian/Ubuntu), build, and run
#                              cmrscl-run spmv on the default matrix and device
#   tools/quickstart.sh test   install dependencies, build, and run the CTest suite
# Dependencies are installed with apt-get only when missing (as root, or through sudo).
# BUILD_DIR (default: build) and CMRSCL_DEVICE (default: the first GPU, else the first
# device) are honoured.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
mode=${1:-}
case "$mode" in run | test) ;; *) echo "usage: $0 run|test" >&2; exit 2 ;; esac

packages=(cmake make gcc pkg-config ocl-icd-opencl-dev opencl-c-headers zlib1g-dev clinfo)
# An OpenCL driver: PoCL (CPU) unless some platform is already registered.
if ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then packages+=(pocl-opencl-icd); fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if ! command -v apt-get >/dev/null; then
        echo "quickstart: please install: ${missing[*]}" >&2
        exit 1
    fi
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "quickstart: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)"
if [ "$mode" = run ]; then
    exec "$build/bin/cmrscl-run" spmv
fi
exec ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
