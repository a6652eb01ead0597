#!/usr/bin/env bash
# gpu.sh: the differential tests on the GPU machine (docs/reliability.md).
# On the CPU machine first: tests/gpu/prepare.sh (fills .device/prefix, which
# the device tool carries). Then on the GPU machine, from the repository root:
#   bash difftest/gpu.sh [SECONDS] [JOBS]      (defaults 420 and 8)
# Generated programs run optimized on the CUDA backend against a -O0 build on
# the C backend; mismatches are saved and reduced under $OUT/difftest (default
# /tmp/gpuc-difftest). Ends with "PASS: ..." or "FAIL: ...". SECONDS is when
# it stops starting files: give the call 60 s or so more for the files in
# flight (a "done:" line per finished file says how far a cut run got).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/gpuc-difftest}
if [ -x "$root/.device/prefix/bin/gpuc" ]; then
  export GPUC_HOME=$root/.device/prefix GPUC_CACHE_DIR=${GPUC_CACHE_DIR:-$root/.device/cache}
  gpuc=$root/.device/prefix/bin/gpuc
else
  gpuc=$root/build/driver/gpuc
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
python3 "$root/difftest/run.py" --gpuc "$gpuc" --backend=cuda --seed "${SEED:-1}" --seconds "${1:-420}" \
  --jobs "${2:-8}" --reduce-seconds 45 --out "$out/difftest" | tee "$out.log"
status=${PIPESTATUS[0]}
last=$(tail -n 2 "$out.log" | head -n 1)
if [ "$status" = 0 ]; then echo "PASS: $last"; else echo "FAIL: $last (see $out/difftest)"; fi
exit "$status"
