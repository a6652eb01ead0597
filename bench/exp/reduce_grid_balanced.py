#!/usr/bin/env python3
"""bench/exp/reduce_grid_balanced.py: the generated reductions
(bench/gen/reduce.cu) with a balanced grid, to see whether the last round
of chunks costs the reductions their lead over CUB on the H200 (an
experiment, not gpuc's code). The launcher takes one wave of resident
blocks (backend/cuda/launch.c, GPUC_REDUCE_WAVES): at 2^28 f32 that is 1056
blocks for 65536 chunks of 4096, 62 rounds and a 63rd that only 64 blocks
take. The balanced grid keeps the rounds (ceil(chunks / wave)) and spreads
the chunks evenly over them: ceil(chunks / rounds) blocks, 1041 there, so
the last round is 95% full.
Usage: reduce_grid_balanced.py GEN_REDUCE_CU OUT_CU"""
import sys

OLD = "const unsigned g_grid = (unsigned)(g_blocks < 1 ? 1 : g_blocks < g_wave ? g_blocks : g_wave);"
NEW = ("const int64_t g_rounds = (g_blocks + g_wave - 1) / g_wave;  /* reduce_grid_balanced.py */\n"
       "        const unsigned g_grid = (unsigned)(g_blocks < 1 ? 1 : (g_blocks + g_rounds - 1) / g_rounds);")
if len(sys.argv) != 3:
    sys.exit(__doc__)
src = open(sys.argv[1]).read()
n = src.count(OLD)
if n == 0:
    sys.exit("reduce_grid_balanced.py: no reduction grid line in " + sys.argv[1])
open(sys.argv[2], "w").write(src.replace(OLD, NEW))
print("reduce_grid_balanced: %d launches" % n)
