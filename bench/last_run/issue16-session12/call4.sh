#!/usr/bin/env bash
# Session 12, device call 4 (H200): call 3's profile showed the generated
# row stream kernel making 2.4x the prototype's L2 read requests and 1.25x
# its L2 write sectors for the same DRAM bytes; its ring (dynamic shared
# memory) started 16-byte aligned after 1008 bytes of static shared memory,
# the prototype's 128-byte aligned. Now __align__(128) (the stream ring and
# the stash of the one-block and cluster kernels). Row softmax at every row
# length (new against call 3's tags build, the old alignment), at 262144
# also the fence-and-count (baseal) and release-count (relal) exchanges with
# the alignment; LayerNorm at every length; then a profile of the new kernel.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; mkdir -p $R
S=bench/bin/sv; B=bench/gen/bin
timeout 30 $B/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for v in new tags tags new; do
  b=$B/bench_rows; [ $v != new ] && b=$S/bench_rows_$v
  timeout 90 $b --case row_softmax --sizes 28 --out $R/sm_$v.jsonl >/dev/null 2>>$R/bench.log || echo "softmax $v failed"
done
for v in baseal relal relal baseal; do
  BENCH_ROW_LENGTH=262144 timeout 60 $S/bench_rows_$v --case row_softmax --sizes 28 --out $R/sm_$v.jsonl >/dev/null 2>>$R/bench.log || echo "softmax $v failed"
done
for i in 1 2; do timeout 90 $B/bench_rows_nn --case layer_norm --sizes 28 --out $R/ln_new.jsonl >/dev/null 2>>$R/bench.log || echo "layernorm failed"; done
python3 - $R <<'PY'
import json, sys, os
d = sys.argv[1]
L = lambda f: [json.loads(l) for l in open(os.path.join(d, f))] if os.path.exists(os.path.join(d, f)) else []
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in L("copy.jsonl") if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
for f in ("sm_new", "sm_tags", "sm_baseal", "sm_relal", "ln_new"):
    by = {}
    for r in L(f + ".jsonl"): by.setdefault(r.get("m"), []).append(r)
    for m, rs in sorted(by.items(), key=lambda x: x[0] or 0):
        us = [r["us"] for r in rs]
        print("| %s | m=%s | %s | %.3f | %s |" % (f, m, " / ".join("%.1f" % u for u in us), 2 * rs[0]["n"] * 4 / min(us) / 1e3 / copy, ",".join(sorted(set(str(r.get("check")) for r in rs)))))
PY
echo "== ncu $(date -u +%T)"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
BENCH_ROW_LENGTH=262144 timeout 60 ncu --clock-control none --metrics $M -k regex:_st -c 1 $B/bench_rows --case row_softmax --sizes 28 --once > $R/ncu_new.txt 2>&1; echo "ncu rc=$?"
grep -E "^\s+(gpu__|dram__|lts__)" $R/ncu_new.txt | awk '{print $1, $(NF-1), $NF}'
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz *.jsonl ncu_*.txt bench.log) 2>/dev/null
