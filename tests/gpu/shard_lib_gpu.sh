#!/usr/bin/env bash
# shard_lib_gpu.sh: a library's NAME_new_comm on one GPU (docs/library.md,
# docs/sharding.md), from the repository root on the device machine after
# tests/gpu/prepare.sh filled .device/ here: gpuc --emit=lib of
# tests/shard/Inputs/lib_comm.gdsl and tests/shard/{maps,reductions,scans,
# filters,rows,tuples}.gdsl, then shard_lib_gpu.py: every sharded entry over a
# 1-rank communicator (ncclCommInitRank through gpuc_comm_nccl_init_rank)
# equal to the plain entry; then several handles in one process, a thread
# each, called at once (2+ GPUs: a rank per GPU of one communicator; one
# GPU: two 1-rank handles, as NCCL refuses two ranks on one device). libnccl: $GPUC_NCCL_LIBRARY, libnccl.so.2, or
# PyTorch's nvidia-nccl wheel. Ends with "shard_lib_gpu: PASS" or "FAIL".
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dev=$root/.device
out=${OUT:-/tmp/gpuc-shard-lib-gpu}
mkdir -p "$out"
source "$root/tests/gpu/common.sh"
gpuc_tools so
arch=${GPUC_DEVICE_ARCH:-sm_90}
find_nccl
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1
names=(lib_comm maps reductions scans filters rows tuples)
for n in "${names[@]}"; do
  src=$root/tests/shard/$n.gdsl
  [ "$n" = lib_comm ] && src=$root/tests/shard/Inputs/lib_comm.gdsl
  "$gpuc" --emit=lib --arch="$arch" "$src" -o "$out/lib$n" > "$out/$n.build.log" 2>&1 &
done
wait
built=()
for n in "${names[@]}"; do
  if [ -f "$out/lib$n.so" ]; then built+=("$n"); else echo "$n: BUILD FAILED"; tail -n 5 "$out/$n.build.log"; fi
done
timeout 300 python3 "$root/tests/gpu/shard_lib_gpu.py" "$lib/libgpuc_runtime.so" "$out" "${built[@]}"
rc=$?
[ ${#built[@]} -eq ${#names[@]} ] || { echo "shard_lib_gpu: FAIL (a library did not build)"; exit 1; }
exit $rc
