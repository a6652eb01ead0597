#!/usr/bin/env python3
"""gen.py: random well-typed .gdsl programs for differential testing.

A file is a header (the std/math import, the operator fns and structs the
entries use) followed by entries, each with its own `//! test` blocks of
generated inputs at the kernels' edge sizes and `expect reference`. Each
entry comes from a recipe (maps, reductions with associative operators that
are commutative or not, scans, filters, gathers, row/column reductions with
broadcasting, the dependent-reduction patterns fusion rewrites, templates)
whose pieces, types and sizes are drawn from a seeded random.Random: one
seed gives one file, byte for byte (docs/reliability.md).

Values are kept where both builds must agree: floats come from inputs in
[-1, 1] or [0, 1] through bounded operations, a discontinuous operation
(comparison, float-to-int cast, argmin/argmax, filter predicate) only sees
float values read straight from an input (exact in every build), integer
arithmetic wraps (exact in any order). `tol` grows with the number of
accumulated elements; integer results compare exactly.

Usage: gen.py --seed S [--entries N] [--big]   (writes the program to stdout)
Standard library only.
"""
import argparse
import random

INTS = ["i32", "i64", "u32", "u64"]
SIGNED = ["i32", "i64"]
FLOATS = ["f32", "f64"]
SCALARS = INTS + FLOATS + ["bool"]

SIZES_SMALL = [0, 1, 2, 31, 32, 33]
SIZES_MID = [127, 128, 129, 1023, 1024, 1025]
SIZES_TILE = [4095, 4096, 4097, 5120, 8192]
SIZES_BIG = [65537]
SIZE_HUGE = 2 ** 20 + 3
SHAPES_2D = [(0, 3), (3, 0), (1, 1), (2, 31), (31, 33), (33, 129), (128, 257), (5, 1025),
             (1024, 65), (3, 4097), (257, 1024), (4097, 3), (1, 8193), (2, 20000)]


def flit(r, lo=-2.0, hi=2.0, ty=""):
    """A float literal; with ty, suffixed (a builtin's arguments give no context)."""
    return "%.3f%s" % (r.uniform(lo, hi), ty)


class Var:
    """A scalar visible in a lambda body: name, type, exact (read from an input)."""

    def __init__(self, name, ty, exact):
        self.name, self.ty, self.exact = name, ty, exact


class Expr:
    """Random scalar expressions over Vars (fully parenthesized)."""

    def __init__(self, r):
        self.r = r

    def of(self, ty, vs, depth=2):
        r = self.r
        if ty == "bool":
            return self.boolean(vs, depth)
        same = [v for v in vs if v.ty == ty]
        if depth <= 0 or r.random() < 0.25:
            return self.leaf(ty, vs, same)
        if ty in FLOATS:
            return self.flt(ty, vs, depth)
        return self.integer(ty, vs, depth)

    def leaf(self, ty, vs, same):
        r = self.r
        if same and r.random() < 0.8:
            return r.choice(same).name
        if not same and vs and r.random() < 0.7:
            return self.cast(ty, r.choice(vs))
        ints = [v for v in vs if v.ty in INTS and v.ty != ty]
        exact_f = [v for v in vs if v.ty in FLOATS and v.exact]
        if ty in FLOATS:
            if ints and r.random() < 0.3:
                return "((%s %% 64) as %s)" % (r.choice(ints).name, ty)
            other = [v for v in vs if v.ty in FLOATS and v.ty != ty]
            if other and r.random() < 0.3:
                return "(%s as %s)" % (r.choice(other).name, ty)
            return flit(r, ty=ty)
        if ints and r.random() < 0.3:
            return "(%s as %s)" % (r.choice(ints).name, ty)
        if exact_f and r.random() < 0.3:
            return "((%s * 16.0) as %s)" % (r.choice(exact_f).name, ty)
        bools = [v for v in vs if v.ty == "bool"]
        if bools and r.random() < 0.2:
            return "(%s as %s)" % (r.choice(bools).name, ty)
        return "%d%s" % (r.randint(0, 100), ty)

    def cast(self, ty, v):
        """v converted to ty, bounded and exact where it matters."""
        if v.ty == ty:
            return v.name
        if ty in FLOATS:
            return "((%s %% 64) as %s)" % (v.name, ty) if v.ty in INTS else "(%s as %s)" % (v.name, ty)
        if v.ty in FLOATS:
            return "((%s * 16.0) as %s)" % (v.name, ty) if v.exact else "%d%s" % (self.r.randint(0, 9), ty)
        return "(%s as %s)" % (v.name, ty)

    def flt(self, ty, vs, d):
        r = self.r
        a = lambda: self.of(ty, vs, d - 1)
        k = r.randrange(13)
        if k < 3:
            return "(%s %s %s)" % (a(), r.choice("+-*"), a())
        if k == 3:
            return "%s(%s, %s)" % (r.choice(["min", "max"]), a(), a())
        if k == 4:
            return "abs(%s)" % a()
        if k == 5:
            # arguments bounded: sin(s * s) with s a sum near 1e5 turned a
            # last-bit difference of s (the GPU's summation order) into 1e-6
            # (H100, seed 9, f900114 e9), past any tolerance the generator sets
            return "%s(clamp(%s, -64.0, 64.0))" % (r.choice(["sin", "cos", "tanh"]), a())
        if k == 6:
            return "sqrt(abs(%s))" % a()
        if k == 7:
            return "exp(clamp(%s, -3.0, 2.0))" % a()
        if k == 8:
            return "(%s / (1.5 + abs(%s)))" % (a(), a())
        if k == 9:
            return "fma(%s, %s, %s)" % (a(), a(), a())
        if k == 10:
            return "(if %s then %s else %s)" % (self.boolean(vs, d - 1), a(), a())
        if k == 11:
            return "(-%s)" % a()
        return "clamp(%s, -1.0, 1.0)" % a()

    def integer(self, ty, vs, d):
        r = self.r
        a = lambda: self.of(ty, vs, d - 1)
        k = r.randrange(9)
        if k < 3:
            return "(%s %s %s)" % (a(), r.choice(["+", "-", "*"]), a())
        if k == 3:
            return "(%s %s %s)" % (a(), r.choice(["&", "|", "^"]), a())
        if k == 4:
            return "(%s %s %s)" % (a(), r.choice(["<<", ">>"]), a())
        if k == 5:
            return "(%s %s %s)" % (a(), r.choice(["/", "%"]), a())
        if k == 6:
            return "%s(%s, %s)" % (r.choice(["min", "max"]), a(), a())
        if k == 7:
            return "(%s%s)" % (r.choice(["~", "-"]) if ty in SIGNED else "~", a())
        return "(if %s then %s else %s)" % (self.boolean(vs, d - 1), a(), a())

    def boolean(self, vs, d):
        r = self.r
        bools = [v for v in vs if v.ty == "bool"]
        ints = [v for v in vs if v.ty in INTS]
        exact_f = [v for v in vs if v.ty in FLOATS and v.exact]
        k = r.randrange(6)
        if k == 0 and bools:
            return r.choice(bools).name
        if k == 1 and d > 0:
            return "(%s %s %s)" % (self.boolean(vs, d - 1), r.choice(["&&", "||", "^", "!="]), self.boolean(vs, d - 1))
        if k == 2 and d > 0:
            return "(!%s)" % self.boolean(vs, d - 1)
        if exact_f and (k == 3 or not ints):
            v = r.choice(exact_f)
            return "(%s %s %s)" % (v.name, r.choice(["<", "<=", ">", ">="]), flit(r, -1.0, 1.0, v.ty))
        if ints:
            t = r.choice(ints).ty
            return "(%s %s %s)" % (self.of(t, vs, d - 1), r.choice(["<", "<=", ">", ">=", "==", "!="]),
                                   self.of(t, vs, d - 1))
        if bools:
            return r.choice(bools).name
        return r.choice(["true", "false"])


# ---- associative operators: (name, element type, neutral, fn text, commutative) ----

def valid_elem(value, flag, zero):
    """An element of first_valid/last_valid: an invalid one is exactly the
    neutral element (zero, false), so that (zero, false) is neutral on both
    sides (op(x, ne) = x); a value beside a false flag would make the
    operator's result depend on where the neutral element is combined."""
    return "(if %s then %s else %s, %s)" % (flag, value, zero, flag)


def op_library(r, want=None):
    """One random associative operator: a dict with the fn to define (or None
    for a section), how to call it, its element type as a list of leaf
    types, its neutral element, whether it is exact (integers or choice
    only) and a builder of elements from input Vars."""
    kinds = ["first_nz", "last_nz", "first_valid", "last_valid", "affine_int", "affine_f", "mat2", "mss",
             "polyhash", "aff_struct", "pick_max", "section", "section", "chan"]
    k = want or r.choice(kinds)
    e = Expr(r)
    if k in ("first_nz", "last_nz"):
        t = r.choice(INTS)
        cond = "a != 0" if k == "first_nz" else "b == 0"
        return dict(kind=k, name="%s_%s" % (k, t), leaves=[t], ne="0",
                    fn="fn %s_%s(a: %s, b: %s) -> %s = if %s then a else b;" % (k, t, t, t, t, cond),
                    exact=True, elem=lambda vs: "(%s %% 3)" % e.of(t, vs, 1) if r.random() < 0.7 else e.of(t, vs, 1))
    if k in ("first_valid", "last_valid"):
        t = r.choice(SCALARS[:-1])
        lt = "(%s, bool)" % t
        body = "if a.1 then a else b" if k == "first_valid" else "if b.1 then b else a"
        zero = "0.0" if t in FLOATS else "0"
        return dict(kind=k, name="%s_%s" % (k, t), leaves=[t, "bool"], ne="(%s, false)" % zero,
                    fn="fn %s_%s(a: %s, b: %s) -> %s = %s;" % (k, t, lt, lt, lt, body), exact=True,
                    elem=lambda vs: valid_elem(e.of(t, vs, 1), e.boolean(vs, 1), zero))
    if k == "affine_int":
        t = r.choice(INTS)
        lt = "(%s, %s)" % (t, t)
        return dict(kind=k, name="compose_%s" % t, leaves=[t, t], ne="(1, 0)",
                    fn="fn compose_%s(p: %s, q: %s) -> %s = (p.0 * q.0, p.1 * q.0 + q.1);" % (t, lt, lt, lt),
                    exact=True, elem=lambda vs: "(%s, %s)" % (e.of(t, vs, 1), e.of(t, vs, 1)))
    if k == "affine_f":
        t = r.choice(FLOATS)
        lt = "(%s, %s)" % (t, t)
        return dict(kind=k, name="compose_%s" % t, leaves=[t, t], ne="(1.0, 0.0)",
                    fn="fn compose_%s(p: %s, q: %s) -> %s = (p.0 * q.0, p.1 * q.0 + q.1);" % (t, lt, lt, lt),
                    exact=False, elem=lambda vs: "(clamp(%s, -1.0, 1.0), %s)" % (e.of(t, vs, 1), e.of(t, vs, 1)))
    if k == "mat2":
        t = r.choice(["u64", "i64", "u32", "i32"])
        lt = "(%s, %s, %s, %s)" % (t, t, t, t)
        return dict(kind=k, name="mat2_%s" % t, leaves=[t] * 4, ne="(1, 0, 0, 1)",
                    fn=("fn mat2_%s(a: %s, b: %s) -> %s =\n    (a.0 * b.0 + a.1 * b.2, a.0 * b.1 + a.1 * b.3, "
                        "a.2 * b.0 + a.3 * b.2, a.2 * b.1 + a.3 * b.3);") % (t, lt, lt, lt),
                    exact=True, elem=lambda vs: "(%s, 1, %s, 0)" % (e.of(t, vs, 1), e.of(t, vs, 1)))
    if k == "mss":
        t = r.choice(SIGNED)
        lt = "(%s, %s, %s, %s)" % (t, t, t, t)
        fn = ("fn mss_%s(a: %s, b: %s) -> %s =\n    (max(max(a.0, b.0), a.2 + b.1), max(a.1, a.3 + b.1), "
              "max(b.2, a.2 + b.3), a.3 + b.3);") % (t, lt, lt, lt)

        def mss_elem(vs):
            v = "(%s %% 101)" % e.of(t, vs, 1)
            return "(let v = %s in (max(v, 0%s), max(v, 0%s), max(v, 0%s), v))" % (v, t, t, t)
        return dict(kind=k, name="mss_%s" % t, leaves=[t] * 4, ne="(0, 0, 0, 0)", fn=fn, exact=True, elem=mss_elem)
    if k == "polyhash":
        lt = "(u64, u64)"
        base = r.choice(["31", "1000003", "0x100000001b3"])
        return dict(kind=k, name="polyhash", leaves=["u64", "u64"], ne="(0, 1)",
                    fn="fn polyhash(a: %s, b: %s) -> %s = (a.0 * b.1 + b.0, a.1 * b.1);" % (lt, lt, lt),
                    exact=True, elem=lambda vs: "(%s, %s)" % (e.of("u64", vs, 1), base))
    if k == "aff_struct":
        t = r.choice(INTS + FLOATS)
        s = "Aff_%s" % t
        one, zero = ("1.0", "0.0") if t in FLOATS else ("1", "0")
        fn = ("struct %s { m: %s, c: %s }\nfn aff_%s(p: %s, q: %s) -> %s = %s { m: p.m * q.m, c: p.c * q.m + q.c };"
              % (s, t, t, t, s, s, s, s))
        cl = "clamp(%s, -1.0, 1.0)" if t in FLOATS else "%s"
        return dict(kind=k, name="aff_%s" % t, leaves=[t, t], ne="%s { m: %s, c: %s }" % (s, one, zero), fn=fn,
                    exact=t in INTS, struct=s,
                    elem=lambda vs: "%s { c: %s, m: %s }" % (s, e.of(t, vs, 1), cl % e.of(t, vs, 1)))
    if k == "pick_max":
        t = r.choice(FLOATS)
        lt = "(%s, i64)" % t
        fn = ("fn pick_max_%s(p: %s, q: %s) -> %s =\n    if q.0 > p.0 || (q.0 == p.0 && q.1 < p.1) then q else p;"
              % (t, lt, lt, lt))
        return dict(kind=k, name="pick_max_%s" % t, leaves=[t, "i64"], ne="(-2.0, -1i64)", fn=fn, exact=True,
                    needs_index=True, elem=None)
    if k == "chan":
        lt = "(f64, f64, f64)"
        fn = ("fn chan(a: %s, b: %s) -> %s {\n    let (na, ma, qa) = a;\n    let (nb, mb, qb) = b;\n"
              "    let nab = na + nb;\n    let d = mb - ma;\n    return if nab == 0.0 then (0.0, 0.0, 0.0)\n"
              "           else (nab, ma + d * nb / nab, qa + qb + d * d * na * nb / nab);\n}") % (lt, lt, lt)
        return dict(kind=k, name="chan", leaves=["f64"] * 3, ne="(0.0, 0.0, 0.0)", fn=fn, exact=False,
                    elem=lambda vs: "(1.0, %s, 0.0)" % e.of("f64", vs, 1))
    # an operator section or builtin name
    t = r.choice(SCALARS)
    if t == "bool":
        sec, ne = r.choice([("(&&)", "true"), ("(||)", "false"), ("(^)", "false"), ("(!=)", "false")])
    elif t in FLOATS:
        sec, ne = r.choice([("(+)", "0.0"), ("(min)", "1.0e30"), ("(max)", "-1.0e30"),
                            ("|a, b| max(a, b)", "-1.0e30")])
    else:
        sec, ne = r.choice([("(+)", "0"), ("(*)", "1"), ("(&)", "~0" if t in SIGNED else "~(0 as %s)" % t),
                            ("(|)", "0"), ("(^)", "0"), ("(min)", "(0 as %s) + %s" % (t, "2147483647")),
                            ("(max)", "0" if t.startswith("u") else "-2147483647 - 1")])
    return dict(kind="section", name=sec, leaves=[t], ne=ne, fn=None, exact=t not in FLOATS,
                elem=lambda vs: e.of(t, vs, 2))


def op_type(op):
    if op.get("struct"):
        return op["struct"]
    return op["leaves"][0] if len(op["leaves"]) == 1 else "(%s)" % ", ".join(op["leaves"])


def projections(op):
    """Expressions giving one leaf of an operator's element `p`."""
    if op.get("struct"):
        return ["p.m", "p.c"]
    if len(op["leaves"]) == 1:
        return ["p"]
    return ["p.%d" % i for i in range(len(op["leaves"]))]


class Entry:
    """An entry under construction."""

    def __init__(self, name):
        self.name = name
        self.params = []        # (name, type text, random spec without seed, dims: tuple of size names)
        self.lets = []          # "let NAME = EXPR;" lines
        self.result = None      # (expr, type)
        self.floaty = False     # a float result that accumulates (needs tol)
        self.magnitude = 4.0    # bound on |element| before accumulation
        self.tparams = ""       # template parameter list text
        self.attrs = ""
        self.tdefault = None    # the default of a type parameter T
        self.tkinds = INTS + FLOATS  # the types T may take in other instances
        self.exports = []       # (instance name, T value, export line): other template arguments
        self.specs = {}         # parameter name -> its random spec, formatted with the sizes
        self.need_columns = False  # no shapes with m = 0 (a gather of one element a row)


class Gen:
    def __init__(self, seed, big=False):
        self.r = random.Random(seed)
        self.big = big
        self.fns = {}           # name -> text (operator fns and structs)
        self.count = 0

    # ---- parameters ----
    def spec(self, t):
        r = self.r
        if t in FLOATS:
            return "in %s" % r.choice(["-1.0 .. 1.0", "0.0 .. 1.0"])
        if t in SIGNED:
            return "in %s" % r.choice(["-100 .. 100", "-2000000000 .. 2000000000"])
        if t in ("u32", "u64"):
            return "in %s" % r.choice(["0 .. 1000", "0 .. 4294967295"])
        return ""

    def param1(self, en, t, name):
        en.params.append((name, "%s[n]" % t, "%s[{n}]" % t, t, ("n",)))
        return Var(name, t, True)

    def elem_type(self):
        return self.r.choice(SCALARS + FLOATS + INTS)

    # ---- recipes: each fills en.params, en.lets and en.result ----
    def lets_vars(self, vs, en):
        """Scalars already bound in the entry (captured by lambdas)."""
        return vs + [v for v in en.scalars]

    def new(self, prefix="t"):
        """A fresh variable name; never a type's name (f32, i64, u32 ...)."""
        while True:
            self.count += 1
            name = "%s%d" % (prefix, self.count)
            if name not in ("f32", "f64", "i32", "i64", "u32", "u64"):
                return name

    def map_of(self, en, arrs, rt, depth=2):
        """map(|a, b| EXPR, xs, ys) of result type rt over arrays arrs (Vars)."""
        names = ["a%d" % i for i in range(len(arrs))]
        vs = [Var(nm, a.ty, a.exact) for nm, a in zip(names, arrs)] + en.scalars
        body = Expr(self.r).of(rt, vs, depth)
        return "map(|%s| %s, %s)" % (", ".join(names), body, ", ".join(a.name for a in arrs))

    def chain(self, en, rank=1):
        """Maps and elementwise operators over 1-D inputs, ended by a result."""
        r = self.r
        if r.random() < 0.15:  # an array of structs, read through its fields
            t1, t2 = self.elem_type(), self.elem_type()
            sname = "Rec_%s_%s" % (t1, t2)
            self.fns[sname] = "struct %s { a: %s, b: %s }" % (sname, t1, t2)
            en.params.append(("p", "%s[n]" % sname, "%s[{n}]" % sname, sname, ("n",)))
            en.lets.append("let pa = map(|q| q.a, p);")
            en.lets.append("let pb = map(|q| q.b, p);")
            arrs = [Var("pa", t1, True), Var("pb", t2, True)]
        else:
            arrs = [self.param1(en, self.elem_type(), "x")]
            if r.random() < 0.6:
                arrs.append(self.param1(en, self.elem_type(), "y"))
        for _ in range(r.randint(1, 3)):
            rt = r.choice(SCALARS + FLOATS)
            src = r.sample(arrs, min(len(arrs), r.randint(1, 2)))
            nm = self.new()
            if r.random() < 0.2 and rt in FLOATS and any(a.ty == rt for a in arrs):
                a = r.choice([a for a in arrs if a.ty == rt])
                en.lets.append("let %s = %s * %s + %s;" % (nm, a.name, flit(r), flit(r)))
            else:
                en.lets.append("let %s = %s;" % (nm, self.map_of(en, src, rt)))
            arrs.append(Var(nm, rt, False))
            if r.random() < 0.3:
                red, ty = self.reduction(en, arrs[-1])
                s = self.new("s")
                en.lets.append("let %s = %s;" % (s, red))
                en.scalars.append(Var(s, ty, False))
        self.finish(en, arrs)

    def reduction(self, en, a):
        """A builtin reduction of 1-D array Var a: (text, type)."""
        r = self.r
        if a.ty == "bool":
            return "%s(%s)" % (r.choice(["all", "any"]), a.name), "bool"
        choices = ["sum", "min", "max"]
        if a.ty in INTS:
            choices += ["prod", "argmin", "argmax"]
        elif a.exact:
            choices += ["argmin", "argmax"]
        f = r.choice(choices)
        if a.ty in FLOATS and f in ("sum",):
            en.floaty = True
        if f in ("argmin", "argmax"):
            return "%s(%s)" % (f, a.name), "i64"
        if a.ty in FLOATS and r.random() < 0.2:
            en.floaty = True
            return "prod(map(|v| cos(v), %s))" % a.name, a.ty
        return "%s(%s)" % (f, a.name), a.ty

    def finish(self, en, arrs):
        r = self.r
        k = r.randrange(5)
        last = arrs[-1]
        if k == 0 and len(arrs) >= 2 and r.random() < 0.3:  # a struct result of two arrays
            u, v = arrs[-1], arrs[-2]
            sname = "Out_%s_%s" % (u.ty, v.ty)
            self.fns[sname] = "struct %s { u: %s, v: %s }" % (sname, u.ty, v.ty)
            en.result = ("map(|g0, g1| %s { u: g0, v: g1 }, %s, %s)" % (sname, u.name, v.name), "%s[n]" % sname)
            en.floaty = en.floaty or bool(en.scalars)
        elif k == 0:
            en.result = (last.name, "%s[n]" % last.ty)
            en.floaty = en.floaty or bool(en.scalars)
        elif k == 1:
            red, ty = self.reduction(en, last)
            en.result = (red, ty)
        elif k == 2:  # several reductions of the same data: horizontal fusion
            picks = [self.reduction(en, a) for a in r.sample(arrs, min(len(arrs), r.randint(2, 3)))]
            en.result = ("(%s)" % ", ".join(p[0] for p in picks), "(%s)" % ", ".join(p[1] for p in picks))
        elif k == 3 and last.ty in FLOATS + INTS:  # a reduction used by a map of the same data
            s = self.new("s")
            red, ty = self.reduction(en, last)
            en.lets.append("let %s = %s;" % (s, red))
            en.scalars.append(Var(s, ty, False))
            en.floaty = True
            rt = r.choice(SCALARS)
            m = self.map_of(en, [last], rt)
            if r.random() < 0.5:
                red2, ty2 = self.reduction(en, Var("(%s)" % m, rt, False))
                en.result = (red2, ty2)
            else:
                en.result = (m, "%s[n]" % rt)
        else:
            op = op_library(r)
            self.custom(en, arrs, op)

    def use_op(self, op):
        if op["fn"]:
            self.fns[op["name"]] = op["fn"]
        return op["name"]

    def custom(self, en, arrs, op, scan=None):
        """reduce/scan/exscan with operator op over elements built from arrs."""
        r = self.r
        name = self.use_op(op)
        if op.get("needs_index"):
            floats = [a for a in arrs if a.ty == op["leaves"][0] and a.exact]
            if not floats:
                floats = [self.param1(en, op["leaves"][0], "z%d" % len(en.params))]
            src = "zip(%s, iota(n))" % r.choice(floats).name
        else:
            src_arrs = r.sample(arrs, min(len(arrs), r.randint(1, 2)))
            names = ["a%d" % i for i in range(len(src_arrs))]
            vs = [Var(nm, a.ty, a.exact) for nm, a in zip(names, src_arrs)]
            src = "map(|%s| %s, %s)" % (", ".join(names), op["elem"](vs), ", ".join(a.name for a in src_arrs))
        if not op["exact"] or any(l in FLOATS for l in op["leaves"]):
            en.floaty = True
        scan = scan or r.choice(["reduce", "reduce", "scan", "exscan"])
        call = "%s(%s, %s, %s)" % (scan, name, op["ne"], src)
        if scan == "reduce":
            if r.random() < 0.3:
                proj = r.choice(projections(op))
                en.result = ("(let p = %s in %s)" % (call, proj), op["leaves"][projections(op).index(proj)])
            else:
                en.result = (call, op_type(op))
            return
        nm = self.new("sc")
        en.lets.append("let %s = %s;" % (nm, call))
        k = r.randrange(3)
        if k == 0:
            en.result = (nm, "%s[n]" % op_type(op))
        else:
            pi = r.randrange(len(op["leaves"]))
            lt = op["leaves"][pi]
            proj = projections(op)[pi]
            pm = "map(|p| %s, %s)" % (proj, nm)
            if k == 1 or lt == "bool":
                en.result = (pm, "%s[n]" % lt)
            else:
                en.result = ("%s(%s)" % (r.choice(["sum", "max", "min"]), pm), lt)
                en.floaty = en.floaty or lt in FLOATS

    def custom_recipe(self, en):
        r = self.r
        op = op_library(r)
        arrs = [self.param1(en, r.choice(SCALARS), "x")]
        if r.random() < 0.5:
            arrs.append(self.param1(en, r.choice(SCALARS), "y"))
        self.custom(en, arrs, op)

    def filter_recipe(self, en):
        r = self.r
        e = Expr(r)
        t = r.choice(SCALARS)
        x = self.param1(en, t, "x")
        arrs = [x]
        if r.random() < 0.5:
            y = self.param1(en, r.choice(SCALARS), "y")
            arrs.append(y)
            pred = "|(a, b)| %s" % e.boolean([Var("a", x.ty, True), Var("b", y.ty, True)], 2)
            f = "filter(%s, zip(x, y))" % pred
            kept = self.new("f")
            en.lets.append("let %s = %s;" % (kept, f))
            en.lets.append("let (fx, fy) = unzip(%s);" % kept)
            cur = [Var("fx", x.ty, True), Var("fy", y.ty, True)]
        else:
            f = "filter(|a| %s, x)" % e.boolean([Var("a", t, True)], 2)
            en.lets.append("let fx = %s;" % f)
            cur = [Var("fx", t, True)]
        k = r.randrange(4)
        if k == 0:
            en.result = (cur[0].name, "%s[_]" % cur[0].ty)
        elif k == 1:
            red, ty = self.reduction(en, r.choice(cur))
            en.result = ("(length(fx), %s)" % red, "(i64, %s)" % ty)
        elif k == 2:
            rt = r.choice(SCALARS)
            en.result = (self.map_of(en, cur, rt), "%s[_]" % rt)
        else:
            op = op_library(r)
            if op.get("needs_index"):
                op = op_library(r, "polyhash")
            name = self.use_op(op)
            names = ["a%d" % i for i in range(len(cur))]
            vs = [Var(nm, a.ty, a.exact) for nm, a in zip(names, cur)]
            src = "map(|%s| %s, %s)" % (", ".join(names), op["elem"](vs), ", ".join(a.name for a in cur))
            en.floaty = en.floaty or not op["exact"] or any(l in FLOATS for l in op["leaves"])
            en.result = ("reduce(%s, %s, %s)" % (name, op["ne"], src), op_type(op))

    def gather_recipe(self, en):
        r = self.r
        t = r.choice(SCALARS)
        x = self.param1(en, t, "x")
        k = r.randrange(4)
        if k == 0:
            idx = "n - 1 - iota(n)"
        elif k == 1:
            idx = "(iota(n) * %d + %d) %% n" % (r.randint(2, 9), r.randint(0, 7))
        elif k == 2:
            idx = "iota(n) / 2"
        else:
            idx = "(iota(n) * %d) %% n" % r.choice([3, 5, 7])
        en.lets.append("let g = x[%s];" % idx)
        if r.random() < 0.3:  # written back through a permutation
            en.lets.append("let g = scatter(x, n - 1 - iota(n), g);")
        arrs = [x, Var("g", t, True)]
        if r.random() < 0.5:
            rt = r.choice(SCALARS)
            en.lets.append("let h = %s;" % self.map_of(en, arrs, rt))
            arrs.append(Var("h", rt, False))
        self.finish(en, arrs)

    def rows_recipe(self, en):
        """A 2-D input: maps, broadcasts, reductions along an axis, comprehensions."""
        r = self.r
        e = Expr(r)
        t = r.choice(FLOATS + INTS + ["bool"])
        en.params.append(("A", "%s[n][m]" % t, "%s[{n}][{m}]" % t, t, ("n", "m")))
        cur = Var("A", t, True)
        if t != "bool" and r.random() < 0.5:
            k = r.randrange(3)
            if k == 0:
                en.params.append(("rv", "%s[m]" % t, "%s[{m}]" % t, t, ("m",)))
                en.lets.append("let B = A %s rv;" % r.choice(["+", "-", "*"]))
            elif k == 1:
                en.params.append(("cv", "%s[n]" % t, "%s[{n}]" % t, t, ("n",)))
                en.lets.append("let B = A %s col(cv);" % r.choice(["+", "-", "*"]))
            else:
                en.lets.append("let B = map(|a| %s, A);" % e.of(t, [Var("a", t, True)], 2))
            cur = Var("B", t, k != 2 and t in INTS)
        if t in FLOATS and r.random() < 0.3:  # the row LayerNorm and cross-entropy patterns
            (self.layer_norm if r.random() < 0.5 else self.cross_entropy)(en, t, cur.name)
            return
        if t in FLOATS and r.random() < 0.2:  # the row softmax pattern
            en.lets.append("let mx = max(%s, 1);" % cur.name)
            en.lets.append("let ex = exp(%s - col(mx));" % cur.name)
            en.floaty = True
            if r.random() < 0.5:
                en.result = ("ex / col(sum(ex, 1))", "%s[n][m]" % t)
            else:
                en.result = ("log(sum(ex, 1)) + mx", "%s[n]" % t)
            return
        axis = r.choice([0, 1])
        dim = "n" if axis == 1 else "m"
        k = r.randrange(6)
        if k == 5 and t in FLOATS + INTS:  # the tiled matrix product, sometimes with @tile
            en.params.append(("Bt", "%s[m][n]" % t, "%s[{m}][{n}]" % t, t, ("m", "n")))
            en.floaty = en.floaty or t in FLOATS
            en.result = ("for (i, j) in (n, n) => sum(%s[i, :] * Bt[:, j])" % cur.name, "%s[n][n]" % t)
            if r.random() < 0.5:
                en.attrs = " @tile(%d)" % r.choice([1, 4, 8, 16, 20, 32])
            return
        if t == "bool":
            en.result = ("%s(%s, %d)" % (r.choice(["all", "any"]), cur.name, axis), "bool[%s]" % dim)
        elif k == 0:
            f = r.choice(["sum", "min", "max"] + (["argmin", "argmax"] if cur.exact or t in INTS else []))
            en.floaty = en.floaty or (t in FLOATS and f == "sum")
            en.result = ("%s(%s, %d)" % (f, cur.name, axis), "%s[%s]" % ("i64" if f.startswith("arg") else t, dim))
        elif k == 1:
            op = op_library(r)
            if op.get("needs_index"):
                op = op_library(r, "affine_int")
            name = self.use_op(op)
            vs = [Var("a", t, cur.exact)]
            en.floaty = en.floaty or not op["exact"] or any(l in FLOATS for l in op["leaves"])
            en.result = ("reduce(%s, %s, map(|a| %s, %s), %d)" % (name, op["ne"], op["elem"](vs), cur.name, axis),
                         "%s[%s]" % (op_type(op), dim))
        elif k == 2 and t != "bool":
            en.params.append(("v", "%s[m]" % t, "%s[{m}]" % t, t, ("m",)))
            en.floaty = en.floaty or t in FLOATS
            en.result = ("for i in n => sum(%s[i, :] * v)" % cur.name, "%s[n]" % t)
        elif k == 3:
            en.result = ("for (i, j) in (m, n) => %s[j, i]" % cur.name, "%s[m][n]" % t)
        else:
            en.floaty = en.floaty or t in FLOATS
            en.result = ("(sum(%s(%s, 1)), %s(%s, 0))" % (r.choice(["sum", "max"]), cur.name,
                                                         r.choice(["sum", "min"]), cur.name), "(%s, %s[m])" % (t, t))

    def layer_norm(self, en, t, a):
        """Row LayerNorm as bench/programs/rows_nn.gdsl writes it, or with the
        variance in two passes, with or without the weight and bias vectors."""
        r = self.r
        en.floaty = True
        en.magnitude = 16.0
        if r.random() < 0.5:
            en.lets.append("let mu = sum(%s, 1) / (m as %s);" % (a, t))
        else:
            en.lets.append(r.choice(["let mu = for i in n => mean(%s[i, :]);" % a,
                                     "let mu = map(|s| s / (m as %s), sum(%s, 1));" % (t, a)]))
        if r.random() < 0.5:
            en.lets.append("let var = sum(%s * %s, 1) / (m as %s) - mu * mu;" % (a, a, t))
        else:
            en.lets.append("let d = %s - col(mu);" % a)
            en.lets.append("let var = sum(d * d, 1) / (m as %s);" % t)
        # eps keeps 1/sqrt(var + eps) tame on rows of one or two close values
        y = "(%s - col(mu)) * col(1.0 / sqrt(var + 1e-2))" % a
        k = r.randrange(3)
        if k >= 1:
            en.params.append(("w", "%s[m]" % t, "%s[{m}]" % t, t, ("m",)))
            y += " * w"
        if k == 2:
            en.params.append(("b", "%s[m]" % t, "%s[{m}]" % t, t, ("m",)))
            y += " + b"
        if r.random() < 0.3:  # the statistics returned too
            en.result = ("(%s, mu, var)" % y, "(%s[n][m], %s[n], %s[n])" % (t, t, t))
        else:
            en.result = (y, "%s[n][m]" % t)

    def cross_entropy(self, en, t, a):
        """Row cross-entropy: logsumexp of each row minus the target's value
        (a gather of one element a row by an index array), shifted by the
        row's max or not; the targets are drawn in 0 .. m (no empty rows)."""
        r = self.r
        en.floaty = True
        en.params.append(("tg", "i64[n]", "i64[{n}]", "i64", ("n",)))
        en.specs["tg"] = "in 0 .. {m}"
        en.need_columns = True
        if r.random() < 0.7:
            en.lets.append("let mx = max(%s, 1);" % a)
            en.lets.append("let lse = mx + log(sum(exp(%s - col(mx)), 1));" % a)
        else:
            en.lets.append("let lse = log(sum(exp(%s), 1));" % a)
        pick = r.choice(["for i in n => %s[i, tg[i]]" % a, "for i in n => %s[i, tg[i]] * 2.0" % a])
        if r.random() < 0.3:  # the mean loss, one more reduction
            en.result = ("sum(lse - (%s)) / (max(n, 1) as %s)" % (pick, t), t)
        else:
            en.result = ("lse - (%s)" % pick, "%s[n]" % t)

    def dependent_recipe(self, en):
        """The patterns fuse_dependent_reduce rewrites: variance with a
        divisor that is or is not the count, softmax and logsumexp."""
        r = self.r
        t = r.choice(FLOATS)
        x = self.param1(en, t, "x")
        en.floaty = True
        g = r.choice(["x", "x", "(x * 2.0 + 0.5)", "abs(x)", "sin(x)"])
        k = r.randrange(4)
        if k < 2:
            c = r.choice(["(n as %s)" % t, "(length(x) as %s)" % t, "(2.0 * (n as %s))" % t,
                          "((n as %s) + 1.0)" % t, "7.0", "(n as %s)" % t])
            en.lets.append("let mu = sum(%s) / %s;" % (g, c))
            q = r.choice(["sum((%s - mu) * (%s - mu))" % (g, g), "sum(map(|v| (v - mu) * (v - mu), %s))" % g])
            en.lets.append("let q = %s;" % q)
            en.result = r.choice([("(mu, q)", "(%s, %s)" % (t, t)), ("q / (n as %s)" % t, t)])
            en.magnitude = 16.0
        elif k == 2:
            en.lets.append("let mx = max(%s);" % g)
            en.lets.append("let s = sum(exp(%s - mx));" % g)
            en.result = r.choice([("log(s) + mx", t), ("exp(%s - mx) / s" % g, "%s[n]" % t), ("(mx, s)", "(%s, %s)" % (t, t))])
        else:
            en.result = r.choice([("(mean(%s), variance(%s))" % (g, g), "(%s, %s)" % (t, t)),
                                  ("logsumexp(%s)" % g, t), ("softmax(%s)" % g, "%s[n]" % t)])

    def random_recipe(self, en):
        """std/random draws indexed by position (Philox: the same bits in every
        build; normal_* through log/sqrt/cos, so within rounding), mixed with
        an input by maps and ended as the other 1-D recipes end."""
        r = self.r
        self.fns["~import std/random"] = 'import "std/random";'
        en.params.append(("sd", "u64", "u64", "u64", ()))
        x = self.param1(en, self.elem_type(), "x")
        fn, ty, exact = r.choice([("random_u32", "u32", True), ("random_u64", "u64", True),
                                  ("uniform_f32", "f32", True), ("uniform_f64", "f64", True),
                                  ("normal_f32", "f32", False), ("normal_f64", "f64", False)])
        off = r.choice(["", " + %du64" % r.randint(1, 1000)])
        en.lets.append("let rnd = map(|k| %s(sd, (k as u64)%s), iota(n));" % (fn, off))
        en.floaty = en.floaty or not exact
        arrs = [x, Var("rnd", ty, exact)]
        if r.random() < 0.5:
            rt = r.choice(SCALARS)
            nm = self.new()
            en.lets.append("let %s = %s;" % (nm, self.map_of(en, arrs, rt)))
            arrs.append(Var(nm, rt, False))
        self.finish(en, arrs)

    def generic_recipe(self, en):
        """A type template: exports instantiate it at other types."""
        r = self.r
        en.params.append(("x", "T[n]", "{T}[{n}]", None, ("n",)))
        k = r.random()
        if k < 0.2:  # T: type: moved, gathered and filtered, never computed on (tuples and structs too)
            self.fns["Rec_f32_i64"] = "struct Rec_f32_i64 { a: f32, b: i64 }"
            en.tkinds = SCALARS + ["(f32, i32)", "(u64, bool, f64)", "Rec_f32_i64"]
            en.tdefault = r.choice(en.tkinds)
            en.tparams = "T: type = %s" % en.tdefault
            body = r.choice([("x[n - 1 - iota(n)]", "T[n]"), ("x[(iota(n) * 3) % n]", "T[n]"),
                             ("scatter(x, n - 1 - iota(n), x)", "T[n]"), ("keep", "T[_]")])
            if body[0] == "keep":
                en.params.append(("keep", "bool[n]", "bool[{n}]", "bool", ("n",)))
                body = ("map(|p| p.0, filter(|p| p.1, zip(x, keep)))", "T[_]")
            en.result = body
            return
        if k < 0.45:  # float templates: std/math's T: float functions and float-only builtins
            en.tkinds = FLOATS
            en.tdefault = r.choice(FLOATS)
            en.tparams = "T: float = %s" % en.tdefault
            body = r.choice([("(mean(x), variance(x))", "(T, T)"), ("logsumexp(x)", "T"), ("softmax(x)", "T[n]"),
                             ("norm2(x)", "T"), ("exp(x - max(x)) / sum(exp(x - max(x)))", "T[n]"),
                             ("cumsum(sqrt(abs(x)))", "T[n]")])
        else:
            en.tdefault = r.choice(INTS + FLOATS)
            en.tparams = "T: num = %s" % en.tdefault
            body = r.choice([("sum(x * x + x)", "T"), ("cumsum(x)", "T[n]"), ("(max(x), min(x))", "(T, T)"),
                             ("scan((+), 0, x * 3)", "T[n]"), ("exscan((+), 0, x - 1)", "T[n]"),
                             ("sum(map(|v| v * 2 - 1, x))", "T")])
        en.floaty = True
        en.result = body

    def entry(self, idx):
        r = self.r
        en = Entry("e%d" % idx)
        en.scalars = []
        recipe = r.choice([self.chain, self.chain, self.custom_recipe, self.custom_recipe, self.filter_recipe,
                           self.gather_recipe, self.rows_recipe, self.rows_recipe, self.dependent_recipe,
                           self.generic_recipe, self.random_recipe])
        recipe(en)
        if r.random() < 0.3 and not en.attrs:  # launch attributes through template ints
            b, i, u = r.choice([32, 64, 128, 256, 512, 1024]), r.randint(1, 16), r.randint(1, 8)
            tps = [en.tparams] if en.tparams else []
            tps += ["BLOCK: int = %d" % b, "ITEMS: int = %d" % i, "UNROLL: int = %d" % u]
            en.tparams = ", ".join(tps)
            en.attrs = " @block(BLOCK) @items(ITEMS) @unroll(UNROLL)"
        if en.tparams:  # other instances, as exports (a define would rebuild the whole file)
            for k in range(r.randint(1, 2)):
                args = [r.choice(en.tkinds)] if en.tdefault else []
                if en.attrs:
                    args += [str(r.choice([32, 96, 256, 1024])), str(r.randint(1, 12)), str(r.randint(1, 8))]
                    args = args[:len(args) - r.randint(0, 2)]  # trailing ones keep their defaults
                inst = "%s_x%d" % (en.name, k)
                en.exports.append((inst, args[0] if en.tdefault else None,
                                   "export %s<%s> as %s;" % (en.name, ", ".join(args), inst)))
        return en

    # ---- text ----
    def sizes(self, en):
        r = self.r
        two_d = any(len(p[4]) == 2 for p in en.params)
        if two_d:
            shapes = r.sample([s for s in SHAPES_2D if s[1] > 0 or not en.need_columns], 4)
            return [{"n": a, "m": b} for a, b in shapes]
        picks = [r.choice(SIZES_SMALL), r.choice(SIZES_MID), r.choice(SIZES_TILE)]
        if r.random() < 0.5:
            picks.append(r.choice(SIZES_BIG))
        if self.big and r.random() < 0.1:
            picks.append(SIZE_HUGE)
        if any("m" in p[4] for p in en.params):
            return [{"n": n, "m": r.choice(SIZES_SMALL + SIZES_MID)} for n in picks]
        return [{"n": n} for n in picks]

    def tol(self, en, dims, t_f32):
        """REL ABS for the block: accumulated rounding grows with the elements."""
        count = 1
        for v in dims.values():
            count *= max(v, 1)
        m = en.magnitude
        if t_f32:
            return "tol 2e-3 %.3g" % max(1e-4, 4e-6 * count * m)
        return "tol 1e-9 %.3g" % max(1e-10, 1e-14 * count * m)

    def entry_text(self, en, seed_base):
        r = self.r
        tp = "<%s>" % en.tparams if en.tparams else ""
        params = ", ".join("%s: %s" % (p[0], p[1]) for p in en.params)
        lines = ["// ---- entry %s" % en.name]
        head = "entry %s%s(%s) -> %s%s" % (en.name, tp, params, en.result[1], en.attrs)
        if en.lets:
            lines.append(head + " {")
            lines += ["    " + l for l in en.lets]
            lines.append("    return %s;" % en.result[0])
            lines.append("}")
        else:
            lines.append(head + " = %s;" % en.result[0])
        lines += [x[2] for x in en.exports]
        instances = [(en.name, en.tdefault)] + [(x[0], x[1]) for x in en.exports]
        seed = seed_base
        code = "\n".join(lines)
        for dims in self.sizes(en):
            first = len(lines)
            inst, tval = r.choice(instances)
            lines.append("//! test %s: %s" % (inst, " ".join("%s=%d" % kv for kv in sorted(dims.items()))))
            for name, _decl, rtype, scalar, _dims in en.params:
                seed += 1
                spec = en.specs[name].format(**dims) if name in en.specs else self.spec(scalar or tval)
                lines.append("//!   %s = random %s seed %d%s" % (name, rtype.format(T=tval, **dims), seed,
                                                                 " " + spec if spec else ""))
            lines.append("//!   expect reference")
            f32 = "f32" in code + "\n".join(lines[first:]) or tval == "f32"
            lines.append("//!   " + self.tol(en, dims, f32))
        return "\n".join(lines) + "\n"

    def program(self, nentries):
        bodies = [self.entry_text(self.entry(i), 1000 * i) for i in range(nentries)]
        head = ["// Generated by difftest/gen.py (docs/reliability.md).", 'import "std/math";', "// ---- header"]
        head += [self.fns[k] for k in sorted(self.fns)]
        return "\n".join(head) + "\n" + "".join(bodies)


def generate(seed, nentries, big=False):
    return Gen(seed, big).program(nentries)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--entries", type=int, default=20)
    ap.add_argument("--big", action="store_true", help="occasionally 2^20+3 elements")
    a = ap.parse_args()
    print(generate(a.seed, a.entries, a.big), end="")


if __name__ == "__main__":
    main()
