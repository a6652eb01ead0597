#!/usr/bin/env bash
# Session 17, device call 1 (H200): the warp-a-row row kernels (ROW WARP,
# GPUC_ROW_WARP=1; written last session, never run on a GPU): check.sh (its
# ROW WARP pass), difftest/gpu.sh and the sanitizer's row cases with
# GPUC_ROW_WARP=1; then row softmax, LayerNorm and cross-entropy at rows of
# 256 as generated (off) and with GPUC_ROW_WARP=1 against torch,
# three rounds in turn.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
echo "== check.sh"; date +%T
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 230 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "rc=$?"
grep -E "passed|failed|FAIL|ROW|row_warp" $R/check.txt | tail -n 12
echo "== sanitize (GPUC_ROW_WARP=1, row cases)"; date +%T
GPUC_ROW_WARP=1 OUT=$R/san SANITIZE_ONLY='^row_' timeout 150 bash tests/gpu/sanitize.sh > $R/san.txt 2>&1; echo "rc=$?"
grep -E "passed|FAIL" $R/san.txt | tail -n 8
echo "== difftest (GPUC_ROW_WARP=1)"; date +%T
GPUC_ROW_WARP=1 OUT=$R/dt SEED=20261701 timeout 110 bash difftest/gpu.sh 60 14 0 0 2>&1 | tail -n 3
echo "== timing"; date +%T
cat > /tmp/trows.py <<'PY'
import sys, torch
import torch.nn.functional as F
m = int(sys.argv[1]); n = (1 << 28) // m
A = torch.rand(n, m, device="cuda") * 2 - 1
w = torch.rand(m, device="cuda"); b = torch.rand(m, device="cuda")
t = torch.randint(0, m, (n,), device="cuda")
def med(f):
    for _ in range(5): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(40):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); f(); e1.record(); e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1000)
    ts.sort(); return ts[len(ts)//2]
print(f"torch m={m}: softmax {med(lambda: torch.softmax(A, 1)):.1f} layer_norm {med(lambda: F.layer_norm(A, (m,), w, b)):.1f} xent {med(lambda: F.cross_entropy(A, t)):.1f} us")
PY
for round in 1 2 3; do
  for m in 256; do
    for v in rows rows_warp; do
      echo "$v r$round m=$m: $(BENCH_ROW_LENGTH=$m timeout 30 bench/bin/$v --case row_softmax --sizes 28 | grep -v '^{')"
    done
    for v in rows_nn rows_nn_warp; do
      for c in layer_norm xent; do
        echo "$v r$round m=$m: $(BENCH_ROW_LENGTH=$m timeout 30 bench/bin/$v --case $c --sizes 28 | grep -v '^{')"
      done
    done
    echo "r$round $(timeout 60 python3 /tmp/trows.py $m)"
  done
done 2>&1 | tee $R/rows.txt
date +%T
