#!/usr/bin/env bash
# Session 13, device call 6 (H200): main with ROW DEAD RESULTS (row results
# that nothing reads, softmax's max and sum and LayerNorm's mean and
# variance, neither allocated nor stored): the GPU test blocks (rows10's new
# smstat10_f32 stores one), then row softmax at rows of 256 and 1024, the
# new generated code against call 5's default.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; mkdir -p $R
echo "== check.sh $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 150 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
grep -E "^PASS|^FAIL|passed, " $R/check.txt | cut -c1-200 | tail -n 8
V=bench/bin/r256
for i in 1 2; do for v in def new; do for m in 256 1024; do
  BENCH_ROW_LENGTH=$m timeout 30 $V/bench_rows_$v --case row_softmax --sizes 28 --out $R/sm_$v.jsonl >/dev/null 2>>$R/bench.log || echo "$v $m failed"
done; done; done
python3 - $R <<'PY'
import json, sys, os
d = sys.argv[1]
for v in ("def", "new"):
    by = {}
    for l in open(os.path.join(d, "sm_%s.jsonl" % v)):
        r = json.loads(l); by.setdefault(r["m"], []).append(r)
    for m, rs in sorted(by.items()):
        print("| %s | m=%d | %s | %s |" % (v, m, " / ".join("%.1f" % r["us"] for r in rs), ",".join(sorted(set(str(r.get("check")) for r in rs)))))
PY
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz *.jsonl check.txt bench.log) 2>/dev/null
