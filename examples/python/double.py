"""An array times 2 (the PyCUDA notebook's GPUArray doubling, seeds/002)."""
import numpy as np

import gpuc

m = gpuc.compile("entry double(a: f64[n]) -> f64[n] = a * 2.0;")
a = np.random.default_rng(1).random(5)
print(a)
print(m.double(a))
assert np.array_equal(m.double(a), a * 2)
print("double: ok on the %s backend" % m.backend)
