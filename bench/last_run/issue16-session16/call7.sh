#!/usr/bin/env bash
# Session 16, device call 7 (H200): bench/try_softmax_warp.cu (a warp a row,
# the least per-row work) at rows of 256 and 1024, gpuc's row softmax as
# generated (r_base) and torch.softmax, in one call.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
cat > /tmp/tsm.py <<'PY'
import sys, torch
m = int(sys.argv[1])
A = torch.rand((1 << 28) // m, m, device="cuda") * 2 - 1
f = lambda: torch.softmax(A, 1)
for _ in range(5): f()
torch.cuda.synchronize()
ts = []
for _ in range(50):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record(); f(); e1.record(); e1.synchronize()
    ts.append(e0.elapsed_time(e1) * 1000)
ts.sort()
print(f"torch softmax rows of {m}: {ts[len(ts)//2]:.1f} us (min {ts[0]:.1f})")
PY
{
  for m in 256 1024; do
    echo "gpuc: $(BENCH_ROW_LENGTH=$m timeout 30 bench/bin/r_base --case row_softmax --sizes 28 | grep -v '^{')"
    timeout 60 python3 /tmp/tsm.py $m
  done
  timeout 150 bench/bin/try_softmax_warp 256 1024
  for m in 256 1024; do
    echo "gpuc: $(BENCH_ROW_LENGTH=$m timeout 30 bench/bin/r_base --case row_softmax --sizes 28 | grep -v '^{')"
    timeout 60 python3 /tmp/tsm.py $m
  done
} 2>&1 | tee $R/warp.txt
