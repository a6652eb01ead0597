#!/bin/bash
# The GPU check of issue 3, in one call: build, benchmark, correctness at
# sizes 0..65537 (Python reference) and 2^24+3 (C backend reference).
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
gcc -O2 gen.c -o gen && gcc -O2 cmp.c -o cmp -lm
( for p in reduce_types map_types scan_types filter_scatter twod stats; do
    echo "nvcc -O3 -arch=sm_90 -std=c++17 -DGPUC_CUDA_HOST -DGPUC_MAIN progs/$p.cu -o progs/$p.gpu"
    echo "gcc -std=c99 -O2 -DGPUC_MAIN progs/$p.c -o progs/$p.cpu -lm"
  done
  echo "nvcc -O3 -arch=sm_90 -std=c++17 bench_main.cu -o bench"
) | xargs -P 16 -I{} bash -c "{} 2>&1 | grep -v '^$' | head -5"
echo "== build done $(date +%T)"
./bench $((1 << 28)) 15 2>&1 | tee $OUT/bench.txt
./bench $((1 << 20)) 25 2>&1 | tee $OUT/bench_small.txt
echo "== bench done $(date +%T)"
seq 1 $(wc -l < small.sh) | xargs -P 12 -I{} ./small_one.sh {} > $OUT/small.txt
echo "== small sizes: $(grep -c 'rc=0' $OUT/small.txt) of $(wc -l < $OUT/small.txt) commands passed"
grep -v 'rc=0' $OUT/small.txt | head -20
echo "== small done $(date +%T)"
cat bigcases.txt | xargs -P 6 -L 1 ./big.sh 2>&1 | tee $OUT/big.txt
echo "== big: $(grep -c ' 0 differ' $OUT/big.txt) of $(wc -l < bigcases.txt) cases match"
echo "== all done $(date +%T)"
