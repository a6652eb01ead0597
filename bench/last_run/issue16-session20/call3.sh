#!/usr/bin/env bash
# Session 20, device call 3 (H200): row softmax at rows of 262144, more
# variants of the stream kernel (bench/exp/softmax_stream_variants.py):
# direct stores with lags of 4 and 5, and the post without its wait for the
# row's totals (timing only); then ncu with source counters on the generated
# kernel (base) and, for comparison, ncu's summary of the 4-byte scan's
# stream kernel, which has the same ring and reaches 0.96.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT; S=bench/bin/sv
V="base direct direct_l4 direct_l5 nowait direct_nowait"
timeout 30 bench/gen/bin/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for v in $V $(echo $V | tr ' ' '\n' | tac); do
  BENCH_ROW_LENGTH=262144 timeout 60 $S/bench_rows_$v --case row_softmax --sizes 28 --out $R/sv_$v.jsonl >/dev/null 2>>$R/bench.log || echo "bench_rows_$v exit $?"
done
python3 - $R $V <<'PY'
import json, sys, os
d, names = sys.argv[1], sys.argv[2:]
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in map(json.loads, open(d + "/copy.jsonl")) if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
print("| variant | us (two runs) | of the copy rate | / base | check |")
base = None
for v in names:
    f = "%s/sv_%s.jsonl" % (d, v)
    rs = [json.loads(l) for l in open(f)] if os.path.exists(f) else []
    if not rs: print("| %s | - | - | - | missing |" % v); continue
    us = [r["us"] for r in rs]
    base = base or min(us)
    print("| %s | %s | %.3f | %.3f | %s |" % (v, " / ".join("%.1f" % u for u in us), 2 * rs[0]["n"] * 4 / min(us) / 1e3 / copy, min(us) / base, ",".join(sorted(set(r["check"] for r in rs)))))
PY
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
date +%T
BENCH_ROW_LENGTH=262144 timeout 120 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section SourceCounters --import-source yes -k "regex:row_softmax_k0_rowred_st\$" -c 1 -o $R/sm $S/bench_rows_base --case row_softmax --sizes 28 --once > $R/sm.log 2>&1
echo "ncu exit $?"
ncu --import $R/sm.ncu-rep --page source --print-source cuda,sass --csv > $R/sm_cs.csv 2> /dev/null
ncu --import $R/sm.ncu-rep --page details --csv > $R/sm_details.csv 2>&1
grep -E '"(Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Warp Cycles Per Issued Instruction|Issued Warp Per Scheduler|Eligible Warps Per Scheduler|Active Warps Per Scheduler)"' $R/sm_details.csv | cut -d, -f12- | tr -d '"' | tr '\n' ';'; echo
(cd $R && python3 $OLDPWD/bench/last_run/issue16-session17/ncu_lines.py sm 2>&1 | head -n 45)
rm -f $R/sm_cs.csv
date +%T
timeout 90 ncu --clock-control none --section SpeedOfLight --section WarpStateStats -k "regex:incl_f32_k0_scan_stream\$" -c 1 -o $R/sc bench/gen/bin/bench_scan --case incl_f32 --sizes 28 --once > $R/sc.log 2>&1
echo "ncu exit $?"
ncu --import $R/sc.ncu-rep --page details --csv > $R/sc_details.csv 2>&1
grep -E '"(Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Warp Cycles Per Issued Instruction|Issued Warp Per Scheduler|Eligible Warps Per Scheduler|Active Warps Per Scheduler)"' $R/sc_details.csv | cut -d, -f12- | tr -d '"' | tr '\n' ';'; echo
rm -f $R/*.ncu-rep
date +%T
