#!/usr/bin/env python3
"""report.py: merge the JSON lines of one bench run (gpuc drivers, CUB harness,
Python peers) into one table and one JSON file.

    python3 bench/report.py RESULTS_DIR [--json OUT.json] [--full OUT.md]

Reads RESULTS_DIR/*.jsonl (one JSON object a line: src, case, dtype, n, m,
us, check, ...) and RESULTS_DIR/machine.txt. Prints the main table (every
case at the target size, 2^28 elements, or the largest size run), the
small-size table (reduce and scan, 2^10..2^20, against CUB), the paths table
(each case at the target size through the three ways gpuc is run: the
--emit=cuda header of the drivers, src "gpuc"; the --emit=lib library,
"gpuc_lib"; the executable's own -r/-t timing, "gpuc_exe"; a path more than
3% slower than the best of them is flagged SLOW), then a summary.

Definitions (docs/performance.md):
  bytes      the fewest bytes the case must move: each input read once, each
             output written once (filter: the kept elements written);
  GB/s       bytes / gpuc median time;
  copy rate  2 * B / t of a cudaMemcpy device-to-device copy of B = 1 GiB in
             the same run (bytes read + written), the CUB harness's copy_ref;
  ratio      (bytes / time) / copy rate.
Exit status: 1 if any result of the run is WRONG (a fast wrong kernel fails
the suite) or no gpuc result exists at all, else 0; missed targets are
reported, not failed.
"""
import argparse
import glob
import json
import os
import sys

SIZE = {"f32": 4, "f64": 8, "i32": 4, "i64": 8, "u8": 1}
PEERS = ("cub", "cupy", "torch", "torch_compile")
PATHS = (("gpuc", "header"), ("gpuc_lib", "lib"), ("gpuc_exe", "exe"))
PATH_SLACK = 1.03  # a path slower than 1.03x the best path is flagged
ROW_LENGTHS = (256, 1024, 4096, 32768, 262144)

# (case, dtypes, has_m): every case the gpuc suite has, in table order
CASES = [
    ("saxpy", ("f32",)), ("chain", ("f32",)),
    ("sum", ("f32", "f64", "i32", "i64")), ("max", ("f32", "f64", "i32", "i64")),
    ("dot", ("f32",)), ("sumsq", ("f32",)),
    ("scan_incl", ("i32", "f32", "i64")), ("scan_excl", ("i32", "f32", "i64")),
    ("recurrence", ("f32",)),
    ("filter", ("f32", "i32")),
    ("logsumexp", ("f32",)), ("softmax_stats", ("f32",)), ("mean_var", ("f32",)),
    ("row_sums", ("f32",)), ("row_softmax", ("f32",)),
    ("layer_norm", ("f32",)), ("xent", ("f32",)),
    ("matmul", ("f64",)),
]
ROWS_2D = ("row_sums", "row_softmax", "layer_norm", "xent")
REDUCE = ("sum", "max", "dot", "sumsq")
SCAN = ("scan_incl", "scan_excl")


def bytes_moved(case, dtype, n, m, out_n):
    s = SIZE[dtype]
    if case in ("saxpy", "chain", "recurrence"):
        return 3 * s * n
    if case in ("sum", "max", "sumsq", "logsumexp", "softmax_stats", "mean_var"):
        return s * n
    if case == "dot":
        return 2 * s * n
    if case in SCAN:
        return 2 * s * n
    if case == "filter":
        return s * n + s * (out_n if out_n is not None else n // 2)
    if case == "row_sums":
        return s * n + s * (n // m)
    if case in ("row_softmax", "layer_norm"):
        return 2 * s * n  # LayerNorm's weight and bias (2 x m) left out
    if case == "xent":
        return s * n + (8 + s) * (n // m)  # logits, int64 targets, a loss per row
    if case == "matmul":
        return 3 * s * n * n
    return None


def target(case):
    """(kind, value, text) of the case's target at the target size."""
    if case in ("saxpy", "chain"):
        return ("ratio", 0.95, "ratio >= 0.95")
    if case in REDUCE:
        return ("vs_cub", 1.0, "<= 1.0x CUB time")
    if case in SCAN:
        return ("ratio", 0.90, "ratio >= 0.90")
    if case == "recurrence":
        return ("ratio", 0.85, "ratio >= 0.85")
    if case == "filter":
        return ("ratio", 0.75, "ratio >= 0.75")
    if case in ("logsumexp", "softmax_stats"):
        return ("vs_compile", 0.55, "<= 0.55x torch.compile time")
    if case == "mean_var":
        return ("ratio", 0.60, "one pass: ratio >= 0.60")
    if case in ROWS_2D:
        return ("ratio", 0.85, "ratio >= 0.85")
    if case == "matmul":
        return ("vs_seed", 2.0, ">= 2x seed kernel speed")
    return (None, None, "-")


def load(d):
    recs = []
    for p in sorted(glob.glob(os.path.join(d, "*.jsonl"))):
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        recs.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    return recs


def fmt_us(v):
    if v is None:
        return "-"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--json", default=None)
    ap.add_argument("--full", default=None, help="write the table of every size here (markdown)")
    ap.add_argument("--target-log2", type=int, default=28)
    a = ap.parse_args()
    recs = load(a.dir)
    idx = {}
    for r in recs:
        key = (r.get("src"), r.get("case"), r.get("dtype"), int(r.get("n", 0)), int(r.get("m", 0) or 0))
        idx[key] = r
    copy_ref = None
    for r in recs:
        if r.get("case") == "copy_ref" and r.get("n") == 1 << 30:
            copy_ref = r.get("GBps")
    machine = ""
    mp = os.path.join(a.dir, "machine.txt")
    if os.path.exists(mp):
        machine = open(mp).read().strip()

    gpuc_recs = [r for r in recs if r.get("src") == "gpuc"]
    all_n = sorted({int(r["n"]) for r in recs if r.get("case") not in ("copy_ref", "matmul", "matmul_seed",
                                                                          "matmul_cublas") + ROWS_2D})
    tn = 1 << a.target_log2
    if all_n and tn not in all_n:
        tn = max(n for n in all_n if n <= tn) if any(n <= tn for n in all_n) else max(all_n)

    def peer_us(src, case, dtype, n, m):
        r = idx.get((src, case, dtype, n, m))
        return r.get("us") if r else None

    rows = []

    def make_row(case, dtype, n, m, with_target):
        g = idx.get(("gpuc", case, dtype, n, m))
        row = {"case": case, "dtype": dtype, "n": n, "m": m}
        if case == "matmul":
            row["peers"] = {"seed": peer_us("cub", "matmul_seed", "f64", n, m),
                            "cublas": peer_us("cub", "matmul_cublas", "f64", n, m)}
        else:
            row["peers"] = {p: peer_us(p, case, dtype, n, m) for p in PEERS}
        out_n = None
        for src in ("gpuc", "cub", "torch", "cupy"):
            r = idx.get((src, case, dtype, n, m))
            if r and r.get("out_n") is not None:
                out_n = r["out_n"]
                break
        row["bytes"] = bytes_moved(case, dtype, n, m, out_n)
        if g is None:
            row.update(gpuc_us=None, check="not available")
        else:
            row.update(gpuc_us=g.get("us"), check=g.get("check", "?"))
        us = row["gpuc_us"]
        row["gbps"] = row["bytes"] / (us * 1e3) if us and row["bytes"] else None
        row["ratio"] = row["gbps"] / copy_ref if row["gbps"] and copy_ref else None
        if case == "matmul" and us:
            row["gflops"] = 2.0 * n * n * n / (us * 1e3)
        row["target"], row["result"] = "-", "-"
        kind, val, text = target(case)
        small = case in REDUCE + SCAN and n <= (1 << 20)
        if with_target and kind:
            row["target"] = text
            got = None
            if us is None:
                row["result"] = "n/a"
            else:
                if kind == "ratio":
                    got = row["ratio"]
                    ok = got is not None and got >= val
                elif kind == "vs_cub":
                    ref = row["peers"].get("cub")
                    got = us / ref if ref else None
                    ok = got is not None and got <= val
                elif kind == "vs_compile":
                    ref = row["peers"].get("torch_compile")
                    got = us / ref if ref else None
                    ok = got is not None and got <= val
                elif kind == "vs_seed":
                    ref = row["peers"].get("seed")
                    got = ref / us if ref else None
                    ok = got is not None and got >= val
                if got is None:
                    row["result"] = "no peer"
                else:
                    row["result"] = ("met" if ok else "MISSED") + f" ({got:.2f})"
                row["target_value"] = got
        elif small and with_target is not False:
            row["target"] = "<= 1.2x CUB time"
            ref = row["peers"].get("cub")
            if us is None:
                row["result"] = "n/a"
            elif ref:
                got = us / ref
                row["target_value"] = got
                row["result"] = ("met" if got <= 1.2 else "MISSED") + f" ({got:.2f})"
        return row

    for case, dtypes in CASES:
        for dt in dtypes:
            if case in ROWS_2D:
                ns = sorted({int(r["n"]) for r in recs if r.get("case") == case})
                for n in ns or [tn]:
                    for m in ROW_LENGTHS:
                        if m <= n:
                            rows.append(make_row(case, dt, n, m, True))
            elif case == "matmul":
                rows.append(make_row(case, dt, 1024, 1024, True))
            else:
                ns = sorted({int(r["n"]) for r in recs if r.get("case") == case and r.get("dtype") == dt} |
                            {n for n in all_n if n <= tn})
                for n in ns:
                    rows.append(make_row(case, dt, n, 0, True if n == tn else None))

    def line(r):
        n = r["n"]
        k = n.bit_length() - 1
        nstr = f"2^{k}" if n == 1 << k else str(n)
        if r["m"] and r["case"] != "matmul":
            nstr = f"{n // r['m']}x{r['m']}"
        if r["case"] == "matmul":
            nstr = "1024^3"
            p = r["peers"]
            peers = [fmt_us(p.get("seed")) + " (seed)", fmt_us(p.get("cublas")) + " (cuBLAS)", "-", "-"]
            gbs = f"{r['gflops']:.0f} GFLOP/s" if r.get("gflops") else "-"
            return (f"| {r['case']} | {r['dtype']} | {nstr} | {fmt_us(r['gpuc_us'])} | " + " | ".join(peers) +
                    f" | {r['bytes']} | {gbs} | - | {r['target']} | {r['result']} | {r['check']} |")
        p = r["peers"]
        return (f"| {r['case']} | {r['dtype']} | {nstr} | {fmt_us(r['gpuc_us'])} | " +
                " | ".join(fmt_us(p.get(s)) for s in PEERS) +
                f" | {r['bytes']} | {('%.0f' % r['gbps']) if r['gbps'] else '-'} | "
                f"{('%.3f' % r['ratio']) if r['ratio'] else '-'} | {r['target']} | {r['result']} | {r['check']} |")

    head = ("| case | dtype | n | gpuc us | CUB us | CuPy us | torch us | torch.compile us | bytes | gpuc GB/s | "
            "ratio to copy | target | met/missed | check |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    main_rows = [r for r in rows if r["n"] >= tn or r["case"] in ROWS_2D or r["case"] == "matmul"]
    small_rows = [r for r in rows if r["case"] in REDUCE + SCAN and r["n"] <= (1 << 20)]

    out = []
    out.append(f"copy rate (cudaMemcpy D2D of 1 GiB, read + written): "
               f"{('%.1f GB/s' % copy_ref) if copy_ref else 'not measured'}")
    if machine:
        out.append("machine: " + machine.replace("\n", "; "))
    out.append("")
    out.append(f"Main table (target size n = 2^{tn.bit_length() - 1}, 2-D: total 2^{tn.bit_length() - 1}; "
               "times are medians in microseconds):")
    out.append(head)
    out += [line(r) for r in main_rows]
    out.append("")
    out.append("Small sizes: gpuc time / CUB time (target <= 1.2), gpuc and CUB medians in us:")
    small_ns = sorted({r["n"] for r in small_rows})
    out.append("| case | dtype | " + " | ".join(f"2^{n.bit_length() - 1}" for n in small_ns) + " | met |")
    out.append("|---|---|" + "---|" * len(small_ns) + "---|")
    for case, dtypes in CASES:
        for dt in dtypes:
            cells, allmet, any_ = [], True, False
            for n in small_ns:
                r = next((x for x in small_rows if x["case"] == case and x["dtype"] == dt and x["n"] == n), None)
                if r is None:
                    continue
                v = r.get("target_value")
                if v is None:
                    cells.append("n/a")
                    allmet = False
                    continue
                any_ = True
                allmet = allmet and v <= 1.2
                cells.append(f"{v:.2f} ({fmt_us(r['gpuc_us'])}/{fmt_us(r['peers'].get('cub'))})")
            if cells:
                out.append(f"| {case} | {dt} | " + " | ".join(cells) + " | " +
                           ("met" if allmet and any_ else "MISSED" if any_ else "n/a") + " |")
    out.append("")
    out.append(f"Paths at n = 2^{tn.bit_length() - 1}: the same program through the --emit=cuda header (bench "
               "drivers), the --emit=lib library (results it allocates) and the executable's -r/-t; median us, "
               f"SLOW = more than {PATH_SLACK:.2f}x the best path:")
    out.append("| case | dtype | n | header us | lib us | exe us | slowest / best | flag | checks |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    path_rows = []
    for case, dtypes in CASES:
        for dt in dtypes:
            keys = sorted({(int(r["n"]), int(r.get("m", 0) or 0)) for r in recs
                           if r.get("src") in ("gpuc_lib", "gpuc_exe") and r.get("case") == case and
                           r.get("dtype") == dt and (int(r["n"]) == tn or case in ROWS_2D)})
            for n, m in keys:
                got = {name: idx.get((src, case, dt, n, m)) for src, name in PATHS}
                us = {k: v.get("us") for k, v in got.items() if v and v.get("us")}
                checks = ", ".join(f"{k} {v.get('check', '?')}" for k, v in got.items() if v)
                best = min(us.values()) if us else None
                slow = [k for k, v in us.items() if best and v > PATH_SLACK * best]
                ratio = max(us.values()) / best if best and len(us) > 1 else None
                flag = ("SLOW: " + ", ".join(f"{k} {us[k] / best:.2f}x" for k in slow)) if slow else \
                    ("ok" if len(us) > 1 else "one path")
                nstr = f"{n // m}x{m}" if m else f"2^{n.bit_length() - 1}"
                out.append(f"| {case} | {dt} | {nstr} | " + " | ".join(fmt_us(us.get(k)) for _, k in PATHS) +
                           f" | {('%.3f' % ratio) if ratio else '-'} | {flag} | {checks} |")
                path_rows.append({"case": case, "dtype": dt, "n": n, "m": m, "us": us, "slowest_over_best": ratio,
                                  "slow": slow})
    text = "\n".join(out)

    good = ("ok", "unchecked", "not available")
    wrong = [r for r in recs if str(r.get("check", "ok")) not in good]
    met = [r for r in rows if r["result"].startswith("met")]
    missed = [r for r in rows if r["result"].startswith("MISSED")]
    na = [r for r in rows if r["result"] in ("n/a", "no peer")]
    slow_paths = [r for r in path_rows if r["slow"]]
    summary = (f"\nsummary: {len(gpuc_recs)} gpuc results; targets met {len(met)}, missed {len(missed)}, "
               f"not available {len(na)}; wrong results: {len(wrong)}; paths compared {len(path_rows)}, "
               f"slower than {PATH_SLACK:.2f}x the best: {len(slow_paths)}")
    for r in wrong:
        summary += f"\n  WRONG: {r.get('src')} {r.get('case')} {r.get('dtype')} n={r.get('n')} m={r.get('m')}: {r.get('check')}"
    print(text + summary)

    if a.full:
        with open(a.full, "w") as f:
            f.write(head + "\n")
            for r in rows:
                f.write(line(r) + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": machine, "copy_GBps": copy_ref, "target_n": tn, "rows": rows, "paths": path_rows,
                       "peer_records": [r for r in recs if r.get("src") != "gpuc"]}, f, indent=1)
    if wrong:
        return 1
    if not gpuc_recs:
        return 1 if os.environ.get("BENCH_REQUIRE_GPUC") else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
