#!/usr/bin/env bash
# Session 10, device call 7 (call 6's results did not come back: too large;
# this one keeps logs on the device and prints summaries). After the fix of
# SCAN BULK 3's look-back offsets (1f0f955), as call 6: the generated streaming kernels (SCAN BULK 3,
# NAME_st) on the GPU for the first time: the GPU test blocks, the
# sanitizer on the new kernels, the bench drivers against the old defaults
# (built with -DGPUC_SCAN_BULK=2 / -DGPUC_ROW_STREAM=0) and CUB in the same
# call, then random programs across the two backends.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
R=/tmp/r; mkdir -p $R
echo "== check.sh $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 170 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
tail -n 6 $R/check.txt; grep -E "FAIL|mismatch|wrong|failed" $R/check.txt | grep -v ' 0 failed' | cut -c1-300 | head -20
echo "== bench $(date -u +%T)"
B=bench/gen/bin; O=bench/bin/old
timeout 60 $B/peers_cub --case copy --sizes 28 --out $R/cub.jsonl 2>>$R/bench.log
for c in scan_incl scan_excl; do timeout 60 $B/peers_cub --case $c --sizes 10,14,20,24,28 --out $R/cub.jsonl 2>>$R/bench.log; done
for v in new old old new; do
  d=$B; [ $v = old ] && d=$O
  for c in incl_i32 incl_f32 excl_i32 excl_f32; do timeout 60 $d/bench_scan --case $c --sizes 10,14,20,24,28 --out $R/scan_$v.jsonl >/dev/null 2>>$R/bench.log || echo "bench_scan $v $c failed"; done
  for m in 262144 65536 32768; do BENCH_ROW_LENGTH=$m timeout 60 $d/bench_rows --case row_softmax --sizes 28 --out $R/rows_$v.jsonl >/dev/null 2>>$R/bench.log || echo "bench_rows $v $m failed"; done
  BENCH_ROW_LENGTH=262144 timeout 60 $d/bench_rows_nn --case layer_norm --sizes 28 --out $R/rows_$v.jsonl >/dev/null 2>>$R/bench.log || echo "bench_rows_nn $v failed"
done
timeout 60 $B/peers_cub --case copy --sizes 28 --out $R/cub.jsonl 2>>$R/bench.log
python3 - $R <<'PY'
import json, sys, os, statistics
d = sys.argv[1]
def load(f): return [json.loads(l) for l in open(os.path.join(d, f))] if os.path.exists(os.path.join(d, f)) else []
cub = load("cub.jsonl")
rates = [2 * r["n"] * 4 / r["us"] / 1e3 for r in cub if r["case"] == "copy"]
print("copy rate before / after: " + " / ".join("%.1f GB/s" % g for g in rates))
cubt = {(r["case"], r["dtype"], r["n"]): r["us"] for r in cub if r["case"] != "copy"}
rows = {}
bad = 0
for v in ("new", "old"):
    for f in ("scan_%s.jsonl" % v, "rows_%s.jsonl" % v):
        for r in load(f):
            bad += r["check"] != "ok"
            rows.setdefault((r["case"], r["dtype"], r["n"], r.get("m", 0)), {}).setdefault(v, []).append(r["us"])
copy = statistics.mean(rates) if rates else float("nan")
print("| case | dtype | n | m | new us | old us | new/old | CUB us | new/CUB | new of copy rate |\n|---|---|---|---|---|---|---|---|---|---|")
for k, v in sorted(rows.items()):
    nw, od = v.get("new", []), v.get("old", [])
    a = min(nw) if nw else float("nan"); o = min(od) if od else float("nan")
    c = cubt.get((k[0], k[1], k[2]))
    byt = 2 * k[2] * 4
    print("| %s | %s | %d | %d | %s | %s | %.3f | %s | %s | %.3f |" % (k[0], k[1], k[2], k[3], "/".join("%.1f" % x for x in nw), "/".join("%.1f" % x for x in od), a / o,
          "%.1f" % c if c else "-", "%.3f" % (a / c) if c else "-", byt / a / 1e3 / copy))
print("results not ok: %d" % bad)
PY
echo "== sanitize $(date -u +%T)"
OUT=$R/san SANITIZE_ONLY='^(scan_stream_f32|scan_stream_i32|row_softmax_st|row_layernorm_st) ' timeout 160 bash tests/gpu/sanitize.sh > $R/sanitize.txt 2>&1; echo "sanitize rc=$?"
grep -E '^(PASS|FAIL)|passed, ' $R/sanitize.txt | cut -c1-200 | tail -n 30; grep -h -A3 'Race reported\|Error: ' $R/san/*.log 2>/dev/null | cut -c1-200 | head -30
echo "== e20 $(date -u +%T)"
GPUC_HOME=$PWD/.device/prefix GPUC_CACHE_DIR=$PWD/.device/cache timeout 60 .device/prefix/bin/gpuc test --backend=cuda bench/last_run/issue16-session10/difftest_e20.gdsl 2>&1 | tail -n 3
echo "== difftest $(date -u +%T)"
OUT=$R/dt SEED=20261129 timeout 100 bash difftest/gpu.sh 55 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
tail -n 3 $R/difftest.txt | cut -c1-300
echo "== end $(date -u +%T)"
cp $R/*.jsonl $OUT/ 2>/dev/null; grep -h -E "^(PASS|FAIL)|passed, " $R/sanitize.txt | cut -c1-300 > $OUT/sanitize_summary.txt; tail -n 40 $R/check.txt | cut -c1-300 > $OUT/check_tail.txt; tail -n 5 $R/difftest.txt | cut -c1-300 > $OUT/difftest_tail.txt

