#!/usr/bin/env python3
"""Run lit on one build's test directory and print "PASSED FAILED" counts on
the first line, then the name of each failed test on a line of its own.

lit's own output (failures in full) goes to stderr; the counts come from its
xUnit report so they do not depend on lit's summary wording."""
import os, subprocess, sys, tempfile
import xml.etree.ElementTree as ET

LIT = "/usr/lib/llvm-16/build/utils/lit/lit.py"

def main():
    test_dir, extra = sys.argv[1], sys.argv[2:]
    filters = [a for a in extra if not a.startswith("-")]
    flags = [a for a in extra if a.startswith("-")]
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "lit.xml")
        paths = [os.path.join(test_dir, os.path.relpath(os.path.abspath(f), os.path.join(os.path.dirname(__file__), "..", "tests")))
                 for f in filters] or [test_dir]
        cmd = [sys.executable, LIT, "-sv", "-j", str(os.cpu_count() or 2),
               "--xunit-xml-output", report] + flags + paths
        subprocess.run(cmd, stdout=sys.stderr, stderr=sys.stderr)
        passed = failed = 0
        failed_names = []
        if os.path.exists(report):
            for case in ET.parse(report).getroot().iter("testcase"):
                if case.find("failure") is not None or case.find("error") is not None:
                    failed += 1
                    failed_names.append(case.get("classname", "") + "/" + case.get("name", ""))
                elif case.find("skipped") is None:
                    passed += 1
        else:
            failed = 1  # lit itself broke: count it, never report a silent pass
            failed_names.append("lit itself (no xUnit report)")
    print(passed, failed)
    for name in failed_names:
        print(name)

if __name__ == "__main__":
    main()
