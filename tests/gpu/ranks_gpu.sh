#!/usr/bin/env bash
# ranks_gpu.sh: `prog --ranks N` on the CUDA backend (runner/rn_ranks.c,
# docs/sharding.md), run from the repository root on the device machine
# after tests/gpu/prepare.sh filled .device/ here. Every tests/shard/*.gdsl
# below is built with gpuc -o (kernels for sm_90); every entry the CUDA
# backend shards runs on random inputs plainly on the GPU (--out A/) and with
# --ranks N --backend=cuda (--out B/), for N = 1 and every N up to the visible
# GPUs; the .npy outputs must agree (integers and bools exactly, floats
# within 1e-4 relative for f32, 1e-10 for f64: a sharded float reduction
# groups the terms differently). Also `-r 3 -t` with ranks (a time a run).
# Then processes as ranks: --rank R --ranks N over a TCP bootstrap on 127.0.0.1.
# libnccl: $GPUC_NCCL_LIBRARY, libnccl.so.2, or PyTorch's nvidia-nccl wheel.
# Ends with one table and "ranks_gpu: PASS" or "ranks_gpu: FAIL".
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dev=$root/.device
out=${OUT:-/tmp/gpuc-ranks-gpu}
rm -rf "$out" && mkdir -p "$out"
gpuc=$dev/prefix/bin/gpuc
[ -x "$gpuc" ] || gpuc=$root/build/driver/gpuc
arch=${GPUC_DEVICE_ARCH:-sm_90}
if [ -z "${GPUC_NCCL_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2 '; then
  w=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
  [ -n "$w" ] && [ -f "$w" ] && export GPUC_NCCL_LIBRARY=$w
fi
echo "libnccl: ${GPUC_NCCL_LIBRARY:-libnccl.so.2 from the loader path}"
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || gpus=1
files=(ranks filters maps reductions rows scans tuples)
for f in "${files[@]}"; do
  "$gpuc" "$root/tests/shard/$f.gdsl" --arch="$arch" -o "$out/$f" > "$out/$f.build.log" 2>&1 &
done
wait
compare() {   # compare DIR_A DIR_B: every .npy of A equal to B's
  python3 - "$1" "$2" <<'PY'
import sys, os, numpy as np
a, b = sys.argv[1], sys.argv[2]
bad = []
for name in sorted(os.listdir(a)):
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
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
}
status=0 total=0 passed=0
printf '%-12s %-20s %-6s %s\n' file entry ranks result
for f in "${files[@]}"; do
  p=$out/$f
  if [ ! -x "$p" ]; then
    printf '%-12s %-20s %-6s %s\n' "$f" - - "BUILD FAIL (see $out/$f.build.log)"; tail -n 5 "$out/$f.build.log"; status=1; continue
  fi
  while IFS=$'\t' read -r entry rest; do
    # every size variable of the entry's types: n=1000, the others 7 (stdin: none)
    sizes=$(printf '%s\n' "$rest" | grep -o '\[[a-z_][a-z_0-9]*\]' | tr -d '[]' | grep -vx '_' | sort -u |
            awk '{ printf "%s%s=%d", (NR > 1 ? "," : ""), $1, ($1 == "n" ? 1000 : 7) }')
    mkdir -p "$out/$f.$entry.plain"
    if ! "$p" -e "$entry" --backend=cuda --random "$sizes" --seed 3 --out "$out/$f.$entry.plain" \
        < /dev/null > "$out/$f.$entry.plain.log" 2>&1; then
      printf '%-12s %-20s %-6s %s\n' "$f" "$entry" - "plain run failed: $(tail -n 1 "$out/$f.$entry.plain.log")"; continue
    fi
    for n in $(seq 1 "$gpus"); do
      d=$out/$f.$entry.r$n
      mkdir -p "$d"
      timeout 60 "$p" -e "$entry" --backend=cuda --ranks "$n" --random "$sizes" --seed 3 --out "$d" \
        < /dev/null > "$d.log" 2>&1
      rc=$?
      if [ $rc -ne 0 ] && grep -q 'cannot run sharded\|not sharded on the GPU' "$d.log"; then
        printf '%-12s %-20s %-6s %s\n' "$f" "$entry" "$n" "not sharded: $(tail -n 1 "$d.log" | sed 's/.*error: //')"; break
      fi
      total=$((total + 1))
      if [ $rc -ne 0 ]; then r="FAIL: $(tail -n 1 "$d.log")"; status=1
      elif why=$(compare "$out/$f.$entry.plain" "$d"); then r=PASS; passed=$((passed + 1))
      else r="FAIL: $why"; status=1; fi
      printf '%-12s %-20s %-6s %s\n' "$f" "$entry" "$n" "$r"
    done
  done < <("$p" --signatures)
done
# timing with ranks: three runs, three times, the slowest rank's each
if "$out/ranks" -e stats --backend=cuda --ranks 1 --random n=16777216 -r 3 -t "$out/times.txt" < /dev/null > /dev/null 2>"$out/times.log" &&
   [ "$(wc -l < "$out/times.txt")" -eq 3 ]; then
  echo "timing: --ranks 1 -r 3 on 2^24 i64: $(tr '\n' ' ' < "$out/times.txt")us"
else
  echo "timing: FAIL $(cat "$out/times.log")"; status=1
fi
# processes as ranks (runner/rn_procs.c): `--rank 0 --ranks 1` meeting at
# 127.0.0.1 on the CUDA backend (NCCL's unique id over gpuc's TCP bootstrap,
# ncclCommInitRank) equal to the plain run; with 2+ GPUs, one process per GPU
for n in $(seq 1 "$gpus"); do
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  d=$out/procs.r$n
  mkdir -p "$d"
  pids=()
  for r in $(seq 1 $((n - 1))); do
    GPUC_MASTER_ADDR=127.0.0.1 GPUC_MASTER_PORT=$port timeout 120 "$out/ranks" -e stats --backend=cuda \
      --random n=1000 --seed 3 --rank "$r" --ranks "$n" --out "$d" < /dev/null > "$d.log$r" 2>&1 &
    pids+=($!)
  done
  GPUC_MASTER_ADDR=127.0.0.1 GPUC_MASTER_PORT=$port timeout 120 "$out/ranks" -e stats --backend=cuda \
    --random n=1000 --seed 3 --rank 0 --ranks "$n" --out "$d" < /dev/null > "$d.log" 2>&1
  rc=$?
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  if [ $rc -ne 0 ] && grep -q 'not sharded on the GPU' "$d.log"; then
    printf '%-12s %-20s %-6s %s\n' "processes" "stats" "$n" "not sharded: $(tail -n 1 "$d.log")"; break
  fi
  total=$((total + 1))
  if [ $rc -ne 0 ]; then r="FAIL: $(cat "$d.log"* | tail -n 3 | tr '\n' ' ')"; status=1
  elif why=$(compare "$out/ranks.stats.plain" "$d"); then r=PASS; passed=$((passed + 1))
  else r="FAIL: $why"; status=1; fi
  printf '%-12s %-20s %-6s %s\n' "processes" "stats" "$n" "$r"
done
echo "cases: $passed of $total equal to the plain run"
[ $status -eq 0 ] && [ "$total" -gt 0 ] && echo "ranks_gpu: PASS" || { echo "ranks_gpu: FAIL"; status=1; }
exit $status
