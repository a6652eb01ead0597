#!/usr/bin/env bash
# oom_build.sh: build tests/gpu/oom_midprogram.c against the --emit=program
# output of tests/gpu/oom.gdsl and the runtime and runner sources, as the
# runner's executables are built. Used by tests/gpu/check.sh on the GPU
# machine, and by tests/reliability/oom_build.test here (so that a runtime
# source the link needs is never missing on the GPU machine only).
# Usage: oom_build.sh PROGRAM_DIR OUTPUT   (PROGRAM_DIR holds program.c)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: oom_build.sh PROGRAM_DIR OUTPUT" >&2; exit 2; }
"${CC:-cc}" -std=c11 -O1 -D_DEFAULT_SOURCE -DPROGRAM_C='"program.c"' -I"$root/runtime" -I"$root/runner" -I"$1" \
  -I"${GPUC_CUDA_HOME:-/usr/local/cuda}/include" \
  "$root/tests/gpu/oom_midprogram.c" "$root"/runtime/*.c "$root"/runner/rn_*.c -ldl -lpthread -lm -o "$2"
