#!/usr/bin/env bash
# Session 14, device call F (H200): the reductions at 2^24 and 2^28 with a
# balanced grid (bench/exp/reduce_grid_balanced.py: the same rounds of
# chunks, spread evenly, so the last round is not left to a few blocks)
# against the generated grid (one wave of resident blocks) and CUB, three
# rounds in turn, every result checked by the driver.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=/tmp/r; rm -rf $R; mkdir -p $R
B=bench/gen/bin
timeout 30 $B/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/log.txt
for i in 1 2 3; do
  for v in base balanced; do
    timeout 90 bench/bin/rh/bench_reduce_$v --sizes 24,28 --out $R/red_$v.jsonl >/dev/null 2>>$R/log.txt || echo "$v failed"
  done
  for c in sum max dot sumsq; do timeout 60 $B/peers_cub --case $c --sizes 24,28 --out $R/red_cub.jsonl >/dev/null 2>>$R/log.txt || echo "cub $c failed"; done
done
python3 - $R <<'PY'
import json, sys, os, statistics
d = sys.argv[1]
L = lambda f: [json.loads(l) for l in open(f)] if os.path.exists(f) else []
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in L(d + "/copy.jsonl") if r["case"] == "copy"][0]
print("copy rate %.1f GB/s; medians of three processes each" % copy)
by = {}
for v in ("base", "balanced", "cub"):
    for r in L(d + "/red_%s.jsonl" % v):
        if r["case"] in ("sum", "max", "dot", "sumsq"):
            by.setdefault((r["case"], r["dtype"], r["n"]), {}).setdefault(v, []).append(r)
print("| case | n | base us | balanced us | CUB us | base / CUB | balanced / CUB | balanced / base | checks |\n|---|---|---|---|---|---|---|---|---|")
for key in sorted(by):
    g = by[key]
    med = {v: statistics.median(r["us"] for r in g[v]) for v in g}
    runs = lambda v: " / ".join("%.1f" % r["us"] for r in g.get(v, []))
    chk = ",".join(sorted(set(str(r.get("check")) for v in ("base", "balanced") for r in g.get(v, []))))
    f = lambda a, b: "%.4f" % (med[a] / med[b]) if a in med and b in med else "-"
    print("| %s %s | 2^%d | %s | %s | %s | %s | %s | %s | %s |" % (key[0], key[1], key[2].bit_length() - 1, runs("base"), runs("balanced"), runs("cub"),
          f("base", "cub"), f("balanced", "cub"), f("balanced", "base"), chk))
PY
(cd $R && tar czf $OUT/r.tgz *.jsonl log.txt) 2>/dev/null
