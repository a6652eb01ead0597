#!/usr/bin/env bash
# Session 12, device call 1 (H200): the GPU test blocks at main d756632
# (never run on a GPU: the wide kernel off by default, check.sh's
# GPUC_SCAN_WIDE=1 step, launch.c's stream_launch_open/close); then what the
# row softmax stream kernel's arithmetic costs at rows of 262144
# (bench/exp/softmax_ops_variants.py: base, mrk, rcp, fexp, fast, nosel,
# mrk_nosel, rel, mrk_rel, each a bench_rows build) against the hand-written prototype;
# then random programs.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; mkdir -p $R
echo "== check.sh $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 200 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
grep -E "^PASS|^FAIL|passed, " $R/check.txt | cut -c1-200 | tail -n 8
echo "== softmax variants $(date -u +%T)"
S=bench/bin/sv
timeout 30 bench/gen/bin/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for v in base mrk rcp fexp fast nosel mrk_nosel rel mrk_rel mrk_rel rel mrk_nosel nosel fast fexp rcp mrk base; do
  BENCH_ROW_LENGTH=262144 timeout 60 $S/bench_rows_$v --case row_softmax --sizes 28 --out $R/sv_$v.jsonl >/dev/null 2>>$R/bench.log || echo "bench_rows_$v failed"
done
python3 - $R <<'PY'
import json, sys, os, glob
d = sys.argv[1]
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in map(json.loads, open(d + "/copy.jsonl")) if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
print("| variant | us (two runs) | of the copy rate | check |")
for v in ("base", "mrk", "rcp", "fexp", "fast", "nosel", "mrk_nosel", "rel", "mrk_rel"):
    rs = [json.loads(l) for l in open("%s/sv_%s.jsonl" % (d, v))] if os.path.exists("%s/sv_%s.jsonl" % (d, v)) else []
    if not rs: print("| %s | - | - | missing |" % v); continue
    us = [r["us"] for r in rs]
    print("| %s | %s | %.3f | %s |" % (v, " / ".join("%.1f" % u for u in us), 2 * rs[0]["n"] * 4 / min(us) / 1e3 / copy, ",".join(sorted(set(r["check"] for r in rs)))))
PY
echo "== prototype $(date -u +%T)"
timeout 120 $S/try_softmax_stream 262144 2>&1 | grep -E "copy rate|262144" | head -n 12
echo "== sass $(date -u +%T)"
if command -v cuobjdump >/dev/null; then
  for v in base mrk rcp fexp fast nosel rel; do
    n=$(cuobjdump -sass -fun row_softmax_k0_rowred_st $S/bench_rows_$v 2>/dev/null | grep -cE '^\s+/\*[0-9a-f]{4}\*/')
    echo "$v: $n SASS instructions in row_softmax_k0_rowred_st"
  done
else echo "no cuobjdump"; fi
echo "== difftest $(date -u +%T)"
OUT=$R/dt SEED=20261201 timeout 100 bash difftest/gpu.sh 40 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
grep -E "^(PASS|FAIL)|mismatch" $R/difftest.txt | cut -c1-300 | head -4
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/sv.tgz sv_*.jsonl copy.jsonl check.txt difftest.txt) 2>/dev/null
