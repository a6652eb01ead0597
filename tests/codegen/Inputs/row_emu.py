"""row_emu.py: what the two row-kernel emulation scripts (row_stream_emu.py,
row_warp_emu.py) share: the kernel's parameters and which row results it
stores, the device helpers its code calls, and the C++ of the host side's
check against a double-precision reference (softmax and its stored row
maximum and sum, log-softmax, LayerNorm with a weight and bias, and a row's
f64 sum of f32), which sets `errs` and prints one line "NAME rows=R m=M
grid=G: N mismatches (...)". A fifth argument "special" puts infinities
and NaN in the first six rows (softmax: the expected values follow the
online pair, NaN where exp(x - max) or the sum is NaN)."""
import re

CASES = {'sm10_f32': 'CASE_SM', 'smstat10_f32': 'CASE_SM', 'logsm10_f32': 'CASE_LOGSM',
         'ln10_f32': 'CASE_LN', 'center10_f32': 'CASE_CENTER',
         'sm11_f32': 'CASE_SM', 'smstat11_f32': 'CASE_SM', 'logsm11_f32': 'CASE_LOGSM',
         'ln11_f32': 'CASE_LN', 'sm11_f64': 'CASE_SM'}


def elem(name):
    """the C type of the entry's matrix (elem_t): f64 entries end in _f64"""
    return 'double' if name.endswith('_f64') else 'float'

# the helpers the row kernels call, over scan_stream_emu.h's warps
DEVICE = '''
struct __align__(16) gpuc_v16_f32 { float v[4]; };
struct __align__(16) gpuc_v16_f64 { double v[2]; };
#define GPUC_ROW_COL_VECTORS 1
static inline float gpuc_inff(void) { return INFINITY; }
static inline double gpuc_inf(void) { return INFINITY; }
template <class T> static T gpuc_shfl_xor(T v, int off) { return emu_pick(v, (int)((threadIdx.x & 31) ^ (unsigned)off)); }
'''


def params(body):
    """(params, outs, stored): the kernel's parameter names, its output
    arrays (the row results, then the matrix), and #define STORED<r> lines
    saying which row results it stores (those nothing reads are not:
    rows.c, grep "ROW DEAD RESULTS")"""
    sig = body[body.index('(') + 1:body.index(')\n{')]
    ps = [p.strip().split()[-1] for p in sig.split(',')]
    outs = [p for p in ps if re.match(r'v\d+$', p)]
    stored = ['#define STORED%d %d' % (r, 1 if re.search(r'\b%s\[g_row\] = ' % o, body) else 0) for r, o in enumerate(outs[:-1])]
    stored += ['#define STORED%d 0' % r for r in range(len(outs) - 1, 2)]
    return ps, outs, stored


def check(name):
    """C++ (in main, after the grid ran): compare A.out's matrix `res` and
    stored row results (of elem_t, the matrix's type) with the reference,
    count `errs`, print, return"""
    return '''
    long errs = 0; double worst = 0;
    for (int64_t r = 0; r < rows; r++) {
        const elem_t *x = A.a + r * m;
        double mx = -INFINITY, s = 0, ss = 0;
        for (int64_t c = 0; c < m; c++) { mx = fmax(mx, x[c]); s += x[c]; ss += (double)x[c] * x[c]; }
        double se = 0;  /* as the online pair: x = max counts 1 (also for max = +-inf) */
        for (int64_t c = 0; c < m; c++) se += x[c] == mx ? 1.0 : exp(x[c] - mx);
        double mu = s / m, inv = 1.0 / sqrt(ss / m - mu * mu + 1e-5);
        for (int64_t c = 0; c < m; c++) {
#if CASE_SM
            double want = exp(x[c] - mx) / se, tol = (sizeof(elem_t) == 8 ? 1e-12 : 1e-6) * want + 1e-12;
#elif CASE_LOGSM
            double want = x[c] - mx - log(se), tol = 1e-5 * fabs(want) + 1e-5;
#elif CASE_LN
            double want = (x[c] - mu) * inv * A.w[c] + A.b[c], tol = 1e-3 + 1e-3 * fabs(want);
#else
            double want = x[c] - (double)(float)mu, tol = 1e-4;
#endif
            double got = res[r * m + c], d = fabs(got - want);
            if (d > worst) worst = d;
            if (isnan(want) && isnan(got)) continue;
            if (!(d <= tol)) { if (errs++ < 10) printf("mismatch at row %ld col %ld: %g against %g\\n", (long)r, (long)c, got, want); }
        }
#if CASE_SM
        const elem_t *rmx = (const elem_t *)A.out[0], *rse = (const elem_t *)A.out[1];
        if (STORED0 && rmx[r] != (elem_t)mx) { if (errs++ < 10) printf("row %ld: max %g against %g\\n", (long)r, rmx[r], mx); }
        if (STORED1 && !(fabs(rse[r] - se) <= 1e-4 * se)) { if (errs++ < 10) printf("row %ld: sum %g against %g\\n", (long)r, rse[r], se); }
#elif CASE_CENTER && STORED0
        const double *rs = (const double *)A.out[0];
        if (!(fabs(rs[r] - s) <= 1e-9 * fabs(s) + 1e-6)) { if (errs++ < 10) printf("row %ld: sum %g against %g\\n", (long)r, rs[r], s); }
#endif
    }
    EXTRA_CHECKS
    printf("%s rows=%ld m=%ld grid=%u: %ld mismatches (worst abs diff %g)\\n", "NAME", (long)rows, (long)m, grid, errs, worst);
    return errs != 0;
'''.replace('NAME', name)


def host_start(k, args, fields, nbytes):
    """C++: the arguments' struct A (n, m, the input a, the weight and bias
    w and b, of elem_t, the outputs, and `fields`), a thread's call of kernel k with
    `args`, and main up to A's inputs, allocated with the rest of `nbytes`
    (an expression of rows, m and n) in memory every block's process shares"""
    return f'''
struct Args {{ int64_t n, m; elem_t *a, *w, *b; void *out[3];{fields} }};
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
    size_t bytes = {nbytes};
    unsigned char *mem = (unsigned char *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(mem, 0, bytes);
    unsigned char *at = mem;
    emu_glock = (int *)emu_take(&at, 64);
    A.n = rows; A.m = m;
    A.a = (elem_t *)emu_take(&at, sizeof(elem_t) * n); A.w = (elem_t *)emu_take(&at, sizeof(elem_t) * m);
    A.b = (elem_t *)emu_take(&at, sizeof(elem_t) * m);
    for (size_t e = 0; e < n; e++) A.a[e] = (elem_t)(rand() % 40000) / 1000 - 20;
    for (int64_t c = 0; c < m; c++) {{ A.w[c] = (elem_t)(rand() % 2000) / 1000; A.b[c] = (elem_t)(rand() % 2000) / 1000 - 1; }}
    if (argc > 5 && strcmp(argv[5], "special") == 0 && rows >= 6) {{
        /* infinities and NaN (softmax): a row of -inf; a warp's part (512) of -inf; one +inf; two +inf in
         * different chunks; a NaN; a -inf among finite values */
        const elem_t inf = (elem_t)INFINITY;
        for (int64_t c = 0; c < m; c++) A.a[c] = -inf;
        for (int64_t c = 0; c < 512; c++) A.a[m + c] = -inf;
        A.a[2 * m + 5] = inf;
        A.a[3 * m + 1] = inf; A.a[3 * m + m - 3] = inf;
        A.a[4 * m + 7] = (elem_t)NAN;
        A.a[5 * m + 9] = -inf;
    }}
'''
