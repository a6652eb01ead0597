"""The array of Point structs (seeds/001): a NumPy structured array in, one
out; each point's x doubled and y moved up by one (examples/points.gdsl)."""
import pathlib

import numpy as np

import gpuc

m = gpuc.compile(pathlib.Path(__file__).resolve().parents[1] / "points.gdsl")
ps = np.zeros(4, dtype=[("x", np.float32), ("y", np.float32)])
ps["x"] = [1, 2, 3, 4]
ps["y"] = [0, -1, 5, 2]
moved = m.move(ps)
assert np.array_equal(moved["x"], ps["x"] * 2) and np.array_equal(moved["y"], ps["y"] + 1)
print(moved)
c = m.centroid(ps)                      # a struct result is a dict
assert abs(c["x"] - ps["x"].mean()) < 1e-6 and abs(c["y"] - ps["y"].mean()) < 1e-6
print("centroid:", c, "nearest to (3, 4):", m.nearest(ps, {"x": 3.0, "y": 4.0}))
print("points: ok on the %s backend" % m.backend)
