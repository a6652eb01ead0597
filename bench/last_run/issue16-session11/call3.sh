#!/usr/bin/env bash
# Session 11, device call 3 (H200): the first GPU run of SCAN BULK 3 WIDE
# (the streaming scan for 16-byte look-back words: i64/u64/f64 scans and
# tuple scans such as the recurrence): the GPU test blocks (with
# tests/gpu/blocks/scan_stream_wide.gdsl), the sanitizer on the wide cases,
# random programs across the two backends, then the streaming kernels
# against the ones they replaced and CUB (bench/try_streaming.sh). Logs stay
# on the device; summaries are printed, a few small files come back.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
R=/tmp/r; mkdir -p $R
echo "== check.sh $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 170 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
tail -n 6 $R/check.txt | cut -c1-300; grep -E "FAIL|mismatch|wrong" $R/check.txt | cut -c1-300 | head -20
echo "== sanitize $(date -u +%T)"
OUT=$R/san SANITIZE_ONLY='^(scan_wide_tuple|scan_wide_tex|scan_wide_i64|scan_wide_u64|scan_incl_i64|scan_excl_u64|scan_tuple|scan_tuple_ex) ' timeout 170 bash tests/gpu/sanitize.sh > $R/sanitize.txt 2>&1; echo "sanitize rc=$?"
grep -E '^(PASS|FAIL)|passed, ' $R/sanitize.txt | cut -c1-200 | grep -v "^PASS" | tail -n 12; grep -c "^PASS" $R/sanitize.txt
grep -h -A3 'Race reported\|Error: \|ERROR SUMMARY: [1-9]' $R/san/*.log 2>/dev/null | cut -c1-200 | head -20
echo "== try_streaming $(date -u +%T)"
OUT=$R/ts timeout 200 bash bench/try_streaming.sh 2>&1 | tail -n 40; echo "try_streaming rc=${PIPESTATUS[0]}"
echo "== difftest $(date -u +%T)"
OUT=$R/dt SEED=20261131 timeout 150 bash difftest/gpu.sh 90 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
grep -E "^(PASS|FAIL)|mismatch" $R/difftest.txt | cut -c1-300 | head -8; tail -n 2 $R/difftest.txt | cut -c1-300
echo "== end $(date -u +%T)"
cp $R/ts/streaming.md $R/ts/scan_new.jsonl $R/ts/scan_old.jsonl $R/ts/cub.jsonl $OUT/ 2>/dev/null
grep -h -E "^(PASS|FAIL)|passed, " $R/sanitize.txt | cut -c1-300 > $OUT/sanitize_summary.txt
tail -n 40 $R/check.txt | cut -c1-300 > $OUT/check_tail.txt
grep -E "^(PASS|FAIL)|done:|mismatch" $R/difftest.txt | cut -c1-300 | tail -n 60 > $OUT/difftest_summary.txt
