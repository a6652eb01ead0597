#!/usr/bin/env bash
# Session 20, device call 10 (H200): row softmax at rows of 262144 with ROW
# STREAM TAGS (bench/gen/bin/bench_rows, main's kernel now) against tags plus
# the variants that the release count had hidden: the post from registers
# (direct), a lag of 2, both, one exponential an element (reuse), and
# combinations (bench/exp/softmax_stream_variants.py over the tagged kernel),
# in turn forward and back, every result checked.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT; S=bench/bin/sv
V="tags direct lag2 direct_l2 reuse reuse_direct reuse_direct_l2"
timeout 30 $S/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for v in $V $(echo $V | tr ' ' '\n' | tac); do
  b=$S/bench_rows_$v; [ $v = tags ] && b=$S/bench_rows
  BENCH_ROW_LENGTH=262144 timeout 40 $b --case row_softmax --sizes 28 --out $R/sv_$v.jsonl >/dev/null 2>>$R/bench.log || echo "$v exit $?"
done
python3 - $R $V <<'PY'
import json, sys, os
d, names = sys.argv[1], sys.argv[2:]
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in map(json.loads, open(d + "/copy.jsonl")) if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
print("| variant | us (two runs) | of the copy rate | / tags | check |")
base = None
for v in names:
    f = "%s/sv_%s.jsonl" % (d, v)
    rs = [json.loads(l) for l in open(f)] if os.path.exists(f) else []
    if not rs: print("| %s | - | - | - | missing |" % v); continue
    us = [r["us"] for r in rs]
    base = base or min(us)
    print("| %s | %s | %.3f | %.3f | %s |" % (v, " / ".join("%.1f" % u for u in us), 2 * rs[0]["n"] * 4 / min(us) / 1e3 / copy, min(us) / base, ",".join(sorted(set(r["check"][:5] for r in rs)))))
PY
