#!/usr/bin/env python3
"""bench/paths/exe_bench.py: bench cases through a built executable's own
timing, the way a user times `gpuc prog.gdsl -o prog`:

    prog -e ENTRY --backend=cuda --in x=x.npy ... -r RUNS -t times.txt --out DIR/

(docs/executables.md, "What -r/-t time": CUDA events between the entry's
marks, the kernels and whatever runs between them on the stream, not the
host transfers of the arguments and results). One untimed warm-up run, RUNS
timed runs, the median of the whole microseconds the program writes.

    python3 bench/paths/exe_bench.py --bin bench/bin/paths --log2 28 [--runs 20] \
        [--cases saxpy_f32,sum_f32,...] [--out FILE.jsonl]

Inputs are generated here with NumPy (the distributions of bench/common.cuh:
dyadic k/8 for float sums and scans, so they compare exactly; uniform in
[-1, 1) otherwise; integers in -1000..1000 without 0), written as .npy files
into a scratch folder (in /dev/shm when it has room: no disk in the way) and
kept for the next cases that take the same input (Inputs), and the result the
program writes (the last run's) is compared with a NumPy reference. One JSON
line per case and size, src "gpuc_exe", as the other drivers write. With
--deadline EPOCH_SECONDS a case that would start after it is not run and says
so (check "not run: out of time"). Exit status 1 if a case failed to run.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

DT = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}
ROW_LENGTHS = (256, 1024, 4096, 32768)

# case id: (report case, dtype, program, entry, inputs, data)
#   inputs: the array parameters in order ("a" is saxpy's scalar, given on stdin)
#   data: "dyadic", "uniform" or "smallint" (floats of integer cases use smallint)
CASES = {}


def _case(name, dtype, prog, entry, inputs, data):
    CASES[f"{name}_{dtype}"] = (name, dtype, prog, entry, inputs, data)


_case("saxpy", "f32", "elementwise", "saxpy", ("x", "y"), "uniform")
_case("chain", "f32", "elementwise", "chain", ("x", "y"), "uniform")
for _t in ("f32", "f64", "i32", "i64"):
    _case("sum", _t, "reduce", f"sum_{_t}", ("x",), "dyadic")
    _case("max", _t, "reduce", f"max_{_t}", ("x",), "uniform")
_case("dot", "f32", "reduce", "dot_f32", ("x", "y"), "dyadic")
_case("sumsq", "f32", "reduce", "sumsq_f32", ("x",), "uniform")
for _t in ("i32", "f32", "i64"):
    _case("scan_incl", _t, "scan", f"incl_{_t}", ("x",), "dyadic")
    _case("scan_excl", _t, "scan", f"excl_{_t}", ("x",), "dyadic")
_case("recurrence", "f32", "scan", "recurrence", ("a", "b"), "uniform")
_case("filter", "f32", "filter", "filter_f32", ("x",), "uniform")
_case("filter", "i32", "filter", "filter_i32", ("x",), "uniform")
_case("row_sums", "f32", "rows", "row_sums", ("A",), "dyadic")
_case("row_softmax", "f32", "rows", "row_softmax", ("A",), "uniform")
_case("logsumexp", "f32", "stats", "logsumexp_f32", ("x",), "uniform")
_case("softmax_stats", "f32", "stats", "softmax_stats", ("x",), "uniform")
_case("mean_var", "f32", "stats", "mean_var_f32", ("x",), "positive")
# LayerNorm's weight w[m] (positive) and bias b[m]; cross-entropy's targets t[rows] (i64 in 0..m-1)
_case("layer_norm", "f32", "rows_nn", "layer_norm", ("A", "w", "b"), "uniform")
_case("xent", "f32", "rows_nn", "xent", ("A", "t"), "uniform")
ROW_CASES = ("row_sums", "row_softmax", "layer_norm", "xent")
# the inputs that are not the case's main array: (their length, dtype, data)
SIDE_INPUTS = {("layer_norm", "w"): ("m", "f32", "positive"), ("layer_norm", "b"): ("m", "f32", "uniform"),
               ("xent", "t"): ("rows", "i64", "targets")}


def gen(dtype, n, seed, data, m=0):
    rng = np.random.default_rng(seed)
    t = DT[dtype]
    if data == "targets":
        return rng.integers(0, m, n, dtype=np.int64).astype(t)
    if data == "positive":
        return (rng.random(n, dtype=np.float64) + 0.5).astype(t)
    if np.issubdtype(t, np.integer):
        k = rng.integers(-1000, 1000, n, dtype=np.int64)
        k[k >= 0] += 1
        return k.astype(t)
    if data == "dyadic":
        k = rng.integers(-8, 8, n, dtype=np.int8)
        k[k >= 0] += 1
        return (k.astype(np.float32) / 8).astype(t)
    v = rng.random(n, dtype=np.float32 if t == np.float32 else np.float64) * 2 - 1
    v[v == 0] = 0.5
    return v.astype(t)


def reference(name, dtype, xs, m):
    """(expected result, rtol, atol); exact where the data makes it exact."""
    t = DT[dtype]
    ints = np.issubdtype(t, np.integer)
    x = xs[0]
    if name == "saxpy":
        return np.float32(2.0) * x + xs[1], 1e-6, 1e-6
    if name == "chain":
        a, b = x.astype(np.float64), xs[1].astype(np.float64)
        return np.exp(-a * a) * np.sin(b) + 2 * a, 1e-5, 1e-5
    if name == "sum":
        s = np.sum(x, dtype=np.int64 if ints else np.float64)
        return np.array(s).astype(t), 0, 0  # int64 -> int32 wraps, as gpuc's sum does
    if name == "max":
        return np.array(x.max()), 0, 0
    if name == "dot":
        return np.array(np.dot(x.astype(np.float64), xs[1].astype(np.float64))), 1e-4, 0
    if name == "sumsq":
        a = x.astype(np.float64)
        return np.array(np.dot(a, a)), 1e-4, 0
    if name in ("scan_incl", "scan_excl"):
        c = np.cumsum(x, dtype=np.int64 if ints else np.float64)
        if name == "scan_excl":
            c = np.concatenate(([0], c[:-1]))
        return c.astype(t) if ints else c, 0, 0
    if name == "recurrence":
        return None, 1e-3, 1e-4  # checked by windows (check_recurrence)
    if name == "filter":
        return x[x > 0], 0, 0
    if name == "row_sums":
        return x.astype(np.float64).sum(axis=1), 0, 0
    if name == "row_softmax":
        a = x.astype(np.float64)
        e = np.exp(a - a.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True), 1e-4, 1e-7
    if name in ("logsumexp", "softmax_stats"):
        a = x.astype(np.float64)
        mx = a.max()
        s = np.exp(a - mx).sum()
        return (np.array(mx + np.log(s)) if name == "logsumexp" else (np.array(mx), np.array(s))), 1e-5, 1e-5
    if name == "mean_var":
        a = x.astype(np.float64)
        return (np.array(a.mean()), np.array(a.var())), 1e-4, 1e-5
    if name == "layer_norm":
        a = x.astype(np.float64)
        mu = a.mean(axis=1, keepdims=True)
        var = ((a - mu) ** 2).mean(axis=1, keepdims=True)
        return (a - mu) / np.sqrt(var + 1e-5) * xs[1] + xs[2], 1e-4, 1e-4
    if name == "xent":
        a = x.astype(np.float64)
        mx = a.max(axis=1)
        lse = mx + np.log(np.exp(a - mx[:, None]).sum(axis=1))
        return lse - a[np.arange(a.shape[0]), xs[1]], 1e-5, 1e-5
    raise ValueError(name)


def check_recurrence(got, a, b, rtol, atol):
    """x[i] = a[i] x[i-1] + b[i] in float64, checked on 17 windows of 4096
    elements: with |a| < 1 the history fades (after 512 steps its weight is
    far below float32's resolution), so each window's recurrence starts from
    0 512 elements before it, and a Python loop stays short at 2^28."""
    n = len(a)
    if got.shape != (n,):
        return f"WRONG shape: {got.shape}, expected {(n,)}"
    starts = sorted({0} | {int(s) for s in np.linspace(0, max(n - 4096, 0), 16)})
    for s in starts:
        v = 0.0
        lo = max(s - 512, 0)
        aa, bb = a[lo:s + 4096].astype(np.float64).tolist(), b[lo:s + 4096].astype(np.float64).tolist()
        ref = []
        for i in range(len(aa)):
            v = aa[i] * v + bb[i]
            ref.append(v)
        r = compare(got[s:s + 4096], np.array(ref[s - lo:]), rtol, atol)
        if r != "ok":
            return r.replace("WRONG at ", "WRONG at %d + " % s)
    return "ok"


def compare(got, ref, rtol, atol):
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        return f"WRONG shape: {got.shape}, expected {ref.shape}"
    g, r = got.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
    bad = ~(np.abs(g - r) <= atol + rtol * np.abs(r))
    if bad.any():
        i = int(np.argmax(bad))
        return f"WRONG at {i}: got {g[i]:.9g}, expected {r[i]:.9g}"
    return "ok"


class Inputs:
    """the generated inputs of the last few cases, as arrays and .npy files
    in dir: cases that take the same input (the f32 sums, scans and dot) write
    it once"""
    KEEP = 4

    def __init__(self, dir):
        self.dir = dir
        self.kept = []  # (key, array, path), the newest last

    def get(self, dtype, n, m, seed, data, shape=None):
        """n values (rows of m when m and no shape), or shape's"""
        key = (dtype, n, m, seed, data)
        for k in self.kept:
            if k[0] == key:  # the newest again: a case's inputs are never the oldest
                self.kept.remove(k)
                self.kept.append(k)
                return k[1], k[2]
        v = gen(dtype, n, seed, data, m)
        if m and shape is None:
            v = v.reshape(n // m, m)
        path = os.path.join(self.dir, "in_%s_%d_%d_%d_%s.npy" % key)
        np.save(path, v)
        self.kept.append((key, v, path))
        if len(self.kept) > self.KEEP:
            os.unlink(self.kept.pop(0)[2])
        return v, path


def scratch_dir():
    """a folder for the inputs and results: in /dev/shm when it has 16 GiB free"""
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize >= 16 << 30:
            return tempfile.mkdtemp(prefix="gpuc_exe_bench.", dir="/dev/shm")
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="gpuc_exe_bench.")


def run_one(exe, cid, n, m, runs, tmp, inputs_cache, backend="cuda"):
    name, dtype, prog, entry, inputs, data = CASES[cid]
    seed = 0x5eed + n + m
    xs = []
    args = [exe, "-e", entry, "--backend=" + backend]
    for i, p in enumerate(inputs):
        side = SIDE_INPUTS.get((name, p))
        if side:
            length = m if side[0] == "m" else n // m
            v, path = inputs_cache.get(side[1], length, m, seed + i, side[2], shape=(length,))
        else:
            v, path = inputs_cache.get(dtype, n, m, seed + i, data)
        xs.append(v)
        args += ["--in", f"{p}={path}"]
    times = os.path.join(tmp, "times.txt")
    outdir = os.path.join(tmp, "out") + "/"
    os.makedirs(outdir, exist_ok=True)
    for f in os.listdir(outdir):  # no result of an earlier case can pass for this one's
        os.unlink(os.path.join(outdir, f))
    args += ["-r", str(runs), "-t", times, "--out", outdir]
    stdin = "2.0\n" if name == "saxpy" else ""
    rec = {"src": "gpuc_exe", "case": name, "dtype": dtype, "n": n, "m": m}
    p = subprocess.run(args, input=stdin, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if p.returncode != 0:
        rec["check"] = "error: exit %d: %s" % (p.returncode, (p.stderr.strip().splitlines() or [""])[-1][:200])
        return rec
    t = sorted(float(v) for v in open(times).read().split())
    k = len(t)
    rec.update(us=(t[k // 2] if k % 2 else (t[k // 2 - 1] + t[k // 2]) / 2), us_min=t[0], reps=k)
    ref, rtol, atol = reference(name, dtype, xs, m)
    if isinstance(ref, tuple):  # a tuple result: result.0.npy, result.1.npy, ...
        got = None
        for i, r in enumerate(ref):
            rec["check"] = compare(np.load(os.path.join(outdir, f"result.{i}.npy")), r, rtol, atol)
            if rec["check"] != "ok":
                break
    else:
        got = np.load(os.path.join(outdir, "result.npy"))
        if name == "recurrence":
            rec["check"] = check_recurrence(got, xs[0], xs[1], rtol, atol)
        else:
            rec["check"] = compare(got, ref, rtol, atol)
    if name == "filter":
        rec["out_n"] = int(got.size)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="bench/bin/paths", help="folder of the executables (one per bench program)")
    ap.add_argument("--log2", type=int, default=28)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    ap.add_argument("--m", default=",".join(map(str, ROW_LENGTHS)), help="row lengths of the row cases")
    ap.add_argument("--out", default=None)
    ap.add_argument("--backend", default="cuda", help="cuda, or c (checks this script without a GPU)")
    ap.add_argument("--deadline", type=float, default=None, help="epoch seconds after which no case starts")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    ids = [c for c in a.cases.split(",") if c] or list(CASES)
    unknown = [c for c in ids if c not in CASES]
    if unknown:
        print(f"exe_bench: unknown case(s) {', '.join(unknown)} (--list shows them)", file=sys.stderr)
        return 2
    out = open(a.out, "a") if a.out else sys.stdout
    n = 1 << a.log2
    failed = 0
    tmp = scratch_dir()
    inputs_cache = Inputs(tmp)
    for cid in ids:
        name, dtype, prog = CASES[cid][:3]
        exe = os.path.join(a.bin, prog)
        ms = [int(v) for v in a.m.split(",") if v] if name in ROW_CASES else [0]
        for m in ms:
            if m > n:
                continue
            try:
                if a.deadline is not None and time.time() > a.deadline:
                    rec = {"src": "gpuc_exe", "case": name, "dtype": dtype, "n": n, "m": m,
                           "check": "not run: out of time"}
                elif not os.access(exe, os.X_OK):
                    rec = {"src": "gpuc_exe", "case": name, "dtype": dtype, "n": n, "m": m,
                           "check": f"error: no executable {exe}"}
                else:
                    rec = run_one(exe, cid, n, m, a.runs, tmp, inputs_cache, a.backend)
            except (subprocess.TimeoutExpired, OSError, ValueError) as e:
                rec = {"src": "gpuc_exe", "case": name, "dtype": dtype, "n": n, "m": m, "check": f"error: {e}"}
            failed += str(rec.get("check", "")).startswith("error")
            out.write(json.dumps(rec) + "\n")
            out.flush()
            print("  gpuc_exe   %-16s %-4s n=%-11d m=%-6d %10.2f us  %s" %
                  (name, dtype, n, m, rec.get("us", -1), rec["check"]), file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
