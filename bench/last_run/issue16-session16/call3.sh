#!/usr/bin/env bash
# Session 16, device call 3 (H200): difftest/gpu.sh on the mapped
# out-of-bounds record (main at 0b4b449's compiler; seed 20261601); the
# recheck part call 2's run had no time for (bench/recheck.sh on its records,
# two rounds, then bench/report.py); row softmax at rows of 256 and 1024
# with cache hints in its register kernel (hintL: __ldcs loads, hintS:
# __stcs stores, hintLS: both) against the generated kernel and
# torch.softmax, three rounds in turn.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
echo "== difftest"
OUT=$R/dt SEED=20261601 timeout 170 bash difftest/gpu.sh 100 14 0 0 2>&1 | tail -n 3
echo "== recheck"
mkdir -p $R/res && cp bench/last_run/issue16-session16/run_h200/records.jsonl $R/res/
hdrs=(); for p in elementwise filter matmul reduce rows rows_nn scan stats; do hdrs+=("$p=bench/gen/bin/bench_$p"); done
timeout 200 bash bench/recheck.sh --res $R/res --cub bench/gen/bin/peers_cub --paths bench/gen/bin/paths --top 28 --rounds 2 "${hdrs[@]}" 2> $R/recheck.err
python3 bench/report.py $R/res --json $R/res/results.json > $R/res/table.md; grep -E '^summary|MISSED' $R/res/table.md
echo "== row softmax hints"
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
for round in 1 2 3; do
  for m in 256 1024; do
    for v in base hintL hintS hintLS; do
      b=bench/bin/rows_$v; [ $v = base ] && b=bench/gen/bin/bench_rows
      echo "$v round $round: $(BENCH_ROW_LENGTH=$m timeout 30 $b --case row_softmax --sizes 28 | grep -v '^{')"
    done
    echo "round $round $(timeout 60 python3 /tmp/tsm.py $m)"
  done
done 2>&1 | tee $R/hints.txt
