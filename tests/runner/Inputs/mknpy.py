"""Write the .npy files the runner tests read: good ones of every dtype and
version, and broken ones for each class of bad input. Usage: mknpy.py DIR"""
import os
import sys

import numpy as np

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
p = lambda name: os.path.join(d, name)

np.save(p("a.npy"), np.float32(2.0))
np.save(p("x.npy"), np.array([1, 2, 3], np.float32))
np.save(p("y.npy"), np.array([10, 20, 30], np.float32))
np.save(p("y4.npy"), np.array([1, 2, 3, 4], np.float32))
np.save(p("x_f64.npy"), np.array([1, 2, 3], np.float64))
np.save(p("x_2d.npy"), np.ones((3, 2), np.float32))
np.save(p("m.npy"), np.arange(6, dtype=np.int32).reshape(2, 3))
np.save(p("m_fortran.npy"), np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)))
np.save(p("x_be.npy"), np.array([1, 2, 3], ">f4"))
np.save(p("x_c8.npy"), np.array([1, 2, 3], np.complex64))
np.save(p("x_3d.npy"), np.zeros((1, 2, 3), np.float32))
np.save(p("px.npy"), np.array([1, 2], np.float32))
np.save(p("py.npy"), np.array([5, 6], np.float32))
np.save(p("s_f64.npy"), np.array([0.5, 0.25, 2.0], np.float64))
np.save(p("b.npy"), np.array([True, False, True]))
for v in [(1, 0), (2, 0), (3, 0)]:
    with open(p("x_v%d.npy" % v[0]), "wb") as f:
        np.lib.format.write_array(f, np.array([1.5, 2.5, 3.5], np.float64), version=v)
good = open(p("x.npy"), "rb").read()
open(p("x_truncated.npy"), "wb").write(good[:-2])
open(p("x_long.npy"), "wb").write(good + b"\0\0\0\0")
open(p("x_header_cut.npy"), "wb").write(good[:30])
open(p("not_npy.npy"), "wb").write(b"this is not a numpy file at all\n")
open(p("x_v9.npy"), "wb").write(good[:6] + b"\x09\x00" + good[8:])
hdr = good[10:good.index(b"\n") + 1]
def with_header(name, text):
    text = text.ljust(len(hdr) - 1) + "\n"
    open(p(name), "wb").write(good[:8] + len(text).to_bytes(2, "little") + text.encode() + good[10 + len(hdr):])
with_header("x_nokey.npy", "{'descr': '<f4', 'shape': (3,), }")
with_header("x_extrakey.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}")
with_header("x_badshape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3,-1), }")
