#!/usr/bin/env bash
# Session 21, device call 4 (H200), main at c2d8f56 (the compiler and
# runtime of c2f9418): the Python package on the GPU with this session's
# kernels (python/tests/gpu_check.sh: the wheel from .whl/, test_cuda.py,
# test_fastpath.py, the examples on the cuda backend), then more random
# programs (difftest/gpu.sh, another seed).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
date +%T
timeout 240 bash python/tests/gpu_check.sh > $R/python.txt 2>&1; echo "python rc=$?"
grep -E "PASS|FAIL|passed|failed" $R/python.txt | tail -n 12
date +%T
OUT=$R/dt SEED=20262102 timeout 200 bash difftest/gpu.sh 120 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
grep -E "PASS|FAIL|mismatch" $R/difftest.txt | tail -n 6; grep -c "^done:" $R/difftest.txt; grep "^done:" $R/difftest.txt | tail -n 1
date +%T
