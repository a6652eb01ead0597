"""The C backend's machinery: the disk cache across processes, concurrent
calls from threads, interpreter exit, result kinds (tuples, structs)."""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np

import gpuc
from conftest import EXAMPLES


def _run(code, env):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120, env=env)


def test_cache_hit_in_a_new_process_runs_no_compiler(tmp_path):
    # a cc that logs each run, then runs the real one
    log = tmp_path / "cc.log"
    cc = tmp_path / "logcc"
    cc.write_text("#!/bin/sh\necho run >> %s\nexec cc \"$@\"\n" % log)
    cc.chmod(0o755)
    env = dict(os.environ, CC=str(cc), GPUC_CACHE_DIR=str(tmp_path / "cache"))
    code = """
        import gpuc, numpy
        m = gpuc.compile('entry g(x: f64[n]) -> f64 = sum(x * x);')
        print(m.g(numpy.arange(4.0)), gpuc._cbackend.builds)
        """
    first = _run(code, env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["14.0", "1"]
    assert log.read_text().count("run") == 1
    second = _run(code, env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["14.0", "0"]
    assert log.read_text().count("run") == 1       # no compiler run the second time
    assert len(list((tmp_path / "cache" / "python").glob("*.so"))) == 1


def test_warm_compile_in_a_new_process_runs_no_gdsl_compiler(tmp_path):
    env = dict(os.environ, GPUC_CACHE_DIR=str(tmp_path / "cache"))
    code = """
        import gpuc, numpy
        def refuse(*args, **kwargs):
            raise AssertionError("the gdsl compiler ran")
        if %r:
            gpuc._compile_text = refuse
        m = gpuc.compile('entry g(x: f64[n]) -> f64 = sum(x * x);', backend='c')
        print(m.g(numpy.arange(4.0)), sorted(m.entries))
        """
    first = _run(code % False, env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["14.0", "['g']"]
    second = _run(code % True, env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["14.0", "['g']"]


def test_warm_compile_sees_a_changed_import(tmp_path):
    (tmp_path / "lib.gdsl").write_text("fn k(x: f64) -> f64 = x * 2.0;\n")
    (tmp_path / "main.gdsl").write_text('import "lib.gdsl";\nentry g(x: f64[n]) -> f64[n] = map(k, x);\n')
    env = dict(os.environ, GPUC_CACHE_DIR=str(tmp_path / "cache"))
    code = """
        import gpuc, numpy
        m = gpuc.compile(%r, backend='c')
        print(m.g(numpy.ones(2))[0])
        """ % str(tmp_path / "main.gdsl")
    first = _run(code, env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["2.0"]
    (tmp_path / "lib.gdsl").write_text("fn k(x: f64) -> f64 = x * 30.0;\n")
    second = _run(code, env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["30.0"]


def test_module_attributes_are_entries_only():
    # a helper fn is in the C program's table (for test blocks) but is not an entry
    m = gpuc.compile("fn gelu(x: f32) -> f32 = x * 0.5;\nentry g(x: f32[n]) -> f32[n] = map(gelu, x);\n", backend="c")
    assert sorted(m.entries) == ["g"]
    assert not hasattr(m, "gelu")
    m = gpuc.compile(EXAMPLES / "activations.gdsl", backend="c")
    assert "gelu" not in m.entries and not hasattr(m, "gelu") and hasattr(m, "gelu_all")


def test_threads_call_one_entry_concurrently():
    m = gpuc.compile(EXAMPLES / "permute.gdsl")
    errors, wrong = [], []
    rng = np.random.default_rng(5)
    x = rng.random(1000).astype(np.float32)

    def work(seed):
        r = np.random.default_rng(seed)
        for i in range(50):
            perm = r.permutation(1000).astype(np.int64)
            if i % 7 == 3:      # out of bounds in some calls: the error must stay in its own call
                perm[10] = 5000
                try:
                    m.apply_perm(x, perm)
                    wrong.append("no error")
                except gpuc.ExecutionError as e:
                    if "index 5000 out of bounds for size 1000" not in str(e):
                        wrong.append(str(e))
                continue
            try:
                if not np.array_equal(m.apply_perm(x, perm), x[perm]):
                    wrong.append("result")
            except Exception as e:   # noqa: BLE001 - report every failure
                errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and wrong == []


def test_interpreter_exits_cleanly():
    code = """
        import threading, gpuc, numpy
        m = gpuc.compile('entry h(x: i32[n]) -> i32 = sum(x);')
        t = threading.Thread(target=lambda: m.h(numpy.ones(10**6, numpy.int32)))
        t.start(); t.join()
        print(m.h(numpy.ones(5, numpy.int32)))
        """
    out = _run(code, dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout == "5\n"


def test_tuple_and_struct_results():
    m = gpuc.compile(EXAMPLES / "points.gdsl")
    ps = np.zeros(3, dtype=[("x", np.float32), ("y", np.float32)])
    ps["x"], ps["y"] = [1, 2, 3], [4, 5, 6]
    moved = m.move(ps)
    assert moved.dtype.names == ("x", "y")
    np.testing.assert_array_equal(moved["x"], ps["x"] * 2)
    np.testing.assert_array_equal(moved["y"], ps["y"] + 1)
    assert m.centroid({"x": ps["x"], "y": ps["y"]}) == {"x": 2.0, "y": 5.0}
    assert m.nearest(ps, {"x": 3.0, "y": 6.0}) == 2
    empty = np.zeros(0, dtype=ps.dtype)
    assert m.move(empty).shape == (0,)
    assert m.nearest(empty, {"x": 0.0, "y": 0.0}) == -1
    d = gpuc.compile(EXAMPLES / "bits.gdsl")
    q, r = d.divmod(np.array([7, -7], np.int32), np.array([2, 2], np.int32))
    assert q.dtype == np.int32 and list(q) == [3, -3] and list(r) == [1, -1]


def test_unknown_size_result():
    m = gpuc.compile("entry evens(x: u32[n]) -> u32[_] = filter(|v| v % 2u32 == 0u32, x);")
    x = np.arange(10, dtype=np.uint32)
    np.testing.assert_array_equal(m.evens(x), x[x % 2 == 0])
    assert m.evens(np.array([1, 3], np.uint32)).shape == (0,)
