#!/usr/bin/env bash
# Session 16, device call 5 (H200): where the short-row softmax's time goes:
# ncu metrics (instructions executed, stall reasons per issued instruction,
# DRAM) of the register kernel as generated (r_base, @items(8)), at
# @items(2) (r_i2, r_i2b8) and of torch.softmax's kernel, rows of 256.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
cat > /tmp/tsm1.py <<'PY'
import torch
A = torch.rand((1 << 28) // 256, 256, device="cuda") * 2 - 1
torch.softmax(A, 1); torch.cuda.synchronize()
PY
m=gpu__time_duration.sum,sm__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for s in long_scoreboard short_scoreboard barrier wait math_pipe_throttle lg_throttle mio_throttle no_instruction not_selected selected dispatch_stall; do
  m=$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
for v in base i2 i2b8; do
  echo "== r_$v"
  BENCH_ROW_LENGTH=256 timeout 60 ncu --clock-control none --metrics $m -k regex:row_softmax -c 1 bench/bin/r_$v --case row_softmax --sizes 28 --once 2>&1 | grep -E '^ +(gpu__|sm__|dram__|smsp__|launch__)'
done 2>&1 | tee $R/metrics.txt
echo "== torch"
timeout 90 ncu --clock-control none --metrics $m -k regex:softmax -c 1 python3 /tmp/tsm1.py 2>&1 | grep -E '^ +(gpu__|sm__|dram__|smsp__|launch__)' | tee -a $R/metrics.txt
