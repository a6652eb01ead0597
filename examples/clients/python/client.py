#!/usr/bin/env python3
"""client.py: Python calling the shared library of vec.gdsl through ctypes
with NumPy arrays (gpuc --emit=lib vec.gdsl -o DIR/libvec; docs/library.md).

    python3 client.py DIR/libvec.so

Runs the entries on the GPU, checks them against NumPy, prints PASS (exit 0)
or what differs (exit 1); without a GPU prints the runtime's message and
exits 2. The functions of libgpuc_runtime.so (gpuc_status_name, ...) are
reached through the library's handle: libvec.so depends on it."""
import ctypes as C
import sys

import numpy as np

lib = C.CDLL(sys.argv[1])
P = C.c_void_p
lib.vec_last_error.restype = C.c_char_p
lib.gpuc_status_name.restype = C.c_char_p
lib.vec_new.argtypes = [P, C.POINTER(P)]
lib.vec_free.argtypes = [P]
for t in ("f32", "f64", "i64"):
    getattr(lib, "vec_%s_1d_new" % t).argtypes = [P, P, C.c_int64, C.POINTER(P)]
    getattr(lib, "vec_%s_1d_read" % t).argtypes = [P, P, P]
    getattr(lib, "vec_%s_1d_free" % t).argtypes = [P, P]
    getattr(lib, "vec_%s_1d_shape" % t).argtypes = [P]
    getattr(lib, "vec_%s_1d_shape" % t).restype = C.POINTER(C.c_int64)
lib.vec_saxpy.argtypes = [P, C.c_float, P, P, C.POINTER(P)]
lib.vec_norm2.argtypes = [P, P, C.POINTER(C.c_double)]
lib.vec_scale128.argtypes = [P, C.c_float, P, C.POINTER(P)]
lib.vec_move.argtypes = [P, P, P, C.POINTER(P), C.POINTER(P)]
lib.vec_pick.argtypes = [P, P, P, C.POINTER(P)]

KINDS = {np.float32: "f32", np.float64: "f64", np.int64: "i64"}


def check(status, what):
    if status != 0:
        raise RuntimeError("%s: %s: %s" % (what, lib.gpuc_status_name(status).decode(),
                                           lib.vec_last_error().decode()))


class Lib:
    """The library loaded in a context of its own; arrays to and from NumPy."""

    def __init__(self):
        self.h = P()
        st = lib.vec_new(None, C.byref(self.h))
        if st != 0:
            print("no GPU: %s: %s" % (lib.gpuc_status_name(st).decode(), lib.vec_last_error().decode()))
            sys.exit(2)

    def array(self, a):
        a = np.ascontiguousarray(a)
        out = P()
        check(getattr(lib, "vec_%s_1d_new" % KINDS[a.dtype.type])(self.h, a.ctypes.data, a.shape[0], C.byref(out)),
              "new")
        return (out, a.dtype.type)

    def numpy(self, arr, free=True):
        ptr, dtype = arr
        k = KINDS[dtype]
        n = getattr(lib, "vec_%s_1d_shape" % k)(ptr)[0]
        host = np.empty(n, dtype=dtype)
        check(getattr(lib, "vec_%s_1d_read" % k)(self.h, ptr, host.ctypes.data), "read")
        if free:
            self.free(arr)
        return host

    def free(self, arr):
        check(getattr(lib, "vec_%s_1d_free" % KINDS[arr[1]])(self.h, arr[0]), "free")

    def close(self):
        check(lib.vec_free(self.h), "vec_free")


def main():
    g = Lib()
    rng = np.random.default_rng(7)
    n = 1 << 20
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    xd = rng.standard_normal(n)
    bad = []

    def expect(name, got, want, rtol, atol=0.0):
        if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
            bad.append("%s: max abs error %g" % (name, np.max(np.abs(got - want)) if got.shape == want.shape else -1))

    dx, dy = g.array(x), g.array(y)
    out = P()
    check(lib.vec_saxpy(g.h, 2.5, dx[0], dy[0], C.byref(out)), "saxpy")
    expect("saxpy", g.numpy((out, np.float32)), np.float32(2.5) * x + y, 1e-6, 1e-5)
    check(lib.vec_scale128(g.h, -2.0, dx[0], C.byref(out)), "scale128")
    expect("scale128", g.numpy((out, np.float32)), np.float32(-2.0) * x, 0)
    mx, my = P(), P()
    check(lib.vec_move(g.h, dx[0], dy[0], C.byref(mx), C.byref(my)), "move")
    expect("move.x", g.numpy((mx, np.float32)), x * np.float32(2.0), 0)
    expect("move.y", g.numpy((my, np.float32)), y + np.float32(1.0), 0)
    idx = rng.integers(0, n, 1000, dtype=np.int64)
    di = g.array(idx)
    check(lib.vec_pick(g.h, dx[0], di[0], C.byref(out)), "pick")
    expect("pick", g.numpy((out, np.float32)), x[idx], 0)
    g.free(di)
    dd = g.array(xd)
    norm = C.c_double()
    check(lib.vec_norm2(g.h, dd[0], C.byref(norm)), "norm2")
    expect("norm2", np.array([norm.value]), np.array([np.sqrt(np.sum(xd * xd))]), 1e-12)
    g.free(dd)
    g.free(dx)
    g.free(dy)
    g.close()
    for b in bad:
        print("FAIL " + b)
    print("FAIL" if bad else "PASS")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
