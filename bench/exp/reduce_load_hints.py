#!/usr/bin/env python3
"""bench/exp/reduce_load_hints.py: variants of the generated reductions
(bench/gen/reduce.cu) whose 16-byte vector loads carry a PTX cache
qualifier, to see whether any gets the reductions at 2^28 ahead of CUB on
the H200, where the last whole runs (2026-11-28) had them tied within
0.2% (an experiment, not gpuc's code):
  base    as generated (plain loads through a const __restrict__ pointer)
  l2_256  ld.global.nc.L2::256B (the L2 fetches 256 bytes at a miss)
  l2_128  ld.global.nc.L2::128B
  na256   ld.global.nc.L1::no_allocate.L2::256B
It edits the generated text (each `((const gpuc_v16_T *)v_X)[g_vN]`), so it
fits the code of the commit it was written for (main at 4522bd9).
Usage: reduce_load_hints.py GEN_REDUCE_CU OUT_DIR   (writes OUT_DIR/NAME.cu)"""
import os
import re
import sys

VARIANTS = {
    "base": None,
    "l2_256": "ld.global.nc.L2::256B",
    "l2_128": "ld.global.nc.L2::128B",
    "na256": "ld.global.nc.L1::no_allocate.L2::256B",
}
LOAD = re.compile(r"\(\(const (gpuc_v16_\w+) \*\)(v_\w+)\)\[(g_v\d+)\]")


def prelude(op):
    return ("/* reduce_load_hints.py: every 16-byte vector load as %s */\n"
            "template <typename V> static __device__ __forceinline__ V gpuc_ldh(const V *p) {\n"
            "    unsigned a, b, c, d;\n"
            "    asm volatile(\"%s.v4.u32 {%%0, %%1, %%2, %%3}, [%%4];\" : \"=r\"(a), \"=r\"(b), \"=r\"(c), \"=r\"(d) : \"l\"(p));\n"
            "    const unsigned w[4] = {a, b, c, d};\n"
            "    V v;\n"
            "    memcpy(&v, w, sizeof v);\n"
            "    return v;\n"
            "}\n" % (op, op))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src = open(sys.argv[1]).read()
    os.makedirs(sys.argv[2], exist_ok=True)
    n = len(LOAD.findall(src))
    if n == 0:
        sys.exit("reduce_load_hints.py: no 16-byte vector loads in " + sys.argv[1])
    # the prelude goes after the file's vector types, before the first kernel
    at = src.index('\nextern "C" __global__') + 1
    for name, op in VARIANTS.items():
        out = src
        if op:
            out = src[:at] + prelude(op) + LOAD.sub(r"gpuc_ldh((const \1 *)\2 + \3)", src[at:])
        open(os.path.join(sys.argv[2], name + ".cu"), "w").write(out)
    print("reduce_load_hints: %d loads in %d variants" % (n, len(VARIANTS)))


main()
