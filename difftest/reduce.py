#!/usr/bin/env python3
"""reduce.py: shrink a generated program that shows a mismatch.

Greedy passes, each kept only while the mismatch persists (the same kind
of failure of the same entry under the same `gpuc test` command):
  1. one failing test block of the entry, other entries gone;
  2. header items (operator fns, structs) the entry does not need;
  3. let statements, launch attributes and `define` lines;
  4. expressions: a parenthesized group or call replaced by one of its
     operands, literals by 0 or 1;
  5. input sizes: each size replaced by the smallest that still fails.
Usage: reduce.py FILE.gdsl ENTRY -- GPUC_TEST_COMMAND... {}   ({} is the file)
Prints the reduced program; standard library only (docs/reliability.md).
"""
import os
import re
import subprocess
import sys
import time

FAIL_RE = re.compile(r"^(.*?):(\d+): test (\w+)(?:: [^:]*)?: FAIL: (.*)$")
SMALL = [0, 1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 33, 64, 127, 128, 129, 256, 513, 1024, 1025, 2049, 4097]


def kind_of(msg):
    for k in ("building", "the program failed", "the reference C backend failed", "the block needs"):
        if msg.startswith(k):
            return k
    return "compare"


class Reducer:
    def __init__(self, name, cmd, work, seconds):
        self.name, self.cmd, self.work = name, cmd, work
        self.deadline = time.time() + seconds
        self.kind = None
        self.last_report = ""
        self.tries = 0
        os.makedirs(work, exist_ok=True)

    def fails(self, text):
        """Does text still show the mismatch? (The first call sets its kind.)"""
        if time.time() > self.deadline and self.kind is not None:
            return False
        self.tries += 1
        path = os.path.join(self.work, "candidate.gdsl")
        with open(path, "w") as f:
            f.write(text)
        cmd = [path if c == "{}" else c for c in self.cmd]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        for line in p.stdout.splitlines():
            m = FAIL_RE.match(line)
            if m and m.group(3) == self.name:
                k = kind_of(m.group(4))
                if k in ("building", "the block needs"):
                    continue
                if self.kind is None:
                    self.kind = k
                if k == self.kind:
                    self.last_report = p.stdout
                    return True
        return False


def split(text):
    """(header items, code lines of the entry, blocks: lists of lines)."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("// ---- entry"))
    head = lines[:start]
    items, cur = [], []
    for l in head:
        if (l.startswith("fn ") or l.startswith("struct ")) and cur and not cur[-1].startswith("struct "):
            items.append(cur)
            cur = []
        cur.append(l)
    if cur:
        items.append(cur)
    rest = lines[start:]
    code, blocks = [], []
    for l in rest:
        if l.startswith("//! test"):
            blocks.append([l])
        elif blocks:
            blocks[-1].append(l)
        else:
            code.append(l)
    return items, code, blocks


def join(items, code, blocks):
    out = [l for it in items for l in it] + code + [l for b in blocks for l in b]
    return "\n".join(out) + "\n"


def groups(s):
    """(start, end) of every balanced (...) in s, end exclusive."""
    stack, out = [], []
    for i, c in enumerate(s):
        if c == "(":
            stack.append(i)
        elif c == ")" and stack:
            out.append((stack.pop(), i + 1))
    return out


def top_level_parts(inner):
    """Operands of the top level of an expression: split at commas, binary
    operators written with spaces, and if/then/else."""
    parts, depth, last, i = [], 0, 0, 0
    seps = [" then ", " else ", ", ", " + ", " - ", " * ", " / ", " % ", " & ", " | ", " ^ ", " << ", " >> ",
            " && ", " || ", " < ", " <= ", " > ", " >= ", " == ", " != ", " as ", " in "]
    while i < len(inner):
        c = inner[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            for sp in seps:
                if inner.startswith(sp, i):
                    parts.append(inner[last:i])
                    i += len(sp)
                    last = i
                    break
            else:
                i += 1
                continue
            continue
        i += 1
    parts.append(inner[last:])
    out = []
    for p in parts:
        p = p.strip()
        if p.startswith("if "):
            p = p[3:]
        if p.startswith("let ") or not p or p.startswith("|"):
            continue
        out.append(p)
    return out


def reduce_program(src, name, cmd, work, seconds=120):
    """Returns (reduced text, the gpuc test report of it)."""
    r = Reducer(name, cmd, work, seconds)
    items, code, blocks = split(src)
    if not r.fails(src):
        return src, "the mismatch did not reproduce on the saved program\n"
    # 1. one block
    for b in blocks:
        if r.fails(join(items, code, [b])):
            blocks = [b]
            break
    # 2. header items
    i = 0
    while i < len(items):
        if items[i] and (items[i][0].startswith("fn ") or items[i][0].startswith("struct ")) and \
                r.fails(join(items[:i] + items[i + 1:], code, blocks)):
            del items[i]
        else:
            i += 1
    # 3. lets, attributes, defines
    for i in range(len(code) - 1, -1, -1):
        if code[i].strip().startswith("let ") and r.fails(join(items, code[:i] + code[i + 1:], blocks)):
            del code[i]
    for i, l in enumerate(code):
        if " @block(" in l:
            c2 = list(code)
            c2[i] = re.sub(r" @block\(\w+\) @items\(\w+\) @unroll\(\w+\)", "", l)
            if r.fails(join(items, c2, blocks)):
                code = c2
    b = blocks[0]
    for i in range(len(b) - 1, 0, -1):
        if "define BLOCK" in b[i] and r.fails(join(items, code, [b[:i] + b[i + 1:]])):
            b = b[:i] + b[i + 1:]
    blocks = [b]
    # 4. expressions
    changed = True
    while changed and time.time() < r.deadline:
        changed = False
        for li in range(len(code)):
            line = code[li]
            if line.startswith("//"):
                continue
            for (s, e) in sorted(groups(line), key=lambda g: g[0] - g[1]):
                j = s
                while j > 0 and (line[j - 1].isalnum() or line[j - 1] == "_"):
                    j -= 1
                callee = line[j:s]
                if callee in ("map", "reduce", "scan", "exscan", "filter", "zip", "unzip", "scatter") or \
                        line[s + 1:].startswith("|"):
                    continue
                cands = top_level_parts(line[s + 1:e - 1])
                if len(cands) < 2 and not callee:
                    continue
                for c in cands:
                    new = line[:j] + "(" + c + ")" + line[e:]
                    c2 = code[:li] + [new] + code[li + 1:]
                    if new != line and r.fails(join(items, c2, blocks)):
                        code = c2
                        changed = True
                        break
                if changed:
                    break
            if changed:
                break
    # 5. sizes
    b = blocks[0]
    sizes = sorted({int(v) for l in b[1:] for v in re.findall(r"\[(\d+)\]", l)}, reverse=True)
    for v in sizes:
        for w in [x for x in SMALL if x < v]:
            nb = [b[0]] + [l.replace("[%d]" % v, "[%d]" % w) for l in b[1:]]
            if r.fails(join(items, code, [nb])):
                b = nb
                break
    blocks = [b]
    text = join(items, code, blocks)
    r.fails(text)
    return text, "%d candidates tried\n%s" % (r.tries, r.last_report)


def passes_on_c(text, gpuc, d):
    """Does the reduced program pass optimized-C against -O0-C? (Then a
    mismatch found on the GPU is the GPU's alone.)"""
    path = os.path.join(d, "reduced_c_check.gdsl")
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([gpuc, "test", "--backend=c", "--reference-O0", "--arch=none", path],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p.returncode == 0


def main():
    if len(sys.argv) < 5 or "--" not in sys.argv:
        print(__doc__, file=sys.stderr)
        return 2
    sep = sys.argv.index("--")
    src, name = open(sys.argv[1]).read(), sys.argv[2]
    text, report = reduce_program(src, name, sys.argv[sep + 1:], os.path.join(os.path.dirname(
        os.path.abspath(sys.argv[1])), "reduce-work"))
    sys.stdout.write(text)
    sys.stderr.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
