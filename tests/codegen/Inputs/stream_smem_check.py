#!/usr/bin/env python3
"""stream_smem_check.py FILE.cu PTXAS_LOG: the shared memory of each
streaming kernel (NAME_stream: SCAN BULK 3 and 3 WIDE) against what its
launcher asks for. From FILE.cu (gpuc --emit=cuda) each launcher's bound
(`gpuc_h_shared_max(gpuc_h) >= NEED`) and ring (`g_shared = RING`); from
PTXAS_LOG (nvcc -Xptxas -v on FILE.cu) the kernel's static shared memory.
A kernel passes when RING + static <= NEED <= 232448 (the shared memory an
sm_90 block may opt into): a launcher asking too little would let a launch
fail on the GPU where it claims the kernel fits. One line a kernel; exit 1
on a failure or when no kernel was found."""
import re
import sys

BLOCK_MAX = 232448
src = open(sys.argv[1]).read()
log = open(sys.argv[2]).read()
static = {}  # kernel: static shared bytes (ptxas prints no smem when there is none)
current = None
for line in log.splitlines():
    m = re.search(r"Compiling entry function '(\w+)' for 'sm_90'", line)
    if m:
        current = m.group(1)
    elif current and "Used" in line and "registers" in line:
        m = re.search(r"(\d+) bytes smem", line)
        static[current] = int(m.group(1)) if m else 0
        current = None
launch = re.compile(r"if \(gpuc_h_shared_max\(gpuc_h\) >= (\d+) [^\n]*\n(?:[^\n]*\n){0,2}?\s*GPUC_TRY\(gpuc_h_resident\(gpuc_h, GPUC_KERNEL\((\w+_stream)\)(?:[^\n]*\n){1,8}?\s*g_shared = (\d+)u;")
seen, bad = 0, 0
# each launcher once (the file has one a host interface)
for need, name, ring in sorted({(int(m.group(1)), m.group(2), int(m.group(3))) for m in launch.finditer(src)}, key=lambda t: t[1]):
    if name not in static:
        print("%s: no ptxas line" % name)
        bad += 1
        continue
    ok = ring + static[name] <= need <= BLOCK_MAX
    print("%s %s: ring %d + static %d <= need %d <= %d" % ("ok" if ok else "FAIL", name, ring, static[name], need, BLOCK_MAX))
    seen += 1
    bad += not ok
if not seen:
    print("no streaming kernel's launcher found")
sys.exit(1 if bad or not seen else 0)
