#!/usr/bin/env bash
# Session 14, device call A (H200): main at the session's start (4522bd9:
# the scans' stream launcher's thread count, SW_TILE_ITEMS, ROW DEAD
# RESULTS, none of the last two run through random programs on a GPU):
# the GPU test blocks and random programs against the C backend; then the
# wide-scan variants (bench/try_variants.sh wide wlb4 w6k) for the i64
# scans and the recurrence, and the L2-reload long-row softmax prototype
# (bench/try_softmax_l2.cu) against gpuc's row softmax at 262144 and 32768.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; mkdir -p $R
echo "== check.sh $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 200 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
grep -E "^PASS|^FAIL|passed, " $R/check.txt | cut -c1-200 | tail -n 8
echo "== difftest $(date -u +%T)"
OUT=$R SEED=20261401 timeout 170 bash difftest/gpu.sh 100 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
grep -E '^PASS|^FAIL|done:' $R/difftest.txt | tail -n 3
echo "== softmax_l2 $(date -u +%T)"
timeout 120 bench/bin/try_softmax_l2 262144 32768 > $R/softmax_l2.txt 2>&1; echo "softmax_l2 rc=$?"
cat $R/softmax_l2.txt
for i in 1 2; do
  for m in 262144 32768; do
    BENCH_ROW_LENGTH=$m timeout 60 bench/gen/bin/bench_rows --case row_softmax --sizes 28 --out $R/gpuc_rows.jsonl >/dev/null 2>>$R/bench.log || echo "bench_rows m=$m failed"
  done
done
timeout 30 bench/gen/bin/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in map(json.loads, open(d + "/copy.jsonl")) if r["case"] == "copy"][0]
for r in map(json.loads, open(d + "/gpuc_rows.jsonl")):
    print("gpuc row_softmax m=%s: %.1f us, %.3f of copy %.1f GB/s, %s" % (r.get("m"), r["us"], 8 * r["n"] / r["us"] / 1e3 / copy, copy, r.get("check")))
PY
echo "== variants $(date -u +%T)"
OUT=$R/var timeout 200 bash bench/try_variants.sh wide wlb4 w6k > $R/variants.txt 2>&1; echo "variants rc=$?"
cat $R/variants.txt
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz *.txt *.jsonl bench.log var) 2>/dev/null
