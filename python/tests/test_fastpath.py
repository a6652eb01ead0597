"""The CUDA backend's hot path (gpuc._gpuc.LibEntry, python/src/_gpuc.c) without
a GPU: a library is built for sm_90 here and LibEntry.decode shows what a call
would hand the entry's thunk, for fake device arrays that expose
__cuda_array_interface__. Every case the C path does not take exactly as the
Python path would must answer FALLBACK (the Python path then gives the error).
Also the per-call cost of decoding (printed with -s)."""

import timeit
import types

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


def fake_hooks(device=0):
    """framework_hooks with the address -> device lookup of CAI objects faked (no GPU here)."""
    hooks = _cudamodule.framework_hooks(device)
    hooks["cai_device"] = lambda ptr: 1 if ptr == 0xd1 else 0
    return hooks


def lib_entry(module, name, call=0, hooks=None):
    """The LibEntry the module would install after a first call (lib and call 0: decode only;
    no fallback: a declined call returns FALLBACK)."""
    entry = module.entries[name]
    params, results, result_tuple = _cudamodule.fast_spec(entry)
    e = _gpuc.LibEntry()
    e.install(call, 0, 0, params, results, result_tuple, hooks or fake_hooks(), lambda: None)
    return e


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


def test_cai_device_comes_from_the_address(module):
    """A CAI object's device is its address's (cuPointerGetAttribute, faked here): device 1 is
    not the entry's, so the call is declined; an address CUDA does not know too."""
    e = lib_entry(module, "saxpy")
    assert e.decode(1.0, FakeArray((4,), "<f4", ptr=0xd1), FakeArray((4,), "<f4", ptr=0xd1))[1] == 1
    assert e(1.0, FakeArray((4,), "<f4", ptr=0xd1), FakeArray((4,), "<f4", ptr=0xd1)) is _gpuc.FALLBACK
    hooks = fake_hooks()

    def unknown(ptr):
        raise ValueError("not device memory")
    hooks["cai_device"] = unknown
    e = lib_entry(module, "saxpy", hooks=hooks)
    assert e.decode(1.0, FakeArray((4,), "<f4"), FakeArray((4,), "<f4")) is _gpuc.FALLBACK


def test_uninstalled_entry_calls_its_fallback(module):
    seen = []
    e = _gpuc.LibEntry(lambda *a, **k: seen.append((a, k)) or "python path")
    assert e(1, 2, y=3) == "python path" and seen == [((1, 2), {"y": 3})]
    assert e.decode(1.0) is _gpuc.FALLBACK
    with pytest.raises(TypeError, match="fallback must be callable"):
        _gpuc.LibEntry(3)


def test_module_attribute_is_a_lib_entry(module):
    """The entry attribute is the LibEntry itself (no Python frame before the C call), with
    help() text, repr, a signature, and the Python path as its fallback."""
    fn = module.saxpy
    assert isinstance(fn, _gpuc.LibEntry)
    assert "saxpy(a: f32, x: f32[n], y: f32[n]) -> f32[n]" in fn.__doc__
    assert repr(fn).startswith("<gpuc entry saxpy(")
    assert list(__import__("inspect").signature(fn).parameters) == ["a", "x", "y"]
    with pytest.raises(TypeError, match="argument 'x' must have dtype float32"):
        fn(1.0, np.ones(4, np.float64), np.ones(4, np.float32))


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
    fn = type(module.saxpy)(module.entries["saxpy"])    # a fresh attribute of the same class
    params, results, result_tuple = _cudamodule.fast_spec(module.entries["saxpy"])
    fn.install(0, 0, 0, params, results, result_tuple, fake_hooks(), lambda: None)
    with pytest.raises(TypeError, match=r"argument 'x' must have dtype float32 \(f32\), got float64"):
        fn(1.0, FakeArray((4,), "<f8"), FakeArray((4,), "<f4"))
    with pytest.raises(ValueError, match="size mismatch"):
        fn(1.0, FakeArray((4,), "<f4"), FakeArray((5,), "<f4"))


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


class _Memory:       # cupy.cuda.MemoryPointer
    def __init__(self, ptr):
        self.ptr = ptr
        self.device_id = 0


class _Stream:       # cupy.cuda.Stream
    def __init__(self, ptr):
        self.ptr = ptr


class FakeCupy:
    """A CuPy array as LibEntry reads one: .data.ptr, .data.device_id, .dtype,
    ._c_contiguous, .shape (no __cuda_array_interface__: that dict is what the
    C path avoids)."""

    cai_reads = 0   # how often __cuda_array_interface__ was built (the Python path reads it)

    def __init__(self, shape, typestr="<f4", ptr=0x1000, contiguous=True):
        self.data = _Memory(ptr)
        self.dtype = np.dtype(typestr)
        self.shape = tuple(shape)
        self._c_contiguous = contiguous

    @property
    def __cuda_array_interface__(self):
        FakeCupy.cai_reads += 1
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.data.ptr, False), "version": 3,
                "strides": None if self._c_contiguous else (8,), "stream": 1}


@pytest.fixture(scope="module")
def thunk(tmp_path_factory):
    import ctypes
    import subprocess
    d = tmp_path_factory.mktemp("thunk")
    (d / "t.c").write_text(THUNK)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(d / "t.so"), str(d / "t.c")], check=True)
    return ctypes.CDLL(str(d / "t.so"))


def recording_entry(module, name, thunk, allocated, ptds=False):
    import ctypes
    entry = module.entries[name]
    params, results, result_tuple = _cudamodule.fast_spec(entry)

    class Allocating(FakeCupy):   # the type is the allocator: cupy.ndarray(shape, dtype)
        def __init__(self, shape, dtype=None, ptr=None, contiguous=True):
            if dtype is not None and not isinstance(dtype, str):   # an allocation by LibEntry
                ptr = 0x9000 + 0x100 * len(allocated)
                allocated.append((shape, dtype))
                dtype = dtype.str
            super().__init__(shape, dtype or "<f4", ptr=ptr or 0x1000, contiguous=contiguous)

    hooks = {"cupy_type": Allocating, "cupy_get_device": lambda: 0, "cupy_get_stream": lambda: stream[0],
             "cupy_dtypes": [gpuc._types.DTYPES[k] for k in gpuc._types.KINDS], "cupy_ptds": ptds}

    def on_error():
        raise gpuc.ExecutionError(name, "recorded failure")

    call = ctypes.cast(thunk.thunk, ctypes.c_void_p).value
    e = _gpuc.LibEntry()
    e.install(call, 0xabc0, 0, params, results, result_tuple, hooks, on_error)
    return e, Allocating


stream = [_Stream(0x77)]   # CuPy's current stream, as the fake hook returns it


def test_call_fills_values_allocates_results_and_runs_the_thunk(module, thunk):
    import ctypes
    allocated = []
    e, Cupy = recording_entry(module, "saxpy", thunk, allocated)
    ctypes.c_int.in_dll(thunk, "status").value = 0
    x, y = Cupy((8,), ptr=0x1000), Cupy((8,), ptr=0x2000)
    reads = FakeCupy.cai_reads
    r = e(3.0, x, y)
    assert FakeCupy.cai_reads == reads      # read through attributes, not the CAI dict
    assert isinstance(r, Cupy) and r.shape == (8,) and allocated == [((8,), np.dtype(np.float32))]
    assert ctypes.c_void_p.in_dll(thunk, "seen_lib").value == 0xabc0
    assert ctypes.c_void_p.in_dll(thunk, "seen_stream").value == 0x77   # CuPy's current stream
    res = (ctypes.c_int64 * 6).in_dll(thunk, "seen_results")      # kind, rank | shape | data
    assert list(res[:4]) == [5 | (1 << 32), 8, 0, 0x9000]
    args = (ctypes.c_int64 * 15).in_dll(thunk, "seen_args")       # 3 values of 5 words
    assert list(args[5:9]) == [5 | (1 << 32), 8, 0, 0x1000] and list(args[10:14]) == [5 | (1 << 32), 8, 0, 0x2000]
    # a size mismatch, a non-contiguous array, a wrong dtype: nothing allocated, nothing run
    assert e(3.0, Cupy((8,)), Cupy((9,))) is _gpuc.FALLBACK
    assert e(3.0, Cupy((8,), contiguous=False), y) is _gpuc.FALLBACK
    assert e(3.0, Cupy((8,), "<f8"), y) is _gpuc.FALLBACK
    assert e(3.0, Cupy((8,), ">f4"), y) is _gpuc.FALLBACK
    assert len(allocated) == 1
    # CuPy's null stream (ptr 0) is the legacy default stream, or the per-thread one (2) under PTDS
    stream[0] = _Stream(0)
    try:
        e(3.0, x, y)
        assert ctypes.c_void_p.in_dll(thunk, "seen_stream").value is None
        e, Cupy = recording_entry(module, "saxpy", thunk, allocated, ptds=True)
        assert isinstance(e(3.0, Cupy((8,)), Cupy((8,))), Cupy)
        assert ctypes.c_void_p.in_dll(thunk, "seen_stream").value == 2
    finally:
        stream[0] = _Stream(0x77)


def test_call_scalar_and_tuple_results_and_errors(module, thunk):
    import ctypes
    allocated = []
    ctypes.c_int.in_dll(thunk, "nargs").value = 4
    ctypes.c_int.in_dll(thunk, "nresults").value = 2
    try:
        e, Cupy = recording_entry(module, "pick", thunk, allocated)
        ctypes.c_int.in_dll(thunk, "status").value = 0
        arr, k = e(5, False, Cupy((4, 3)), Cupy((4,), "<u4"))
        assert isinstance(arr, Cupy) and arr.shape == (4,) and k == 42 and type(k) is int
        assert allocated == [((4,), np.dtype(np.float32))]
        ctypes.c_int.in_dll(thunk, "status").value = 3
        with pytest.raises(gpuc.ExecutionError, match="pick: recorded failure"):
            e(5, False, Cupy((4, 3)), Cupy((4,), "<u4"))
    finally:
        ctypes.c_int.in_dll(thunk, "nargs").value = 3
        ctypes.c_int.in_dll(thunk, "nresults").value = 1
        ctypes.c_int.in_dll(thunk, "status").value = 0


class CaiCupy(FakeCupy):
    """A CuPy array whose attributes LibEntry does not find (no _c_contiguous): read through
    __cuda_array_interface__, built per access as CuPy builds it (shape, typestr, descr,
    stream, strides, data)."""

    def __init__(self, shape, typestr="<f4", ptr=0x1000):
        super().__init__(shape, typestr, ptr)
        del self._c_contiguous
        self.device = types.SimpleNamespace(id=0)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "descr": self.dtype.descr, "version": 3,
                "stream": 1, "strides": None, "data": (self.data.ptr, False)}


def test_cupy_attributes_against_its_cai_dict(module, thunk, capsys):
    """The same call with CuPy arrays read through attributes and through a CuPy-like
    __cuda_array_interface__ (what the C path read before): printed, and the same thunk values."""
    import ctypes
    e, Cupy = recording_entry(module, "saxpy", thunk, [])
    Cai = type("Cai", (CaiCupy, Cupy), {})
    ctypes.c_int.in_dll(thunk, "status").value = 0
    seen = []
    for x in (Cupy((1024,)), Cai((1024,))):
        e(2.0, x, x)
        seen.append(list((ctypes.c_int64 * 15).in_dll(thunk, "seen_args")))
    assert seen[0] == seen[1]
    n = 20000
    t = [min(timeit.repeat(lambda: e(2.0, x, x), number=n, repeat=3)) / n * 1e6
         for x in (Cupy((1024,)), Cai((1024,)))]
    with capsys.disabled():
        print("\nLibEntry call (saxpy, recording thunk): CuPy attributes %.3f us, CuPy-like CAI dicts %.3f us"
              % tuple(t))


def test_call_cost(module, thunk, capsys):
    """Host cost of a whole fast call (decode, allocate through a Python allocator, call)
    against the Python path's argument handling alone (Entry.__call__ up to _run)."""
    e, Cupy = recording_entry(module, "saxpy", thunk, [])
    x, y = Cupy((1024,)), Cupy((1024,))
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
