#!/usr/bin/env bash
# Session 12, device call 5 (H200): main at the commit after 8e11421 (the
# generator's own release count and 128-byte aligned ring and stash): the
# GPU test blocks, the sanitizer on the stream rows, row softmax and
# LayerNorm at every row length.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; mkdir -p $R
echo "== check.sh $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 200 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
grep -E "^PASS|^FAIL|passed, " $R/check.txt | cut -c1-200 | tail -n 8
echo "== sanitize $(date -u +%T)"
OUT=$R/san SANITIZE_ONLY='^(row_softmax_st|row_layernorm_st) ' timeout 150 bash tests/gpu/sanitize.sh > $R/sanitize.txt 2>&1; echo "sanitize rc=$?"
grep -E '^FAIL|passed, ' $R/sanitize.txt | cut -c1-200 | tail -n 4
echo "== rows $(date -u +%T)"
B=bench/gen/bin
timeout 30 $B/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for i in 1 2; do
  timeout 90 $B/bench_rows --case row_softmax --sizes 28 --out $R/sm.jsonl >/dev/null 2>>$R/bench.log || echo "softmax failed"
  timeout 90 $B/bench_rows_nn --case layer_norm --sizes 28 --out $R/ln.jsonl >/dev/null 2>>$R/bench.log || echo "layernorm failed"
done
python3 - $R <<'PY'
import json, sys, os
d = sys.argv[1]
L = lambda f: [json.loads(l) for l in open(os.path.join(d, f))] if os.path.exists(os.path.join(d, f)) else []
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in L("copy.jsonl") if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
for f in ("sm", "ln"):
    by = {}
    for r in L(f + ".jsonl"): by.setdefault(r.get("m"), []).append(r)
    for m, rs in sorted(by.items(), key=lambda x: x[0] or 0):
        us = [r["us"] for r in rs]
        print("| %s | m=%s | %s | %.3f | %s |" % (f, m, " / ".join("%.1f" % u for u in us), 2 * rs[0]["n"] * 4 / min(us) / 1e3 / copy, ",".join(sorted(set(str(r.get("check")) for r in rs)))))
PY
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz *.jsonl check.txt sanitize.txt bench.log) 2>/dev/null
