#!/usr/bin/env bash
# bench/try_matmul.sh: issue 16 item 5 on the GPU machine, from the repository
# root, after `scripts/build.sh build && bench/gen.sh` on the build machine
# (bench/gen carried): builds bench/try_matmul.cu with the emitted CUDA C of
# bench/programs/matmul.gdsl, checks gpuc's f64 and f32 products against
# cuBLAS on random inputs (odd shapes and shapes split in k included), times
# both at 1024^3, 4096^3, 1000^3 and 4095x4097x4093 (CUDA events, median of
# 15) and prints one table with TFLOP/s and gpuc / cuBLAS speed; then a table
# of the fast kernels launched directly with 1..8 parts of k at 1024^3 and
# 1000^3 (each checked). PASS or FAIL at the end. Under a minute on an H100.
set -euo pipefail
cd "$(dirname "$0")/.."
gen=bench/gen/matmul.cu
[ -f "$gen" ] || { echo "FAIL: no $gen (run bench/gen.sh on the build machine)"; exit 1; }
grep -q gpuc_dev_matmul_f32_into "$gen" || { echo "FAIL: $gen has no matmul_f32 (stale bench/gen)"; exit 1; }
out=${OUT:-/tmp}
mkdir -p bench/bin
nvcc -O3 -std=c++17 -arch=sm_90 -DGPUC_CUDA_HOST -include "$gen" -o bench/bin/try_matmul bench/try_matmul.cu -lcublas
nvcc -arch=sm_90 -cubin -Xptxas -v -o "$out/matmul.cubin" -x cu "$gen" 2>&1 | grep -A2 "matmul.*_k0" | grep -E "entry|Used|spill" || true
export NVIDIA_TF32_OVERRIDE=0   # SGEMM in plain FP32
bench/bin/try_matmul | tee "$out/try_matmul.md"
