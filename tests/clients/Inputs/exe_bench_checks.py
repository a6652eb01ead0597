"""tests/clients/bench_paths.test: bench/paths/exe_bench.py's chunked checks
find a wrong value at its index, on inputs of several chunks (CHUNK made
small), and pass the right results. Prints one line a case."""
import sys

import numpy as np

sys.path.insert(0, sys.argv[1])
import exe_bench as eb  # noqa: E402

eb.CHUNK = 1000  # not a divisor of n: a short last chunk
n, m = 1 << 14, 256
x = eb.gen("f32", n, 7, "dyadic")
u = eb.gen("f32", n, 8, "uniform")
xi = eb.gen("i32", n, 9, "smallint")
w, b = eb.gen("f32", m, 10, "positive"), eb.gen("f32", m, 11, "uniform")
t = eb.gen("i64", n // m, 12, "targets", m)
a64 = u.astype(np.float64).reshape(n // m, m)
e = np.exp(a64 - a64.max(axis=1, keepdims=True))
mu, var = a64.mean(axis=1, keepdims=True), a64.var(axis=1, keepdims=True)
lse = np.log(np.exp(a64 - a64.max(axis=1, keepdims=True)).sum(axis=1)) + a64.max(axis=1)
right = {
    ("scan_incl", "f32", 0): ([x], np.cumsum(x, dtype=np.float64).astype(np.float32)),
    ("scan_excl", "i32", 0): ([xi], (np.cumsum(xi, dtype=np.int64) - xi).astype(np.int32)),
    ("filter", "f32", 0): ([u], u[u > 0]),
    ("saxpy", "f32", 0): ([u, x], np.float32(2) * u + x),
    ("row_sums", "f32", m): ([x], x.reshape(n // m, m).astype(np.float64).sum(axis=1).astype(np.float32)),
    ("row_softmax", "f32", m): ([u], (e / e.sum(axis=1, keepdims=True)).astype(np.float32)),
    ("layer_norm", "f32", m): ([u, w, b], ((a64 - mu) / np.sqrt(var + 1e-5) * w + b).astype(np.float32)),
    ("xent", "f32", m): ([u, t], (lse - a64[np.arange(n // m), t]).astype(np.float32)),
}
for (name, dtype, mm), (xs, good) in right.items():
    ok = eb.check(name, dtype, xs, mm, good)
    bad = good.copy()
    i = bad.size - 3 if name != "filter" else bad.size // 2
    bad.ravel()[i] += 1
    wrong = eb.check(name, dtype, xs, mm, bad)
    short = eb.check(name, dtype, xs, mm, good.ravel()[:-1])
    print(f"{name} {dtype}: {ok}; changed at {i}: {wrong}; one short: {short[:11]}")
s = np.sum(x, dtype=np.float64)
print("sum f32:", eb.check("sum", "f32", [x], 0, np.float32(s)), eb.check("sum", "f32", [x], 0, np.float32(s + 0.125)))
wrapped = np.int64(np.sum(xi, dtype=np.int64) + (1 << 32)).astype(np.int32)
print("sum i32 wraps:", eb.check("sum", "i32", [xi], 0, wrapped))
mv = (np.float32(u.astype(np.float64).mean()), np.float32(u.astype(np.float64).var()))
print("mean_var:", eb.check("mean_var", "f32", [u], 0, mv), eb.check("mean_var", "f32", [u], 0, (mv[0], mv[1] * 1.01))[:5])
