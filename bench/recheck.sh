#!/usr/bin/env bash
# bench/recheck.sh: bench/run.sh's recheck part. One process's median of a
# case moves by 2-4% from one process to the next on the H200 (2026-11-28,
# session 14: LayerNorm at rows of 1024 547-568 us through one binary, CUB's
# sum at 2^28 245-251 us), more than the margins some verdicts turn on. So
# the near ones run again, in turn, ROUNDS more times:
#   cub CASE DTYPE      a case within 2% of CUB's time: CUB's harness
#                       (--case CASE) and the program's header driver (all its
#                       cases at the top size, one process a round);
#   paths CASE DTYPE M  a path within 1% of the 1.03x slack: the three paths
#                       (header driver, library harness, executable).
# bench/report.py --recheck-plan lists them from the records so far; their
# new records go into records.jsonl tagged "recheck": ROUND, and report.py
# takes each rechecked time as the median of its processes' medians.
#
#   bench/recheck.sh --res DIR --cub BIN --paths DIR --top LOG2 --rounds N
#                    [--deadline EPOCH_SECONDS] PROGRAM=HEADER_BINARY ...
# EXE_BENCH (default: python3 bench/paths/exe_bench.py) runs the executables.
# Prints one line: the runs made and failed. Exit 0 (a failed run is logged
# on stderr and counted; its records, if any, are kept).
set -u
cd "$(dirname "$0")/.."
RES="" CUB="" PBIN="" TOP="" ROUNDS="" DEADLINE=0
declare -A HEADER=()
usage() {
  echo "usage: bench/recheck.sh --res DIR --cub BIN --paths DIR --top LOG2 --rounds N [--deadline EPOCH] PROGRAM=BINARY ..." >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --res | --cub | --paths | --top | --rounds | --deadline) [ $# -ge 2 ] || usage ;;
  esac
  case $1 in
    --res) RES=$2; shift ;;
    --cub) CUB=$2; shift ;;
    --paths) PBIN=$2; shift ;;
    --top) TOP=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --deadline) DEADLINE=$2; shift ;;
    *=*) HEADER[${1%%=*}]=${1#*=} ;;
    *) usage ;;
  esac
  shift
done
[ -n "$RES" ] && [ -d "$RES" ] && [ -n "$TOP" ] && [ -n "$ROUNDS" ] || usage
case "$ROUNDS$TOP$DEADLINE" in *[!0-9]*) usage ;; esac
read -r -a EXE_BENCH <<<"${EXE_BENCH:-python3 bench/paths/exe_bench.py}"

# each case id (CASE_DTYPE) with its bench program, from the executables' table
programs=$(python3 bench/paths/exe_bench.py --list --programs) || { echo "recheck: bench/paths/exe_bench.py --list failed" >&2; exit 0; }
program_of() { # program_of CASE_ID: the bench program that has the case
  awk -v id="$1" '$1 == id { print $2; found = 1 } END { exit !found }' <<<"$programs"
}
late() { [ "$DEADLINE" -gt 0 ] && [ "$(date +%s)" -ge "$DEADLINE" ]; }
runs=0 failed=0
one() { # one ROUND COMMAND...: the command's records (it writes $RES/recheck.tmp), tagged, into records.jsonl
  local r=$1
  shift
  rm -f "$RES/recheck.tmp"
  runs=$((runs + 1))
  "$@" </dev/null >/dev/null || { failed=$((failed + 1)); echo "recheck: failed: $*" >&2; }
  [ -f "$RES/recheck.tmp" ] && sed "s/}\$/, \"recheck\": $r}/" "$RES/recheck.tmp" >>"$RES/records.jsonl"
  rm -f "$RES/recheck.tmp"
}

plan=$(python3 bench/report.py "$RES" --recheck-plan) || { echo "recheck: bench/report.py --recheck-plan failed" >&2; exit 0; }
echo "recheck: $(echo "$plan" | grep -c .) near verdicts${plan:+: $(echo "$plan" | paste -sd';')}" >&2
progs=()
for id in $(echo "$plan" | awk '$1 == "cub" { print $2 "_" $3 }' | sort -u); do
  p=$(program_of "$id") && progs+=("$p")
done
for round in $(seq 1 "$ROUNDS"); do
  [ -n "$plan" ] || break
  for c in $(echo "$plan" | awk '$1 == "cub" { print $2 }' | sort -u); do
    late && break 2
    one "$round" "$CUB" --case "$c" --sizes "$TOP" --out "$RES/recheck.tmp"
  done
  for p in $(printf '%s\n' "${progs[@]}" | sort -u); do
    late && break 2
    [ -n "${HEADER[$p]:-}" ] || { echo "recheck: no header driver for $p" >&2; continue; }
    one "$round" "${HEADER[$p]}" --sizes "$TOP" --out "$RES/recheck.tmp"
  done
  while read -r kind c dt m; do
    [ "$kind" = paths ] || continue
    late && break 2
    p=$(program_of "${c}_$dt") || { echo "recheck: no program for ${c}_$dt" >&2; continue; }
    # the path's row length alone (rows), else the lib and exe parts' arguments (bench/run.sh)
    rows=(env) ml=1024,32768
    [ "${m:-0}" -gt 0 ] && rows=(env BENCH_ROW_LENGTH="$m") ml=$m
    [ -n "${HEADER[$p]:-}" ] && one "$round" "${rows[@]}" "${HEADER[$p]}" --sizes "$TOP" --out "$RES/recheck.tmp"
    one "$round" "$PBIN/lib_$p" --case "${c}_$dt" --log2 "$TOP" --m "$ml" --out "$RES/recheck.tmp"
    one "$round" "${EXE_BENCH[@]}" --bin "$PBIN" --log2 "$TOP" --runs 20 --m "$ml" --cases "${c}_$dt" --out "$RES/recheck.tmp"
  done <<<"$plan"
done
echo "$runs runs, $failed failed"
