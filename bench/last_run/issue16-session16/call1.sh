#!/usr/bin/env bash
# Session 16, device call 1 (H200): the out-of-bounds record in mapped
# pinned memory (main at 3ee6722). Checks: the runtime's GPU tests (among
# them gpuc_module_map_host), tests/gpu/check.sh without the sanitizer and
# tune (every test block, the clients: the header's and the library's
# out-of-bounds errors twice), compute-sanitizer on the row LayerNorm kernels
# whose reads lost their checks (ir/bounds.c) and on cross-entropy's gather
# (in bounds and out of bounds). Then cross-entropy and LayerNorm timed with
# the record fetched as before (old: two pageable copies and a wait) and as
# now (new: one wait), three rounds in turn.
set -u
bash scripts/device_unpack.sh > /dev/null || exit 1
R=$OUT
echo "== runtime GPU tests"; timeout 120 bench/bin/test_gpu 2>&1 | tail -n 4
echo "== check.sh"; OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 200 bash tests/gpu/check.sh 2>&1 | grep -v '^  ' | tail -n 14
echo "== sanitize"; OUT=$R/san SANITIZE_ONLY='row_layernorm|row_xent|map_bcast' timeout 240 bash tests/gpu/sanitize.sh 2>&1 | tail -n 30
echo "== oob fetch"
for round in 1 2 3; do
  for v in old new; do
    for m in 1024 256; do
      echo "$v round $round xent $m: $(BENCH_ROW_LENGTH=$m timeout 30 bench/bin/rows_nn_$v --case xent --sizes 28 | grep -v '^{')"
    done
    echo "$v round $round layer_norm 1024: $(BENCH_ROW_LENGTH=1024 timeout 30 bench/bin/rows_nn_$v --case layer_norm --sizes 28 | grep -v '^{')"
  done
done 2>&1 | tee $R/oob.txt
# The scans' register kernel (latency-bound, 43.8% occupancy at 72
# registers, session 15's ncu): the recurrence and the i64 inclusive scan as
# generated (base: 128 x 23 items), with __launch_bounds__(128, 8) and
# (128, 10), @block(256) (256 x 21) and @items(15) (128 x 15); three rounds.
echo "== scan variants"
for v in base lb8 lb10 block256 items15; do
  cuobjdump --dump-resource-usage bench/bin/scan_$v 2>/dev/null | grep -A1 -E 'Function (recurrence|incl_i64)_k0_scan:' | grep -oE 'Function [a-z0-9_]+|REG:[0-9]+|LOCAL:[0-9]+' | tr '\n' ' '; echo " ($v)"
done
for round in 1 2 3; do
  for v in base lb8 lb10 block256 items15; do
    for c in recurrence incl_i64; do
      echo "$v round $round $c: $(timeout 60 bench/bin/scan_$v --case $c --sizes 28 | grep -v '^{')"
    done
  done
done 2>&1 | tee $R/scanv.txt
