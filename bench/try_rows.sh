#!/usr/bin/env bash
# bench/try_rows.sh: the row cases of issue 16 alone, on the GPU machine, in
# about 2-3 minutes: row softmax at rows of 256, 1024, 4096, 32768 and
# 262144 (2^28 f32 in all), row LayerNorm, row cross-entropy, mean/variance
# and the chain (2^28), for gpuc (bench/gpuc drivers over bench/gen) and
# torch eager / torch.compile (bench/peers_py.py --only rows); every gpuc
# result checked against a host float64 reference by its driver. Prints one
# table: medians in us, ratio to the copy rate (a cudaMemcpyAsync
# device-to-device of 1 GiB through CuPy, same run), gpuc's time over the
# best torch's, and gpuc without clusters (rows longer than a block's
# registers in one block, -DGPUC_ROW_CLUSTER=0). Then a second table, the
# sweep of variants (row softmax and LayerNorm, each built with -D options
# of the generated code; the row lengths each is built for are in VARIANTS
# below): the default (clusters of 8, the stash filled by a bulk copy), no
# clusters (rows of 32768), the big block (rows of 32768 in the registers
# of one 1024-thread block, -DGPUC_ROW_BIG_BLOCK=1), clusters of 4 blocks,
# of 16 (rows of 262144 only: at 32768 it lost clearly, 0.465 / 0.492 of
# the copy rate in bench/last_run/issue16-session3/rows.txt), every kernel
# forced to one cluster (block) a row (-DGPUC_ROW_PERSIST=0), to a
# persistent grid (=1), and to a persistent grid that also loads the next
# row while it writes this one (=2), against each kernel's default
# (GPUC_ROW_PERSIST_<kernel>, gpuc's: 2 for the clusters and LayerNorm's big
# block, 0 for softmax's big block); LayerNorm's weight and bias read as
# scalars (cv0, -DGPUC_ROW_COL_VECTORS=0), phase 2 taking the stash 2 or 4
# vectors a lane at a time (pv2, pv4) and the register-only kernels bounded
# to 4 blocks an SM (rb4, rows of 256..4096), and softmax taking its
# exponential twice an element (er0, rows of 256..32768). Before the timings,
# bench/try_rows_edges.cu checks every element
# at the long-row kernels' edges with GPUC_ROW_PERSIST 0 and 2. Exit 1 if a
# result is wrong or a driver failed.
#
# On the build machine first: scripts/build.sh build && bench/gen.sh
#   bench/try_rows.sh [--no-compile]      (results in $OUT or /tmp/try_rows)
set -u
cd "$(dirname "$0")/.."
COMPILE=1
[ "${1:-}" = "--no-compile" ] && COMPILE=0
RES=${OUT:-/tmp/try_rows}
mkdir -p "$RES" bench/bin
rm -f "$RES/gpuc.jsonl" "$RES/py.jsonl"
FLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo"
rc=0
for p in rows rows_nn stats elementwise; do
  [ -f "bench/gen/$p.cu" ] || { echo "missing bench/gen/$p.cu: run bench/gen.sh on the build machine" >&2; exit 1; }
  nvcc $FLAGS -DGPUC_CUDA_HOST -include "bench/gen/$p.cu" -o "bench/bin/try_$p" "bench/gpuc/bench_$p.cu" \
    >"$RES/build_$p.log" 2>&1 || { echo "build failed: bench_$p" >&2; cat "$RES/build_$p.log" >&2; rc=1; } &
done
# the row kernels without clusters (-DGPUC_ROW_CLUSTER=0: rows longer than a
# block's registers in one block with the stash, as before), for the column
# "no cluster us" at the long rows
for p in rows rows_nn; do
  nvcc $FLAGS -DGPUC_CUDA_HOST -DGPUC_ROW_CLUSTER=0 -include "bench/gen/$p.cu" -o "bench/bin/try_${p}_nocl" "bench/gpuc/bench_$p.cu" \
    >"$RES/build_${p}_nocl.log" 2>&1 || { echo "build failed: bench_$p (no cluster)" >&2; cat "$RES/build_${p}_nocl.log" >&2; rc=1; } &
done
# the sweep's variants (name:row lengths:-D options); rows and rows_nn each;
# cv0: the post's reads at the column as scalars (rows.c, "ROW COL VECTORS");
# pvN: phase 2 takes the stash N vectors a lane at a time; rbN: the
# register-only kernels bounded to N blocks an SM; er0: softmax's post
# takes exp(x - max) again (rows.c, "ROW EXP REUSE")
VARIANTS=("big:32768:-DGPUC_ROW_BIG_BLOCK=1" "c4:32768,262144:-DGPUC_ROW_CLUSTER_BLOCKS=4" "c16:262144:-DGPUC_ROW_CLUSTER_BLOCKS=16"
          "ps0:32768,262144:-DGPUC_ROW_PERSIST=0" "ps1:32768,262144:-DGPUC_ROW_PERSIST=1" "ps2:32768,262144:-DGPUC_ROW_PERSIST=2"
          "cv0:4096,262144:-DGPUC_ROW_COL_VECTORS=0" "pv2:262144:-DGPUC_ROW_POST_VECTORS=2" "pv4:262144:-DGPUC_ROW_POST_VECTORS=4"
          "rb4:256,1024,4096:-DGPUC_ROW_REGS_BLOCKS=4" "er0:256,1024,4096,32768:-DGPUC_ROW_EXP_REUSE=0")
# the edges of the long-row kernels with each GPUC_ROW_PERSIST, every element checked (bench/try_rows_edges.cu)
for ps in 0 2; do
  for p in rows rows_nn; do
    nvcc $FLAGS -DGPUC_CUDA_HOST -DGPUC_ROW_PERSIST=$ps $([ $p = rows_nn ] && echo -DEDGE_LN) -include "bench/gen/$p.cu" -o "bench/bin/edges_${p}_ps$ps" bench/try_rows_edges.cu \
      >"$RES/build_edges_${p}_ps$ps.log" 2>&1 || { echo "build failed: edges $p ps$ps" >&2; cat "$RES/build_edges_${p}_ps$ps.log" >&2; rc=1; } &
  done
done
for v in "${VARIANTS[@]}"; do
  for p in rows rows_nn; do
    nvcc $FLAGS -DGPUC_CUDA_HOST ${v#*:*:} -include "bench/gen/$p.cu" -o "bench/bin/try_${p}_${v%%:*}" "bench/gpuc/bench_$p.cu" \
      >"$RES/build_${p}_${v%%:*}.log" 2>&1 || { echo "build failed: bench_$p (${v%%:*})" >&2; cat "$RES/build_${p}_${v%%:*}.log" >&2; rc=1; } &
  done
done
wait
rm -f "$RES/nocl.jsonl" "$RES"/sweep_*.jsonl
run() {  # driver case [jsonl]
  timeout 150 "bench/bin/try_$1" --case "$2" --out "$RES/${3:-gpuc.jsonl}" --sizes 28 2>>"$RES/log.txt" ||
    { echo "gpuc $1/$2 failed: exit $? ($(tail -1 "$RES/log.txt"))" >&2; rc=1; }
}
# gpuc first, then the peers (torch.compile compiles each function once)
PYARGS=(--only rows --out "$RES/py.jsonl" --sizes 28)
[ $COMPILE = 0 ] && PYARGS+=(--no-compile)
for ps in 0 2; do
  for p in rows rows_nn; do
    echo "edges, $p, -DGPUC_ROW_PERSIST=$ps:"
    timeout 120 "bench/bin/edges_${p}_ps$ps" || { echo "edges $p ps$ps failed: exit $?" >&2; rc=1; }
  done
done
run rows row_softmax
run rows_nn layer_norm
run rows_nn xent
run stats mean_var
run elementwise chain
# the sweep: long rows only (BENCH_ROW_LENGTH), into sweep_VARIANT.jsonl
sweep() {  # driver case variant m
  BENCH_ROW_LENGTH=$4 timeout 60 "bench/bin/try_$1" --case "$2" --out "$RES/sweep_$3.jsonl" --sizes 28 2>>"$RES/log.txt" ||
    { echo "gpuc $1/$2 ($3, rows of $4) failed: exit $? ($(tail -1 "$RES/log.txt"))" >&2; rc=1; }
}
for m in 256 1024 4096 32768 262144; do
  # no clusters: only the long rows differ (shorter ones take the same
  # kernels); at 262144 it lost clearly (0.566, bench/last_run/issue16-session3)
  if [ $m = 32768 ]; then
    BENCH_ROW_LENGTH=$m run rows_nocl row_softmax nocl.jsonl
    BENCH_ROW_LENGTH=$m run rows_nn_nocl layer_norm nocl.jsonl
  fi
  for v in "${VARIANTS[@]}"; do
    lengths=${v#*:}
    case ",${lengths%%:*}," in *",$m,"*) ;; *) continue ;; esac
    sweep "rows_${v%%:*}" row_softmax "${v%%:*}" $m
    sweep "rows_nn_${v%%:*}" layer_norm "${v%%:*}" $m
  done
done
timeout 240 python3 bench/peers_py.py "${PYARGS[@]}" 2>>"$RES/log.txt" || { echo "peers_py failed: exit $?" >&2; }
python3 - "$RES" <<'PY' || rc=1
import json, sys, os
d = sys.argv[1]
recs = []
for f in ("gpuc.jsonl", "py.jsonl"):
    p = os.path.join(d, f)
    if os.path.exists(p):
        recs += [json.loads(l) for l in open(p) if l.startswith("{")]
copy = next((r["GBps"] for r in recs if r.get("case") == "copy_ref"), None)
p = os.path.join(d, "nocl.jsonl")
nocl = [json.loads(l) for l in open(p) if l.startswith("{")] if os.path.exists(p) else []
def nbytes(case, n, m):
    if case in ("row_softmax", "layer_norm"): return 8 * n
    if case == "xent": return 4 * n + 12 * (n // m)
    if case == "mean_var": return 4 * n
    if case == "chain": return 12 * n
targets = {"row_softmax": lambda m: 0.95 if m <= 4096 else 0.90}
keys = []
for r in recs:
    k = (r["case"], r.get("m", 0))
    if r["case"] != "copy_ref" and k not in keys: keys.append(k)
print(f"copy rate: {copy} GB/s (cudaMemcpyAsync D2D, 1 GiB)")
print("| case | m | gpuc us | no cluster us | torch us | torch.compile us | gpuc ratio to copy | torch ratio | compile ratio | gpuc / best torch | target | check |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
bad = False
for case, m in keys:
    g = {r["src"]: r for r in recs if r["case"] == case and r.get("m", 0) == m}
    n = next(iter(g.values()))["n"]
    def us(s): return g[s].get("us") if s in g else None
    def ratio(s):
        u = us(s)
        return nbytes(case, n, m) / (u * 1e3) / copy if u and copy else None
    f = lambda v, p=3: "-" if v is None else f"{v:.{p}f}"
    peers = [u for u in (us("torch"), us("torch_compile")) if u]
    vs = us("gpuc") / min(peers) if us("gpuc") and peers else None
    t = targets.get(case)
    tgt = "-"
    if t and ratio("gpuc") is not None:
        tgt = f">= {t(m):.2f}: {'met' if ratio('gpuc') >= t(m) else 'MISSED'}"
    nc = [r for r in nocl if r["case"] == case and r.get("m", 0) == m]
    checks = ",".join(sorted({r.get("check", "?") for r in list(g.values()) + nc}))
    bad = bad or any(r.get("check", "ok") != "ok" for r in list(g.values()) + nc)
    print(f"| {case} | {m or '-'} | {f(us('gpuc'), 1)} | {f(nc[0].get('us') if nc else None, 1)} | {f(us('torch'), 1)} | {f(us('torch_compile'), 1)} | {f(ratio('gpuc'))} | "
          f"{f(ratio('torch'))} | {f(ratio('torch_compile'))} | {f(vs)} {'(ahead)' if vs and vs < 1 else '(BEHIND)' if vs else ''} | {tgt} | {checks} |")
# the sweep of the long-row variants: us (ratio to the copy rate)
vnames = ["default", "nocl", "big", "c4", "c16", "ps0", "ps1", "ps2", "cv0", "pv2", "pv4", "rb4", "er0"]
sw = {"default": [r for r in recs if r.get("src") == "gpuc"], "nocl": nocl}
for v in vnames[2:]:
    p = os.path.join(d, f"sweep_{v}.jsonl")
    sw[v] = [json.loads(l) for l in open(p) if l.startswith("{")] if os.path.exists(p) else []
print()
print("sweep, long rows: us (ratio to copy); default = as gpuc writes it (clusters of 8 + bulk-copied stash, each kernel's GPUC_ROW_PERSIST_<kernel>), nocl = -DGPUC_ROW_CLUSTER=0,")
print("big = -DGPUC_ROW_BIG_BLOCK=1 (the row in the registers of one 1024-thread block), cN = -DGPUC_ROW_CLUSTER_BLOCKS=N,")
print("psN = -DGPUC_ROW_PERSIST=N, every kernel forced (0: one cluster / big block a row; 1: a persistent grid of the resident clusters / big blocks; 2: and the next row loaded while this one is written),")
print("cv0 = -DGPUC_ROW_COL_VECTORS=0 (LayerNorm's weight and bias read as scalars; softmax reads no such array),")
print("pvN = -DGPUC_ROW_POST_VECTORS=N (phase 2 reads N stash vectors a lane at a time, and LayerNorm their weight and bias vectors before computing them),")
print("rbN = -DGPUC_ROW_REGS_BLOCKS=N (the register-only kernels of rows up to 8192 bounded to N blocks of 256 an SM: 4 spills 320 bytes, ptxas sm_90),")
print("er0 = -DGPUC_ROW_EXP_REUSE=0 (softmax's post takes exp(x - max) again where the block holds the row in registers; LayerNorm has no such exponential)")
print("| case | m | " + " | ".join(vnames) + " | best | check |")
print("|---|---|" + "---|" * len(vnames) + "---|---|")
for case in ("row_softmax", "layer_norm"):
    for m in (256, 1024, 4096, 32768, 262144):
        cells, best, checks = [], None, set()
        for v in vnames:
            r = next((r for r in sw[v] if r["case"] == case and r.get("m", 0) == m), None)
            if r is None:
                cells.append("-")
                continue
            checks.add(r.get("check", "?"))
            bad = bad or r.get("check", "ok") != "ok"
            u = r.get("us")
            ratio = nbytes(case, r["n"], m) / (u * 1e3) / copy if u and copy else None
            cells.append(f"{u:.1f} ({ratio:.3f})" if ratio else f"{u}")
            if r.get("check") == "ok" and (best is None or u < best[1]):
                best = (v, u)
        print(f"| {case} | {m} | " + " | ".join(cells) + f" | {best[0] if best else '-'} | {','.join(sorted(checks)) or '-'} |")
print("RESULT:", "FAIL (a wrong result)" if bad else "PASS (every result checked)")
sys.exit(1 if bad else 0)
PY
exit $rc
