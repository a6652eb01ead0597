#!/usr/bin/env bash
# Session 15, device call D (H200): the grid-stride reduce kernel's online
# pair folded a group of vectors at a time (backend/cuda/element.c, "ONLINE
# PAIR"; stride.c). tests/gpu/check.sh on this build (every test block on the
# CUDA backend against the expected values and the C backend, among them
# the new tests/gpu/blocks/pair_fold.gdsl), 100 x 14 random programs of
# difftest/gpu.sh, then bench_stats (logsumexp, softmax statistics at 2^28)
# before (svbin/stats_old, main at 10dbccd) and after, three rounds in turn;
# ncu of cross-entropy at rows of 1024 (1.045x torch.compile's time in call
# C) and of the new logsumexp kernel.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
echo "== check $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 200 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
tail -5 $R/check.txt
echo "== difftest $(date -u +%T)"
OUT=$R/dt SEED=20261501 timeout 170 bash difftest/gpu.sh 100 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
tail -4 $R/difftest.txt
echo "== stats $(date -u +%T)"
for round in 1 2 3; do
  for v in old new; do
    b=svbin/stats_old; [ $v = new ] && b=bench/gen/bin/bench_stats
    for cs in logsumexp softmax_stats; do
      echo "$v round $round $cs: $(timeout 30 $b --case $cs --sizes 28 | grep -v '^{')"
    done
  done
done > $R/stats.txt 2>&1
cat $R/stats.txt
echo "== ncu $(date -u +%T)"
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats"
BENCH_ROW_LENGTH=1024 timeout 100 ncu --clock-control none $sections -k regex:xent_k -c 1 bench/gen/bin/bench_rows_nn --case xent --sizes 28 --once > $R/ncu.txt 2>&1
timeout 100 ncu --clock-control none $sections -k regex:logsumexp -c 1 bench/gen/bin/bench_stats --case logsumexp --sizes 28 --once >> $R/ncu.txt 2>&1
grep -E '^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Registers Per Thread|No Eligible|Issued Warp|Local Memory Spilling Requests  ' $R/ncu.txt
echo "== end $(date -u +%T)"
