"""The metaprogrammed tiled float64 matrix product (seeds/002), its block
size a template parameter: examples/matmul.gdsl with TILE set from Python.
Where PyCUDA pasted BLOCK_SIZE into CUDA source with % formatting, here it
is `defines={"TILE": ...}`; a 33x33 tile is a compile error, not a launch
failure."""
import pathlib
import sys

import numpy as np

import gpuc

src = pathlib.Path(__file__).resolve().parents[1] / "matmul.gdsl"
tile = int(sys.argv[1]) if len(sys.argv) > 1 else 16
m = gpuc.compile(src, defines={"TILE": tile})
rng = np.random.default_rng(2)
A = rng.random((256, 256))
B = rng.random((256, 256))
C = m.matmul(A, B)
err = np.abs(C - A @ B).max()
assert err < 1e-9, err
print("matmul: TILE=%d: ok on the %s backend, max |C - A@B| = %.2e" % (tile, m.backend, err))
try:
    gpuc.compile(src, defines={"TILE": 33})
except gpuc.CompileError as e:
    print("TILE=33 is rejected at compile time:")
    print(e)
