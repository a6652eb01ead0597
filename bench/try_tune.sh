#!/usr/bin/env bash
# bench/try_tune.sh: does `gpuc tune` choose at least as well as the
# hand-swept defaults (issue 16, item 6)? On the GPU machine, from the
# repository root, after tests/gpu/prepare.sh here (carry .device; gpuc,
# the runtime and headers come from .device/prefix as in tests/gpu/check.sh).
#
#   1. gpuc tune on the scan, filter, row softmax and LayerNorm entries of
#      bench/tune.gdsl (2^26 f32; rows of 1024) within TUNE_BUDGET seconds
#      (default 170): each race one process (the variants built into one
#      harness with nvcc, results checked against the default's, samples
#      interleaved, CUDA events), every time with its spread
#      (docs/bench.md#tuning); the tuning file goes to $OUT/tune.tuning;
#   2. a fresh `gpuc tune --check` (new harness processes) races the
#      chosen values against the defaults within CHECK_BUDGET seconds
#      (default 60) and prints PASS for an entry whose tuned time is at most
#      the default's times (1 + the larger spread).
# Prints the choices, the check table and a last line PASS or FAIL (exit
# status 0 or 1); also the spreads of every race (`spread over` lines are
# the races that missed the 2% aim). Under 4.5 minutes. Needs nvcc on PATH
# or in /usr/local/cuda (or $NVCC). TUNE_ENTRIES, ARCH (default sm_90) and
# GPUC override the defaults.
set -u
cd "$(dirname "$0")/.."
dev=$PWD/.device
export GPUC_HOME=${GPUC_HOME:-$dev/prefix} GPUC_CACHE_DIR=${GPUC_CACHE_DIR:-$dev/cache}
GPUC=${GPUC:-$dev/prefix/bin/gpuc}
[ -x "$GPUC" ] || GPUC=build/driver/gpuc
ENTRIES=${TUNE_ENTRIES:-scan_f32,filter_f32,row_softmax,layer_norm}
ARCH=${ARCH:-sm_90}
RES=${OUT:-$(mktemp -d)}
mkdir -p "$RES"
T0=$(date +%s)
say() { echo "[try_tune $(($(date +%s) - T0))s] $*"; }
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

say "gpuc tune -k $ENTRIES (budget ${TUNE_BUDGET:-170} s)"
timeout $((${TUNE_BUDGET:-170} + 60)) "$GPUC" tune --arch="$ARCH" --budget "${TUNE_BUDGET:-170}" --runs 8 \
  -k "$ENTRIES" -o "$RES/tune.tuning" bench/tune.gdsl > "$RES/tune.txt" 2> "$RES/tune.log"
tune_rc=$?
# every race's table is in $RES/tune.txt; here the choices and the spreads over the target
grep -E '^[a-z_0-9]+: (kernels|picked|kept)|spread over|budget|gpuc tune: took' "$RES/tune.txt"
if [ "$tune_rc" -ne 0 ] || [ ! -f "$RES/tune.tuning" ]; then
  tail -n 20 "$RES/tune.log"
  say "FAIL: gpuc tune exited with $tune_rc (124: cut off)"
  exit 1
fi
grep -v '^#' "$RES/tune.tuning"

say "gpuc tune --check (budget ${CHECK_BUDGET:-60} s): the choice against the defaults, fresh processes"
timeout $((${CHECK_BUDGET:-60} + 60)) "$GPUC" tune --arch="$ARCH" --budget "${CHECK_BUDGET:-60}" --runs 8 \
  -k "$ENTRIES" --check "$RES/tune.tuning" bench/tune.gdsl > "$RES/check.txt" 2> "$RES/check.log"
check_rc=$?
cat "$RES/check.txt"
[ "$check_rc" -ne 0 ] && tail -n 5 "$RES/check.log"
if [ "$check_rc" -eq 0 ]; then
  say "PASS: every tuned choice at least as fast as the default within the spread"
  exit 0
fi
say "FAIL: gpuc tune --check exited with $check_rc"
exit 1
