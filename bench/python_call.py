"""bench/python_call.py: the host cost of one gpuc call from Python against
CuPy and torch, a large call against the library called from C, and
gpuc.compile cold and warm (docs/python.md). Needs a GPU, CuPy and torch.
Prints a table. Usage: python3 bench/python_call.py"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import cupy
import torch

import gpuc

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


def main():
    m = gpuc.compile(SRC, backend="cuda")
    rows = []
    x = cupy.ones(1024, dtype=cupy.float32)
    k = cupy.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 z", "z = a * x + y", "saxpy")
    tx = torch.ones(1024, device="cuda")
    rows.append(("n=1024 gpuc (cupy in)", per_call_us(lambda: m.saxpy(2.0, x, x))))
    rows.append(("n=1024 gpuc (torch in)", per_call_us(lambda: m.saxpy(2.0, tx, tx))))
    rows.append(("n=1024 cupy ElementwiseKernel", per_call_us(lambda: k(2.0, x, x))))
    rows.append(("n=1024 torch 2*x+y", per_call_us(lambda: 2.0 * tx + tx)))
    big = cupy.ones(1 << 28, dtype=cupy.float32)
    rows.append(("n=2^28 gpuc (cupy in)", per_call_us(lambda: m.saxpy(2.0, big, big), batch=5, rounds=5)))
    rows.append(("n=2^28 cupy ElementwiseKernel", per_call_us(lambda: k(2.0, big, big), batch=5, rounds=5)))
    del big
    with tempfile.TemporaryDirectory() as d:
        code = "import gpuc, time; t=time.perf_counter(); gpuc.compile(%r, backend='cuda'); print(time.perf_counter()-t)" % SRC
        env = dict(os.environ, GPUC_CACHE_DIR=d)
        for what in ("compile cold (empty cache)", "compile warm (new process)"):
            out = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True, check=True)
            rows.append((what, float(out.stdout) * 1e6))
    print("%-34s %14s" % ("what", "us per call"))
    for what, us in rows:
        print("%-34s %14.1f" % (what, us))


if __name__ == "__main__":
    main()
