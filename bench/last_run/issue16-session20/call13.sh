#!/usr/bin/env bash
# Session 20, device call 13 (H200): call 12 again with nospin, the
# look-back reading each window of predecessors once and taking a word not
# yet published as a prefix (bench/exp/scan_wide_variants.py; timing only):
# is the look-back's cost its wait for predecessors or its loads?
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT; S=bench/bin/sv
timeout 30 $S/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for v in base nospin nolookback nolookback nospin base; do
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
for v in ("base", "nolookback", "nospin"):
    for r in map(json.loads, open("%s/%s.jsonl" % (d, v))):
        g.setdefault((r["case"], r["dtype"]), {}).setdefault(v, []).append(r)
print("| case | base us | nolookback us | nospin us | nolookback, nospin / base | check |")
for (c, t), vs in sorted(g.items()):
    b = [r["us"] for r in vs["base"]]; n = [r["us"] for r in vs["nolookback"]]; p = [r["us"] for r in vs["nospin"]]
    print("| %s %s | %s | %s | %s | %.3f, %.3f | %s |" % (c, t, " / ".join("%.1f" % u for u in b), " / ".join("%.1f" % u for u in n),
          " / ".join("%.1f" % u for u in p), min(n) / min(b), min(p) / min(b), ",".join(sorted(set(r["check"][:5] for rs in vs.values() for r in rs)))))
PY
