#!/usr/bin/env bash
# bench/shard_scale.sh: issue 17's scaling measurement (docs/sharding.md) on
# a machine with several GPUs (nvidia-h200-x2, -x4, -x8), from the
# repository root after tests/gpu/prepare.sh on the build machine (carry
# .device). One call does all of it, in about 3 minutes on 8 H200s:
#   1. gpuc --emit=lib of bench/shard_scale.gdsl (fill, sum, max, inclusive
#      scan, filter) and cc of bench/shard_scale.c over the library;
#   2. shard_scale --self-test (the closed forms the results are checked by);
#   3. sum, max, inclusive scan and filter of 2^30 i32 per GPU on 1, 2, 4
#      and 8 GPUs (those visible), a rank per GPU and thread in one process
#      over one ncclCommInitAll communicator; every result checked; the
#      table: median time, GB/s per GPU, weak-scaling efficiency t(1)/t(N)
#      (the issue's target: 0.9 or more), the collectives' bytes per GPU and
#      their time at NVLink's bandwidth;
#   4. with 2+ GPUs the big run: 2^34 i32 per GPU (2 GPUs: 256 GB of input
#      and scan result in all, more than one H200's 141 GB), sum and scan,
#      checked.
# Options (environment): SHARD_SCALE_LOG2 (30), SHARD_SCALE_BIG (34; 0: no
# big run), SHARD_SCALE_GPUS (e.g. "1,2"), SHARD_SCALE_NVLINK_GBS (450, one
# direction of H100/H200 NVLink 4). On one GPU it runs the 1-GPU row only
# (a check of the whole path; no scaling). Ends with `shard_scale: PASS`
# or `FAIL`; the table also goes to $OUT/shard_scale.md when OUT is set.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dev=$root/.device
out=${OUT:-/tmp/gpuc-shard-scale}
mkdir -p "$out"
source "$root/tests/gpu/common.sh"
gpuc_tools so
arch=${GPUC_DEVICE_ARCH:-sm_90}
find_nccl
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader 2>/dev/null
nvidia-smi topo -m 2>/dev/null | head -n 10
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || gpus=1
counts=${SHARD_SCALE_GPUS:-$(for n in 1 2 4 8; do [ "$n" -le "$gpus" ] && printf '%s,' "$n"; done | sed 's/,$//')}
big=${SHARD_SCALE_BIG:-34}
[ "$gpus" -ge 2 ] || big=0
date -u +"date: %Y-%m-%d %H:%M UTC"
"$gpuc" --emit=lib --arch="$arch" "$root/bench/shard_scale.gdsl" -o "$out/libss" > "$out/build.log" 2>&1 &&
cc -std=c11 -D_DEFAULT_SOURCE -O2 -Wall -I"$out" -I"$inc" "$root/bench/shard_scale.c" -L"$out" -lss -L"$lib" -lgpuc_runtime \
  -Wl,-rpath,"$out:$lib" -lpthread -lm -o "$out/shard_scale" >> "$out/build.log" 2>&1 ||
  { cat "$out/build.log"; echo "shard_scale: FAIL (build)"; exit 1; }
"$out/shard_scale" --self-test || { echo "shard_scale: FAIL"; exit 1; }
echo "GPU counts: $counts; 2^${SHARD_SCALE_LOG2:-30} i32 per GPU; big run: ${big:-0}"
# a rank that fails before a collective leaves the others waiting in it: the time limit ends that
timeout 500 "$out/shard_scale" --gpus "$counts" --log2 "${SHARD_SCALE_LOG2:-30}" --big "$big" \
  --nvlink-gbs "${SHARD_SCALE_NVLINK_GBS:-450}" | tee "$out/shard_scale.md"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 124 ] && echo "shard_scale: FAIL (timed out: a rank failed and left the others in a collective)"
exit "$rc"
