"""The CUDA backend from Python (docs/python.md). Without a GPU only the build
tests run (the library is built for sm_90 and cached: no GPU needed); the
rest are skipped with the reason printed. With one: every entry of
examples/*.gdsl on CuPy arrays and on torch tensors against backend="c" on
the same NumPy data, NumPy arguments, result kinds, out=, a non-default
stream, errors naming the argument, gpuc.load of a `gpuc --emit=lib`
library, template instances, threads, interpreter exit after a CUDA error.

Runs under pytest, or as a plain script (`python3 test_cuda.py`) where
pytest is missing: it then runs every test_* function and prints PASS/FAIL/
SKIP per test and a summary line."""

import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import threading

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import pytest
except ImportError:
    # a plain-script run without pytest: the shared helpers' decorators as no-ops
    import types
    _stub = types.ModuleType("pytest")
    _stub.fixture = lambda *a, **k: (a[0] if a and callable(a[0]) else (lambda f: f))
    _stub.param = lambda *a, **k: a
    _stub.mark = types.SimpleNamespace(parametrize=lambda *a, **k: (lambda f: f))
    sys.modules["pytest"] = _stub
    pytest = None
import conftest  # noqa: E402  (sets GPUC_CACHE_DIR)
import gpuc  # noqa: E402
from gpuc import _cuda, _paths, _types  # noqa: E402
from test_examples import FILES, _components, _inputs  # noqa: E402


class Skip(Exception):
    pass


def _skip(reason):
    if pytest is not None:
        pytest.skip(reason)
    raise Skip(reason)


GPU = _cuda.usable()
NO_GPU = "no usable GPU (libcuda did not load or no device): the CUDA backend's calls are not tested here"


def _need(module=None):
    if not GPU:
        _skip(NO_GPU)
    if module:
        try:
            return __import__(module)
        except ImportError:
            _skip("%s is not installed" % module)


def _run(code, env=None):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=300, env=env or dict(os.environ))


SAXPY = "entry saxpy(a: f32, x: f32[n], y: f32[n]) -> f32[n] = a * x + y;\n" \
        "entry total(x: f64[n]) -> f64 = sum(x);\n" \
        "entry evens(x: i32[n]) -> i32[_] = filter(|v| v % 2 == 0, x);\n"


# ---- without a GPU too -------------------------------------------------------

def test_library_built_once_and_cached_across_processes(tmp_path):
    env = dict(os.environ, GPUC_CACHE_DIR=str(tmp_path / "cache"))
    code = """
        import gpuc
        from gpuc import _cuda
        m = gpuc.compile(%r, backend="cuda", arch="sm_90")
        print(sorted(m.entries), m.backend, _cuda.builds)
        """ % SAXPY
    first = _run(code, env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["['evens',", "'saxpy',", "'total']", "cuda", "1"]
    second = _run(code, env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split()[-1] == "0"     # opened from the cache: no cc, no NVRTC


def test_images_h_is_the_compiler_librarys(tmp_path):
    """images.h through _gpuc.write_images (compiler/images.c, the writer gpuc --emit=lib uses):
    one string literal per image, 64 bytes a line, then the table in the given order."""
    from gpuc import _gpuc
    path = tmp_path / "images.h"
    _gpuc.write_images(str(path), [("sm_90", bytes(range(65))), ("compute_90", b"")])
    line0 = "".join("\\x%02x" % b for b in range(64))
    assert path.read_text() == (
        'static const char gpuc_image_0[] =\n"%s"\n"\\x40";\n'
        'static const char gpuc_image_1[] = "";\n'
        "static const GpucImage gpuc_images[] = {\n"
        '    { "sm_90", gpuc_image_0, sizeof gpuc_image_0 - 1 },\n'
        '    { "compute_90", gpuc_image_1, sizeof gpuc_image_1 - 1 },\n'
        "};\n" % line0)
    try:
        _gpuc.write_images(str(tmp_path / "no" / "images.h"), [])
        raise AssertionError("an unwritable path accepted")
    except OSError as e:
        assert "images.h" in str(e)


def test_table_writes_given_scalars_on_the_device():
    """The generated table thunk of an entry with a scalar result goes through gpuc_into_
    when the caller gives the scalar's device memory (sync=False), and copies the waited
    scalar there when it cannot (an unknown result size)."""
    from gpuc import _gpuc
    src = SAXPY + "entry both(x: i32[n]) -> (i32[_], i64) = (filter(|v| v > 0, x), 7i64);\n"
    st, out, _, rendered, _ = _gpuc.compile("lib", None, src, "<string>", _paths.stdlib_dir(), [], "L", None)
    assert st == 0, rendered
    c = out["source"]
    total = c[c.index("static GpucStatus gpuc_table_total("):]
    total = total[:total.index("\n}\n")]
    assert "g_st = gpuc_into_total(lib, &g_in0, results, &g_used);" in total
    # a NAME_new_comm library runs the sharded launcher, which has no _into form
    assert "if (g_st == GPUC_SUCCESS && !lib->comm && g_given0) {" in total
    both = c[c.index("static GpucStatus gpuc_table_both("):]
    both = both[:both.index("\n}\n")]
    assert "= gpuc_into_both(" not in both
    assert "g_st = gpuc_memcpy_htod(lib->ctx, results[1].data, &g_out1, sizeof g_out1);" in both


def test_load_a_library_built_by_the_gpuc_command(tmp_path):
    r = subprocess.run([_paths.bin_path(), "--emit=lib", str(conftest.EXAMPLES / "saxpy.gdsl"),
                        "-o", str(tmp_path / "libsax")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, r.stdout
    m = gpuc.load(tmp_path / "sax.json")
    assert m.backend == "cuda" and "saxpy" in m.entries
    assert m.saxpy.__doc__.startswith("saxpy(a: f32, x: f32[n], y: f32[n]) -> f32[n]")
    assert gpuc.load(tmp_path / "libsax.so").entries.keys() == m.entries.keys()
    if GPU:
        x = np.arange(5, dtype=np.float32)
        np.testing.assert_array_equal(m.saxpy(2.0, x, x), 3 * x)
    else:
        try:
            m.saxpy(2.0, np.ones(3, np.float32), np.ones(3, np.float32))
            raise AssertionError("a call without a GPU must fail")
        except gpuc.Error as e:
            assert "GPUC_ERROR_NO_" in str(e)


def test_auto_is_c_without_a_gpu_and_cuda_with_one():
    m = gpuc.compile(SAXPY, backend="auto")
    assert m.backend == ("cuda" if GPU else "c")


# ---- with a GPU --------------------------------------------------------------

def _check_examples(to_device, to_host):
    rng = np.random.default_rng(7)
    checked = 0
    for path in FILES:
        c = gpuc.compile(path, backend="c")
        g = gpuc.compile(path, backend="cuda")
        assert sorted(g.entries) == sorted(c.entries), path.name
        for name in g.entries:     # the module under test's entries
            entry = c.entries[name]
            args, _ = _inputs(entry, rng)
            try:
                want = getattr(c, name)(*args)
            except gpuc.ExecutionError:
                continue        # the same inputs fail on the C backend: compared in test_errors_name_things
            got = getattr(g, name)(*[_map(a, to_device) for a in args])
            want_c = _components(entry.result, want)
            got_c = _components(entry.result, _map(got, to_host))
            assert len(want_c) == len(got_c), (path.name, name)
            for w, h in zip(want_c, got_c):
                w, h = np.asarray(w), np.asarray(h)
                assert w.shape == h.shape and w.dtype == h.dtype, (path.name, name, w.shape, h.shape)
                if w.dtype.kind == "f":
                    tol = 1e-3 if w.dtype == np.float32 else 1e-9
                    np.testing.assert_allclose(h, w, rtol=tol, atol=tol * max(1, w.size), err_msg="%s %s" % (path.name, name))
                else:
                    np.testing.assert_array_equal(h, w, err_msg="%s %s" % (path.name, name))
            checked += 1
    assert checked > 20


def _map(value, fn):
    if isinstance(value, np.ndarray) and value.ndim > 0 or (not isinstance(value, (tuple, dict, list, int, float, bool, np.ndarray))):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(_map(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return value


def test_examples_on_cupy_arrays():
    cupy = _need("cupy")
    _check_examples(cupy.asarray, lambda a: cupy.asnumpy(a) if isinstance(a, cupy.ndarray) else a)


def test_examples_on_torch_tensors():
    torch = _need("torch")
    _check_examples(lambda a: torch.from_numpy(a).cuda(),
                    lambda a: a.cpu().numpy() if isinstance(a, torch.Tensor) else a)


def test_result_kinds_numpy_scalars_unknown_sizes():
    _need()
    m = gpuc.compile(SAXPY, backend="cuda")
    x = np.arange(6, dtype=np.int32)
    r = m.evens(x)
    assert isinstance(r, np.ndarray) and r.tolist() == [0, 2, 4]
    assert m.total(np.arange(4.0)) == 6.0 and isinstance(m.total(np.arange(4.0)), float)
    cupy = _need("cupy")
    r = m.evens(cupy.asarray(x))
    assert isinstance(r, cupy.ndarray) and r.get().tolist() == [0, 2, 4]
    y = m.saxpy(2.0, cupy.ones(3, dtype=cupy.float32), cupy.ones(3, dtype=cupy.float32))
    assert isinstance(y, cupy.ndarray) and y.get().tolist() == [3.0, 3.0, 3.0]
    # mixed: NumPy arguments are copied in, the result follows the device argument
    y = m.saxpy(2.0, np.ones(3, np.float32), cupy.ones(3, dtype=cupy.float32))
    assert isinstance(y, cupy.ndarray)


def test_torch_results_are_tensors_on_the_device():
    torch = _need("torch")
    m = gpuc.compile(SAXPY, backend="cuda")
    x = torch.arange(6, dtype=torch.int32, device="cuda")
    r = m.evens(x)
    assert isinstance(r, torch.Tensor) and r.is_cuda and r.tolist() == [0, 2, 4]
    y = m.saxpy(2.0, torch.ones(4, device="cuda"), torch.ones(4, device="cuda"))
    assert isinstance(y, torch.Tensor) and y.device.type == "cuda" and y.tolist() == [3.0] * 4


def test_out_writes_the_callers_array():
    cupy = _need("cupy")
    m = gpuc.compile(SAXPY, backend="cuda")
    x = cupy.arange(8, dtype=cupy.float32)
    out = cupy.zeros(8, dtype=cupy.float32)
    r = m.saxpy(2.0, x, x, out=out)
    assert r is out and out.get().tolist() == (3 * np.arange(8, dtype=np.float32)).tolist()
    try:
        m.saxpy(2.0, x, x, out=cupy.zeros(7, dtype=cupy.float32))
        raise AssertionError("a wrong out= shape must fail")
    except ValueError as e:
        assert "out=" in str(e)


def test_non_default_stream():
    cupy = _need("cupy")
    m = gpuc.compile(SAXPY, backend="cuda")
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x = cupy.arange(1 << 20, dtype=cupy.float32)
        results = [m.saxpy(float(i), x, x) for i in range(4)]
        s.synchronize()
    for i, r in enumerate(results):
        assert float(r[10].get()) == (i + 1) * 10.0
    torch = _need("torch")
    ts = torch.cuda.Stream()
    with torch.cuda.stream(ts):
        t = torch.ones(1 << 20, device="cuda")
        r = m.saxpy(3.0, t, t)
    ts.synchronize()
    assert float(r[5]) == 4.0


def test_run_time_size_mismatch_on_the_device():
    # a filter's count meets another size on the GPU: the launcher's host check
    cupy = _need("cupy")
    m = gpuc.compile("entry f(x: f32[n], y: f32[n]) -> f32[_] { let p = filter(|v| v > 0.0, x); return p + y; }\n",
                     backend="cuda")
    x = cupy.asarray([1, -2, 3, 4], dtype=cupy.float32)
    y = cupy.asarray([10, 20, 30, 40], dtype=cupy.float32)
    try:
        m.f(x, y)
        raise AssertionError("a size mismatch accepted")
    except gpuc.ExecutionError as e:
        assert "size mismatch in operator '+': 3 vs 4" in str(e) and e.entry == "f", str(e)
    r = m.f(cupy.asarray([1, 2, 3], dtype=cupy.float32), cupy.asarray([10, 20, 30], dtype=cupy.float32))
    assert r.get().tolist() == [11.0, 22.0, 33.0]


def test_errors_name_things():
    cupy = _need("cupy")
    m = gpuc.compile(SAXPY + "entry pick(x: f32[n], i: i64[m]) -> f32[m] = map(|k| x[k], i);\n", backend="cuda")
    try:
        m.saxpy(2.0, cupy.ones(3, dtype=cupy.float64), cupy.ones(3, dtype=cupy.float32))
        raise AssertionError("wrong dtype accepted")
    except TypeError as e:
        assert "argument 'x' must have dtype float32" in str(e)
    try:
        m.saxpy(2.0, cupy.ones((3, 2), dtype=cupy.float32), cupy.ones(3, dtype=cupy.float32))
        raise AssertionError("wrong rank accepted")
    except ValueError as e:
        assert "argument 'x' must have 1 dimension" in str(e)
    try:
        m.pick(cupy.ones(4, dtype=cupy.float32), cupy.asarray([1, 9], dtype=cupy.int64))
        raise AssertionError("out of bounds accepted")
    except gpuc.ExecutionError as e:
        assert "index 9 out of bounds for size 4" in str(e) and e.entry == "pick"
    # a non-contiguous CuPy array is copied, as NumPy ones are on the C backend
    x = cupy.arange(8, dtype=cupy.float32)[::2]
    assert m.saxpy(1.0, x, x).get().tolist() == [0.0, 4.0, 8.0, 12.0]


def test_sync_false_keeps_scalars_on_the_device():
    """sync=False: scalar results are 0-d device arrays of the arguments' framework, written on
    the stream without a wait; with the default they are Python numbers."""
    cupy = _need("cupy")
    src = SAXPY + "entry both(x: i32[n]) -> (i32[_], i64) = (filter(|v| v > 0, x), 7i64);\n" \
                  "entry stats(x: f64[n]) -> (f64, f64[n]) = (sum(x), map(|v| 2.0 * v, x));\n"
    m = gpuc.compile(src, backend="cuda")
    x = cupy.arange(1000, dtype=cupy.float64)
    r = m.total(x, sync=False)
    assert isinstance(r, cupy.ndarray) and r.shape == () and r.dtype == cupy.float64
    assert float(r.get()) == 499500.0
    assert m.total(x) == 499500.0 and isinstance(m.total(x), float)
    s, doubled = m.stats(x, sync=False)
    assert isinstance(s, cupy.ndarray) and float(s.get()) == 499500.0 and float(doubled[3].get()) == 6.0
    evens, seven = m.both(cupy.asarray([-1, 2, 3], dtype=cupy.int32), sync=False)   # unknown size: copied
    assert evens.get().tolist() == [2, 3] and isinstance(seven, cupy.ndarray) and int(seven.get()) == 7
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        y = cupy.ones(1 << 20, dtype=cupy.float64)
        sums = [m.total(y, sync=False) for _ in range(3)]
    stream.synchronize()
    assert [float(v.get()) for v in sums] == [float(1 << 20)] * 3
    try:
        m.total(np.ones(3), sync=False)
        raise AssertionError("sync=False without a device argument accepted")
    except TypeError as e:
        assert "total: sync=False keeps scalar results on the device" in str(e)
    torch = _need("torch")
    t = m.total(torch.ones(10, dtype=torch.float64, device="cuda"), sync=False)
    assert isinstance(t, torch.Tensor) and t.is_cuda and t.dim() == 0 and float(t) == 10.0


class _CaiOnly:
    """A device array known only by __cuda_array_interface__ (as Numba's), over another one."""

    def __init__(self, cai, keep=None):
        self.__cuda_array_interface__ = cai
        self.keep = keep


def test_fast_path_and_cai_devices():
    """After a first call the entry attribute is installed for the device (the C path); its
    results match. A CAI-only array's device comes from its address; an address CUDA does not
    know is a ValueError naming the entry."""
    cupy = _need("cupy")
    m = gpuc.compile(SAXPY, backend="cuda")
    x = cupy.arange(16, dtype=cupy.float32)
    assert m.saxpy(2.0, x, x).get().tolist() == (3 * np.arange(16)).tolist()
    assert m.saxpy._fast_device == 0 and "cupy" in m.saxpy._fast_frameworks
    for k in range(3):
        assert m.saxpy(float(k), x, x).get().tolist() == ((k + 1) * np.arange(16)).tolist()
    cai = _CaiOnly(x.__cuda_array_interface__, x)
    ones = cupy.ones(5, dtype=cupy.float64)
    assert m.total(_CaiOnly(ones.__cuda_array_interface__, ones)) == 5.0
    r = m.saxpy(1.0, cai, cai)
    assert np.asarray(cupy.asarray(r).get()).tolist() == (2 * np.arange(16)).tolist()
    host = np.ones(4, np.float32)
    bad = _CaiOnly({"shape": (4,), "typestr": "<f4", "data": (host.ctypes.data, False), "version": 3,
                    "strides": None, "stream": None}, host)
    try:
        m.saxpy(1.0, bad, bad)
        raise AssertionError("a host address accepted as device memory")
    except ValueError as e:
        assert "saxpy: the __cuda_array_interface__ address" in str(e), e


def test_template_instances():
    _need()
    m = gpuc.compile(conftest.EXAMPLES / "saxpy.gdsl", backend="cuda")
    params = [t for t in m.entries]
    assert "saxpy" in params
    c = gpuc.compile(conftest.EXAMPLES / "clients" / "vec.gdsl", backend="cuda")
    a = c.scale[64]
    assert c.scale[dict(BLOCK=64)] is a or c.scale[dict(BLOCK=64)].entry.module is a.entry.module
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(a(2.0, x), 2 * x)


def test_threads():
    cupy = _need("cupy")
    m = gpuc.compile(SAXPY, backend="cuda")
    errors = []

    def work(k):
        try:
            for _ in range(20):
                x = cupy.full(1000, k, dtype=cupy.float32)
                assert float(m.saxpy(1.0, x, x)[999].get()) == 2.0 * k
                assert m.total(cupy.full(10, k, dtype=cupy.float64)) == 10.0 * k
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    ts = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_interpreter_exit_after_a_cuda_error():
    _need()
    code = """
        import gpuc, numpy
        m = gpuc.compile('entry pick(x: f32[n], i: i64[m]) -> f32[m] = map(|k| x[k], i);', backend="cuda")
        try:
            m.pick(numpy.ones(4, numpy.float32), numpy.array([7], numpy.int64))
        except gpuc.ExecutionError as e:
            print("caught", e)
        print(m.pick(numpy.ones(4, numpy.float32), numpy.array([1], numpy.int64)))
        """
    r = _run(code)
    assert r.returncode == 0, r.stderr
    assert "caught pick: index 7 out of bounds for size 4" in r.stdout and "[1.]" in r.stdout


if __name__ == "__main__":
    pytest = None       # plain script: skips are this file's Skip
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for name, fn in sorted((n, f) for n, f in globals().items() if n.startswith("test_") and callable(f)):
        try:
            if "tmp_path" in fn.__code__.co_varnames[:fn.__code__.co_argcount]:
                with tempfile.TemporaryDirectory() as d:
                    fn(pathlib.Path(d))
            else:
                fn()
            status = "PASS"
        except Skip as e:
            status = "SKIP (%s)" % e
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            status = "FAIL (%s: %s)" % (type(e).__name__, e)
        counts[status.split()[0]] += 1
        print("%s %s" % (status, name), flush=True)
    print("test_cuda.py: %d passed, %d failed, %d skipped" % (counts["PASS"], counts["FAIL"], counts["SKIP"]))
    sys.exit(1 if counts["FAIL"] else 0)
