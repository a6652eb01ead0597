#!/usr/bin/env bash
# Install what building and testing gpuc needs, only where it is missing:
# a C toolchain, CMake + Ninja, flex and bison, Debian's llvm-16-tools (FileCheck,
# not, lit), Python's numpy (reference results in execution tests) and venv
# (the Python package's tests install it into build/python-venv).
set -euo pipefail
need=()
command -v cc      >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v cmake   >/dev/null 2>&1 || need+=(cmake)
command -v ninja   >/dev/null 2>&1 || need+=(ninja-build)
command -v flex    >/dev/null 2>&1 || need+=(flex)
command -v bison   >/dev/null 2>&1 || need+=(bison)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v pkg-config >/dev/null 2>&1 || need+=(pkgconf)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
[ -x /usr/lib/llvm-16/bin/FileCheck ] && [ -f /usr/lib/llvm-16/build/utils/lit/lit.py ] || need+=(llvm-16-tools)
if [ ${#need[@]} -gt 0 ]; then
  echo "gpuc: installing ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
if ! python3 -c 'import numpy' >/dev/null 2>&1; then
  echo "gpuc: installing numpy" >&2
  python3 -m pip install -q numpy >&2
fi
