#!/usr/bin/env bash
# bench/try_paths.sh: issue 16 items 1 and 6 in one short GPU run (under 4
# minutes): five cases at 2^28 through the three ways gpuc is run, then `gpuc
# tune` on bench/tune.gdsl with the spread of every measurement.
#
#   here:  scripts/build.sh build && bench/gen.sh
#   there: bench/try_paths.sh          (repository root; carry build and bench/gen)
#
# Paths (bench/report.py's paths table; a path > 1.03x the best is SLOW):
#   header  the --emit=cuda drivers of bench/run.sh (bench/gpuc/bench_PROG.cu, nvcc)
#   lib     the --emit=lib library through its entry table, results it
#           allocates (bench/paths/lib_bench.c)
#   exe     the executable's own -r/-t (bench/paths/exe_bench.py)
# for saxpy, sum f32, inclusive scan f32, filter f32 and row softmax (rows of
# 1024). Every result is checked against a host reference. Then gpuc tune
# (one round, 30 timed runs a variant) on the row softmax, scan and filter
# entries, cut off after BENCH_TUNE_SECONDS (default 70): its lines show each
# variant's time and spread as it goes (a whole run of bench/tune.gdsl should
# take about 5 minutes, not measured yet: `build/driver/gpuc tune --arch=sm_90 bench/tune.gdsl`).
# Output: the paths table, the tune lines, and a last line PASS or FAIL
# (FAIL: a wrong result or a path that did not run). Files in $OUT when set
# (the device tool), else bench/results/paths-DATE.
set -u
cd "$(dirname "$0")/.."
RES=${OUT:-bench/results/paths-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$RES" bench/bin
T0=$(date +%s)
say() { echo "[try_paths $(($(date +%s) - T0))s] $*" >&2; }
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
ARCH=sm_${cap:-90}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >"$RES/machine.txt" 2>/dev/null
date -u +%Y-%m-%dT%H:%M:%SZ >>"$RES/machine.txt"
say "machine: $(tr '\n' ';' <"$RES/machine.txt")"

# name: program, header driver case, lib/exe case id
CASES=("elementwise saxpy saxpy_f32" "reduce sum_f32 sum_f32" "scan incl_f32 scan_incl_f32"
       "filter filter_f32 filter_f32" "rows row_softmax row_softmax_f32")
PROGS=(elementwise reduce scan filter rows)

# ---- build: header drivers (nvcc), executables and libraries (gpuc), in parallel ----
pids=()
for p in "${PROGS[@]}"; do
  [ -f "bench/gen/$p.cu" ] || { say "no bench/gen/$p.cu: run bench/gen.sh on the build machine"; continue; }
  if ! [ bench/bin/bench_$p -nt "bench/gen/$p.cu" ] || ! [ bench/bin/bench_$p -nt "bench/gpuc/bench_$p.cu" ]; then
    nvcc -O3 -std=c++17 -arch="$ARCH" -lineinfo -DGPUC_CUDA_HOST -include "bench/gen/$p.cu" \
      -o "bench/bin/bench_$p" "bench/gpuc/bench_$p.cu" >"$RES/build_$p.log" 2>&1 &
    pids+=($!)
  fi
done
bench/paths/build.sh --out bench/bin/paths "${PROGS[@]}" >"$RES/build_paths.log" 2>&1 &
pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
say "builds done"

# ---- the three paths at 2^28 ----
J=$RES/gpuc.jsonl
: >"$J"
exe_cases=""
for c in "${CASES[@]}"; do
  set -- $c
  p=$1 hcase=$2 id=$3
  say "header $p/$hcase"
  BENCH_ROW_LENGTH=1024 timeout 120 bench/bin/bench_$p --case "$hcase" --sizes 28 --out "$J" 2>>"$RES/run.log" ||
    echo "{\"src\": \"gpuc\", \"case\": \"${id%_*}\", \"dtype\": \"${id##*_}\", \"n\": 268435456, \"m\": 0, \"check\": \"error: header driver exit $?\"}" >>"$J"
  say "lib $p/$id"
  timeout 120 bench/bin/paths/lib_$p --case "$id" --log2 28 --m 1024 --out "$J" 2>>"$RES/run.log" ||
    echo "{\"src\": \"gpuc_lib\", \"case\": \"${id%_*}\", \"dtype\": \"${id##*_}\", \"n\": 268435456, \"m\": 0, \"check\": \"error: lib harness exit $?\"}" >>"$J"
  exe_cases=$exe_cases${exe_cases:+,}$id
done
say "exe $exe_cases"
timeout 240 python3 bench/paths/exe_bench.py --bin bench/bin/paths --cases "$exe_cases" --log2 28 --m 1024 --runs 10 \
  --out "$J" 2>>"$RES/run.log" || say "exe_bench: exit $?"
python3 bench/report.py "$RES" --json "$RES/results.json" >"$RES/table.md"
report_rc=$?

# ---- gpuc tune: the spread of every measurement ----
say "gpuc tune (at most ${BENCH_TUNE_SECONDS:-70} s)"
timeout "${BENCH_TUNE_SECONDS:-70}" build/driver/gpuc tune --arch="$ARCH" --rounds 1 --runs 30 \
  -k row_softmax,scan_f32,filter_f32 -o "$RES/tune.tuning" bench/tune.gdsl 2>"$RES/tune.log"
tune_rc=$?

# ---- summary ----
sed -n '/^Paths at/,$p' "$RES/table.md"   # the paths table, the summary and any WRONG result
echo
echo "gpuc tune (exit $tune_rc; 124: cut off by the time limit):"
grep 'gpuc tune' "$RES/tune.log"
grep -v 'gpuc tune' "$RES/tune.log" | head -5
errors=$(grep -c '"check": "error' "$J")
rows=$(grep -c '"src"' "$J")
say "done"
if [ $report_rc = 0 ] && [ "$errors" = 0 ] && [ "$rows" -ge 15 ]; then
  echo "PASS: $rows results, every one checked ok (SLOW above marks a path > 1.03x the best)"
else
  echo "FAIL: report exit $report_rc, $errors path(s) that did not run, $rows results (15 expected)"
  exit 1
fi
