# shellcheck shell=bash
# nvidia-icd.sh - sourced by the GPU scripts (ci-gpu.sh, index64-gpu.sh): make NVIDIA's OpenCL
# driver visible to the ICD loader where it is installed but not registered (the hosts of
# shared/gpu/README.md ship only pocl.icd). Defines register_nvidia_icd; needs root to write.

register_nvidia_icd() {
    [ -f /etc/OpenCL/vendors/nvidia.icd ] && return 0
    local lib
    lib=$(ls /usr/lib/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 \
          /usr/lib64/libnvidia-opencl.so.1 2>/dev/null | head -n 1 || true)
    [ -n "$lib" ] || return 0 # no NVIDIA driver: another GPU platform may still be there
    if [ "$(id -u)" -ne 0 ]; then
        echo "$(basename "$0"): NVIDIA's OpenCL driver $lib is not registered; run as root to" \
             "register it" >&2
        return 1
    fi
    mkdir -p /etc/OpenCL/vendors
    echo "$lib" > /etc/OpenCL/vendors/nvidia.icd
    echo "$(basename "$0"): registered $lib in /etc/OpenCL/vendors/nvidia.icd"
}
