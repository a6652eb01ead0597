#!/usr/bin/env bash
# Session 18, device call 6 (H200): tests/gpu/check.sh (no sanitizer, no
# tune) with the wide scan on by default from 2^26 items (main at
# 9875f3b's compiler; tests/gpu/prepare.sh here, the kernel cache of its
# last pass, the row blocks with GPUC_ROW_WARP=0, left out of the pack for
# its size: NVRTC fills it in on the GPU).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
date +%T
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 320 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "rc=$?"
grep -E "PASS|FAIL|passed|failed" $R/check.txt | tail -n 12
date +%T
