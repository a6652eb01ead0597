#!/usr/bin/env bash
# bench/try_variants.sh: bench cases of gpuc built other ways, against the
# default (bench/gen/bin), for the misses of issue 16 on the H200
# (docs/performance.md, twelfth, thirteenth and seventeenth rounds, has what
# the earlier sets measured: the long-row ring's 7 slots and lag 3, now the
# defaults; 4 gatherers, 8 consumers, @items(2)/(4) slower; LOOKBACK 64
# slower; the wide scan's shapes, swept with -DSW_TILE_ITEMS,
# -DSW_LAG_TILES, -DSS_LOOKBACK_WARPS and the look-back's backoff (no
# difference; that knob is gone), now its defaults from 2^26 items):
#  - off: the scans with 16-byte look-back words on emit_scan's register
#    kernel at every size (GPUC_SCAN_WIDE=0 in gpuc's environment), the
#    default before 2026-11-29.
# (Session 19's calls 1, 2 and 5 measured the consumers' first, strided
# form, a lag of 4, the i64 scan's tiles of 4096 in 6 or 7 slots with a lag
# of 2 or 3 (7 slots and 3 now the default), 13 slots of 2048 and LOOKBACK
# 64 (GPUC_SCAN_LOOKBACK=64) over the new shape, 1.019x / 1.039x:
# bench/last_run/issue16-session19. Session 20 measured SPLIT CONSUMERS,
# 1.004-1.007x (removed), and the long-row stream kernel at two blocks an
# SM with chunks of 4096 (-DROW_STREAM_BLOCKS=2 -DROW_STREAM_CHUNK=4096, a
# knob written for it and removed), 1.23-1.63x: bench/last_run/issue16-session20.)
# A variant: NAME|gpuc's C flags (- none; env:VAR=VALUE: gpuc's environment
# when it emits instead)|an edit of the entries (- none, or
# @items(N) on the row entries)|nvcc flags for the generated code (- none)|
# PROGRAM:CASE:ARGS ... where ARGS is m=ROW_LENGTHS (at 2^28 elements) or
# n=LOG2_SIZES. The default runs every PROGRAM:CASE:ARGS of every variant.
# Order: default, variants, variants reversed, default; every result
# checked by its driver; one table, us (both runs), the best's share of the
# copy rate, best / default's best.
#
#   bench/try_variants.sh --prepare   here, after scripts/build.sh build, bench/gen.sh and
#                                     bench/run.sh --prepare (about 3 minutes a gpuc of its own)
#   bench/try_variants.sh [NAME ...]  on the GPU machine (scripts/device_pack.sh gen bin), about 2 minutes
# Files in $OUT (else a temp folder); exit 1 if a run failed or a result was wrong.
set -u
cd "$(dirname "$0")/.."
REC="scan:recurrence:n=26,28" I64="scan:incl_i64:n=26,28"
VARIANTS=(
  "off|env:GPUC_SCAN_WIDE=0|-|-|$REC $I64"
)
D=bench/bin/variants
B=bench/gen/bin
FLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo"
field() { echo "$1" | cut -d'|' -f"$2"; }

if [ "${1:-}" = "--prepare" ]; then
  rc=0
  for v in "${VARIANTS[@]}"; do
    n=$(field "$v" 1) cflags=$(field "$v" 2) edit=$(field "$v" 3) nflags=$(field "$v" 4)
    [ "$nflags" = - ] && nflags=
    mkdir -p $D/$n
    gpuc=build/driver/gpuc genv=
    if [ "${cflags#env:}" != "$cflags" ]; then
      genv=${cflags#env:}
    elif [ "$cflags" != - ]; then
      gpuc=/tmp/gpuc-variant-$n/driver/gpuc
      { cmake -S . -B /tmp/gpuc-variant-$n -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_FLAGS=$cflags" >/dev/null &&
        ninja -C /tmp/gpuc-variant-$n gpuc >/dev/null; } || { echo "try_variants: gpuc ($n) did not build" >&2; rc=1; continue; }
    fi
    for p in $(for r in $(field "$v" 5); do echo "${r%%:*}"; done | sort -u); do
      src=bench/programs/$p.gdsl
      if [ "$edit" != - ]; then
        sed -E "s/^(entry (row_softmax|layer_norm)\\(.*\\) -> f32\\[n\\]\\[m\\]) (\\{|@)/\\1 $edit \\3/" $src > $D/$n/$p.gdsl
        grep -qF "$edit" $D/$n/$p.gdsl || { echo "try_variants: no entry of $p took $edit" >&2; rc=1; }
        src=$D/$n/$p.gdsl
      fi
      env $genv $gpuc --emit=cuda $src -o $D/$n/$p.cu &&
        python3 tests/codegen/Inputs/launch_threads.py $D/$n/$p.cu &&
        nvcc $FLAGS -DGPUC_CUDA_HOST $nflags -include $D/$n/$p.cu -o $D/$n/bench_$p bench/gpuc/bench_$p.cu -lcublas ||
        { echo "try_variants: bench_$p ($n) did not build" >&2; rc=1; }
      rm -f $D/$n/$p.cu $D/$n/$p.gdsl
    done
    echo "try_variants: prepared $n"
  done
  exit $rc
fi

R=${OUT:-$(mktemp -d)}
mkdir -p "$R" || exit 1
rc=0
chosen=("$@")
runs_of() { # runs_of NAME: the variant's PROGRAM:CASE:ARGS, or every variant's for the default
  for v in "${VARIANTS[@]}"; do
    if [ "$1" = default ] || [ "$(field "$v" 1)" = "$1" ]; then field "$v" 5 | tr ' ' '\n'; fi
  done | sort -u
}
names=(default)
for v in "${VARIANTS[@]}"; do
  n=$(field "$v" 1)
  if [ ${#chosen[@]} = 0 ] || [[ " ${chosen[*]} " == *" $n "* ]]; then names+=("$n"); fi
done
order=("${names[@]}")
for ((i = ${#names[@]} - 1; i >= 0; i--)); do order+=("${names[$i]}"); done
timeout 30 $B/peers_cub --case copy --sizes 28 --out "$R/copy.jsonl" 2>>"$R/log.txt" || rc=1
for n in "${order[@]}"; do
  d=$D/$n; [ $n = default ] && d=$B
  for r in $(if [ $n = default ]; then for m in "${names[@]:1}"; do runs_of "$m"; done | sort -u; else runs_of "$n"; fi); do
    IFS=: read -r p c a <<<"$r"
    [ -x "$d/bench_$p" ] || { echo "try_variants: no $d/bench_$p (--prepare)" >&2; rc=1; continue; }
    if [ "${a%%=*}" = m ]; then
      for m in $(echo "${a#m=}" | tr , " "); do
        BENCH_ROW_LENGTH=$m timeout 60 "$d/bench_$p" --case "$c" --sizes 28 --out "$R/$n.jsonl" >/dev/null 2>>"$R/log.txt" ||
          { echo "try_variants: $n $c m=$m failed" >&2; rc=1; }
      done
    else
      timeout 90 "$d/bench_$p" --case "$c" --sizes "${a#n=}" --out "$R/$n.jsonl" >/dev/null 2>>"$R/log.txt" ||
        { echo "try_variants: $n $c failed" >&2; rc=1; }
    fi
  done
done
python3 - "$R" "${names[@]}" <<'PY' || rc=1
import json, os, sys
d, names = sys.argv[1], sys.argv[2:]
L = lambda f: [json.loads(l) for l in open(os.path.join(d, f))] if os.path.exists(os.path.join(d, f)) else []
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in L("copy.jsonl") if r["case"] == "copy"][0]
def bytes_of(case, dtype):  # bytes an element read and written: the recurrence a, b in, x out; 8-byte types twice 4-byte ones
    return 12 if case == "recurrence" else 16 if dtype in ("i64", "f64") else 8
print("copy rate %.1f GB/s; us (both runs), the best's share of the copy rate, best / default's best" % copy)
print("| variant | case | n | m | us | of the copy rate | / default | check |\n|---|---|---|---|---|---|---|---|")
groups, bad = {}, 0
for name in names:
    for r in L(name + ".jsonl"):
        groups.setdefault((r["case"], r["dtype"], r["n"], r.get("m") or 0), {}).setdefault(name, []).append(r)
for key in sorted(groups):
    case, dtype, n, m = key
    base = min(r["us"] for r in groups[key].get("default", [])) if "default" in groups[key] else None
    for name in names:
        rs = groups[key].get(name)
        if not rs: continue
        us = [r["us"] for r in rs]
        ok = all(r.get("check") == "ok" for r in rs)
        bad += not ok
        share = bytes_of(case, dtype) * n / min(us) / 1e3 / copy
        print("| %s | %s %s | %d | %s | %s | %.3f | %s | %s |" % (name, case, dtype, n, m or "-", " / ".join("%.1f" % u for u in us), share,
              "%.3f" % (min(us) / base) if base else "-", "ok" if ok else "WRONG"))
sys.exit(1 if bad else 0)
PY
exit $rc
