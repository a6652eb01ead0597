"""The CUDA backend's hot path (gpuc._gpuc.LibEntry, python/src/_gpuc.c) without
a GPU: a library is built for sm_90 here and LibEntry.decode shows what a call
would hand the entry's thunk, for fake device arrays that expose
__cuda_array_interface__. Every case the C path does not take exactly as the
Python path would must answer FALLBACK (the Python path then gives the error).
Also the per-call cost of decoding (printed with -s)."""

import timeit

import numpy as np
import pytest

import gpuc
from gpuc import _cudamodule, _gpuc

SRC = """
entry saxpy(a: f32, x: f32[n], y: f32[n]) -> f32[n] = a * x + y;
entry total(x: f64[n]) -> f64 = sum(x);
entry pick(k: i32, flag: bool, m: f32[n][3], w: u32[n]) -> (f32[n], i64) = (map(|v| v as f32, w), k as i64);
entry first(n: i64, x: i64[n]) -> i64[n] = x;
"""


class FakeArray:
    """A device array as far as __cuda_array_interface__ goes (never dereferenced)."""

    def __init__(self, shape, typestr, ptr=0x7f0000001000, strides=None, stream=None, version=3):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr, "data": (ptr, False),
                                         "strides": strides, "version": version}
        if stream is not None:
            self.__cuda_array_interface__["stream"] = stream


@pytest.fixture(scope="module")
def module():
    return gpuc.compile(SRC, backend="cuda", arch="sm_90")


def lib_entry(module, name, call=0):
    """The LibEntry the module would install after a first call (lib and call 0: decode only)."""
    entry = module.entries[name]
    params, results, result_tuple = _cudamodule.fast_spec(entry)
    return _gpuc.LibEntry(call, 0, 0, params, results, result_tuple, _cudamodule.framework_hooks(0),
                          lambda: None)


def test_decode_saxpy(module):
    e = lib_entry(module, "saxpy")
    x = FakeArray((1024,), "<f4", ptr=0x1000, stream=0x5a5a)
    y = FakeArray((1024,), "<f4", ptr=0x2000)
    framework, device, stream, values, sizes = e.decode(2.5, x, y)
    assert (framework, device, stream) == ("cai", 0, 0x5a5a)   # the stream of the first array
    assert values == [(5, 0, 2.5), (5, 1, 1024, 0, 0x1000), (5, 1, 1024, 0, 0x2000)]
    assert sizes == {0: 1024}
    assert e.decode(2, x, y)[3][0] == (5, 0, 2.0)    # an int for an f32
    # the legacy default stream (1) and no stream are stream 0, as on the Python path
    assert e.decode(1.0, FakeArray((4,), "<f4", stream=1), FakeArray((4,), "<f4"))[2] == 0
    assert e.decode(1.0, FakeArray((4,), "<f4"), FakeArray((4,), "<f4"))[2] == 0


def test_decode_ranks_kinds_sizes_and_results(module):
    e = lib_entry(module, "pick")
    m = FakeArray((7, 3), "<f4", ptr=0x3000, strides=(12, 4))      # explicit C-contiguous strides
    w = FakeArray((7,), "<u4", ptr=0x4000)
    framework, _, _, values, sizes = e.decode(-3, True, m, w)
    assert values == [(1, 0, -3), (0, 0, True), (5, 2, 7, 3, 0x3000), (3, 1, 7, 0, 0x4000)]
    assert sizes == {0: 7}
    assert _cudamodule.fast_spec(module.entries["pick"])[2] is True     # a tuple result
    t = lib_entry(module, "total")
    assert t.decode(FakeArray((5,), "<f8"))[3] == [(6, 1, 5, 0, 0x7f0000001000)]


def test_size_parameter_binds_after_the_arrays(module):
    e = lib_entry(module, "first")
    assert e.decode(4, FakeArray((4,), "<i8"))[4] == {0: 4}
    assert e.decode(5, FakeArray((4,), "<i8")) is _gpuc.FALLBACK     # n = 5 but x has 4
    assert e.decode(-1, FakeArray((4,), "<i8")) is _gpuc.FALLBACK


@pytest.mark.parametrize("why, args", [
    ("dtype", (1.0, FakeArray((4,), "<f8"), FakeArray((4,), "<f4"))),
    ("big-endian", (1.0, FakeArray((4,), ">f4"), FakeArray((4,), "<f4"))),
    ("rank", (1.0, FakeArray((4, 1), "<f4"), FakeArray((4,), "<f4"))),
    ("size mismatch", (1.0, FakeArray((4,), "<f4"), FakeArray((5,), "<f4"))),
    ("empty", (1.0, FakeArray((0,), "<f4", ptr=0), FakeArray((0,), "<f4", ptr=0))),
    ("non-contiguous", (1.0, FakeArray((4,), "<f4", strides=(8,)), FakeArray((4,), "<f4"))),
    ("numpy array", (1.0, np.ones(4, np.float32), FakeArray((4,), "<f4"))),
    ("numpy scalar", (np.float32(1.0), FakeArray((4,), "<f4"), FakeArray((4,), "<f4"))),
    ("bool for f32", (True, FakeArray((4,), "<f4"), FakeArray((4,), "<f4"))),
    ("str for f32", ("1", FakeArray((4,), "<f4"), FakeArray((4,), "<f4"))),
    ("too few", (1.0, FakeArray((4,), "<f4"))),
    ("too many", (1.0, FakeArray((4,), "<f4"), FakeArray((4,), "<f4"), 3)),
    ("no stream int", (1.0, FakeArray((4,), "<f4", stream="s"), FakeArray((4,), "<f4"))),
])
def test_falls_back(module, why, args):
    assert lib_entry(module, "saxpy").decode(*args) is _gpuc.FALLBACK, why


@pytest.mark.parametrize("args", [
    (2 ** 31, True, FakeArray((2, 3), "<f4"), FakeArray((2,), "<u4")),       # i32 overflow
    (1, 1, FakeArray((2, 3), "<f4"), FakeArray((2,), "<u4")),                # int for bool
    (1, True, FakeArray((2, 4), "<f4"), FakeArray((2,), "<u4")),             # constant dimension 3
    (1, True, FakeArray((2, 3), "<f4", strides=(4, 8)), FakeArray((2,), "<u4")),   # Fortran order
])
def test_falls_back_pick(module, args):
    assert lib_entry(module, "pick").decode(*args) is _gpuc.FALLBACK


def test_call_without_a_thunk_falls_back_and_keywords_too(module):
    e = lib_entry(module, "saxpy")
    x = FakeArray((4,), "<f4")
    assert e(1.0, x, x) is _gpuc.FALLBACK            # call address 0: decode only
    assert e(1.0, x, y=x) is _gpuc.FALLBACK


def test_fallback_keeps_the_python_paths_errors(module):
    """A fake array the fast path declines reaches the Python path and its message."""
    fn = module.saxpy
    fn._fast = lib_entry(module, "saxpy")
    try:
        with pytest.raises(TypeError, match=r"argument 'x' must have dtype float32 \(f32\), got float64"):
            fn(1.0, FakeArray((4,), "<f8"), FakeArray((4,), "<f4"))
        with pytest.raises(ValueError, match="size mismatch"):
            fn(1.0, FakeArray((4,), "<f4"), FakeArray((5,), "<f4"))
    finally:
        fn._fast = None


def test_no_spec_for_struct_parameters():
    m = gpuc.compile("struct P { x: f32, y: f32 }\nentry norm(p: P[n]) -> f32[n] = map(|q| q.x * q.x + q.y * q.y, p);",
                     backend="cuda", arch="sm_90")
    assert _cudamodule.fast_spec(m.entries["norm"]) is None


def test_decode_cost(module, capsys):
    """Per-call cost of decode + validate for saxpy on fake CAI arrays (not asserted: printed)."""
    e = lib_entry(module, "saxpy")
    x, y = FakeArray((1024,), "<f4", stream=0x10), FakeArray((1024,), "<f4")
    n = 100000
    t = min(timeit.repeat(lambda: e.decode(2.0, x, y), number=n, repeat=3)) / n * 1e6
    with capsys.disabled():
        print("\nLibEntry.decode(saxpy, 2 fake CAI arrays): %.3f us per call" % t)
    assert t > 0
