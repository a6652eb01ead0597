#!/usr/bin/env bash
# Session 11, device call 1 (H200): the first GPU run of e3deff2 (single-tile
# scans to mode 2), 94291fb (the MPS guard) and 4a2afd0 (gpuc_smem32 in
# NAME_st): the GPU test blocks, random programs across the two backends,
# the sanitizer on the streaming kernels; then the streaming kernels against
# the ones they replaced and CUB on an H200 (bench/try_streaming.sh), and one
# profile of the streaming row softmax at rows of 262144. Logs stay on the
# device; summaries are printed and a few small files come back.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
R=/tmp/r; mkdir -p $R
echo "== check.sh $(date -u +%T)"
OUT=$R/check GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 timeout 170 bash tests/gpu/check.sh > $R/check.txt 2>&1; echo "check rc=$?"
tail -n 6 $R/check.txt | cut -c1-300; grep -E "FAIL|mismatch|wrong" $R/check.txt | cut -c1-300 | head -20
echo "== e20 $(date -u +%T)"
GPUC_HOME=$PWD/.device/prefix GPUC_CACHE_DIR=$PWD/.device/cache timeout 60 .device/prefix/bin/gpuc test --backend=cuda bench/last_run/issue16-session10/difftest_e20.gdsl 2>&1 | tail -n 3
echo "== difftest $(date -u +%T)"
OUT=$R/dt SEED=20261130 timeout 200 bash difftest/gpu.sh 120 14 0 0 > $R/difftest.txt 2>&1; echo "difftest rc=$?"
grep -E "^(PASS|FAIL)|mismatch" $R/difftest.txt | cut -c1-300 | head -12; tail -n 2 $R/difftest.txt | cut -c1-300
echo "== sanitize $(date -u +%T)"
OUT=$R/san SANITIZE_ONLY='^(scan_stream_f32|scan_stream_i32|row_softmax_st|row_layernorm_st) ' timeout 150 bash tests/gpu/sanitize.sh > $R/sanitize.txt 2>&1; echo "sanitize rc=$?"
grep -E '^(PASS|FAIL)|passed, ' $R/sanitize.txt | cut -c1-200 | tail -n 6
echo "== try_streaming $(date -u +%T)"
OUT=$R/ts timeout 120 bash bench/try_streaming.sh 2>&1 | tail -n 30; echo "try_streaming rc=${PIPESTATUS[0]}"
echo "== ncu $(date -u +%T)"
BENCH_ROW_LENGTH=262144 timeout 60 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy -k regex:_st -c 1 bench/gen/bin/bench_rows --case row_softmax --sizes 26 --once > $R/ncu.txt 2>&1; echo "ncu rc=$?"
grep -E "Duration|Throughput|Stall|Warp Cycles|Issued|Active Warps|Achieved|L2 Hit|Mem Busy|Max Bandwidth|Registers|Block Limit" $R/ncu.txt | cut -c1-150 | head -45
echo "== end $(date -u +%T)"
cp $R/ncu.txt $R/ts/streaming.md $OUT/ 2>/dev/null
grep -h -E "^(PASS|FAIL)|passed, " $R/sanitize.txt | cut -c1-300 > $OUT/sanitize_summary.txt
tail -n 40 $R/check.txt | cut -c1-300 > $OUT/check_tail.txt
grep -E "^(PASS|FAIL)|done:|mismatch" $R/difftest.txt | cut -c1-300 | tail -n 60 > $OUT/difftest_summary.txt
