#!/usr/bin/env bash
# Session 17, device call 3 (H200): the GPU checks with the warp-a-row kernel
# on by default (main at 633e06c's compiler): tests/gpu/check.sh (its second
# row pass now with GPUC_ROW_WARP=0), the Python package's GPU checks
# (python/tests/gpu_check.sh, the wheel built here) and difftest/gpu.sh on a
# fresh seed.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
echo "== check.sh"; date +%T
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 230 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "rc=$?"
grep -E "PASS|FAIL|passed|failed" $R/check.txt | tail -n 10
echo "== python"; date +%T
timeout 170 bash python/tests/gpu_check.sh > $R/python.txt 2>&1; echo "rc=$?"
grep -E "PASS|FAIL|passed|failed" $R/python.txt | tail -n 12
echo "== difftest"; date +%T
OUT=$R/dt SEED=20261702 timeout 120 bash difftest/gpu.sh 60 14 0 0 2>&1 | tail -n 2
date +%T
