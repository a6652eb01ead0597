#!/usr/bin/env bash
# bench/try_row_stream.sh: the long-row streaming kernel (NAME_st, rows.c,
# grep "ROW STREAM") built with other constants, for issue 16's row softmax
# at rows of 262144 (0.835 of the copy rate on an H200 against 0.90; the
# hand-written prototype with no exchange at all 0.877-0.888 there, so the
# exchange alone cannot close it: docs/performance.md, eleventh round).
# Each variant is a gpuc built with -D<constant> (backend/cuda/cuda_emit.h)
# that writes bench/programs/rows.gdsl and rows_nn.gdsl again; its bench
# drivers then time row softmax and LayerNorm at rows of 262144 (2^28 f32)
# against the default (bench/gen/bin), in the order default, variants,
# variants reversed, default; every result checked by its driver.
#   s7     ROW_STREAM_SLOTS=7: a seventh 32 KiB slot (224 KiB of ring, the
#          most an SM's 227 KiB holds): more bytes in flight a block
#   l3     ROW_STREAM_LAG=3: the post three chunks after the fold
#   s7l3   both
#   gw4    ROW_STREAM_GW=4: four gatherer warps
#   nc8    ROW_STREAM_NC=8: eight consumer warps (fewer threads, 384)
#
#   bench/try_row_stream.sh --prepare   here, after scripts/build.sh build and bench/gen.sh,
#                                       bench/run.sh --prepare (about 3 minutes a variant)
#   bench/try_row_stream.sh             on the GPU machine (scripts/device_pack.sh gen bin), about 60 s
# Files in $OUT (else a temp folder); exit 1 if a run failed or a result was wrong.
set -u
cd "$(dirname "$0")/.."
VARIANTS=("s7:-DROW_STREAM_SLOTS=7" "l3:-DROW_STREAM_LAG=3" "s7l3:-DROW_STREAM_SLOTS=7 -DROW_STREAM_LAG=3"
  "gw4:-DROW_STREAM_GW=4" "nc8:-DROW_STREAM_NC=8")
D=bench/bin/rs
B=bench/gen/bin
FLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo"
if [ "${1:-}" = "--prepare" ]; then
  mkdir -p $D
  rc=0
  for v in "${VARIANTS[@]}"; do
    n=${v%%:*} defs=${v#*:}
    bd=/tmp/gpuc-rs-$n
    { cmake -S . -B $bd -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS=$defs" >/dev/null &&
      ninja -C $bd gpuc >/dev/null; } || { echo "try_row_stream: gpuc ($n) did not build" >&2; rc=1; continue; }
    mkdir -p $D/$n
    for p in rows rows_nn; do
      $bd/driver/gpuc --emit=cuda bench/programs/$p.gdsl -o $D/$n/$p.cu &&
        nvcc $FLAGS -DGPUC_CUDA_HOST -include $D/$n/$p.cu -o $D/$n/bench_$p bench/gpuc/bench_$p.cu -lcublas ||
        { echo "try_row_stream: bench_$p ($n) did not build" >&2; rc=1; }
      rm -f $D/$n/$p.cu
    done
    echo "try_row_stream: prepared $n ($defs)"
  done
  exit $rc
fi
R=${OUT:-$(mktemp -d)}
mkdir -p "$R" || exit 1
rc=0
timeout 30 $B/peers_cub --case copy --sizes 28 --out "$R/copy.jsonl" 2>>"$R/log.txt" || rc=1
names=(default)
for v in "${VARIANTS[@]}"; do names+=("${v%%:*}"); done
order=("${names[@]}")
for ((i = ${#names[@]} - 1; i >= 0; i--)); do order+=("${names[$i]}"); done
for n in "${order[@]}"; do
  d=$D/$n; [ $n = default ] && d=$B
  for c in "rows row_softmax" "rows_nn layer_norm"; do
    set -- $c
    [ -x "$d/bench_$1" ] || { echo "try_row_stream: no $d/bench_$1 (--prepare)" >&2; rc=1; continue; }
    BENCH_ROW_LENGTH=262144 timeout 60 "$d/bench_$1" --case "$2" --sizes 28 --out "$R/$n.jsonl" >/dev/null 2>>"$R/log.txt" ||
      { echo "try_row_stream: $n $2 failed" >&2; rc=1; }
  done
done
python3 - "$R" "${names[@]}" <<'PY' || rc=1
import json, os, sys
d, names = sys.argv[1], sys.argv[2:]
L = lambda f: [json.loads(l) for l in open(os.path.join(d, f))] if os.path.exists(os.path.join(d, f)) else []
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in L("copy.jsonl") if r["case"] == "copy"][0]
print("copy rate %.1f GB/s; rows of 262144, 2^28 f32; us (two runs), best of the copy rate, / default" % copy)
print("| variant | case | us | of the copy rate | / default | check |\n|---|---|---|---|---|---|")
base, bad = {}, 0
for n in names:
    for case in ("row_softmax", "layer_norm"):
        rs = [r for r in L(n + ".jsonl") if r["case"] == case]
        if not rs: print("| %s | %s | - | - | - | missing |" % (n, case)); bad += 1; continue
        us = [r["us"] for r in rs]
        base.setdefault(case, min(us))
        ok = all(r.get("check") == "ok" for r in rs)
        bad += not ok
        print("| %s | %s | %s | %.3f | %.3f | %s |" % (n, case, " / ".join("%.1f" % u for u in us),
              2 * rs[0]["n"] * 4 / min(us) / 1e3 / copy, min(us) / base[case], "ok" if ok else "WRONG"))
sys.exit(1 if bad else 0)
PY
exit $rc
