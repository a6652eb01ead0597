"""scan_compare.py (how comm_gpu_check.py compares results) on the CPU, with a
NumPy model of the GPU scan's tile look-back (backend/cuda/scan.c, the
classic kernel: tiles of 128 x 39 f32 items; warp 0 reads 32 predecessors'
status words at a time and reduces them in a tree, stopping at the nearest
inclusive prefix). Two runs that see different predecessors published give
prefixes that differ in the last bits; on comm_gpu_check's own input (seed
17, n = 100003: the prefix reaches -224 and comes back to -0.006) that broke
the old elementwise 1e-5 comparison of `exscan((+), 0.0, x)` (comm_gpu.sh,
H100, 2026-11-25: from_nccl, exprefix, n=100003). A real error still fails."""

import numpy as np

from scan_compare import close, first_difference

F = np.float32
TILE = 128 * 39


def seed17_exprefix_input():
    """The f32 array comm_gpu_check.py passes to exprefix at n = 100003: its
    inputs(n, rng) for every entry before it (scale, total, summary, prefix at
    each size), then exprefix's sizes, on one default_rng(17)."""
    rng = np.random.default_rng(17)
    x = None
    for name in ("scale", "total", "summary", "prefix", "exprefix"):
        for n in (0, 1, 7, 1000, 100003):
            f32 = rng.standard_normal(n).astype(np.float32)
            rng.integers(-1000, 1000, n)
            rng.standard_normal(n)
            rng.integers(-10**6, 10**6, n)
            rng.standard_normal((n, 33))
            rng.standard_normal((n, 33))
            rng.standard_normal(33)
            if name == "exprefix" and n == 100003:
                x = f32
    return x


def lookback(tile, published):
    """A tile's exclusive prefix from published[j] = (status, value) of its
    predecessors (status 2: inclusive prefix, 1: aggregate), as the kernel's
    warp 0 combines them."""
    ex = F(0)
    j = tile - 1
    while True:
        lanes = [(2, F(0)) if j - l < 0 else published[j - l] for l in range(32)]
        stop = next((l for l in range(32) if lanes[l][0] == 2), 32)
        pv = [F(0) if (j - l < 0 or l > stop) else lanes[l][1] for l in range(32)]
        off = 1
        while off < 32:   # ordered tree: the older tiles (higher lanes) on the left
            pv = [F(pv[l + off] + pv[l]) if l + off < 32 else pv[l] for l in range(32)]
            off <<= 1
        ex = F(pv[0] + ex)
        if stop < 32:
            return ex
        j -= 32


def gpu_like_exscan(x, sees_prefix):
    """The exclusive f32 scan tiled as on the GPU: sees_prefix(t, j) says
    whether tile t found predecessor j's inclusive prefix (else its aggregate)."""
    out, inclusive, aggregate = [], [], []
    for t in range((len(x) + TILE - 1) // TILE):
        seg = x[t * TILE:(t + 1) * TILE]
        local = np.cumsum(seg, dtype=np.float32)
        aggregate.append(local[-1])
        published = {j: (2, inclusive[j]) if j == 0 or sees_prefix(t, j) else (1, aggregate[j]) for j in range(t)}
        ex = lookback(t, published) if t else F(0)
        inclusive.append(F(ex + aggregate[t]))
        out.append((ex + np.concatenate([[F(0)], local[:-1]])).astype(np.float32))
    return np.concatenate(out)


def two_runs():
    x = seed17_exprefix_input()
    chained = gpu_like_exscan(x, lambda t, j: True)          # every predecessor had finished
    lockstep = gpu_like_exscan(x, lambda t, j: False)        # all ran at once: aggregates only
    return x, chained, lockstep


def test_the_input_goes_far_and_comes_back_near_zero():
    # what makes the old comparison fail: without it this test would prove nothing
    x = seed17_exprefix_input()
    prefix = np.cumsum(x.astype(np.float64))
    assert np.abs(prefix[:50000]).max() > 200
    assert np.abs(prefix[50000:60000]).min() < 0.01


def test_runs_grouped_differently_differ_and_the_old_check_failed():
    _, a, b = two_runs()
    assert not np.array_equal(a, b)
    assert not np.allclose(a, b, rtol=1e-5, atol=1e-5)          # comm_gpu_check before: FAIL
    assert "i=55911" in first_difference(a, b, np.isclose(a, b, rtol=1e-5, atol=1e-5))


def test_the_scan_comparison_takes_them():
    _, a, b = two_runs()
    assert close(a, b, 1e-5, scan=True).all()
    rng = np.random.default_rng(5)
    x = seed17_exprefix_input()
    mixed = gpu_like_exscan(x, lambda t, j: bool(rng.random() < 0.5))
    assert close(mixed, a, 1e-5, scan=True).all() and close(mixed, b, 1e-5, scan=True).all()


def test_real_errors_still_fail():
    x, a, _ = two_runs()
    inclusive = (a + x).astype(np.float32)                       # scan instead of exscan
    assert not close(inclusive, a, 1e-5, scan=True).all()
    lost = a.copy()                                              # one tile without its prefix (P = 0)
    lost[11 * TILE:12 * TILE] -= a[11 * TILE]
    assert not close(lost, a, 1e-5, scan=True).all()
    shifted = a.copy()                                           # a tile's prefix one element short
    shifted[13 * TILE:14 * TILE] -= x[13 * TILE - 1]
    assert not close(shifted, a, 1e-5, scan=True).all()
    stale = a.copy()                                             # the last tile not written yet
    stale[20 * TILE:] = 0
    ok = close(stale, a, 1e-5, scan=True)
    assert not ok.all()
    assert first_difference(stale, a, ok).startswith("i=%d: got 0.0" % (20 * TILE))


def test_elementwise_comparison_is_unchanged():
    a = np.array([1.0, 100.0, 0.001], np.float32)
    assert close(a, a * (1 + 5e-6), 1e-5).all()
    assert not close(np.array([0.001 + 3e-5]), np.array([0.001]), 1e-5).all()
    assert first_difference(a, a, close(a, a, 1e-5)) == ""
