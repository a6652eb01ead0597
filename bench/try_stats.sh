#!/usr/bin/env bash
# bench/try_stats.sh: mean/variance (issue 16 item 3) alone, on the GPU
# machine, in about a minute: gpuc's mean_var, softmax_stats and logsumexp
# (bench/programs/stats.gdsl through the bench/gpuc drivers over bench/gen,
# each result checked against a host float64 reference by the driver), the
# f32 sum as the reference reduction, torch.var_mean eager and
# torch.compile (checked against torch's float64 var_mean), torch.sum, and
# the copy rate of the same run (CuPy memcpyAsync D2D of 1 GiB). All at 2^28
# f32. With ncu on the PATH, also each gpuc case's kernels alone (ncu
# gpu__time_duration, one call): the entry's time minus that is what the
# launcher adds (result copies, host arithmetic). Prints one table; exit 1
# if a result is wrong or a driver failed.
#
# On the build machine first: scripts/build.sh build && bench/gen.sh
#   bench/try_stats.sh [--no-compile]     (results in $OUT or /tmp/try_stats)
set -u
cd "$(dirname "$0")/.."
COMPILE=1
[ "${1:-}" = "--no-compile" ] && COMPILE=0
RES=${OUT:-/tmp/try_stats}
mkdir -p "$RES" bench/bin
rm -f "$RES/gpuc.jsonl" "$RES/py.jsonl" "$RES/ncu.csv" "$RES/log.txt"
FLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo"
rc=0
for p in stats reduce; do
  [ -f "bench/gen/$p.cu" ] || { echo "missing bench/gen/$p.cu: run bench/gen.sh on the build machine" >&2; exit 1; }
  nvcc $FLAGS -DGPUC_CUDA_HOST -include "bench/gen/$p.cu" -o "bench/bin/try_$p" "bench/gpuc/bench_$p.cu" \
    >"$RES/build_$p.log" 2>&1 || { echo "build failed: bench_$p" >&2; cat "$RES/build_$p.log" >&2; rc=1; } &
done
wait
run() {  # driver case
  timeout 120 "bench/bin/try_$1" --case "$2" --out "$RES/gpuc.jsonl" --sizes 28 2>>"$RES/log.txt" ||
    { echo "gpuc $1/$2 failed: exit $?" >&2; rc=1; }
}
run reduce sum_f32
run stats mean_var
run stats softmax_stats
run stats logsumexp
# the kernels alone: one call under ncu (--once), durations summed per case
if command -v ncu >/dev/null 2>&1; then
  for c in mean_var softmax_stats logsumexp; do
    timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
      bench/bin/try_stats --case "$c" --sizes 28 --once 2>>"$RES/log.txt" |
      sed -n 's/^/'"$c"',/p' >>"$RES/ncu.csv" || echo "ncu $c failed" >&2
  done
fi
COMPILE=$COMPILE timeout 150 python3 - "$RES/py.jsonl" <<'PY' 2>>"$RES/log.txt" || echo "torch peers failed: exit $?" >&2
import os, sys, time
sys.path.insert(0, "bench")
from peers_py import Bench
import torch
b = Bench(open(sys.argv[1], "w"))
b.torch = torch
n = 1 << 28
gen = torch.Generator(device="cuda")
gen.manual_seed(4321)
try:
    import cupy as cp
    b.cupy = cp
    src = cp.empty(n, dtype=cp.float32)
    dst = cp.empty_like(src)
    t = b.time_cupy(lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes, 3,
                                                         cp.cuda.get_current_stream().ptr))
    b.emit("cupy", "copy_ref", "-", 1 << 30, 0, t, GBps=round(2 * src.nbytes / (t[0] * 1e3), 1))
    del src, dst
    cp.get_default_memory_pool().free_all_blocks()
except Exception as e:  # noqa: BLE001
    print(f"try_stats: copy_ref through CuPy failed: {e!r}", file=sys.stderr)
x = torch.rand(n, device="cuda", generator=gen) * 8 - 4
v64, m64 = torch.var_mean(x.double(), correction=0)

def var_mean(x):
    v, m = torch.var_mean(x, correction=0)
    return m, v

def check(r):
    ok = abs(r[0].item() - m64.item()) <= 1e-5 * 4 and abs(r[1].item() - v64.item()) <= 1e-5 * v64.item()
    return "ok" if ok else f"WRONG ({r[0].item()}, {r[1].item()}) vs ({m64.item()}, {v64.item()})"

b.emit("torch", "mean_var", "f32", n, 0, b.time_torch(lambda: var_mean(x)), check(var_mean(x)))
b.emit("torch", "sum", "f32", n, 0, b.time_torch(lambda: torch.sum(x)))
if os.environ.get("COMPILE", "1") == "1":
    cf = torch.compile(var_mean, dynamic=False)
    t0 = time.time()
    r = cf(x)
    torch.cuda.synchronize()
    b.emit("torch_compile", "mean_var", "f32", n, 0, b.time_torch(lambda: cf(x)), check(r), compile_s=round(time.time() - t0, 2))
PY
python3 - "$RES" <<'PY' || rc=1
import csv, json, os, sys
d = sys.argv[1]
recs = []
for f in ("gpuc.jsonl", "py.jsonl"):
    p = os.path.join(d, f)
    if os.path.exists(p):
        recs += [json.loads(l) for l in open(p) if l.startswith("{")]
kernel_us = {}
p = os.path.join(d, "ncu.csv")
if os.path.exists(p):
    for row in csv.reader(open(p)):
        # case, then ncu's columns: ..., "Kernel Name", ..., "Metric Name", "Metric Unit", "Metric Value"
        # only the case's own kernels (not the driver's data generation)
        if len(row) > 4 and row[-3] == "gpu__time_duration.sum" and any(c.startswith(row[0]) for c in row[1:-3]):
            v = float(row[-1].replace(",", ""))
            kernel_us[row[0]] = kernel_us.get(row[0], 0.0) + (v / 1e3 if row[-2] == "nsecond" else v if row[-2] == "usecond" else v * 1e3)
copy = next((r["GBps"] for r in recs if r.get("case") == "copy_ref"), None)
def get(src, case):
    return next((r for r in recs if r["src"] == src and r["case"] == case), None)
def us(src, case):
    r = get(src, case)
    return r.get("us") if r else None
def ratio(u, n):
    return 4 * n / (u * 1e3) / copy if u and copy else None
f = lambda v, p=3: "-" if v is None else f"{v:.{p}f}"
print(f"copy rate: {copy} GB/s (cudaMemcpyAsync D2D, 1 GiB); 2^28 f32")
print("| case | gpuc us | gpuc kernels us (ncu) | torch us | torch.compile us | gpuc ratio to copy | torch ratio | compile ratio | gpuc / best torch | check |")
print("|---|---|---|---|---|---|---|---|---|---|")
bad = False
n = 1 << 28
for case, tcase in (("sum", "sum"), ("mean_var", "mean_var"), ("softmax_stats", None), ("logsumexp", None)):
    g = us("gpuc", case)
    t = us("torch", tcase) if tcase else None
    tc = us("torch_compile", tcase) if tcase else None
    peers = [u for u in (t, tc) if u]
    vs = g / min(peers) if g and peers else None
    rs = [r for r in recs if r["case"] == case or (tcase and r["case"] == tcase)]
    checks = ",".join(sorted({r.get("check", "?") for r in rs})) or "MISSING"
    bad = bad or any(r.get("check", "ok") != "ok" for r in rs) or g is None
    print(f"| {case} | {f(g, 1)} | {f(kernel_us.get(case), 1)} | {f(t, 1)} | {f(tc, 1)} | {f(ratio(g, n))} | {f(ratio(t, n))} | "
          f"{f(ratio(tc, n))} | {f(vs)} {'(ahead)' if vs and vs < 1 else '(BEHIND)' if vs else ''} | {checks} |")
print("RESULT:", "FAIL (a wrong or missing result)" if bad else "PASS (every result checked)")
sys.exit(1 if bad else 0)
PY
exit $rc
