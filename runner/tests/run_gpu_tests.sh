#!/usr/bin/env bash
# run_gpu_tests.sh: the runner's GPU path on a machine with an NVIDIA GPU (the
# device tool's): builds the runtime, the runner and the fake program with cc
# (no CMake, flex or bison needed), then checks --backend=cuda and auto
# against the C backend, the timing file, --profile, and an entry without a
# CUDA backend. Ends with "N passed, N failed".
# Usage: runner/tests/run_gpu_tests.sh [OUT_DIR]   (default $OUT or /tmp/gpuc-runner-gpu)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-${OUT:-/tmp/gpuc-runner-gpu}}
cuda=${GPUC_CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
work=$(mktemp -d /tmp/gpuc-runner.XXXXXX)
log="$out/runner_gpu.log"
: >"$log"
passed=0 failed=0
check() {   # check NAME COMMAND... : pass on exit status 0
  local name=$1; shift
  if "$@" >>"$log" 2>&1; then passed=$((passed + 1)); echo "PASS $name" | tee -a "$log"
  else failed=$((failed + 1)); echo "FAIL $name" | tee -a "$log"; fi
}
export GPUC_CACHE_DIR="$work/cache"
prog="$work/fake_program"
check build cc -O2 -std=c11 -D_DEFAULT_SOURCE -I"$root/runtime" -I"$root/runner" -I"$cuda/include" \
  "$root"/runtime/rt_*.c "$root"/runner/rn_*.c "$root/runner/tests/fake_program.c" -o "$prog" -ldl -lpthread -lm

# saxpy on the GPU equals the C backend, by text and by .npy
echo '2 [1, 2, 3] [10, 20, 30]' > "$work/in.txt"
check cuda_text sh -c "'$prog' -e saxpy --backend=cuda < '$work/in.txt' > '$work/o.txt'; cat '$work/o.txt'; grep -qx '\[12.0, 24.0, 36.0\]' '$work/o.txt'"
check auto_is_gpu sh -c "'$prog' -e saxpy < '$work/in.txt' 2>'$work/auto.err' && ! grep -q note '$work/auto.err'"
check cuda_random_equals_c sh -c "'$prog' -e saxpy --backend=cuda --random n=1000003 --seed 5 --out '$work/g.npy' &&
  '$prog' -e saxpy --backend=c --random n=1000003 --seed 5 --out '$work/c.npy' && cmp '$work/g.npy' '$work/c.npy'"
check cuda_empty sh -c "echo '2 [] []' | '$prog' -e saxpy --backend=cuda | grep -qx '\[\]'"
# timing: 20 lines of integer microseconds, kernels only (the entry marks them)
check cuda_timing sh -c "'$prog' -e saxpy --backend=cuda --random n=16777216 -r 20 -t '$work/t.txt' > /dev/null &&
  test \$(wc -l < '$work/t.txt') -eq 20 && ! grep -qvx '[0-9][0-9]*' '$work/t.txt' && tr '\n' ' ' < '$work/t.txt' && echo"
check c_timing sh -c "'$prog' -e saxpy --backend=c --random n=16777216 -r 5 -t '$work/tc.txt' > /dev/null && tr '\n' ' ' < '$work/tc.txt' && echo"
check cuda_profile sh -c "'$prog' -e saxpy --backend=cuda --profile --random n=1000 -r 3 2>'$work/p.txt' >/dev/null; cat '$work/p.txt'; grep -q saxpy '$work/p.txt'"
# --batch: CUDA and C runs in one process and one context, each with its own
# status and result; a bad run does not stop the ones after it
batch() (
  cd "$work" || exit 1
  echo '2 [1, 2] [3]' > bad.txt
  printf 'g1\tin.txt\tbo1\tbe1\t-e\tsaxpy\t--backend=cuda\t--out\tb1.npy\n' > blist
  printf 'c1\tin.txt\tbo2\tbe2\t-e\tsaxpy\t--backend=c\t--out\tb2.npy\n' >> blist
  printf 'g2\tbad.txt\tbo3\tbe3\t-e\tsaxpy\t--backend=cuda\n' >> blist
  printf 'g3\t-\tbo4\tbe4\t-e\tsaxpy\t--backend=cuda\t--random\tn=100001\t--out\tb4.npy\n' >> blist
  "$prog" --batch blist > bstatus || exit 1
  cat bstatus be3
  printf 'g1\t0\nc1\t0\ng2\t1\ng3\t0\n' | cmp - bstatus && cmp b1.npy b2.npy && grep -q "size n = 2" be3 &&
    "$prog" -e saxpy --backend=c --random n=100001 --out b5.npy && cmp b4.npy b5.npy
)
check batch batch
# an entry with no CUDA backend: auto notes it, cuda refuses
check auto_no_cuda_entry sh -c "echo '[1.5, 2.5]' | '$prog' -e sum 2>&1 | grep -q \"entry 'sum' has no CUDA backend; running on the C backend\""
check cuda_no_cuda_entry sh -c "echo '[1.5]' | '$prog' -e sum --backend=cuda 2>&1; test \$? -eq 0 && exit 1;
  echo '[1.5]' | '$prog' -e sum --backend=cuda 2>&1 | grep -q \"error: entry 'sum' has no CUDA backend\""
# kernels embedded ahead of time (GpucProgram.images): the runner loads the
# image for this device, and no NVRTC runs (the kernel cache stays empty)
src="$root/runtime/rt_*.c $root/runner/rn_*.c"
inc="-I$root/runtime -I$root/runner -I$cuda/include"
check mkimages cc -O2 -std=c11 -D_DEFAULT_SOURCE $inc $src "$root/runner/tests/mkimages.c" -o "$work/mkimages" -ldl -lpthread -lm
sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
check images_build sh -c "'$work/mkimages' '$work/img_ok.c' sm_$sm compute_80 && '$work/mkimages' '$work/img_bad.c' sm_80 &&
  cc -O2 -std=c11 -D_DEFAULT_SOURCE $inc $src '$root/runner/tests/fake_images.c' '$work/img_ok.c' -o '$work/fake_images' -ldl -lpthread -lm &&
  cc -O2 -std=c11 -D_DEFAULT_SOURCE $inc $src '$root/runner/tests/fake_images.c' '$work/img_bad.c' -o '$work/fake_images_bad' -ldl -lpthread -lm"
check images_cuda_no_nvrtc sh -c "rm -rf '$work/cache2' && GPUC_CACHE_DIR='$work/cache2' '$work/fake_images' --backend=cuda < '$work/in.txt' > '$work/o2.txt' &&
  grep -qx '\[12.0, 24.0, 36.0\]' '$work/o2.txt' && test -z \"\$(find '$work/cache2' -type f 2>/dev/null)\" && echo cache empty"
check images_random_equals_c sh -c "'$work/fake_images' --backend=cuda --random n=333333 --out '$work/gi.npy' &&
  '$work/fake_images' --backend=c --random n=333333 --out '$work/ci.npy' && cmp '$work/gi.npy' '$work/ci.npy'"
check images_wrong_arch sh -c "'$work/fake_images_bad' --backend=cuda < '$work/in.txt' 2>'$work/bad.err'; rc=\$?; cat '$work/bad.err';
  test \$rc -eq 1 && grep -q \"fake_images_bad: error: cannot load the program's kernels: \" '$work/bad.err'"
if command -v compute-sanitizer >/dev/null 2>&1 || [ -x "$cuda/bin/compute-sanitizer" ]; then
  cs=$(command -v compute-sanitizer || echo "$cuda/bin/compute-sanitizer")
  check memcheck sh -c "'$cs' --error-exitcode=1 --leak-check=full '$prog' -e saxpy --backend=cuda --random n=4097 -r 2 > /dev/null"
fi
rm -rf "$work"
echo "$passed passed, $failed failed" | tee -a "$log"
[ "$failed" -eq 0 ]
