#!/usr/bin/env bash
# Session 21, device call 3 (H200): the i64 scans' look-back, windowR
# variants (bench/exp/scan_wide_variants.py: R * 32 predecessors' words
# loaded at once, the wait only for the words nearer than the nearest
# published prefix; correct values, each checked by the driver) against the
# kernel as generated (base) and without a look-back (timing only), at 2^26
# and 2^28, in turn forward and back. bench/bin/sv/bench_scan_V built here
# with nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -DGPUC_CUDA_HOST -include
# scan_V.cu bench/gpuc/bench_scan.cu -lcublas (main at fe86004's bench/gen).
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT; S=bench/bin/sv
timeout 30 $S/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for v in base window5 window3 window1 nolookback window1 window3 window5 base; do
  for c in incl_i64 excl_i64; do
    timeout 60 $S/bench_scan_$v --case $c --sizes 26,28 --out $R/$v.jsonl >/dev/null 2>>$R/bench.log || echo "$v $c exit $?"
  done
done
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in map(json.loads, open(d + "/copy.jsonl")) if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
V = ("base", "window5", "window3", "window1", "nolookback")
g = {}
for v in V:
    for r in map(json.loads, open("%s/%s.jsonl" % (d, v))):
        g.setdefault((r["case"], r["dtype"], r["n"]), {}).setdefault(v, []).append(r)
print("| case | n | " + " | ".join(V) + " | best / base (ratio to copy) | checks |")
for (c, t, n), vs in sorted(g.items()):
    b = min(r["us"] for r in vs["base"])
    cells = [" / ".join("%.1f" % r["us"] for r in vs.get(v, [])) for v in V]
    best = {v: min(r["us"] for r in vs[v]) for v in V if v in vs}
    ratios = ", ".join("%s %.3f (%.3f)" % (v, best[v] / b, 16 * n / best[v] / 1e3 / copy) for v in V if v in best and v != "base")
    print("| %s %s | 2^%d | %s | %s | %s |" % (c, t, n.bit_length() - 1, " | ".join(cells), ratios,
          ",".join(sorted(set(r["check"][:5] for rs in vs.values() for r in rs)))))
PY
