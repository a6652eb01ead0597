#!/bin/bash
# Prepare the GPU check of the code generators in .device/gpu (an ignored
# folder the device tool carries): the CUDA C and reference C of every
# tests/exec program, the benchmark, and the command lists.  Then, on the GPU
# machine: `bash .device/gpu/check.sh` (everything) or check2.sh (scans,
# filters and the benchmark).  Results of the last runs: docs/ir.md.
# usage: tests/exec/Inputs/gpu/prepare.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../../../.." && pwd)
gpuc=${1:-$root/build}/driver/gpuc
out=$root/.device/gpu
mkdir -p $out/progs
cp $root/tests/exec/Inputs/gpu/* $out/
cp $root/tests/exec/Inputs/run.py $out/
for t in reduce_types map_types scan_types filter_scatter twod stats; do
  $gpuc --emit=cuda $root/tests/exec/$t.gdsl -o $out/progs/$t.cu
  $gpuc --emit=c $root/tests/exec/$t.gdsl -o $out/progs/$t.c
  grep "^// RUN: %python" $root/tests/exec/$t.gdsl | sed "s|// RUN: %python %S/Inputs/run.py %t |python3 run.py progs/$t.gpu |"
done > $out/small.sh
grep -nE "scan_types|filter_scatter" $out/small.sh | cut -d: -f1 > $out/small2.idx
grep -E "^(scan_types|filter_scatter)" $out/bigcases.txt > $out/bigcases2.txt
$gpuc --emit=cuda $out/bench.gdsl -o $out/bench.cu
echo "prepared $out"
