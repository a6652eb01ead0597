#!/usr/bin/env bash
# Session 17, device call 4 (H200): the small sizes of call 2's one miss, the
# sum of squares (and the sum, for comparison) at 2^10..2^20, gpuc against
# CUB, five rounds in turn, each a fresh process as in bench/run.sh's small
# part: is pass 3's 1.22x noise?
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
B=bench/gen/bin
S=10,12,14,16,18,20
for round in 1 2 3 4 5; do
  for c in sumsq sum; do
    timeout 60 $B/peers_cub --case $c --sizes $S --out $OUT/r$round.jsonl > /dev/null
    timeout 60 $B/bench_reduce --case ${c}_f32 --sizes $S --out $OUT/r$round.jsonl > /dev/null
  done
done
python3 - <<'PY'
import json, os
out = os.environ["OUT"]
for r in range(1, 6):
    recs = [json.loads(l) for l in open(f"{out}/r{r}.jsonl")]
    for case in ("sumsq", "sum"):
        line = []
        for n in (1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20):
            g = [x for x in recs if x["src"] == "gpuc" and x["case"] == case and x["dtype"] == "f32" and x["n"] == n]
            c = [x for x in recs if x["src"] == "cub" and x["case"] == case and x["dtype"] == "f32" and x["n"] == n]
            if g and c:
                line.append(f"{g[0]['us'] / c[0]['us']:.2f} ({g[0]['us']:.2f}[{g[0]['us_min']:.2f}]/{c[0]['us']:.2f}[{c[0]['us_min']:.2f}])")
        print(f"round {r} {case}: " + "  ".join(line))
PY
