#!/usr/bin/env bash
# Session 13, device call 1 (H200): main at 42fc76d, whose host code after
# session 12's last GPU check (d0e2499, the count word's lock order) and
# test blocks (filter3.gdsl's two filters in one entry) had not run on a
# GPU: the GPU test blocks, the runtime's test_gpu, the sanitizer on the
# filters, and random programs against the C backend.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; mkdir -p $R
echo "== check.sh $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 200 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
grep -E "^PASS|^FAIL|passed, |filter3" $R/check.txt | cut -c1-200 | tail -n 10
echo "== test_gpu $(date -u +%T)"
mkdir -p $R/tg; GPUC_TEST_SCRATCH=$R/tg timeout 120 bench/bin/sv/test_gpu > $R/test_gpu.txt 2>&1; echo "test_gpu rc=$?"
grep -E "^FAIL|count_word|passed|failed" $R/test_gpu.txt | tail -n 6
echo "== sanitize $(date -u +%T)"
OUT=$R/san SANITIZE_ONLY='^(filter_pos|filter_zip|filter_sum) ' timeout 150 bash tests/gpu/sanitize.sh > $R/sanitize.txt 2>&1; echo "sanitize rc=$?"
grep -E '^FAIL|passed, ' $R/sanitize.txt | cut -c1-200 | tail -n 6
echo "== difftest $(date -u +%T)"
OUT=$R SEED=20261301 timeout 200 bash difftest/gpu.sh 120 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
grep -E '^PASS|^FAIL|done:' $R/difftest.txt | tail -n 4
echo "== end $(date -u +%T)"
(cd $R && tar czf $OUT/r.tgz check.txt test_gpu.txt sanitize.txt difftest.txt) 2>/dev/null
