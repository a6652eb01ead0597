#!/usr/bin/env python3
"""coverage.py: what the //! test blocks of .gdsl files cover (issue 5).

Usage: coverage.py GPUC [--need N] FILE.gdsl...

Counts the test blocks, the blocks whose entry has each scalar type among its
parameter and result types (after the block's defines), and the blocks with
an input array of each size the issue names (a 1-D length, or a row or column
count of a 2-D array; inline values and generated ones). Prints one table and,
with --need N, a last line `coverage ok` only when there are at least N blocks
and every type and size has one. Reads blocks and signatures with
tests/frontend/Inputs/check_test_blocks.py.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "frontend", "Inputs"))
import check_test_blocks as ctb  # noqa: E402

TYPES = ["bool", "i32", "i64", "u32", "u64", "f32", "f64"]
SIZES = [0, 1, 31, 32, 33, 1023, 1024, 1025, 65537, 2 ** 24 + 3]


def scalars_of(tstr, structs, seen=None):
    """Scalar type names in a type string, struct fields included."""
    out = set()
    for w in re.findall(r"[A-Za-z_]\w*", tstr):
        if w in TYPES:
            out.add(w)
        elif w in structs and w not in (seen or set()):
            for _, ft in structs[w]:
                out |= scalars_of(ft, structs, (seen or set()) | {w})
    return out


def value_sizes(text, tstr, structs):
    """Sizes of an inline value of type tstr: what its size names bind to."""
    sizes = {}
    try:
        ctb.check_value(text, ctb.parse_type(tstr), structs, sizes)
    except (ValueError, IndexError):
        pass
    return {v for k, v in sizes.items() if not k.startswith("_")}


def main():
    args = sys.argv[1:]
    gpuc = args.pop(0)
    need = None
    if args and args[0] == "--need":
        need = int(args[1])
        args = args[2:]
    blocks_total = 0
    by_type = {t: 0 for t in TYPES}
    by_size = {s: 0 for s in SIZES}
    structs = {}
    for path in args:
        structs.update(ctb.signatures(ctb.ast_of(gpuc, path)[1])[1])
    for path in args:
        rc, text, _ = ctb.ast_of(gpuc, path)
        sigs = ctb.signatures(text)[0]
        for b in ctb.parse_blocks(path):
            blocks_total += 1
            sig = sigs.get(b["entry"])
            if b["defines"]:
                rc2, text2, _ = ctb.ast_of(gpuc, path, ["%s.%s=%s" % (b["entry"], p, v) for p, v in b["defines"]])
                if rc2 == 0:
                    sig = ctb.signatures(text2)[0].get(b["entry"], sig)
            types = set()
            defaults = {}
            if sig:
                _, params, result, defaults = sig
                defaults = dict(defaults)
                defaults.update(dict(b["defines"]))
                for _, t in params:
                    types |= scalars_of(ctb.concrete(t, defaults), structs)
                types |= scalars_of(ctb.concrete(result, defaults), structs)
            sizes = set()
            ptypes = dict(sig[1]) if sig else {}
            for name, v, _ in b["inputs"]:
                m = ctb.RANDOM.match(v)
                if m:
                    sizes |= {int(d) for d in re.findall(r"\[(\d+)\]", m.group(1))}
                elif not v.startswith("file") and name in ptypes:
                    sizes |= value_sizes(v, ctb.concrete(ptypes[name], defaults), structs)
            for t in types:
                by_type[t] += 1
            for s in sizes & set(SIZES):
                by_size[s] += 1
    print("blocks: %d" % blocks_total)
    print("types: " + ", ".join("%s %d" % (t, by_type[t]) for t in TYPES))
    print("sizes: " + ", ".join("%d %d" % (s, by_size[s]) for s in SIZES))
    if need is not None:
        missing = [t for t in TYPES if not by_type[t]] + [str(s) for s in SIZES if not by_size[s]]
        if blocks_total >= need and not missing:
            print("coverage ok")
        else:
            print("coverage too low: %d blocks (need %d), none for: %s" % (blocks_total, need, ", ".join(missing)))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
