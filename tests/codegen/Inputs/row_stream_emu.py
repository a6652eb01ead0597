"""row_stream_emu.py CU ENTRY OUT.cpp [--wrong-slot]: the long-row stream kernel
ENTRY_k0_rowred_st (backend/cuda/rows.c, grep "ROW STREAM") of the
generated CUDA file CU (tests/gpu/blocks/rows10.gdsl's entries) as a C++
program over scan_stream_emu.h that runs it on the CPU (OUT rows m grid
seed: a rows x m f32 matrix, m a multiple of the chunk, grid blocks, all
resident) and compares the row results and the matrix with a
double-precision reference ("... 0 mismatches"; the row results only where
the kernel stores them). ENTRY: sm10_f32 (softmax), smstat10_f32 (softmax
and the rows' maximum, stored),
ln10_f32 (LayerNorm: the weight and bias read at the column), center10_f32
(an f64 partial: its words are 8 bytes of one component). --wrong-slot: a
deliberate bug (the post reads the row totals of ring slot 0, not of its
chunk's slot), which must show. It checks the kernel's indexing, combine
order, barrier counts and phases, the ring's turns and the chunk order
across blocks (the rows' counters and partials in shared memory between
processes), not the GPU's memory model."""
import re, sys
from emu_kernel import kernel
src = open(sys.argv[1]).read()
name = sys.argv[2]
k = name + '_k0_rowred_st'
body, threads = kernel(src, k)
if '--wrong-slot' in sys.argv:
    body = re.sub(r'= (g_tot\d+_\d+_\d+)\[g_s\];', r'= \1[0];', body)
body = re.sub(r'extern __shared__ __align__\(128\) gpuc_v16_f32 gpuc_stash\[\];[^\n]*',
              'gpuc_v16_f32 *const gpuc_stash = (gpuc_v16_f32 *)emu_ring;', body)
sig = body[body.index('(') + 1:body.index(')\n{')]
params = [p.strip().split()[-1] for p in sig.split(',')]
outs = [p for p in params if re.match(r'v\d+$', p)]  # the row results, then the matrix
case = {'sm10_f32': 'CASE_SM', 'smstat10_f32': 'CASE_SM', 'ln10_f32': 'CASE_LN', 'center10_f32': 'CASE_CENTER'}[name]
# the row results the kernel stores (those nothing reads are not: rows.c, grep "ROW DEAD RESULTS")
stored = ['#define STORED%d %d' % (r, 1 if re.search(r'\b%s\[g_row\] = ' % o, body) else 0) for r, o in enumerate(outs[:-1])]
stored += ['#define STORED%d 0' % r for r in range(len(outs) - 1, 2)]
args = []
for p in params:
    args.append({'v_n': 'A.n', 'v_m': 'A.m', 'v_A': 'A.a', 'v_w': 'A.w', 'v_b': 'A.b', 'g_ppr': 'A.ppr',
                 'g_sparts': 'A.parts', 'g_scnt': 'A.cnt'}.get(p, None) or
                '(%s *)A.out[%d]' % ('double' if name == 'center10_f32' and p == outs[0] else 'float', outs.index(p)))
out = ['#define %s 1\n%s\n#include "scan_stream_emu.h"' % (case, '\n'.join(stored)), '''
struct __align__(16) gpuc_v16_f32 { float v[4]; };
#define GPUC_ROW_COL_VECTORS 1
static inline float gpuc_inff(void) { return INFINITY; }
template <class T> static T gpuc_shfl_xor(T v, int off) { return emu_pick(v, (int)((threadIdx.x & 31) ^ (unsigned)off)); }
static inline void __nanosleep(unsigned) { sched_yield(); }
static void gpuc_st_bar_init(unsigned long long *bar, unsigned n) { gpuc_ss_init(gpuc_smem32(bar), n); }
static void gpuc_st_arrive(unsigned long long *bar) { gpuc_ss_arrive(gpuc_smem32(bar)); }
static void gpuc_st_wait(unsigned long long *bar, unsigned parity) { gpuc_ss_wait(gpuc_smem32(bar), parity); }
static void gpuc_st_load(void *dst, const void *src, unsigned bytes, unsigned long long *bar) { gpuc_ss_load(gpuc_smem32(dst), src, bytes, gpuc_smem32(bar)); }
static void gpuc_st_store(void *dst, const void *src, unsigned bytes) { gpuc_ss_store(dst, gpuc_smem32(src), bytes); }
static void gpuc_st_fence_async(void) {}
template <int n> static void gpuc_st_wait_read(void) {}
static void gpuc_st_wait_all(void) {}
static void gpuc_st_count(unsigned *p) { __atomic_add_fetch(p, 1u, __ATOMIC_RELEASE); }
static unsigned gpuc_st_acquire(const unsigned *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
template <class T> static void gpuc_st_put(unsigned long long *p, T v) { unsigned long long w = 0; memcpy(&w, &v, sizeof v); __atomic_store_n(p, w, __ATOMIC_RELAXED); }
template <class T> static T gpuc_st_get(const unsigned long long *p) { unsigned long long w = __atomic_load_n(p, __ATOMIC_RELAXED); T v; memcpy(&v, &w, sizeof v); return v; }
''', 'static void ' + body]
out.append(f'''
struct Args {{ int64_t n, m; int ppr; float *a, *w, *b; void *out[3]; unsigned long long *parts; unsigned *cnt; }};
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
    size_t bytes = 4096 + 4 * n * 2 + 8 * m + 64 * (size_t)rows * 4 + 8 * n + 1024;
    unsigned char *mem = (unsigned char *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(mem, 0, bytes);
    unsigned char *at = mem;
    emu_glock = (int *)emu_take(&at, 64);
    A.n = rows; A.m = m;
    A.a = (float *)emu_take(&at, 4 * n); A.w = (float *)emu_take(&at, 4 * m); A.b = (float *)emu_take(&at, 4 * m);
    A.out[0] = emu_take(&at, 8 * rows); A.out[1] = emu_take(&at, 8 * rows); A.out[2] = emu_take(&at, 4 * n);
    A.cnt = (unsigned *)emu_take(&at, 4 * rows);
    A.parts = (unsigned long long *)emu_take(&at, 8 * n / 256);  /* at most 2 words a chunk of 8192 or more */
    for (size_t e = 0; e < n; e++) A.a[e] = (float)(rand() % 40000) / 1000.0f - 20.0f;
    for (int64_t c = 0; c < m; c++) {{ A.w[c] = (float)(rand() % 2000) / 1000.0f; A.b[c] = (float)(rand() % 2000) / 1000.0f - 1.0f; }}
    float *res = (float *){'A.out[%d]' % (len(outs) - 1)};
    for (size_t e = 0; e < n; e++) res[e] = NAN;
    A.ppr = (int)(m / EMU_CHUNK);
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
#elif CASE_LN
            double want = (x[c] - mu) * inv * A.w[c] + A.b[c], tol = 1e-3 + 1e-3 * fabs(want);
#else
            double want = x[c] - (double)(float)mu, tol = 1e-4;
#endif
            double got = res[r * m + c], d = fabs(got - want);
            if (d > worst) worst = d;
            if (!(d <= tol)) {{ if (errs++ < 10) printf("mismatch at row %ld col %ld: %g against %g\\n", (long)r, (long)c, got, want); }}
        }}
#if CASE_SM
        const float *rmx = (const float *)A.out[0], *rse = (const float *)A.out[1];
        if (STORED0 && rmx[r] != (float)mx) {{ if (errs++ < 10) printf("row %ld: max %g against %g\\n", (long)r, rmx[r], mx); }}
        if (STORED1 && !(fabs(rse[r] - se) <= 1e-4 * se)) {{ if (errs++ < 10) printf("row %ld: sum %g against %g\\n", (long)r, rse[r], se); }}
#elif CASE_CENTER && STORED0
        const double *rs = (const double *)A.out[0];
        if (!(fabs(rs[r] - s) <= 1e-9 * fabs(s) + 1e-6)) {{ if (errs++ < 10) printf("row %ld: sum %g against %g\\n", (long)r, rs[r], s); }}
#endif
    }}
    printf("%s rows=%ld m=%ld grid=%u: %ld mismatches (worst abs diff %g)\\n", "{name}", (long)rows, (long)m, grid, errs, worst);
    return errs != 0;
}}
''')
chunk = re.search(r'const int64_t g_head = \(g_ch % g_ppr\) \* (\d+)', body)
out.insert(0, '#define EMU_CHUNK %s' % chunk.group(1))
open(sys.argv[3], 'w').write('\n'.join(out))
