"""Every entry of examples/*.gdsl on the C backend, with random NumPy inputs,
checked against the gpuc executable's output for the same inputs (.npy
components in, --out .npy files back): the same results, or the same error."""

import subprocess
import zlib

import numpy as np
import pytest

import gpuc
from gpuc import _paths, _types
from conftest import EXAMPLES

FILES = sorted(EXAMPLES.glob("*.gdsl"))
SIZES = {"n": 7, "m": 5, "k": 3}   # other size names get 4


def _size(name):
    return int(name) if name.isdigit() else SIZES.get(name, 4)


def _random(kind, shape, rng):
    dt = _types.DTYPES[kind]
    if kind == "bool":
        return rng.random(shape) < 0.5
    if dt.kind == "f":
        return rng.uniform(-2.0, 2.0, shape).astype(dt)
    return rng.integers(0, 4, shape).astype(dt)   # small: mostly valid indices and counts


def _inputs(entry, rng):
    """(Python arguments, their components in order) for one call of entry."""
    dims = set()
    for _, t in entry.params:
        for _, _, d in _types.leaves(t):
            dims.update(d)
    args, comps = [], []
    for pname, t in entry.params:
        if pname in dims and isinstance(t, _types.Scalar):
            value = np.int64(_size(pname))
            args.append(int(value))
            comps.append(np.array(value))
            continue
        parts = []
        for _, kind, d in _types.leaves(t):
            shape = tuple(_size(x) for x in d)
            if len(shape) == 1 and _types.DTYPES[kind].kind == "i":
                # any signed integer vector may be a scatter's or a gather's
                # indices: distinct (with repeated indices which write wins is
                # unspecified, docs/language.md, so the backends may differ)
                # and valid for an array of its length: a permutation
                parts.append(rng.permutation(shape[0]).astype(_types.DTYPES[kind]))
                continue
            parts.append(_random(kind, shape, rng))
        comps.extend(parts)
        args.append(_rebuild(t, list(parts)))
    return args, comps


def _rebuild(t, parts):
    """A Python argument of type t from its component arrays: scalars as Python
    numbers, structs as dicts (of arrays, for arrays of structs), tuples as tuples."""
    if isinstance(t, _types.Scalar):
        return parts.pop(0)[()].item()
    if isinstance(t, _types.Array) and isinstance(t.elem, _types.Scalar):
        return parts.pop(0)
    elem = t.elem if isinstance(t, _types.Array) else t
    wrap = (lambda s: _types.Array(s, t.dims)) if isinstance(t, _types.Array) else (lambda s: s)
    if isinstance(elem, _types.Tuple):
        return tuple(_rebuild(wrap(s), parts) for s in elem.items)
    return {name: _rebuild(wrap(s), parts) for name, s in elem.fields}


def _components(t, value):
    """The result value of type t (as gpuc returns it) back as component arrays."""
    if isinstance(t, _types.Scalar):
        return [np.array(value, dtype=_types.DTYPES[t.kind])]
    if isinstance(t, _types.Array) and isinstance(t.elem, _types.Scalar):
        return [value]
    if isinstance(t, _types.Array) and isinstance(t.elem, _types.Struct):
        out = []
        for name, s in t.elem.fields:
            out += _components(_types.Array(s, t.dims), value[name] if not isinstance(s, _types.Tuple)
                               else tuple(value[name]["f%d" % i] for i in range(len(s.items))))
        return out
    if isinstance(t, _types.Array):
        return [c for s, v in zip(t.elem.items, value) for c in _components(_types.Array(s, t.dims), v)]
    if isinstance(t, _types.Tuple):
        return [c for s, v in zip(t.items, value) for c in _components(s, v)]
    return [c for name, s in t.fields for c in _components(s, value[name])]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """file -> (module, executable path), built on first use."""
    cache = {}

    def get(path):
        if path not in cache:
            exe = tmp_path_factory.mktemp("exe") / path.stem
            r = subprocess.run([_paths.bin_path(), str(path), "-o", str(exe), "--arch=none"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
            assert r.returncode == 0, r.stdout
            cache[path] = (gpuc.compile(path, backend="c"), exe)
        return cache[path]
    return get


def _cases():
    out = []
    for f in FILES:
        for line in f.read_text().splitlines():
            if line.startswith("entry "):
                name = line[6:].split("(")[0].split("<")[0].strip()
                out.append(pytest.param(f, name, id="%s-%s" % (f.stem, name)))
    return out


@pytest.mark.parametrize("path,name", _cases())
def test_entry_matches_executable(built, tmp_path, path, name):
    module, exe = built(path)
    entry = module.entries[name]
    rng = np.random.default_rng(zlib.crc32((path.name + name).encode()))
    args, comps = _inputs(entry, rng)
    files = []
    for i, c in enumerate(comps):
        f = tmp_path / ("in%d.npy" % i)
        np.save(f, c)
        files.append(str(f))
    nout = len(_types.leaves(entry.result))
    outs = [str(tmp_path / ("out%d.npy" % i)) for i in range(nout)]
    r = subprocess.run([str(exe), "-e", name, "--backend=c"] + files + ["--out", ",".join(outs)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    if r.returncode != 0:
        # the executable failed at run time: the Python call must fail the same way
        assert "error: %s: " % name in r.stderr, r.stderr
        message = r.stderr.split("error: %s: " % name, 1)[1].strip()
        with pytest.raises(gpuc.ExecutionError) as info:
            getattr(module, name)(*args)
        assert str(info.value) == "%s: %s" % (name, message)
        return
    got = _components(entry.result, getattr(module, name)(*args))
    want = [np.load(o) for o in outs]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_every_example_file_has_entries():
    assert len(FILES) >= 20 and len(_cases()) >= 100


@pytest.mark.parametrize("script", sorted((EXAMPLES / "python").glob("*.py")), ids=lambda p: p.name)
def test_python_example_runs(script):
    import sys
    r = subprocess.run([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout
    assert ": ok on the " in r.stdout
