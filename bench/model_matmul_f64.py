#!/usr/bin/env python3
"""model_matmul_f64.py: the f64 fast matrix-product kernel (backend/cuda/matmul.c,
"MM FAST", "MM F64 K8") checked against NumPy without a GPU.

usage: model_matmul_f64.py [FILE.cu [KERNEL]]
  (default bench/gen/matmul.cu, matmul_k0_matmul: `gpuc --emit=cuda` of
  bench/programs/matmul.gdsl)

The kernel's text is taken from the emitted CUDA C and run through the C
preprocessor for each configuration (GPUC_MM_F64_K 8 and 4 on sm_90, and
sm_80); the index expressions it then holds (the cp.async copies' shared
and global places and guards, the lanes' fragment reads, the mma
instructions and their operands, the accumulators' places in the result)
are evaluated in Python, lane by lane, for a few blocks of a few shapes.
The mma instructions are modelled from the PTX ISA's fragment layouts
("Matrix Fragments for mma.m8n8k4 / m16n8k4 / m16n8k8", .f64), written out
below apart from the kernel: lane (g, i) = (lane / 4, lane % 4)
  m8n8k4   a0 = A[g][i]; b0 = B[i][g]; c0, c1 = C[g][2i], C[g][2i + 1]
  m16n8k4  a0, a1 = A[g][i], A[g + 8][i]; b0 = B[i][g]; c0..c3 = C[g][2i],
           C[g][2i + 1], C[g + 8][2i], C[g + 8][2i + 1]
  m16n8k8  a0..a3 = A[g][i], A[g + 8][i], A[g][i + 4], A[g + 8][i + 4];
           b0, b1 = B[i][g], B[i + 4][g]; C as m16n8k4
Each block's results must equal A @ B on its tile (every result written
once, none outside the matrices), and every fragment read of shared memory
must take the least number of wavefronts (no bank conflicts). Not modelled:
the rotation of the stages and the cp.async waits and barriers (the slices
are taken one at a time), nor the sum of a split's parts (added here).
Prints one
line a configuration and `model: ok`; exits 1 on the first mismatch.
"""
import os
import re
import subprocess
import sys

import numpy as np

BM, BN, BK, THREADS = 128, 64, 8, 256


def fail(msg):
    print("model: FAIL: " + msg)
    sys.exit(1)


def kernel_text(path, name):
    src = open(path).read()
    at = src.find("\n" + name + "(")
    if at < 0:
        fail("no kernel %s in %s" % (name, path))
    body = src[src.index("{", at):]
    depth, end = 0, None
    for n, ch in enumerate(body):  # the kernel's braces (#if arms hold balanced blocks)
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            end = n + 1
            break
    return body[:end]


def preprocess(text, defines):
    args = ["cpp", "-P", "-undef"] + ["-D%s=%s" % kv for kv in defines.items()]
    r = subprocess.run(args, input=text, capture_output=True, text=True)
    if r.returncode != 0:
        fail("cpp: " + r.stderr)
    return r.stdout


def py(expr):
    """A C integer expression of the kernel as Python (same precedence for
    * / % + - << >> & ^ |; the values here are never negative)."""
    e = re.sub(r"\((?:int64_t|int|unsigned|long long)\)", "", expr)
    e = e.replace("&&", " and ").replace("||", " or ")
    e = re.sub(r"(?<![/])/(?![/])", "//", e)
    return compile(e.strip(), expr, "eval")


def one(pattern, text, what):
    m = re.findall(pattern, text)
    if not m:
        fail("no %s in the kernel (pattern %s)" % (what, pattern))
    return m[0]


def decls(line):
    """`const T a = e1, b = e2;` -> [(a, code), (b, code)]"""
    line = re.sub(r"^\s*const\s+\w+\s+", "", line.strip().rstrip(";"))
    parts, depth, cur = [], 0, ""
    for ch in line:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [(p.split("=", 1)[0].strip(), py(p.split("=", 1)[1])) for p in parts]


def run_decls(ds, env):
    for name, code in ds:
        env[name] = eval(code, {}, env)


class Kernel:
    """The index arithmetic of one preprocessed configuration."""

    def __init__(self, text):
        self.text = text
        self.lane = decls(one(r"const int g_g = [^\n]*;", text, "lane indices"))
        # the copies of a slice: A (2 chunks a thread), then B (1 a thread)
        loads = []  # the first slices' copies (stage g_p), then the main loop's (stage g_ws)
        for a_at in [x.start() for x in re.finditer(r"const int g_f = g_t \+ 256 \* g_q", text)]:
            b_at = text.index("const int g_kr = ", a_at)
            loads.append((a_at, text[a_at:b_at], text[b_at:text.index("cp.async.commit_group", b_at)]))
        same = [re.sub(r"\[g_(?:p|ws)\]", "[STAGE]", x[1] + x[2]) for x in loads]
        if len(loads) != 2 or same[0] != same[1]:
            fail("the first slices and the main loop do not copy alike")
        a_at, a, bb = loads[0]
        self.copies = []
        for part, mat in ((a, "A"), (bb, "B")):
            lines = re.findall(r"const (?:int|int64_t) g_\w+ = [^\n]*;", part)
            dst = one(r"double \*g_dst = &g_[ab]s\[\w+\]\[([^\n]*)\];", part, mat + " destination")
            vec_in = one(r"if \(g_vec\) \{\s*const bool g_in = ([^;]*);", part, mat + " 16-byte guard")
            el_in = one(r"for \(int g_e = 0; g_e < 2; g_e\+\+\) \{\s*const bool g_in = ([^;]*);", part, mat + " element guard")
            srcs = re.findall(r'"l"\(g_in \? v_%s \+ ([^:]*?) : v_%s\)' % (mat, mat), part)
            if len(srcs) != 2:
                fail("%s: not one 16-byte and one 8-byte copy" % mat)
            self.copies.append((mat, [decls(l) for l in lines], py(dst), py(vec_in), py(el_in), [py(x) for x in srcs]))
        if not text[:a_at].rstrip().endswith("for (int g_q = 0; g_q < 2; g_q++) {"):
            fail("A's copy loop is not 2 chunks a thread")
        # the products of a slice
        self.mma = one(r'asm\("(mma\.sync\.aligned\.\w+)\.row\.col\.f64\.f64\.f64\.f64', text, "mma")
        self.fa = one(r"g_fa\[[^\n=]*\] = g_as\[g_rs\]\[([^\n]*)\];", text, "A fragment read")
        self.fb = one(r"g_fb\[[^\n=]*\] = g_bs\[g_rs\]\[([^\n]*)\];", text, "B fragment read")
        self.fa_c, self.fb_c = py(self.fa), py(self.fb)
        m = re.search(r'asm\("mma[^\n]*\n\s*:([^\n]*?)(?:\n\s*)?:([^\n]*)\);', text)
        if not m:
            fail("no mma operands")
        self.outs = [py(x) for x in re.findall(r'"\+d"\(([^)]*)\)', m.group(1))]
        self.ins = [py(x) for x in re.findall(r'"d"\(([^)]*\]?)\)', m.group(2))]
        line = one(r"double \*g_\w = &g_acc[^\n]*;", text, "accumulator pointers")
        self.ptr = [(n, py(x)) for n, x in re.findall(r"\*(g_\w+) = &g_acc\[([^\]]*)\]", line)]
        self.row = py(one(r"const int64_t g_row = ([^;]*);", text, "result row"))
        self.col = py(one(r"const int64_t g_col = ([^;]*);", text, "result column"))
        self.nkt = decls(one(r"const int64_t g_nkt = [^\n]*;", text, "slices"))

    def loops(self):
        """(loop variables, in the emitted nesting) of the fragment reads and of the mma calls"""
        if self.mma.endswith("m16n8k8"):
            need = ["for (int g_e = 0; g_e < 2; g_e++) {", "for (int g_q = 0; g_q < 4; g_q += 2) {"]
            reads = [dict(g_q=q, g_e=e) for q in range(4) for e in range(2)]
            calls = [dict(g_q=q, g_n=n) for q in (0, 2) for n in range(4)]
            steps = [{}]
        else:
            need = ["for (int g_j = 0; g_j < 8; g_j += 4) {"]
            reads = [dict(g_q=q) for q in range(4)]
            step = 2 if self.mma.endswith("m16n8k4") else 1
            calls = [dict(g_q=q, g_n=n) for q in range(0, 4, step) for n in range(4)]
            steps = [dict(g_j=0), dict(g_j=4)]
        for n in need:
            if n not in self.text:
                fail("%s: no `%s`" % (self.mma, n))
        return steps, reads, calls


# ---- the PTX ISA's fragment layouts: (row, col) of each register of lane (g, i) ----
def layout(shape):
    if shape == "m8n8k4":
        return dict(m=8, k=4, a=lambda g, i: [(g, i)], b=lambda g, i: [(i, g)],
                    c=lambda g, i: [(g, 2 * i), (g, 2 * i + 1)])
    c16 = lambda g, i: [(g, 2 * i), (g, 2 * i + 1), (g + 8, 2 * i), (g + 8, 2 * i + 1)]
    if shape == "m16n8k4":
        return dict(m=16, k=4, a=lambda g, i: [(g, i), (g + 8, i)], b=lambda g, i: [(i, g)], c=c16)
    if shape == "m16n8k8":
        return dict(m=16, k=8, a=lambda g, i: [(g, i), (g + 8, i), (g, i + 4), (g + 8, i + 4)],
                    b=lambda g, i: [(i, g), (i + 4, g)], c=c16)
    fail("no model of " + shape)


def mma(shape, a, b, c):
    """a[lane][r], b[lane][r], c[lane][r] -> d[lane][r], as the warp's mma"""
    L = layout(shape)
    A, B, C = np.full((L["m"], L["k"]), np.nan), np.full((L["k"], 8), np.nan), np.full((L["m"], 8), np.nan)
    for lane in range(32):
        g, i = lane >> 2, lane & 3
        for r, (y, x) in enumerate(L["a"](g, i)):
            A[y, x] = a[lane][r]
        for r, (y, x) in enumerate(L["b"](g, i)):
            B[y, x] = b[lane][r]
        for r, (y, x) in enumerate(L["c"](g, i)):
            C[y, x] = c[lane][r]
    assert not (np.isnan(A).any() or np.isnan(B).any() or np.isnan(C).any()), "layout does not cover the tile"
    D = A @ B + C
    return [[D[y, x] for (y, x) in L["c"](lane >> 2, lane & 3)] for lane in range(32)]


def wavefronts(addrs):
    """shared-memory wavefronts of one warp's 8-byte reads at these double indices"""
    words = {}
    for a in set(addrs):
        for w in (2 * a, 2 * a + 1):
            words.setdefault(w % 32, set()).add(w)
    return max(len(v) for v in words.values())


def block(kern, A, B, tm, ct, ks=1, kj=0):
    """The results the kernel's block (row tile tm, column tile ct, part kj of
    ks) leaves for its tile (before a split's parts are added), as a dict."""
    n, k = A.shape
    m = B.shape[1]
    vec = k % 2 == 0 and m % 2 == 0
    env0 = dict(v_n=n, v_m=m, v_k=k, g_ks=ks, g_kj=kj)
    run_decls(kern.nkt, env0)
    s0, s1 = env0["g_s0"], env0["g_s1"]
    Af, Bf = A.ravel(), B.ravel()
    acc = np.zeros((THREADS, 32))
    steps, reads, calls = kern.loops()
    conflicts = 0
    for kt in range(s0, s1):
        stage = {"A": np.full(BM * BK, np.nan), "B": np.full(BK * BN, np.nan)}
        for t in range(THREADS):
            for mat, ds, dst, vin, ein, src in kern.copies:
                for q in range(2 if mat == "A" else 1):
                    env = dict(env0, g_t=t, g_q=q, g_kb=kt * BK, g_r0=tm * BM, g_c0=ct * BN)
                    for d in ds:
                        run_decls(d, env)
                    at = eval(dst, {}, env)
                    flat = Af if mat == "A" else Bf
                    for e in range(2):
                        env["g_e"] = e
                        inside = eval(vin if vec else ein, {}, env)
                        if vec and inside:  # a 16-byte copy: both elements in the matrix
                            assert eval(ein, {}, env), "16-byte copy past the matrix"
                        if not np.isnan(stage[mat][at + e]):
                            fail("shared element %s[%d] written twice" % (mat, at + e))
                        # the 16-byte copy's source is its first element's, the 8-byte copy's its own
                        stage[mat][at + e] = (flat[eval(src[0], {}, env) + e] if vec else flat[eval(src[1], {}, env)]) if inside else 0.0
        if np.isnan(stage["A"]).any() or np.isnan(stage["B"]).any():
            fail("a stage is not filled")
        for w in range(THREADS // 32):
            lanes = [dict(env0, g_t=w * 32 + l) for l in range(32)]
            for env in lanes:
                run_decls(kern.lane, env)
            for st in steps:
                fa = [dict() for _ in range(32)]
                fb = [dict() for _ in range(32)]
                for r in reads:
                    ia, ib = [], []
                    for l, env in enumerate(lanes):
                        e = dict(env, **st, **r, g_rs=0)
                        ia.append(eval(kern.fa_c, {}, e))
                        ib.append(eval(kern.fb_c, {}, e))
                        fa[l][tuple(r.values())] = stage["A"][ia[-1]]
                        fb[l][tuple(r.values())] = stage["B"][ib[-1]]
                    conflicts += (wavefronts(ia) > 2) + (wavefronts(ib) > 2)
                for cl in calls:
                    a, b, c, outs = [], [], [], []
                    for l, env in enumerate(lanes):
                        e = dict(env, **st, **cl)
                        # the fragments as the kernel's arrays, indexed as the operands index them
                        if "g_e" in reads[0]:
                            e["g_fa"] = [[fa[l][(q, x)] for x in range(2)] for q in range(4)]
                            e["g_fb"] = [[fb[l][(q, x)] for x in range(2)] for q in range(4)]
                        else:
                            e["g_fa"] = [fa[l][(q,)] for q in range(4)]
                            e["g_fb"] = [fb[l][(q,)] for q in range(4)]
                        for pn, px in kern.ptr:  # g_c, g_d: two accumulators from g_acc[x]
                            base = eval(px, {}, e)
                            e[pn] = [base, base + 1]
                        places = [eval(o, {}, e) for o in kern.outs]
                        a.append([eval(x, {}, e) for x in kern.ins[: len(kern.ins) - (2 if kern.mma.endswith("k8") else 1)]])
                        b.append([eval(x, {}, e) for x in kern.ins[len(a[-1]):]])
                        c.append([acc[w * 32 + l, p] for p in places])
                        outs.append(places)
                    d = mma(kern.mma.split(".")[-1], a, b, c)
                    for l in range(32):
                        for r, p in enumerate(outs[l]):
                            acc[w * 32 + l, p] = d[l][r]
    if conflicts:
        fail("%d fragment reads with bank conflicts" % conflicts)
    res = {}
    for t in range(THREADS):
        env = dict(env0, g_t=t, g_r0=tm * BM, g_c0=ct * BN)
        run_decls(kern.lane, env)
        for q in range(32):
            env["g_q"] = q
            rc = (eval(kern.row, {}, env), eval(kern.col, {}, env))
            if rc in res:
                fail("result %s placed twice" % (rc,))
            res[rc] = acc[t, q]
    return res


def check(kern, label, shapes):
    rng = np.random.default_rng(16)
    for (n, k, m, tiles, ks) in shapes:
        # small integers: every sum exact, whatever the order
        A = rng.integers(-8, 9, (n, k)).astype(np.float64)
        B = rng.integers(-8, 9, (k, m)).astype(np.float64)
        R = A @ B
        for tm, ct in tiles:
            tile = np.zeros((BM, BN))
            for kj in range(ks):
                for (y, x), v in block(kern, A, B, tm, ct, ks, kj).items():
                    ry, rx = y - tm * BM, x - ct * BN
                    assert 0 <= ry < BM and 0 <= rx < BN, "result outside the block's tile"
                    tile[ry, rx] += v
            want = np.zeros((BM, BN))
            ys, xs = slice(tm * BM, min(n, (tm + 1) * BM)), slice(ct * BN, min(m, (ct + 1) * BN))
            want[: ys.stop - ys.start, : xs.stop - xs.start] = R[ys, xs]
            if not np.array_equal(tile, want):
                bad = np.argwhere(tile != want)[0]
                fail("%s: %dx%dx%d tile (%d, %d): result (%d, %d) is %g, A @ B has %g"
                     % (label, n, k, m, tm, ct, bad[0], bad[1], tile[tuple(bad)], want[tuple(bad)]))
    print("%s: %s, fragments %s / %s, results equal A @ B, no bank conflicts" % (label, kern.mma, kern.fa, kern.fb))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "gen", "matmul.cu")
    name = sys.argv[2] if len(sys.argv) > 2 else "matmul_k0_matmul"
    text = kernel_text(path, name)
    # (n, k, m, [(row tile, column tile)], parts): full tiles over 3 slices; the
    # edges (odd sizes: the element-by-element copies and their zero fill);
    # a split part of another tile
    shapes = [(128, 24, 64, [(0, 0)], 1), (200, 13, 100, [(1, 1)], 1), (130, 40, 70, [(1, 0)], 2)]
    for label, defs in (("GPUC_MM_F64_K=8 sm_90", dict(GPUC_MM_F64_K=8, __CUDA_ARCH__=900)),
                        ("GPUC_MM_F64_K=4 sm_90", dict(GPUC_MM_F64_K=4, __CUDA_ARCH__=900)),
                        ("GPUC_MM_F64_K=8 sm_80", dict(GPUC_MM_F64_K=8, __CUDA_ARCH__=800))):
        check(Kernel(preprocess(text, defs)), label, shapes)
    print("model: ok")


main()
