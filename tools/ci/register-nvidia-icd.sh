#!/usr/bin/env bash
# register-nvidia-icd.sh - make NVIDIA's OpenCL driver visible to the ICD loader when the
# driver is installed but not registered (as on the project's GPU hosts); a no-op when it is
# registered already or there is no NVIDIA driver. Registering needs root.
set -euo pipefail
[ -f /etc/OpenCL/vendors/nvidia.icd ] && exit 0
lib=$(ls /usr/lib/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 \
      /usr/lib64/libnvidia-opencl.so.1 2>/dev/null | head -n 1 || true)
[ -n "$lib" ] || exit 0 # no NVIDIA driver: another GPU platform may still be there
if [ "$(id -u)" -ne 0 ]; then
    echo "register-nvidia-icd: NVIDIA's OpenCL driver $lib is not registered; run as root" >&2
    exit 1
fi
mkdir -p /etc/OpenCL/vendors
echo "$lib" > /etc/OpenCL/vendors/nvidia.icd
echo "register-nvidia-icd: registered $lib in /etc/OpenCL/vendors/nvidia.icd"
