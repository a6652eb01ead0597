#!/usr/bin/env bash
# Session 19, device call 3 (H200), main at 49ff38b (+ this script): the
# wide scan with one shape (tiles of 4096 items, 7 slots, lag 3) and runs of
# vectors a lane:
#  1. tests/gpu/check.sh without its sanitizer and tune parts: every test
#     block on the CUDA backend, the wide step (GPUC_SCAN_WIDE=1), the row
#     blocks with GPUC_ROW_WARP=0, the NVRTC-free start, out of memory
#     mid-program, the clients;
#  2. compute-sanitizer on the i64 / u64 / tuple / wide scan cases with
#     GPUC_SCAN_WIDE=1;
#  3. difftest/gpu.sh with GPUC_SCAN_WIDE=1 on a fresh seed.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
date +%T
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 300 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "rc=$?"
grep -E "PASS|FAIL|passed|failed" $R/check.txt | tail -n 12
echo "== sanitize"; date +%T
GPUC_SCAN_WIDE=1 OUT=$R/san SANITIZE_ONLY='^scan_(incl_i64|excl_u64|tuple|tuple_ex|wide_[a-z0-9]+) ' timeout 170 bash tests/gpu/sanitize.sh > $R/san.txt 2>&1; echo "rc=$?"
tail -n 2 $R/san.txt
echo "== difftest"; date +%T
GPUC_SCAN_WIDE=1 OUT=$R/dt SEED=20261903 timeout 90 bash difftest/gpu.sh 30 14 0 0 2>&1 | tail -n 2
date +%T
