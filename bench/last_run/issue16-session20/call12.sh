#!/usr/bin/env bash
# Session 20, device call 12 (H200): what the wide scans' look-back costs,
# the question that found row softmax's lost 5% (call 7): the i64 inclusive
# scan and the recurrence at 2^28 as generated (bench/gen/bin/bench_scan) and
# with the look-back warps skipping the predecessors' words
# (bench/exp/scan_wide_variants.py nolookback; timing only, wrong values),
# in turn forward and back.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT; S=bench/bin/sv
timeout 30 $S/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for v in base nolookback nolookback base; do
  b=$S/bench_scan_$v; [ $v = base ] && b=$S/bench_scan
  for c in incl_i64 recurrence; do
    timeout 60 $b --case $c --sizes 28 --out $R/$v.jsonl >/dev/null 2>>$R/bench.log || echo "$v $c exit $?"
  done
done
python3 - $R <<'PY'
import json, sys
d = sys.argv[1]
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in map(json.loads, open(d + "/copy.jsonl")) if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
g = {}
for v in ("base", "nolookback"):
    for r in map(json.loads, open("%s/%s.jsonl" % (d, v))):
        g.setdefault((r["case"], r["dtype"]), {}).setdefault(v, []).append(r)
print("| case | base us | nolookback us | nolookback, of the copy rate | / base | check |")
for (c, t), vs in sorted(g.items()):
    bpe = 12 if c == "recurrence" else 16
    b = [r["us"] for r in vs["base"]]; n = [r["us"] for r in vs["nolookback"]]
    print("| %s %s | %s | %s | %.3f (base %.3f) | %.3f | %s |" % (c, t, " / ".join("%.1f" % u for u in b), " / ".join("%.1f" % u for u in n),
          bpe * vs["base"][0]["n"] / min(n) / 1e3 / copy, bpe * vs["base"][0]["n"] / min(b) / 1e3 / copy, min(n) / min(b),
          ",".join(sorted(set(r["check"][:5] for rs in vs.values() for r in rs)))))
PY
