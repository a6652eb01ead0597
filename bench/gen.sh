#!/usr/bin/env bash
# bench/gen.sh: on the build machine, write the CUDA C that `gpuc --emit=cuda`
# makes of every bench/programs/*.gdsl into bench/gen/PROG.cu (ignored; the
# device call carries it). A program gpuc cannot compile gets no file, and
# bench/run.sh reports its cases as not available.
#   bench/gen.sh [GPUC]   (default build/driver/gpuc; build it with scripts/build.sh build)
set -u
cd "$(dirname "$0")/.."
GPUC=${1:-build/driver/gpuc}
mkdir -p bench/gen
rc=0
for f in bench/programs/*.gdsl; do
  p=$(basename "$f" .gdsl)
  if "$GPUC" --emit=cuda "$f" -o "bench/gen/$p.cu.tmp" 2>"bench/gen/$p.err"; then
    mv "bench/gen/$p.cu.tmp" "bench/gen/$p.cu"
    rm -f "bench/gen/$p.err"
    echo "gen: $p ($(grep -c "^extern \"C\" __global__" "bench/gen/$p.cu") kernels)"
  else
    rm -f "bench/gen/$p.cu" "bench/gen/$p.cu.tmp"
    echo "gen: $p FAILED: $(head -3 "bench/gen/$p.err")" >&2
    rc=1
  fi
done
exit $rc
