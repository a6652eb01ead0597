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
With --shard, step 2 is instead: every entry that gpuc can shard
(`--emit=c-shard`; exports dropped, the template defaults kept) runs sharded
against itself unsharded, at sizes 0 to 1000 split four ways
(tests/shard/Inputs/shard_check.c): on the C backend over 1, 2, 3 and 8
ranks as threads; with --backend=cuda (`--emit=cuda-shard`, nvcc with
tests/gpu/shard_gpu_check.cu) over one rank of NCCL on the GPU. A differing
entry is saved as above, without a reduction.
With --ranks N, step 2 is instead: the file's executable runs
each entry at the sizes of its blocks with --random inputs, once plainly and
once with --ranks N (runner/rn_ranks.c: the inputs split by rows over N
threads, the sharded entry, the results gathered; with --backend=cuda one
thread a GPU over NCCL, so N at most the GPUs), and the .npy results
must agree (integers exactly, floats as --shard's tolerances; both runs
may fail only for an index out of bounds); entries the runner cannot shard
are skipped.
With --python, step 2 is instead difftest/python_side.py under --python-exe
(an interpreter with the gpuc package and NumPy): every entry and export
instance called from Python on NumPy inputs against the file's executable on
the same inputs as .npy components (--backend=c: the package's C backend,
results within 1e-12; cuda: the package on the GPU, within the tolerances
above).
Prints one line per problem and per finished file and, last,
    N programs, M mismatches, G generator failures, C crashes
(a program is one entry); exit status 0 only when M, G and C are all 0.
Standard library only, but for --ranks (NumPy) (docs/reliability.md).
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402
import reduce as reducer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARD_CHECK = os.path.join(ROOT, "tests", "shard", "Inputs", "shard_check.c")
SHARD_GPU_CHECK = os.path.join(ROOT, "tests", "gpu", "shard_gpu_check.cu")


def tolerance(text):
    """Relative and absolute float tolerance of --shard and --ranks: f32's for
    any program text computing in f32 (its f64 results too: an f32 sum grouped
    by ranks rounds differently), else f64's."""
    return 2e-3 if "f32" in text else 1e-9
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

    def build_exe(self, path, res, arch="none"):
        """The file's executable (kernels for arch: none, the C backend only), or
        None with the failure counted as a crash."""
        exe = path[:-len(".gdsl")]
        p = subprocess.run([self.gpuc, path, "--arch=" + arch, "-o", exe], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace")
        if p.returncode != 0:
            res["crashes"].append("gpuc %s -o %s: exit status %d: %s" % (path, exe, p.returncode, p.stdout[-2000:]))
            return None
        return exe

    def mismatch(self, res, name, program, line, report):
        """A difference found by --shard, --ranks or --python: saved as OUT/mismatch-SEED-ENTRY/."""
        d = os.path.join(self.out, "mismatch-%d-%s" % (res["seed"], name))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "program.gdsl"), "w") as f:
            f.write(program)
        with open(os.path.join(d, "report.txt"), "w") as f:
            f.write("seed %d, entry %s: %s\n" % (res["seed"], name, report))
        res["mismatches"].append((name, [(0, line, line, name)], d))

    def shard_file(self, path, text, res):
        """--shard: the entries ir_shard accepts, sharded against unsharded by
        shard_check.c, built in one program per tolerance."""
        head, entries = split_entries(text)
        groups = {}  # tolerance -> {name: chunk}: built and checked apart
        one = path[:-len(".gdsl")] + "-one.gdsl"
        cuda = self.a.backend == "cuda"
        emit = "--emit=cuda-shard" if cuda else "--emit=c-shard"
        for name, chunk in entries.items():
            chunk = re.sub(r"(?m)^export .*\n", "", chunk)  # the default instance alone
            with open(one, "w") as f:
                f.write(head + chunk)
            p = subprocess.run([self.gpuc, emit, one, "-o", one[:-len(".gdsl")] + ".c"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")
            if p.returncode == 0:
                groups.setdefault(tolerance(chunk), {})[name] = chunk
            elif p.returncode < 0 or p.returncode >= 70 or "internal error" in p.stderr:
                res["crashes"].append("gpuc %s %s: exit status %d: %s" % (emit, one, p.returncode,
                                                                                     p.stderr.strip()[:2000]))
            elif "cannot shard" not in p.stderr:
                res["rejected"].append((name, p.stderr.strip()[:2000]))
        res["programs"] = sum(len(g) for g in groups.values())
        for tol, chosen in groups.items():
            base = path[:-len(".gdsl")] + "-shard-%g" % tol
            with open(base + ".gdsl", "w") as f:
                f.write(join_entries(head, chosen))
            src = base + (".cu" if cuda else ".c")
            flags = ["-I" + os.path.join(ROOT, "runtime"), "-I" + os.path.dirname(SHARD_CHECK),
                     '-DGPUC_SHARD_FILE="%s"' % src, "-DGPUC_SHARD_TOL_F32=%g" % tol, "-DGPUC_SHARD_TOL_F64=%g" % tol]
            if cuda:  # one rank of NCCL on the GPU: tests/gpu/shard_gpu.sh's build
                build = [os.environ.get("NVCC", "nvcc"), "-std=c++17", "-O1", "-arch=" + (self.a.arch or "sm_90")] + \
                    flags + [SHARD_GPU_CHECK, self.runtime_lib(), "-ldl", "-lpthread", "-o", base]
            else:  # 1, 2, 3 and 8 ranks as threads
                build = [os.environ.get("CC", "cc"), "-std=c11", "-D_DEFAULT_SOURCE", "-O1"] + flags + \
                    [SHARD_CHECK, os.path.join(ROOT, "runtime", "gpuc_comm_threads.c"), "-o", base, "-lpthread", "-lm"]
            steps = [[self.gpuc, emit, base + ".gdsl", "-o", src], build]
            for cmd in steps:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
                if p.returncode != 0:
                    res["crashes"].append("%s: exit status %d: %s" % (" ".join(cmd[:2]), p.returncode, p.stdout[-2000:]))
                    break
            else:
                try:
                    p = subprocess.run([base], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                       errors="replace", timeout=600)
                except subprocess.TimeoutExpired:
                    res["crashes"].append("%s: no end in 600 s" % base)
                    continue
                failed = re.findall(r"(?m)^(\w+) \[[^]]*\]: \d+ cases, FAILED$", p.stdout)
                if p.returncode not in (0, 1) or (p.returncode == 1 and not failed):
                    res["crashes"].append("%s: exit status %d: %s" % (base, p.returncode, p.stdout[-2000:]))
                for name in failed:
                    lines = [l for l in p.stdout.splitlines() if l.startswith("MISMATCH %s:" % name)]
                    self.mismatch(res, name, head + chosen[name], lines[0] if lines else "%s: FAILED" % name,
                                  "sharded against unsharded (%s)\ncommands:\n  %s\n  %s\n  %s\n%s" % (
                                      "GPU, one NCCL rank" if cuda else "C backend, threads", " ".join(steps[0]),
                                      " ".join(steps[1]), base, "\n".join(lines) if lines else
                                      "(no detail: shard_check prints the first 8 differences of a build; run the "
                                      "commands on a file of this entry alone)"))

    def ranks_file(self, path, text, res):
        """--ranks N: each entry's executable run plain and with --ranks N on the
        same --random inputs, the .npy results compared."""
        import numpy as np  # here only: the other modes need the standard library alone
        head, entries = split_entries(text)
        cuda = self.a.backend == "cuda"
        exe = self.build_exe(path, res, (self.a.arch or "sm_90") if cuda else "none")
        if not exe:
            return
        res["programs"] = 0
        for name, chunk in entries.items():
            tol = tolerance(chunk)
            blocks = re.findall(r"(?m)^//! test %s: (.*)$" % name, chunk)[:3]
            sharded, problems = True, []
            for k, sizes in enumerate(blocks):
                runs = []
                for extra in ([], ["--ranks", str(self.a.ranks)]):
                    d = "%s-%s-%d%s" % (exe, name, k, "r" if extra else "")
                    shutil.rmtree(d, ignore_errors=True)
                    os.makedirs(d)
                    cmd = [exe, "-e", name, "--backend=" + self.a.backend, "--random", sizes.replace(" ", ","),
                           "--seed", str(k + 1),
                           "--out", d + "/"] + extra
                    try:
                        q = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                           errors="replace", timeout=300)
                    except subprocess.TimeoutExpired:
                        problems.append("%s: no end in 300 s" % " ".join(cmd))
                        break
                    if q.returncode < 0 or q.returncode >= 70:
                        res["crashes"].append("%s: exit status %d: %s" % (" ".join(cmd), q.returncode, q.stderr[-2000:]))
                    runs.append((cmd, q, d))
                if len(runs) < 2:
                    continue
                (cmd0, q0, d0), (cmd1, q1, d1) = runs
                if q1.returncode != 0 and "cannot run sharded" in q1.stderr:
                    sharded = False
                    break
                # both may fail only for an index out of bounds (a gather by a drawn index); any other
                # failure of the plain run (no GPU, say) is a problem, not an agreement
                if (q0.returncode == 0) != (q1.returncode == 0) or \
                        (q0.returncode != 0 and "out of bounds" not in q0.stderr):
                    problems.append("%s: exit status %d (%s), with --ranks %d: %d (%s)" % (
                        sizes, q0.returncode, q0.stderr.strip()[-300:], self.a.ranks, q1.returncode,
                        q1.stderr.strip()[-300:]))
                    continue
                for f in sorted(os.listdir(d0)) if q0.returncode == 0 else []:
                    a, b = np.load(os.path.join(d0, f)), np.load(os.path.join(d1, f))
                    if a.shape != b.shape:
                        problems.append("%s: %s has shape %s, with --ranks: %s" % (sizes, f, a.shape, b.shape))
                    elif a.dtype.kind == "f":
                        with np.errstate(invalid="ignore"):  # inf - inf: equal infinities pass as a == b
                            bad = ~((np.isnan(a) & np.isnan(b)) | (a == b) |
                                    (np.abs(a.astype(np.float64) - b) <= tol + tol * np.abs(a.astype(np.float64))))
                        if bad.any():
                            i = int(np.argmax(bad.ravel()))
                            problems.append("%s: %s[%d]: %r, with --ranks: %r" % (sizes, f, i, a.ravel()[i], b.ravel()[i]))
                    elif not np.array_equal(a, b):
                        i = int(np.argmax((a != b).ravel()))
                        problems.append("%s: %s[%d]: %r, with --ranks: %r" % (sizes, f, i, a.ravel()[i], b.ravel()[i]))
            if not sharded or not blocks:
                continue
            res["programs"] += 1
            if problems:
                self.mismatch(res, name, head + chunk, problems[0],
                              "plain against --ranks %d (%s backend)\ncommands: %s -e %s --backend=%s --random SIZES "
                              "--seed K --out DIR/ [--ranks %d]\n%s" % (self.a.ranks, self.a.backend, exe, name,
                                                                         self.a.backend, self.a.ranks,
                                                                         "\n".join(problems)))

    def python_file(self, path, text, res):
        """--python: difftest/python_side.py on the file and its executable."""
        exe = self.build_exe(path, res)
        if not exe:
            return
        d = exe + "-py"
        os.makedirs(d, exist_ok=True)
        env = dict(os.environ, GPUC=self.gpuc)
        cmd = [self.a.python_exe, os.path.join(ROOT, "difftest", "python_side.py"), path, exe, d, self.a.backend]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                               env=env, timeout=900)
        except subprocess.TimeoutExpired:
            res["crashes"].append("%s: no end in 900 s" % " ".join(cmd))
            return
        summary = re.search(r"(?m)^python_side: (\d+) entries, (\d+) differ$", p.stdout)
        if p.returncode not in (0, 1) or not summary:
            res["crashes"].append("%s: exit status %d: %s" % (" ".join(cmd), p.returncode, p.stdout[-2000:]))
            return
        res["programs"] = int(summary.group(1))
        head, entries = split_entries(text)
        for name, why in re.findall(r"(?m)^DIFF (\w+): (.*)$", p.stdout):
            base = re.sub(r"_x\d+$", "", name)
            self.mismatch(res, name, head + entries.get(base, ""), why,
                          "Python (%s backend) against the executable\ncommand: %s\n%s" % (
                              self.a.backend, " ".join(cmd), why))

    def runtime_lib(self):
        """libgpuc_runtime.a beside gpuc: an install prefix (bin/, lib/) or a build (driver/, runtime/)."""
        top = os.path.dirname(os.path.dirname(self.gpuc))
        for sub in ("lib", "lib64", "runtime"):
            p = os.path.join(top, sub, "libgpuc_runtime.a")
            if os.path.exists(p):
                return p
        return os.path.join(top, "runtime", "libgpuc_runtime.a")

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
        if self.a.shard:
            self.shard_file(path, text, res)
            return res
        if self.a.ranks:
            self.ranks_file(path, text, res)
            return res
        if self.a.python:
            self.python_file(path, text, res)
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
        if a.reduce_seconds > 0 and not (a.shard or a.ranks or a.python):
            for d, name in found:
                self.reduce_one(d, name)
        self.log("%d programs, %d mismatches, %d generator failures, %d crashes (%d files, seed %d, backend %s%s, "
                 "output in %s)" % (self.programs, self.mismatches, self.rejected, self.crashes, k, a.seed,
                                    a.backend, ", sharded" if a.shard else ", --ranks %d" % a.ranks if a.ranks else
                                    ", from Python" if a.python else "",
                                    self.out))
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
    ap.add_argument("--shard", action="store_true", help="compare the entries gpuc can shard, sharded (C: "
                    "1, 2, 3 and 8 ranks as threads; cuda: one NCCL rank) against themselves unsharded")
    ap.add_argument("--ranks", type=int, default=0, help="compare each entry's executable run plainly and with "
                    "--ranks N (C: N threads; cuda: N GPUs over NCCL) on the same --random inputs")
    ap.add_argument("--python", action="store_true", help="call every entry from Python (the gpuc package) "
                    "and compare with the executable on the same inputs")
    venv_python = os.path.join(ROOT, "build", "python-venv", "bin", "python")
    ap.add_argument("--python-exe", default=venv_python if os.access(venv_python, os.X_OK) else sys.executable,
                    help="the interpreter with the gpuc package for --python (default: build/python-venv's, "
                    "which scripts/test makes, else this one)")
    a = ap.parse_args()
    if sum(map(bool, (a.shard, a.ranks, a.python))) > 1:
        print("run.py: error: --shard, --ranks and --python are separate modes: give one", file=sys.stderr)
        return 2
    if a.ranks < 0:
        print("run.py: error: --ranks N needs N >= 1", file=sys.stderr)
        return 2
    if not os.access(a.gpuc, os.X_OK):
        print("run.py: error: no gpuc at '%s' (build it, or give --gpuc)" % a.gpuc, file=sys.stderr)
        return 2
    a.gpuc = os.path.abspath(a.gpuc)
    a.out = os.path.abspath(a.out)
    print("difftest: backend %s, seed %d, output in %s" % (a.backend, a.seed, a.out), flush=True)
    return Runner(a).run()


if __name__ == "__main__":
    sys.exit(main())
