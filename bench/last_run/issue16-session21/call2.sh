#!/usr/bin/env bash
# Session 21, device call 2 (H200), main at the HEAD of call 1's run (the
# kernels of bench/last_run/issue16-session21/run_h200): the GPU checks not
# run since session 20's row stream changes.
#  1. tests/gpu/check.sh without sanitizer and tune (every test block on the
#     CUDA backend, the wide scan's, the row blocks with GPUC_ROW_WARP=0,
#     NVRTC-free start, out of memory mid-program, the clients);
#  2. difftest/gpu.sh: random programs, CUDA against -O0 on the C backend;
#  3. bench/try_tune.sh: gpuc tune on the scan, filter, row softmax and
#     LayerNorm entries, then --check of its choice against the defaults.
# .device from tests/gpu/prepare.sh here; its largest and newest kernel
# cache files left out of the pack for size (NVRTC compiles them there).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
date +%T
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 200 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
grep -E "^(PASS|FAIL)|passed|failed" $R/check.txt | tail -n 10
date +%T
OUT=$R/dt SEED=20262101 timeout 110 bash difftest/gpu.sh 45 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
grep -E "PASS|FAIL|mismatch|done:" $R/difftest.txt | tail -n 6
date +%T
OUT=$R/tune TUNE_BUDGET=120 CHECK_BUDGET=45 timeout 260 bash bench/try_tune.sh > $R/tune.txt 2>&1; echo "tune rc=$?"
tail -n 25 $R/tune.txt
date +%T
