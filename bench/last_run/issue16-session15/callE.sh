#!/usr/bin/env bash
# Session 15, device call E (H200): what the per-call out-of-bounds check
# costs cross-entropy (the only bench case with a gather, A[i, t[i]]): ncu
# put the kernel at 270.9 us at rows of 1024 (call D), the bench's call at
# 295.1 (call C), torch.compile 282.5. bench_rows_nn built from
# bench/gen/rows_nn.cu with gpuc_h_oob as it is (base: two pageable D2H
# copies and a sync), with none (nooob, an upper bound), and with the flag
# through one pinned buffer (pinned); three rounds in turn, rows of 1024
# and 256, and row softmax at 1024 (no check) as a control.
set -u
rm -rf .pack && mv .pack2 .pack
bash scripts/device_unpack.sh >/dev/null || exit 1
for round in 1 2 3; do
  for v in base nooob pinned; do
    for m in 1024 256; do
      echo "$v round $round xent $m: $(BENCH_ROW_LENGTH=$m timeout 30 svbin/rows_nn_$v --case xent --sizes 28 | grep -v '^{')"
    done
    echo "$v round $round layer_norm 1024: $(BENCH_ROW_LENGTH=1024 timeout 30 svbin/rows_nn_$v --case layer_norm --sizes 28 | grep -v '^{')"
  done
done 2>&1 | tee $OUT/oob.txt
