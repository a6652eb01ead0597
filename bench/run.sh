#!/usr/bin/env bash
# bench/run.sh: the one command of gpuc's benchmark suite, run on the GPU machine.
#
#   bench/run.sh [--budget SECONDS] [--peers-only] [--no-compile] [--no-paths] [--big] [--ncu]
#                [--sizes 10,12,...,28] [--small-passes N] [--rechecks N] [--results DIR]
#   bench/run.sh --prepare      on the build machine: build every binary ahead (below)
#
# Before it, on the build machine (no GPU needed): scripts/build.sh build,
# bench/gen.sh (the CUDA C of every bench/programs/*.gdsl into bench/gen/),
# tests/gpu/prepare.sh (the install prefix .device/prefix: gpuc and its
# runtime for what is built there) and, optionally, bench/run.sh --prepare
# (every binary built here into bench/gen/bin, for sm_90, about 36 MB; nothing
# to build there). The device call carries bench/gen and .device/prefix;
# build/ is not needed there.
#
# Parts, in order of priority; each prints its elapsed time, and with
# --budget (default 570 s under the device tool, where $OUT is set; none
# otherwise) a part or case that would start with too little time left is
# not run and says so ("not run: out of time"), and a running one is cut at
# the budget, so the report (kept RESERVE seconds for) always comes out:
#   build    the CUB harness (bench/peers_cub.cu), one gpuc driver per program
#            (bench/gpuc/bench_PROG.cu with bench/gen/PROG.cu), and each
#            program's executable, --emit=lib library and library harness
#            (bench/paths/build.sh, gpuc from build/ or .device/prefix), in
#            parallel; a binary whose sources' checksum matches the one it was
#            built from (here or by --prepare) is reused;
#   cub      copy rate, CUB, the seed matmul, cuBLAS;
#   header   every gpuc case through the --emit=cuda drivers, one process a case;
#   lib      every case at the largest size through the library (bench/paths/lib_bench.c);
#   peers    CuPy, torch eager, and torch.compile where a target compares with it;
#   exe      every case at the largest size through the executable's -r/-t
#            (bench/paths/exe_bench.py);
#   small    the scans and reductions at the sizes up to 2^20, and CUB's, in
#            N - 1 more passes (--small-passes N, default 3): the target there
#            is within 1.2x CUB's time in every pass (records tagged "pass");
#   recheck  the near verdicts again, in turn, --rechecks N more times
#            (default 2): every case within 2% of CUB's time and every path
#            within 1% of the 1.03x slack (bench/recheck.sh; report.py takes
#            each rechecked time as the median of its processes' medians);
#   compile  torch.compile of the other cases (after everything the targets need);
#   report   bench/report.py: table.md, results.json (the parts' times included);
#   ncu      with --ncu: one launch of the kernels of the largest misses.
# torch.compile compiles each function once per shape, with Inductor's and
# Triton's caches in bench/bin/torch_cache (kept on a warm machine).
# Results go to --results DIR, else $OUT (the device tool, which brings back
# at most 8 files: machine.txt, records.jsonl (every measurement, one JSON
# object a line), run.log, parts.txt, table.md, results.json, ncu.txt), else
# bench/results/DATE (ignored). Exit status: report.py's (1 if any result is
# wrong), or 2 on a bad command line.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
SIZES=10,12,14,16,18,20,22,24,26,28
PEERS_ONLY=0
PATHS=1
COMPILE=1
NCU=0
BIG=0
PREPARE=0
SMALL_PASSES=3
RECHECKS=2
RES=""
BUDGET=""
RESERVE=25 # seconds kept for the report and the table
usage() {
  echo "usage: bench/run.sh [--budget SECONDS] [--peers-only] [--no-compile] [--no-paths] [--big] [--ncu] [--sizes LIST] [--small-passes N] [--rechecks N] [--results DIR]" >&2
  echo "       bench/run.sh --prepare" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --peers-only) PEERS_ONLY=1 ;;
    --no-compile) COMPILE=0 ;;
    --no-paths) PATHS=0 ;;
    --big) BIG=1 ;;
    --ncu) NCU=1 ;;
    --prepare) PREPARE=1 ;;
    --budget) [ $# -ge 2 ] || usage; BUDGET=$2; shift ;;
    --sizes) [ $# -ge 2 ] || usage; SIZES=$2; shift ;;
    --small-passes) [ $# -ge 2 ] || usage; SMALL_PASSES=$2; shift ;;
    --rechecks) [ $# -ge 2 ] || usage; RECHECKS=$2; shift ;;
    --results) [ $# -ge 2 ] || usage; RES=$2; shift ;;
    *) usage ;;
  esac
  shift
done
case "$SMALL_PASSES" in
  "" | *[!0-9]*) echo "bench/run.sh: --small-passes: expected a count, found '$SMALL_PASSES'" >&2; exit 2 ;;
esac
case "$RECHECKS" in
  "" | *[!0-9]*) echo "bench/run.sh: --rechecks: expected a count, found '$RECHECKS'" >&2; exit 2 ;;
esac
case "$BUDGET" in
  "") if [ -n "${OUT:-}" ] && [ $PREPARE = 0 ]; then BUDGET=570; else BUDGET=0; fi ;;
  *[!0-9]*) echo "bench/run.sh: --budget: expected whole seconds, found '$BUDGET'" >&2; exit 2 ;;
esac
if [ "$BUDGET" != 0 ] && [ "$BUDGET" -lt $((RESERVE + 30)) ]; then
  echo "bench/run.sh: --budget $BUDGET leaves no time for anything after the report's $RESERVE s" >&2
  exit 2
fi
TOP=$(echo "$SIZES" | tr ',' '\n' | sort -n | tail -1)
export PATH=$PATH:/usr/local/cuda/bin
export NVIDIA_TF32_OVERRIDE=0 # cuBLAS SGEMM in plain FP32, as gpuc's f32 product
NVCC_FLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo"
PROGS=()
for src in bench/gpuc/bench_*.cu; do p=$(basename "$src" .cu); PROGS+=("${p#bench_}"); done
# the programs whose cases also run through the library and the executable
PATH_PROGS=(elementwise reduce scan filter stats rows rows_nn)

# ---- binaries: built here or ahead, reused while their sources' checksum holds ----
sources_of() { # sources_of NAME: the files a binary is built from
  case "$1" in
    peers_cub) echo bench/peers_cub.cu bench/common.cuh ;;
    paths) # the emitted CUDA C stands for the compiler's output: a new backend, a new bench/gen;
      # the executables' runner and host code (runner/, backend/emit_program.c) are not in it
      echo bench/paths/build.sh bench/paths/lib_bench.c runner/*.c runner/*.h backend/emit_program.c
      for p in "${PATH_PROGS[@]}"; do echo "bench/programs/$p.gdsl" "bench/gen/$p.cu"; done ;;
    *) echo "bench/gpuc/bench_$1.cu" "bench/gen/$1.cu" bench/gpuc/driver.cuh bench/common.cuh ;;
  esac
}
checksum() { # checksum NAME: of its sources and the flags
  { echo "$NVCC_FLAGS"; cat $(sources_of "$1") 2>/dev/null; } | sha1sum | cut -d' ' -f1
}
is_built() { # is_built DIR NAME: DIR/NAME.sum matches the sources
  [ -f "$1/$2.sum" ] && [ "$(cat "$1/$2.sum")" = "$(checksum "$2")" ]
}
build_one() { # build_one DIR NAME: into DIR, then the checksum; a log in DIR/NAME.log
  local d=$1 n=$2 ok=1
  rm -f "$d/$n.sum"
  case "$n" in
    peers_cub) nvcc $NVCC_FLAGS -o "$d/peers_cub" bench/peers_cub.cu -lcublas >"$d/$n.log" 2>&1 || ok=0 ;;
    paths) bench/paths/build.sh --out "$d/paths" "${PATH_PROGS[@]}" >"$d/$n.log" 2>&1 || ok=0 ;;
    *)
      if [ ! -f "bench/gen/$n.cu" ]; then echo "no bench/gen/$n.cu (bench/gen.sh)" >"$d/$n.log"; return 1; fi
      nvcc $NVCC_FLAGS -DGPUC_CUDA_HOST -include "bench/gen/$n.cu" -o "$d/bench_$n" "bench/gpuc/bench_$n.cu" -lcublas \
        >"$d/$n.log" 2>&1 || ok=0 ;;
  esac
  [ $ok = 1 ] && checksum "$n" >"$d/$n.sum"
  [ $ok = 1 ]
}

if [ $PREPARE = 1 ]; then
  # on the build machine: everything into bench/gen (carried with it), for sm_90
  D=bench/gen/bin
  mkdir -p "$D"
  T0=$(date +%s)
  pids=()
  for n in peers_cub "${PROGS[@]}" paths; do
    if is_built "$D" "$n"; then echo "prepare: $n is up to date"; continue; fi
    (build_one "$D" "$n" && echo "prepare: built $n" || { echo "prepare: $n FAILED:"; tail -5 "$D/$n.log"; exit 1; }) &
    pids+=($!)
  done
  rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  # the harnesses are linked: the libraries' archives are not needed there
  rm -rf "$D/paths/lib"/*/*.a "$D/paths/lib"/*/*.so
  echo "prepare: $(du -sh bench/gen | cut -f1) in bench/gen ($(($(date +%s) - T0)) s, exit $rc)"
  exit $rc
fi

if [ -z "$RES" ]; then
  if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then RES=$OUT; else RES=$ROOT/bench/results/$(date -u +%Y%m%d-%H%M%S); fi
fi
mkdir -p "$RES" bench/bin
LOG=$RES/run.log
PARTS=$RES/parts.txt
: >"$LOG"
: >"$PARTS"
T0=$(date +%s)
say() { echo "[bench $(($(date +%s) - T0))s] $*" | tee -a "$LOG" >&2; }
left() { # seconds left before the report's reserve (a large number without a budget)
  if [ "$BUDGET" = 0 ]; then echo 1000000; else echo $((BUDGET - RESERVE - ($(date +%s) - T0))); fi
}
cap() { # cap SECONDS: SECONDS, or less when the budget has less left
  local l; l=$(left)
  if [ "$l" -lt "$1" ]; then echo "$l"; else echo "$1"; fi
}
PART_T0=0
PART=""
part_begin() { # part_begin NAME MIN_SECONDS: 0 if the part runs, 1 (and a line) if out of time
  PART=$1
  PART_T0=$(date +%s)
  if [ "$(left)" -lt "$2" ]; then
    say "$1: not run: out of time ($(left) s left of the budget, at least $2 s needed)"
    echo "$1 | 0 | not run: out of time" >>"$PARTS"
    return 1
  fi
  say "$1: start"
}
part_end() { # part_end STATUS_TEXT
  local s=$(($(date +%s) - PART_T0))
  say "$PART: done in $s s ($1)"
  echo "$PART | $s | $1" >>"$PARTS"
}
not_run() { # not_run SRC CASE DTYPE N: a row that says the case ran out of time
  echo "{\"src\": \"$1\", \"case\": \"$2\", \"dtype\": \"$3\", \"n\": $4, \"m\": 0, \"check\": \"not run: out of time\"}" \
    >>"$RES/records.jsonl"
}

# ---- the machine ----
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv,noheader 2>/dev/null
  nvcc --version 2>/dev/null | grep -o 'release [0-9.]*'
  uname -r
  python3 -c 'import torch, cupy, triton; print("torch", torch.__version__, "cupy", cupy.__version__, "triton", triton.__version__)' 2>/dev/null
  date -u +%Y-%m-%dT%H:%M:%SZ
} >"$RES/machine.txt"
say "machine: $(tr '\n' ';' <"$RES/machine.txt") budget ${BUDGET} s"
nvidia-smi >>"$LOG" 2>&1

# ---- build (nothing runs on the GPU meanwhile) ----
BIN=bench/bin
PBIN=bench/bin/paths
binary() { # binary NAME: where NAME's binaries are (prepared in bench/gen/bin, or built in bench/bin)
  if is_built bench/gen/bin "$1"; then echo bench/gen/bin; else echo bench/bin; fi
}
part_begin build 30
pids=()
NEED=(peers_cub)
[ $PEERS_ONLY = 0 ] && NEED+=("${PROGS[@]}")
[ $PEERS_ONLY = 0 ] && [ $PATHS = 1 ] && NEED+=(paths)
built=0 reused=0
for n in "${NEED[@]}"; do
  if is_built bench/gen/bin "$n" || is_built bench/bin "$n"; then reused=$((reused + 1)); continue; fi
  (build_one bench/bin "$n" || say "build failed: $n (bench/bin/$n.log)") &
  pids+=($!)
  built=$((built + 1))
done
for p in "${pids[@]}"; do wait "$p"; done
for n in "${NEED[@]}"; do [ -s "bench/bin/$n.log" ] && { echo "== build log $n"; grep -v "Warning: The 'compute" "bench/bin/$n.log"; } >>"$LOG"; done
BIN_CUB=$(binary peers_cub)/peers_cub
PBIN=$(binary paths)/paths
part_end "$built built, $reused reused"

# ---- an estimate of the parts to come, from the seconds a case took on an H100 ----
# (2026-11-25: header 146 s for 30 cases, lib 97 s for 28, peers 73 s; exe
# about 3 s a case after its inputs and checks moved onto every core: an estimate)
count_cases() { # count_cases BINARY...: the cases the binaries list
  local b k=0
  for b in "$@"; do [ -x "$b" ] && k=$((k + $("$b" --list 2>/dev/null | wc -l))); done
  echo $k
}
if [ $PEERS_ONLY = 0 ]; then
  hb=() lb=()
  for p in "${PROGS[@]}"; do hb+=("$(binary "$p")/bench_$p"); done
  for p in "${PATH_PROGS[@]}"; do lb+=("$PBIN/lib_$p"); done
  n_header=$(count_cases "${hb[@]}")
  n_lib=0 n_exe=0
  if [ $PATHS = 1 ]; then
    n_lib=$(count_cases "${lb[@]}")
    n_exe=$(($(python3 bench/paths/exe_bench.py --list | wc -l) + 4)) # the 4 row cases at 2 row lengths
  fi
  est_compile=$([ $COMPILE = 1 ] && echo 60 || echo 0)
  est_small=$(((SMALL_PASSES - 1) * 40)) # H100: CUB, scan and reduce at 2^10..2^20 took 36 s
  est_recheck=$((RECHECKS * 35)) # H200, 2026-11-28: 4 CUB cases, a driver and 3 paths a round, 3-5 s each
  est=$((10 + n_header * 5 + n_lib * 7 / 2 + 75 + n_exe * 3 + est_recheck + est_small + est_compile + 10))
  say "estimate: cub 10 + header $n_header x 5 + lib $n_lib x 3.5 + peers 75 + exe $n_exe x 3 + recheck $est_recheck + small $est_small + compile $est_compile + report 10 = $est s more (budget ${BUDGET} s, $(($(date +%s) - T0)) s gone)"
fi

# ---- CUB harness: the copy rate every ratio is of, first ----
if [ -x "$BIN_CUB" ] && part_begin cub 20; then
  CUB_ARGS=(--out "$RES/records.jsonl" --sizes "$SIZES")
  [ $BIG = 1 ] && CUB_ARGS+=(--big)
  timeout "$(cap 240)" "$BIN_CUB" "${CUB_ARGS[@]}" 2>>"$LOG"
  rc=$?
  part_end "$([ $rc = 0 ] && echo ok || echo "exit $rc$([ $rc = 124 ] && echo ': cut, out of time')")"
fi

# ---- gpuc through the --emit=cuda header: every case in its own process ----
run_cases() { # run_cases PART MIN_CASE_SECONDS SRC: reads "BIN CASE" lines; runs each with the budget
  local ran=0 failed=0 skipped=0 b c rc t
  while read -r b c; do
    t=$(date +%s)
    if [ "$(left)" -lt "$2" ]; then
      not_run "$3" "$c" - 0
      skipped=$((skipped + 1))
      continue
    fi
    if [ "$3" = gpuc ]; then
      timeout "$(cap 120)" "$b" --case "$c" --out "$RES/records.jsonl" --sizes "$SIZES" $([ $BIG = 1 ] && echo --big) \
        </dev/null 2>>"$LOG"
    else
      timeout "$(cap 120)" "$b" --case "$c" --log2 "$TOP" --m 1024,32768 --out "$RES/records.jsonl" </dev/null 2>>"$LOG"
    fi
    rc=$?
    ran=$((ran + 1))
    echo "[bench $(($(date +%s) - T0))s] $1 $(basename "$b") $c: $(($(date +%s) - t)) s" >>"$LOG" # where the seconds go
    if [ $rc != 0 ]; then
      failed=$((failed + 1))
      say "$1 $c failed: exit $rc"
      local what="error: exit $rc"
      [ $rc = 124 ] && what="not run: out of time (cut)"
      if [ "$3" = gpuc ]; then
        echo "{\"src\": \"gpuc\", \"case\": \"$c\", \"dtype\": \"-\", \"n\": 0, \"m\": 0, \"check\": \"$what\"}" >>"$RES/records.jsonl"
      else
        echo "{\"src\": \"$3\", \"case\": \"${c%_*}\", \"dtype\": \"${c##*_}\", \"n\": $((1 << TOP)), \"m\": 0, \"check\": \"$what\"}" >>"$RES/records.jsonl"
      fi
    fi
  done
  [ $skipped -gt 0 ] && say "$1: $skipped case(s) not run: out of time"
  part_end "$ran run, $failed failed, $skipped not run (out of time)"
}
if [ $PEERS_ONLY = 0 ] && part_begin header 10; then
  for p in "${PROGS[@]}"; do
    b=$(binary "$p")/bench_$p
    if [ ! -x "$b" ]; then
      echo "{\"src\": \"gpuc\", \"case\": \"$p\", \"dtype\": \"-\", \"n\": 0, \"m\": 0, \"check\": \"error: driver did not build\"}" >>"$RES/records.jsonl"
      continue
    fi
    for c in $("$b" --list); do echo "$b $c"; done
  done | run_cases header 4 gpuc
fi

# ---- gpuc through the --emit=lib library, at the largest size ----
if [ $PEERS_ONLY = 0 ] && [ $PATHS = 1 ] && part_begin lib 10; then
  for p in "${PATH_PROGS[@]}"; do
    b=$PBIN/lib_$p
    [ -x "$b" ] || { say "no library harness for $p: its lib path is not available"; continue; }
    for c in $("$b" --list); do echo "$b $c"; done
  done | run_cases lib 6 gpuc_lib
fi

# ---- Python peers: CuPy, torch eager, torch.compile where a target compares with it ----
export TORCHINDUCTOR_CACHE_DIR=$ROOT/bench/bin/torch_cache/inductor TRITON_CACHE_DIR=$ROOT/bench/bin/torch_cache/triton
PY_COMMON=(--out "$RES/records.jsonl" --sizes "$SIZES")
if part_begin peers 30; then
  PY=("${PY_COMMON[@]}" --compile "$([ $COMPILE = 1 ] && echo targets || echo none)")
  [ "$BUDGET" != 0 ] && PY+=(--deadline $((T0 + BUDGET - RESERVE - 20))) # a compile may take 20 s
  PYTHONUNBUFFERED=1 timeout "$(cap 420)" python3 bench/peers_py.py "${PY[@]}" 2>>"$LOG"
  rc=$?
  part_end "$([ $rc = 0 ] && echo ok || echo "exit $rc$([ $rc = 124 ] && echo ': cut, out of time')")"
fi

# ---- gpuc through the executable's -r/-t, at the largest size ----
if [ $PEERS_ONLY = 0 ] && [ $PATHS = 1 ] && part_begin exe 15; then
  # 20 timed runs: only the last copies its result back (docs/executables.md, -r)
  EXE=(--bin "$PBIN" --log2 "$TOP" --runs 20 --m 1024,32768 --out "$RES/records.jsonl")
  [ "$BUDGET" != 0 ] && EXE+=(--deadline $((T0 + BUDGET - RESERVE - 8))) # a case takes 2-5 s
  timeout "$(cap 400)" python3 bench/paths/exe_bench.py "${EXE[@]}" 2>>"$LOG"
  rc=$?
  part_end "$([ $rc = 0 ] && echo ok || echo "exit $rc$([ $rc = 124 ] && echo ': cut, out of time')")"
fi

# ---- the small sizes again: passes 2..N of the scans, reductions and CUB ----
SMALL=$(echo "$SIZES" | tr ',' '\n' | awk '$1 <= 20' | paste -sd, -)
if [ $PEERS_ONLY = 0 ] && [ "$SMALL_PASSES" -gt 1 ] && [ -n "$SMALL" ] && part_begin small 20; then
  n_runs=0 n_bad=0
  for pass in $(seq 2 "$SMALL_PASSES"); do
    for b in "$BIN_CUB" "$(binary scan)/bench_scan" "$(binary reduce)/bench_reduce"; do
      [ -x "$b" ] || continue
      [ "$(left)" -lt 10 ] && { say "small: pass $pass not finished: out of time"; break 2; }
      rm -f "$RES/small.tmp"
      timeout "$(cap 60)" "$b" --sizes "$SMALL" --out "$RES/small.tmp" </dev/null 2>>"$LOG" || n_bad=$((n_bad + 1))
      # the same records, tagged with their pass (bench/report.py keeps pass 1 for everything else)
      [ -f "$RES/small.tmp" ] && sed "s/}\$/, \"pass\": $pass}/" "$RES/small.tmp" >>"$RES/records.jsonl"
      n_runs=$((n_runs + 1))
    done
  done
  rm -f "$RES/small.tmp"
  part_end "$n_runs runs, $n_bad failed"
fi

# ---- the near verdicts again, in turn (bench/recheck.sh) ----
if [ $PEERS_ONLY = 0 ] && [ "$RECHECKS" -gt 0 ] && part_begin recheck 20; then
  hdrs=()
  for p in "${PROGS[@]}"; do hdrs+=("$p=$(binary "$p")/bench_$p"); done
  dl=0
  [ "$BUDGET" != 0 ] && dl=$((T0 + BUDGET - RESERVE - 10)) # a run takes 2-6 s
  got=$(timeout "$(cap 200)" bash bench/recheck.sh --res "$RES" --cub "$BIN_CUB" --paths "$PBIN" --top "$TOP" \
    --rounds "$RECHECKS" --deadline "$dl" "${hdrs[@]}" 2>>"$LOG")
  rc=$?
  part_end "$([ $rc = 0 ] && echo "${got:-?}" || echo "exit $rc$([ $rc = 124 ] && echo ': cut, out of time')")"
fi

# ---- torch.compile of the cases no target compares with ----
if [ $COMPILE = 1 ] && part_begin compile 30; then
  PY=("${PY_COMMON[@]}" --only compile-rest)
  [ "$BUDGET" != 0 ] && PY+=(--deadline $((T0 + BUDGET - RESERVE - 20)))
  PYTHONUNBUFFERED=1 timeout "$(cap 300)" python3 bench/peers_py.py "${PY[@]}" 2>>"$LOG"
  rc=$?
  part_end "$([ $rc = 0 ] && echo ok || echo "exit $rc$([ $rc = 124 ] && echo ': cut, out of time')")"
fi

# ---- report (before the profiles, so a slow profiler loses nothing) ----
say "report"
python3 bench/report.py "$RES" --json "$RES/results.json" >"$RES/table.md"
rc=$?

# ---- profiles of the largest misses ----
export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
if [ $NCU = 1 ] && [ $PEERS_ONLY = 0 ] && command -v ncu >/dev/null && part_begin ncu 20; then
  prof() { # prof BIN CASE KERNEL_REGEX COUNT
    [ -x "$1" ] || return
    [ "$(left)" -gt 15 ] || { echo "== not run: out of time: $1 $2" >>"$RES/ncu.txt"; return; }
    echo "== ncu: $1 --case $2 (kernels /$3/, $4 launch(es), 2^26 elements${BENCH_ROW_LENGTH:+, rows of $BENCH_ROW_LENGTH})" >>"$RES/ncu.txt"
    timeout "$(cap 60)" ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
      -k "regex:$3" -c "$4" "$1" --case "$2" --sizes 26 --once >>"$RES/ncu.txt" 2>&1 ||
      echo "== ncu exit $?" >>"$RES/ncu.txt"
  }
  # in order of priority (the budget may cut the tail)
  prof "$(binary scan)/bench_scan" incl_f32 incl_f32_k 1
  prof "$BIN_CUB" scan_incl DeviceScanKernel 1
  BENCH_ROW_LENGTH=32768 prof "$(binary rows)/bench_rows" row_softmax row_softmax_k 1
  prof "$(binary filter)/bench_filter" filter_f32 filter_f32_k 1
  prof "$(binary scan)/bench_scan" recurrence recurrence_k 1
  prof "$(binary stats)/bench_stats" mean_var mean_var 1
  BENCH_ROW_LENGTH=262144 prof "$(binary rows_nn)/bench_rows_nn" layer_norm layer_norm 1
  part_end ok
fi
# the table, the paths and the summary (the small sizes are in table.md)
sed '/^Small sizes/,/^$/d' "$RES/table.md"
say "done (report exit $rc)"
exit $rc
