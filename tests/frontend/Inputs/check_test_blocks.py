#!/usr/bin/env python3
"""check_test_blocks.py: lint the `//!` test blocks of .gdsl files (docs/testing.md).

Usage: check_test_blocks.py GPUC FILE.gdsl...

For every block it checks, without running anything, that:
  - the block is well formed (a `test ENTRY` line, known directives, values
    with balanced brackets, exactly one `expect`);
  - ENTRY is an entry, an export instance or a fn of the file (or of a file it
    imports), and every parameter gets exactly one input, with no extras;
  - each inline input and inline expected value is a value of the parameter's
    (result's) type in the text syntax: scalars in range, tuple arities, struct
    fields, array ranks, 2-D rows of equal length, `empty(R, C)`;
  - `random TYPE seed S [in LO .. HI]` names a type of the parameter's element
    type and rank with integer sizes;
  - array sizes agree between inputs that share a size name (unless the block
    expects an error) and with the expected result's declared sizes;
  - `define P = V` names a template parameter of the entry.
Signatures come from `GPUC --emit=ast`. Prints one line per problem and a
summary; exits 1 if there was any problem.
"""
import re
import subprocess
import sys

SCALARS = {"bool", "i32", "i64", "u32", "u64", "f32", "f64"}
INT_RANGE = {"i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1),
             "u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1)}
problems = []


def problem(where, msg):
    problems.append("%s: %s" % (where, msg))


# ---- types ---------------------------------------------------------------
# A type is ("scalar", name) | ("tuple", [types]) | ("struct", name)
#         | ("array", elem, [dims]) with dims as strings (names, ints, "_").

def parse_type(s):
    s = s.strip()
    t, rest = parse_type_at(s, 0)
    if s[rest:].strip():
        raise ValueError("trailing text in type %r" % s)
    return t


def parse_type_at(s, i):
    while s[i] == " ":
        i += 1
    if s[i] == "(":
        elems, i = [], i + 1
        while True:
            t, i = parse_type_at(s, i)
            elems.append(t)
            while s[i] == " ":
                i += 1
            if s[i] == ",":
                i += 1
                continue
            if s[i] == ")":
                i += 1
                break
            raise ValueError("bad tuple type %r" % s)
        base = ("tuple", elems)
    else:
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(s, i)
        if not m:
            raise ValueError("bad type %r" % s)
        name, i = m.group(0), m.end()
        base = ("scalar", name) if name in SCALARS else ("struct", name)
    dims = []
    while i < len(s) and s[i] == "[":
        j = s.index("]", i)
        dims.append(s[i + 1:j].strip())
        i = j + 1
    if dims:
        return ("array", base, dims), i
    return base, i


def split_top(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([<{":
            depth += 1
        elif ch in ")]>}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [x.strip() for x in out]


# ---- signatures from the checked AST --------------------------------------

SIG = re.compile(r"^(\s*)(entry|fn|instance)\s+(\w+)(?: = (\w+)<(.*?)>)?(<.*?>)?\((.*)\) -> (.*?)((?: @\w+\([^)]*\))*)$")


def ast_of(gpuc, path, defines=()):
    args = [gpuc, "--emit=ast", path]
    for d in defines:
        args += ["-D", d]
    r = subprocess.run(args, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def signatures(text):
    """name -> (kind, [(param, type string)], result string, {tparam: default})."""
    sigs, structs = {}, {}
    for line in text.splitlines():
        m = re.match(r"^struct (\w+) \{ (.*) \}$", line.strip())
        if m:
            structs[m.group(1)] = [(f.split(":")[0].strip(), f.split(":", 1)[1].strip()) for f in split_top(m.group(2))]
            continue
        m = SIG.match(line)
        if not m:
            continue
        kind, name = m.group(2), m.group(3)
        params = [(p.split(":", 1)[0].strip(), p.split(":", 1)[1].strip()) for p in split_top(m.group(7))]
        defaults = {}
        if m.group(6):
            for tp in split_top(m.group(6)[1:-1]):
                mm = re.match(r"(\w+)\s*:\s*\w+\s*=\s*(\w+)", tp)
                if mm:
                    defaults[mm.group(1)] = mm.group(2)
        # instances (concrete types) win over the generic declaration
        if kind == "instance" or name not in sigs:
            sigs[name] = (kind, params, m.group(8).strip(), defaults)
    return sigs, structs


def concrete(tstr, defaults):
    return re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: defaults.get(m.group(1), m.group(1)), tstr)


# ---- values ------------------------------------------------------------------

TOKEN = re.compile(r"\s*(?:([\[\](){},:])|([-+]?(?:0[xX][0-9A-Fa-f]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)(?:[iuf](?:32|64))?)|(-?inf|nan|true|false|[A-Za-z_]\w*))")


def tokenize(s):
    toks, i = [], 0
    while i < len(s):
        if s[i:].strip() == "":
            break
        m = TOKEN.match(s, i)
        if not m:
            raise ValueError("unexpected text %r" % s[i:i + 15])
        toks.append(m.group(1) or m.group(2) or m.group(3))
        i = m.end()
    return toks


class Reader:
    def __init__(self, text, structs):
        self.toks = tokenize(text)
        self.i = 0
        self.structs = structs

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def next(self):
        t = self.peek()
        if t is None:
            raise ValueError("value ends early")
        self.i += 1
        return t

    def expect(self, t):
        got = self.next()
        if got != t:
            raise ValueError("expected %r, found %r" % (t, got))

    def value(self, ty, sizes):
        kind = ty[0]
        if kind == "scalar":
            return self.scalar(ty[1])
        if kind == "tuple":
            self.expect("(")
            for k, e in enumerate(ty[1]):
                if k:
                    self.expect(",")
                self.value(e, sizes)
            self.expect(")")
            return
        if kind == "struct":
            fields = self.structs.get(ty[1])
            if self.peek() == ty[1]:
                self.next()
            self.expect("{")
            seen = set()
            while self.peek() != "}":
                name = self.next()
                self.expect(":")
                if fields is not None:
                    ft = dict(fields).get(name)
                    if ft is None:
                        raise ValueError("struct %s has no field %r" % (ty[1], name))
                    if name in seen:
                        raise ValueError("field %r given twice" % name)
                    seen.add(name)
                    self.value(parse_type(ft), sizes)
                else:
                    self.skip()
                if self.peek() == ",":
                    self.next()
            self.expect("}")
            if fields is not None and seen != {f for f, _ in fields}:
                raise ValueError("struct %s literal misses fields %s" % (ty[1], sorted({f for f, _ in fields} - seen)))
            return
        # arrays
        elem, dims = ty[1], ty[2]
        if len(dims) == 2 and self.peek() == "empty":
            self.next()
            self.expect("(")
            r = int(self.next())
            self.expect(",")
            c = int(self.next())
            self.expect(")")
            if r != 0 and c != 0:
                raise ValueError("empty(%d, %d) is not empty" % (r, c))
            self.bind(sizes, dims[0], r)
            self.bind(sizes, dims[1], c)
            return
        self.expect("[")
        n = 0
        row_len = None
        while self.peek() != "]":
            if n:
                self.expect(",")
                if self.peek() == "]":
                    break
            if len(dims) == 2:
                inner = {}
                self.value(("array", elem, ["_"]), inner)
                ln = inner.get("_len")
                if row_len is not None and ln != row_len:
                    raise ValueError("rows of different lengths (%d and %d)" % (row_len, ln))
                row_len = ln
            else:
                self.value(elem, sizes)
            n += 1
        self.expect("]")
        if len(dims) == 2:
            self.bind(sizes, dims[0], n)
            self.bind(sizes, dims[1], row_len if row_len is not None else 0)
        else:
            sizes["_len"] = n
            self.bind(sizes, dims[0], n)

    def bind(self, sizes, dim, n):
        if dim == "_":
            return
        if re.match(r"^\d+$", dim):
            if int(dim) != n:
                sizes.setdefault("_conflicts", []).append("size %s given %d elements" % (dim, n))
            return
        if dim in sizes and sizes[dim] != n:
            sizes.setdefault("_conflicts", []).append("size %s is %d and %d" % (dim, sizes[dim], n))
        sizes.setdefault(dim, n)

    def skip(self):
        depth = 0
        while True:
            t = self.next()
            if t in "([{":
                depth += 1
            elif t in ")]}":
                depth -= 1
            if depth == 0 and self.peek() in (",", "}", None):
                return

    def scalar(self, name):
        t = self.next()
        if name == "bool":
            if t not in ("true", "false"):
                raise ValueError("expected true or false, found %r" % t)
            return
        m = re.match(r"^([-+]?)(.*?)((?:[iuf](?:32|64))?)$", t)
        sign, body, suffix = m.groups()
        if suffix and suffix != name:
            raise ValueError("suffix %s on a %s value" % (suffix, name))
        if name in INT_RANGE:
            if re.match(r"^0[xX][0-9A-Fa-f]+$", body):
                v = int(body, 16)
            elif re.match(r"^[0-9]+$", body):
                v = int(body)
            else:
                raise ValueError("expected an integer (%s), found %r" % (name, t))
            v = -v if sign == "-" else v
            lo, hi = INT_RANGE[name]
            if not lo <= v <= hi:
                raise ValueError("%s does not fit in %s" % (t, name))
            return
        if body in ("inf", "nan") or re.match(r"^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$", body):
            if body not in ("inf", "nan"):
                v = float(body)
                if name == "f32" and v > 3.4028235677973366e38:
                    raise ValueError("%s does not fit in f32" % t)
            return
        raise ValueError("expected a number (%s), found %r" % (name, t))


def check_value(text, ty, structs, sizes):
    r = Reader(text, structs)
    r.value(ty, sizes)
    if r.peek() is not None:
        raise ValueError("extra text after the value: %r" % r.peek())


# ---- blocks ------------------------------------------------------------------

def parse_blocks(path):
    blocks, cur = [], None
    for lineno, line in enumerate(open(path, encoding="utf-8"), 1):
        s = line.strip()
        if not s.startswith("//!"):
            if cur is not None and cur["pending"]:
                problem("%s:%d" % (path, cur["pending"][3]), "value not closed before the block ends")
            cur = None
            continue
        body = s[3:].strip()
        where = "%s:%d" % (path, lineno)
        m = re.match(r"^test\s+(\w+)\s*(?::\s*(.*))?$", body)
        if m:
            if cur is not None and cur["pending"]:
                problem("%s:%d" % (path, cur["pending"][3]), "value not closed before the next block")
            cur = {"entry": m.group(1), "where": where, "inputs": [], "expects": [], "defines": [],
                   "tol": None, "pending": None}
            blocks.append(cur)
            continue
        if cur is None:
            problem(where, "a //! line outside a test block")
            continue
        if cur["pending"]:
            kind, name, text, start = cur["pending"]
            text += "\n" + body
            cur["pending"] = None
            add(cur, kind, name, text, start)
            continue
        m = re.match(r"^define\s+(\w+)\s*=\s*(\S+)$", body)
        if m:
            cur["defines"].append((m.group(1), m.group(2)))
            continue
        m = re.match(r"^tol\s+(.*)$", body)
        if m:
            ok = m.group(1) == "exact" or re.match(r"^\S+(\s+\S+)?$", m.group(1))
            try:
                if m.group(1) != "exact":
                    [float(x) for x in m.group(1).split()]
            except ValueError:
                ok = False
            if not ok:
                problem(where, "bad tol line %r" % body)
            cur["tol"] = m.group(1)
            continue
        m = re.match(r"^expect\s+(.*)$", body)
        if m:
            add(cur, "expect", None, m.group(1), lineno)
            continue
        m = re.match(r"^(\w+)\s*=\s*(.*)$", body)
        if m:
            add(cur, "in", m.group(1), m.group(2), lineno)
            continue
        problem(where, "cannot read test line %r" % body)
    if cur is not None and cur["pending"]:
        problem("%s:%d" % (path, cur["pending"][3]), "value not closed at the end of the file")
    return blocks


def balance(text):
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
    return depth


def add(cur, kind, name, text, start):
    if balance(text) > 0:
        cur["pending"] = (kind, name, text, start)
        return
    if kind == "expect":
        cur["expects"].append((text.strip(), start))
    else:
        cur["inputs"].append((name, text.strip(), start))


RANDOM = re.compile(r"^random\s+(.+?)\s+seed\s+(\d+)(?:\s+in\s+(\S+)\s*\.\.\s*(\S+))?$")


def check_file(gpuc, path, all_structs):
    blocks = parse_blocks(path)
    rc, text, err = ast_of(gpuc, path)
    if rc != 0:
        problem(path, "gpuc --emit=ast fails: %s" % err.strip().splitlines()[0] if err.strip() else "?")
        return len(blocks)
    sigs, _ = signatures(text)
    lp = subprocess.run([gpuc, "--list-params", path], capture_output=True, text=True).stdout
    tparams = set(l.split(":")[0].strip() for l in lp.splitlines() if ":" in l)
    for b in blocks:
        where = "%s test %s" % (b["where"], b["entry"])
        sig = sigs.get(b["entry"])
        if b["defines"]:
            for p, v in b["defines"]:
                if "%s.%s" % (b["entry"], p) not in tparams:
                    problem(where, "define %s: %s has no template parameter %s" % (p, b["entry"], p))
            rc2, text2, err2 = ast_of(gpuc, path, ["%s.%s=%s" % (b["entry"], p, v) for p, v in b["defines"]])
            if rc2 != 0:
                problem(where, "gpuc rejects the defines: %s" % err2.strip()[:200])
            else:
                sig = signatures(text2)[0].get(b["entry"], sig)
        if sig is None:
            problem(where, "no entry, export or fn named %s" % b["entry"])
            continue
        _, params, result, defaults = sig
        if len(b["expects"]) != 1:
            problem(where, "needs exactly one expect line, has %d" % len(b["expects"]))
        given = [n for n, _, _ in b["inputs"]]
        names = [n for n, _ in params]
        for n in given:
            if n not in names:
                problem(where, "input %s is not a parameter of %s%s" % (n, b["entry"], tuple(names)))
            elif given.count(n) > 1:
                problem(where, "input %s given %d times" % (n, given.count(n)))
        for n in names:
            if n not in given:
                problem(where, "parameter %s has no input" % n)
        expects_error = any(e.startswith("error") for e, _ in b["expects"])
        sizes = {}
        ptypes = dict(params)
        for n, text_v, line in b["inputs"]:
            if n not in ptypes:
                continue
            try:
                ty = parse_type(concrete(ptypes[n], defaults))
            except ValueError as e:
                problem(where, "cannot read the type of %s: %s" % (n, e))
                continue
            lw = "%s:%d" % (path, line)
            m = RANDOM.match(text_v)
            if text_v.startswith("random"):
                if not m:
                    problem(lw, "bad random input %r (random TYPE seed N [in LO .. HI])" % text_v)
                    continue
                try:
                    rty = parse_type(m.group(1))
                except ValueError as e:
                    problem(lw, "bad random type: %s" % e)
                    continue
                pe = ty[1] if ty[0] == "array" else ty
                re_ = rty[1] if rty[0] == "array" else rty
                prank = len(ty[2]) if ty[0] == "array" else 0
                rrank = len(rty[2]) if rty[0] == "array" else 0
                if pe != re_ or prank != rrank:
                    problem(lw, "random type %s does not match parameter type %s" % (m.group(1), ptypes[n]))
                    continue
                if rrank:
                    if not all(re.match(r"^\d+$", d) for d in rty[2]):
                        problem(lw, "random sizes must be integers: %s" % m.group(1))
                        continue
                    r = Reader("", all_structs)
                    for d, v in zip(ty[2], rty[2]):
                        r.bind(sizes, d, int(v))
                if m.group(3):
                    elem = pe[1] if pe[0] == "scalar" else None
                    for bound in (m.group(3), m.group(4)):
                        try:
                            if elem:
                                check_value(bound, ("scalar", elem), all_structs, {})
                        except ValueError as e:
                            problem(lw, "random range bound %s: %s" % (bound, e))
                continue
            if text_v.startswith("file"):
                if not re.match(r'^file\s+"[^"]+"$', text_v):
                    problem(lw, "bad file input %r" % text_v)
                continue
            try:
                check_value(text_v, ty, all_structs, sizes)
            except (ValueError, IndexError) as e:
                problem(lw, "input %s is not a %s: %s" % (n, ptypes[n], e))
        if sizes.get("_conflicts") and not expects_error:
            problem(where, "inputs disagree on sizes: %s" % "; ".join(sizes["_conflicts"]))
        for e, line in b["expects"]:
            lw = "%s:%d" % (path, line)
            if e == "reference":
                continue
            if e.startswith("error"):
                if not re.match(r'^error\s+"[^"]+"$', e):
                    problem(lw, 'bad expected error %r (expect error "TEXT")' % e)
                continue
            try:
                rty = parse_type(concrete(result, defaults))
            except ValueError as ex:
                problem(lw, "cannot read the result type %s: %s" % (result, ex))
                continue
            rsizes = {k: v for k, v in sizes.items() if not k.startswith("_")}
            try:
                check_value(e, rty, all_structs, rsizes)
            except (ValueError, IndexError) as ex:
                problem(lw, "expected value is not a %s: %s" % (result, ex))
                continue
            if rsizes.get("_conflicts"):
                problem(lw, "expected value has the wrong size: %s" % "; ".join(rsizes["_conflicts"]))
    return len(blocks)


def main():
    gpuc, files = sys.argv[1], sys.argv[2:]
    all_structs = {}
    for f in files:
        rc, text, _ = ast_of(gpuc, f)
        all_structs.update(signatures(text)[1])
    total = 0
    for f in files:
        total += check_file(gpuc, f, all_structs)
    for p in problems:
        print(p)
    print("%d test blocks in %d files, %d problems" % (total, len(files), len(problems)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
