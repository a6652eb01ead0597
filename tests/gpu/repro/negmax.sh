#!/usr/bin/env bash
# negmax.sh: on a GPU machine, with nvcc alone: gpuc's CUDA C for
# negmax.gdsl (max of negated u32 as i32, 16-byte vector loads) run by a
# small host program against the host's answer, at ptxas -O3, -O2 and -O1.
# On an H100 with CUDA 13.0 every size from 4 up was WRONG at every level
# (docs/reliability.md). Usage: tests/gpu/repro/negmax.sh [GPUC]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gpuc=${1:-$here/../../../build/driver/gpuc}
tmp=$(mktemp -d)
"$gpuc" --emit=cuda "$here/negmax.gdsl" -o "$tmp/negmax.cu" || exit 1
cp "$here/negmax_host.cu" "$tmp/"
status=0
for O in 3 2 1; do
  nvcc -arch=sm_90 -Xptxas -O$O -o "$tmp/h$O" "$tmp/negmax_host.cu" || exit 1
  echo "ptxas -O$O:"; "$tmp/h$O" || status=1
done
rm -rf "$tmp"
exit $status
