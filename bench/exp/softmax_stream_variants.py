#!/usr/bin/env python3
"""bench/exp/softmax_stream_variants.py: variants of the generated row
softmax stream kernel (row_softmax_k0_rowred_st, rows.c's NAME_st, in
gpuc --emit=cuda bench/programs/rows.gdsl) for rows of 262144, to find
where the last 4% to issue 16's 0.90 goes (an experiment, not gpuc's code;
written for main at 2228ef3, session 20):
  base     as generated
  hint     the ring's bulk loads and stores with an L2 evict_first policy
           (the 4-byte scans' SCAN BULK HINT)
  direct   the consumers store the post's values straight to global memory
           from registers and release the slot as soon as they have read
           it; the producer reloads it at once (no bulk store: one more
           chunk of loads in flight)
  direct_l2  direct with a lag of 2 chunks (two more in flight); _l4, _l5
           lags of 4 and 5 (as many in flight as today, one fewer)
  relaxed  the gatherers poll the row's count with relaxed loads and take one
           acquire load once it is complete (an acquire load invalidates the
           SM's L1: once a chunk instead of once a poll); _s256 sleeping
           256 ns between polls; relaxed_reuse with reuse
  nowork   timing only (wrong values): the consumers neither fold nor apply
           the post (the chunk goes out as it came)
  (nogather, the gatherers without their wait for the row's count, hangs
  too: they lap the totals' barrier phases; dropped)
  pubrelax the publisher's count as a relaxed reduction instead of a release
           (timing: the count is then not ordered after the partials);
           pubrelax_relaxed with relaxed gatherers too
  local, local_nowork  timing only (wrong values): the publisher hands each
           chunk its own pair through shared memory (no global exchange, no
           gatherers); and with nowork: the bare ring
  (nowait, the post without its wait for the row's totals, hangs: the
  consumers lap the publisher's barrier phases; dropped)
  reuse    the fold leaves exp(x - warp max) in the slot, and the post takes
           it times exp(warp max - row max) (once a chunk) instead of
           exp(x - row max): one exp an element instead of two (ROW EXP
           REUSE for a block that holds only a part of the row; exact for
           infinities and NaN, within a few ulp elsewhere)
  reuse_direct, reuse_direct_hint  the combinations
  fast     __expf and x * (1 / sum) (not exact): what cheaper arithmetic
           could gain at most
(direct, lag, fast and reuse fit the default ring of 7 slots and a lag of 3
only; nowork and local any ring.)
Usage: softmax_stream_variants.py GEN_ROWS_CU OUT_DIR [VARIANT ...]"""
import re, sys, os

src = open(sys.argv[1]).read()
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
start = src.index("row_softmax_k0_rowred_st(const int64_t v_n")
end = src.index("\n}\n", start) + 3
head, st, tail = src[:start], src[start:end], src[end:]
SLOTS = int(re.search(r"through a ring of (\d+) slots", head[-600:]).group(1))
LAG = int(re.search(r"g_j < g_nb \+ (\d+);", st).group(1))


def must(old, new, text, count=1):
    n = text.count(old)
    if n != count:
        sys.exit(f"expected {count} of {old!r}, found {n}")
    return text.replace(old, new)


def hint(h):  # on the helpers (in head)
    pol = ('unsigned long long g_pol; asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(g_pol));\n    ')
    h = must('    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"\n'
             '                 :: "r"(gpuc_smem32(dst)), "l"(src), "r"(bytes), "r"(gpuc_smem32(bar)) : "memory");',
             '    ' + pol + 'asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"\n'
             '                 :: "r"(gpuc_smem32(dst)), "l"(src), "r"(bytes), "r"(gpuc_smem32(bar)), "l"(g_pol) : "memory");', h)
    h = must('    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\\n\\tcp.async.bulk.commit_group;"\n'
             '                 :: "l"(dst), "r"(gpuc_smem32(src)), "r"(bytes) : "memory");',
             '    ' + pol + 'asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;\\n\\tcp.async.bulk.commit_group;"\n'
             '                 :: "l"(dst), "r"(gpuc_smem32(src)), "r"(bytes), "l"(g_pol) : "memory");', h)
    return h


POST_AT = "                gpuc_st_wait(&g_totready6[g_s], (unsigned)((g_k / %d) & 1));\n" % SLOTS


def direct(k):
    # the post's part: values to global memory; the slot released after its reads
    i = k.index(POST_AT)
    pre, post = k[:i], k[i:]
    post = must("gpuc_v16_f32 *g_pw0 = g_ring + g_s * 2048 + g_warp * 128;  (void)g_pw0;",
                "gpuc_v16_f32 *g_pw0 = (gpuc_v16_f32 *)(v7 + g_ch * 8192 + g_warp * 512);  (void)g_pw0;\n"
                "                const gpuc_v16_f32 *g_pr0 = g_ring + g_s * 2048 + g_warp * 128;", post)
    post = must("const gpuc_v16_f32 *g_pv0 = g_pw0;", "const gpuc_v16_f32 *g_pv0 = g_pr0;", post)
    # release the slot once the four vectors are read (the arrive is a release: the reads come before it)
    post = must("                    g_a3_0 = g_pv0[g_lane + 3 * g_tpr];\n                }\n",
                "                    g_a3_0 = g_pv0[g_lane + 3 * g_tpr];\n                }\n"
                "                gpuc_st_arrive(&g_done6[g_s]);  /* the slot read: the producer may reload it */\n", post)
    post = must("                gpuc_st_fence_async();  /* the chunk's new values before the producer's bulk store reads them */\n"
                "                gpuc_st_arrive(&g_done6[g_s]);\n", "", post)
    k = pre + post
    k = re.sub(r"            gpuc_st_store\(v7 [^\n]*\n            const int64_t g_r = g_k - 1;\n"
               r"            if \(g_r >= 0 && g_r \+ 7 < g_nb\) \{\n                gpuc_st_wait_read<1>\(\);\n"
               r"                gpuc_st_load\(g_ring \+ \(g_r % 7\) \* 2048, v_A \+ \(\(int64_t\)blockIdx.x \+ \(g_r \+ 7\) \* g_grid\) \* 8192, 32768u, &g_full6\[g_r % 7\]\);\n",
               "            if (g_k + 7 < g_nb) {\n"
               "                gpuc_st_load(g_ring + g_s * 2048, v_A + ((int64_t)blockIdx.x + (g_k + 7) * g_grid) * 8192, 32768u, &g_full6[g_s]);\n", k)
    if "g_k + 7 < g_nb" not in k:
        sys.exit("direct: the producer's loop did not match")
    return k


def lag(n):
    def f(k):
        k = must("g_j < g_nb + 3;", "g_j < g_nb + %d;" % n, k)
        k = must("if (g_j >= 3) {", "if (g_j >= %d) {" % n, k)
        k = must("const int64_t g_k = g_j - 3;", "const int64_t g_k = g_j - %d;" % n, k)
        return k
    return f


GATHER_POLL = ("            while (gpuc_st_acquire(&g_scnt[g_row]) < (unsigned)g_ppr) {\n"
               "                __nanosleep(64);\n"
               "            }\n")


def relaxed(sleep):  # the gatherers poll with relaxed loads, then one acquire load (one L1 invalidation a chunk)
    def f(k):
        return must(GATHER_POLL,
                    "            for (;;) {\n"
                    "                unsigned g_c;\n"
                    "                asm volatile(\"ld.relaxed.gpu.global.u32 %%0, [%%1];\" : \"=r\"(g_c) : \"l\"(&g_scnt[g_row]) : \"memory\");\n"
                    "                if (g_c >= (unsigned)g_ppr) { break; }\n"
                    "                __nanosleep(%d);\n"
                    "            }\n"
                    "            (void)gpuc_st_acquire(&g_scnt[g_row]);  /* synchronizes with the row's last release */\n" % sleep, k)
    return f


def nogather(k):  # timing only: the gatherers do not wait for the row's count (wrong values)
    return must(GATHER_POLL, "", k)


def nowork(k):  # timing only: the consumers neither fold nor apply the post (the input goes out as it came)
    i = k.index(POST_AT)
    pre, post = k[:i], k[i:]
    a = pre.index("                gpuc_v16_f32 g_a0_0;")
    b = pre.index("                if (g_lane == 0) {", a)
    pre = pre[:a] + pre[b:]
    a = post.index("                /* the post's row-invariant parts, once per chunk */")
    b = post.index("                gpuc_st_fence_async();")
    post = post[:a] + post[b:]
    return pre + post


def pubrelax(k):  # timing: the publisher's count as a relaxed reduction (no release: not ordered after the partials)
    return must("                gpuc_st_count(&g_scnt[g_ch / g_ppr]);  /* after the partial (release) */\n",
                "                asm volatile(\"red.relaxed.gpu.global.add.u32 [%0], 1;\" :: \"l\"(&g_scnt[g_ch / g_ppr]) : \"memory\");\n", k)


def local(k):  # timing only: the publisher hands the chunk's own pair to the consumers (no global exchange, no gatherers)
    k = must("                gpuc_st_count(&g_scnt[g_ch / g_ppr]);  /* after the partial (release) */\n",
             "                g_tot6_0_0[g_s] = r0_0;\n                g_tot6_0_1[g_s] = r0_1;\n"
             "                gpuc_st_arrive(&g_totready6[g_s]);\n", k)
    k = re.sub(r"                gpuc_st_put\(&g_sparts\[[^\n]*\n", "", k)
    k = must("        for (int64_t g_k = g_warp - 17; g_k < g_nb; g_k += 2) {",
             "        for (int64_t g_k = g_warp - 17; g_k < 0; g_k += 2) {", k)
    return k


def nowait(k):  # timing only: the post does not wait for the row's totals (wrong values)
    return must(POST_AT, "", k)


FOLD = '''{ /* REUSE: the warp's maximum, then exp(x - it) left in the slot and summed */
                    float g_m = r0_0;
%(maxes)s                    for (int g_off = 1; g_off < 32; g_off <<= 1) { g_m = fmaxf(g_m, gpuc_shfl_xor(g_m, g_off)); }
                    const bool g_minf = g_m == -gpuc_inff();
                    float g_gs0 = 0.0f, g_gs1 = 0.0f, g_gs2 = 0.0f, g_gs3 = 0.0f;
%(exps)s                    float g_sum = g_gs0 + g_gs1 + g_gs2 + g_gs3;
                    for (int g_off = 1; g_off < 32; g_off <<= 1) { g_sum += gpuc_shfl_xor(g_sum, g_off); }
                    r0_0 = g_m;
                    r0_1 = g_sum;
                }
                if (g_lane == 0) {'''


def reuse(k):
    i = k.index(POST_AT)
    pre, post = k[:i], k[i:]
    # the fold: from the pair group's block to the partials' store
    a = pre.index("                { /* the online (max, sum) pair over the 4 vectors")
    b = pre.index("                if (g_lane == 0) {", a)
    maxes = "".join("                    g_m = fmaxf(g_m, g_a%d_0.v[%d]);\n" % (v, e) for v in range(4) for e in range(4))
    exps = ""
    for v in range(4):
        exps += "                    { gpuc_v16_f32 g_e;\n"
        for e in range(4):
            x = "g_a%d_0.v[%d]" % (v, e)
            exps += ("                      g_e.v[%d] = expf(g_minf && %s == g_m ? 0.0f : %s - g_m);"
                     " g_gs%d += %s == g_m ? 1.0f : g_e.v[%d];\n" % (e, x, x, v, x, e))
        exps += "                      g_pw0[g_lane + %d * g_tpr] = g_e; }\n" % v
    pre = pre[:a] + FOLD % {"maxes": maxes, "exps": exps} + pre[b + len("                if (g_lane == 0) {"):]
    # the post: exp(x - row max) as the slot's e times the warp's scale
    post = must("/* the post's row-invariant parts, once per chunk */",
                "const float g_mw = g_red6_0_0[g_s][g_warp];  /* the warp's maximum at the fold */\n"
                "                const float g_sc = g_mw == gpuc_inff() && r0_0 == gpuc_inff() ? 1.0f : expf(g_mw - r0_0);", post)
    post, n = re.subn(r"const float (t\d+) = \((g_a\d_0\.v\[\d\]) - r0_0\);\n(\s*)const float (t\d+) = expf\(\1\);",
                      r"const float \4 = \2 * g_sc;", post)
    if n != 16:
        sys.exit(f"reuse: {n} post exponentials replaced, expected 16")
    return pre + post


def fast(k):
    k = k.replace("expf(", "__expf(")
    k = must("float r0_1 = g_tot6_0_1[g_s];", "float r0_1 = g_tot6_0_1[g_s];\n                const float g_inv = 1.0f / r0_1;", k)
    k, n = re.subn(r"\((t\d+) / r0_1\)", r"(\1 * g_inv)", k)
    return k


variants = {
    "base": (False, lambda k: k),
    "hint": (True, lambda k: k),
    "direct": (False, direct),
    "lag2": (False, lag(2)),
    "direct_l2": (False, lambda k: lag(2)(direct(k))),
    "reuse_direct_l2": (False, lambda k: lag(2)(direct(reuse(k)))),
    "direct_l4": (False, lambda k: lag(4)(direct(k))),
    "direct_l5": (False, lambda k: lag(5)(direct(k))),
    "nowork": (False, nowork),
    "pubrelax": (False, pubrelax),
    "pubrelax_relaxed": (False, lambda k: relaxed(64)(pubrelax(k))),
    "local": (False, local),
    "local_nowork": (False, lambda k: local(nowork(k))),
    "relaxed": (False, relaxed(64)),
    "relaxed_s256": (False, relaxed(256)),
    "relaxed_reuse": (False, lambda k: relaxed(64)(reuse(k))),
    "reuse": (False, reuse),
    "reuse_direct": (False, lambda k: direct(reuse(k))),
    "reuse_direct_hint": (True, lambda k: direct(reuse(k))),
    "fast": (False, fast),
}
chosen = sys.argv[3:] or list(variants)
for name in chosen:
    h, f = variants[name]
    k = f(st)
    if name not in ("base", "hint") and k == st:
        sys.exit(f"variant {name} changed nothing")
    with open(os.path.join(out, f"rows_{name}.cu"), "w") as fh:
        fh.write((hint(head) if h else head) + k + tail)
print(" ".join(chosen))
