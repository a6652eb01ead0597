#!/usr/bin/env bash
# all.sh: the GPU checks that fit one device call, in order of priority,
# each under its own time cap, so that whatever the budget cuts is named
# rather than lost. From the repository root on the GPU machine, after
# tests/gpu/prepare.sh, scripts/device_pack.sh and (for the Python steps)
# `build/python-venv/bin/python -m pip wheel --no-deps ./python -w .whl` on
# the build machine, carrying .pack and .whl:
#   bash scripts/device_unpack.sh && bash tests/gpu/all.sh [BUDGET_SECONDS]   (default 560)
# Steps (seconds at most): check.sh without the sanitizer and gpuc tune
# (120: every test block on the CUDA backend, NVRTC-free start, out of
# memory mid-program, the clients), shard_gpu.sh (150), python/tests/
# gpu_check.sh (150), sanitize.sh on the cases that changed last
# (SANITIZE_ONLY, default the sharded, the out-of-bounds and the register
# scan cases; 150), then difftest --python on CUDA for what is left. One line
# per step (PASS, FAIL, or "not run: out of time"), the last lines of a
# failing step's log, and "N passed, N failed". Logs in $OUT (default
# /tmp/gpuc-gpu-all). Exit status 1 when a step failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
budget=${1:-560}
case $budget in "" | *[!0-9]*) echo "all.sh: BUDGET_SECONDS: expected whole seconds, found '$budget'" >&2; exit 2 ;; esac
out=${OUT:-/tmp/gpuc-gpu-all}
mkdir -p "$out"
passed=0 failed=0 skipped=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1
step() {   # step NAME CAP COMMAND...: run with at most CAP seconds, or less when the budget has less
  local name=$1 cap=$2; shift 2
  local left=$((budget - SECONDS - 10))
  [ $left -lt $cap ] && cap=$left
  if [ $cap -lt 30 ]; then
    echo "$name: not run: out of time ($((budget - SECONDS)) s of the budget left)"
    skipped=$((skipped + 1))
    return
  fi
  local t0=$SECONDS
  if timeout "$cap" "$@" > "$out/$name.log" 2>&1; then
    passed=$((passed + 1)); echo "$name: PASS ($((SECONDS - t0)) s): $(tail -n 1 "$out/$name.log")"
  else
    local st=$?
    failed=$((failed + 1)); echo "$name: FAIL ($((SECONDS - t0)) s, exit $st$([ $st = 124 ] && echo ': timed out'))"
    tail -n 15 "$out/$name.log" | sed 's/^/    /'
  fi
}
step check 120 env GPUC_CHECK_SANITIZE=0 GPUC_CHECK_TUNE=0 OUT="$out/check" bash tests/gpu/check.sh
step shard_gpu 150 env OUT="$out/shard" bash tests/gpu/shard_gpu.sh
if ls .whl/gpuc-*.whl > /dev/null 2>&1; then
  step python 150 bash python/tests/gpu_check.sh
else
  echo "python: not run: no wheel in .whl/"
  skipped=$((skipped + 1))
fi
step sanitize 150 env SANITIZE_ONLY="${SANITIZE_ONLY:-red_sharded|scan_sharded|row_xent_oob|scan_threads}" OUT="$out/san" bash tests/gpu/sanitize.sh
if ls .whl/gpuc-*.whl > /dev/null 2>&1 &&
   python3 -m pip install -q --no-index --no-deps --target "$out/site" .whl/gpuc-*.whl > "$out/pip.log" 2>&1; then
  left=$((budget - SECONDS - 10))
  step difftest_python $left env PYTHONPATH="$out/site" GPUC_HOME="$root/.device/prefix" GPUC_CACHE_DIR="$root/.device/cache" \
    python3 difftest/run.py --python --backend=cuda --python-exe python3 --gpuc .device/prefix/bin/gpuc \
      --seed "${SEED:-1}" --seconds $((left > 90 ? left - 60 : 30)) --jobs 8 --out "$out/difftest-python"
else
  echo "difftest_python: not run: no wheel in .whl/ or it did not install ($out/pip.log)"
  skipped=$((skipped + 1))
fi
echo "$passed passed, $failed failed$([ $skipped -gt 0 ] && echo ", $skipped not run")"
[ $failed -eq 0 ]
