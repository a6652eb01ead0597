#!/usr/bin/env bash
# Session 16, device call 8 (H200): gpuc's row softmax as generated (256
# threads a block) and with @block(128) (r_k128), rows of 256, 1024, 4096,
# three rounds in turn: call 7's prototype ran 1.7% faster with 128 threads
# a block than with 256.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
for round in 1 2 3; do
  for m in 256 1024 4096; do
    for v in base k128; do
      echo "$v round $round: $(BENCH_ROW_LENGTH=$m timeout 30 bench/bin/r_$v --case row_softmax --sizes 28 | grep -v '^{')"
    done
  done
done 2>&1 | tee $OUT/k128.txt
