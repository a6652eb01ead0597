#!/usr/bin/env bash
# Session 12, device call 2 (H200): the row stream kernel's tagged-word
# exchange (no fence, no row counters) and the runtime's mapped count word
# for filters: the GPU test blocks (rows10's new 8-byte-partial entries),
# the runtime's test_gpu (t_count_word), the sanitizer on the stream rows
# and the filters; then row softmax and LayerNorm at rows of 262144 (new
# bench/gen drivers against call 1's base and rel builds of softmax), and
# filter through the header, the library and the executable.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; mkdir -p $R
echo "== check.sh $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 200 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
grep -E "^PASS|^FAIL|passed, " $R/check.txt | cut -c1-200 | tail -n 8
echo "== test_gpu $(date -u +%T)"
mkdir -p $R/tg; GPUC_TEST_SCRATCH=$R/tg timeout 120 bench/bin/sv/test_gpu > $R/test_gpu.txt 2>&1; echo "test_gpu rc=$?"
grep -E "^FAIL|count_word|passed|failed" $R/test_gpu.txt | tail -n 6
echo "== sanitize $(date -u +%T)"
OUT=$R/san SANITIZE_ONLY='^(row_softmax_st|row_layernorm_st|filter_pos|filter_zip|filter_sum) ' timeout 200 bash tests/gpu/sanitize.sh > $R/sanitize.txt 2>&1; echo "sanitize rc=$?"
grep -E '^FAIL|passed, ' $R/sanitize.txt | cut -c1-200 | tail -n 8
echo "== rows $(date -u +%T)"
B=bench/gen/bin; S=bench/bin/sv
timeout 30 $B/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for v in new base rel new rel base; do
  b=$B/bench_rows; [ $v != new ] && b=$S/bench_rows_$v
  BENCH_ROW_LENGTH=262144 timeout 60 $b --case row_softmax --sizes 28 --out $R/sm_$v.jsonl >/dev/null 2>>$R/bench.log || echo "softmax $v failed"
done
for i in 1 2; do BENCH_ROW_LENGTH=262144 timeout 60 $B/bench_rows_nn --case layer_norm --sizes 28 --out $R/ln_new.jsonl >/dev/null 2>>$R/bench.log || echo "layernorm failed"; done
echo "== filter paths $(date -u +%T)"
for i in 1 2; do
  timeout 60 $B/bench_filter --sizes 28 --out $R/filter_header.jsonl >/dev/null 2>>$R/bench.log || echo "filter header failed"
  for c in filter_f32 filter_i32; do timeout 60 $B/paths/lib_filter --case $c --log2 28 --out $R/filter_lib.jsonl >/dev/null 2>>$R/bench.log || echo "filter lib $c failed"; done
  timeout 120 python3 bench/paths/exe_bench.py --bin $B/paths --log2 28 --runs 20 --cases filter_f32,filter_i32 --out $R/filter_exe.jsonl >/dev/null 2>>$R/bench.log || echo "filter exe failed"
done
python3 - $R <<'PY'
import json, sys, os
d = sys.argv[1]
L = lambda f: [json.loads(l) for l in open(os.path.join(d, f))] if os.path.exists(os.path.join(d, f)) else []
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in L("copy.jsonl") if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
for f in ("sm_new", "sm_base", "sm_rel", "ln_new"):
    rs = L(f + ".jsonl")
    if not rs: print(f, "missing"); continue
    us = [r["us"] for r in rs]
    print("| %s | %s | %.3f of the copy rate | %s |" % (f, " / ".join("%.1f" % u for u in us), 2 * rs[0]["n"] * 4 / min(us) / 1e3 / copy, ",".join(sorted(set(str(r.get("check")) for r in rs)))))
for f in ("filter_header", "filter_lib", "filter_exe"):
    for r in L(f + ".jsonl"):
        print("| %s | %s %s n=%s | %.1f us | %s |" % (f, r.get("case"), r.get("dtype"), r.get("n"), r["us"], r.get("check")))
PY
tail -n 5 $R/bench.log
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz *.jsonl check.txt test_gpu.txt sanitize.txt bench.log) 2>/dev/null
