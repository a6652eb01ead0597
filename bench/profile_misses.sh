#!/usr/bin/env bash
# bench/profile_misses.sh: ncu profiles of the cases that miss issue 16's
# targets, at the sizes the targets name (2^28 elements; the f64 product at
# 1024^3), one launch each, for docs/performance.md's reasoning (issue 16
# item 7). On the GPU machine, from the repository root, after
# `bench/run.sh --prepare` on the build machine (bench/gen/bin):
#   bash bench/profile_misses.sh            (results in $OUT or /tmp/profile_misses)
# Each case's kernels under ncu with the throughput, memory, occupancy,
# launch, scheduler and warp-state sections (ncu.txt), then the figures the
# reasoning uses (duration, DRAM throughput, occupancy, waves, issue). The drivers check their results as in
# bench/run.sh; a failing driver is named and the script exits 1.
set -u
cd "$(dirname "$0")/.."
RES=${OUT:-/tmp/profile_misses}
mkdir -p "$RES"
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
command -v ncu >/dev/null || { echo "profile_misses: no ncu on the PATH" >&2; exit 2; }
BIN=bench/gen/bin
[ -x $BIN/bench_scan ] || BIN=bench/bin
rc=0
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats"
prof() {  # prof NAME DRIVER CASE KERNEL_REGEX COUNT [ENV...]
  local name=$1 drv=$2 cs=$3 rx=$4 count=$5; shift 5
  echo "== $name: $drv --case $cs (kernels /$rx/, $count launch(es)) $*" >>"$RES/ncu.txt"
  if ! env "$@" timeout 120 ncu --clock-control none $sections -k "regex:$rx" -c "$count" \
      "$BIN/$drv" --case "$cs" --sizes 28 --once >>"$RES/ncu.txt" 2>&1; then
    echo "profile_misses: $name failed (exit $?)" >&2; rc=1
  fi
}
# the misses of the latest whole run (H200, 2026-11-28 18:33 UTC), and the
# 4-byte scan (met, 0.96: the same streaming structure) to set the i64 scan
# and the recurrence (0.84, 0.78; emit_scan's register kernel) against
prof softmax_262144 bench_rows row_softmax row_softmax_k 1 BENCH_ROW_LENGTH=262144
prof scan_incl_i64 bench_scan incl_i64 incl_i64_k 1
prof recurrence bench_scan recurrence recurrence_k 1
prof scan_incl_f32 bench_scan incl_f32 incl_f32_k 1
# the figures the reasoning quotes, one block a kernel
grep -E '^==|^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Waves Per SM|Registers Per Thread|Block Limit (Registers|Shared Mem)|No Eligible|Warp Cycles Per Issued' "$RES/ncu.txt"
exit $rc
