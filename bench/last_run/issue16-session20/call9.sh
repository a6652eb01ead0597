#!/usr/bin/env bash
# Session 20, device call 9 (H200), main at ROW STREAM TAGS (the stream
# kernel's partials tagged, relaxed count and polls, where every component
# is 4 bytes): first run on a GPU.
#  1. the row test blocks (tests/gpu/blocks/rows*.gdsl: rows10 has the stream
#     kernel's softmax, log-softmax, LayerNorm, an i32 post and the 8-byte
#     partials that keep the release count) and examples/softmax.gdsl on the
#     CUDA backend (.device from tests/gpu/prepare.sh);
#  2. compute-sanitizer (memcheck, racecheck, synccheck) on the stream
#     kernel's cases (row_softmax_st, row_layernorm_st);
#  3. row softmax and LayerNorm at rows of 262144 and 65536, once, checked
#     (the whole run, call 10, times them against everything else).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
export GPUC_HOME=$PWD/.device/prefix GPUC_CACHE_DIR=$PWD/.device/cache
date +%T
timeout 200 .device/prefix/bin/gpuc test --backend=cuda tests/gpu/blocks/rows*.gdsl examples/softmax.gdsl > $R/blocks.txt 2>&1; echo "blocks rc=$?"
tail -n 3 $R/blocks.txt
date +%T
OUT=$R/san SANITIZE_ONLY='^row_(softmax|layernorm)_st ' timeout 150 bash tests/gpu/sanitize.sh > $R/san.txt 2>&1; echo "sanitize rc=$?"
tail -n 4 $R/san.txt
date +%T
timeout 30 bench/bin/sv/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for m in 262144 65536; do
  BENCH_ROW_LENGTH=$m timeout 40 bench/bin/sv/bench_rows --case row_softmax --sizes 28 --out $R/after.jsonl 2>>$R/bench.log | grep gpuc
  BENCH_ROW_LENGTH=$m timeout 40 bench/bin/sv/bench_rows_nn --case layer_norm --sizes 28 --out $R/after.jsonl 2>>$R/bench.log | grep gpuc
done
python3 -c "
import json
c = [2 * r['n'] * 4 / r['us'] / 1e3 for r in map(json.loads, open('$R/copy.jsonl')) if r['case'] == 'copy'][0]
print('copy %.1f GB/s' % c)
for r in map(json.loads, open('$R/after.jsonl')): print(r['case'], r['m'], r['us'], '%.3f' % (2 * r['n'] * 4 / r['us'] / 1e3 / c), r['check'])
"
date +%T
