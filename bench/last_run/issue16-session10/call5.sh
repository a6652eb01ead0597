#!/usr/bin/env bash
# Session 10, device call 5 (H200): the streaming scan prototype beside
# gpuc's 4-byte scans, and the streaming softmax beside gpuc's, same call.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for c in incl_i32 incl_f32; do
  timeout 60 bench/gen/bin/bench_scan --case $c --sizes 28 --out $OUT/gpuc.jsonl >/dev/null 2>>$OUT/log.txt
done
BENCH_ROW_LENGTH=262144 timeout 60 bench/gen/bin/bench_rows --case row_softmax --sizes 28 --out $OUT/gpuc.jsonl >/dev/null 2>>$OUT/log.txt
python3 -c "import json; [print('gpuc', r['case'], r['dtype'], r['n'], r.get('m'), r['us'], r['check']) for r in map(json.loads, open('$OUT/gpuc.jsonl'))]"
timeout 120 bench/bin/try_scan_stream 2>&1 | tee $OUT/scan_stream.txt; echo "scan proto rc=${PIPESTATUS[0]}"
timeout 200 bench/bin/try_softmax_stream 262144 2>&1 | tee $OUT/softmax_stream.txt; echo "softmax proto rc=${PIPESTATUS[0]}"
