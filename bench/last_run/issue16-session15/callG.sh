#!/usr/bin/env bash
# Session 15, device call G (H200): row softmax at rows of 256, a tie with
# torch eager in call C (519.2 against 518.2 us, both at the copy rate,
# where saxpy runs at 1.04 of it): ncu of gpuc's kernel and of torch's, and
# both timed in turn in the same call (gpuc: bench_rows, three processes;
# torch: torch.softmax(A, 1) timed with CUDA events, median of 50 after
# warm-up, three processes), for the next session's reasoning.
set -u
rm -rf .pack && mv .pack2 .pack
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
cat > /tmp/tsm.py <<'PY'
import sys, torch
A = torch.rand(1 << 20, 256, device="cuda") * 2 - 1
f = lambda: torch.softmax(A, 1)
for _ in range(5): f()
torch.cuda.synchronize()
if len(sys.argv) > 1:
    f(); torch.cuda.synchronize(); sys.exit(0)
ts = []
for _ in range(50):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record(); f(); e1.record(); e1.synchronize()
    ts.append(e0.elapsed_time(e1) * 1000)
ts.sort()
print(f"torch softmax 1048576x256: {ts[len(ts)//2]:.1f} us (min {ts[0]:.1f})")
PY
for round in 1 2 3; do
  echo "round $round gpuc: $(BENCH_ROW_LENGTH=256 timeout 30 bench/gen/bin/bench_rows --case row_softmax --sizes 28 | grep -v '^{')"
  echo "round $round $(timeout 60 python3 /tmp/tsm.py)"
done 2>&1 | tee $R/times.txt
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats"
BENCH_ROW_LENGTH=256 timeout 60 ncu --clock-control none $sections -k regex:row_softmax -c 1 bench/gen/bin/bench_rows --case row_softmax --sizes 28 --once > $R/ncu.txt 2>&1
timeout 90 ncu --clock-control none $sections -k regex:softmax -c 1 python3 /tmp/tsm.py once >> $R/ncu.txt 2>&1
grep -E '^  [a-zA-Z_0-9<>:, ]+\(|Duration|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Registers Per Thread|Issued Warp|Block Size|Grid Size|L2 Hit Rate|Mem Busy' $R/ncu.txt
