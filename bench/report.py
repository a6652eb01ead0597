#!/usr/bin/env python3
"""report.py: merge the JSON lines of one bench run (gpuc drivers, CUB harness,
Python peers) into one table and one JSON file.

    python3 bench/report.py RESULTS_DIR [--json OUT.json] [--full OUT.md]

Reads RESULTS_DIR/*.jsonl (one JSON object a line: src, case, dtype, n, m,
us, check, ...), RESULTS_DIR/machine.txt and RESULTS_DIR/parts.txt (bench/run.sh's
parts: name | seconds | status). Prints the main table (every case at the
target size, 2^28 elements, or the largest size run, with each peer's time,
the best peer, gpuc's time over the best peer's, and the case's targets
(TARGETS: issue 7's, and issue 16's where it raised or added one) marked
"met" or "MISSED" with the value and by how much it is over or short), the
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
A result whose check says "not run: out of time" (bench/run.sh --budget) is
counted apart: neither wrong nor a target. Exit status: 1 if any result of the
run is WRONG (a fast wrong kernel fails the suite) or, with BENCH_REQUIRE_GPUC
set, no gpuc result exists at all, else 0; missed targets are reported, not
failed.
"""
import argparse
import glob
import json
import os
import statistics
import sys

SIZE = {"f32": 4, "f64": 8, "i32": 4, "i64": 8, "u8": 1}
PEERS = ("cub", "cupy", "torch", "torch_compile")
PATHS = (("gpuc", "header"), ("gpuc_lib", "lib"), ("gpuc_exe", "exe"))
PATH_SLACK = 1.03  # a path slower than 1.03x the best path is flagged
# bench/run.sh's recheck part runs again, in turn, the cases whose time is
# within 2% of CUB's and the paths within 1% of the slack: one process's
# median moves by up to 2-4% from one process to the next on the H200
# (2026-11-28: LayerNorm at rows of 1024 547-568 us through one binary,
# CUB's sum 245-251 us), more than the margins those verdicts turn on
RECHECK_NEAR = 0.02
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
    ("matmul", ("f64", "f32")),
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


# The targets at the target size (docs/performance.md, "Targets"): issue 7's,
# raised or added to by issue 16. Each is (kind, value, peer):
#   ratio     gpuc's ratio to the copy rate >= value
#   time      gpuc's time <= value x the peer's time ("ahead": value 1.0)
#   speed     the peer's time / gpuc's time >= value (matrix products)
AHEAD_OF_TORCH = [("time", 1.0, "torch"), ("time", 1.0, "torch_compile")]


def targets(case, dtype, n, m):
    if case == "saxpy":
        return [("ratio", 0.95, None)]
    if case == "chain":
        return [("ratio", 0.95, None)] + AHEAD_OF_TORCH
    if case in REDUCE:
        return [("time", 1.0, "cub")]
    if case in SCAN:
        return [("ratio", 0.90, None)]
    if case == "recurrence":
        return [("ratio", 0.85, None)]
    if case == "filter":
        return [("ratio", 0.80, None), ("time", 1.0, "cub")]
    if case in ("logsumexp", "softmax_stats"):
        return [("time", 0.55, "torch_compile")]
    if case == "mean_var":
        return [("ratio", 0.60, None)] + AHEAD_OF_TORCH
    if case == "row_sums":
        return [("ratio", 0.85, None)]
    if case == "row_softmax":
        return [("ratio", 0.95 if m <= 4096 else 0.90, None)] + AHEAD_OF_TORCH
    if case in ("layer_norm", "xent"):
        return AHEAD_OF_TORCH
    if case == "matmul":
        # the seed kernel is timed at 1024^3 only (bench/peers_cub.cu), the size its target was set at
        return [("speed", 0.6, "cublas")] + ([("speed", 2.0, "seed")] if dtype == "f64" and n == 1024 else [])
    return []


PEER_NAME = {"cub": "CUB", "cupy": "CuPy", "torch": "torch", "torch_compile": "torch.compile",
             "cublas": "cuBLAS", "seed": "seed"}


def target_text(kind, val, peer):
    if kind == "ratio":
        return f"ratio >= {val:.2f}"
    if kind == "time":
        return f"ahead of {PEER_NAME[peer]}" if val == 1.0 else f"<= {val:.2f}x {PEER_NAME[peer]} time"
    return f">= {val:g}x {PEER_NAME[peer]} speed"


def judge(kind, val, peer, row):
    """(met, text) of one target on a row: the value, and by how much of the
    target it is to spare (met) or short (MISSED); met None when it cannot be
    judged"""
    us = row["gpuc_us"]
    if us is None:
        return None, "no gpuc result"
    if kind == "ratio":
        got = row["ratio"]
        if got is None:
            return None, "no copy rate"
        text, spare = f"ratio {got:.3f}", (got - val) / val
    else:
        ref = row["peers"].get(peer)
        if not ref:
            return None, f"no {PEER_NAME[peer]} time"
        if kind == "time":
            got = us / ref
            text, spare = f"{got:.3f}x {PEER_NAME[peer]} time", (val - got) / val
        else:
            got = ref / us
            text, spare = f"{got:.2f}x {PEER_NAME[peer]} speed", (got - val) / val
    if spare >= 0:
        return True, f"{text} ({spare * 100:.1f}% to spare)"
    return False, f"{text} ({-spare * 100:.1f}% short)"


NOT_RUN = "not run"  # the start of the check of a case bench/run.sh's budget left out


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


def rec_key(r):
    """a record's measurement: (source, case, dtype, n, m)"""
    return (r.get("src"), r.get("case"), r.get("dtype"), int(r.get("n", 0)), int(r.get("m", 0) or 0))


def fmt_us(v):
    if v is None:
        return "-"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def fmt_n(case, n, m):
    if case == "matmul":
        return f"{n}^3"
    if m:
        return f"{n // m}x{m}"
    k = n.bit_length() - 1
    return f"2^{k}" if n == 1 << k else str(n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--json", default=None)
    ap.add_argument("--full", default=None, help="write the table of every size here (markdown)")
    ap.add_argument("--target-log2", type=int, default=28)
    ap.add_argument("--recheck-plan", action="store_true",
                    help="print what bench/run.sh's recheck part runs again (near ties with CUB, paths near the "
                         "slack), one 'cub CASE DTYPE' or 'paths CASE DTYPE M' a line, and nothing else")
    a = ap.parse_args()
    everything = load(a.dir)
    recs = [r for r in everything if not r.get("recheck")]
    # passes 2.. of the small sizes (bench/run.sh --small-passes): only for
    # their target, within 1.2x CUB's time in every pass; pass 1 is the rest
    later = [r for r in recs if int(r.get("pass", 1)) > 1]
    recs = [r for r in recs if int(r.get("pass", 1)) == 1]
    # the recheck part's records (bench/run.sh: more processes of the near
    # ties, in turn): each rechecked time becomes the median of the
    # processes' medians, the first run's included
    rechecks = [r for r in everything if r.get("recheck") and r.get("us") is not None]

    def later_ratios(case, dtype, n):
        """[(pass, gpuc time / CUB time)] of the later passes of one small size"""
        by = {}
        for r in later:
            if r.get("case") == case and r.get("dtype") == dtype and int(r.get("n", 0)) == n and r.get("us"):
                by.setdefault(int(r["pass"]), {})[r.get("src")] = r["us"]
        return [(p, v["gpuc"] / v["cub"]) for p, v in sorted(by.items()) if v.get("gpuc") and v.get("cub")]

    idx = {}
    for r in recs:
        key = rec_key(r)
        if key not in idx or r.get("us") is not None:  # a measurement over a "not run" line
            idx[key] = r
    again = {}
    for r in rechecks:
        again.setdefault(rec_key(r), []).append(r)
    for key, rs in again.items():
        first = idx.get(key)
        if first is None or first.get("us") is None:
            continue
        runs = [first["us"]] + [r["us"] for r in rs]
        bad = [r.get("check") for r in rs if str(r.get("check", "ok")) not in ("ok", "unchecked")]
        idx[key] = dict(first, us=statistics.median(runs), us_runs=runs, check=bad[0] if bad else first.get("check"))
    copy_ref = None
    for r in recs:
        if r.get("case") == "copy_ref" and r.get("n") == 1 << 30 and r.get("GBps"):
            copy_ref = r.get("GBps")
    machine = ""
    mp = os.path.join(a.dir, "machine.txt")
    if os.path.exists(mp):
        machine = open(mp).read().strip()
    parts = []
    pp = os.path.join(a.dir, "parts.txt")
    if os.path.exists(pp):
        parts = [[c.strip() for c in line.split("|")] for line in open(pp) if line.count("|") == 2]

    gpuc_recs = [r for r in recs if r.get("src") == "gpuc"]
    all_n = sorted({int(r["n"]) for r in recs if r.get("case") not in ("copy_ref", "matmul", "matmul_seed",
                                                                          "matmul_cublas") + ROWS_2D
                    and int(r.get("n", 0)) > 0})
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
            # the seed kernel (f64, 1024) from the CUB harness; cuBLAS from the gpuc driver (or the CUB harness)
            row["peers"] = {"seed": peer_us("cub", "matmul_seed", dtype, n, n),
                            "cublas": peer_us("cublas", "matmul", dtype, n, n) or
                            peer_us("cub", "matmul_cublas", dtype, n, n)}
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
        have = {k: v for k, v in row["peers"].items() if v and k != "seed"}
        row["best_peer"] = min(have, key=have.get) if have else None
        row["vs_best"] = us / have[row["best_peer"]] if us and have else None
        row["target"], row["result"], row["targets"] = "-", "-", []
        if with_target:
            tl = targets(case, dtype, n, m)
        elif with_target is None and case in REDUCE + SCAN and n <= (1 << 20):
            tl = [("time", 1.2, "cub")]
        else:
            tl = []
        if tl:
            judged = [(target_text(*t),) + judge(*t, row) for t in tl]
            row["targets"] = [{"target": t, "met": ok, "detail": d} for t, ok, d in judged]
            row["target"] = "; ".join(t for t, _, _ in judged)
            if str(row["check"]).startswith(NOT_RUN):
                row["result"] = NOT_RUN
            elif us is not None and row["check"] not in ("ok", "unchecked"):
                row["result"] = "WRONG result"
            elif us is None:
                row["result"] = "n/a"
            elif any(ok is False for _, ok, _ in judged):
                row["result"] = "MISSED: " + "; ".join(d for _, ok, d in judged if ok is False)
            elif all(ok for _, ok, _ in judged):
                row["result"] = "met: " + "; ".join(d for _, _, d in judged)
            else:
                row["result"] = "n/a: " + "; ".join(d for _, ok, d in judged if ok is None)
            if len(tl) == 1 and judged[0][1] is not None:
                kind, val, peer = tl[0]
                row["target_value"] = (row["ratio"] if kind == "ratio" else
                                       us / row["peers"][peer] if kind == "time" else row["peers"][peer] / us)
            if with_target is None and row.get("target_value") is not None:
                more = later_ratios(case, dtype, n)
                row["passes"] = [row["target_value"]] + [v for _, v in more]
                worst_pass, worst = max([(1, row["target_value"])] + more, key=lambda pv: pv[1])
                if more and worst > 1.2 and row["result"].startswith("met"):
                    row["result"] = (f"MISSED: {worst:.3f}x CUB time in pass {worst_pass} of {len(row['passes'])} "
                                     f"({(worst - 1.2) / 1.2 * 100:.1f}% short)")
                    row["targets"] = [dict(t, met=False) for t in row["targets"]]
        return row

    for case, dtypes in CASES:
        for dt in dtypes:
            if case in ROWS_2D:
                ns = sorted({int(r["n"]) for r in recs if r.get("case") == case and int(r.get("n", 0)) > 0})
                for n in ns or [tn]:
                    for m in ROW_LENGTHS:
                        if m <= n:
                            rows.append(make_row(case, dt, n, m, True))
            elif case == "matmul":
                ns = sorted({int(r["n"]) for r in recs if r.get("src") == "gpuc" and r.get("case") == case and
                             r.get("dtype") == dt and int(r.get("n", 0)) > 0})
                for n in ns or ([1024] if dt == "f64" else []):
                    rows.append(make_row(case, dt, n, n, True))
            else:
                ns = sorted({int(r["n"]) for r in recs if r.get("case") == case and r.get("dtype") == dt
                             and int(r.get("n", 0)) > 0} | {n for n in all_n if n <= tn})
                for n in ns:
                    rows.append(make_row(case, dt, n, 0, True if n == tn else None))

    def line(r):
        p = r["peers"]
        if r["case"] == "matmul":
            peers = [fmt_us(p.get("seed")) + " (seed)", fmt_us(p.get("cublas")) + " (cuBLAS)", "-", "-"]
            rate = f"{r['gflops'] / 1e3:.1f} TFLOP/s" if r.get("gflops") else "-"
        else:
            peers = [fmt_us(p.get(s)) for s in PEERS]
            rate = ("%.3f" % r["ratio"]) if r["ratio"] else "-"
        best = (f"{PEER_NAME[r['best_peer']]} {r['vs_best']:.3f}" if r.get("vs_best") else
                PEER_NAME[r["best_peer"]] if r.get("best_peer") else "-")
        return (f"| {r['case']} | {r['dtype']} | {fmt_n(r['case'], r['n'], r['m'])} | {fmt_us(r['gpuc_us'])} | " +
                " | ".join(peers) + f" | {best} | {rate} | {r['target']} | {r['result']} | {r['check']} |")

    head = ("| case | dtype | n | gpuc us | CUB us | CuPy us | torch us | torch.compile us | best peer: gpuc / it | "
            "ratio to copy | target | met/MISSED (by how much) | check |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    main_rows = [r for r in rows if r["n"] >= tn or r["case"] in ROWS_2D or r["case"] == "matmul"]
    small_rows = [r for r in rows if r["case"] in REDUCE + SCAN and r["n"] <= (1 << 20)]

    out = []
    out.append(f"copy rate (cudaMemcpy D2D of 1 GiB, read + written): "
               f"{('%.1f GB/s' % copy_ref) if copy_ref else 'not measured'}")
    if machine:
        out.append("machine: " + machine.replace("\n", "; "))
    out.append("")
    out.append(f"Main table (target size n = 2^{tn.bit_length() - 1}, 2-D: total 2^{tn.bit_length() - 1}; "
               "matmul: n^3, TFLOP/s; times are medians in microseconds):")
    out.append(head)
    out += [line(r) for r in main_rows]
    out.append("")
    out.append("Small sizes: gpuc time / CUB time (target <= 1.2 in every pass), gpuc and CUB medians in us (calls "
               "under 100 us: per call of batches of back-to-back calls, bench/common.cuh; the medians of single "
               "calls are the records' us_call); after the slash, the ratios of the later passes (--small-passes):")
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
                passes = r.get("passes") or [v]
                allmet = allmet and max(passes) <= 1.2
                cells.append(f"{v:.2f} ({fmt_us(r['gpuc_us'])}/{fmt_us(r['peers'].get('cub'))})" +
                             ("".join(f" / {x:.2f}" for x in passes[1:])))
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
                # times from the same rounds: the rechecked medians when the
                # recheck ran the paths (the library's or the executable's
                # time rechecked), else the first pass's: the header driver
                # alone is rechecked for a near tie with CUB, and comparing it
                # with paths of other rounds compares two states of the machine
                paths_rechecked = any(v and v.get("us_runs") for k, v in got.items() if k != "header")
                us = {k: (v["us"] if paths_rechecked else v.get("us_runs", [v["us"]])[0])
                      for k, v in got.items() if v and v.get("us")}
                checks = ", ".join(f"{k} {v.get('check', '?')}" for k, v in got.items() if v)
                best = min(us.values()) if us else None
                slow = [k for k, v in us.items() if best and v > PATH_SLACK * best]
                ratio = max(us.values()) / best if best and len(us) > 1 else None
                missing = [name for _, name in PATHS if name not in us]
                flag = ("SLOW: " + ", ".join(f"{k} {us[k] / best:.3f}x" for k in slow)) if slow else \
                    ("ok" if len(us) > 1 else "one path")
                if missing and us:
                    flag += "; no " + ", ".join(missing)
                out.append(f"| {case} | {dt} | {fmt_n(case, n, m)} | " + " | ".join(fmt_us(us.get(k)) for _, k in PATHS) +
                           f" | {('%.3f' % ratio) if ratio else '-'} | {flag} | {checks} |")
                path_rows.append({"case": case, "dtype": dt, "n": n, "m": m, "us": us, "slowest_over_best": ratio,
                                  "slow": slow, "missing": missing})
    rechecked = sorted((k, v["us_runs"]) for k, v in idx.items() if v.get("us_runs"))
    if rechecked:
        out.append("")
        out.append("Rechecked (bench/run.sh's recheck part: the near ties with CUB and the paths near the slack run "
                   "again in turn, each time then the median of its processes' medians, as used above), us:")
        for (src, case, dt, n, m), runs in rechecked:
            out.append(f"  {src} {case} {dt} {fmt_n(case, n, m)}: " + " / ".join(fmt_us(u) for u in runs) +
                       f" -> {fmt_us(statistics.median(runs))}")
    if parts:
        out.append("")
        out.append("Parts of the run (bench/run.sh): " + "; ".join(f"{p[0]} {p[1]} s ({p[2]})" for p in parts) +
                   f"; total {sum(int(p[1]) for p in parts if p[1].isdigit())} s")
    # where the host seconds of the lib and exe cases go (their records' wall_s)
    for src, name in (("gpuc_lib", "lib"), ("gpuc_exe", "exe")):
        walls = [r["wall_s"] for r in recs if r.get("src") == src and isinstance(r.get("wall_s"), dict)]
        if walls:
            keys = list(walls[0])
            out.append(f"Seconds a case, {name} path ({len(walls)} cases), median / max: " + ", ".join(
                "%s %.1f / %.1f" % (k, statistics.median(w.get(k, 0) for w in walls), max(w.get(k, 0) for w in walls))
                for k in keys) + "; total %.0f s" % sum(sum(w.values()) for w in walls))
    text = "\n".join(out)

    if a.recheck_plan:
        for r in rows:
            tie = r["n"] == tn and r["case"] not in ROWS_2D and r["gpuc_us"] and r["peers"].get("cub")
            if tie and ("time", 1.0, "cub") in targets(r["case"], r["dtype"], int(r["n"]), r["m"]) and \
                    abs(r["gpuc_us"] / r["peers"]["cub"] - 1.0) <= RECHECK_NEAR:
                print(f"cub {r['case']} {r['dtype']}")
        for r in path_rows:
            if r["slowest_over_best"] and r["slowest_over_best"] > PATH_SLACK - RECHECK_NEAR / 2:
                print(f"paths {r['case']} {r['dtype']} {r['m']}")
        return 0
    good = ("ok", "unchecked", "not available")
    not_run = [r for r in recs if str(r.get("check", "")).startswith(NOT_RUN)]
    wrong = [r for r in recs + [x for x in everything if x.get("recheck")]
             if str(r.get("check", "ok")) not in good and not str(r.get("check")).startswith(NOT_RUN)]
    met = [r for r in rows if r["result"].startswith("met")]
    missed = [r for r in rows if r["result"].startswith("MISSED")]
    na = [r for r in rows if r["result"].startswith("n/a")]
    slow_paths = [r for r in path_rows if r["slow"]]
    summary = (f"\nsummary: {len(gpuc_recs)} gpuc results; targets met {len(met)}, missed {len(missed)}, "
               f"not available {len(na)}; wrong results: {len(wrong)}; not run (out of time): {len(not_run)}; "
               f"paths compared {len(path_rows)}, slower than {PATH_SLACK:.2f}x the best: {len(slow_paths)}")
    for r in missed:  # every one, the small sizes' passes too
        summary += f"\n  MISSED: {r['case']} {r['dtype']} {fmt_n(r['case'], r['n'], r['m'])}: {r['result'][8:]}"
    for r in wrong:
        summary += f"\n  WRONG: {r.get('src')} {r.get('case')} {r.get('dtype')} n={r.get('n')} m={r.get('m')}: {r.get('check')}"
    if not_run:
        summary += "\n  not run (out of time): " + ", ".join(sorted({f"{r.get('src')} {r.get('case')}" for r in not_run}))
    print(text + summary)

    if a.full:
        with open(a.full, "w") as f:
            f.write(head + "\n")
            for r in rows:
                f.write(line(r) + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": machine, "copy_GBps": copy_ref, "target_n": tn, "rows": rows, "paths": path_rows,
                       "parts": parts, "peer_records": [r for r in recs if r.get("src") != "gpuc"]}, f, indent=1)
    if wrong:
        return 1
    if not gpuc_recs:
        return 1 if os.environ.get("BENCH_REQUIRE_GPUC") else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
