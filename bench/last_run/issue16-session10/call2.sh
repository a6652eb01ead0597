#!/usr/bin/env bash
# Session 10, device call 2: the warp-specialized streaming softmax prototype
# (bench/try_softmax_stream.cu) beside gpuc's row softmax at 262144 and 32768.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for m in 262144 32768; do
  BENCH_ROW_LENGTH=$m timeout 60 bench/gen/bin/bench_rows --case row_softmax --sizes 28 --out $OUT/rows_gpuc.jsonl >/dev/null 2>>$OUT/rows.log
done
python3 -c "import sys,json; [print('gpuc', r['case'], r['m'], r['us'], r['check']) for r in map(json.loads, open('$OUT/rows_gpuc.jsonl'))]"
timeout 240 bench/bin/try_softmax_stream 262144 32768 2>&1 | tee $OUT/softmax_stream.txt; echo "proto rc=${PIPESTATUS[0]}"
