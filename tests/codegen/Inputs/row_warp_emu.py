"""row_warp_emu.py CU ENTRY OUT.cpp [--lane-shift]: the warp-a-row kernel
ENTRY_k0_rowred_warp (backend/cuda/rows.c, grep "ROW WARP") of the generated
CUDA file CU (tests/gpu/blocks/rows11.gdsl's entries, emitted with
GPUC_ROW_WARP on, the default) as a C++ program over scan_stream_emu.h that runs it on
the CPU (OUT rows m grid seed: a rows x m matrix, m whole vectors up to 256
f32 or 128 f64, `grid` blocks of the kernel's threads, a warp a row, the
grid striding over the rows) and compares the row results it stores and
the matrix with a double-precision reference ("... 0 mismatches"). ENTRY:
sm11_f32 (softmax), smstat11_f32 (softmax and the rows' maximum, stored),
logsm11_f32 (log-softmax), ln11_f32 (LayerNorm: the weight and bias read
at the column as vectors), sm11_f64 (softmax of f64: 2 elements a vector).
--lane-shift: a deliberate bug (every lane's second vector read one vector
too far), which must show. It checks the kernel's indexing, its shuffles
and the rows past the last (a warp whose row is past n writes nothing:
1024 elements past the matrix must keep their value), not the GPU's memory
model."""
import re, sys
from emu_kernel import kernel
import row_emu
src = open(sys.argv[1]).read()
name = sys.argv[2]
k = name + '_k0_rowred_warp'
body, threads = kernel(src, k)
if '--lane-shift' in sys.argv:
    body, n = re.subn(r'(g_c1_0 = g_pv0\[)([^\]]+)\]', r'\1\2 + 1]', body)
    assert n == 1, n
params, outs, stored = row_emu.params(body)
case = row_emu.CASES[name]
args = []
for p in params:
    args.append({'v_n': 'A.n', 'v_m': 'A.m', 'v_A': 'A.a', 'v_w': 'A.w', 'v_b': 'A.b'}.get(p, None) or
                '(elem_t *)A.out[%d]' % outs.index(p))
out = ['#define %s 1\n%s\n#include "scan_stream_emu.h"\ntypedef %s elem_t;' % (case, '\n'.join(stored), row_emu.elem(name)), '''
''' + row_emu.DEVICE + '''#define GPUC_ROW_EXP_REUSE 1
static dim3e blockDim;
''', 'static void ' + body]
out.append(row_emu.host_start(k, args, '', '4096 + 16 * n + 24 * m + 16 * (size_t)rows + 8 * 1024 + 1024') + f'''
    A.out[0] = emu_take(&at, sizeof(elem_t) * rows); A.out[1] = emu_take(&at, sizeof(elem_t) * rows);
    A.out[2] = emu_take(&at, sizeof(elem_t) * (n + 1024));
    elem_t *res = (elem_t *){'A.out[%d]' % (len(outs) - 1)};
    for (size_t e = 0; e < n; e++) res[e] = NAN;
    for (size_t e = n; e < n + 1024; e++) res[e] = 12345.0f;  /* past the matrix: must stay */
    blockDim.x = {threads}; blockDim.y = blockDim.z = 1;
    if (emu_run_grid(grid, {threads}, emu_thread)) {{ printf("a block failed\\n"); return 1; }}
''' + row_emu.check(name).replace('EXTRA_CHECKS', 'for (size_t e = n; e < n + 1024; e++) { if (res[e] != 12345.0f) { if (errs++ < 10) printf("written past the matrix at %ld\\n", (long)(e - n)); } }') + f'''}}
''')
open(sys.argv[3], 'w').write('\n'.join(out))
