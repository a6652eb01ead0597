#!/usr/bin/env bash
# Check that a refactor leaves gpuc's output unchanged: save every emitted
# form of every .gdsl file in the repository, then diff two such saves.
#
# Usage:
#   scripts/compare_emit.sh save GPUC OUT_DIR   emit into OUT_DIR (emptied first)
#   scripts/compare_emit.sh diff DIR_A DIR_B    print "N files identical, M differ",
#                                               exit 1 on any difference
#
# What `save` writes, for each .gdsl file under examples/ stdlib/ bench/ tests/
# (named by its path with / as __):
#   NAME.c, NAME.cu, NAME.ir     --emit=c, --emit=cuda, --emit=ir: standard
#                                output, then "exit N" and the standard error,
#                                so files that do not compile pin their
#                                diagnostics instead
#   NAME.dK.c/.cu/.ir            the same with the K-th distinct set of
#                                `//! define` lines of the file's test and bench
#                                blocks, passed as -D ENTRY.PARAM=VALUE
#   NAME.lib.h, NAME.lib.json    --emit=lib's header and manifest (examples/ only:
#                                it runs the C compiler)
# Typical refactor loop:
#   scripts/build.sh build-before && scripts/compare_emit.sh save build-before/driver/gpuc /tmp/before
#   ... edit, scripts/build.sh ...
#   scripts/compare_emit.sh save build/driver/gpuc /tmp/after && scripts/compare_emit.sh diff /tmp/before /tmp/after
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# emit_one GPUC FILE OUT_BASE [ -D ... ]: the three text forms of one file.
emit_one() {
    local gpuc=$1 file=$2 base=$3; shift 3
    local kind ext
    for kind in c cuda ir; do
        case $kind in c) ext=c ;; cuda) ext=cu ;; ir) ext=ir ;; esac
        local errf; errf=$(mktemp)
        "$gpuc" "$@" --emit=$kind "$file" >"$base.$ext" 2>"$errf"
        echo "exit $?" >>"$base.$ext"
        cat "$errf" >>"$base.$ext"
        rm -f "$errf"
    done
}

# define_sets FILE: one line per distinct set of block defines, as -D arguments.
define_sets() {
    awk '
        function flush() { if (set != "") print set; set = "" }
        /^\/\/![ \t]*(test|bench)[ \t]/ {
            flush()
            entry = $0; sub(/^\/\/![ \t]*(test|bench)[ \t]+/, "", entry)
            sub(/[: \t].*$/, "", entry)
            next
        }
        /^\/\/![ \t]*define[ \t]/ {
            line = $0; sub(/^\/\/![ \t]*define[ \t]+/, "", line)
            name = line; sub(/[ \t]*=.*$/, "", name)
            value = line; sub(/^[^=]*=[ \t]*/, "", value); sub(/[ \t]+$/, "", value)
            set = set (set == "" ? "" : " ") "-D " entry "." name "=" value
            next
        }
        /^\/\/!/ { next }
        { flush() }
        END { flush() }
    ' "$1" | sort -u
}

save() {
    local gpuc out
    gpuc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); out=$2
    [ -x "$gpuc" ] || { echo "compare_emit: $1 is not an executable" >&2; exit 2; }
    rm -rf "$out"; mkdir -p "$out"; out=$(cd "$out" && pwd)
    cd "$root"
    local count=0 file base k set
    while IFS= read -r file; do
        base=$out/$(echo "$file" | sed 's|/|__|g')
        emit_one "$gpuc" "$file" "$base"
        k=0
        while IFS= read -r set; do
            k=$((k + 1))
            # shellcheck disable=SC2086 # the set is a list of -D arguments
            emit_one "$gpuc" "$file" "$base.d$k" $set
        done < <(define_sets "$file")
        case $file in
        examples/*)
            local tmp; tmp=$(mktemp -d)
            local name; name=$(basename "$file" .gdsl)
            if "$gpuc" --emit=lib -o "$tmp/lib$name" "$file" 2>/dev/null; then
                cp "$tmp/$name.h" "$base.lib.h"; cp "$tmp/$name.json" "$base.lib.json"
            else
                echo "lib failed" >"$base.lib.h"
            fi
            rm -rf "$tmp"
            ;;
        esac
        count=$((count + 1))
    done < <(find examples stdlib bench tests -name '*.gdsl' | LC_ALL=C sort)
    echo "saved $count .gdsl files ($(ls "$out" | wc -l) outputs) into $out"
}

diff_dirs() {
    local a=$1 b=$2 same=0 differ=0 f
    [ -d "$a" ] && [ -d "$b" ] || { echo "compare_emit: both folders must exist" >&2; exit 2; }
    while IFS= read -r f; do
        if [ ! -f "$a/$f" ] || [ ! -f "$b/$f" ]; then
            echo "only in one folder: $f"; differ=$((differ + 1))
        elif cmp -s "$a/$f" "$b/$f"; then
            same=$((same + 1))
        else
            echo "differs: $f"; differ=$((differ + 1))
        fi
    done < <( (ls "$a"; ls "$b") | LC_ALL=C sort -u)
    echo "$same files identical, $differ differ"
    [ "$differ" -eq 0 ]
}

case ${1:-} in
save) [ $# -eq 3 ] || usage; save "$2" "$3" ;;
diff) [ $# -eq 3 ] || usage; diff_dirs "$2" "$3" ;;
*) usage ;;
esac
