#!/usr/bin/env bash
# Session 15, device call A (H200): the register-ring long-row softmax
# prototype (bench/try_softmax_regs.cu) at rows of 262144 and 32768, with
# gpuc's row softmax at 262144 before and after it in the same call; then
# bench/profile_misses.sh (ncu of the long-row softmax, the i64 scan, the
# recurrence and the 4-byte scan).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; rm -rf $R; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $R/gpu.txt
gpuc_rows() { echo "== gpuc row_softmax 262144 $1 $(date -u +%T)"; BENCH_ROW_LENGTH=262144 timeout 60 bench/gen/bin/bench_rows --case row_softmax --sizes 28; echo "rc=$?"; }
gpuc_rows 1 > $R/gpuc.txt 2>&1
echo "== regs $(date -u +%T)" > $R/regs.txt
timeout 150 bench/bin/try_softmax_regs 262144 32768 >> $R/regs.txt 2>&1; echo "regs rc=$?" >> $R/regs.txt
gpuc_rows 2 >> $R/gpuc.txt 2>&1
cat $R/gpu.txt $R/gpuc.txt $R/regs.txt
echo "== profile $(date -u +%T)"
OUT=$R/prof timeout 240 bash bench/profile_misses.sh > $R/profile.txt 2>&1; echo "profile rc=$?"
cat $R/profile.txt | head -150
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz *.txt prof) 2>/dev/null
