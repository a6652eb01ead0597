#!/usr/bin/env bash
# prepare.sh: on the CPU machine, put in .device/ (an ignored folder the
# device tool carries) what tests/gpu/check.sh needs on the GPU machine, which
# has no flex or bison: an install prefix of this build (gpuc, the runtime and
# runner libraries, the standard library), the kernel cache warmed with every
# example's kernels (so no NVRTC compile is repeated there), an executable
# built here, and the generated sources of tests/gpu/oom.gdsl.
# Then scripts/device_pack.sh (the cache makes .device too big to carry
# unpacked), and on the GPU machine (device tool, carry .pack):
# bash scripts/device_unpack.sh && bash tests/gpu/check.sh
# Usage: tests/gpu/prepare.sh [BUILD_DIR]   (default build)
# GPUC_DEVICE_ARCH: the GPU's architecture (default sm_90) for the cache.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
dev=$root/.device
rm -rf "$dev/prefix" "$dev/cache" "$dev/gpu"
mkdir -p "$dev/gpu"
cmake --install "$build" --prefix "$dev/prefix" > /dev/null
gpuc=$dev/prefix/bin/gpuc
export GPUC_HOME=$dev/prefix GPUC_CACHE_DIR=$dev/cache
# gpuc test --backend=cuda builds for the device's architecture only (sm_90
# on an H100 or H200: its cubin and compute_90 PTX), so those are compiled here
arch=${GPUC_DEVICE_ARCH:-sm_90}
"$gpuc" test --backend=c --arch="$arch" "$root/examples" "$root/stdlib" "$root/tests/gpu/blocks" | tail -n 1
# check.sh runs the wide scans' blocks again with their streaming kernel on
GPUC_SCAN_WIDE=1 "$gpuc" test --backend=c --arch="$arch" "$root/tests/gpu/blocks/scan_stream_wide.gdsl" | tail -n 1
# and the row blocks with the warp-a-row kernel off
GPUC_ROW_WARP=0 "$gpuc" test --backend=c --arch="$arch" "$root"/tests/gpu/blocks/rows*.gdsl "$root/examples/softmax.gdsl" | tail -n 1
"$gpuc" "$root/examples/softmax.gdsl" -o "$dev/gpu/softmax"
"$gpuc" --emit=program "$root/tests/gpu/oom.gdsl" -o "$dev/gpu/program.c"
"$gpuc" --emit=cuda "$root/tests/gpu/oom.gdsl" -o "$dev/gpu/oom.cu"
du -sh "$dev"
