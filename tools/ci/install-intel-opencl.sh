#!/usr/bin/env bash
# install-intel-opencl.sh - Intel's OpenCL runtime for CPUs (OpenCL 3.0, sub-groups of 4-64
# lanes) from its PyPI wheels, beside the system's ICD loader, for the tests to run on:
#   tools/ci/install-intel-opencl.sh DIR
# leaves DIR/lib (the runtime's libraries, without the wheels' own libOpenCL) and
# DIR/vendors/intel-cpu.icd, and prints the two variables that select it:
#   export OCL_ICD_VENDORS=DIR/vendors LD_LIBRARY_PATH=DIR/lib
# (OCL_ICD_VENDORS set to a directory makes the loader see only the ICDs there.)
# Needs python3 with pip and unzip; the versions are the ones the project is tested with.
set -euo pipefail
dir=${1:?usage: $0 DIR}
mkdir -p "$dir/wheels" "$dir/lib" "$dir/vendors"
dir=$(cd "$dir" && pwd)
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$dir/wheels" \
    intel-opencl-rt==2026.2.0 'tbb==2023.*' intel-cmplr-lib-rt==2026.2.0
for wheel in "$dir"/wheels/*.whl; do
    unzip -q -o "$wheel" '*.data/data/lib/*' -d "$dir/unpacked"
done
find "$dir/unpacked" -path '*/data/lib/*' \( -type f -o -type l \) ! -name 'libOpenCL.so*' \
    -exec cp -a {} "$dir/lib/" \;
rm -rf "$dir/unpacked" "$dir/wheels"
echo "$dir/lib/libintelocl.so" > "$dir/vendors/intel-cpu.icd"
echo "export OCL_ICD_VENDORS=$dir/vendors LD_LIBRARY_PATH=$dir/lib"
