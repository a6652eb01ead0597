#!/usr/bin/env bash
# run_gpu_tests.sh: every GPU test of the runtime in one command, for a machine
# with an NVIDIA GPU (the device tool's). Builds runtime/ standalone (no
# flex/bison needed), builds nvcc images for the cubin/fatbin tests, runs
# test_gpu, the fault tests (debug and asynchronous), the examples, the CPU
# tests, compute-sanitizer (memcheck with leak check, racecheck, synccheck),
# the launch-overhead benchmark, and ends with "N passed, N failed".
# Usage: runtime/tests/run_gpu_tests.sh [OUT_DIR]   (default $OUT or /tmp/gpuc-gpu)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-${OUT:-/tmp/gpuc-gpu}}
mkdir -p "$out"
build=${GPUC_RT_BUILD:-/tmp/gpuc-rt-build}
scratch=$(mktemp -d /tmp/gpuc-gpu-scratch.XXXXXX)
log="$out/gpu_tests.log"
: >"$log"
passed=0
failed=0

note() { echo "$*" | tee -a "$log"; }

# step NAME COMMAND...: run, log, count; pass means exit status 0.
step() {
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$@" >"$scratch/step.out" 2>&1
  local rc=$?
  local t1=$(date +%s.%N)
  { echo "=== $name (rc=$rc, $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s): $*"; cat "$scratch/step.out"; } >>"$log"
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1)); echo "PASS $name"
  else
    failed=$((failed + 1)); echo "FAIL $name (rc=$rc)"; tail -n 25 "$scratch/step.out"
  fi
  return $rc
}

note "== $(date -u) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | tee -a "$log"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
cc=${cc:-90}
note "device arch: sm_$cc; nvcc: $(nvcc --version 2>/dev/null | tail -1)"

step build bash -c "cmake -S '$root/runtime' -B '$build' -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build '$build'" || {
  echo "0 passed, 1 failed"; exit 1; }
t="$build/tests"
ex="$build/examples/runtime"

step nvcc-images bash -c "nvcc -cubin -arch=sm_$cc -o '$scratch/k.cubin' '$root/runtime/tests/nvcc_kernel.cu' && \
  nvcc -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_$cc,code=sm_$cc -gencode arch=compute_$cc,code=compute_$cc \
    -o '$scratch/k.fatbin' '$root/runtime/tests/nvcc_kernel.cu'"
export GPUC_TEST_CUBIN="$scratch/k.cubin" GPUC_TEST_FATBIN="$scratch/k.fatbin" GPUC_TEST_SCRATCH="$scratch"
export GPUC_CACHE_DIR="$scratch/cache"

step test_gpu "$t/test_gpu"
step fault-debug "$t/test_gpu_fault" debug
step fault-async "$t/test_gpu_fault" async
step fault-env bash -c "GPUC_DEBUG=1 '$t/test_gpu_fault' debug"
step test_nvrtc env GPUC_CACHE=0 "$t/test_nvrtc"
step test_cache bash -c "mkdir -p '$scratch/ct' && '$t/test_cache' '$scratch/ct'"
step vector_add "$ex/vector_add"
step vector_add-odd "$ex/vector_add" 1000003
step matmul-32 "$ex/matmul" 1024 32
step matmul-16 "$ex/matmul" 1024 16
step profile-table bash -o pipefail -c "GPUC_PROFILE=1 '$ex/vector_add' 2>&1 | tee /dev/stderr | grep -E '^add +21 '"
step debug-mode bash -c "GPUC_DEBUG=1 '$ex/matmul' 512 32"

if command -v compute-sanitizer >/dev/null; then
  cs="compute-sanitizer --error-exitcode 99 --print-limit 20"
  # The tests call the driver wrongly on purpose (a missing kernel, a garbage
  # image, out-of-memory): those API errors are expected, not reported.
  step memcheck+leakcheck env GPUC_TEST_NO_BIG=1 $cs --tool memcheck --leak-check full --report-api-errors no "$t/test_gpu"
  step memcheck-vector_add $cs --tool memcheck --leak-check full "$ex/vector_add" 100000
  step racecheck-matmul $cs --tool racecheck "$ex/matmul" 256 16
  step synccheck-matmul $cs --tool synccheck "$ex/matmul" 256 16
  step initcheck-vector_add $cs --tool initcheck "$ex/vector_add" 100000
else
  note "compute-sanitizer not found"; failed=$((failed + 1))
fi

# Host-side memory errors on the GPU paths: the runtime and test_gpu built with
# ASan + UBSan (the driver needs the shadow gap unprotected).
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
if step asan-build bash -c "cmake -S '$root/runtime' -B '$build-asan' -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS='$san' -DCMAKE_EXE_LINKER_FLAGS='$san' -DCMAKE_SHARED_LINKER_FLAGS='$san' >/dev/null && \
    cmake --build '$build-asan'"; then
  export ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
  step asan-test_gpu "$build-asan/tests/test_gpu"
  step asan-fault-debug "$build-asan/tests/test_gpu_fault" debug
  step asan-matmul "$build-asan/examples/runtime/matmul" 512 32
  unset ASAN_OPTIONS UBSAN_OPTIONS
fi

step bench_launch bash -o pipefail -c "'$t/bench_launch' | tee '$out/bench_launch.txt'"
cat "$out/bench_launch.txt" 2>/dev/null
grep -hE "^(device 0|vector_add|matmul|33x33|out of memory|debug fault|async fault|cache hit|test_gpu|test_)" "$log" | sort -u | head -40
rm -rf "$scratch"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
