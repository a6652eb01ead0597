#!/usr/bin/env bash
# bench/try_streaming.sh: gpuc's streaming kernels against the ones they
# replaced (issue 16, ninth and tenth rounds of docs/performance.md): the
# scans (SCAN BULK 3 against mode 2 for 4-byte scans; SCAN BULK 3 WIDE,
# off by default and built here with -DGPUC_SCAN_WIDE=1, against emit_scan's
# kernel for i64 scans and the recurrence; the old ones built with
# -DGPUC_SCAN_BULK=2) at 2^10, 2^14, 2^20, 2^24 and 2^28 with
# CUB's in the same process, and row softmax /
# LayerNorm at rows of 262144 and 32768 (NAME_st against the
# clusters, -DGPUC_ROW_STREAM=0; 32768 takes neither: a control). Order new
# old old new; every result checked by its driver; one table of both
# figures, new / old, new / CUB and the share of the copy rate (CUB's copy
# before and after).
#
#   bench/try_streaming.sh --prepare   on the build machine, after scripts/build.sh build
#                                      and bench/gen.sh, bench/run.sh --prepare: bench/bin/old, bench/bin/wide
#   bench/try_streaming.sh             on the GPU machine (scripts/device_pack.sh gen bin), about 80 s
#
# Files in $OUT (else a temp folder); exit status 1 if a run failed or a
# result was wrong.
set -u
cd "$(dirname "$0")/.."
O=bench/bin/old
W=bench/bin/wide
B=bench/gen/bin
FLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo"
if [ "${1:-}" = "--prepare" ]; then
  mkdir -p $O $W
  nvcc $FLAGS -DGPUC_CUDA_HOST -DGPUC_SCAN_BULK=2 -include bench/gen/scan.cu -o $O/bench_scan bench/gpuc/bench_scan.cu -lcublas &
  nvcc $FLAGS -DGPUC_CUDA_HOST -DGPUC_SCAN_WIDE=1 -include bench/gen/scan.cu -o $W/bench_scan bench/gpuc/bench_scan.cu -lcublas &
  nvcc $FLAGS -DGPUC_CUDA_HOST -DGPUC_ROW_STREAM=0 -include bench/gen/rows.cu -o $O/bench_rows bench/gpuc/bench_rows.cu -lcublas &
  nvcc $FLAGS -DGPUC_CUDA_HOST -DGPUC_ROW_STREAM=0 -include bench/gen/rows_nn.cu -o $O/bench_rows_nn bench/gpuc/bench_rows_nn.cu -lcublas &
  wait
  ls $O/bench_scan $O/bench_rows $O/bench_rows_nn $W/bench_scan >/dev/null && echo "try_streaming: prepared $O and $W" && exit 0
  echo "try_streaming: a build failed" >&2
  exit 1
fi
R=${OUT:-$(mktemp -d)}
mkdir -p "$R" || exit 1
rc=0
timeout 60 $B/peers_cub --case copy --sizes 28 --out $R/cub.jsonl 2>>$R/log.txt || rc=1
for c in scan_incl scan_excl recurrence; do timeout 60 $B/peers_cub --case $c --sizes 10,14,20,24,28 --out $R/cub.jsonl 2>>$R/log.txt || rc=1; done
for v in new old old new; do
  d=$B; [ $v = old ] && d=$O
  for c in incl_i32 incl_f32 excl_i32 excl_f32 incl_i64 excl_i64 recurrence; do
    e=$d
    case $v:$c in new:*i64 | new:recurrence) e=$W ;; esac  # the wide kernel is off by default
    timeout 60 $e/bench_scan --case $c --sizes 10,14,20,24,28 --out $R/scan_$v.jsonl >/dev/null 2>>$R/log.txt || rc=1
  done
  for m in 262144 32768; do
    BENCH_ROW_LENGTH=$m timeout 60 $d/bench_rows --case row_softmax --sizes 28 --out $R/rows_$v.jsonl >/dev/null 2>>$R/log.txt || rc=1
    BENCH_ROW_LENGTH=$m timeout 60 $d/bench_rows_nn --case layer_norm --sizes 28 --out $R/rows_$v.jsonl >/dev/null 2>>$R/log.txt || rc=1
  done
done
timeout 60 $B/peers_cub --case copy --sizes 28 --out $R/cub.jsonl 2>>$R/log.txt || rc=1
python3 - "$R" <<'PY' | tee "$R/streaming.md"
import json, os, statistics, sys
d = sys.argv[1]
def load(f):
    p = os.path.join(d, f)
    return [json.loads(l) for l in open(p)] if os.path.exists(p) else []
cub = load("cub.jsonl")
rates = [2 * r["n"] * 4 / r["us"] / 1e3 for r in cub if r["case"] == "copy"]
print("copy rate before / after: " + " / ".join("%.1f GB/s" % g for g in rates))
copy = statistics.mean(rates) if rates else float("nan")
cubt = {(r["case"], r["dtype"], r["n"]): r["us"] for r in cub if r["case"] != "copy"}
rows, bad = {}, 0
def moved(case, dtype, n):  # bytes each case must move: its inputs read once, its output written once
    if case == "recurrence":
        return 12 * n  # a and b read, x written (f32)
    return 2 * n * (8 if dtype in ("i64", "f64") else 4)
for v in ("new", "old"):
    for f in ("scan_%s.jsonl" % v, "rows_%s.jsonl" % v):
        for r in load(f):
            bad += r["check"] != "ok"
            rows.setdefault((r["case"], r["dtype"], r["n"], r.get("m", 0)), {}).setdefault(v, []).append(r["us"])
print("| case | dtype | n | row | new us | old us | new / old | CUB us | new / CUB | new, of the copy rate |")
print("|---|---|---|---|---|---|---|---|---|---|")
for k, v in sorted(rows.items()):
    nw, od = v.get("new", []), v.get("old", [])
    a = min(nw) if nw else float("nan")
    o = min(od) if od else float("nan")
    c = cubt.get((k[0], k[1], k[2]))
    print("| %s | %s | %d | %s | %s | %s | %.3f | %s | %s | %.3f |" % (
        k[0], k[1], k[2], k[3] or "-", " / ".join("%.1f" % x for x in nw), " / ".join("%.1f" % x for x in od), a / o,
        "%.1f" % c if c else "-", "%.3f" % (a / c) if c else "-", moved(k[0], k[1], k[2]) / a / 1e3 / copy))
print("every result checked: %s" % ("ok" if bad == 0 else "%d WRONG" % bad))
sys.exit(1 if bad else 0)
PY
[ "${PIPESTATUS[0]}" = 0 ] || rc=1
exit $rc
