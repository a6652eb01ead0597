#!/usr/bin/env python3
"""check_bench_json.py FILE: checks the shape of `gpuc bench --json` output
(docs/bench.md) and prints one line per case for FileCheck:
ENTRY SIZES bytes=IN+OUT runs=N times=N error=...; exits 1 on a bad shape."""
import json
import statistics
import sys

d = json.load(open(sys.argv[1]))
top = {"gpuc_version": str, "backend": str, "label": (str, type(None)), "host": str, "date": str,
       "command_defines": list, "cases": list}
for k, t in top.items():
    assert isinstance(d.get(k), t), "top-level %s: %r" % (k, d.get(k))
assert set(d) == set(top), sorted(d)
assert all(isinstance(x, str) for x in d["command_defines"])
print("backend=%s label=%s command_defines=%s" % (d["backend"], d["label"], ",".join(d["command_defines"])))
keys = {"file": str, "line": int, "entry": str, "description": (str, type(None)), "defines": dict, "sizes": dict,
        "runs": int, "times_us": list, "input_bytes": int, "output_bytes": int, "bytes": int,
        "median_us": (float, int, type(None)), "min_us": (float, int, type(None)), "gbps": (float, type(None)),
        "error": (str, type(None))}
for c in d["cases"]:
    assert set(c) == set(keys), sorted(c)
    for k, t in keys.items():
        assert isinstance(c[k], t), "%s: %r" % (k, c[k])
    assert c["bytes"] == c["input_bytes"] + c["output_bytes"]
    if c["error"] is None:
        assert len(c["times_us"]) == c["runs"]
        assert abs(statistics.median(c["times_us"]) - c["median_us"]) < 0.06
        assert c["min_us"] == min(c["times_us"])
        if c["median_us"] > 0:
            assert abs(c["gbps"] - c["bytes"] / (c["median_us"] * 1e3)) < 1e-3 * c["gbps"] + 1e-4
        else:
            assert c["gbps"] is None
    sizes = ",".join("%s=%d" % kv for kv in c["sizes"].items())
    defines = ",".join("%s=%s" % kv for kv in c["defines"].items())
    print("%s%s%s  bytes=%d+%d runs=%d times=%d error=%s" % (c["entry"], " " + sizes if sizes else "", " " + defines if defines else "",
          c["input_bytes"], c["output_bytes"], c["runs"], len(c["times_us"]), c["error"]))
print("json ok: %d cases" % len(d["cases"]))
