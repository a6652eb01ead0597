#!/usr/bin/env bash
# shard_gpu.sh: sharded entries on the GPU over NCCL (docs/sharding.md), run
# from the repository root on the device machine after tests/gpu/prepare.sh
# filled .device/ here. For every tests/shard/*.gdsl that shard_check covers:
# gpuc --emit=cuda-shard, nvcc with tests/gpu/shard_gpu_check.cu, then every
# entry plain against sharded with 1 rank over NCCL (integers exactly, floats
# within rounding; 112 cases an entry: sizes 0 .. 1000, four ways of
# splitting). Entries the CUDA backend does not shard yet are named.
# libnccl: $GPUC_NCCL_LIBRARY, libnccl.so.2, or PyTorch's nvidia-nccl wheel.
# Ends with one table and "shard_gpu: PASS" or "shard_gpu: FAIL".
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dev=$root/.device
out=${OUT:-/tmp/gpuc-shard-gpu}
mkdir -p "$out"
source "$root/tests/gpu/common.sh"
gpuc_tools a
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=${GPUC_DEVICE_ARCH:-sm_90}
find_nccl
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1
files=(filters maps reductions rows scans tuples oob_rows)
build() {   # build NAME: the .cu and the checker, in parallel for all files
  local f=$1
  "$gpuc" --emit=cuda-shard "$root/tests/shard/$f.gdsl" -o "$out/$f.cu" > "$out/$f.build.log" 2>&1 &&
  "$nvcc" -std=c++17 -O1 -arch="$arch" -I "$inc" -I "$root/tests/shard/Inputs" -DGPUC_SHARD_FILE="\"$out/$f.cu\"" \
    "$root/tests/gpu/shard_gpu_check.cu" "$lib/libgpuc_runtime.a" -ldl -lpthread -o "$out/$f.check" >> "$out/$f.build.log" 2>&1
}
for f in "${files[@]}"; do build "$f" & done
wait
status=0
printf '%-12s %-6s %-8s %s\n' file result entries "cases / not sharded on the GPU yet"
for f in "${files[@]}"; do
  skipped=$(grep -o 'entry [a-z_0-9]*: not sharded on the GPU yet' "$out/$f.cu" 2>/dev/null | awk '{print $2}' | tr -d ':' | tr '\n' ' ')
  if [ ! -x "$out/$f.check" ]; then
    printf '%-12s %-6s %-8s %s\n' "$f" BUILD - "see $out/$f.build.log"; status=1; tail -n 5 "$out/$f.build.log"; continue
  fi
  timeout 60 "$out/$f.check" > "$out/$f.log" 2>&1
  rc=$?
  last=$(tail -n 1 "$out/$f.log")
  n=$(grep -c 'all equal to the unsharded entry' "$out/$f.log")
  if [ $rc -eq 0 ] && [[ $last == "shard_check: PASS: 0 entries"* ]]; then r=NONE
  elif [ $rc -eq 0 ] && [[ $last == "shard_check: PASS"* ]]; then r=PASS; else r=FAIL; status=1; fi
  printf '%-12s %-6s %-8s %s\n' "$f" "$r" "$n" "$(echo "$last" | sed 's/.*cases, //;s/shard_check: //') ${skipped:+/ not sharded: $skipped}"
  [ $r = FAIL ] && grep -m 5 'MISMATCH\|FAIL\|error' "$out/$f.log"
done
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -gt 1 ] && echo "note: $gpus GPUs visible; 2..N ranks are not run yet (see tests/gpu/shard_gpu_check.cu)"
[ $status -eq 0 ] && echo "shard_gpu: PASS" || echo "shard_gpu: FAIL"
exit $status
