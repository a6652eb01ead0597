#!/usr/bin/env bash
# bench/paths/build.sh: build the two other ways a bench program is run, for
# bench/run.sh and bench/try_paths.sh (on the GPU machine, or ahead of it on the
# build machine with bench/run.sh --prepare), in the repository root, with gpuc
# and its runtime from build/ (scripts/build.sh) or else from the install prefix
# .device/prefix (tests/gpu/prepare.sh; what the device calls carry):
#   OUT/PROG          the executable, `gpuc bench/programs/PROG.gdsl -o OUT/PROG`
#                     (its own -r/-t timing: bench/paths/exe_bench.py)
#   OUT/lib/PROG/     `gpuc --emit=lib` of it: libPROG.a, PROG.h, ...
#   OUT/lib_PROG      bench/paths/lib_bench.c linked with libPROG.a and the static runtime
#
#   bench/paths/build.sh [--out DIR] [PROG ...]     (default DIR bench/bin/paths, every program)
# GPUC and GPUC_RUNTIME_LIB override where gpuc and libgpuc_runtime.a come from.
# The kernels are compiled for this machine's GPU (nvidia-smi's compute
# capability; sm_90 when there is none), as the executables' and libraries'
# users build them. Builds run in parallel; a failed one is reported with its
# log and the others go on. Exit status 1 if any failed.
set -u
cd "$(dirname "$0")/../.."
OUT=bench/bin/paths
if [ "${1:-}" = "--out" ]; then OUT=$2; shift 2; fi
if [ -z "${GPUC:-}" ] && [ ! -x build/driver/gpuc ] && [ -x .device/prefix/bin/gpuc ]; then
  GPUC=.device/prefix/bin/gpuc
  export GPUC_HOME=${GPUC_HOME:-$PWD/.device/prefix}   # its standard library
  RUNTIME=${GPUC_RUNTIME_LIB:-.device/prefix/lib/libgpuc_runtime.a}
fi
GPUC=${GPUC:-build/driver/gpuc}
RUNTIME=${RUNTIME:-${GPUC_RUNTIME_LIB:-build/runtime/libgpuc_runtime.a}}
if [ ! -x "$GPUC" ] || [ ! -f "$RUNTIME" ]; then
  echo "paths/build: no $GPUC or $RUNTIME (scripts/build.sh build here, or carry .device/prefix from tests/gpu/prepare.sh)" >&2
  exit 1
fi
CC=${CC:-cc}
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
ARCH=sm_${cap:-90}
PROGS=("$@")
[ ${#PROGS[@]} -gt 0 ] || for f in bench/programs/*.gdsl; do PROGS+=("$(basename "$f" .gdsl)"); done
mkdir -p "$OUT/lib"
LOGS=$(mktemp -d)
one() { # one PROG: executable, library, harness
  local p=$1 d=$OUT/lib/$1
  mkdir -p "$d"
  "$GPUC" --arch="$ARCH" "bench/programs/$p.gdsl" -o "$OUT/$p" &&
  "$GPUC" --emit=lib --arch="$ARCH" "bench/programs/$p.gdsl" -o "$d/lib$p" &&
  "$CC" -std=c11 -O2 -fopenmp -DLIB="$p" -include "$d/$p.h" -Iruntime bench/paths/lib_bench.c "$d/lib$p.a" "$RUNTIME" \
    -ldl -lpthread -lm -o "$OUT/lib_$p"
}
pids=()
for p in "${PROGS[@]}"; do
  (one "$p" >"$LOGS/$p.log" 2>&1 || { echo "paths/build: $p failed:"; tail -5 "$LOGS/$p.log"; } >"$LOGS/$p.failed") &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
rc=0
for p in "${PROGS[@]}"; do
  if [ -f "$LOGS/$p.failed" ]; then cat "$LOGS/$p.failed" >&2; rc=1; fi
done
rm -rf "$LOGS"
echo "paths/build: ${#PROGS[@]} program(s) for $ARCH into $OUT (exit $rc)" >&2
exit $rc
