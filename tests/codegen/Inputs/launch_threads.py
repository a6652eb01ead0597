"""launch_threads.py CU...: every launch in generated CUDA files whose block
size is a literal gives no more threads than the kernel's
__launch_bounds__, and the warp-specialized kernels (SCAN BULK 3's
NAME_stream, the long-row NAME_st), whose warps' roles follow from their
count, exactly that many: with fewer, the last roles (the producer warp)
never run and the kernel waits forever. (Found in session 13: the scans'
stream launcher launched 640 threads while a gpuc built with
-DSS_LOOKBACK_WARPS=4 generated a 704-thread kernel; it hung on the GPU.)
Prints "launch_threads: N launches of M kernels checked" or each mismatch,
and exits 1 on a mismatch."""
import re, sys

bad = launches = 0
kernels = set()
for path in sys.argv[1:]:
    src = open(path).read()
    bounds = {m.group(2): int(m.group(1))
              for m in re.finditer(r'__launch_bounds__\((\d+)[^)]*\)\s*\n\s*([A-Za-z_]\w*)\(', src)}
    for m in re.finditer(r'gpuc_h_launch\(gpuc_h, GPUC_KERNEL\((\w+)\), [^,]+, [^,]+, (\d+)u?, ', src):
        name, threads = m.group(1), int(m.group(2))
        if name not in bounds:
            continue
        launches += 1
        kernels.add(name)
        want = bounds[name]
        special = name.endswith('_stream') or name.endswith('_st')
        if threads > want or (special and threads != want):
            bad += 1
            line = src.count('\n', 0, m.start()) + 1
            print('%s:%d: %s launched with %d threads; its __launch_bounds__ is %d%s' %
                  (path, line, name, threads, want, ' (warp-specialized: exactly)' if special else ''))
if launches == 0:
    print('launch_threads: no launch with a literal block size found')
    sys.exit(1)
print('launch_threads: %d launches of %d kernels checked, %d mismatches' % (launches, len(kernels), bad))
sys.exit(1 if bad else 0)
