#!/usr/bin/env bash
# Session 20, device call 11 (H200), main at 2f1b5e8: the stream kernel as
# generated with ROW STREAM TAGS, DIRECT and EXP REUSE, first run on a GPU.
#  1. the row test blocks (tests/gpu/blocks/rows*.gdsl: rows10 has the stream
#     kernel's softmax, a map before the pair, log-softmax, LayerNorm, an i32
#     post, the 8-byte partials) and examples/softmax.gdsl on the CUDA
#     backend (.device from tests/gpu/prepare.sh at 2f1b5e8);
#  2. compute-sanitizer (memcheck, racecheck, synccheck) on the stream
#     kernel's cases (row_softmax_st, row_layernorm_st);
#  3. row softmax and LayerNorm at rows of 262144: tags only (call 9's
#     kernels, bench/bin/sv/*_tags) against main (*_new), in turn forward
#     and back, every result checked.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
export GPUC_HOME=$PWD/.device/prefix GPUC_CACHE_DIR=$PWD/.device/cache
date +%T
timeout 200 .device/prefix/bin/gpuc test --backend=cuda tests/gpu/blocks/rows*.gdsl examples/softmax.gdsl > $R/blocks.txt 2>&1; echo "blocks rc=$?"
grep -E "FAIL|passed" $R/blocks.txt | tail -n 5
date +%T
OUT=$R/san SANITIZE_ONLY='^row_(softmax|layernorm)_st ' timeout 150 bash tests/gpu/sanitize.sh > $R/san.txt 2>&1; echo "sanitize rc=$?"
grep -E "^FAIL|passed" $R/san.txt | tail -n 4
date +%T
S=bench/bin/sv
timeout 30 $S/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for v in tags new new tags; do
  BENCH_ROW_LENGTH=262144 timeout 40 $S/bench_rows_$v --case row_softmax --sizes 28 --out $R/$v.jsonl >/dev/null 2>>$R/bench.log || echo "$v softmax exit $?"
  BENCH_ROW_LENGTH=262144 timeout 40 $S/bench_rows_nn_$v --case layer_norm --sizes 28 --out $R/$v.jsonl >/dev/null 2>>$R/bench.log || echo "$v layer_norm exit $?"
done
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in map(json.loads, open(d + "/copy.jsonl")) if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
g = {}
for v in ("tags", "new"):
    for r in map(json.loads, open("%s/%s.jsonl" % (d, v))):
        g.setdefault(r["case"], {}).setdefault(v, []).append(r)
print("| case | tags us | main us | main, of the copy rate | main / tags | check |")
for c, vs in sorted(g.items()):
    t = [r["us"] for r in vs["tags"]]; n = [r["us"] for r in vs["new"]]
    ok = all(r["check"] == "ok" for rs in vs.values() for r in rs)
    print("| %s | %s | %s | %.3f | %.3f | %s |" % (c, " / ".join("%.1f" % u for u in t), " / ".join("%.1f" % u for u in n),
          2 * vs["new"][0]["n"] * 4 / min(n) / 1e3 / copy, min(n) / min(t), "ok" if ok else "WRONG"))
PY
date +%T
