#!/usr/bin/env bash
# Session 18, device call 2 (H200): SCAN BULK 3 WIDE (GPUC_SCAN_WIDE=1),
# what holds it at 0.80 (recurrence) / 0.83 (i64) of the copy rate when the
# 4-byte stream kernel with the same ring and tile bytes reaches 0.96:
#  1. bench/try_variants.sh: the wide kernel with a ring of 7 slots, a lag
#     of 3 tiles, both (gpuc built with -DSS_RING_SLOTS / -DSS_LAG_TILES);
#  2. ncu (SpeedOfLight, MemoryWorkloadAnalysis, WarpStateStats,
#     SourceCounters) on the wide recurrence and incl_i64 kernels and on the
#     default incl_i32 stream kernel at 2^28: stall samples per source line.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
echo "== try_variants"; date +%T
OUT=$R/tv timeout 200 bash bench/try_variants.sh > $R/tv.txt 2>&1; echo "rc=$?"
tail -n 30 $R/tv.txt
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
echo "== ncu"; date +%T
run() { # run NAME BINARY CASE KERNEL
  timeout 100 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section SourceCounters --import-source yes -k "regex:$4\$" -c 1 -o $R/$1 $2 --case $3 --sizes 28 --once > $R/$1.log 2>&1
  echo "$1: ncu exit $?"
  ncu --import $R/$1.ncu-rep --page source --print-source cuda,sass --csv > $R/${1}_cs.csv 2> /dev/null
  ncu --import $R/$1.ncu-rep --page details --csv > $R/${1}_details.csv 2>&1
  grep -E '"(Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Warp Cycles Per Issued Instruction|Avg. Active Threads Per Warp)"' $R/${1}_details.csv | cut -d, -f12- | tr -d '"' | tr '\n' ';'; echo
}
run w_rec bench/bin/variants/wide/bench_scan recurrence recurrence_k0_scan_stream
run w_i64 bench/bin/variants/wide/bench_scan incl_i64 incl_i64_k0_scan_stream
run s_i32 bench/gen/bin/bench_scan incl_i32 incl_i32_k0_scan_stream
cd $R && python3 $OLDPWD/bench/last_run/issue16-session17/ncu_lines.py w_rec w_i64 s_i32 2>&1 | head -n 80
date +%T
# (it ran with a byte-identical copy of session 17's ncu_lines.py beside it, since removed)
