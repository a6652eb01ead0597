#!/usr/bin/env python3
"""run.py: differential testing of gpuc on generated programs.

    difftest/run.py --seconds T [--programs N] [--seed S] --backend=c|cuda [--jobs J]

Generates files of many entries (difftest/gen.py, file k from seed S*100003+k),
and for each file:
  1. compiles it (optimized, -O0, and to CUDA C): a program gpuc rejects is a
     generator failure (its entries are dropped and counted), a signal or
     an internal error is a gpuc crash;
  2. runs `gpuc test --reference-O0` on it: every `expect reference` block
     compares the build under test (optimized; C backend with --backend=c,
     the GPU with --backend=cuda) against a -O0 build on the C backend;
  3. saves each mismatching entry under OUT/mismatch-SEED-ENTRY/ (the
     program with the failing block, gpuc test's report) and reduces it
     (difftest/reduce.py) into reduced.gdsl there.
Prints one line per problem and per finished file and, last,
    N programs, M mismatches, G generator failures, C crashes
(a program is one entry); exit status 0 only when M, G and C are all 0.
Standard library only (docs/reliability.md).
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402
import reduce as reducer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAIL_RE = re.compile(r"^(.*?):(\d+): test (\w+)(?:: [^:]*)?: FAIL: (.*)$")


def split_entries(text):
    """The header and the entries' chunks ({name: text}) of a generated file."""
    parts = re.split(r"(?m)^(?=// ---- entry )", text)
    head = parts[0]
    entries = {}
    for p in parts[1:]:
        name = p.split("\n", 1)[0].split()[-1]
        entries[name] = p
    return head, entries


def join_entries(head, entries):
    return head + "".join(entries.values())


class Runner:
    def __init__(self, a):
        self.a = a
        self.gpuc = a.gpuc
        self.out = a.out
        self.programs = self.mismatches = self.rejected = self.crashes = self.files_done = 0
        self.deadline = time.time() + a.seconds
        os.makedirs(os.path.join(self.out, "work"), exist_ok=True)

    def log(self, msg):
        print(msg, flush=True)

    def compile_check(self, path, text):
        """Drop the entries gpuc rejects; returns (text, rejected names, crash messages)."""
        rejected, crashes = [], []
        for _ in range(4):
            bad = set()
            for opts in (["--emit=program"], ["-O0", "--emit=program"], ["--emit=cuda"]):
                p = subprocess.run([self.gpuc] + opts + [path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True, errors="replace")
                if p.returncode == 0:
                    continue
                if p.returncode < 0 or p.returncode >= 70 or "internal error" in p.stderr:
                    crashes.append("gpuc %s %s: exit status %d: %s" % (" ".join(opts), path, p.returncode,
                                                                        p.stderr.strip()[:2000]))
                    return None, rejected, crashes
                lines = [int(m.group(1)) for m in re.finditer(r"^[^:\n]*:(\d+):\d+: error", p.stderr, re.M)]
                head, entries = split_entries(text)
                starts = []
                off = head.count("\n") + 1
                for name, chunk in entries.items():
                    starts.append((off, name))
                    off += chunk.count("\n")
                for ln in lines:
                    owner = [n for s, n in starts if s <= ln]
                    if owner:
                        bad.add(owner[-1])
                if not bad:  # an error in the header: the whole file is a generator bug
                    rejected.append(("*", p.stderr.strip()[:2000]))
                    return None, rejected, crashes
                for b in bad:
                    rejected.append((b, p.stderr.strip()[:2000]))
                    del entries[b]
                text = join_entries(head, entries)
                with open(path, "w") as f:
                    f.write(text)
                break
            if not bad:
                return text, rejected, crashes
        return None, rejected, crashes

    def test_cmd(self, path, extra=()):
        cmd = [self.gpuc, "test", "--backend=" + self.a.backend, "--reference-O0", "--timeout=300"]
        cmd += ["--arch=" + (self.a.arch or ("none" if self.a.backend == "c" else "sm_90"))]
        return cmd + list(extra) + [path]

    def one_file(self, k):
        seed = self.a.seed * 100003 + k
        text = gen.generate(seed, self.a.entries, self.a.big)
        path = os.path.join(self.out, "work", "f%d.gdsl" % seed)
        with open(path, "w") as f:
            f.write(text)
        nentries = len(split_entries(text)[1])
        text, rejected, crashes = self.compile_check(path, text)
        res = dict(seed=seed, programs=nentries, rejected=rejected, crashes=crashes, mismatches=[])
        if text is None:
            return res
        p = subprocess.run(self.test_cmd(path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace")
        fails = {}
        for line in p.stdout.splitlines():
            m = FAIL_RE.match(line)
            if m:
                # an export instance's blocks count for its entry
                fails.setdefault(re.sub(r"_x\d+$", "", m.group(3)), []).append(
                    (int(m.group(2)), m.group(4), line, m.group(3)))
        if p.returncode not in (0, 1) or (p.returncode == 1 and not fails):
            res["crashes"].append("gpuc test %s: exit status %d: %s" % (path, p.returncode, p.stdout[-2000:]))
        head, entries = split_entries(text)
        for name, fl in fails.items():
            kind = self.classify(path, name, fl)
            if kind == "rejected":
                res["rejected"].append((name, fl[0][2]))
            elif kind == "crash":
                res["crashes"].append(fl[0][2])
            else:
                res["mismatches"].append((fl[0][3], fl, self.save(seed, head, entries[name], name, fl)))
        return res

    def classify(self, path, name, fl):
        """A FAIL line: a mismatch, a crash, or a program that is wrong at -O0 too (generator)."""
        msg = fl[0][1]
        st = re.search(r"exit status (\d+)", msg)
        if st and int(st.group(1)) >= 128 and "(--timeout)" not in msg:
            return "crash"
        if msg.startswith("building the program failed") or msg.startswith("building the -O0 reference failed"):
            return "rejected"
        if msg.startswith("the program failed") or msg.startswith("the reference C backend failed"):
            p = subprocess.run([self.gpuc, "test", "-O0", "--backend=c", "--arch=none", "-k", fl[0][3], path],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
            if p.returncode != 0:
                return "rejected"  # wrong at -O0 on the C backend as well: the program is at fault
        return "mismatch"

    def save(self, seed, head, chunk, name, fl):
        d = os.path.join(self.out, "mismatch-%d-%s" % (seed, name))
        os.makedirs(d, exist_ok=True)
        block_line = fl[0][0]
        with open(os.path.join(d, "program.gdsl"), "w") as f:
            f.write(head + chunk)
        with open(os.path.join(d, "report.txt"), "w") as f:
            f.write("seed %d, entry %s, backend %s\n" % (seed, name, self.a.backend))
            f.write("command: %s\n" % " ".join(self.test_cmd("program.gdsl")))
            f.write("first failing block at line %d of the generated file\n" % block_line)
            f.write("\n".join(x[2] for x in fl) + "\n")
        return d

    def reduce_one(self, d, name):
        t0 = time.time()
        src = open(os.path.join(d, "program.gdsl")).read()
        cmd = self.test_cmd("{}")
        reduced, report = reducer.reduce_program(src, name, cmd, os.path.join(d, "work"),
                                                 seconds=self.a.reduce_seconds)
        with open(os.path.join(d, "reduced.gdsl"), "w") as f:
            f.write(reduced)
        with open(os.path.join(d, "reduced.txt"), "w") as f:
            f.write(report)
        where = "GPU only" if self.a.backend == "cuda" and reducer.passes_on_c(reduced, self.gpuc, d) else ""
        self.log("  reduced in %.0f s to %s (%d lines)%s" % (time.time() - t0, os.path.join(d, "reduced.gdsl"),
                                                            reduced.count("\n"), ", " + where if where else ""))

    def run(self):
        a = self.a
        k = 0
        pending = {}
        found = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
            while True:
                while len(pending) < a.jobs and time.time() < self.deadline and \
                        (a.programs is None or self.programs + len(pending) * a.entries < a.programs):
                    pending[pool.submit(self.one_file, k)] = k
                    k += 1
                if not pending:
                    break
                done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for fut in done:
                    del pending[fut]
                    res = fut.result()
                    self.programs += res["programs"]
                    self.files_done += 1
                    # progress, so that a run stopped from outside still says how far it got
                    self.log("done: seed %d (%d files, %d programs so far)" % (res["seed"], self.files_done,
                                                                              self.programs))
                    for name, msg in res["rejected"]:
                        self.rejected += 1
                        self.log("GENERATOR: seed %d entry %s rejected: %s" % (res["seed"], name,
                                                                              msg.splitlines()[0] if msg else ""))
                    for msg in res["crashes"]:
                        self.crashes += 1
                        self.log("CRASH: seed %d: %s" % (res["seed"], msg.splitlines()[0]))
                    for name, fl, d in res["mismatches"]:
                        self.mismatches += 1
                        self.log("MISMATCH: seed %d entry %s: %s\n  saved in %s" % (res["seed"], name, fl[0][2], d))
                        found.append((d, name))
        if a.reduce_seconds > 0:
            for d, name in found:
                self.reduce_one(d, name)
        self.log("%d programs, %d mismatches, %d generator failures, %d crashes (%d files, seed %d, backend %s, "
                 "output in %s)" % (self.programs, self.mismatches, self.rejected, self.crashes, k, a.seed,
                                    a.backend, self.out))
        print("%d programs, %d mismatches" % (self.programs, self.mismatches))
        return 0 if not (self.mismatches or self.rejected or self.crashes) else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60, help="stop starting files after this time")
    ap.add_argument("--programs", type=int, default=None, help="stop after about N programs (entries)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--backend", choices=["c", "cuda"], default="c")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--entries", type=int, default=25, help="entries per generated file")
    ap.add_argument("--gpuc", default=os.environ.get("GPUC", os.path.join(ROOT, "build", "driver", "gpuc")))
    ap.add_argument("--arch", default=None, help="--arch of the builds under test (default: none for c, "
                    "sm_90 for cuda)")
    ap.add_argument("--out", default="difftest-out", help="folder for the files, mismatches and reductions")
    ap.add_argument("--reduce-seconds", type=float, default=120, help="time to reduce each mismatch (0: none)")
    ap.add_argument("--big", action="store_true", help="occasionally inputs of 2^20+3 elements")
    a = ap.parse_args()
    if not os.access(a.gpuc, os.X_OK):
        print("run.py: error: no gpuc at '%s' (build it, or give --gpuc)" % a.gpuc, file=sys.stderr)
        return 2
    a.gpuc = os.path.abspath(a.gpuc)
    a.out = os.path.abspath(a.out)
    print("difftest: backend %s, seed %d, output in %s" % (a.backend, a.seed, a.out), flush=True)
    return Runner(a).run()


if __name__ == "__main__":
    sys.exit(main())
