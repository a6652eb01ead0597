"""row_warp_emu.py CU ENTRY OUT.cpp [--lane-shift]: the warp-a-row kernel
ENTRY_k0_rowred_warp (backend/cuda/rows.c, grep "ROW WARP") of the generated
CUDA file CU (tests/gpu/blocks/rows10.gdsl's entries, emitted with
GPUC_ROW_WARP=1) as a C++ program over scan_stream_emu.h that runs it on
the CPU (OUT rows m grid seed: a rows x m f32 matrix, m a multiple of 4 up
to 256, `grid` blocks of the kernel's threads, a warp a row, the grid
striding over the rows) and compares the row results it stores and the
matrix with a double-precision reference ("... 0 mismatches"). ENTRY:
sm10_f32 (softmax), smstat10_f32 (softmax and the rows' maximum, stored),
logsm10_f32 (log-softmax), ln10_f32 (LayerNorm: the weight and bias read
at the column as vectors). --lane-shift: a deliberate bug (every lane's
second vector read one vector too far), which must show. It checks the
kernel's indexing, its shuffles and the rows past the last (a warp whose
row is past n does nothing), not the GPU's memory model."""
import re, sys
from emu_kernel import kernel
src = open(sys.argv[1]).read()
name = sys.argv[2]
k = name + '_k0_rowred_warp'
body, threads = kernel(src, k)
if '--lane-shift' in sys.argv:
    body, n = re.subn(r'(g_c1_0 = g_pv0\[)([^\]]+)\]', r'\1\2 + 1]', body)
    assert n == 1, n
sig = body[body.index('(') + 1:body.index(')\n{')]
params = [p.strip().split()[-1] for p in sig.split(',')]
outs = [p for p in params if re.match(r'v\d+$', p)]  # the row results, then the matrix
case = {'sm10_f32': 'CASE_SM', 'smstat10_f32': 'CASE_SM', 'logsm10_f32': 'CASE_LOGSM', 'ln10_f32': 'CASE_LN'}[name]
stored = ['#define STORED%d %d' % (r, 1 if re.search(r'\b%s\[g_row\] = ' % o, body) else 0) for r, o in enumerate(outs[:-1])]
stored += ['#define STORED%d 0' % r for r in range(len(outs) - 1, 2)]
args = []
for p in params:
    args.append({'v_n': 'A.n', 'v_m': 'A.m', 'v_A': 'A.a', 'v_w': 'A.w', 'v_b': 'A.b'}.get(p, None) or
                '(float *)A.out[%d]' % outs.index(p))
out = ['#define %s 1\n%s\n#include "scan_stream_emu.h"' % (case, '\n'.join(stored)), '''
struct __align__(16) gpuc_v16_f32 { float v[4]; };
#define GPUC_ROW_COL_VECTORS 1
#define GPUC_ROW_EXP_REUSE 1
static dim3e blockDim;
static inline float gpuc_inff(void) { return INFINITY; }
template <class T> static T gpuc_shfl_xor(T v, int off) { return emu_pick(v, (int)((threadIdx.x & 31) ^ (unsigned)off)); }
''', 'static void ' + body]
out.append(f'''
struct Args {{ int64_t n, m; float *a, *w, *b; void *out[3]; }};
static Args A;
static void *emu_thread(void *p) {{
    threadIdx.x = (unsigned)(uintptr_t)p; threadIdx.y = threadIdx.z = 0;
    {k}({', '.join(args)});
    return NULL;
}}
static unsigned char *emu_take(unsigned char **at, size_t bytes) {{ unsigned char *p = *at; *at += (bytes + 127) & ~(size_t)127; return p; }}
int main(int argc, char **argv) {{
    const int64_t rows = atoll(argv[1]), m = atoll(argv[2]); const unsigned grid = (unsigned)atoi(argv[3]); srand((unsigned)atoi(argv[4]));
    const size_t n = (size_t)(rows * m);
    size_t bytes = 4096 + 4 * n * 2 + 8 * m + 16 * (size_t)rows + 4 * 1024 + 1024;
    unsigned char *mem = (unsigned char *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(mem, 0, bytes);
    unsigned char *at = mem;
    emu_glock = (int *)emu_take(&at, 64);
    A.n = rows; A.m = m;
    A.a = (float *)emu_take(&at, 4 * n); A.w = (float *)emu_take(&at, 4 * m); A.b = (float *)emu_take(&at, 4 * m);
    A.out[0] = emu_take(&at, 4 * rows); A.out[1] = emu_take(&at, 4 * rows); A.out[2] = emu_take(&at, 4 * n + 4 * 1024);
    for (size_t e = 0; e < n; e++) A.a[e] = (float)(rand() % 40000) / 1000.0f - 20.0f;
    for (int64_t c = 0; c < m; c++) {{ A.w[c] = (float)(rand() % 2000) / 1000.0f; A.b[c] = (float)(rand() % 2000) / 1000.0f - 1.0f; }}
    float *res = (float *){'A.out[%d]' % (len(outs) - 1)};
    for (size_t e = 0; e < n; e++) res[e] = NAN;
    for (size_t e = n; e < n + 1024; e++) res[e] = 12345.0f;  /* past the matrix: must stay */
    blockDim.x = {threads}; blockDim.y = blockDim.z = 1;
    if (emu_run_grid(grid, {threads}, emu_thread)) {{ printf("a block failed\\n"); return 1; }}
    long errs = 0; double worst = 0;
    for (int64_t r = 0; r < rows; r++) {{
        const float *x = A.a + r * m;
        double mx = -INFINITY, s = 0, ss = 0;
        for (int64_t c = 0; c < m; c++) {{ mx = fmax(mx, x[c]); s += x[c]; ss += (double)x[c] * x[c]; }}
        double se = 0;
        for (int64_t c = 0; c < m; c++) se += exp(x[c] - mx);
        double mu = s / m, inv = 1.0 / sqrt(ss / m - mu * mu + 1e-5);
        for (int64_t c = 0; c < m; c++) {{
#if CASE_SM
            double want = exp(x[c] - mx) / se, tol = 1e-6 * want + 1e-12;
#elif CASE_LOGSM
            double want = x[c] - mx - log(se), tol = 1e-5 * fabs(want) + 1e-5;
#else
            double want = (x[c] - mu) * inv * A.w[c] + A.b[c], tol = 1e-3 + 1e-3 * fabs(want);
#endif
            double got = res[r * m + c], d = fabs(got - want);
            if (d > worst) worst = d;
            if (!(d <= tol)) {{ if (errs++ < 10) printf("mismatch at row %ld col %ld: %g against %g\\n", (long)r, (long)c, got, want); }}
        }}
#if CASE_SM
        const float *rmx = (const float *)A.out[0], *rse = (const float *)A.out[1];
        if (STORED0 && rmx[r] != (float)mx) {{ if (errs++ < 10) printf("row %ld: max %g against %g\\n", (long)r, rmx[r], mx); }}
        if (STORED1 && !(fabs(rse[r] - se) <= 1e-4 * se)) {{ if (errs++ < 10) printf("row %ld: sum %g against %g\\n", (long)r, rse[r], se); }}
#endif
    }}
    for (size_t e = n; e < n + 1024; e++) {{ if (res[e] != 12345.0f) {{ if (errs++ < 10) printf("written past the matrix at %ld\\n", (long)(e - n)); }} }}
    printf("%s rows=%ld m=%ld grid=%u: %ld mismatches (worst abs diff %g)\\n", "{name}", (long)rows, (long)m, grid, errs, worst);
    return errs != 0;
}}
''')
open(sys.argv[3], 'w').write('\n'.join(out))
