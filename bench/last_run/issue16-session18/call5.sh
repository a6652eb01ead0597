#!/usr/bin/env bash
# Session 18, device call 5 (H200): SCAN BULK 3 WIDE on by default from 2^26
# items (GPUC_SCAN_WIDE 2; tiles of 2048 / lag 6 for one 8-byte input, 4096
# / lag 3 for two 4-byte inputs), checked and timed:
#  1. the scan test blocks (tests/gpu/blocks/scan*.gdsl, examples/compaction,
#     recurrence, sizes) on the CUDA backend, by default and with
#     GPUC_SCAN_WIDE=1 (the wide kernel past one tile);
#  2. compute-sanitizer on the i64 / u64 / tuple scan cases, GPUC_SCAN_WIDE=1;
#  3. difftest/gpu.sh with GPUC_SCAN_WIDE=1 on a fresh seed;
#  4. the recurrence and the i64 scans through the three paths: the header
#     drivers at 2^10..2^28 (three processes) with CUB's, the library and the
#     executable at 2^28 (every result checked by its harness).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT
export GPUC_HOME=$PWD/.device/prefix GPUC_CACHE_DIR=$PWD/.device/cache
F="tests/gpu/blocks/scan*.gdsl examples/compaction.gdsl examples/recurrence.gdsl examples/sizes.gdsl"
echo "== blocks"; date +%T
timeout 100 .device/prefix/bin/gpuc test --backend=cuda $F > $R/blocks.txt 2>&1; echo "default rc=$?: $(tail -n 1 $R/blocks.txt)"
GPUC_SCAN_WIDE=1 timeout 100 .device/prefix/bin/gpuc test --backend=cuda $F > $R/blocks_wide.txt 2>&1; echo "wide rc=$?: $(tail -n 1 $R/blocks_wide.txt)"
echo "== bench"; date +%T
S=10,12,14,16,18,20,22,24,26,28
for pass in 1 2 3; do
  for c in recurrence incl_i64 excl_i64; do timeout 60 bench/gen/bin/bench_scan --case $c --sizes $S --out $R/records.jsonl > /dev/null 2>> $R/bench.err || echo "bench $c failed"; done
  for c in scan_incl recurrence; do timeout 90 bench/gen/bin/peers_cub --case $c --sizes $S --out $R/records.jsonl > /dev/null 2>> $R/bench.err || echo "cub $c failed"; done
done
timeout 30 bench/gen/bin/peers_cub --case copy --sizes 28 --out $R/records.jsonl > /dev/null 2>> $R/bench.err
for c in scan_incl_i64 scan_excl_i64 recurrence_f32; do
  timeout 60 bench/gen/bin/paths/lib_scan --case $c --log2 28 --m 1024,32768 --out $R/records.jsonl < /dev/null 2>> $R/bench.err || echo "lib $c failed"
done
timeout 120 python3 bench/paths/exe_bench.py --bin bench/gen/bin/paths --log2 28 --runs 20 --cases scan_incl_i64,scan_excl_i64,recurrence_f32 --out $R/records.jsonl 2>> $R/bench.err || echo "exe failed"
python3 bench/last_run/issue16-session18/scan_table.py $R/records.jsonl
echo "== sanitize"; date +%T
GPUC_SCAN_WIDE=1 OUT=$R/san SANITIZE_ONLY='^scan_(incl_i64|excl_u64|tuple|tuple_ex|wide_[a-z0-9]+) ' timeout 150 bash tests/gpu/sanitize.sh > $R/san.txt 2>&1; echo "rc=$?"
tail -n 2 $R/san.txt
echo "== difftest"; date +%T
GPUC_SCAN_WIDE=1 OUT=$R/dt SEED=20261802 timeout 110 bash difftest/gpu.sh 45 14 0 0 2>&1 | tail -n 2
date +%T
