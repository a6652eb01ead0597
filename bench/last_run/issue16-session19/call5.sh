#!/usr/bin/env bash
# Session 19, device call 5 (H200): with the device time left after the
# whole run,
#  1. bench/try_variants.sh: LOOKBACK 64 (GPUC_SCAN_LOOKBACK=64) over the
#     new wide-scan shape, and emit_scan's kernel, against the default;
#  2. ncu (SpeedOfLight, MemoryWorkloadAnalysis, WarpStateStats,
#     SourceCounters) on the wide i64 inclusive scan at 2^28: where its
#     warps wait now (session 17's ncu_lines.py sums the samples a line).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
date +%T
OUT=$R/tv timeout 120 bash bench/try_variants.sh > $R/tv.txt 2>&1; echo "rc=$?"
tail -n 10 $R/tv.txt
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
date +%T
timeout 90 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section SourceCounters --import-source yes -k "regex:incl_i64_k0_scan_stream\$" -c 1 -o $R/w_i64 bench/gen/bin/bench_scan --case incl_i64 --sizes 28 --once > $R/w_i64.log 2>&1
echo "ncu exit $?"
ncu --import $R/w_i64.ncu-rep --page source --print-source cuda,sass --csv > $R/w_i64_cs.csv 2> /dev/null
ncu --import $R/w_i64.ncu-rep --page details --csv > $R/w_i64_details.csv 2>&1
grep -E '"(Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Warp Cycles Per Issued Instruction)"' $R/w_i64_details.csv | cut -d, -f12- | tr -d '"' | tr '\n' ';'; echo
cd $R && python3 $OLDPWD/bench/last_run/issue16-session17/ncu_lines.py w_i64 2>&1 | head -n 40
rm -f $R/w_i64_cs.csv
date +%T
