#!/usr/bin/env bash
# Session 19, device call 1 (H200): SW_LANE_RUNS, the wide scan's consumers
# with a run of consecutive vectors a lane (one warp reduction and one warp
# scan a part instead of one scan and a broadcast a step), the default of
# this build:
#  1. bench/try_variants.sh: the default against the strided form
#     (-DSW_LANE_RUNS=0, last session's), emit_scan's kernel, a lag of 4,
#     tiles of 4096 / lag 3 and 13 slots for the i64 scan;
#  2. the scan test blocks on the CUDA backend, by default and with
#     GPUC_SCAN_WIDE=1 (the wide kernel past one tile);
#  3. compute-sanitizer on the i64 / u64 / tuple / wide scan cases with
#     GPUC_SCAN_WIDE=1;
#  4. difftest/gpu.sh with GPUC_SCAN_WIDE=1 on a fresh seed.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
echo "== try_variants"; date +%T
OUT=$R/tv timeout 240 bash bench/try_variants.sh > $R/tv.txt 2>&1; echo "rc=$?"
tail -n 22 $R/tv.txt
export GPUC_HOME=$PWD/.device/prefix GPUC_CACHE_DIR=$PWD/.device/cache
F="tests/gpu/blocks/scan*.gdsl examples/compaction.gdsl examples/recurrence.gdsl examples/sizes.gdsl"
echo "== blocks"; date +%T
timeout 100 .device/prefix/bin/gpuc test --backend=cuda $F > $R/blocks.txt 2>&1; echo "default rc=$?: $(tail -n 1 $R/blocks.txt)"
GPUC_SCAN_WIDE=1 timeout 100 .device/prefix/bin/gpuc test --backend=cuda $F > $R/blocks_wide.txt 2>&1; echo "wide rc=$?: $(tail -n 1 $R/blocks_wide.txt)"
echo "== sanitize"; date +%T
GPUC_SCAN_WIDE=1 OUT=$R/san SANITIZE_ONLY='^scan_(incl_i64|excl_u64|tuple|tuple_ex|wide_[a-z0-9]+) ' timeout 150 bash tests/gpu/sanitize.sh > $R/san.txt 2>&1; echo "rc=$?"
tail -n 2 $R/san.txt
echo "== difftest"; date +%T
GPUC_SCAN_WIDE=1 OUT=$R/dt SEED=20261901 timeout 100 bash difftest/gpu.sh 40 14 0 0 2>&1 | tail -n 3
date +%T
