"""The package's basic promises: the one-line example, sources as text or
paths, help text, compile errors, template defines, the gpuc command."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import gpuc
from conftest import EXAMPLES

DONE_WHEN = ("import gpuc, numpy; print(gpuc.compile('entry f(x: f32[n]) -> f32[n] = x * 2.0;')"
             ".f(numpy.arange(4, dtype=numpy.float32)))")


def test_done_when_line():
    out = subprocess.run([sys.executable, "-c", DONE_WHEN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[0. 2. 4. 6.]\n"


def test_source_as_str_path_and_pathlib(tmp_path):
    text = "entry add1(x: i32[n]) -> i32[n] = x + 1;\n"
    f = tmp_path / "add1.gdsl"
    f.write_text(text)
    x = np.array([1, -2, 3], dtype=np.int32)
    for src in (text, str(f), f):
        m = gpuc.compile(src)
        np.testing.assert_array_equal(m.add1(x), x + 1)
        assert m.add1(x).dtype == np.int32


def test_help_shows_signature_and_place():
    m = gpuc.compile(EXAMPLES / "saxpy.gdsl")
    doc = m.saxpy.__doc__
    assert doc.startswith("saxpy(a: f32, x: f32[n], y: f32[n]) -> f32[n]")
    assert "saxpy.gdsl:" in doc
    line = int(doc.split("saxpy.gdsl:")[1].split(",")[0])
    src = (EXAMPLES / "saxpy.gdsl").read_text().splitlines()
    assert src[line - 1].startswith("entry saxpy")
    import pydoc
    assert "saxpy(a: f32, x: f32[n], y: f32[n])" in pydoc.render_doc(m.saxpy)
    inline = gpuc.compile("\n\nentry g(x: f64) -> f64 = x;")
    assert "<string>:3" in inline.g.__doc__


def test_keyword_arguments():
    m = gpuc.compile(EXAMPLES / "saxpy.gdsl")
    x = np.arange(5, dtype=np.float32)
    y = np.ones(5, dtype=np.float32)
    np.testing.assert_allclose(m.saxpy(y=y, x=x, a=2.0), 2 * x + y)
    with pytest.raises(TypeError, match="missing argument"):
        m.saxpy(2.0, x)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        m.saxpy(2.0, x, y, z=1)
    with pytest.raises(TypeError, match=r"saxpy\(\) takes 3 arguments \(4 given\): saxpy\(a: f32, x: f32\[n\]"):
        m.saxpy(2.0, x, y, y)
    one = gpuc.compile("entry g(x: f64) -> f64 = x;")
    with pytest.raises(TypeError, match=r"g\(\) takes 1 argument \(2 given\)"):
        one.g(1.0, 2.0)


def test_compile_error_text_and_records():
    with pytest.raises(gpuc.CompileError) as info:
        gpuc.compile("entry f(x: f32[n]) -> f32[n] =\n    x * y;")
    e = info.value
    assert isinstance(e, gpuc.Error) and isinstance(e, Exception)
    lines = str(e).splitlines()
    assert lines[0].startswith("<string>:2:9: error: unknown name 'y'")
    assert lines[1] == "    x * y;"
    assert lines[2] == "        ^"
    assert e.diagnostics[0]["line"] == 2 and e.diagnostics[0]["column"] == 9
    assert e.diagnostics[0]["file"] == "<string>" and e.diagnostics[0]["severity"] == "error"


def test_compile_error_in_file_names_the_file(tmp_path):
    f = tmp_path / "bad.gdsl"
    f.write_text("entry f(x: f32[n]) -> i32[n] = x;\n")
    with pytest.raises(gpuc.CompileError) as info:
        gpuc.compile(f)
    assert str(info.value).startswith(str(f) + ":1:")
    assert "^" in str(info.value)


def test_defines_set_template_parameters():
    src = "entry fill<V: int = 1>(x: i64[n]) -> i64[n] = map(|e| e * 0 + V, x);"
    x = np.zeros(3, dtype=np.int64)
    np.testing.assert_array_equal(gpuc.compile(src).fill(x), [1, 1, 1])
    np.testing.assert_array_equal(gpuc.compile(src, defines={"V": 7}).fill(x), [7, 7, 7])
    np.testing.assert_array_equal(gpuc.compile(src, defines=["fill.V=9"]).fill(x), [9, 9, 9])


def test_type_defines_from_numpy():
    src = "entry twice<T: type = f32>(x: T[n]) -> T[n] = x + x;"
    m = gpuc.compile(src, defines={"T": np.float64})
    assert m.twice(np.array([1.5])).dtype == np.float64


def test_unknown_backend_is_an_error():
    with pytest.raises(ValueError, match="backend"):
        gpuc.compile("entry f(x: f32) -> f32 = x;", backend="opencl")


def test_gpuc_command_installed():
    script = pathlib.Path(sys.executable).parent / "gpuc"
    out = subprocess.run([str(script), "--version"], stdout=subprocess.PIPE, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("gpuc ")
    out = subprocess.run([str(script), "--emit=cuda", str(EXAMPLES / "saxpy.gdsl")], stdout=subprocess.PIPE,
                         text=True, timeout=60)
    assert out.returncode == 0 and "__global__" in out.stdout
