"""emu_kernel.py: what the CPU emulation scripts (scan_stream_emu.py,
row_stream_emu.py, row_warp_emu.py) take from a generated CUDA file: one kernel's text
without its mbarrier-init fence (the emulation has no async proxy), and its
block's threads (the kernel's __launch_bounds__; that the launcher launches
as many is stream_launch_threads.test's check)."""
import re


def kernel(src, k):
    """(body, threads) of kernel k in the generated source src."""
    i = src.index('\n' + k + '(')
    j = src.index('\n}\n', i)
    threads = int(re.findall(r'__launch_bounds__\((\d+)', src[:i])[-1])
    body = '\n'.join(l for l in src[i + 1:j + 3].split('\n') if 'fence.mbarrier_init' not in l)
    return body, threads
