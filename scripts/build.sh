#!/usr/bin/env bash
# Configure and build gpuc into build/ (or $1), with extra CMake options after it.
# Usage: scripts/build.sh [BUILD_DIR] [-DOPTION=VALUE ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}; shift || true
# Configure every time (quick when nothing changed): a new top-level folder
# with a CMakeLists.txt is only picked up by a fresh configure.
gen=(); [ -f "$dir/CMakeCache.txt" ] || gen=(-G Ninja)
cmake -S "$root" -B "$dir" "${gen[@]}" "$@" >/dev/null
cmake --build "$dir" -- -j"$(nproc)" >&2
