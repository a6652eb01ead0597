#!/usr/bin/env bash
# bench/try_grid.sh: the reductions' grid (issue 16; not yet run on a GPU).
# Maps now launch one block a chunk (backend/cuda/launch.c, "MAP WHOLE
# GRID": 4% faster than a grid-stride loop over a capped grid on an H100);
# reductions still launch one wave of resident blocks. This builds the gpuc
# reduce driver (bench/gpuc/bench_reduce.cu, every result checked against the
# host) with -DGPUC_REDUCE_WAVES=1 (today's), 2, 4 and 0 (one block a
# chunk), runs sum and max of f32 and i64 at 2^20, 2^24 and 2^28 in the order
# 1 2 4 0 0 4 2 1, and CUB's sum and max (peers_cub) with the copy rate
# before and after, then prints one table of medians.
#
#   bench/try_grid.sh --prepare   on the build machine, after scripts/build.sh build
#                                 and bench/gen.sh: the binaries into bench/bin/grid
#   bench/try_grid.sh             on the GPU machine (carry bench/bin), about a minute
#
# Files in $OUT (else a temp folder); exit status 1 if a run failed or a
# result was wrong.
set -u
cd "$(dirname "$0")/.."
B=bench/bin/grid
FLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo"
if [ "${1:-}" = "--prepare" ]; then
  mkdir -p $B
  nvcc $FLAGS -o $B/peers_cub bench/peers_cub.cu -lcublas &
  for w in 1 2 4 0; do
    nvcc $FLAGS -DGPUC_CUDA_HOST -DGPUC_REDUCE_WAVES=$w -include bench/gen/reduce.cu \
      -o $B/bench_reduce_w$w bench/gpuc/bench_reduce.cu -lcublas &
  done
  wait
  ls $B/peers_cub $B/bench_reduce_w{1,2,4,0} >/dev/null && echo "try_grid: prepared $B" && exit 0
  echo "try_grid: a build failed" >&2
  exit 1
fi
RES=${OUT:-$(mktemp -d)}
rc=0
$B/peers_cub --case copy --sizes 28 --out "$RES/grid.jsonl" 2>>"$RES/grid.log" || rc=1
for c in sum max; do
  $B/peers_cub --case $c --sizes 20,24,28 --out "$RES/grid.jsonl" 2>>"$RES/grid.log" || rc=1
done
for w in 1 2 4 0 0 4 2 1; do
  for c in sum_f32 sum_i64 max_f32 max_i64; do
    $B/bench_reduce_w$w --sizes 20,24,28 --case $c --out "$RES/grid_w$w.jsonl" 2>>"$RES/grid.log" || rc=1
  done
done
$B/peers_cub --case copy --sizes 28 --out "$RES/grid.jsonl" 2>>"$RES/grid.log" || rc=1
python3 - "$RES" <<'EOF' | tee "$RES/grid.md"
import json, os, sys
d = sys.argv[1]
peer = [json.loads(l) for l in open(os.path.join(d, "grid.jsonl"))]
rates = [2 * r["n"] * 4 / r["us"] / 1e3 for r in peer if r["case"] == "copy"]
print("copy rate before / after: " + " / ".join("%.1f GB/s" % g for g in rates))
cub = {(r["case"], r["dtype"], r["n"]): r["us"] for r in peer if r["case"] in ("sum", "max")}
rows, bad = {}, False
for w in (1, 2, 4, 0):
    for l in open(os.path.join(d, "grid_w%d.jsonl" % w)):
        r = json.loads(l)
        bad |= r["check"] != "ok"
        rows.setdefault((r["case"], r["dtype"], r["n"]), {}).setdefault(w, []).append(r["us"])
print("| case | n | CUB us | 1 wave (today) | 2 waves | 4 waves | one block a chunk |\n|---|---|---|---|---|---|---|")
for (c, t, n), v in sorted(rows.items()):
    cells = [" / ".join("%.1f" % u for u in v.get(w, [])) for w in (1, 2, 4, 0)]
    print("| %s %s | 2^%d | %s | %s |" % (c, t, n.bit_length() - 1, "%.1f" % cub[(c, t, n)] if (c, t, n) in cub else "-", " | ".join(cells)))
print("WRONG results" if bad else "every result checked: ok")
sys.exit(1 if bad else 0)
EOF
[ $? = 0 ] || rc=1
echo "try_grid: $([ $rc = 0 ] && echo PASS || echo FAIL)"
exit $rc
