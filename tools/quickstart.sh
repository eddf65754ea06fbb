#!/usr/bin/env bash
# quickstart.sh - everything a fresh machine needs, in one command:
#   tools/quickstart.sh run    install dependencies (Debian/Ubuntu), build, and run
#                              cmrscl-run spmv on the default matrix and device
#   tools/quickstart.sh test   install dependencies, build, run the CTest suite, and print
#                              what it checked: the device, passed / failed / skipped, and
#                              every skipped test under the reason it gave
# Dependencies are installed with apt-get only when missing (as root, or through sudo).
# The build's output goes to BUILD_DIR/build.log (shown when it fails). Environment:
#   BUILD_DIR          build directory (default: build)
#   CMRSCL_DEVICE      the device the tests use (default: the first GPU, else the first device)
#   CMRSCL_TEST_LABEL  only the tests of this CTest label (e.g. device: those that run kernels)
#   CMRSCL_TEST_SKIP_LABEL  not the tests of this label (e.g. mpi)
#   CMRSCL_TEST_EXCLUDE     not the tests whose names match this regex
#   CMRSCL_TEST_NAME   the implementation's name in the summary (and in BUILD_DIR/junit-NAME.xml)
#   CMRSCL_TEST_EXPECTED_SKIPS  the tests the implementation must skip (tools/ci/expected-skips/):
#                      any other skip fails, and so does a listed test that ran
#   CMRSCL_TEST_REQUIRE_OCLGRIND=1  fail when no Oclgrind kernel check ran
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
mode=${1:-}
case "$mode" in run | test) ;; *) echo "usage: $0 run|test" >&2; exit 2 ;; esac

packages=(cmake make gcc pkg-config ocl-icd-opencl-dev opencl-c-headers zlib1g-dev clinfo python3)
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

mkdir -p "$build"
# run builds only what it runs (the library and cmrscl-run); test builds everything
targets=() what="everything"
[ "$mode" = test ] || targets=(--target cmrscl-run) what="the library and cmrscl-run"
echo "quickstart: configuring in $build (log: $build/build.log)"
if ! cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build/build.log" 2>&1; then
    tail -n 40 "$build/build.log" >&2
    echo "quickstart: configuring failed (whole log: $build/build.log)" >&2
    exit 1
fi
echo "quickstart: building $what on $(nproc) cores"
if ! cmake --build "$build" -j "$(nproc)" "${targets[@]}" >>"$build/build.log" 2>&1; then
    tail -n 40 "$build/build.log" >&2
    echo "quickstart: the build failed (whole log: $build/build.log)" >&2
    exit 1
fi
echo "quickstart: built"
if [ "$mode" = run ]; then
    echo "quickstart: cmrscl-run spmv (the default matrix on the default device)"
    exec "$build/bin/cmrscl-run" spmv
fi
echo "quickstart: running the tests"
name=${CMRSCL_TEST_NAME:-tests}
junit="$build/junit-${name//[^A-Za-z0-9._-]/_}.xml"
status=0
ctest --test-dir "$build" --output-on-failure --no-tests=error -j "$(nproc)" \
    --output-junit "$junit" \
    ${CMRSCL_TEST_LABEL:+-L "$CMRSCL_TEST_LABEL"} \
    ${CMRSCL_TEST_SKIP_LABEL:+-LE "$CMRSCL_TEST_SKIP_LABEL"} \
    ${CMRSCL_TEST_EXCLUDE:+-E "$CMRSCL_TEST_EXCLUDE"} || status=$?
# the summary fails too on a skipped test that gave no reason, when nothing passed, and on
# what the two variables above ask
summary=(--name "$name")
[ -z "${CMRSCL_TEST_EXPECTED_SKIPS:-}" ] || summary+=(--expected-skips "$CMRSCL_TEST_EXPECTED_SKIPS")
[ -z "${CMRSCL_TEST_REQUIRE_OCLGRIND:-}" ] || summary+=(--require-oclgrind)
python3 "$top/tools/ci/test_summary.py" "$junit" "${summary[@]}" || [ "$status" -ne 0 ] || status=1
exit "$status"
