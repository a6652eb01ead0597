#!/usr/bin/env bash
# bench/paths/nvrtc_regs.sh: the registers of every kernel of the bench
# programs as the two compilers build them: nvcc (bench/run.sh's drivers,
# the --emit=cuda path) and NVRTC (gpuc's executables and --emit=lib
# libraries, through the runtime). No GPU needed: nvcc, NVRTC and a cuobjdump
# that reads sm_90 cubins (CUOBJDUMP, default cuobjdump in PATH).
#   bench/paths/nvrtc_regs.sh [PROG ...]     (default: every bench/programs/*.gdsl)
# Prints "kernel nvrtc nvcc" for every kernel whose counts differ, then a
# count of those that agree. A kernel with more registers under NVRTC can
# fit fewer blocks per SM: a gap between the paths that is the compiler's.
set -u
cd "$(dirname "$0")/../.."
CUOBJDUMP=${CUOBJDUMP:-cuobjdump}
ARCH=${ARCH:-sm_90}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cc -std=c11 -O2 -Iruntime bench/paths/nvrtc_image.c build/runtime/libgpuc_runtime.a -ldl -lpthread -lm \
  -o "$T/nvrtc_image" || exit 1
PROGS=("$@")
[ ${#PROGS[@]} -gt 0 ] || for f in bench/programs/*.gdsl; do PROGS+=("$(basename "$f" .gdsl)"); done
regs() { "$CUOBJDUMP" -res-usage "$1" 2>&1 | grep -A1 "Function" | paste - - |
         sed -E 's/.*Function ([^:]*):.*REG:([0-9]+).*/\1 \2/' | sort; }
for p in "${PROGS[@]}"; do
  build/driver/gpuc --emit=cuda "bench/programs/$p.gdsl" -o "$T/$p.cu" || continue
  GPUC_CACHE_DIR=$T/cache "$T/nvrtc_image" "$T/$p.cu" "$ARCH" "$T/$p.nvrtc.cubin" || continue
  nvcc -O3 -std=c++17 -arch="$ARCH" -lineinfo -cubin -o "$T/$p.nvcc.cubin" "$T/$p.cu" || continue
  join <(regs "$T/$p.nvrtc.cubin") <(regs "$T/$p.nvcc.cubin")
done | awk '$2 != $3 { print "registers differ: " $1 " nvrtc " $2 " nvcc " $3; d++ } $2 == $3 { n++ }
            END { printf "%d kernels with the same registers, %d differ\n", n, d }'
