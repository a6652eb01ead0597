#!/usr/bin/env bash
# Session 11, device call 4 (H200): SCAN BULK 3 WIDE's second form (the
# publisher warp stores the aggregates, the look-back waits on pubd before
# the prefix): the GPU test blocks, the sanitizer on the wide cases, the
# i64 scans and the recurrence against emit_scan's kernel (-DGPUC_SCAN_BULK=2)
# and CUB, then random programs. Logs stay on the device.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; mkdir -p $R
echo "== check.sh $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 150 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
grep -E "^PASS|^FAIL|passed, " $R/check.txt | cut -c1-200 | tail -n 6
echo "== bench $(date -u +%T)"
B=bench/gen/bin; O=bench/bin/old
timeout 30 $B/peers_cub --case copy --sizes 28 --out $R/cub.jsonl 2>>$R/bench.log
for c in scan_incl scan_excl recurrence; do timeout 60 $B/peers_cub --case $c --sizes 20,24,28 --out $R/cub.jsonl 2>>$R/bench.log; done
for v in new old old new; do
  d=$B; [ $v = old ] && d=$O
  for c in incl_i64 excl_i64 recurrence; do timeout 60 $d/bench_scan --case $c --sizes 20,24,28 --out $R/scan_$v.jsonl >/dev/null 2>>$R/bench.log || echo "bench_scan $v $c failed"; done
done
python3 - $R <<'PY'
import json, sys, os
d = sys.argv[1]
L = lambda f: [json.loads(l) for l in open(os.path.join(d, f))] if os.path.exists(os.path.join(d, f)) else []
cub = L("cub.jsonl"); copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in cub if r["case"] == "copy"][0]
cubt = {(r["case"], r["dtype"], r["n"]): r["us"] for r in cub if r["case"] != "copy"}
rows, bad = {}, 0
for v in ("new", "old"):
    for r in L("scan_%s.jsonl" % v):
        bad += r["check"] != "ok"; rows.setdefault((r["case"], r["dtype"], r["n"]), {}).setdefault(v, []).append(r["us"])
print("copy %.1f GB/s | case | dtype | n | new | old | new/old | CUB | new/CUB | new of copy |" % copy)
for k, v in sorted(rows.items()):
    a, o = min(v["new"]), min(v["old"]); c = cubt.get(k); by = 12 * k[2] if k[0] == "recurrence" else 16 * k[2]
    print("| %s | %s | %d | %s | %s | %.3f | %s | %s | %.3f |" % (k + ("/".join("%.1f" % x for x in v["new"]), "/".join("%.1f" % x for x in v["old"]), a / o, "%.1f" % c if c else "-", "%.3f" % (a / c) if c else "-", by / a / 1e3 / copy)))
print("results not ok: %d" % bad)
PY
echo "== sanitize $(date -u +%T)"
OUT=$R/san SANITIZE_ONLY='^(scan_wide_tuple|scan_wide_i64|scan_tuple|scan_incl_i64) ' timeout 120 bash tests/gpu/sanitize.sh > $R/sanitize.txt 2>&1; echo "sanitize rc=$?"
grep -E '^FAIL|passed, ' $R/sanitize.txt | cut -c1-200 | tail -n 8
echo "== difftest $(date -u +%T)"
OUT=$R/dt SEED=20261132 timeout 100 bash difftest/gpu.sh 45 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
grep -E "^(PASS|FAIL)|mismatch" $R/difftest.txt | cut -c1-300 | head -4
echo "== end $(date -u +%T)"
cp $R/cub.jsonl $R/scan_new.jsonl $R/scan_old.jsonl $OUT/ 2>/dev/null
