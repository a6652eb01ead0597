#!/usr/bin/env bash
# Session 18, device call 1 (H200): LOOKBACK 64 (GPUC_SCAN_LOOKBACK=64,
# backend/cuda/scan.c) measured and checked on the GPU for the first time:
#  1. bench/try_variants.sh: lb64, wide, lb64wide against the default for the
#     recurrence and the i64 scans at 2^20/2^24/2^28 (every result checked);
#  2. the scan test blocks (tests/gpu/blocks/scan*.gdsl, examples/compaction,
#     recurrence, sizes) on the CUDA backend emitted with LOOKBACK 64;
#  3. compute-sanitizer on the i64 / u64 / tuple scan cases with it;
#  4. difftest/gpu.sh with it on a fresh seed.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
echo "== try_variants"; date +%T
OUT=$R/tv timeout 240 bash bench/try_variants.sh > $R/tv.txt 2>&1; echo "rc=$?"
tail -n 40 $R/tv.txt
export GPUC_SCAN_LOOKBACK=64 GPUC_HOME=$PWD/.device/prefix GPUC_CACHE_DIR=$PWD/.device/cache
echo "== scan blocks, LOOKBACK 64"; date +%T
timeout 120 .device/prefix/bin/gpuc test --backend=cuda tests/gpu/blocks/scan*.gdsl examples/compaction.gdsl examples/recurrence.gdsl examples/sizes.gdsl > $R/blocks.txt 2>&1; echo "rc=$?"
tail -n 3 $R/blocks.txt
echo "== sanitize, LOOKBACK 64"; date +%T
OUT=$R/san SANITIZE_ONLY='^scan_(incl_i64|excl_u64|tuple|tuple_ex|wide_[a-z0-9]+) ' timeout 150 bash tests/gpu/sanitize.sh > $R/san.txt 2>&1; echo "rc=$?"
tail -n 4 $R/san.txt
echo "== difftest, LOOKBACK 64"; date +%T
OUT=$R/dt SEED=20261801 timeout 130 bash difftest/gpu.sh 70 14 0 0 2>&1 | tail -n 2
date +%T
