#!/usr/bin/env python3
"""bench/exp/scan_wide_variants.py: timing-only variants of the generated
wide scans (incl_i64_k0_scan_stream and recurrence_k0_scan_stream in
gpuc --emit=cuda bench/programs/scan.gdsl, SCAN BULK 3 WIDE), to see what its look-back
costs (an experiment, not gpuc's code; written for main at 0235350,
session 20; the values come out wrong by construction):
  base        as generated
  nolookback  the look-back warps skip the predecessors' words (each tile's
              prefix is its own aggregate): the cost of the global exchange
Usage: scan_wide_variants.py GEN_SCAN_CU OUT_DIR [VARIANT ...]"""
import os, sys

src = open(sys.argv[1]).read()
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
KERNELS = ("incl_i64_k0_scan_stream(", "recurrence_k0_scan_stream(")


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


variants = {"base": lambda k: k, "nolookback": nolookback, "nospin": nospin}
chosen = sys.argv[3:] or list(variants)
for name in chosen:
    text = src
    for kn in KERNELS:
        start = text.index(kn)
        end = text.index("\n}\n", start) + 3
        v = variants[name](text[start:end])
        if name != "base" and v == text[start:end]:
            sys.exit(f"variant {name} changed nothing in {kn}")
        text = text[:start] + v + text[end:]
    open(os.path.join(out, f"scan_{name}.cu"), "w").write(text)
print(" ".join(chosen))
