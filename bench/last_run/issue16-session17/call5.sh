#!/usr/bin/env bash
# Session 17, device call 5 (H200): where the recurrence's and the i64
# scan's register kernel (emit_scan, 128 threads) wait, line by line: ncu's
# warp-stall samples per CUDA source line (SourceCounters, with the
# generated source imported), one launch each at 2^28, then the 25 lines
# with the most samples and the share of each barrier and of the look-back.
set -u
bash scripts/device_unpack.sh >/dev/null || exit 1
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
for k in recurrence incl_i64; do
  timeout 120 ncu --clock-control none --section WarpStateStats --section SourceCounters --import-source yes \
    -k "regex:${k}_k0_scan\$" -c 1 -o $OUT/$k bench/gen/bin/bench_scan --case $k --sizes 28 --once > $OUT/$k.log 2>&1
  echo "$k: ncu exit $?"
  ncu --import $OUT/$k.ncu-rep --page source --print-source cuda --csv > $OUT/${k}_cuda.csv 2> $OUT/${k}_cuda.err
  echo "$k: source page exit $? ($(wc -l < $OUT/${k}_cuda.csv) lines)"
done
python3 - <<'PY'
import csv, os
out = os.environ["OUT"]
for k in ("recurrence", "incl_i64"):
    p = f"{out}/{k}_cuda.csv"
    try:
        rows = list(csv.DictReader(open(p)))
    except Exception as e:
        print(k, "no csv:", e); continue
    if not rows:
        print(k, "empty csv"); continue
    cols = list(rows[0].keys())
    scol = next((c for c in cols if "Warp Stall Sampling (All" in c), None) or next((c for c in cols if "Sampling" in c), None)
    src = next((c for c in cols if c.strip().lower() == "source"), cols[1])
    line = next((c for c in cols if c.strip() in ("#", "Line", "# Line")), cols[0])
    print(f"== {k}: columns {cols[:8]} ... sample column {scol!r}")
    def num(x):
        try: return float(str(x).replace(",", ""))
        except: return 0.0
    tot = sum(num(r[scol]) for r in rows)
    top = sorted(rows, key=lambda r: -num(r[scol]))[:25]
    for r in top:
        print(f"{num(r[scol]) / tot * 100:5.1f}%  {r[line]:>6}  {r[src].strip()[:110]}")
PY
