#!/usr/bin/env bash
# Session 16, device call 4 (H200): row softmax at rows of 256 (1.2% behind
# torch eager in call 2) and 1024 through the register kernel at other item
# counts and blocks an SM: r_base (as generated, @items(8), 3 blocks an SM
# by __launch_bounds__), r_b4 (-DGPUC_ROW_REGS_BLOCKS=4), r_i4 / r_i4b6
# (@items(4), 3 / 6 blocks), r_i2 / r_i2b8 (@items(2): a warp a row at 256,
# 3 / 8 blocks), r_i2k128 (@block(128) @items(2), 6 blocks); two rounds in
# turn with torch.softmax; then ncu (occupancy, stalls) of r_base, r_i2,
# r_i2b8 at rows of 256.
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
for v in base b4 i4 i4b6 i2 i2b8 i2k128; do
  cuobjdump --dump-resource-usage bench/bin/r_$v 2>/dev/null | grep -A1 -E 'Function row_softmax_k0_rowred_regs:' | grep -oE 'REG:[0-9]+|LOCAL:[0-9]+' | tr '\n' ' '; echo " ($v)"
done
for round in 1 2; do
  for m in 256 1024; do
    for v in base b4 i4 i4b6 i2 i2b8 i2k128; do
      echo "$v round $round: $(BENCH_ROW_LENGTH=$m timeout 30 bench/bin/r_$v --case row_softmax --sizes 28 | grep -v '^{')"
    done
    echo "round $round $(timeout 60 python3 /tmp/tsm.py $m)"
  done
done 2>&1 | tee $R/items.txt
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats"
for v in base i2 i2b8; do
  echo "== ncu r_$v" >> $R/ncu.txt
  BENCH_ROW_LENGTH=256 timeout 60 ncu --clock-control none $sections -k regex:row_softmax -c 1 bench/bin/r_$v --case row_softmax --sizes 28 --once >> $R/ncu.txt 2>&1
done
grep -E '^== ncu|Duration|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Issued Warp|Block Size|Grid Size|Stall|No Eligible|Eligible Warps' $R/ncu.txt | head -60
