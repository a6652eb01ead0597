"""bench/python_call.py: the host cost of one gpuc call from Python against
CuPy and torch, a large call against the same entry called through the
library's C entry table (ctypes, timed with CUDA events around many calls),
and gpuc.compile cold and warm (docs/python.md, docs/performance.md). Needs a
GPU, CuPy and torch. Prints a table, then the ratios against issue 14's
targets. Usage: python3 bench/python_call.py"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import cupy
import torch

import ctypes

import gpuc
from gpuc import _cuda

SRC = "entry saxpy(a: f32, x: f32[n], y: f32[n]) -> f32[n] = a * x + y;"


def per_call_us(fn, batch=200, rounds=25):
    fn()
    cupy.cuda.Device().synchronize()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(batch):
            fn()
        cupy.cuda.Device().synchronize()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) / batch * 1e6)
    return statistics.median(times)


def event_us(fn, calls):
    """Device time per call of fn, between CUDA events around `calls` calls."""
    fn()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    for _ in range(calls):
        fn()
    stop.record()
    stop.synchronize()
    return cupy.cuda.get_elapsed_time(start, stop) * 1e3 / calls


def c_library_call(m, a, x, y, out):
    """saxpy(a, x, y) into out through the library's entry table, as a C caller would."""
    ctx, lib = m._library.handle(x.device.id)
    call = m._calls[m.entries["saxpy"].index]
    args = (_cuda.LibValue * 3)()
    args[0].kind, args[0].rank, args[0].scalar.f32 = 5, 0, a
    for i, v in ((1, x), (2, y)):
        args[i].kind, args[i].rank, args[i].data = 5, 1, v.data.ptr
        args[i].shape[0] = v.size
    res = (_cuda.LibValue * 1)()
    res[0].kind, res[0].rank, res[0].data = 5, 1, out.data.ptr
    res[0].shape[0] = out.size
    stream = cupy.cuda.get_current_stream().ptr

    def run():
        if call(lib, stream, args, res) != 0:
            raise RuntimeError(m._library.message())
    return run


def main():
    m = gpuc.compile(SRC + "\nentry total(x: f32[n]) -> f32 = sum(x);", backend="cuda")
    rows = []
    x = cupy.ones(1024, dtype=cupy.float32)
    k = cupy.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 z", "z = a * x + y", "saxpy")
    tx = torch.ones(1024, device="cuda")
    rows.append(("n=1024 gpuc (cupy in)", per_call_us(lambda: m.saxpy(2.0, x, x))))
    assert m.saxpy._fast_device == 0, "the C path (LibEntry) was not installed"
    rows.append(("n=1024 gpuc (torch in)", per_call_us(lambda: m.saxpy(2.0, tx, tx))))
    rows.append(("n=1024 cupy ElementwiseKernel", per_call_us(lambda: k(2.0, x, x))))
    rows.append(("n=1024 torch 2*x+y", per_call_us(lambda: 2.0 * tx + tx)))
    # where the host time goes: what the C path calls per saxpy call, alone
    f32 = cupy.dtype("float32")
    rows.append(("  part: cupy.ndarray((1024,), f32)", per_call_us(lambda: cupy.ndarray((1024,), f32))))
    rows.append(("  part: cupy get_current_stream().ptr", per_call_us(lambda: cupy.cuda.get_current_stream().ptr)))
    rows.append(("  part: x.__cuda_array_interface__ (not read)", per_call_us(lambda: x.__cuda_array_interface__)))
    rows.append(("n=1024 gpuc total, sync (waits)", per_call_us(lambda: m.total(x))))
    rows.append(("n=1024 gpuc total, sync=False", per_call_us(lambda: m.total(x, sync=False))))
    assert float(m.total(x, sync=False).get()) == 1024.0 and m.total(x) == 1024.0
    big = cupy.ones(1 << 28, dtype=cupy.float32)
    rows.append(("n=2^28 gpuc (cupy in)", per_call_us(lambda: m.saxpy(2.0, big, big), batch=5, rounds=5)))
    rows.append(("n=2^28 cupy ElementwiseKernel", per_call_us(lambda: k(2.0, big, big), batch=5, rounds=5)))
    out = cupy.empty_like(big)
    c_call = c_library_call(m, 2.0, big, big, out)
    rows.append(("n=2^28 gpuc (cupy in), events", event_us(lambda: m.saxpy(2.0, big, big), 20)))
    rows.append(("n=2^28 C library table, events", event_us(c_call, 20)))
    rows.append(("n=2^28 cupy ElementwiseKernel, events", event_us(lambda: k(2.0, big, big), 20)))
    del big, out
    with tempfile.TemporaryDirectory() as d:
        code = "import gpuc, time; t=time.perf_counter(); gpuc.compile(%r, backend='cuda'); print(time.perf_counter()-t)" % SRC
        env = dict(os.environ, GPUC_CACHE_DIR=d)
        for what in ("compile cold (empty cache)", "compile warm (new process)"):
            out = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True, check=True)
            rows.append((what, float(out.stdout) * 1e6))
    print("%-40s %14s" % ("what", "us per call"))
    for what, us in rows:
        print("%-40s %14.1f" % (what, us))
    r = dict(rows)
    print("\nagainst issue 14's targets:")
    for what, got, target, ok in [
            ("per call (cupy in) / cupy ElementwiseKernel", r["n=1024 gpuc (cupy in)"] / r["n=1024 cupy ElementwiseKernel"],
             "<= 1.0", None),
            ("per call (cupy in), us", r["n=1024 gpuc (cupy in)"], "< 10 (aim), <= ElementwiseKernel", None),
            ("2^28 Python / C library (events)", r["n=2^28 gpuc (cupy in), events"] / r["n=2^28 C library table, events"],
             "<= 1.02", None),
            ("warm compile, ms", r["compile warm (new process)"] / 1e3, "< 5", None)]:
        print("  %-46s %10.3f   target %s" % (what, got, target))


if __name__ == "__main__":
    main()
