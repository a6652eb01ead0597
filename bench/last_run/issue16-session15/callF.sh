#!/usr/bin/env bash
# Session 15, device call F (H200): reads in bounds by construction
# (ir/bounds.c: no bounds check on LayerNorm's w[col] and b[col], and no
# out-of-bounds record fetched after its kernels). tests/gpu/check.sh on
# this build, 100 x 14 random programs of difftest/gpu.sh, then LayerNorm
# at every row length and cross-entropy at 1024 through bench_rows_nn
# built from the generated code before (svbin/rows_nn_base) and after
# (svbin/rows_nn_bounds), two rounds in turn.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
echo "== check $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 200 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
grep -E "PASS|FAIL|passed" $R/check.txt | tail -7
echo "== difftest $(date -u +%T)"
OUT=$R/dt SEED=20261502 timeout 170 bash difftest/gpu.sh 100 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
tail -2 $R/difftest.txt
echo "== rows_nn $(date -u +%T)"
for round in 1 2; do
  for v in base bounds; do
    for m in 256 1024 4096 32768 262144; do
      echo "$v round $round layer_norm $m: $(BENCH_ROW_LENGTH=$m timeout 30 svbin/rows_nn_$v --case layer_norm --sizes 28 | grep -v '^{')"
    done
    echo "$v round $round xent 1024: $(BENCH_ROW_LENGTH=1024 timeout 30 svbin/rows_nn_$v --case xent --sizes 28 | grep -v '^{')"
  done
done > $R/rows_nn.txt 2>&1
cat $R/rows_nn.txt
echo "== end $(date -u +%T)"
