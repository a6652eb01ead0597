#!/usr/bin/env python3
"""bench/exp/softmax_ops_variants.py: variants of the generated row softmax
stream kernel (row_softmax_k0_rowred_st in bench/gen/rows.cu) that change
only its arithmetic, to measure what the consumers' instructions cost on a
GPU (an experiment, not gpuc's code):
  base   as generated (expf; IEEE division by the row's sum)
  mrk    the division as a multiplication by the hoisted reciprocal and one
         Markstein correction (exact: same bits as the division), with a
         range guard falling back to the division
  rcp    x * (1 / sum) with no correction (not exact)
  fexp   __expf for expf in that kernel (not exact)
  fast   fexp and rcp (about the hand-written prototype's arithmetic)
  nosel  the fold's exp(x == m ? 0 : x - m) without the select (wrong only
         for infinities)
  rel    the publisher's fence and count as one release reduction
         (red.release.gpu) instead of __threadfence() and atomicAdd
It edits the generated text, so it fits the code of the commit it was
written for (main at d756632, session 12's device call 1; the rel variant
is what rows.c emits since: gpuc_st_count).
Usage: softmax_ops_variants.py GEN_ROWS_CU OUT_DIR"""
import re, sys, os

src = open(sys.argv[1]).read()
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
start = src.index("row_softmax_k0_rowred_st(const int64_t v_n")
end = src.index("\n}\n", start) + 3
head, st, tail = src[:start], src[start:end], src[end:]
helper = r'''
static __device__ __forceinline__ float gpuc_xdiv(float x, float s, float inv, bool s_ok) {
    const float ax = fabsf(x);
    if (s_ok && ax >= 0x1p-60f && ax <= 0x1p60f) {
        const float q = x * inv;
        const float r = fmaf(-q, s, x);
        return fmaf(r, inv, q);
    }
    return x / s;
}
'''
# the kernel's declaration line starts a few lines before "row_softmax_k0_rowred_st("
decl = head.rindex("\n", 0, head.rindex("\n", 0, len(head) - 1)) + 1

def hoist(k):
    return k.replace("float r0_1 = g_tot6_0_1[g_s];",
                     "float r0_1 = g_tot6_0_1[g_s];\n const float g_inv = __frcp_rn(r0_1);"
                     " const bool g_sok = fabsf(r0_1) >= 0x1p-60f && fabsf(r0_1) <= 0x1p60f;")

def mrk(k):
    return re.sub(r"\((t\d+) / r0_1\)", r"gpuc_xdiv(\1, r0_1, g_inv, g_sok)", hoist(k))

def rcp(k):
    return re.sub(r"\((t\d+) / r0_1\)", r"(\1 * g_inv)", hoist(k))

def fexp(k):
    return k.replace("expf(", "__expf(")

def nosel(k):
    return re.sub(r"expf\((g_a\d+_0\.v\[\d\]) == g_gm \? \(float\)0 : \1 - g_gm\)", r"expf(\1 - g_gm)", k)

def rel(k):
    return re.sub(r"__threadfence\(\);[^\n]*\n(\s*)atomicAdd\(&g_scnt\[g_ch / g_ppr\], 1u\);",
                  r'asm volatile("red.release.gpu.global.add.u32 [%0], 1;" :: "l"(&g_scnt[g_ch / g_ppr]) : "memory");', k)

variants = {"base": lambda k: k, "mrk": mrk, "rcp": rcp, "fexp": fexp,
            "fast": lambda k: fexp(rcp(k)), "nosel": nosel, "mrk_nosel": lambda k: nosel(mrk(k)),
            "rel": rel, "mrk_rel": lambda k: rel(mrk(k))}
for name, f in variants.items():
    k = f(st)
    if name != "base" and k == st:
        sys.exit(f"variant {name} changed nothing")
    with open(os.path.join(out, f"rows_{name}.cu"), "w") as fh:
        fh.write(head[:decl] + helper + head[decl:] + k + tail)
print(" ".join(variants))
