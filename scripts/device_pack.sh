#!/usr/bin/env bash
# device_pack.sh: on the build machine, pack what the GPU machine needs into
# .pack/ (ignored), gzip-compressed, so that it fits the device tool's carry
# (64 MiB with the working tree; unpacked, .device/ with its warmed kernel
# cache is about 130 MB and bench/gen/ with prepared binaries about 47 MB):
#   .pack/device.tgz  .device/ (tests/gpu/prepare.sh: the install prefix, the
#                     kernel cache, the prepared executable and sources)
#   .pack/gen.tgz     bench/gen/ (bench/gen.sh, bench/run.sh --prepare)
#   .pack/bin.tgz     bench/bin/ (the bench/try_* experiments' binaries), only
#                     when asked for: scripts/device_pack.sh device gen bin
# Each is packed when its folder exists. Then, through the device tool with
# carry [".pack"] (and ".whl" for the Python package), the command on the
# GPU machine starts with
#   bash scripts/device_unpack.sh && ...
# Usage: scripts/device_pack.sh [device|gen ...]   (default: both)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
what=("$@")
[ ${#what[@]} -gt 0 ] || what=(device gen)
mkdir -p .pack
for w in "${what[@]}"; do
  case $w in
    device) src=.device ;;
    gen) src=bench/gen ;;
    bin) src=bench/bin ;;
    *) echo "device_pack.sh: unknown part '$w' (expected device, gen or bin)" >&2; exit 2 ;;
  esac
  rm -f ".pack/$w.tgz"
  if [ -d "$src" ]; then
    tar czf ".pack/$w.tgz.tmp" "$src" && mv ".pack/$w.tgz.tmp" ".pack/$w.tgz"
    echo "device_pack: .pack/$w.tgz ($src): $(du -h ".pack/$w.tgz" | cut -f1)"
  else
    echo "device_pack: $src missing: run $(case $w in device) echo tests/gpu/prepare.sh ;; gen) echo bench/gen.sh ;; *) echo 'a bench/try_*.sh --prepare' ;; esac) first" >&2
    exit 1
  fi
done
# what travels: the packs, the wheels, and the tracked and untracked files git does not ignore
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 du -cb 2>/dev/null | tail -n 1 | cut -f1)
packs=$(du -cb .pack/*.tgz $( [ -d .whl ] && echo .whl ) | tail -n 1 | cut -f1)
total=$(( (tree + packs) / 1048576 ))
echo "device_pack: the working tree and the packs come to $total MiB of the device tool's 64"
[ "$total" -lt 64 ] || { echo "device_pack: over the device tool's 64 MiB: pack fewer parts" >&2; exit 1; }
