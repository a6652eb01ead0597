#!/usr/bin/env bash
# Session 14, device call D (H200): (1) LayerNorm at rows of 1024 through
# the three paths, in turn three times (the whole run had the header path at
# 1.031x the executable's time, session 12's at 1.026x; same registers under
# NVRTC and nvcc); (2) the reductions at 2^28 with cache qualifiers on their
# vector loads (bench/exp/reduce_load_hints.py: base, l2_256, l2_128,
# na256) against CUB, twice in turn (tied with CUB within 0.2% in the run).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; rm -rf $R; mkdir -p $R
B=bench/gen/bin
timeout 30 $B/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/log.txt
echo "== layer_norm paths $(date -u +%T)"
for i in 1 2 3; do
  BENCH_ROW_LENGTH=1024 timeout 60 $B/bench_rows_nn --case layer_norm --sizes 28 --out $R/ln_header.jsonl >/dev/null 2>>$R/log.txt || echo "header failed"
  timeout 60 $B/paths/lib_rows_nn --case layer_norm_f32 --log2 28 --m 1024 --out $R/ln_lib.jsonl </dev/null >/dev/null 2>>$R/log.txt || echo "lib failed"
  timeout 90 python3 bench/paths/exe_bench.py --bin $B/paths --log2 28 --runs 20 --m 1024 --cases layer_norm_f32 --out $R/ln_exe.jsonl >/dev/null 2>>$R/log.txt || echo "exe failed"
done
echo "== reduce hints $(date -u +%T)"
for i in 1 2; do
  for c in sum max; do timeout 60 $B/peers_cub --case $c --sizes 28 --out $R/red_cub.jsonl >/dev/null 2>>$R/log.txt || echo "cub $c failed"; done
  for v in base l2_256 l2_128 na256; do
    for c in sum_f32 sum_f64 sum_i32 max_f64; do
      timeout 60 bench/bin/rh/bench_reduce_$v --case $c --sizes 28 --out $R/red_$v.jsonl >/dev/null 2>>$R/log.txt || echo "$v $c failed"
    done
  done
done
python3 - $R <<'PY'
import json, sys, os, glob
d = sys.argv[1]
L = lambda f: [json.loads(l) for l in open(f)] if os.path.exists(f) else []
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in L(d + "/copy.jsonl") if r["case"] == "copy"][0]
print("copy rate %.1f GB/s" % copy)
print("| path | layer_norm m=1024 us (in turn) | min | checks |\n|---|---|---|---|")
for p in ("header", "lib", "exe"):
    rs = L(d + "/ln_%s.jsonl" % p)
    us = [r["us"] for r in rs]
    print("| %s | %s | %.1f | %s |" % (p, " / ".join("%.1f" % u for u in us), min(us) if us else 0, ",".join(sorted(set(str(r.get("check")) for r in rs)))))
cub = {}
for r in L(d + "/red_cub.jsonl"): cub.setdefault((r["case"], r["dtype"]), []).append(r["us"])
print("| variant | case | us | best / CUB's best | checks |\n|---|---|---|---|---|")
for v in ("base", "l2_256", "l2_128", "na256"):
    by = {}
    for r in L(d + "/red_%s.jsonl" % v): by.setdefault((r["case"], r["dtype"]), []).append(r)
    for key, rs in sorted(by.items()):
        us = [r["us"] for r in rs]
        c = min(cub.get(key, [0])) or float("nan")
        print("| %s | %s %s | %s | %.4f (CUB %s) | %s |" % (v, key[0], key[1], " / ".join("%.1f" % u for u in us), min(us) / c,
              " / ".join("%.1f" % u for u in cub.get(key, [])), ",".join(sorted(set(str(r.get("check")) for r in rs)))))
PY
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz *.jsonl log.txt) 2>/dev/null
