#!/usr/bin/env bash
# bench/try_hints.sh: issue 16's streaming cases, with and without L2 cache
# hints, in one device call (about a minute on an H100).
#
#   bench/try_hints.sh --prepare   on the build machine, after scripts/build.sh build
#                                  and bench/gen.sh: every binary into bench/bin/hints
#   bench/try_hints.sh             on the GPU machine (carry bench/bin and bench/gen)
#
# It runs bench/try_stream.cu (saxpy and the chain shaped as gpuc emits
# them, each load/store hint, vectors in flight and grid; every result
# checked) and the gpuc scan driver (bench/gpuc/bench_scan.cu, which checks
# every result against the host) for the 4-byte scans at 2^28, built four
# times with -DGPUC_SCAN_BULK_HINT=0..3 (backend/cuda/scan.c: none, L2
# evict_first on the bulk loads, on the bulk stores, on both), in the
# order 0 1 2 3 3 2 1 0 so that a drift of the card shows; the copy rate
# (peers_cub) before and after; then cross-entropy (bench_rows_nn, every row
# length at 2^28 elements) with and without ROW EARLY READS (rows.c), in the
# order 1 0 0 1. Files in $OUT (else a temp folder); the
# last lines are the tables.
set -u
cd "$(dirname "$0")/.."
B=bench/bin/hints
FLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo"
if [ "${1:-}" = "--prepare" ]; then
  mkdir -p $B
  nvcc $FLAGS -o $B/try_stream bench/try_stream.cu &
  nvcc $FLAGS -o $B/peers_cub bench/peers_cub.cu -lcublas &
  for e in 0 1; do
    nvcc $FLAGS -DGPUC_CUDA_HOST -DGPUC_ROW_EARLY_READS=$e -include bench/gen/rows_nn.cu \
      -o $B/bench_rows_nn_e$e bench/gpuc/bench_rows_nn.cu -lcublas &
  done
  for h in 0 1 2 3; do
    nvcc $FLAGS -DGPUC_CUDA_HOST -DGPUC_SCAN_BULK_HINT=$h -include bench/gen/scan.cu \
      -o $B/bench_scan_h$h bench/gpuc/bench_scan.cu -lcublas &
  done
  wait
  ls $B/try_stream $B/peers_cub $B/bench_scan_h{0,1,2,3} $B/bench_rows_nn_e{0,1} >/dev/null && echo "try_hints: prepared $B" && exit 0
  echo "try_hints: a build failed" >&2
  exit 1
fi
RES=${OUT:-$(mktemp -d)}
rc=0
$B/peers_cub --case copy --sizes 28 --out "$RES/hints.jsonl" 2>>"$RES/hints.log" || rc=1
$B/try_stream | tee "$RES/stream.md" || rc=1
for h in 0 1 2 3 3 2 1 0; do
  for c in incl_f32 incl_i32 excl_f32 excl_i32; do
    $B/bench_scan_h$h --sizes 28 --case $c --out "$RES/scan_h$h.jsonl" 2>>"$RES/hints.log" || rc=1
  done
done
for e in 1 0 0 1; do
  $B/bench_rows_nn_e$e --sizes 28 --case xent --out "$RES/xent_e$e.jsonl" 2>>"$RES/hints.log" || rc=1
done
$B/peers_cub --case copy --sizes 28 --out "$RES/hints.jsonl" 2>>"$RES/hints.log" || rc=1
python3 - "$RES" <<'EOF' | tee "$RES/scan.md"
import json, sys, glob, os, statistics
d = sys.argv[1]
copy = [json.loads(l) for l in open(os.path.join(d, "hints.jsonl")) if '"copy"' in l]
gbs = [2 * c["n"] * 4 / c["us"] / 1e3 for c in copy]
print("copy rate before / after: " + " / ".join("%.1f GB/s" % g for g in gbs))
rate = statistics.mean(gbs)
print("| scan 2^28 | hint 0 (none) | 1 (loads) | 2 (stores) | 3 (both) |\n|---|---|---|---|---|")
rows = {}
for h in range(4):
    for l in open(os.path.join(d, "scan_h%d.jsonl" % h)):
        r = json.loads(l)
        rows.setdefault((r["case"], r["dtype"]), {}).setdefault(h, []).append((r["us"], r["check"]))
for (c, t), v in sorted(rows.items()):
    cells = []
    for h in range(4):
        runs = v.get(h, [])
        bad = any(ch != "ok" for _, ch in runs)
        cells.append(" / ".join("%.1f (%.3f)" % (us, 2 * 2**28 * 4 / us / 1e3 / rate) for us, _ in runs) + (" WRONG" if bad else ""))
    print("| %s %s | %s |" % (c, t, " | ".join(cells)))
print("| xent rows of | early reads (default) | at the store (-DGPUC_ROW_EARLY_READS=0) |\n|---|---|---|")
xr = {}
for e in (1, 0):
    for l in open(os.path.join(d, "xent_e%d.jsonl" % e)):
        r = json.loads(l)
        xr.setdefault(r["m"], {}).setdefault(e, []).append((r["us"], r["check"]))
for m, v in sorted(xr.items()):
    print("| %d | %s |" % (m, " | ".join(" / ".join("%.1f%s" % (us, "" if ch == "ok" else " " + ch) for us, ch in v.get(e, [])) for e in (1, 0))))
EOF
echo "try_hints: $([ $rc = 0 ] && echo PASS || echo FAIL)"
exit $rc
