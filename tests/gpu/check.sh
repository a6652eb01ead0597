#!/usr/bin/env bash
# check.sh: the GPU checks of generated programs, run from the repository
# root on the device machine after tests/gpu/prepare.sh filled .device/ here:
#   - every test block of examples/, stdlib/ and tests/gpu/blocks/ on the CUDA backend, against
#     its expected values or the C backend on the same generated inputs
#     (tests/gpu/blocks/scan_stream_wide.gdsl once more with GPUC_SCAN_WIDE=1,
#     the row blocks and examples/softmax.gdsl once more with GPUC_ROW_WARP=0);
#   - under compute-sanitizer memcheck, racecheck and synccheck: the first
#     small test block of every entry of the examples that cover every kernel
#     kind and scalar type (SANITIZE_FILES=all: of every file);
#   - an executable built on the CPU machine starts with no NVRTC call;
#   - out of memory in the middle of a program (tests/gpu/oom_midprogram.c);
#   - the clients of the library and header outputs (tests/clients/gpu_check.sh)
#     when present;
#   - gpuc tune on bench/tune.gdsl (GPUC_CHECK_TUNE=0 leaves it out).
# GPUC_CHECK_BLOCKS=0 and GPUC_CHECK_SANITIZE=0 leave out the first two.
# Ends with "N passed, N failed". Logs in $OUT (default /tmp/gpuc-gpu-check).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/gpuc-gpu-check}
mkdir -p "$out"
dev=$root/.device
export GPUC_HOME=$dev/prefix GPUC_CACHE_DIR=$dev/cache
gpuc=$dev/prefix/bin/gpuc
if [ ! -x "$gpuc" ] || [ ! -d "$dev/cache" ]; then
  echo "check.sh: $dev has no gpuc or kernel cache: run tests/gpu/prepare.sh and scripts/device_pack.sh on the build machine, carry .pack, and run bash scripts/device_unpack.sh here first" >&2
  exit 2
fi
passed=0 failed=0
check() {   # check NAME COMMAND... : pass on exit status 0; output to $out/NAME.log
  local name=$1; shift
  local t0=$SECONDS
  if "$@" > "$out/$name.log" 2>&1; then passed=$((passed + 1)); echo "PASS $name ($((SECONDS - t0)) s): $(tail -n 1 "$out/$name.log")"
  else failed=$((failed + 1)); echo "FAIL $name ($((SECONDS - t0)) s)"; tail -n 15 "$out/$name.log"; fi
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

blocks=("$root/examples" "$root/stdlib")
ls "$root"/tests/gpu/blocks/*.gdsl > /dev/null 2>&1 && blocks+=("$root/tests/gpu/blocks")
# GPUC_CHECK_BLOCKS=0 leaves the test blocks out (a sanitizer-only rerun)
[ "${GPUC_CHECK_BLOCKS:-1}" = 1 ] && check test_blocks_cuda "$gpuc" test --backend=cuda "${blocks[@]}"
# the streaming scan for 16-byte look-back words is the default from 2^26
# items only (GPUC_SCAN_WIDE 2, backend/cuda/scan.c), past every test block:
# its test blocks again with it on wherever it fits
[ "${GPUC_CHECK_BLOCKS:-1}" = 1 ] && [ -f "$root/tests/gpu/blocks/scan_stream_wide.gdsl" ] &&
  check test_blocks_scan_wide env GPUC_SCAN_WIDE=1 "$gpuc" test --backend=cuda "$root/tests/gpu/blocks/scan_stream_wide.gdsl"
# short aligned rows take the warp-a-row kernel (GPUC_ROW_WARP, on by default;
# backend/cuda/rows.c, grep "ROW WARP"): the row blocks again with it off, so
# that the part-of-a-warp kernel those rows took before runs too
[ "${GPUC_CHECK_BLOCKS:-1}" = 1 ] && ls "$root"/tests/gpu/blocks/rows*.gdsl > /dev/null 2>&1 &&
  check test_blocks_row_nowarp env GPUC_ROW_WARP=0 "$gpuc" test --backend=cuda "$root"/tests/gpu/blocks/rows*.gdsl "$root/examples/softmax.gdsl"

nvrtc_free_start() {
  local cache; cache=$(mktemp -d)
  echo '[1, 2, 3, 4]' | GPUC_CACHE_DIR=$cache LD_DEBUG=libs "$dev/gpu/softmax" -e softmax --backend=cuda \
    > "$out/softmax.txt" 2> "$out/ld_debug.txt" || return 1
  cat "$out/softmax.txt"
  local nvrtc cuda entries
  nvrtc=$(grep -c 'calling init:.*nvrtc' "$out/ld_debug.txt")
  cuda=$(grep -c 'calling init:.*libcuda' "$out/ld_debug.txt")
  entries=$(ls -A "$cache" | wc -l)
  echo "libcuda loaded $cuda time(s), libnvrtc $nvrtc, cache entries $entries"
  [ "$nvrtc" -eq 0 ] && [ "$cuda" -eq 1 ] && [ "$entries" -eq 0 ]
}
check nvrtc_free_start nvrtc_free_start

oom() {
  "$root/tests/gpu/oom_build.sh" "$dev/gpu" "$out/oom_midprogram" && "$out/oom_midprogram" "$dev/gpu/oom.cu"
}
check oom_midprogram oom

if [ -x "$root/tests/clients/gpu_check.sh" ]; then
  check clients "$root/tests/clients/gpu_check.sh"
fi

# compute-sanitizer memcheck, racecheck and synccheck on the first test
# block (inputs of at most 70000 elements) of every entry of the examples
# that cover every kernel kind and scalar type (sanitize3.sh through
# GPUC_TEST_WRAP); results still checked. SANITIZE_FILES=all: every file.
if [ "${GPUC_CHECK_SANITIZE:-1}" = 1 ] && command -v compute-sanitizer > /dev/null; then
  files=()
  if [ "${SANITIZE_FILES:-}" = all ]; then files=("$root/examples" "$root/stdlib")
  elif [ -n "${SANITIZE_FILES:-}" ]; then read -r -a files <<< "$SANITIZE_FILES"  # paths, space-separated
  else
    for f in sizes softmax matmul recurrence compaction mean_var histogram; do files+=("$root/examples/$f.gdsl"); done
    files+=("$root"/tests/gpu/blocks/*.gdsl)
  fi
  once=$(mktemp -d)
  check sanitize env GPUC_TEST_WRAP="$root/tests/gpu/sanitize3.sh" SANITIZE_ONCE_DIR="$once" \
    "$gpuc" test --backend=cuda --max-elements 70000 "${files[@]}"
  echo "  sanitized $(ls "$once" | wc -l) entries: $(cat "$once"/* | sed 's|.* -e ||' | sort | tr '\n' ' ')"
fi

# gpuc tune on the GPU: the map and reduce launch parameters (bench/tune.gdsl)
tune() {
  "$gpuc" tune --backend=cuda --arch=sm_90 --budget 120 -o "$out/tune.tuning" "$root/bench/tune.gdsl" &&
    cat "$out/tune.tuning"
}
if [ "${GPUC_CHECK_TUNE:-1}" = 1 ]; then
  check tune tune
  sed 's/^/  /' "$out/tune.tuning" 2> /dev/null  # on stdout too: the device tool returns few files
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
