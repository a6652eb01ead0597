"""scan_table.py RECORDS: call 5's table: per case and size, gpuc's medians
(the header drivers, one per process) against CUB's, and the library's and
the executable's at 2^28, with the share of the copy rate and the checks."""
import json, sys, statistics, collections
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
copy = [2 * r["n"] * 4 / r["us"] / 1e3 for r in recs if r.get("case") == "copy" and r.get("us")]
copy = copy[0] if copy else None
by = collections.defaultdict(lambda: collections.defaultdict(list))
bad = 0
for r in recs:
    if r.get("case", "").startswith("copy") or not r.get("us"): continue
    if r.get("check") not in (None, "ok", "unchecked"):  # CUB's records are unchecked by design
        bad += 1; print("CHECK:", r)
    by[(r["case"], r.get("dtype"), r["n"])][r["src"]].append(r["us"])
print("copy rate %s GB/s; %d failed checks" % ("%.1f" % copy if copy else "?", bad))
print("| case | n | gpuc us (processes) | CUB us | gpuc / CUB (worst pass) | lib | exe | of copy rate |")
print("|---|---|---|---|---|---|---|---|")
for (case, dt, n) in sorted(by):
    d = by[(case, dt, n)]
    g, cub = d.get("gpuc", []), d.get("cub", [])
    worst = max(a / b for a, b in zip(g, cub)) if g and cub else None
    eb = 12 if case == "recurrence" else 16
    share = eb * n / min(g) / 1e3 / copy if g and copy else None
    f = lambda xs: " / ".join("%.1f" % x for x in xs) if xs else "-"
    print("| %s %s | %d | %s | %s | %s | %s | %s | %s |" % (case, dt, n, f(g), f(cub), "%.3f" % worst if worst else "-",
          f(d.get("gpuc_lib", [])), f(d.get("gpuc_exe", [])), "%.3f" % share if share else "-"))
print("sources:", sorted({s for d in by.values() for s in d}))
