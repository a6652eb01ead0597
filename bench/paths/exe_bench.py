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

Inputs are generated here with NumPy in chunks on every core (the
distributions of bench/common.cuh: dyadic k/8 for float sums and scans, so
they compare exactly; uniform in [-1, 1) otherwise; integers in -1000..1000
without 0), one array for every case and row length that takes it, written
as .npy files (one a shape) into a scratch folder (in /dev/shm when it has
room: no disk in the way) and kept for the next cases (Inputs). The result
the program writes (the last run's; the runs before it copy nothing back) is
checked in chunks on every core against a NumPy reference (check). One JSON
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
from concurrent.futures import ThreadPoolExecutor

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
TUPLE_CASES = ("softmax_stats", "mean_var")  # results of two scalars
# the inputs that are not the case's main array: (their length, dtype, data)
SIDE_INPUTS = {("layer_norm", "w"): ("m", "f32", "positive"), ("layer_norm", "b"): ("m", "f32", "uniform"),
               ("xent", "t"): ("rows", "i64", "targets")}


CHUNK = 1 << 22  # elements a thread generates, computes or compares at a time
POOL = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)  # NumPy releases the GIL in its loops


def chunked(fn, n, step=CHUNK):
    """fn(lo, hi) over [0, n) in steps, on every core; the results in order"""
    return list(POOL.map(lambda lo: fn(lo, min(lo + step, n)), range(0, n, step)))


SMALLINT = np.concatenate((np.arange(-1000, 0), np.arange(1, 1001)))
DYADIC = np.concatenate((np.arange(-8, 0), np.arange(1, 9))).astype(np.float32) / 8


def gen(dtype, n, seed, data, m=0):
    """n values of a kind of data; each chunk of CHUNK from its own generator
    (seeded by seed and the chunk's index), so the values do not depend on
    the number of cores"""
    t = DT[dtype]
    out = np.empty(n, dtype=t)

    def fill(lo, hi):
        rng = np.random.default_rng([seed, lo // CHUNK])
        k = hi - lo
        if data == "targets":
            out[lo:hi] = rng.integers(0, m, k, dtype=np.int64)
        elif data == "positive":
            out[lo:hi] = rng.random(k, dtype=np.float64) + 0.5
        elif np.issubdtype(t, np.integer):  # -1000..1000 without 0
            out[lo:hi] = SMALLINT[rng.integers(0, 2000, k, dtype=np.int16)]
        elif data == "dyadic":  # k/8 for k in -8..8 without 0
            out[lo:hi] = DYADIC[rng.integers(0, 16, k, dtype=np.int8)]
        else:
            v = rng.random(k, dtype=np.float32 if t == np.float32 else np.float64) * 2 - 1
            v[v == 0] = 0.5
            out[lo:hi] = v

    chunked(fill, n)
    return out


def compare(got, ref, rtol, atol, base=0):
    """None when got matches ref within atol + rtol * |ref|, else the first
    difference (its index plus base)"""
    got = np.asarray(got)
    ref = np.asarray(ref)
    if got.shape != ref.shape:
        return f"WRONG shape: {got.shape}, expected {ref.shape}"
    if rtol == 0 and atol == 0 and got.dtype == ref.dtype:
        bad = got.ravel() != ref.ravel()
        if np.issubdtype(got.dtype, np.floating):
            bad &= ~(np.isnan(got.ravel()) & np.isnan(ref.ravel()))
            bad |= np.isnan(got.ravel()) != np.isnan(ref.ravel())
    else:
        g, r = got.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
        bad = ~(np.abs(g - r) <= atol + rtol * np.abs(r))
    if bad.any():
        i = int(np.argmax(bad))
        g, r = got.ravel()[i], ref.ravel()[i]
        return f"WRONG at {base + i}: got {float(g):.9g}, expected {float(r):.9g}"
    return None


def first_wrong(results):
    """the first difference of chunked compares, or "ok" """
    return next((r for r in results if r is not None), "ok")


def scalar(got, want, rtol, atol):
    return compare(np.asarray(got).reshape(()), np.asarray(want), rtol, atol) or "ok"


def scalars(gots, wants, rtol, atol):
    """the components of a tuple result, in order"""
    return next((r for r in (scalar(g, w, rtol, atol) for g, w in zip(gots, wants)) if r != "ok"), "ok")


def check(name, dtype, xs, m, got):
    """got (the result, or a tuple of its components; arrays may be memory
    maps) against a reference computed here in chunks on every core: "ok" or
    what is wrong. Exact where the data makes it exact (integers, dyadic sums
    and scans, max, filter, row sums), else within the case's tolerance."""
    t = DT[dtype]
    ints = np.issubdtype(t, np.integer)
    x = xs[0]
    n = x.size
    rows = n // m if m else 0
    rstep = max(1, CHUNK // m) if m else 0
    if name in ("saxpy", "chain"):
        if got.shape != x.shape:
            return f"WRONG shape: {got.shape}, expected {x.shape}"
        if name == "saxpy":
            return first_wrong(chunked(lambda lo, hi: compare(
                got[lo:hi], np.float32(2.0) * x[lo:hi] + xs[1][lo:hi], 1e-6, 1e-6, lo), n))
        return first_wrong(chunked(lambda lo, hi: compare(
            got[lo:hi], np.exp(-x[lo:hi].astype(np.float64) ** 2) * np.sin(xs[1][lo:hi].astype(np.float64))
            + 2 * x[lo:hi].astype(np.float64), 1e-5, 1e-5, lo), n))
    if name == "sum":  # exact in any order: integers in int64, dyadic floats in float64
        s = sum(chunked(lambda lo, hi: int(np.sum(x[lo:hi], dtype=np.int64)) if ints
                        else float(np.sum(x[lo:hi], dtype=np.float64)), n))
        return scalar(got, np.array(np.int64(s) if ints else s).astype(t), 0, 0)  # int64 -> int32 wraps, as gpuc's sum
    if name == "max":
        return scalar(got, max(chunked(lambda lo, hi: x[lo:hi].max(), n)), 0, 0)
    if name in ("dot", "sumsq"):
        y = xs[1] if name == "dot" else x
        s = sum(chunked(lambda lo, hi: float(np.dot(x[lo:hi].astype(np.float64), y[lo:hi].astype(np.float64))), n))
        return scalar(got, s, 1e-4, 0)
    if name in ("scan_incl", "scan_excl"):  # chunk totals, then each chunk's scan from its offset
        acc = np.int64 if ints else np.float64
        if got.shape != x.shape:
            return f"WRONG shape: {got.shape}, expected {x.shape}"
        totals = chunked(lambda lo, hi: np.sum(x[lo:hi], dtype=acc), n)
        offsets = np.concatenate(([0], np.cumsum(np.array(totals, dtype=acc))[:-1])).astype(acc)

        def part(lo, hi):
            c = np.cumsum(x[lo:hi], dtype=acc) + offsets[lo // CHUNK]
            if name == "scan_excl":
                c -= x[lo:hi]
            return compare(got[lo:hi], c.astype(t), 0, 0, lo)  # int64 -> int32 wraps
        return first_wrong(chunked(part, n))
    if name == "recurrence":
        return check_recurrence(got, xs[0], xs[1], 1e-3, 1e-4)
    if name == "filter":
        counts = chunked(lambda lo, hi: int(np.count_nonzero(x[lo:hi] > 0)), n)
        if got.shape != (sum(counts),):
            return f"WRONG shape: {got.shape}, expected {(sum(counts),)}"
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))

        def part(lo, hi):
            o = int(starts[lo // CHUNK])
            v = x[lo:hi]
            return compare(got[o:o + counts[lo // CHUNK]], v[v > 0], 0, 0, o)
        return first_wrong(chunked(part, n))
    if name in ROW_CASES:
        a2 = x.reshape(rows, m)
        want = (rows, m) if name in ("row_softmax", "layer_norm") else (rows,)
        if got.shape != want:
            return f"WRONG shape: {got.shape}, expected {want}"

        def part(lo, hi):
            a = a2[lo:hi].astype(np.float64)
            if name == "row_sums":
                return compare(got[lo:hi], a.sum(axis=1), 0, 0, lo)
            if name == "row_softmax":
                e = np.exp(a - a.max(axis=1, keepdims=True))
                return compare(got[lo:hi], e / e.sum(axis=1, keepdims=True), 1e-4, 1e-7, lo * m)
            if name == "layer_norm":
                mu = a.mean(axis=1, keepdims=True)
                var = ((a - mu) ** 2).mean(axis=1, keepdims=True)
                return compare(got[lo:hi], (a - mu) / np.sqrt(var + 1e-5) * xs[1] + xs[2], 1e-4, 1e-4, lo * m)
            mx = a.max(axis=1)
            lse = mx + np.log(np.exp(a - mx[:, None]).sum(axis=1))
            return compare(got[lo:hi], lse - a[np.arange(hi - lo), xs[1][lo:hi]], 1e-5, 1e-5, lo)
        return first_wrong(chunked(part, rows, rstep))
    if name in ("logsumexp", "softmax_stats"):
        mx = float(max(chunked(lambda lo, hi: x[lo:hi].max(), n)))
        s = sum(chunked(lambda lo, hi: float(np.exp(x[lo:hi].astype(np.float64) - mx).sum()), n))
        if name == "logsumexp":
            return scalar(got, mx + np.log(s), 1e-5, 1e-5)
        return scalars(got, (mx, s), 1e-5, 1e-5)
    if name == "mean_var":
        mean = sum(chunked(lambda lo, hi: float(x[lo:hi].astype(np.float64).sum()), n)) / n
        var = sum(chunked(lambda lo, hi: float(((x[lo:hi].astype(np.float64) - mean) ** 2).sum()), n)) / n
        return scalars(got, (mean, var), 1e-4, 1e-5)
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
        r = compare(got[s:s + 4096], np.array(ref[s - lo:]), rtol, atol, s)
        if r is not None:
            return r
    return "ok"


class Inputs:
    """the generated inputs of the last few cases, as arrays and .npy files
    in dir: each array is generated once for every case that takes it (the
    f32 inputs of saxpy, max, filter, the statistics and the row cases are
    one array; the row cases' files one a shape), and its file written once
    a shape"""
    KEEP = 4

    def __init__(self, dir):
        self.dir = dir
        self.kept = []  # [key, array, {shape: path}], the newest last

    def get(self, dtype, n, m, seed, data, shape):
        """the array of n values (TARGET data: in 0..m-1), and its file with shape"""
        key = (dtype, n, m if data == "targets" else 0, seed, data)
        entry = next((k for k in self.kept if k[0] == key), None)
        if entry:
            self.kept.remove(entry)  # the newest again: a case's inputs are never the oldest
        else:
            entry = [key, gen(dtype, n, seed, data, m), {}]
            if len(self.kept) >= self.KEEP:
                for path in self.kept.pop(0)[2].values():
                    os.unlink(path)
        self.kept.append(entry)
        if shape not in entry[2]:
            path = os.path.join(self.dir, "in_%s_%d_%d_%d_%s" % key + "_%s.npy" % "x".join(map(str, shape)))
            np.save(path, entry[1].reshape(shape))
            entry[2][shape] = path
        return entry[1], entry[2][shape]


def scratch_dir():
    """a folder for the inputs and results: in /dev/shm when it has 16 GiB free"""
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize >= 16 << 30:
            return tempfile.mkdtemp(prefix="gpuc_exe_bench.", dir="/dev/shm")
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="gpuc_exe_bench.")


def input_data(dtype, data):
    """the data an input of dtype gets: integers are small integers whatever the case asks"""
    return "smallint" if np.issubdtype(DT[dtype], np.integer) and data != "targets" else data


def load_result(path):
    """a result file: memory-mapped when large (the checks read it in chunks)"""
    return np.load(path, mmap_mode="r" if os.path.getsize(path) > (1 << 20) else None)


def run_one(exe, cid, n, m, runs, tmp, inputs_cache, backend="cuda"):
    name, dtype, prog, entry, inputs, data = CASES[cid]
    seed = 0x5eed + n  # the same values for every row length: one array, a file a shape
    t0 = time.time()
    xs = []
    args = [exe, "-e", entry, "--backend=" + backend]
    for i, p in enumerate(inputs):
        side = SIDE_INPUTS.get((name, p))
        if side:
            length = m if side[0] == "m" else n // m
            v, path = inputs_cache.get(side[1], length, m, seed + i, side[2], (length,))
        else:
            v, path = inputs_cache.get(dtype, n, m, seed + i, input_data(dtype, data), (n // m, m) if m else (n,))
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
    t1 = time.time()
    p = subprocess.run(args, input=stdin, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    t2 = time.time()
    if p.returncode != 0:
        rec["check"] = "error: exit %d: %s" % (p.returncode, (p.stderr.strip().splitlines() or [""])[-1][:200])
        return rec
    t = sorted(float(v) for v in open(times).read().split())
    k = len(t)
    rec.update(us=(t[k // 2] if k % 2 else (t[k // 2 - 1] + t[k // 2]) / 2), us_min=t[0], reps=k)
    if name in TUPLE_CASES:  # a tuple result: result.0.npy, result.1.npy, ...
        got = tuple(load_result(os.path.join(outdir, f"result.{i}.npy")) for i in range(2))
    else:
        got = load_result(os.path.join(outdir, "result.npy"))
    rec["check"] = check(name, dtype, xs, m, got)
    if name == "filter":
        rec["out_n"] = int(got.size)
    # where the seconds of the case went: inputs (generated and written), the executable, the check
    rec["wall_s"] = {"inputs": round(t1 - t0, 2), "exe": round(t2 - t1, 2), "check": round(time.time() - t2, 2)}
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
    ap.add_argument("--programs", action="store_true", help="with --list: each case id with its bench program")
    a = ap.parse_args()
    if a.list:
        print("\n".join(f"{c} {CASES[c][2]}" if a.programs else c for c in CASES))
        return 0
    ids = [c for c in a.cases.split(",") if c] or list(CASES)
    unknown = [c for c in ids if c not in CASES]
    if unknown:
        print(f"exe_bench: unknown case(s) {', '.join(unknown)} (--list shows them)", file=sys.stderr)
        return 2
    # cases that take the same input next to each other (the cache keeps the last few)
    ids.sort(key=lambda c: (CASES[c][1], input_data(CASES[c][1], CASES[c][5])))
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
            print("  gpuc_exe   %-16s %-4s n=%-11d m=%-6d %10.2f us  %s%s" %
                  (name, dtype, n, m, rec.get("us", -1), rec["check"],
                   "  (s: %s)" % ", ".join("%s %.1f" % kv for kv in rec["wall_s"].items()) if "wall_s" in rec else ""),
                  file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
