#!/usr/bin/env bash
# Session 20, device call 7 (H200): row softmax at rows of 262144, timing
# only (wrong values) for all but the generated kernels: where does the
# stream kernel's time go when nothing waits on other blocks? local: the
# publisher hands each chunk its own pair through shared memory (no global
# exchange); nowork: the consumers do nothing; local_nowork: the bare ring
# and barriers. The same four with the ring of the 4-byte scan (6 slots, a
# lag of 2: gpuc built with -DROW_STREAM_SLOTS=6 -DROW_STREAM_LAG=2), which
# reaches 0.96 in the scan. bench/exp/softmax_stream_variants.py made them.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
R=$OUT; S=bench/bin/sv
V="base local nowork local_nowork s6l2_base s6l2_local s6l2_nowork s6l2_local_nowork"
timeout 30 bench/gen/bin/peers_cub --case copy --sizes 28 --out $R/copy.jsonl 2>>$R/bench.log
for v in $V $(echo $V | tr ' ' '\n' | tac); do
  b=$S/bench_rows_$v; [ $v = base ] && b=bench/gen/bin/bench_rows
  [ $v = nowork ] && continue
  BENCH_ROW_LENGTH=262144 timeout 40 $b --case row_softmax --sizes 28 --out $R/sv_$v.jsonl >/dev/null 2>>$R/bench.log || echo "$v exit $?"
done
python3 - $R $V <<'PY'
import json, sys, os
d, names = sys.argv[1], sys.argv[2:]
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in map(json.loads, open(d + "/copy.jsonl")) if r["case"] == "copy"][0]
print("copy %.1f GB/s" % copy)
print("| variant | us (two runs) | of the copy rate | / base | check |")
base = None
for v in names:
    f = "%s/sv_%s.jsonl" % (d, v)
    rs = [json.loads(l) for l in open(f)] if os.path.exists(f) else []
    if not rs: print("| %s | - | - | - | missing |" % v); continue
    us = [r["us"] for r in rs]
    base = base or min(us)
    print("| %s | %s | %.3f | %.3f | %s |" % (v, " / ".join("%.1f" % u for u in us), 2 * rs[0]["n"] * 4 / min(us) / 1e3 / copy, min(us) / base, ",".join(sorted(set(r["check"][:5] for r in rs)))))
PY
