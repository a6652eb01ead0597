"""Vector add (the PyCUDA notes' first kernel, seeds/000), from Python: the
kernel is a .gdsl string compiled at run time; checked against NumPy."""
import numpy as np

import gpuc

m = gpuc.compile("entry add(x: f32[n], y: f32[n]) -> f32[n] = x + y;")
rng = np.random.default_rng(0)
x = rng.random(100_000, dtype=np.float32)
y = rng.random(100_000, dtype=np.float32)
z = m.add(x, y)
assert np.array_equal(z, x + y)
print("vector_add: ok on the %s backend (%d elements)" % (m.backend, len(z)))
