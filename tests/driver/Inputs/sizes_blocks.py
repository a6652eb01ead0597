#!/usr/bin/env python3
# sizes_blocks.py: prints the generated-input test blocks at the end of
# examples/sizes.gdsl (after its "generated inputs" line): the inputs as
# stdlib/std/random_ref.py draws them (what gpuc test generates), the
# expected values with Python integers (wrapped like the type) and
# math.fsum, never with gpuc. About 10 s.
import math, os, struct, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'stdlib', 'std'))
import random_ref as R

BIG = 2**24 + 3
def ints(seed, n, lo, hi, C=1, c=0):
    return [lo + R.random_u64(seed, k * C + c) % (hi - lo) for k in range(n)]
def f64s(seed, n, lo=0.0, hi=1.0, C=1, c=0):
    return [lo + (hi - lo) * R.uniform_f64(seed, k * C + c) for k in range(n)]
def f32(x): return struct.unpack('f', struct.pack('f', x))[0]
def bools(seed, n): return [R.random_u32(seed, k) & 1 for k in range(n)]
def wrap(v, bits, signed):
    v &= (1 << bits) - 1
    if signed and v >= 1 << (bits - 1): v -= 1 << bits
    return v
def b(v): return 'true' if v else 'false'

out = []
def block(entry, desc, inputs, expect, tol=None):
    out.append('//! test %s: %s' % (entry, desc))
    for k, v in inputs: out.append('//!   %s = %s' % (k, v))
    out.append('//!   expect %s' % expect)
    if tol: out.append('//!   tol %s' % tol)

I32 = (-2**31, 2**31 - 1)
U64 = (0, 2**64 - 1)
seed = 100
def nxt():
    global seed; seed += 1; return seed

for n in [0, 1, 31, 32, 33, 1023, 1024, 1025, 65537]:
    s = nxt(); x = ints(s, n, *I32)
    block('sum_i32', 'n = %d, the whole i32 range, wrapping' % n,
          [('x', 'random i32[%d] seed %d in -2147483648 .. 2147483647' % (n, s))], wrap(sum(x), 32, True))
for n in [31, 32, 33, 1024, 65537]:
    s = nxt(); x = ints(s, n, 0, 4000000000)
    block('sum_u32', 'n = %d, wrapping' % n, [('x', 'random u32[%d] seed %d in 0 .. 4000000000' % (n, s))], wrap(sum(x), 32, False))
for n in [1, 33, 1025, 65537]:
    s = nxt(); x = ints(s, n, -10**12, 10**12)
    block('sum_i64', 'n = %d' % n, [('x', 'random i64[%d] seed %d in -1000000000000 .. 1000000000000' % (n, s))], sum(x))
for n in [0, 32, 1023, 65537]:
    s = nxt(); x = ints(s, n, *U64)
    block('sum_u64', 'n = %d, wrapping' % n, [('x', 'random u64[%d] seed %d in 0 .. 18446744073709551615' % (n, s))], wrap(sum(x), 64, False))
for n in [1, 31, 1024, 1025, 65537]:
    s = nxt(); x = [f32(v) for v in f64s(s, n, -1.0, 3.0)]
    block('sum_f32', 'n = %d (rounding differs with the order of additions)' % n,
          [('x', 'random f32[%d] seed %d in -1.0 .. 3.0' % (n, s))], repr(f32(math.fsum(x))), '1e-4 1e-4')
for n in [0, 33, 1023, 65537]:
    s = nxt(); x = f64s(s, n, -1.0, 3.0)
    block('sum_f64', 'n = %d' % n, [('x', 'random f64[%d] seed %d in -1.0 .. 3.0' % (n, s))], repr(math.fsum(x)), '1e-12 1e-9')
for n in [0, 1, 31, 32, 33, 1023, 1024, 1025, 65537]:
    s = nxt(); x = bools(s, n)
    block('count_true', 'n = %d' % n, [('x', 'random bool[%d] seed %d' % (n, s))], '(%d, %s, %s)' % (sum(x), b(all(x)), b(any(x))))
for n in [1, 32, 1025]:
    s = nxt(); x = ints(s, n, 0, 4294967295)
    block('min_max_u32', 'n = %d' % n, [('x', 'random u32[%d] seed %d in 0 .. 4294967295' % (n, s))], '(%d, %d, %d)' % (min(x), max(x), x.index(max(x))))
for n in [33, 1024]:
    s = nxt(); x = f64s(s, n, -5.0, 5.0)
    block('min_max_f64', 'n = %d' % n, [('x', 'random f64[%d] seed %d in -5.0 .. 5.0' % (n, s))], '(%r, %r, %d)' % (min(x), max(x), x.index(min(x))))
for n in [1, 31, 32, 33, 1023, 1024, 1025, 65537]:
    s = nxt(); x = ints(s, n, -100000, 100000)
    acc, tot = 0, 0
    for v in x: acc += v; tot += acc
    block('cumsum_check', 'n = %d: the sum of the inclusive prefix sums' % n,
          [('x', 'random i32[%d] seed %d in -100000 .. 100000' % (n, s))], wrap(tot, 32, True))
for n in [0, 32, 33, 1025, 65537]:
    s = nxt(); x = ints(s, n, *U64)
    acc, tot = 0, 0
    for v in x: tot += acc; acc += v
    block('exscan_check', 'n = %d: the sum of the exclusive prefix sums, wrapping' % n,
          [('x', 'random u64[%d] seed %d in 0 .. 18446744073709551615' % (n, s))], wrap(tot, 64, False))
for n in [1, 33, 1024, 65537]:
    s = nxt(); x = ints(s, n, -2**62, 2**62)
    m, tot = -2**63, 0
    for v in x: m = max(m, v); tot += m
    block('scan_max_check', 'n = %d: the sum of the running maxima, wrapping' % n,
          [('x', 'random i64[%d] seed %d in -4611686018427387904 .. 4611686018427387904' % (n, s))], wrap(tot, 64, True))
for n in [31, 1025]:
    s = nxt(); x = f64s(s, n)
    block('scan_f64_last', 'n = %d: the last prefix sum' % n, [('x', 'random f64[%d] seed %d' % (n, s))], repr(math.fsum(x)), '1e-12 1e-9')
for n in [0, 33, 1024, 65537]:
    s = nxt(); x = ints(s, n, 0, 4294967295)
    e = [v for v in x if v % 2 == 0]
    block('evens_check', 'n = %d: how many and their sum, wrapping' % n,
          [('x', 'random u32[%d] seed %d in 0 .. 4294967295' % (n, s))], '(%d, %d)' % (len(e), wrap(sum(e), 32, False)))
for n, k in [(1, 32), (1025, 33), (65537, 1024)]:
    s1 = nxt(); s2 = nxt(); x = ints(s1, n, -10**15, 10**15); idx = ints(s2, k, 0, n)
    block('gather_check', 'n = %d, k = %d' % (n, k),
          [('x', 'random i64[%d] seed %d in -1000000000000000 .. 1000000000000000' % (n, s1)), ('idx', 'random i64[%d] seed %d in 0 .. %d' % (k, s2, n))],
          sum(x[i] for i in idx))
for m, k in [(1024, 1025), (33, 65537), (65537, 31)]:
    s = nxt(); idx = ints(s, k, -5, m + 5)
    block('scatter_marks', 'm = %d, k = %d, some indices outside' % (m, k),
          [('dest', 'random i64[%d] seed 1 in 0 .. 1' % m), ('idx', 'random i32[%d] seed %d in -5 .. %d' % (k, s, m + 5))],
          len({i for i in idx if 0 <= i < m}))
for r, c in [(33, 1025), (1, 1024), (1025, 31)]:
    s = nxt(); A = ints(s, r * c, *U64)
    block('row_sums_check', '%d x %d, wrapping' % (r, c), [('A', 'random u64[%d][%d] seed %d in 0 .. 18446744073709551615' % (r, c, s))], wrap(sum(A), 64, False))
for r, c in [(32, 33), (1023, 3), (31, 1)]:
    s = nxt(); A = ints(s, r * c, *I32)
    block('row_max_check', '%d x %d' % (r, c), [('A', 'random i32[%d][%d] seed %d in -2147483648 .. 2147483647' % (r, c, s))],
          sum(max(A[i * c:(i + 1) * c]) for i in range(r)))

# 2^24 + 3 elements: every type, against the reference backend
big = [
    ('count_true', [('x', 'random bool[%d] seed 7' % BIG)]),
    ('cumsum_i32', [('x', 'random i32[%d] seed 8 in -1000 .. 1000' % BIG)]),
    ('scan_max_i64', [('x', 'random i64[%d] seed 9 in -1000000000000 .. 1000000000000' % BIG)]),
    ('evens', [('x', 'random u32[%d] seed 10 in 0 .. 4294967295' % BIG)]),
    ('exscan_u64', [('x', 'random u64[%d] seed 11 in 0 .. 18446744073709551615' % BIG)]),
    ('gather_f32', [('x', 'random f32[%d] seed 12' % BIG), ('idx', 'random i64[%d] seed 13 in 0 .. %d' % (BIG, BIG))]),
    ('scan_f64', [('x', 'random f64[%d] seed 14 in -1.0 .. 1.0' % BIG)]),
]
# A float prefix sum's rounding error grows with the running magnitude, not
# with each prefix's own value (docs/ir.md): prefixes of this random walk
# reach ~2400, so the absolute tolerance is ~sqrt(n) * eps * 2400 = 1e-9,
# with margin (an H100 differed by 3.8e-12 at a prefix of 2.24).
big_tol = {'scan_f64': '1e-12 1e-8'}
for e, ins in big:
    block(e, 'n = 2^24 + 3 against the reference backend', ins, 'reference', big_tol.get(e))
print('\n'.join(out))
