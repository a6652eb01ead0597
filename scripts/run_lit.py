#!/usr/bin/env python3
"""Run lit on one build's test directory. Prints "PASSED FAILED" counts on the
first line, then "FAILED name" for each failed test and "FLAKY name" for each
test that failed and then passed when lit ran it again (--param retries=1:
counted as passed, but named, so that an intermittent failure is seen and
looked into, never silently lost).

lit's own output (failures in full) goes to stderr, and after it the eight
slowest tests; the counts come from its JSON report so they do not depend on
lit's summary wording."""
import json, os, subprocess, sys, tempfile

LIT = "/usr/lib/llvm-16/build/utils/lit/lit.py"
FAILURES = {"FAIL", "XPASS", "UNRESOLVED", "TIMEOUT"}
NOT_RUN = {"UNSUPPORTED", "SKIPPED", "EXCLUDED"}

def main():
    test_dir, extra = sys.argv[1], sys.argv[2:]
    filters = [a for a in extra if not a.startswith("-")]
    flags = [a for a in extra if a.startswith("-")]
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "lit.json")
        paths = [os.path.join(test_dir, os.path.relpath(os.path.abspath(f), os.path.join(os.path.dirname(__file__), "..", "tests")))
                 for f in filters] or [test_dir]
        cmd = [sys.executable, LIT, "-sv", "-j", str(os.cpu_count() or 2), "--param", "retries=1",
               "--show-flakypass", "-o", report] + flags + paths
        subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr)
        passed = failed = 0
        lines = []
        try:
            with open(report) as f:
                tests = json.load(f)["tests"]
        except (OSError, ValueError, KeyError):
            tests = None
        if tests is None:
            failed = 1  # lit itself broke: count it, never report a silent pass
            lines.append("FAILED lit itself (no JSON report)")
        else:
            for t in tests:
                if t["code"] in FAILURES:
                    failed += 1
                    lines.append("FAILED " + t["name"])
                elif t["code"] not in NOT_RUN:
                    passed += 1
                    if t["code"] == "FLAKYPASS":
                        lines.append("FLAKY " + t["name"])
    print(passed, failed)
    for line in lines:
        print(line)
    # where the time goes (CI has a 20-minute limit): the slowest tests, on stderr
    if tests:
        slow = sorted((t for t in tests if t.get("elapsed")), key=lambda t: -t["elapsed"])[:8]
        sys.stderr.write("slowest: " + ", ".join("%s %.0f s" % (t["name"].split(" :: ")[-1], t["elapsed"]) for t in slow) + "\n")

if __name__ == "__main__":
    main()
