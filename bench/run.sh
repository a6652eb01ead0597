#!/usr/bin/env bash
# bench/run.sh: the one command of gpuc's benchmark suite, run on the GPU machine.
#
#   bench/run.sh [--peers-only] [--no-compile] [--no-paths] [--ncu] [--sizes 10,12,...,28] [--results DIR]
#
# Before it, on the build machine (no GPU needed): scripts/build.sh build and
# bench/gen.sh, which writes the CUDA C of every bench/programs/*.gdsl into
# bench/gen/ (ignored; carried to the GPU machine with the call). Here it:
#   1. records the machine (nvidia-smi, nvcc, python packages);
#   2. builds, in parallel, the CUB harness (bench/peers_cub.cu) and one gpuc
#      driver per program (bench/gpuc/bench_PROG.cu with bench/gen/PROG.cu),
#      reusing binaries in bench/bin that are newer than their sources and run;
#      and (bench/paths/build.sh, needs build/ carried) each program's
#      executable and --emit=lib library with its C harness;
#   3. runs the CUB harness (copy bandwidth, CUB, the seed matmul, cuBLAS),
#      every gpuc case in its own process (a crash loses one case), the same
#      cases at the largest size through the library (bench/paths/lib_bench.c)
#      and the executable's -r/-t (bench/paths/exe_bench.py; row cases at rows
#      of 1024 and 32768) unless --no-paths (they add about 3-4 minutes), and the Python peers (CuPy, PyTorch eager and torch.compile);
#   4. writes the table (bench/report.py: table.md, results.json) and the log
#      into the results folder: --results DIR, else $OUT when set (the device
#      tool), else bench/results/DATE (ignored);
#   5. with --ncu, profiles one launch of the kernels of the largest misses
#      (ncu, sections SpeedOfLight, MemoryWorkloadAnalysis, Occupancy and
#      WarpStateStats, 2^26 elements)
#      into ncu.txt; then prints the table.
# Exit status: report.py's (1 if any result is wrong), or 2 if nothing ran.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
SIZES=10,12,14,16,18,20,22,24,26,28
PEERS_ONLY=0
PATHS=1
COMPILE=1
NCU=0
RES=""
while [ $# -gt 0 ]; do
  case "$1" in
    --peers-only) PEERS_ONLY=1 ;;
    --no-compile) COMPILE=0 ;;
    --no-paths) PATHS=0 ;;
    --ncu) NCU=1 ;;
    --sizes) SIZES=$2; shift ;;
    --results) RES=$2; shift ;;
    *) echo "usage: bench/run.sh [--peers-only] [--no-compile] [--no-paths] [--ncu] [--sizes LIST] [--results DIR]" >&2; exit 2 ;;
  esac
  shift
done
# under the device tool, results go straight to $OUT (at most 8 files come back)
if [ -z "$RES" ]; then
  if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then RES=$OUT; else RES=$ROOT/bench/results/$(date -u +%Y%m%d-%H%M%S); fi
fi
mkdir -p "$RES" bench/bin
LOG=$RES/run.log
: >"$LOG"
T0=$(date +%s)
say() { echo "[bench $(($(date +%s) - T0))s] $*" | tee -a "$LOG" >&2; }

# ---- 1. the machine ----
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv,noheader 2>/dev/null
  nvcc --version 2>/dev/null | grep -o 'release [0-9.]*'
  uname -r
  python3 -c 'import torch, cupy, triton; print("torch", torch.__version__, "cupy", cupy.__version__, "triton", triton.__version__)' 2>/dev/null
  date -u +%Y-%m-%dT%H:%M:%SZ
} >"$RES/machine.txt"
say "machine: $(tr '\n' ';' <"$RES/machine.txt")"
nvidia-smi >>"$LOG" 2>&1

# ---- 2. build ----
NVCC_FLAGS="-O3 -std=c++17 -arch=sm_90 -lineinfo"
fresh() { # fresh BIN SRC...: BIN exists, is newer than every SRC, and runs
  local b=$1; shift
  [ -x "$b" ] || return 1
  for s in "$@"; do [ "$b" -nt "$s" ] || return 1; done
  "$b" --list >/dev/null 2>&1
}
BLD=$(mktemp -d)
pids=()
if ! fresh bench/bin/peers_cub bench/peers_cub.cu bench/common.cuh; then
  say "building peers_cub"
  (nvcc $NVCC_FLAGS -o bench/bin/peers_cub bench/peers_cub.cu -lcublas >"$BLD/peers_cub.log" 2>&1 ||
    echo "build failed: peers_cub" >>"$BLD/failed") &
  pids+=($!)
fi
PROGS=()
if [ $PEERS_ONLY = 0 ]; then
  for src in bench/gpuc/bench_*.cu; do
    p=$(basename "$src" .cu); p=${p#bench_}
    gen=bench/gen/$p.cu
    if [ ! -f "$gen" ]; then
      say "no generated CUDA C for $p ($gen): its cases are not available"
      continue
    fi
    PROGS+=("$p")
    if ! fresh "bench/bin/bench_$p" "$src" "$gen" bench/gpuc/driver.cuh bench/common.cuh; then
      say "building bench_$p"
      (nvcc $NVCC_FLAGS -DGPUC_CUDA_HOST -include "$gen" -o "bench/bin/bench_$p" "$src" \
         >"$BLD/$p.log" 2>&1 || echo "build failed: bench_$p" >>"$BLD/failed") &
      pids+=($!)
    fi
  done
fi
# the other two paths of the programs that have path cases (bench/paths/)
PATH_PROGS=(elementwise reduce scan filter rows)
if [ $PEERS_ONLY = 0 ] && [ $PATHS = 1 ]; then
  say "building the executables and --emit=lib libraries (bench/paths/build.sh)"
  (bench/paths/build.sh --out bench/bin/paths "${PATH_PROGS[@]}" >"$BLD/paths.log" 2>&1 ||
    echo "build failed: some paths (bench/paths/build.sh)" >>"$BLD/failed") &
  pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p"; done
say "builds done"
for f in "$BLD"/*.log; do [ -s "$f" ] && { echo "== build log $(basename "$f")"; grep -v "Warning: The 'compute" "$f"; } >>"$LOG"; done
[ -f "$BLD/failed" ] && { cat "$BLD/failed" | tee -a "$LOG" >&2; }

# ---- 3. run ----
if [ -x bench/bin/peers_cub ]; then
  say "CUB harness, copy bandwidth, seed matmul, cuBLAS"
  timeout 300 bench/bin/peers_cub --out "$RES/cub.jsonl" --sizes "$SIZES" --big 2>>"$LOG" ||
    say "peers_cub failed: exit $?"
fi
if [ $PEERS_ONLY = 0 ]; then
  for p in "${PROGS[@]}"; do
    b=bench/bin/bench_$p
    if [ ! -x "$b" ]; then
      echo "{\"src\": \"gpuc\", \"case\": \"$p\", \"dtype\": \"-\", \"n\": 0, \"m\": 0, \"check\": \"error: driver did not build\"}" >>"$RES/gpuc.jsonl"
      continue
    fi
    for c in $("$b" --list); do
      say "gpuc $p/$c"
      timeout 120 "$b" --case "$c" --out "$RES/gpuc.jsonl" --sizes "$SIZES" --big 2>>"$LOG"
      rc=$?
      if [ $rc != 0 ]; then
        say "gpuc $p/$c failed: exit $rc"
        echo "{\"src\": \"gpuc\", \"case\": \"$c\", \"dtype\": \"-\", \"n\": 0, \"m\": 0, \"check\": \"error: exit $rc\"}" >>"$RES/gpuc.jsonl"
      fi
    done
  done
fi
if [ $PEERS_ONLY = 0 ] && [ $PATHS = 1 ]; then
  TOP=$(echo "$SIZES" | tr ',' '\n' | sort -n | tail -1)
  for p in "${PATH_PROGS[@]}"; do
    b=bench/bin/paths/lib_$p
    [ -x "$b" ] || { say "no library harness for $p: its lib path is not available"; continue; }
    for c in $("$b" --list); do
      say "gpuc lib $p/$c at 2^$TOP"
      timeout 180 "$b" --case "$c" --log2 "$TOP" --m 1024,32768 --out "$RES/gpuc.jsonl" 2>>"$LOG" || {
        rc=$?
        say "gpuc lib $p/$c failed: exit $rc"
        echo "{\"src\": \"gpuc_lib\", \"case\": \"${c%_*}\", \"dtype\": \"${c##*_}\", \"n\": $((1 << TOP)), \"m\": 0, \"check\": \"error: exit $rc\"}" >>"$RES/gpuc.jsonl"
      }
    done
  done
  say "gpuc executables' -r/-t at 2^$TOP (bench/paths/exe_bench.py)"
  # 10 timed runs (each run also copies its arguments in and its result out, untimed); rows of 1024 and 32768
  timeout 400 python3 bench/paths/exe_bench.py --bin bench/bin/paths --log2 "$TOP" --runs 10 --m 1024,32768 \
    --out "$RES/gpuc.jsonl" 2>>"$LOG" ||
    say "exe_bench failed: exit $?"
fi
say "Python peers (CuPy, torch, torch.compile)"
PYARGS=(--out "$RES/py.jsonl" --sizes "$SIZES")
[ $COMPILE = 0 ] && PYARGS+=(--no-compile)
PYTHONUNBUFFERED=1 timeout "${BENCH_PY_TIMEOUT:-360}" python3 bench/peers_py.py "${PYARGS[@]}" 2>>"$LOG" || say "peers_py failed: exit $?"

# ---- 4. report (before the profiles, so a slow profiler loses nothing) ----
say "report"
python3 bench/report.py "$RES" --json "$RES/results.json" >"$RES/table.md"
rc=$?

# ---- 5. profiles of the largest misses ----
export PATH=$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
if [ $NCU = 1 ] && [ $PEERS_ONLY = 0 ] && command -v ncu >/dev/null; then
  say "ncu profiles"
  NCU_T0=$(date +%s)
  prof() { # prof BIN CASE KERNEL_REGEX COUNT
    [ -x "$1" ] || return
    [ $(($(date +%s) - NCU_T0)) -lt "${BENCH_NCU_BUDGET:-150}" ] || { echo "== skipped $1 $2 (time)" >>"$RES/ncu.txt"; return; }
    echo "== ncu: $1 --case $2 (kernels /$3/, $4 launch(es), 2^26 elements${BENCH_ROW_LENGTH:+, rows of $BENCH_ROW_LENGTH})" >>"$RES/ncu.txt"
    timeout 60 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
      -k "regex:$3" -c "$4" "$1" --case "$2" --sizes 26 --once >>"$RES/ncu.txt" 2>&1 ||
      echo "== ncu exit $?" >>"$RES/ncu.txt"
  }
  # in order of priority (the budget, BENCH_NCU_BUDGET seconds, may cut the tail)
  prof bench/bin/bench_scan incl_f32 incl_f32_k 1
  prof bench/bin/peers_cub scan_incl DeviceScanKernel 1
  prof bench/bin/bench_rows row_softmax row_softmax_k 1
  BENCH_ROW_LENGTH=32768 prof bench/bin/bench_rows row_softmax row_softmax_k 1
  prof bench/bin/bench_filter filter_f32 filter_f32_k 1
  prof bench/bin/bench_rows row_sums row_sums_k 1
  prof bench/bin/bench_reduce sum_f32 sum_f32_k 1
  prof bench/bin/bench_matmul matmul matmul_k 1
  prof bench/bin/bench_scan recurrence recurrence_k 1
  prof bench/bin/bench_stats mean_var mean_var 1
  prof bench/bin/peers_cub sum DeviceReduceKernel 1
  prof bench/bin/bench_stats logsumexp logsumexp 1
  say "ncu done"
fi
cat "$RES/table.md"
say "done (report exit $rc)"
exit $rc
