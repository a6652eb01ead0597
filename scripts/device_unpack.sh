#!/usr/bin/env bash
# device_unpack.sh: on the GPU machine, from the repository root, unpack what
# scripts/device_pack.sh packed into .pack/ (.device/, bench/gen/). Exits
# non-zero, naming the pack, when one is missing or broken.
set -euo pipefail
cd "$(dirname "$0")/.."
n=0
for p in .pack/device.tgz .pack/gen.tgz .pack/bin.tgz; do
  [ -f "$p" ] || continue
  tar xzf "$p" || { echo "device_unpack: $p could not be unpacked" >&2; exit 1; }
  n=$((n + 1))
done
[ $n -gt 0 ] || { echo "device_unpack: no pack in .pack/: run scripts/device_pack.sh on the build machine and carry .pack" >&2; exit 1; }
echo "device_unpack: $n pack(s) unpacked"
