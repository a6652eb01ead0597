#!/usr/bin/env python3
"""python_side.py: one generated file through the Python package (gpuc.compile)
against the same program's executable, for difftest/run.py --python.

    python_side.py FILE EXE OUTDIR BACKEND      (run by an interpreter with gpuc and NumPy)

For every entry of the module (export instances too) and the sizes of the
first three `//! test` blocks of its entry in FILE: draws inputs with NumPy
(in the ranges of the block's `random` lines, else floats in [-1, 1],
integers in -100..100 or 0..1000; bools), calls the
entry from Python with them as a user would (arrays, some of them strided
views or in Fortran order, structured arrays for arrays of structs, tuples
of arrays for arrays of tuples, Python scalars),
writes the same inputs as one .npy file a component, runs
`EXE -e ENTRY --backend=c --in COMPONENT=FILE... --out DIR/`, and compares
each result component: integers and bools exactly, floats within 1e-12
relative (BACKEND c: the same generated C on both sides) or 2e-3 / 1e-9 (f32
in the entry / f64 only; BACKEND cuda: the GPU against the C backend); a
gpuc.ExecutionError and a failed run agree only for an index out of bounds.

Prints one line per entry, `ok ENTRY N` or `DIFF ENTRY: what`, and last
`python_side: N entries, M differ`; exit status 0 only when none differs.
"""
import os
import re
import subprocess
import sys
import zlib

import numpy as np

import gpuc
from gpuc import _types
from run import tolerance  # difftest/run.py, beside this file

ELEMENT_LIMIT = 1 << 21   # blocks past this many elements are left to the other modes


def draw(kind, shape, rng, span):
    if kind == "bool":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if kind in ("f32", "f64"):
        lo, hi = span or (-1.0, 1.0)
        return rng.uniform(lo, hi, shape).astype(_types.DTYPES[kind])
    lo, hi = span or ((0, 1000) if kind in ("u32", "u64") else (-100, 100))
    return rng.integers(int(lo), int(hi), shape, dtype=np.int64 if hi < 2 ** 63 else np.uint64).astype(
        _types.DTYPES[kind])


def layout(a, rng):
    """The same values as a user might hold them: as they are, every other
    element of a larger array (1-D), or in Fortran order (2-D)."""
    k = rng.integers(0, 3)
    if k == 1 and a.ndim == 1:
        wide = np.zeros(2 * a.shape[0], dtype=a.dtype)
        wide[::2] = a
        return wide[::2]
    if k == 1 and a.ndim == 2:
        return np.asfortranarray(a)
    return a


def inputs(t, sizes, rng, span):
    """(the Python argument, {component suffix: array}) for a parameter of type t;
    span: the block's `in LO .. HI` for it, or None."""
    comps = {}
    for suffix, kind, dims in _types.leaves(t):
        comps[suffix] = draw(kind, tuple(int(sizes.get(d, d)) for d in dims), rng, span)
    if isinstance(t, _types.Scalar):
        return comps[""][()].item(), comps
    if isinstance(t, _types.Array) and isinstance(t.elem, _types.Scalar):
        return layout(comps[""], rng), comps
    if isinstance(t, _types.Array) and isinstance(t.elem, _types.Struct):
        value = np.zeros(comps[_types.leaves(t)[0][0]].shape, dtype=_types.numpy_dtype(t.elem))
        for name, sub in t.elem.fields:
            if not isinstance(sub, _types.Scalar):
                raise NotImplementedError("nested struct field")
            value[name] = comps["." + name]
        return value, comps
    if isinstance(t, _types.Array) and isinstance(t.elem, _types.Tuple):
        if not all(isinstance(s, _types.Scalar) for s in t.elem.items):
            raise NotImplementedError("nested tuple")
        return tuple(comps[".%d" % i] for i in range(len(t.elem.items))), comps
    raise NotImplementedError(str(t))


def components(t, value):
    """{component suffix: array} of a Python result of type t."""
    if isinstance(t, _types.Scalar):
        return {"": np.asarray(value)}
    if isinstance(t, _types.Array) and isinstance(t.elem, _types.Scalar):
        return {"": np.asarray(value)}
    if isinstance(t, _types.Tuple):
        out = {}
        for i, (sub, v) in enumerate(zip(t.items, value)):
            for k, a in components(sub, v).items():
                out[".%d%s" % (i, k)] = a
        return out
    if isinstance(t, _types.Array) and isinstance(t.elem, _types.Tuple):
        return {".%d" % i: np.asarray(v) for i, v in enumerate(value)}
    if isinstance(t, _types.Array) and isinstance(t.elem, _types.Struct):
        return {"." + name: np.ascontiguousarray(value[name]) for name, _ in t.elem.fields}
    if isinstance(t, _types.Struct):
        return {"." + name: np.asarray(value[name]) for name, _ in t.fields}
    raise NotImplementedError(str(t))


def out_name(suffix):
    return "result" + suffix + ".npy"


def compare(a, b, tol):
    if a.shape != b.shape:
        return "shape %s against the executable's %s" % (a.shape, b.shape)
    if a.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            x, y = a.astype(np.float64), b.astype(np.float64)
            bad = ~((np.isnan(x) & np.isnan(y)) | (x == y) | (np.abs(x - y) <= tol * (1 + np.abs(y))))
    else:
        bad = a != b
    if bad.any():
        i = int(np.argmax(bad.ravel()))
        return "[%d]: %r against the executable's %r" % (i, a.ravel()[i], b.ravel()[i])
    return None


def main():
    path, exe, outdir, backend = sys.argv[1:5]
    text = open(path).read()
    module = gpuc.compile(path, backend=backend)
    rng = np.random.default_rng(zlib.crc32(os.path.basename(path).encode()))
    entries, differ = 0, 0
    for name, entry in module.entries.items():
        base = re.sub(r"_x\d+$", "", name)
        chunk = text.split("// ---- entry %s\n" % base, 1)[-1].split("// ---- entry ", 1)[0]
        # each block: its sizes and the ranges its inputs are drawn from (the generator's intent:
        # cross-entropy targets in 0 .. m, say)
        blocks = re.findall(r"(?ms)^//! test \w+: ([^\n]*)\n(.*?)(?=^//! test |\Z)", chunk)[:3]
        tol = 1e-12 if backend == "c" else tolerance(chunk + entry.signature_text())
        problem, ran = None, 0
        for k, (block, body) in enumerate(blocks):
            sizes = dict(kv.split("=") for kv in block.split())
            spans = {m.group(1): (float(m.group(2)), float(m.group(3))) for m in
                     re.finditer(r"(?m)^//!\s+(\w+) = random .* in (\S+) \.\. (\S+)$", body)}
            if np.prod([int(v) for v in sizes.values()] or [1]) * 2 > ELEMENT_LIMIT:
                continue
            try:
                args, files = [], []
                for p, t in entry.params:
                    v, comps = inputs(t, sizes, rng, spans.get(p))
                    args.append(v)
                    for suffix, a in comps.items():
                        f = os.path.join(outdir, "%s-%d-in-%s%s.npy" % (name, k, p, suffix))
                        np.save(f, a)
                        files += ["--in", "%s%s=%s" % (p, suffix, f)]
            except NotImplementedError as e:
                problem = None
                print("skip %s: %s" % (name, e))
                break
            d = os.path.join(outdir, "%s-%d-out" % (name, k))
            os.makedirs(d, exist_ok=True)
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
            run = subprocess.run([exe, "-e", name, "--backend=c"] + files + ["--out", d + "/"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")
            try:
                got = components(entry.result, getattr(module, name)(*args))
            except gpuc.ExecutionError as e:
                if run.returncode == 0:
                    problem = "%s: Python raised %s; the executable succeeded" % (block, e)
                    break
                if "out of bounds" not in run.stderr:  # both may fail for an index out of bounds only
                    problem = "%s: Python raised %s; the executable failed: %s" % (block, e, run.stderr.strip()[-300:])
                    break
                continue
            except Exception as e:  # a wrong argument or result conversion: what this looks for
                problem = "%s: Python raised %s: %s" % (block, type(e).__name__, e)
                break
            if run.returncode != 0:
                problem = "%s: the executable failed (%s); Python returned a result" % (block, run.stderr.strip()[-300:])
                break
            ran += 1
            for suffix, a in got.items():
                want = np.load(os.path.join(d, out_name(suffix)))
                why = compare(a, want, tol)
                if why:
                    problem = "%s: result%s%s" % (block, suffix, why)
                    break
            if problem:
                break
        entries += 1
        if problem:
            differ += 1
            print("DIFF %s: %s" % (name, problem))
        else:
            print("ok %s %d" % (name, ran))
    print("python_side: %d entries, %d differ" % (entries, differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
