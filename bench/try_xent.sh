#!/usr/bin/env bash
# bench/try_xent.sh: row cross-entropy (bench/programs/rows_nn.gdsl, xent)
# alone, on the GPU machine, in about 2 minutes: at rows of 256, 1024, 4096,
# 32768 and 262144 (2^28 f32 in all), gpuc as generated (one kernel: the
# online (max, sum) pair folded a group at a time, rows.c "ROW PAIR", and
# lse - A[i, t[i]] at the row's store, ir/fuse_rows.c per_row), the same
# with -DGPUC_ROW_PAIR_FOLD=0 (the pair folded per element), the same with
# -DGPUC_ROW_PAIR_BLOCKS=0 (no 64-register bound: 1 block of 512 an SM
# at rows of 32768, the regression of the first fused code), the two-kernel
# code of before when bench/gen/rows_nn_before.cu exists (made on the build
# machine by main's gpuc before the merge), row sums (the same bytes read,
# a plain sum: the read's limit), and torch eager / torch.compile
# (bench/peers_py.py --only rows; PEERS=0 leaves them out). Every gpuc
# result is checked against a float64 host reference by its driver. Prints
# one table; exit 1 if a result is wrong or a driver failed.
#
# On the build machine first: scripts/build.sh build && bench/gen.sh
#   bench/try_xent.sh            (results in $OUT or /tmp/try_xent)
set -u
cd "$(dirname "$0")/.."
RES=${OUT:-/tmp/try_xent}
mkdir -p "$RES" bench/bin
rm -f "$RES"/*.jsonl
FLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo"
rc=0
build() {  # name gen driver [-D...]
  nvcc $FLAGS -DGPUC_CUDA_HOST "${@:4}" -include "bench/gen/$2.cu" -o "bench/bin/xent_$1" "bench/gpuc/bench_$3.cu" >"$RES/build_$1.log" 2>&1 ||
    { echo "build failed: $1" >&2; cat "$RES/build_$1.log" >&2; rc=1; }
}
for p in rows rows_nn; do
  [ -f "bench/gen/$p.cu" ] || { echo "missing bench/gen/$p.cu: run bench/gen.sh on the build machine" >&2; exit 1; }
done
VARIANTS="new perelem unbounded row_sums"
build new rows_nn rows_nn &
build perelem rows_nn rows_nn -DGPUC_ROW_PAIR_FOLD=0 &
build unbounded rows_nn rows_nn -DGPUC_ROW_PAIR_BLOCKS=0 &
build row_sums rows rows &
if [ -f bench/gen/rows_nn_before.cu ]; then
  build before rows_nn_before rows_nn &
  VARIANTS="$VARIANTS before"
fi
wait
for v in $VARIANTS; do
  c=xent
  [ $v = row_sums ] && c=row_sums
  timeout 100 "bench/bin/xent_$v" --case $c --out "$RES/$v.jsonl" --sizes 28 2>>"$RES/log.txt" ||
    { echo "gpuc $v failed: exit $? ($(tail -1 "$RES/log.txt"))" >&2; rc=1; }
done
if [ "${PEERS:-1}" = 1 ]; then
  timeout 200 python3 bench/peers_py.py --only rows --out "$RES/py.jsonl" --sizes 28 2>>"$RES/log.txt" || echo "peers_py failed: exit $?" >&2
fi
python3 - "$RES" <<'PY' || rc=1
import json, os, sys
d = sys.argv[1]
def load(f):
    p = os.path.join(d, f)
    return [json.loads(l) for l in open(p) if l.startswith("{")] if os.path.exists(p) else []
cols = {"new": load("new.jsonl"), "perelem": load("perelem.jsonl"), "unbounded": load("unbounded.jsonl"), "before": load("before.jsonl"), "row_sums": load("row_sums.jsonl")}
py = load("py.jsonl")
copy = next((r["GBps"] for r in py if r.get("case") == "copy_ref"), None)
def get(recs, case, m, src=None):
    return next((r for r in recs if r["case"] == case and r.get("m") == m and (src is None or r.get("src") == src)), None)
ms = sorted({r["m"] for r in cols["new"]})
bad = not ms
print(f"copy rate: {copy} GB/s" if copy else "copy rate: -")
print("| m | gpuc us | pair per element us | no register bound us | before (2 kernels) us | row_sums us | torch us | torch.compile us | gpuc / best torch | gpuc ratio to copy | check |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
f = lambda r: "-" if r is None else f"{r['us']:.1f}"
for m in ms:
    n = {k: get(v, "row_sums" if k == "row_sums" else "xent", m) for k, v in cols.items()}
    t, tc = get(py, "xent", m, "torch"), get(py, "xent", m, "torch_compile")
    peers = [r["us"] for r in (t, tc) if r]
    g = n["new"]
    vs = g["us"] / min(peers) if peers else None
    ratio = (4 * g["n"] + 12 * (g["n"] // m)) / (g["us"] * 1e3) / copy if copy else None
    checks = ",".join(sorted({r.get("check", "?") for r in n.values() if r}))
    bad = bad or any(r.get("check", "ok") != "ok" for r in n.values() if r)
    vtxt = "-" if vs is None else f"{vs:.3f} ({'ahead' if vs < 1 else 'BEHIND'})"
    print(f"| {m} | {f(g)} | {f(n['perelem'])} | {f(n['unbounded'])} | {f(n['before'])} | {f(n['row_sums'])} | {f(t)} | {f(tc)} | {vtxt} | {'-' if ratio is None else f'{ratio:.3f}'} | {checks} |")
print("FAIL" if bad else "PASS: every gpuc result checked")
sys.exit(1 if bad else 0)
PY
exit $rc
