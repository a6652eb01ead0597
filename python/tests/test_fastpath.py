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


# ---- the whole call, against a recording thunk (no GPU) ----------------------

THUNK = r"""
#include <stdint.h>
#include <string.h>
typedef struct { int kind, rank; int64_t shape[2]; uint64_t data; union { int64_t i64; double f64; } scalar; } V;
V seen_args[8], seen_results[8];
void *seen_lib, *seen_stream;
int status, nargs = 3, nresults = 1;
int thunk(void *lib, void *stream, const V *args, V *results) {
    seen_lib = lib; seen_stream = stream;
    memcpy(seen_args, args, nargs * sizeof(V));
    memcpy(seen_results, results, nresults * sizeof(V));
    for (int i = 0; i < nresults; i++) { if (results[i].rank == 0) { results[i].scalar.i64 = 42; } }
    return status;
}
"""


class _Device:
    id = 0


class _Memory:
    def __init__(self, ptr):
        self.ptr = ptr


class FakeCupy(FakeArray):
    """A CuPy array as LibEntry sees one: CAI plus .device.id and .data.ptr."""

    def __init__(self, shape, typestr="<f4", ptr=0x1000, stream=None):
        super().__init__(shape, typestr, ptr=ptr, stream=stream)
        self.device = _Device()
        self.data = _Memory(ptr)
        self.shape = tuple(shape)


@pytest.fixture(scope="module")
def thunk(tmp_path_factory):
    import ctypes
    import subprocess
    d = tmp_path_factory.mktemp("thunk")
    (d / "t.c").write_text(THUNK)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(d / "t.so"), str(d / "t.c")], check=True)
    return ctypes.CDLL(str(d / "t.so"))


def recording_entry(module, name, thunk, allocated):
    import ctypes
    entry = module.entries[name]
    params, results, result_tuple = _cudamodule.fast_spec(entry)

    def empty(shape, dtype):
        a = FakeCupy(shape, dtype.str, ptr=0x9000 + 0x100 * len(allocated))
        allocated.append((shape, dtype))
        return a

    hooks = {"cupy_type": FakeCupy, "cupy_empty": empty, "cupy_device": lambda: 0,
             "cupy_kwargs": [{"dtype": gpuc._types.DTYPES[k]} for k in gpuc._types.KINDS]}

    def on_error():
        raise gpuc.ExecutionError(name, "recorded failure")

    call = ctypes.cast(thunk.thunk, ctypes.c_void_p).value
    return _gpuc.LibEntry(call, 0xabc0, 0, params, results, result_tuple, hooks, on_error)


def test_call_fills_values_allocates_results_and_runs_the_thunk(module, thunk):
    import ctypes
    allocated = []
    e = recording_entry(module, "saxpy", thunk, allocated)
    ctypes.c_int.in_dll(thunk, "status").value = 0
    x, y = FakeCupy((8,), ptr=0x1000, stream=0x77), FakeCupy((8,), ptr=0x2000)
    r = e(3.0, x, y)
    assert isinstance(r, FakeCupy) and r.shape == (8,) and allocated == [((8,), np.dtype(np.float32))]
    assert ctypes.c_void_p.in_dll(thunk, "seen_lib").value == 0xabc0
    assert ctypes.c_void_p.in_dll(thunk, "seen_stream").value == 0x77
    res = (ctypes.c_int64 * 6).in_dll(thunk, "seen_results")      # kind, rank | shape | data
    assert list(res[:4]) == [5 | (1 << 32), 8, 0, 0x9000]
    # CuPy without a CAI stream (CUPY_CUDA_ARRAY_INTERFACE_EXPORT_VERSION=2): its stream is the Python path's
    assert e(3.0, FakeCupy((8,)), y) is _gpuc.FALLBACK
    # a size mismatch: nothing allocated, nothing run (the Python path reports it)
    assert e(3.0, FakeCupy((8,), stream=1), FakeCupy((9,))) is _gpuc.FALLBACK
    assert len(allocated) == 1


def test_call_scalar_and_tuple_results_and_errors(module, thunk):
    import ctypes
    allocated = []
    ctypes.c_int.in_dll(thunk, "nargs").value = 4
    ctypes.c_int.in_dll(thunk, "nresults").value = 2
    try:
        e = recording_entry(module, "pick", thunk, allocated)
        ctypes.c_int.in_dll(thunk, "status").value = 0
        arr, k = e(5, False, FakeCupy((4, 3), stream=1), FakeCupy((4,), "<u4"))
        assert isinstance(arr, FakeCupy) and arr.shape == (4,) and k == 42 and type(k) is int
        ctypes.c_int.in_dll(thunk, "status").value = 3
        with pytest.raises(gpuc.ExecutionError, match="pick: recorded failure"):
            e(5, False, FakeCupy((4, 3), stream=1), FakeCupy((4,), "<u4"))
    finally:
        ctypes.c_int.in_dll(thunk, "nargs").value = 3
        ctypes.c_int.in_dll(thunk, "nresults").value = 1
        ctypes.c_int.in_dll(thunk, "status").value = 0


def test_call_cost(module, thunk, capsys):
    """Host cost of a whole fast call (decode, allocate through a Python allocator, call)
    against the Python path's argument handling alone (Entry.__call__ up to _run)."""
    e = recording_entry(module, "saxpy", thunk, [])
    x, y = FakeCupy((1024,), stream=0x10), FakeCupy((1024,))
    n = 50000
    fast = min(timeit.repeat(lambda: e(2.0, x, y), number=n, repeat=3)) / n * 1e6
    entry = module.entries["saxpy"]
    run = module._run
    module._run = lambda *a, **k: None
    try:
        slow = min(timeit.repeat(lambda: entry(2.0, x, y), number=n, repeat=3)) / n * 1e6
    finally:
        module._run = run
    with capsys.disabled():
        print("\nLibEntry call (saxpy, fake CuPy arrays, recording thunk): %.3f us; "
              "Python path's argument handling alone (no LibValues, no ctypes call): %.3f us" % (fast, slow))
    assert fast > 0 and slow > 0
