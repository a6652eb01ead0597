#!/bin/bash
# gpu_check.sh: build and run the four clients of examples/clients on a GPU
# machine against an install tree in .device/prefix (made with
# `cmake --install build --prefix $PWD/.device/prefix`); run from the repo
# root. Each client checks its results itself (the C and CUDA clients
# against the same formulas in C, the Python client against NumPy, the
# C client also the index-out-of-bounds and size-mismatch errors); one line
# PASS/FAIL per client. Needs cc, nvcc, cmake, python3 with numpy.
set -u
ROOT=$PWD
P=${GPUC_PREFIX:-$ROOT/.device/prefix}
G=$P/bin/gpuc
W=$(mktemp -d)
export GPUC_CACHE_DIR=$W/cache
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
fails=0
report() { # name, status, log
    if [ "$2" = 0 ]; then echo "$1: PASS"; else echo "$1: FAIL (exit $2)"; fails=$((fails + 1)); fi
    sed 's/^/    /' "$3" | tail -n 8
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1
T0=$(date +%s)

# (a) C program linking the library (static and shared)
( set -e
  mkdir -p $W/lib && $G --emit=lib examples/clients/vec.gdsl -o $W/lib/libvec
  cc -std=c11 -O2 examples/clients/c_lib/main.c -I$W/lib -I$P/include $W/lib/libvec.a $P/lib/libgpuc_runtime.a -ldl -lpthread -lm -o $W/c_static
  cc -std=c11 -O2 examples/clients/c_lib/main.c -I$W/lib -I$P/include -L$W/lib -lvec -L$P/lib -lgpuc_runtime -Wl,-rpath,$W/lib:$P/lib -lm -o $W/c_shared
  $W/c_static && $W/c_shared ) > $W/a.log 2>&1
report "c_lib (static and shared)" $? $W/a.log

# (b) CUDA program including the --emit=cuda header, compiled by nvcc
( set -e
  $G --emit=cuda examples/clients/vec.gdsl -o $W/vec.cuh
  $NVCC -std=c++17 -O2 -arch=native -I$W examples/clients/cuda_include/main.cu -o $W/cuda_client
  $W/cuda_client ) > $W/b.log 2>&1
report "cuda_include" $? $W/b.log

# (c) separate CMake project: find_package(gpuc) + gpuc_add_library
( set -e
  cmake -S examples/clients/cmake_project -B $W/cmake -DCMAKE_PREFIX_PATH=$P
  cmake --build $W/cmake
  $W/cmake/vec_client ) > $W/c.log 2>&1
report "cmake_project" $? $W/c.log

# (d) Python through ctypes with NumPy
( set -e
  [ -f $W/lib/libvec.so ] || mkdir -p $W/lib && $G --emit=lib examples/clients/vec.gdsl -o $W/lib/libvec
  python3 examples/clients/python/client.py $W/lib/libvec.so ) > $W/d.log 2>&1
report "python_ctypes" $? $W/d.log

echo "$((4 - fails))/4 clients passed in $(( $(date +%s) - T0 )) s"
rm -rf "$W"
[ $fails = 0 ]
