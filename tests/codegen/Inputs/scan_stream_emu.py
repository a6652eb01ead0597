"""scan_stream_emu.py CU ENTRY OUT.cpp [--sensitive] [--no-broadcast] [--no-rotate]: the
SCAN BULK 3 WIDE kernel ENTRY_k0_scan_stream of the generated CUDA file CU
(tests/gpu/blocks/scan_stream_wide.gdsl's entries) as a C++ program over
scan_stream_emu.h that runs it on the CPU (OUT n grid misalign seed: grid
blocks, arrays misaligned by misalign elements) and compares its result with
the scan in order ("... 0 mismatches"). --sensitive: inputs whose every item
depends on the prefix carried into its tile and part (a = -3, or a in
0.999 .. 1.0); --no-broadcast: a deliberate bug (lane 0's prefix not
broadcast before the parts' offsets), which must show; --no-rotate: another
(the consumers' output vectors stored unrotated while the loads were
rotated), which must show too."""
import re, sys
from emu_kernel import kernel
src = open(sys.argv[1]).read()
name = sys.argv[2]
sens = '--sensitive' in sys.argv
mutate = '--no-broadcast' in sys.argv
unrotate = '--no-rotate' in sys.argv
k = name + '_k0_scan_stream'
body, threads = kernel(src, k)  # threads: the kernel's __launch_bounds__ (640 with gpuc's defaults)
if mutate:
    body = re.sub(r'(g_ex0_\d+) = __shfl_sync\(0xffffffffu, g_ex0_\d+, 0\);', r'\1 = \1;', body)
if unrotate:
    # the second bug: each output vector stored where the lane's vector of
    # its position would be without the rotation of the loads
    body, nsub = re.subn(r'(g_io\d+\[g_lane \* \d+u \+ \(\d+u \+ g_rot\) % \d+u\] = )(?:g_rot == \d+u \? g_o\d+_\d+ : )+(g_o\d+_\d+);', r'\1\2;', body)
    if nsub == 0:
        sys.exit('scan_stream_emu.py: --no-rotate: no rotated store in %s' % k)
body = body.replace('extern __shared__ __align__(128) unsigned char g_ring[];', 'unsigned char *const g_ring = emu_ring;')
# kernel signature: the parameter list
sig = body[body.index('(') + 1:body.index(')\n{')]
# the kernel's tile (SW_TILE_ITEMS in gpuc's build: 4096 by default), for the status words' count
tile = re.search(r'g_ntiles = \(v_n \+ (\d+)\) / (\d+);', body)
if not tile or int(tile.group(1)) + 1 != int(tile.group(2)):
    sys.exit('scan_stream_emu.py: no "g_ntiles = (v_n + T - 1) / T;" in %s' % k)
tile = int(tile.group(2))
params = [p.strip() for p in sig.split(',')]
cases = {
  'sw_rec':      dict(T='float', nin=2, nout=1),
  'sw_aff_both': dict(T='int32_t', nin=2, nout=2),
  'sw_aff_ex':   dict(T='int32_t', nin=2, nout=1),
  'sw_sum_i64':  dict(T='int64_t', nin=1, nout=1),
  'sw_exsum_f64':dict(T='double', nin=1, nout=1),
}[name]
T = cases['T']
macros = {'sw_rec': 'CASE_REC', 'sw_aff_both': 'CASE_AFF', 'sw_aff_ex': 'CASE_AFF', 'sw_sum_i64': 'CASE_I64', 'sw_exsum_f64': 'CASE_F64'}
out = ['#define %s 1\n#define CASE_EX %d\n#define SENS %d\n#include "scan_stream_emu.h"' % (macros[name], name == 'sw_aff_ex', sens),
       'static inline int32_t gpuc_add_i32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }',
       'static inline int32_t gpuc_mul_i32(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }',
       'static inline int64_t gpuc_add_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }',
       'static void ' + body]
nin, nout = cases['nin'], cases['nout']
out.append(f'''
typedef {T} T;
struct Args {{ int64_t n; T *in[2]; T *out[2]; unsigned long long *words; }};
static Args A;
static void *emu_thread(void *p) {{
    threadIdx.x = (unsigned)(uintptr_t)p; threadIdx.y = threadIdx.z = 0;
    {k}(A.n, {', '.join(f'A.in[{q}]' for q in range(nin))}, {', '.join(f'A.out[{q}]' for q in range(nout))}, A.words);
    return NULL;
}}
int main(int argc, char **argv) {{
    const int64_t n = atoll(argv[1]); const unsigned grid = (unsigned)atoi(argv[2]); const int mis = atoi(argv[3]); srand((unsigned)atoi(argv[4]));
    const int64_t tiles = (n + {tile - 1}) / {tile};
    size_t bytes = 64 + 2 * sizeof(unsigned long long) * (size_t)tiles + ({nin} + {nout}) * (sizeof(T) * (size_t)(n + 8) + 64);
    unsigned char *m = (unsigned char *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(m, 0, bytes);
    emu_glock = (int *)m;
    A.n = n; A.words = (unsigned long long *)(m + 64);
    unsigned char *at = m + 64 + 2 * sizeof(unsigned long long) * (size_t)tiles;
    at = (unsigned char *)(((uintptr_t)at + 63) & ~(uintptr_t)63);
    for (int q = 0; q < {nin}; q++) {{ A.in[q] = (T *)at + (q == 0 ? mis : 0); at += sizeof(T) * (size_t)(n + 8); at = (unsigned char *)(((uintptr_t)at + 63) & ~(uintptr_t)63); }}
    for (int q = 0; q < {nout}; q++) {{ A.out[q] = (T *)at + mis; at += sizeof(T) * (size_t)(n + 8); at = (unsigned char *)(((uintptr_t)at + 63) & ~(uintptr_t)63); }}
    for (int64_t i = 0; i < n; i++) {{
#if CASE_REC
        if (SENS) {{ A.in[0][i] = 0.999f + (float)(rand() % 1000) / 1000000.0f; A.in[1][i] = (float)(rand() % 2000) / 1000.0f - 1.0f; }} else {{ A.in[0][i] = (float)(rand() % 990) / 1000.0f; A.in[1][i] = (float)(rand() % 1000) / 1000.0f; }}
#elif CASE_AFF
        A.in[0][i] = SENS ? -3 : rand() % 7 - 3; A.in[1][i] = rand() % 2001 - 1000;
#elif CASE_I64
        A.in[0][i] = ((int64_t)rand() << 20) - ((int64_t)rand() << 19);
#else
        A.in[0][i] = (double)(rand() % 1000) / 1000.0;
#endif
    }}
    if (emu_run_grid(grid, {threads}, emu_thread)) {{ printf("a block failed\\n"); return 1; }}
    /* the reference, in order */
    long errs = 0; double worst = 0;
#if CASE_REC
    float x0 = 1.0f, x1 = 0.0f;
    for (int64_t i = 0; i < n; i++) {{ float a = A.in[0][i], bb = A.in[1][i]; float y0 = x0 * a, y1 = x1 * a + bb; x0 = y0; x1 = y1;
        double d = fabs((double)A.out[0][i] - x1); double tol = 1e-3 + 1e-3 * fabs(x1); if (d > worst) worst = d; if (!(d <= tol)) {{ if (errs++ < 10) printf("mismatch at %ld: %g against %g\\n", (long)i, (double)A.out[0][i], (double)x1); }} }}
#elif CASE_AFF
    int32_t x0 = 1, x1 = 0;
    for (int64_t i = 0; i < n; i++) {{ int32_t a = A.in[0][i], bb = A.in[1][i];
#if CASE_EX
        if (A.out[0][i] != x1) {{ if (errs++ < 10) printf("mismatch at %ld: %d against %d\\n", (long)i, A.out[0][i], x1); }}
#endif
        int32_t y0 = gpuc_mul_i32(x0, a), y1 = gpuc_add_i32(gpuc_mul_i32(x1, a), bb); x0 = y0; x1 = y1;
#if !CASE_EX
        if (A.out[0][i] != x0 || A.out[1][i] != x1) {{ if (errs++ < 10) printf("mismatch at %ld: (%d, %d) against (%d, %d)\\n", (long)i, A.out[0][i], A.out[1][i], x0, x1); }}
#endif
    }}
#elif CASE_I64
    int64_t s = 0;
    for (int64_t i = 0; i < n; i++) {{ s = gpuc_add_i64(s, A.in[0][i]); if (A.out[0][i] != s) {{ if (errs++ < 10) printf("mismatch at %ld\\n", (long)i); }} }}
#else
    double s = 0;
    for (int64_t i = 0; i < n; i++) {{ double d = fabs(A.out[0][i] - s); if (d > worst) worst = d; if (!(d <= 1e-9 + 1e-9 * s)) {{ if (errs++ < 10) printf("mismatch at %ld: %g against %g\\n", (long)i, A.out[0][i], s); }} s += A.in[0][i]; }}
#endif
    printf("%s n=%ld grid=%u mis=%d: %ld mismatches (worst abs diff %g)\\n", "{name}", (long)n, grid, mis, errs, worst);
    return errs != 0;
}}
''')
open(sys.argv[3], 'w').write('\n'.join(out))
