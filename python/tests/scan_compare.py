"""scan_compare.py: how the GPU checks of the Python package compare two
results of one entry (comm_gpu_check.py; test_scan_compare.py tests it on the
CPU). NumPy only: no gpuc, no GPU.

Floats are compared within a tolerance; a float scan differently from other
arrays. The GPU's scan chains its tiles by a decoupled look-back: a tile adds
the values its predecessors have published when it looks, an inclusive prefix
from some and only the aggregate from others, so the same input is grouped
differently from run to run and the last bits of a prefix change (the order
of the operands never does). A prefix that went up to 200 and came back near
0 keeps the rounding of 200 (1 ulp = 1.5e-5), so it is compared relative to
the largest magnitude the prefix has reached so far, not to its own value.
A real error (a missing prefix, an element of another tile, a stale buffer)
is of the size of the elements themselves and still fails."""

import numpy as np


def close(got, want, tol, scan=False):
    """Boolean array: where got matches want. Elementwise within tol relative
    and absolute; with scan, within tol of 1 + the running maximum of |want|
    (a 1-D float scan: see the top)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if not scan or want.ndim != 1 or want.size == 0:
        return np.isclose(got, want, rtol=tol, atol=tol)
    scale = 1.0 + np.maximum.accumulate(np.abs(np.nan_to_num(want)))
    same_nan = np.isnan(got) & np.isnan(want)
    return same_nan | (np.abs(got - want) <= tol * scale)


def first_difference(got, want, ok):
    """'i=INDEX: got G, want W' for the first False of ok, or ''."""
    bad = np.flatnonzero(~np.asarray(ok).reshape(-1))
    if not len(bad):
        return ""
    i = int(bad[0])
    g, w = np.asarray(got).reshape(-1)[i], np.asarray(want).reshape(-1)[i]
    where = i if np.ndim(got) <= 1 else tuple(int(k) for k in np.unravel_index(i, np.shape(got)))
    return "i=%s: got %r, want %r (%d differ)" % (where, g.item(), w.item(), len(bad))


def max_difference(got, want):
    """(max |got - want|, its flat index) of two float arrays of one shape; (0.0, -1) when empty."""
    d = np.abs(np.asarray(got, np.float64) - np.asarray(want, np.float64)).reshape(-1)
    if not d.size:
        return 0.0, -1
    i = int(np.nanargmax(d)) if not np.all(np.isnan(d)) else 0
    return float(d[i]), i
