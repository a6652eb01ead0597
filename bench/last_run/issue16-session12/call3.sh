#!/usr/bin/env bash
# Session 12, device call 3 (H200): why the tagged-word exchange (call 2:
# 708 us) is no faster than the fence and count it replaced (721 us) while
# a release reduction on the count took 672: the gatherers' polling
# (bench/exp/softmax_tags_variants.py: tags, lock, nosleep, sleep256) against
# rel and the hand-written prototype in the same call, then one profile
# (ncu, memory counters) of the generated kernel, of rel and of the prototype.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; mkdir -p $R
S=bench/bin/sv
timeout 30 bench/gen/bin/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for v in tags lock nosleep sleep256 rel rel sleep256 nosleep lock tags; do
  BENCH_ROW_LENGTH=262144 timeout 60 $S/bench_rows_$v --case row_softmax --sizes 28 --out $R/sm_$v.jsonl >/dev/null 2>>$R/bench.log || echo "softmax $v failed"
done
python3 - $R <<'PY'
import json, sys, os
d = sys.argv[1]
L = lambda f: [json.loads(l) for l in open(os.path.join(d, f))] if os.path.exists(os.path.join(d, f)) else []
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in L("copy.jsonl") if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
for v in ("tags", "lock", "nosleep", "sleep256", "rel"):
    rs = L("sm_%s.jsonl" % v)
    if not rs: print(v, "missing"); continue
    us = [r["us"] for r in rs]
    print("| %s | %s | %.3f | %s |" % (v, " / ".join("%.1f" % u for u in us), 2 * rs[0]["n"] * 4 / min(us) / 1e3 / copy, ",".join(sorted(set(str(r.get("check")) for r in rs)))))
PY
echo "== prototype $(date -u +%T)"
timeout 120 $S/try_softmax_stream 262144 2>&1 | grep -E "copy rate|ws 16 consumers, 2 gatherers|no exchange" | head -n 5
echo "== ncu $(date -u +%T)"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__inst_executed.sum,smsp__inst_executed_op_global_ld.sum
for v in tags rel; do
  BENCH_ROW_LENGTH=262144 timeout 60 ncu --clock-control none --metrics $M -k regex:_st -c 1 $S/bench_rows_$v --case row_softmax --sizes 28 --once > $R/ncu_$v.txt 2>&1; echo "ncu $v rc=$?"
done
timeout 90 ncu --clock-control none --metrics $M -k regex:softmax_ws --launch-skip 3 -c 1 $S/try_softmax_stream 262144 > $R/ncu_proto.txt 2>&1; echo "ncu proto rc=$?"
for v in tags rel proto; do echo "-- $v"; grep -E "^\s+(gpu__|dram__|lts__|sm__|smsp__)" $R/ncu_$v.txt | awk '{print $1, $(NF-1), $NF}' | head -n 14; done
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz *.jsonl ncu_*.txt bench.log) 2>/dev/null
