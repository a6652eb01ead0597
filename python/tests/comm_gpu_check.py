"""comm_gpu_check.py: gpuc.Comm on one GPU (run by comm_gpu.sh; docs/python.md
"Sharded entries"). `python3 comm_gpu_check.py torch` makes a one-rank
torch.distributed group (backend nccl, init_method file://) and
gpuc.Comm.from_torch; `... cupy` makes communicators from
cupy.cuda.nccl.NcclCommunicator (Comm.from_nccl), from gpuc's own bootstrap
(Comm.unique_id / from_unique_id) and through from_mpi4py's path with a
one-rank stand-in for an mpi4py communicator. Each runs every entry of PROGRAM
(a map, sums, min/max/argmax, a scan, filters, row softmax, a matrix-vector
product with the vector replicated) on the communicator's module and on the
plain module, on CuPy arrays and torch tensors (and NumPy arrays), at several
sizes, twice (the second call takes the C path), and compares: integers
exactly, floats within 1e-5 (f32) / 1e-12 (f64) relative, a float scan
relative to the largest magnitude its prefix reached so far (scan_compare.py:
the GPU's look-back groups the tile prefixes differently from run to run).
A failure names the first differing element. Then close() and a call that
must fail. One line per case group, then `comm_gpu MODE: PASS` or FAIL; exit
status 1 on any failure.

`... repeat` (no communicator needed beyond gpuc's own): the float scan of the
seed-17 input at n = 100003, plain and sharded, many times, alone and beside
a load on another stream: how many distinct results (bitwise), the largest
difference, and whether each is within the scan tolerance of the f64 prefix;
a wrong prefix fails, varying last bits are reported, not failed."""

import os
import sys
import tempfile

import numpy as np

import gpuc
from scan_compare import close, first_difference, max_difference

PROGRAM = """
entry scale(a: f32, x: f32[n]) -> f32[n] = a * x + 1.0;
entry total(x: f64[n]) -> f64 = sum(x);
entry summary(x: i32[n]) -> (i32, i32, i32, i64) = (sum(x), min(x), max(x), argmax(x));
entry prefix(x: i64[n]) -> i64[n] = scan((+), 0, x);
entry exprefix(x: f32[n]) -> f32[n] = exscan((+), 0.0, x);
entry positives(x: f32[n]) -> f32[_] = filter(|v| v > 0.0, x);
entry evens(x: i32[n]) -> i32[_] = filter(|v| v % 2 == 0, x);
entry softmax_rows(A: f32[n][m]) -> f32[n][m] {
    let e = exp(A - col(max(A, 1)));
    return e / col(sum(e, 1));
}
entry matvec(A: f64[n][m], x: f64[m]) -> f64[n] = for i in n => sum(A[i, :] * x);
"""
SIZES = [0, 1, 7, 1000, 100003]
COLS = 33
FLOAT_SCANS = {"exprefix"}     # 1-D float scans: compared as scans (scan_compare.py)

failures = []


def report(what, ok, detail=""):
    print("%-58s %s%s" % (what, "PASS" if ok else "FAIL", "  " + detail if detail else ""))
    if not ok:
        failures.append(what)


def inputs(n, rng):
    """Arguments of each entry for size n (NumPy)."""
    f32 = rng.standard_normal(n).astype(np.float32)
    i32 = rng.integers(-1000, 1000, n).astype(np.int32)
    return {
        "scale": (np.float32(1.5), f32),
        "total": (rng.standard_normal(n),),
        "summary": (i32,),
        "prefix": (rng.integers(-10**6, 10**6, n).astype(np.int64),),
        "exprefix": (f32,),
        "positives": (f32,),
        "evens": (i32,),
        "softmax_rows": (rng.standard_normal((n, COLS)).astype(np.float32),),
        "matvec": (rng.standard_normal((n, COLS)), rng.standard_normal(COLS)),
    }


def to_host(v):
    if isinstance(v, tuple):
        return tuple(to_host(x) for x in v)
    if hasattr(v, "get") and type(v).__module__.startswith("cupy"):
        return v.get()
    if type(v).__module__.startswith("torch"):
        return v.cpu().numpy()
    return np.asarray(v)


def differ(a, b, scan=False):
    """'' when a (got) matches b (want), else what differs first."""
    a, b = to_host(a), to_host(b)
    if isinstance(a, tuple):
        if not isinstance(b, tuple) or len(a) != len(b):
            return "a tuple of %d, want %s" % (len(a), "%d" % len(b) if isinstance(b, tuple) else type(b).__name__)
        for k, (x, y) in enumerate(zip(a, b)):
            d = differ(x, y, scan)
            if d:
                return "component %d: %s" % (k, d)
        return ""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return "shape %s %s, want %s %s" % (a.shape, a.dtype, b.shape, b.dtype)
    if a.dtype.kind == "f":
        tol = 1e-5 if a.dtype == np.float32 else 1e-12
        ok = close(a, b, tol, scan=scan)
    else:
        ok = a == b
    return first_difference(a, b, ok)


def convert(framework, args):
    if framework == "numpy":
        return args
    if framework == "cupy":
        import cupy
        return tuple(cupy.asarray(a) if isinstance(a, np.ndarray) and a.ndim else a for a in args)
    import torch
    return tuple(torch.from_numpy(a).cuda() if isinstance(a, np.ndarray) and a.ndim else a for a in args)


def check_module(way, sharded, plain, frameworks):
    for name in plain.entries:
        fn = getattr(sharded, name)
        report("%s: %s is sharded" % (way, name), fn.sharded is True, "" if fn.sharded else fn.not_sharded)
    rng = np.random.default_rng(17)
    for framework in frameworks:
        for name in plain.entries:
            bad, note = [], ""
            for n in SIZES:
                args = convert(framework, inputs(n, rng)[name])
                want = getattr(plain, name)(*args)
                for attempt in range(2):     # the second call of a device framework takes the C path
                    got = getattr(sharded, name)(*args)
                    d = differ(got, want, scan=name in FLOAT_SCANS)
                    if d:
                        bad.append("n=%d call %d (%s)" % (n, attempt + 1, d))
                    elif name in FLOAT_SCANS and n == SIZES[-1]:
                        diff, at = max_difference(to_host(got), to_host(want))
                        note = "not bitwise equal: max |d| %.3g at %d" % (diff, at) if diff else ""
            report("%s: %s on %s, %d sizes x 2 calls" % (way, name, framework, len(SIZES)), not bad,
                   ", ".join(bad[:3]) or note)


def check_closed(way, comm, sharded, framework):
    x = convert(framework, (np.ones(5, np.float32),))[0]
    comm.close()
    try:
        sharded.scale(2.0, x)
    except gpuc.Error as e:
        report("%s: a call after close() fails" % way, "communicator was closed" in str(e), str(e))
    else:
        report("%s: a call after close() fails" % way, False, "it ran")


REPEAT_RUNS = 200


def seed17_exprefix_input():
    """The f32 array check_module passes to exprefix at the largest size (the
    same draws of one default_rng(17) in the same order)."""
    rng = np.random.default_rng(17)
    for name in ("scale", "total", "summary", "prefix", "exprefix"):
        for n in SIZES:
            args = inputs(n, rng)[name]
            if name == "exprefix" and n == SIZES[-1]:
                return args[0]


def repeat_scan(label, fn, x, exact, load):
    """REPEAT_RUNS calls of fn(x), with load(): a kernel on another stream
    before each call, else alone. One line; returns the number of results
    outside the scan tolerance of the f64 prefix (real errors)."""
    import hashlib
    seen, first, wrong, old_fails, worst, where = {}, None, [], 0, 0.0, -1
    for _ in range(REPEAT_RUNS):
        if load:
            load()
        got = fn(x).get()
        key = hashlib.sha1(got.tobytes()).hexdigest()
        seen[key] = seen.get(key, 0) + 1
        if first is None:
            first = got
        else:
            old_fails += not np.allclose(got, first, rtol=1e-5, atol=1e-5)
            d, at = max_difference(got, first)
            if d > worst:
                worst, where = d, at
        ok = close(got, exact, 1e-5, scan=True)
        if not ok.all() and len(wrong) < 2:
            wrong.append(first_difference(got, exact, ok))
        elif not ok.all():
            wrong.append("")
    print("%-44s %3d runs: %3d distinct, max |d| %.3g at %d, old 1e-5 check fails %3d, wrong %d%s"
          % (label, REPEAT_RUNS, len(seen), worst, where, old_fails, len(wrong),
             "  " + "; ".join(w for w in wrong if w) if wrong else ""))
    return len(wrong), len(seen)


def repeat_main():
    """`repeat` mode (see the top): is the float scan repeatable bitwise, and is it right?"""
    import cupy
    cupy.cuda.Device(0).use()
    host = seed17_exprefix_input()
    exact = np.concatenate([[0.0], np.cumsum(host.astype(np.float64))[:-1]])
    x = cupy.asarray(host)
    plain = gpuc.compile(PROGRAM, backend="cuda")
    modules = [("plain", plain)]
    comm = gpuc.Comm.from_unique_id(gpuc.Comm.unique_id(), 0, 1, device=0)
    modules.append(("sharded, from_unique_id", plain.with_comm(comm)))
    nc = None
    try:
        from cupy.cuda import nccl
        if getattr(nccl, "available", True):
            nc = nccl.NcclCommunicator(1, nccl.get_unique_id(), 0)
            modules.append(("sharded, from_nccl", plain.with_comm(gpuc.Comm.from_nccl(nc))))
    except ImportError:
        pass
    stream = cupy.cuda.Stream(non_blocking=True)
    big = cupy.ones(1 << 25, cupy.float32)

    def load():
        with stream:
            big.__imul__(1.0)

    wrong, distinct = 0, 0
    print("exprefix (exscan((+), 0.0, x), f32) on comm_gpu_check's input, n=%d, |prefix| up to %.1f"
          % (len(host), np.abs(exact).max()))
    for name, module in modules:
        for loaded in (False, True):
            w, k = repeat_scan("%s%s" % (name, ", beside a load" if loaded else ""), module.exprefix, x, exact,
                               load if loaded else None)
            wrong, distinct = wrong + w, max(distinct, k)
    stream.synchronize()
    print("float exscan repeatable bitwise: %s" % ("yes" if distinct == 1 else "no (the look-back's grouping varies)"))
    print("comm_gpu repeat: %s (%d results outside the scan tolerance of the f64 prefix)"
          % ("FAIL" if wrong else "PASS", wrong))
    comm.close()
    for name, module in modules:
        if module._comm is not None and not module._comm.closed:
            module._comm.close()
    if nc is not None:
        nc.destroy()
    return 1 if wrong else 0


def main(mode):
    if mode == "repeat":
        return repeat_main()
    plain = gpuc.compile(PROGRAM, backend="cuda")
    if mode == "torch":
        import torch
        import torch.distributed as dist
        torch.cuda.set_device(0)
        fd, path = tempfile.mkstemp(prefix="gpuc-comm-")
        os.close(fd)
        os.unlink(path)
        dist.init_process_group("nccl", init_method="file://" + path, rank=0, world_size=1)
        comm = gpuc.Comm.from_torch()
        report("from_torch: rank %d of %d on device %s" % (comm.rank, comm.size, comm.device),
               (comm.rank, comm.size, comm.device) == (0, 1, 0))
        sharded = gpuc.compile(PROGRAM, backend="cuda", comm=comm)
        frameworks = ["torch", "numpy"]
        try:
            import cupy  # noqa: F401
            frameworks.insert(0, "cupy")
        except ImportError:
            report("cupy is installed", False)
        check_module("from_torch", sharded, plain, frameworks)
        t = torch.ones(4, device="cuda")
        dist.all_reduce(t)
        report("torch.distributed still works after gpuc", bool((t == 1).all()))
        check_closed("from_torch", comm, sharded, "torch")
        dist.destroy_process_group()
    else:
        import cupy
        cupy.cuda.Device(0).use()
        try:
            from cupy.cuda import nccl
        except ImportError:
            nccl = None
        if nccl is None or not getattr(nccl, "available", True):
            report("cupy.cuda.nccl is available", False)
        else:
            nc = nccl.NcclCommunicator(1, nccl.get_unique_id(), 0)
            comm = gpuc.Comm.from_nccl(nc)
            report("from_nccl: rank %d of %d on device %s" % (comm.rank, comm.size, comm.device),
                   (comm.rank, comm.size, comm.device) == (0, 1, 0))
            sharded = plain.with_comm(comm)
            check_module("from_nccl", sharded, plain, ["cupy"])
            check_closed("from_nccl", comm, sharded, "cupy")
            nc.destroy()
        comm = gpuc.Comm.from_unique_id(gpuc.Comm.unique_id(), 0, 1, device=0)
        sharded = plain.with_comm(comm)
        check_module("from_unique_id", sharded, plain, ["cupy"])
        comm.close()

        class OneRank:      # what from_mpi4py uses of an mpi4py communicator
            def Get_rank(self):
                return 0

            def Get_size(self):
                return 1

            def allgather(self, obj):
                return [obj]

        with gpuc.Comm.from_mpi4py(OneRank()) as comm:
            sharded = gpuc.compile(PROGRAM, backend="cuda", comm=comm)
            check_module("from_mpi4py (stand-in)", sharded, plain, ["cupy"])
    print("comm_gpu %s: %s (%d failed)" % (mode, "FAIL" if failures else "PASS", len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "torch"))
