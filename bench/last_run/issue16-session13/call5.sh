#!/usr/bin/env bash
# Session 13, device call 5 (H200): main at 459b8bb (the row stream
# kernel's new constants: lag 3, 7 slots or 6 when the post reads vectors
# at the column; scan.c's one publisher generator): the GPU test blocks, the
# sanitizer on the stream rows, row softmax and LayerNorm at every row
# length; and at rows of 256 four hand edits of the generated register row
# kernel (bench/bin/r256: nostore = no per-row max/sum stores, fexp =
# __expf, fast = __expf and a reciprocal, tpr16 = 16 lanes a row) against
# the default and torch eager in the same call.
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
V=bench/bin/r256
timeout 30 bench/gen/bin/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for i in 1 2; do
  timeout 90 $V/bench_rows_def --case row_softmax --sizes 28 --out $R/sm_all.jsonl >/dev/null 2>>$R/bench.log || echo "softmax failed"
  timeout 90 $V/bench_rows_nn_def --case layer_norm --sizes 28 --out $R/ln_all.jsonl >/dev/null 2>>$R/bench.log || echo "layernorm failed"
done
echo "== rows of 256 $(date -u +%T)"
for i in 1 2 3; do
  for v in def nostore fexp fast tpr16; do
    BENCH_ROW_LENGTH=256 timeout 40 $V/bench_rows_$v --case row_softmax --sizes 28 --out $R/r256_$v.jsonl >/dev/null 2>>$R/bench.log || echo "r256 $v failed"
  done
done
timeout 120 python3 - > $R/torch.txt 2>&1 <<'PY' || echo "torch failed"
import torch
x = torch.randn(1 << 20, 256, device="cuda")
for m in (256, 1024):
    a = x.view(-1, m)
    ts = []
    for _ in range(30):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); torch.softmax(a, dim=1); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) * 1000)
    ts.sort()
    print("torch eager softmax m=%d: median %.1f us, min %.1f" % (m, ts[15], ts[0]))
PY
cat $R/torch.txt
python3 - $R <<'PY'
import json, sys, os, glob
d = sys.argv[1]
L = lambda f: [json.loads(l) for l in open(f)] if os.path.exists(f) else []
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in L(d + "/copy.jsonl") if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
for f in sorted(glob.glob(d + "/*_*.jsonl")):
    by = {}
    for r in L(f): by.setdefault(r.get("m"), []).append(r)
    for m, rs in sorted(by.items(), key=lambda x: x[0] or 0):
        us = [r["us"] for r in rs]
        print("| %s | m=%s | %s | %.3f | %s |" % (os.path.basename(f)[:-6], m, " / ".join("%.1f" % u for u in us), 2 * rs[0]["n"] * 4 / min(us) / 1e3 / copy, ",".join(sorted(set(str(r.get("check")) for r in rs)))))
PY
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz *.jsonl *.txt bench.log) 2>/dev/null
