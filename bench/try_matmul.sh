#!/usr/bin/env bash
# bench/try_matmul.sh: issue 16 item 5 on the GPU machine, from the repository
# root, after `scripts/build.sh build && bench/gen.sh` on the build machine
# (bench/gen carried): builds bench/try_matmul.cu with the emitted CUDA C of
# bench/programs/matmul.gdsl once per sm_90 f64 variant (-DGPUC_MM_F64_K=4:
# mma.m16n8k4, 8: mma.m16n8k8; backend/cuda/matmul.c, grep "MM F64 K8") and
# runs each on f64: gpuc checked against cuBLAS on random inputs (odd shapes
# and shapes split in k included), both timed at 1024^3, 4096^3, 1000^3 and
# 4095x4097x4093 (CUDA events, median of 15), then the fast kernel launched
# directly with 1..8 parts of k at 1024^3 and 1000^3 (each checked); f32
# (no GPUC_MM_F64_K in it) once. Ends with the variants' f64 times side by
# side and PASS or FAIL. About 2 minutes on an H100.
set -uo pipefail
cd "$(dirname "$0")/.."
gen=bench/gen/matmul.cu
[ -f "$gen" ] || { echo "FAIL: no $gen (run bench/gen.sh on the build machine)"; exit 1; }
grep -q gpuc_dev_matmul_f32_into "$gen" || { echo "FAIL: $gen has no matmul_f32 (stale bench/gen)"; exit 1; }
grep -q GPUC_MM_F64_K "$gen" || { echo "FAIL: $gen has no GPUC_MM_F64_K (stale bench/gen)"; exit 1; }
out=${OUT:-/tmp}
variants=(4 8)
mkdir -p bench/bin
pids=()
for K in "${variants[@]}"; do   # the builds side by side
  nvcc -O3 -std=c++17 -arch=sm_90 -DGPUC_CUDA_HOST -DGPUC_MM_F64_K=$K -include "$gen" \
       -o bench/bin/try_matmul_k$K bench/try_matmul.cu -lcublas > "$out/build_k$K.log" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { cat "$out/build_k${variants[$i]}.log"; echo "FAIL: build of GPUC_MM_F64_K=${variants[$i]}"; exit 1; }
done
for K in "${variants[@]}"; do
  echo "ptxas, GPUC_MM_F64_K=$K:"
  nvcc -arch=sm_90 -cubin -Xptxas -v -DGPUC_MM_F64_K=$K -o "$out/matmul_k$K.cubin" -x cu "$gen" 2>&1 |
    grep -A3 "entry function 'matmul.*_k0" | grep -E "entry|Used|spill" || true
done
export NVIDIA_TF32_OVERRIDE=0   # SGEMM in plain FP32
rc=0
for K in "${variants[@]}"; do
  echo
  echo "## f64, GPUC_MM_F64_K=$K"
  bench/bin/try_matmul_k$K --f64 | tee "$out/try_matmul_k$K.md" || rc=1
done
echo
echo "## f32"
bench/bin/try_matmul_k${variants[-1]} --f32 | tee "$out/try_matmul_f32.md" || rc=1
echo
echo "## f64 variants side by side (us, medians of 15; speed = cuBLAS time / gpuc time)"
echo
echo "| GPUC_MM_F64_K | n x k x m | gpuc us | cuBLAS us | gpuc / cuBLAS speed |"
echo "|---|---|---|---|---|"
for K in "${variants[@]}"; do
  awk -F'|' -v K=$K '$2 ~ /f64/ && $4 ~ /[0-9]/ && $3 ~ /x/ && NF == 11 {
    gsub(/ /, "", $3); gsub(/ /, "", $4); gsub(/ /, "", $6); gsub(/ /, "", $8); printf "| %s | %s | %s | %s | %s |\n", K, $3, $4, $6, $8 }' "$out/try_matmul_k$K.md"
done
echo
if [ $rc -eq 0 ]; then echo "try_matmul: PASS (every variant)"; else echo "try_matmul: FAIL"; fi
exit $rc
