#!/usr/bin/env python3
"""peers_py.py: the Python peers of the gpuc benchmark suite.

Times CuPy (sum, max, cumsum, ElementwiseKernel saxpy and chain, ReductionKernel
dot, boolean-mask compaction, row sums) and PyTorch, eager and torch.compile
(saxpy, exp(-x*x)*sin(y)+2x, sum, max, dot, sum of squares, cumsum, logsumexp,
softmax statistics (max and sum of exp), mean/var, compaction by boolean mask,
row sums and row softmax on 2-D arrays), each with CUDA events around every
call: the median of many calls (about 20 ms of GPU time) after warm-up, on
random data. torch.compile runs with static shapes at the largest size and on
the 2-D arrays (one compile per function, dtype and shape; Inductor's and
Triton's caches where TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR say, so a
second run on the same machine compiles nothing); compile time is not timed.
Writes JSON lines (bench/report.py reads them).

    python3 bench/peers_py.py [--out FILE] [--sizes 10,12,...,28] [--compile targets|all|none]
                              [--only torch|cupy|rows|compile-rest] [--deadline EPOCH_SECONDS]

--compile targets compiles only the functions a target of bench/report.py
compares with (COMPILE_TARGETS); --only compile-rest then compiles and times
the others (no eager, no CuPy), which bench/run.sh runs last. With --deadline,
work that would start after it is not run and says so (a record whose check
is "not run: out of time").
"""
import argparse
import json
import math
import os
import sys
import time

ROW_LENGTHS = (256, 1024, 4096, 32768, 262144)
# the torch.compile twins a target compares with (bench/report.py, issue 16):
# logsumexp and softmax statistics, mean/variance, the chain, row softmax,
# LayerNorm and cross-entropy; the rest are compiled by --only compile-rest
COMPILE_TARGETS = {"chain", "lse", "stats", "meanvar", "row_softmax", "layer_norm", "xent"}
DEADLINE = None  # --deadline: time.time() after which nothing new starts


def out_of_time():
    return DEADLINE is not None and time.time() > DEADLINE


def median(v):
    v = sorted(v)
    k = len(v)
    return v[k // 2] if k % 2 else 0.5 * (v[k // 2 - 1] + v[k // 2])


class Bench:
    def __init__(self, out):
        self.out = out
        self.skipped = 0
        self.torch = None
        self.cupy = None

    def emit(self, src, case, dtype, n, m, times, check="ok", **extra):
        rec = {"src": src, "case": case, "dtype": dtype, "n": n, "m": m, "check": check}
        if times is not None:
            rec.update(us=round(times[0], 3), us_min=round(times[1], 3), reps=times[2])
        rec.update(extra)
        self.out.write(json.dumps(rec) + "\n")
        self.out.flush()
        us = times[0] if times else -1
        print(f"  {src:14s} {case:16s} {dtype:4s} n={n:<11d} m={m:<6d} {us:10.2f} us  {check}",
              file=sys.stderr, flush=True)

    def not_run(self, src, case, dtype, n, m):
        """a record for a case the deadline left out"""
        self.skipped += 1
        self.emit(src, case, dtype, n, m, None, "not run: out of time")

    def time_torch(self, f, budget_ms=20.0, max_reps=200):
        torch = self.torch
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        for _ in range(2):
            f()
        e0.record()
        f()
        e1.record()
        e1.synchronize()
        ms = e0.elapsed_time(e1)
        reps = max(10, min(max_reps, int(budget_ms / ms) if ms > 0 else max_reps))
        ts = []
        for _ in range(reps):
            e0.record()
            f()
            e1.record()
            e1.synchronize()
            ts.append(e0.elapsed_time(e1) * 1000.0)
        return (median(ts), min(ts), reps)

    def time_cupy(self, f, budget_ms=20.0, max_reps=200, min_reps=10):
        cp = self.cupy
        e0 = cp.cuda.Event()
        e1 = cp.cuda.Event()
        for _ in range(2):
            f()
        e0.record()
        f()
        e1.record()
        e1.synchronize()
        ms = cp.cuda.get_elapsed_time(e0, e1)
        reps = max(min_reps, min(max_reps, int(budget_ms / ms) if ms > 0 else max_reps))
        ts = []
        for _ in range(reps):
            e0.record()
            f()
            e1.record()
            e1.synchronize()
            ts.append(cp.cuda.get_elapsed_time(e0, e1) * 1000.0)
        return (median(ts), min(ts), reps)


def run_torch(b, sizes, compile_names, row_total, eager_on=True):
    """eager (unless not eager_on) at every size; torch.compile of the
    functions in compile_names (None: all) at the largest size and on the
    2-D arrays"""
    import torch
    b.torch = torch
    dev = "cuda"
    tdt = {"f32": torch.float32, "f64": torch.float64, "i32": torch.int32, "i64": torch.int64}
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)

    def rnd(n, dt, kind="uniform"):
        if dt in ("f32", "f64"):
            x = torch.rand(n, device=dev, dtype=tdt[dt], generator=gen) * 2 - 1
            if kind == "positive":
                x = x.abs() + 0.5
            return x
        return torch.randint(-1000, 1001, (n,), device=dev, dtype=tdt[dt], generator=gen) | 1

    # torch.compile with static shapes, one compile per (function, dtype,
    # size): with dynamic=True Inductor sizes its reductions from the first
    # call's (small) shape and runs a 2^28 sum at ~14 GB/s, which is not what
    # a user of one size gets. Compiles run only at the largest size (and 2-D).
    top = 1 << max(sizes)
    for knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                 "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 1024)

    def compiled(f):
        return torch.compile(f, dynamic=False)

    # the functions, eager; compiled twins made per size (static shapes)
    def saxpy(a, x, y):
        return a * x + y

    def chain(x, y):
        return torch.exp(-x * x) * torch.sin(y) + 2.0 * x

    def tsum(x):
        return torch.sum(x)

    def tmax(x):
        return torch.amax(x)

    def dot_e(x, y):
        return torch.dot(x, y)

    def dot_c(x, y):
        return (x * y).sum()

    def sumsq(x):
        return (x * x).sum()

    def cumsum(x):
        return torch.cumsum(x, 0, dtype=x.dtype)

    def lse(x):
        return torch.logsumexp(x, 0)

    def stats(x):
        m = torch.amax(x)
        return m, torch.exp(x - m).sum()

    def meanvar(x):
        v, m = torch.var_mean(x, correction=0)
        return m, v

    def compact(x):
        return x[x > 0]

    def row_sums(a):
        return a.sum(1)

    def row_softmax(a):
        return torch.softmax(a, 1)

    comp = {}
    ctime = {}

    def get_c(name, f):
        if name not in comp:
            comp[name] = compiled(f)
        return comp[name]

    def bench_pair(case, dt, n, m, eager_f, comp_name, comp_f, args, check=None):
        """eager and (optionally) compiled, same arguments; check compiled
        against eager (allclose)."""
        want_c = comp_f is not None and (compile_names is None or comp_name in compile_names) and (m or n == top)
        if out_of_time():
            if eager_on:
                b.not_run("torch", case, dt, n, m)
            if want_c:
                b.not_run("torch_compile", case, dt, n, m)
            return
        if eager_on:
            t = b.time_torch(lambda: eager_f(*args))
            b.emit("torch", case, dt, n, m, t)
        if want_c:
            key = f"{comp_name}:{dt}:{n}:{m}"
            cf = get_c(key, comp_f)
            first = key not in ctime
            if first:
                t0 = time.time()
                cf(*args)
                torch.cuda.synchronize()
                ctime[key] = time.time() - t0
            chk = "ok"
            try:
                r1 = eager_f(*args)
                r2 = cf(*args)
                r1 = r1 if isinstance(r1, tuple) else (r1,)
                r2 = r2 if isinstance(r2, tuple) else (r2,)
                for p, q in zip(r1, r2):
                    if p.dtype.is_floating_point:
                        ok = torch.allclose(p.double(), q.double(), rtol=1e-3, atol=1e-3 * max(1.0, float(p.double().abs().max())))
                    else:
                        ok = torch.equal(p, q)
                    if not ok:
                        chk = "WRONG vs eager"
            except Exception as e:  # noqa: BLE001
                chk = "error: " + str(e)[:80]
            tc = b.time_torch(lambda: cf(*args))
            b.emit("torch_compile", case, dt, n, m, tc, chk, compile_s=round(ctime[key], 2))

    for k in sizes:
        n = 1 << k
        x = rnd(n, "f32")
        y = rnd(n, "f32")
        a = torch.tensor(0.75, device=dev, dtype=torch.float32)
        bench_pair("saxpy", "f32", n, 0, saxpy, "saxpy", saxpy, (a, x, y))
        bench_pair("chain", "f32", n, 0, chain, "chain", chain, (x, y))
        bench_pair("dot", "f32", n, 0, dot_e, "dot", dot_c, (x, y))
        bench_pair("sumsq", "f32", n, 0, sumsq, "sumsq", sumsq, (x,))
        bench_pair("logsumexp", "f32", n, 0, lse, "lse", lse, (x,))
        bench_pair("softmax_stats", "f32", n, 0, stats, "stats", stats, (x,))
        bench_pair("mean_var", "f32", n, 0, meanvar, "meanvar", meanvar, (x,))
        del y
        for dt in ("f32", "f64", "i32", "i64"):
            xd = x if dt == "f32" else rnd(n, dt)
            cmp = dt == "f32"
            bench_pair("sum", dt, n, 0, tsum, "sum", tsum if cmp else None, (xd,))
            bench_pair("max", dt, n, 0, tmax, "max", tmax if cmp else None, (xd,))
            bench_pair("scan_incl", dt, n, 0, cumsum, "cumsum", cumsum if dt != "f64" else None, (xd,))
            if dt in ("f32", "i32") and eager_on and not out_of_time():
                kept = int((xd > 0).sum())
                t = b.time_torch(lambda: compact(xd))
                b.emit("torch", "filter", dt, n, 0, t, out_n=kept)
            del xd
        del x
        torch.cuda.empty_cache()

    # 2-D: rows of 256..32768 elements, row_total elements in all
    for m in ROW_LENGTHS:
        if m > row_total:
            continue
        rows = row_total // m
        A = rnd(row_total, "f32").reshape(rows, m)
        bench_pair("row_sums", "f32", row_total, m, row_sums, "row_sums", row_sums, (A,))
        bench_pair("row_softmax", "f32", row_total, m, row_softmax, "row_softmax", row_softmax, (A,))
        del A
        torch.cuda.empty_cache()
    for name, s in ctime.items():
        print(f"  torch.compile {name}: first call {s:.1f} s", file=sys.stderr)


def run_cupy(b, sizes, row_total):
    if out_of_time():
        b.not_run("cupy", "all", "-", 0, 0)
        return
    import cupy as cp
    b.cupy = cp
    cdt = {"f32": cp.float32, "f64": cp.float64, "i32": cp.int32, "i64": cp.int64}
    rs = cp.random.RandomState(4321)

    def rnd(n, dt):
        if dt in ("f32", "f64"):
            return rs.uniform(-1.0, 1.0, n).astype(cdt[dt])
        return rs.randint(-1000, 1001, n).astype(cdt[dt]) | 1

    saxpy_k = cp.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 z", "z = a * x + y", "bench_saxpy")
    chain_k = cp.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                   "z = expf(-x * x) * sinf(y) + 2.0f * x", "bench_chain")
    dot_k = cp.ReductionKernel("float32 x, float32 y", "float32 z", "x * y", "a + b", "z = a", "0", "bench_dot")

    for k in sizes:
        n = 1 << k
        x = rnd(n, "f32")
        y = rnd(n, "f32")
        a = cp.float32(0.75)
        z = cp.empty_like(x)
        t = b.time_cupy(lambda: saxpy_k(a, x, y, z))
        b.emit("cupy", "saxpy", "f32", n, 0, t)
        t = b.time_cupy(lambda: chain_k(x, y, z))
        b.emit("cupy", "chain", "f32", n, 0, t)
        # check the dot kernel once per size (it is the slow peer of record)
        ref = float(cp.dot(x.astype(cp.float64), y.astype(cp.float64)))
        got = float(dot_k(x, y))
        chk = "ok" if abs(got - ref) <= 1e-4 * n ** 0.5 + 1e-3 * abs(ref) else f"WRONG {got} vs {ref}"
        t = b.time_cupy(lambda: dot_k(x, y), budget_ms=200.0, max_reps=20, min_reps=3)
        b.emit("cupy", "dot", "f32", n, 0, t, chk)
        del y, z
        for dt in ("f32", "f64", "i32", "i64"):
            xd = x if dt == "f32" else rnd(n, dt)
            t = b.time_cupy(lambda: cp.sum(xd))
            b.emit("cupy", "sum", dt, n, 0, t)
            t = b.time_cupy(lambda: cp.max(xd))
            b.emit("cupy", "max", dt, n, 0, t)
            t = b.time_cupy(lambda: cp.cumsum(xd, dtype=xd.dtype))
            b.emit("cupy", "scan_incl", dt, n, 0, t)
            if dt in ("f32", "i32"):
                kept = int((xd > 0).sum())
                t = b.time_cupy(lambda: xd[xd > 0])
                b.emit("cupy", "filter", dt, n, 0, t, out_n=kept)
            del xd
        del x
        cp.get_default_memory_pool().free_all_blocks()
    for m in ROW_LENGTHS:
        if m > row_total:
            continue
        A = rnd(row_total, "f32").reshape(row_total // m, m)
        t = b.time_cupy(lambda: A.sum(1))
        b.emit("cupy", "row_sums", "f32", row_total, m, t)
        del A
        cp.get_default_memory_pool().free_all_blocks()


# ---- rows: LayerNorm, cross-entropy, row softmax at every row length (issue 16) ----
ROW_NN_LENGTHS = (256, 1024, 4096, 32768, 262144)


def run_rows_nn(b, row_total, compile_on, softmax_too=False, flat_too=False):
    """torch eager and torch.compile: F.layer_norm (weight, bias, eps 1e-5)
    and F.cross_entropy (reduction='none', int64 targets) per row length;
    with softmax_too also torch.softmax(A, 1) at every ROW_NN_LENGTHS, with
    flat_too var_mean and the chain at row_total (bench/try_rows.sh); and a
    cudaMemcpyAsync device-to-device copy of 1 GiB through CuPy (copy_ref,
    the rate the ratios are of) when CuPy is there."""
    import torch
    import torch.nn.functional as F
    b.torch = torch
    dev = "cuda"
    gen = torch.Generator(device=dev)
    gen.manual_seed(4321)
    for knob in ("cache_size_limit", "recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 1024)

    def layer_norm(a, w, bias):
        return F.layer_norm(a, (a.shape[1],), w, bias, 1e-5)

    def xent(a, t):
        return F.cross_entropy(a, t, reduction="none")

    def softmax(a):
        return torch.softmax(a, 1)

    def var_mean(x):
        v, m = torch.var_mean(x, correction=0)
        return m, v

    def chain(x, y):
        return torch.exp(-x * x) * torch.sin(y) + 2 * x

    def pair(case, n, m, f, args):
        if out_of_time():
            b.not_run("torch", case, "f32", n, m)
            if compile_on:
                b.not_run("torch_compile", case, "f32", n, m)
            return
        b.emit("torch", case, "f32", n, m, b.time_torch(lambda: f(*args)))
        if not compile_on:
            return
        cf = torch.compile(f, dynamic=False)
        t0 = time.time()
        r2 = cf(*args)
        torch.cuda.synchronize()
        cs = time.time() - t0
        r1 = f(*args)
        r1 = r1 if isinstance(r1, tuple) else (r1,)
        r2 = r2 if isinstance(r2, tuple) else (r2,)
        ok = all(torch.allclose(p.double(), q.double(), rtol=1e-3, atol=1e-3) for p, q in zip(r1, r2))
        b.emit("torch_compile", case, "f32", n, m, b.time_torch(lambda: cf(*args)), "ok" if ok else "WRONG vs eager",
               compile_s=round(cs, 2))

    try:
        if not flat_too:
            raise RuntimeError("skipped")  # bench/run.sh takes its copy rate from the CUB harness
        import cupy as cp
        b.cupy = cp
        src = cp.empty(1 << 28, dtype=cp.float32)
        dst = cp.empty_like(src)
        nbytes = src.nbytes
        t = b.time_cupy(lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, 3,
                                                             cp.cuda.get_current_stream().ptr))
        b.emit("cupy", "copy_ref", "-", 1 << 30, 0, t, GBps=round(2 * nbytes / (t[0] * 1e3), 1))
        del src, dst
        cp.get_default_memory_pool().free_all_blocks()
    except Exception as e:  # noqa: BLE001
        if flat_too:
            print(f"peers_py: copy_ref through CuPy failed: {e!r}", file=sys.stderr)

    for m in ROW_NN_LENGTHS:
        if m > row_total:
            continue
        rows = row_total // m
        A = (torch.rand(rows, m, device=dev, generator=gen) * 2 - 1)
        w = torch.rand(m, device=dev, generator=gen) + 0.5
        bias = torch.rand(m, device=dev, generator=gen) * 2 - 1
        t = torch.randint(0, m, (rows,), device=dev, generator=gen, dtype=torch.int64)
        if softmax_too:
            pair("row_softmax", row_total, m, softmax, (A,))
        pair("layer_norm", row_total, m, layer_norm, (A, w, bias))
        pair("xent", row_total, m, xent, (A, t))
        del A, w, bias, t
        torch.cuda.empty_cache()
    if flat_too:
        x = torch.rand(row_total, device=dev, generator=gen) * 2 - 1
        y = torch.rand(row_total, device=dev, generator=gen) * 2 - 1
        pair("mean_var", row_total, 0, var_mean, (x,))
        pair("chain", row_total, 0, chain, (x, y))
        del x, y
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="-")
    ap.add_argument("--sizes", default=",".join(str(k) for k in range(10, 29, 2)))
    ap.add_argument("--rows-total", type=int, default=None, help="log2 of the 2-D arrays' elements (default: largest size)")
    ap.add_argument("--no-compile", action="store_true", help="the same as --compile none")
    ap.add_argument("--compile", choices=("targets", "all", "none"), default="all",
                    help="which torch.compile twins to time (targets: those a target compares with)")
    ap.add_argument("--only", choices=("torch", "cupy", "rows", "compile-rest"), default=None,
                    help="rows: only run_rows_nn (row softmax, LayerNorm, cross-entropy, var_mean, chain; "
                         "bench/try_rows.sh); compile-rest: only the torch.compile twins --compile targets leaves out")
    ap.add_argument("--deadline", type=float, default=None, help="epoch seconds after which nothing new starts")
    args = ap.parse_args()
    global DEADLINE
    DEADLINE = args.deadline
    if args.no_compile:
        args.compile = "none"
    compile_on = args.compile != "none"
    names = COMPILE_TARGETS if args.compile == "targets" else None
    sizes = [int(s) for s in args.sizes.split(",") if s]
    row_total = 1 << (args.rows_total if args.rows_total else max(sizes))
    out = sys.stdout if args.out == "-" else open(args.out, "a")
    b = Bench(out)
    rc = 0
    if args.only in (None, "cupy"):
        try:
            run_cupy(b, sizes, row_total)
        except Exception as e:  # noqa: BLE001
            print(f"peers_py: cupy failed: {e!r}", file=sys.stderr)
            rc = 1
    if args.only == "compile-rest":
        rest = {"saxpy", "dot", "sumsq", "sum", "max", "cumsum", "row_sums"}
        try:
            run_torch(b, [max(sizes)], rest, row_total, eager_on=False)
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            print(f"peers_py: torch.compile failed: {e!r}", file=sys.stderr)
            rc = 1
    if args.only in (None, "rows"):
        try:
            run_rows_nn(b, row_total, compile_on, softmax_too=args.only == "rows", flat_too=args.only == "rows")
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            print(f"peers_py: rows failed: {e!r}", file=sys.stderr)
            rc = 1
    if args.only in (None, "torch"):
        try:
            run_torch(b, sizes, names if compile_on else set(), row_total)
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            print(f"peers_py: torch failed: {e!r}", file=sys.stderr)
            rc = 1
    if b.skipped:
        print(f"peers_py: {b.skipped} measurement(s) not run: out of time", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
