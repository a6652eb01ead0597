#!/usr/bin/env bash
# Session 15, device call B (H200): is the long-row softmax kernel
# (row_softmax_k0_rowred_st, 0.864 of the copy rate; ncu in call A: SM issue
# 73% busy, DRAM 76%) bound by its instructions? bench_rows built from
# bench/gen/rows.cu with that kernel's post edited (by /tmp/sv/mk.py, see
# the session's README): rcp (x * (1/s), not correctly rounded), mark (x / s
# correctly rounded from 1/s by one FMA step, Markstein, a / b outside
# 2^-100..2^100), fastexp (rcp and __expf). Three rounds in turn at rows of
# 262144. Then ncu of the wide streaming scan (-DGPUC_SCAN_WIDE=1) for the
# recurrence and the i64 scan.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; rm -rf $R; mkdir -p $R
for round in 1 2 3; do
  for v in base rcp mark fastexp; do
    b=svbin/rows_$v; [ $v = base ] && b=bench/gen/bin/bench_rows
    echo "== $v round $round $(date -u +%T)"
    BENCH_ROW_LENGTH=262144 timeout 60 $b --case row_softmax --sizes 28 | grep -v '^{'
  done
done > $R/rows.txt 2>&1
for v in rcp mark; do echo "== $v at 32768"; BENCH_ROW_LENGTH=32768 timeout 60 svbin/rows_$v --case row_softmax --sizes 28 | grep -v '^{'; done >> $R/rows.txt 2>&1
cat $R/rows.txt
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats"
for cs in recurrence incl_i64 incl_f32; do
  echo "== ncu wide $cs" >> $R/ncu.txt
  timeout 100 ncu --clock-control none $sections -k "regex:${cs}_k" -c 1 svbin/scan_wide --case $cs --sizes 28 --once >> $R/ncu.txt 2>&1
done
grep -E '^==|^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Registers Per Thread|No Eligible|Warp Cycles Per Issued|Issued Warp|stalled|Est. Speedup' $R/ncu.txt
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz *.txt) 2>/dev/null
