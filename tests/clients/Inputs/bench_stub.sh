#!/bin/sh
# bench_stub.sh SRC CASE DTYPE US CALLS ARGS...: a stand-in for a bench
# binary (bench_recheck.test): appends its name and ARGS to the file CALLS and
# writes one record of SRC's time US for CASE DTYPE at 2^28 to the file after
# --out in ARGS.
src=$1 case=$2 dtype=$3 us=$4 calls=$5
shift 5
echo "$src $*" >>"$calls"
out=""
while [ $# -gt 0 ]; do
  [ "$1" = --out ] && out=$2
  shift
done
[ -n "$out" ] || { echo "bench_stub.sh: no --out" >&2; exit 2; }
echo "{\"src\": \"$src\", \"case\": \"$case\", \"dtype\": \"$dtype\", \"n\": 268435456, \"m\": 0, \"us\": $us, \"check\": \"ok\"}" >>"$out"
