#!/usr/bin/env bash
# Session 10, device call 1: the GPU test blocks and random programs across
# the two backends after session 9's last backend commits, then the reduction
# grids (bench/try_grid.sh) and the streaming softmax prototype
# (bench/try_softmax_stream.cu) beside gpuc's row softmax at 262144 and 32768.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
R=$OUT/r; mkdir -p $R
echo "== check.sh $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 150 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
tail -n 6 $R/check.txt
echo "== softmax prototype $(date -u +%T)"
timeout 150 bench/bin/try_softmax_stream 262144 32768 > $R/softmax_stream.txt 2>&1; echo "proto rc=$?"
cat $R/softmax_stream.txt
for m in 262144 32768; do
  BENCH_ROW_LENGTH=$m timeout 60 bench/gen/bin/bench_rows --case row_softmax --sizes 28 --out $R/rows_gpuc.jsonl >/dev/null 2>>$R/rows.log
done
cat $R/rows_gpuc.jsonl | python3 -c "import sys,json; [print(r['case'], r.get('m', r.get('cols')), r['us'], r['check']) for r in map(json.loads, sys.stdin)]"
echo "== try_grid $(date -u +%T)"
OUT=$R timeout 120 bash bench/try_grid.sh > /dev/null 2>&1; echo "grid rc=$?"
cat $R/grid.md
echo "== difftest $(date -u +%T)"
OUT=$R/dt SEED=20261128 timeout 200 bash difftest/gpu.sh 130 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
tail -n 4 $R/difftest.txt
echo "== end $(date -u +%T)"
cd $OUT && tar czf results.tgz r && rm -rf r
