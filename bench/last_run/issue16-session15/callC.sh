#!/usr/bin/env bash
# Session 15, device call C (H200): the control for call B (bench/gen/rows.cu
# unchanged, built by the same nvcc line as the edited variants: rows_same),
# three rounds of base / same / rcp at rows of 262144 (about 20 s), then the
# whole run, main at this session's HEAD, the first with the recheck part
# (budget 530: the call's limit is 600 s).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
mkdir -p $OUT/control
for round in 1 2 3; do
  for v in base same rcp; do
    b=svbin/rows_$v; [ $v = base ] && b=bench/gen/bin/bench_rows
    echo "== $v round $round $(date -u +%T)"
    BENCH_ROW_LENGTH=262144 timeout 30 $b --case row_softmax --sizes 28 | grep -v '^{'
  done
done > $OUT/control/rows.txt 2>&1
cat $OUT/control/rows.txt
bash bench/run.sh --budget 530
