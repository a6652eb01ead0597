#!/usr/bin/env bash
# gpu.sh: the differential tests on the GPU machine (docs/reliability.md).
# On the CPU machine first: tests/gpu/prepare.sh (fills .device/prefix, which
# the device tool carries). Then on the GPU machine, from the repository root:
#   bash difftest/gpu.sh [SECONDS] [JOBS] [SHARD_SECONDS] [RANKS_SECONDS]   (defaults 420, 8, 60, 60)
# Generated programs run optimized on the CUDA backend against a -O0 build on
# the C backend; mismatches are saved and reduced under $OUT/difftest (default
# /tmp/gpuc-difftest). Then, for SHARD_SECONDS (0: not at all), the entries
# gpuc can shard run sharded over one NCCL rank against themselves unsharded
# on the GPU (run.py --shard --backend=cuda; nvcc builds, so give it time),
# saved under $OUT/difftest-shard. Then, for RANKS_SECONDS (0: not at all),
# the executables run plainly and with --ranks N, N the GPUs (one a rank over
# NCCL; run.py --ranks N --backend=cuda), under $OUT/difftest-ranks.
# Ends with "PASS: ..." or "FAIL: ...".
# SECONDS is when it stops starting files: give the call 60 s or so more for
# the files in flight (a "done:" line per finished file says how far a cut
# run got).
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
source "$root/tests/gpu/common.sh"
{ [ "${3:-60}" != 0 ] || [ "${4:-60}" != 0 ]; } && find_nccl
if [ "${3:-60}" != 0 ]; then
  python3 "$root/difftest/run.py" --gpuc "$gpuc" --backend=cuda --shard --seed "${SEED:-1}" --seconds "${3:-60}" \
    --jobs "${2:-8}" --out "$out/difftest-shard" | tee "$out-shard.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  last="$last; sharded: $(tail -n 2 "$out-shard.log" | head -n 1)"
fi
if [ "${4:-60}" != 0 ]; then
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  [ "$gpus" -gt 0 ] || gpus=1
  python3 "$root/difftest/run.py" --gpuc "$gpuc" --backend=cuda --ranks "$gpus" \
    --seed "${SEED:-1}" --seconds "${4:-60}" --jobs "${2:-8}" --out "$out/difftest-ranks" | tee "$out-ranks.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  last="$last; --ranks $gpus: $(tail -n 2 "$out-ranks.log" | head -n 1)"
fi
if [ "$status" = 0 ]; then echo "PASS: $last"; else echo "FAIL: $last (see $out)"; fi
exit "$status"
