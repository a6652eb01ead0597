#!/usr/bin/env python3
"""Run a program built from gpuc's C (or CUDA) backend on generated inputs of
several sizes and compare its printed result with a reference computed here
in Python, independently of gpuc.

usage: run.py BIN ENTRY --args SPEC [SPEC ...] --ref PYEXPR [--sizes 0,1,...]
              [--rel R] [--abs A]
SPEC describes one argument: TYPE:GEN where TYPE is bool/i32/i64/u32/u64/f32/f64
(an array of n elements), or TYPE[R][C] for 2-D (R, C are numbers or n),
or =VALUE for a scalar literal. GEN: walk (small values -3..3, exact sums),
idx (0..n-1), pos (1..4), rand (uniform -1..1), big (wide integers),
perm (a permutation of 0..n-1), bits (0/1).
PYEXPR is a Python expression over a0, a1, ... (lists, or lists of lists)
and n, with helpers wrap(t, v), scan(f, ne, xs), exscan(f, ne, xs), f32(v).
"""
import argparse
import math
import re
import struct
import subprocess
import sys

BITS = {"i32": 32, "i64": 64, "u32": 32, "u64": 64}


def wrap(t, v):
    b = BITS[t]
    v &= (1 << b) - 1
    if t[0] == "i" and v >= 1 << (b - 1):
        v -= 1 << b
    return v


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def scan(f, ne, xs):
    out, acc = [], ne
    for x in xs:
        acc = f(acc, x)
        out.append(acc)
    return out


def exscan(f, ne, xs):
    out, acc = [], ne
    for x in xs:
        out.append(acc)
        acc = f(acc, x)
    return out


def gen(t, kind, n, salt):
    vals = []
    h = 2166136261 ^ salt
    for i in range(n):
        h = (h * 16777619 + i * 2654435761 + salt) & 0xFFFFFFFF
        r = (h >> 8) % 1000003
        if kind == "walk":
            v = r % 7 - 3
        elif kind == "idx":
            v = i
        elif kind == "pos":
            v = r % 4 + 1
        elif kind == "rand":
            v = (r % 2001 - 1000) / 1000.0
        elif kind == "big":
            v = (h * 2654435761) & 0xFFFFFFFFFFFF
            v = v - (1 << 47)
        elif kind == "bits":
            v = r & 1
        else:
            raise SystemExit("unknown generator " + kind)
        if t == "bool":
            v = bool(v & 1) if not isinstance(v, float) else v > 0
        elif t in BITS:
            v = wrap(t, int(v))
        elif t == "f32":
            v = f32(float(v))
        else:
            v = float(v)
        vals.append(v)
    if kind == "perm":
        vals = list(range(n))
    return vals


def fmt(t, v):
    if t == "bool":
        return "true" if v else "false"
    if t in BITS:
        return str(v)
    return repr(float(v))


def text(t, v):
    if isinstance(v, list):
        return "[" + ", ".join(text(t, x) for x in v) + "]"
    return fmt(t, v)


def parse_out(s):
    s = s.strip()
    s = re.sub(r"\bnan\b", "NAN", s)
    s = re.sub(r"-inf\b", "-INF", s)
    s = re.sub(r"\binf\b", "INF", s)
    s = s.replace("true", "True").replace("false", "False")
    return eval(s, {"NAN": float("nan"), "INF": float("inf")})


def close(got, want, rel, ab, path="result"):
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return "%s: shape differs: got %s items, want %d" % (path, len(got) if isinstance(got, (list, tuple)) else "scalar", len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            r = close(g, w, rel, ab, "%s[%d]" % (path, i))
            if r:
                return r
        return None
    if isinstance(want, bool) or isinstance(want, int) and not isinstance(got, float):
        return None if got == want else "%s: got %r, want %r" % (path, got, want)
    g, w = float(got), float(want)
    if math.isnan(w):
        return None if math.isnan(g) else "%s: got %r, want nan" % (path, g)
    if math.isinf(w):
        return None if g == w else "%s: got %r, want %r" % (path, g, w)
    return None if abs(g - w) <= ab + rel * abs(w) else "%s: got %r, want %r" % (path, g, w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("entry")
    ap.add_argument("--args", nargs="+", required=True)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--sizes", default="0,1,31,32,33,1023,1024,1025,65537")
    ap.add_argument("--rel", type=float, default=1e-5)
    ap.add_argument("--abs", type=float, default=1e-6)
    o = ap.parse_args()
    failures = 0
    for n in [int(x) for x in o.sizes.split(",")]:
        args, texts = [], []
        for k, spec in enumerate(o.args):
            if spec.startswith("="):
                lit = spec[1:].replace("n", str(n)) if re.fullmatch(r"[-0-9.e+n]+", spec[1:]) else spec[1:]
                texts.append(lit)
                args.append(eval(lit.replace("true", "True").replace("false", "False")))
                continue
            t, kind = spec.split(":")
            m = re.fullmatch(r"(\w+)\[(\w+)\]\[(\w+)\]", t)
            if m:
                t = m.group(1)
                r = n if m.group(2) == "n" else int(m.group(2))
                c = n if m.group(3) == "n" else int(m.group(3))
                flat = gen(t, kind, r * c, k)
                v = [flat[i * c:(i + 1) * c] for i in range(r)]
                texts.append("[" + ", ".join(text(t, row) for row in v) + "]" if r else "[]")
            else:
                v = gen(t, kind, n, k)
                texts.append(text(t, v))
            args.append(v)
        env = {"n": n, "wrap": wrap, "scan": scan, "exscan": exscan, "f32": f32, "math": math}
        for k, a in enumerate(args):
            env["a%d" % k] = a
        want = eval(o.ref, env)
        p = subprocess.run([o.bin, "-e", o.entry], input="\n".join(texts), capture_output=True, text=True)
        if p.returncode != 0:
            print("n=%d: exit %d: %s" % (n, p.returncode, p.stderr.strip()[:500]))
            failures += 1
            continue
        got = parse_out(p.stdout)
        err = close(got, want, o.rel, o.abs)
        if err:
            print("n=%d: %s" % (n, err))
            failures += 1
        else:
            print("n=%d: ok" % n)
    sys.exit(1 if failures else 0)


main()
