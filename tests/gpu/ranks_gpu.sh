#!/usr/bin/env bash
# ranks_gpu.sh: `prog --ranks N` and processes as ranks on the CUDA backend
# (runner/rn_ranks.c, runner/rn_procs.c, docs/sharding.md), run from the
# repository root on the device machine after tests/gpu/prepare.sh filled
# .device/ here. Every tests/shard/*.gdsl below is built with gpuc -o
# (kernels for sm_90, the builds in parallel); every entry (maps, row
# reductions, reductions to scalars with tuples and non-builtin operators,
# inclusive and exclusive scans, non-commutative ones and a scan with a map
# after it, filters, the @tile product) runs on random inputs
#   - plainly on the GPU (--out P/),
#   - with --ranks N --backend=cuda, ranks as threads, N = 1 .. visible GPUs,
#   - as processes: --rank R --ranks N, N = 1 .. visible GPUs, meeting over
#     gpuc's TCP bootstrap on 127.0.0.1 (NCCL's unique id sent over it, then
#     ncclCommInitRank in each process),
# the entries' jobs 8 at a time (each a few process starts). Every .npy
# output must equal the plain run's (integers and bools exactly, floats
# within 1e-4 relative for f32, 1e-10 for f64: a sharded float reduction
# groups the terms differently); one Python run compares them all. Also
# `-r 3 -t` with ranks (a time a run). Entries gpuc refuses to shard (they
# read across shards) are listed, not failed; an entry the CUDA backend does
# not shard is a failure. libnccl: $GPUC_NCCL_LIBRARY, libnccl.so.2, or
# PyTorch's nvidia-nccl wheel. Ends with one table, the seconds taken and
# "ranks_gpu: PASS" or "ranks_gpu: FAIL". About 30 s on one H100.
set -uo pipefail
start=$(date +%s)
root=$(cd "$(dirname "$0")/../.." && pwd)
dev=$root/.device
# its own folder under $OUT (never $OUT itself: the caller's other files stay)
out=${OUT:-/tmp}/gpuc-ranks-gpu
rm -rf "$out" && mkdir -p "$out"
source "$root/tests/gpu/common.sh"
gpuc_tools a
arch=${GPUC_DEVICE_ARCH:-sm_90}
jobs=${RANKS_GPU_JOBS:-8}
find_nccl
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || gpus=1
# for a check of this script without a GPU: RANKS_GPU_BACKEND=c RANKS_GPU_MAX=2
backend=${RANKS_GPU_BACKEND:-cuda}
gpus=${RANKS_GPU_MAX:-$gpus}
export gpus out backend
files=(ranks filters maps reductions rows scans tuples)
for f in "${files[@]}"; do
  "$gpuc" "$root/tests/shard/$f.gdsl" --arch="$arch" -o "$out/$f" > "$out/$f.build.log" 2>&1 &
done
wait
echo "built in $(( $(date +%s) - start )) s"

# one job: FILE ENTRY SIZES PORT. Writes $out/FILE.ENTRY.cases, one line a
# case: "LABEL<TAB>RANKS<TAB>plain dir<TAB>sharded dir" to compare, or
# "LABEL<TAB>RANKS<TAB>!<TAB>why" for a run that failed or was refused.
job() {
  local f=$1 entry=$2 sizes=$3 port=$4 p=$out/$1 base=$out/$1.$2
  local cases=$base.cases
  : > "$cases"
  mkdir -p "$base.plain"
  if ! "$p" -e "$entry" --backend=$backend --random "$sizes" --seed 3 --out "$base.plain" \
      < /dev/null > "$base.plain.log" 2>&1; then
    printf 'plain\t-\t!\tplain run failed: %s\n' "$(tail -n 1 "$base.plain.log")" >> "$cases"; return
  fi
  local n r rc d
  for n in $(seq 1 "$gpus"); do
    d=$base.threads$n
    mkdir -p "$d"
    timeout 60 "$p" -e "$entry" --backend=$backend --ranks "$n" --random "$sizes" --seed 3 --out "$d" \
      < /dev/null > "$d.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] && grep -q 'cannot run sharded' "$d.log"; then
      printf 'refused\t-\t!\t%s\n' "$(tail -n 1 "$d.log" | sed 's/.*error: //')" >> "$cases"; return
    fi
    if [ $rc -ne 0 ]; then printf 'threads\t%s\t!\t%s\n' "$n" "$(tail -n 1 "$d.log")" >> "$cases"
    else printf 'threads\t%s\t%s\t%s\n' "$n" "$base.plain" "$d" >> "$cases"; fi
  done
  for n in $(seq 1 "$gpus"); do
    d=$base.procs$n
    mkdir -p "$d"
    local pids=()
    for r in $(seq 1 $((n - 1))); do
      GPUC_MASTER_ADDR=127.0.0.1 GPUC_MASTER_PORT=$port GPUC_BOOTSTRAP_TIMEOUT=30 timeout 60 "$p" -e "$entry" \
        --backend=$backend --random "$sizes" --seed 3 --rank "$r" --ranks "$n" --out "$d" < /dev/null > "$d.log$r" 2>&1 &
      pids+=($!)
    done
    GPUC_MASTER_ADDR=127.0.0.1 GPUC_MASTER_PORT=$port GPUC_BOOTSTRAP_TIMEOUT=30 timeout 60 "$p" -e "$entry" \
      --backend=$backend --random "$sizes" --seed 3 --rank 0 --ranks "$n" --out "$d" < /dev/null > "$d.log" 2>&1
    rc=$?
    for r in "${pids[@]}"; do wait "$r" || rc=1; done
    if [ $rc -ne 0 ]; then printf 'processes\t%s\t!\t%s\n' "$n" "$(cat "$d.log"* | tail -n 2 | tr '\n' ' ')" >> "$cases"
    else printf 'processes\t%s\t%s\t%s\n' "$n" "$base.plain" "$d" >> "$cases"; fi
  done
}
export -f job

# the jobs: every entry of every program; every size variable of the
# entry's types n = 1000 (a few uneven shards at 2+ ranks), the others 7
port=29600
for f in "${files[@]}"; do
  p=$out/$f
  if [ ! -x "$p" ]; then
    echo "$f: BUILD FAIL (see $out/$f.build.log)"; tail -n 5 "$out/$f.build.log"
    printf '%s\t-\t-\t-\n' "$f" >> "$out/build-failed"; continue
  fi
  while IFS=$'\t' read -r entry rest; do
    sizes=$(printf '%s\n' "$rest" | grep -o '\[[a-z_][a-z_0-9]*\]' | tr -d '[]' | grep -vx '_' | sort -u |
            awk '{ printf "%s%s=%d", (NR > 1 ? "," : ""), $1, ($1 == "n" ? 1000 : 7) }')
    [ -n "$sizes" ] || continue   # a function of scalars (a scan's operator): nothing to shard
    printf '%s %s %s %s\n' "$f" "$entry" "$sizes" "$port"
    port=$((port + 1))
  done < <("$p" --signatures)
done > "$out/jobs"
xargs -P "$jobs" -L 1 bash -c 'job "$@"' _ < "$out/jobs"

# timing with ranks: three runs, three times, the slowest rank's each
timing=FAIL
if "$out/ranks" -e stats --backend=$backend --ranks 1 --random n=16777216 -r 3 -t "$out/times.txt" < /dev/null > /dev/null 2>"$out/times.log" &&
   [ "$(wc -l < "$out/times.txt")" -eq 3 ]; then
  timing=PASS
  echo "timing: --ranks 1 -r 3 on 2^24 i64: $(tr '\n' ' ' < "$out/times.txt")us"
else
  echo "timing: FAIL $(cat "$out/times.log")"
fi

cat "$out"/*.cases > "$out/all.cases" 2>/dev/null
python3 - "$out/jobs" "$out/all.cases" "$timing" "$([ -f "$out/build-failed" ] && echo 1 || echo 0)" <<'PY'
import os, sys
import numpy as np

jobs = [line.split()[:2] for line in open(sys.argv[1])]
cases = [line.rstrip("\n").split("\t") for line in open(sys.argv[2]) if line.strip()]
timing_ok, build_failed = sys.argv[3] == "PASS", sys.argv[4] == "1"

def compare(a, b):
    bad = []
    names = sorted(os.listdir(a))
    if sorted(os.listdir(b)) != names:
        return "outputs %s vs %s" % (names, sorted(os.listdir(b)))
    for name in names:
        x, y = np.load(os.path.join(a, name)), np.load(os.path.join(b, name))
        if x.shape != y.shape or x.dtype != y.dtype:
            bad.append(f"{name}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}"); continue
        if x.dtype.kind == 'f':
            tol = 1e-4 if x.dtype == np.float32 else 1e-10
            ok = np.allclose(x, y, rtol=tol, atol=tol, equal_nan=True)
        else:
            ok = np.array_equal(x, y)
        if not ok:
            bad.append(f"{name}: differs (max abs {np.max(np.abs(x.astype(float) - y.astype(float)))})")
    return "; ".join(bad)

# the cases in job order (each job's file is read in that order)
by_entry = {}
for f, entry in jobs:
    path = os.path.join(os.path.dirname(sys.argv[1]), "%s.%s.cases" % (f, entry))
    by_entry[(f, entry)] = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()] if os.path.exists(path) else []
total = passed = refused = 0
fails = []
print("%-11s %-22s %-10s %-5s %s" % ("file", "entry", "as", "ranks", "result"))
for (f, entry), rows in by_entry.items():
    if not rows:
        fails.append((f, entry, "-", "-", "no result (the job did not run)"))
    for what, n, a, b in rows:
        if what == "refused":
            refused += 1
            print("%-11s %-22s %-10s %-5s %s" % (f, entry, "-", "-", "refused by gpuc: " + b))
            continue
        total += 1
        r = ("FAIL: " + b) if a == "!" else (lambda why: "PASS" if not why else "FAIL: " + why)(compare(a, b))
        if r == "PASS":
            passed += 1
        else:
            fails.append((f, entry, what, n, r))
        print("%-11s %-22s %-10s %-5s %s" % (f, entry, what, n, r))
print("cases: %d of %d equal to the plain run; %d entries refused (read across shards); timing %s"
      % (passed, total, refused, timing_ok and "PASS" or "FAIL"))
for x in fails[:10]:
    print("FAILED: %s %s %s %s: %s" % x)
ok = not fails and total > 0 and timing_ok and not build_failed
sys.exit(0 if ok else 1)
PY
status=$?
echo "seconds: $(( $(date +%s) - start ))"
[ $status -eq 0 ] && echo "ranks_gpu: PASS" || echo "ranks_gpu: FAIL"
exit $status
