#!/usr/bin/env bash
# emit_compare.sh: emit every .gdsl of the repository with one gpuc into a
# folder, so that two builds can be diffed (a refactoring must not change the
# generated code or any diagnostic).
# Usage: scripts/emit_compare.sh GPUC OUT_DIR     then: diff -r OUT_A OUT_B
# For each file F under examples/ stdlib/ bench/ tests/ and each kind K of
# $KINDS (default "c cuda ir"), OUT_DIR/F.K holds the standard output,
# OUT_DIR/F.K.err the standard error and the exit status. Run from the
# repository root (paths in diagnostics are relative to it).
set -uo pipefail
gpuc=$(realpath "$1")
out=$2
kinds=${KINDS:-c cuda ir}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$out"
n=0
while IFS= read -r f; do
    mkdir -p "$out/$(dirname "$f")"
    for k in $kinds; do
        "$gpuc" --emit="$k" "$f" >"$out/$f.$k" 2>"$out/$f.$k.err"
        echo "exit status $?" >>"$out/$f.$k.err"
    done
    n=$((n + 1))
done < <(find examples stdlib bench tests -name '*.gdsl' | LC_ALL=C sort)
echo "emit_compare: $n files x ($kinds) into $out"
