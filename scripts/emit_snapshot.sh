#!/usr/bin/env bash
# Write every --emit text kind of the bench, shard-test and example programs
# into a folder, to diff before and after a change that must not change what
# gpuc generates (a refactor). Usage:
#   scripts/emit_snapshot.sh GPUC OUT_DIR     then   diff -r OLD_DIR NEW_DIR
# A program a kind refuses (e.g. a shard kind on an unshardable program)
# records its error text and exit status, so a change in refusals shows too.
set -uo pipefail
gpuc=$1; out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
cd "$root"
for file in bench/programs/*.gdsl tests/shard/*.gdsl examples/*.gdsl \
        tests/gpu/blocks/*.gdsl tests/codegen/*.gdsl; do
    for kind in cuda cuda-shard c c-shard program; do
        name=$(echo "$file" | tr / _).$kind
        "$gpuc" --emit="$kind" "$file" >"$out/$name" 2>"$out/$name.err"
        echo "exit $?" >>"$out/$name.err"
    done
done
echo "$(ls "$out" | wc -l) files in $out"
