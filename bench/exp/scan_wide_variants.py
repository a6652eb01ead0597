#!/usr/bin/env python3
"""bench/exp/scan_wide_variants.py: variants of the generated wide scans
(incl_i64_k0_scan_stream, excl_i64_k0_scan_stream and
recurrence_k0_scan_stream in gpuc --emit=cuda bench/programs/scan.gdsl,
SCAN BULK 3 WIDE), to see what their look-back costs (an experiment, not
gpuc's code; written for main at 0235350, session 20, extended in session
21; nolookback and nospin are timing only, their values wrong by
construction; windowR and late1 keep the values right):
  base        as generated
  nolookback  the look-back warps skip the predecessors' words (each tile's
              prefix is its own aggregate): the cost of the global exchange
  nospin      each window read once, a word not yet published taken as a prefix
  windowR     (session 21; correct values, i64 scans only: its fold is a sum)
              R * 32 predecessors' words loaded at once, lane l word r at
              tile g_j - 32 r - l, and the wait only for the words nearer than
              the nearest published prefix (the generated look-back waits
              for all 32 of a window, 32 a round); window1 is that wait alone
  late1       (session 21, not yet run on a GPU; correct values) each look-back
              warp starts tile k's look-back only once the consumers' totals
              of tile k + 1 are in (pready of its slot), so that the nearest
              predecessors' aggregates, and maybe their prefixes, are out by
              then; the consumers need tile k's offsets 3 tiles after its
              totals. It cannot wait on a later phase of that barrier: the
              totals of tile k + 8 (the slot's next phase) come after the
              consumers' scan of tile k, which waits for this look-back.
Usage: scan_wide_variants.py GEN_SCAN_CU OUT_DIR [VARIANT ...]"""
import os, sys

src = open(sys.argv[1]).read()
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
KERNELS = ("incl_i64_k0_scan_stream(", "excl_i64_k0_scan_stream(", "recurrence_k0_scan_stream(")


def block_end(text, at):
    """the index just past the brace that closes the block opened at the first '{' from at"""
    i = text.index("{", at)
    depth = 0
    while True:
        if text[i] == "{": depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0: return i + 1
        i += 1


def nolookback(k):
    a = k.index("for (int64_t g_j = g_tile - 1;; g_j -= 32) {")
    return k[:a] + "/* nolookback: no predecessors */" + k[block_end(k, a):]


SPIN = """                    while (__any_sync(0xffffffffu, g_s == 0)) {
                        if (g_s == 0) {
                            gpuc_backoff();
                            gpuc_ld_word2(g_words + 2 * g_idx, &g_w, &g_s);
                        }
                    }
"""


def nospin(k):
    """the look-back reads each window of predecessors once and takes a word not yet published
    (status 0) as a prefix: the loads' latency without the wait for the predecessors"""
    assert k.count(SPIN) == 1, "the spin loop"
    return k.replace(SPIN, "                    if (g_s == 0) { g_s = 2; }  /* nospin */\n")


WINDOW = """for (int64_t g_j = g_tile - 1;; g_j -= 32 * R) {
                    /* windowR: lane l word r at tile g_j - 32 r - l (before tile 0: a prefix of 0) */
                    unsigned long long g_wv[R], g_sv[R];
#pragma unroll
                    for (int g_r = 0; g_r < R; g_r++) {
                        const int64_t g_idx = g_j - 32 * g_r - (int64_t)g_lane;
                        g_wv[g_r] = 0; g_sv[g_r] = 2;
                        if (g_idx >= 0) { gpuc_ld_word2(g_words + 2 * g_idx, &g_wv[g_r], &g_sv[g_r]); }
                    }
                    int g_stop;  /* the nearest position (32 r + l) with a prefix, 32 R if none */
                    for (;;) {
                        g_stop = 32 * R;
#pragma unroll
                        for (int g_r = R - 1; g_r >= 0; g_r--) {
                            const unsigned g_m = __ballot_sync(0xffffffffu, g_sv[g_r] == 2);
                            if (g_m) { g_stop = 32 * g_r + __ffs(g_m) - 1; }
                        }
                        bool g_need = false;
#pragma unroll
                        for (int g_r = 0; g_r < R; g_r++) {
                            if (32 * g_r + (int)g_lane < g_stop && g_sv[g_r] == 0) { g_need = true; }
                        }
                        if (!__any_sync(0xffffffffu, g_need)) { break; }
                        gpuc_backoff();
#pragma unroll
                        for (int g_r = 0; g_r < R; g_r++) {
                            if (32 * g_r + (int)g_lane < g_stop && g_sv[g_r] == 0) {
                                gpuc_ld_word2(g_words + 2 * (g_j - 32 * g_r - (int64_t)g_lane), &g_wv[g_r], &g_sv[g_r]);
                            }
                        }
                    }
                    int64_t g_acc = 0;
#pragma unroll
                    for (int g_r = 0; g_r < R; g_r++) {
                        if (32 * g_r + (int)g_lane <= g_stop) { g_acc = gpuc_add_i64(g_acc, (int64_t)g_wv[g_r]); }
                    }
                    for (int g_off = 16; g_off > 0; g_off >>= 1) { g_acc = gpuc_add_i64(g_acc, gpuc_shfl_down(g_acc, g_off)); }
                    g_acc = __shfl_sync(0xffffffffu, g_acc, 0);
                    g_ex0_0 = gpuc_add_i64(g_acc, g_ex0_0);
                    if (g_stop < 32 * R) {
                        break;
                    }
                }"""


def window(R):
    def edit(k):
        if "incl_i64" not in k[:40] and "excl_i64" not in k[:40]:
            return k
        a = k.index("for (int64_t g_j = g_tile - 1;; g_j -= 32) {")
        return k[:a] + WINDOW.replace("R", str(R)) + k[block_end(k, a):]
    return edit


LATE_AT = "            gpuc_ss_wait(gpuc_smem32(&g_pready[g_sl]), (unsigned)((g_k / 7) & 1));\n"


def late1(k):
    assert k.count(LATE_AT) == 1, "the look-back warp's wait for its tile's totals"
    return k.replace(LATE_AT, LATE_AT + "            if (g_k + 1 < g_count) {  /* late1: the next tile's totals too */\n"
                     "                gpuc_ss_wait(gpuc_smem32(&g_pready[(int)((g_k + 1) % 7)]), (unsigned)(((g_k + 1) / 7) & 1));\n"
                     "            }\n")


variants = {"base": lambda k: k, "nolookback": nolookback, "nospin": nospin, "late1": late1,
            "window1": window(1), "window3": window(3), "window5": window(5)}
chosen = sys.argv[3:] or list(variants)
for name in chosen:
    text = src
    for kn in KERNELS:
        start = text.index(kn)
        end = text.index("\n}\n", start) + 3
        v = variants[name](text[start:end])
        if name != "base" and not name.startswith("window") and v == text[start:end]:
            sys.exit(f"variant {name} changed nothing in {kn}")
        text = text[:start] + v + text[end:]
    open(os.path.join(out, f"scan_{name}.cu"), "w").write(text)
print(" ".join(chosen))
