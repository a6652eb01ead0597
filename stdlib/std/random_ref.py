#!/usr/bin/env python3
"""Reference implementation of stdlib/std/random.gdsl (Philox-4x32-10), in Python.

It produces the known-answer values written in random.gdsl's comments and test
blocks.  Run it with no arguments to check it against the Random123 known-answer
vectors and print the values the .gdsl tests expect.
"""
import math
import struct

M0, M1 = 0xD2511F53, 0xCD9E8D57      # Philox-4x32 multipliers
W0, W1 = 0x9E3779B9, 0xBB67AE85      # Weyl key increments
MASK = 0xFFFFFFFF


def philox_round(c, k):
    p0 = M0 * c[0]
    p1 = M1 * c[2]
    hi0, lo0 = p0 >> 32, p0 & MASK
    hi1, lo1 = p1 >> 32, p1 & MASK
    return (hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0)


def philox4x32(c, k, rounds=10):
    for r in range(rounds):
        if r > 0:
            k = ((k[0] + W0) & MASK, (k[1] + W1) & MASK)
        c = philox_round(c, k)
    return c


def block(seed, i):
    """The Philox block for stream `seed` (u64) at counter `i` (u64)."""
    return philox4x32((i & MASK, i >> 32, 0, 0), (seed & MASK, seed >> 32))


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def random_u32(seed, i):
    return block(seed, i)[0]


def random_u64(seed, i):
    b = block(seed, i)
    return (b[1] << 32) | b[0]


def uniform_f32(seed, i):
    # top 24 bits of word 0, times 2^-24: exact in f32, in [0, 1)
    return f32((block(seed, i)[0] >> 8) * 2.0 ** -24)


def uniform_f64(seed, i):
    # top 53 bits of words 1:0, times 2^-53: exact in f64, in [0, 1)
    return (random_u64(seed, i) >> 11) * 2.0 ** -53


def normal_f32(seed, i):
    # Box-Muller on words 0 and 1; u1 in (0, 1] so log is finite.
    # Computed in f32 steps like the .gdsl (so within a few ulps of it).
    b = block(seed, i)
    u1 = f32(1.0 - f32((b[0] >> 8) * 2.0 ** -24))
    u2 = f32((b[1] >> 8) * 2.0 ** -24)
    r = f32(math.sqrt(f32(-2.0 * f32(math.log(u1)))))
    return f32(r * f32(math.cos(f32(f32(6.2831855) * u2))))


def normal_f64(seed, i):
    b = block(seed, i)
    u1 = 1.0 - ((((b[1] << 32) | b[0]) >> 11) * 2.0 ** -53)
    u2 = (((b[3] << 32) | b[2]) >> 11) * 2.0 ** -53
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)


KAT = [  # Random123 kat_vectors, philox4x32 10 rounds: ctr, key, expected
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((MASK, MASK, MASK, MASK), (MASK, MASK), (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]

if __name__ == "__main__":
    for c, k, want in KAT:
        got = philox4x32(c, k)
        print("philox4x32_10(%s, %s) = %s %s" % (
            " ".join("%08x" % v for v in c), " ".join("%08x" % v for v in k),
            " ".join("%08x" % v for v in got), "ok" if got == want else "MISMATCH"))
    for seed in (0, 42):
        for i in (0, 1, 2, 3, 1 << 32):
            print("seed=%d i=%d u32=%d u64=%d uf32=%r uf64=%r nf32=%r nf64=%r" % (
                seed, i, random_u32(seed, i), random_u64(seed, i), uniform_f32(seed, i),
                uniform_f64(seed, i), normal_f32(seed, i), normal_f64(seed, i)))
