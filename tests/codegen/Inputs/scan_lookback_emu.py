"""scan_lookback_emu.py CU ENTRY OUT.cpp [--swap-halves]: emit_scan's register kernel
ENTRY_k0_scan (bench/programs/scan.gdsl's recurrence, incl_i64 and excl_i64: scans of a
16-byte look-back word) as a C++ program over scan_stream_emu.h that runs
one tile of it on the CPU against look-back words set by hand
(OUT T d late seed): block T of a grid of T + 1 tiles, whose predecessors
T - d + 1 .. T - 1 hold their aggregates (status 1), tile T - d its inclusive
prefix (status 2) and the tiles before it a poisoned prefix (status 2): a
look-back that walks past its nearest prefix, or folds in the wrong order,
gives wrong outputs. late > 0: tile T - late's word is published 20 ms after
the block starts (status 0 until then), so the look-back must wait for it.
The program compares the tile's outputs and its published prefix with a
scan in order in double (float: relative 1e-4) and prints "... 0 mismatches".
--swap-halves (a kernel written with GPUC_SCAN_LOOKBACK=64): a deliberate bug,
the far half of a round folded in before the near one, which must show."""
import re, sys
from emu_kernel import kernel
src = open(sys.argv[1]).read()
name = sys.argv[2]
k = name + '_k0_scan'
body, threads = kernel(src, k)
if '--swap-halves' in sys.argv:
    i = body.index('/* the far half is older than the near one */')
    near0 = body.rindex('}\n', 0, i) + 2   # after the warp reductions' loop
    j = body.index('if (g_pmask || g_pmaskf)', i)
    body = body[:near0] + body[i:j] + body[near0:i] + body[j:]
tile = re.search(r'g_base = g_tile \* (\d+);', body)
if not tile:
    sys.exit('scan_lookback_emu.py: no "g_base = g_tile * TILE;" in %s' % k)
tile = int(tile.group(1))
rec = name == 'recurrence'
if name not in ('recurrence', 'incl_i64', 'excl_i64'):
    sys.exit('scan_lookback_emu.py: ENTRY is recurrence, incl_i64 or excl_i64, not %s' % name)
T = 'float' if rec else 'int64_t'
call = f'{k}(A.n, A.a, A.b, A.out, A.words)' if rec else f'{k}(A.n, A.a, A.out, A.words)'
out = ['#include "scan_stream_emu.h"',
       'static inline int64_t gpuc_add_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }',
       'static void ' + body, f'''
typedef {T} T;
#define REC {int(rec)}
#define EXCL {int(name == 'excl_i64')}  /* out[i] is the prefix through i - 1 */
#define TILE {tile}
struct Args {{ int64_t n; T *a, *b, *out; unsigned long long *words; }};
static Args A;
/* the value of a tile's word: (product of a, x) packed as the kernel packs two floats; an i64 as is */
struct P {{ double m, x; }};
static P compose(P p, P q) {{ return REC ? P{{p.m * q.m, p.x * q.m + q.x}} : P{{0, p.x + q.x}}; }}
static unsigned long long pack(P p) {{
#if REC
    float m = (float)p.m, x = (float)p.x; unsigned um, ux; memcpy(&um, &m, 4); memcpy(&ux, &x, 4);
    return (unsigned long long)um | ((unsigned long long)ux << 32);
#else
    return (unsigned long long)(int64_t)p.x;
#endif
}}
static unsigned long long late_w[2]; static int64_t late_at = -1;
static void *publish_late(void *) {{
    usleep(20000);
    gpuc_st_word2(A.words + 2 * late_at, late_w[0], late_w[1]);
    return NULL;
}}
static void *emu_thread(void *p) {{
    threadIdx.x = (unsigned)(uintptr_t)p; threadIdx.y = threadIdx.z = 0;
    {call};
    return NULL;
}}
int main(int argc, char **argv) {{
    if (argc != 5) {{ fprintf(stderr, "usage: prog T d late seed\\n"); return 2; }}
    const int64_t t = atoll(argv[1]), d = atoll(argv[2]), late = atoll(argv[3]);
    srand((unsigned)atoi(argv[4]));
    if (t < 1 || d < 1 || d > t || late < 0 || late > t) {{ fprintf(stderr, "bad T d late\\n"); return 2; }}
    const int64_t n = (t + 1) * TILE;
    size_t bytes = 64 + 2 * sizeof(unsigned long long) * (size_t)(t + 1) + 3 * sizeof(T) * (size_t)n;
    unsigned char *m = (unsigned char *)mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(m, 0, bytes);
    emu_glock = (int *)m;
    A.n = n; A.words = (unsigned long long *)(m + 64);
    A.a = (T *)(A.words + 2 * (t + 1)); A.b = A.a + n; A.out = A.b + n;
    P *inc = (P *)malloc(sizeof(P) * (size_t)n), acc = {{1, 0}};
    for (int64_t i = 0; i < n; i++) {{
#if REC
        A.a[i] = (T)(0.97 + 0.06 * rand() / RAND_MAX); A.b[i] = (T)(2.0 * rand() / RAND_MAX - 1.0);
        acc = compose(acc, P{{A.a[i], A.b[i]}});
#else
        A.a[i] = (T)(rand() % 2000001) - 1000000;
        acc = compose(acc, P{{0, (double)A.a[i]}});
#endif
        inc[i] = acc;
    }}
    for (int64_t j = 0; j < t; j++) {{
        P agg = {{1, 0}};
        for (int64_t i = j * TILE; i < (j + 1) * TILE; i++) agg = compose(agg, REC ? P{{(double)A.a[i], (double)A.b[i]}} : P{{0, (double)A.a[i]}});
        unsigned long long w[2];
        if (j > t - d) {{ w[0] = pack(agg); w[1] = 1; }}
        else if (j == t - d) {{ w[0] = pack(inc[(j + 1) * TILE - 1]); w[1] = 2; }}
        else {{ w[0] = pack(P{{1e30, 1e30}}); w[1] = 2; }}  /* poison: never to be read */
        if (late && j == t - late) {{ late_w[0] = w[0]; late_w[1] = w[1]; late_at = j; w[0] = w[1] = 0; }}
        A.words[2 * j] = w[0]; A.words[2 * j + 1] = w[1];
    }}
    pthread_t lt;
    if (late_at >= 0) pthread_create(&lt, NULL, publish_late, NULL);
    /* one block, tile t */
    blockIdx.x = (unsigned)t; blockIdx.y = blockIdx.z = 0; gridDim.x = (unsigned)(t + 1); gridDim.y = gridDim.z = 1;
    for (int w = 0; w < 32; w++) pthread_barrier_init(&emu_warp_bar[w], NULL, 32);
    pthread_barrier_init(&emu_block_bar, NULL, {threads});
    pthread_attr_t at; pthread_attr_init(&at); pthread_attr_setstacksize(&at, 1 << 18);
    pthread_t th[{threads}];
    for (int i = 0; i < {threads}; i++) pthread_create(&th[i], &at, emu_thread, (void *)(uintptr_t)i);
    for (int i = 0; i < {threads}; i++) pthread_join(th[i], NULL);
    if (late_at >= 0) pthread_join(lt, NULL);
    long bad = 0;
    for (int64_t i = t * TILE; i < n; i++) {{
        const double want = EXCL ? (i ? inc[i - 1].x : 0) : inc[i].x, got = (double)A.out[i];
        const bool ok = REC ? fabs(got - want) <= 1e-4 * fabs(want) + 1e-4 : got == want;
        if (!ok && bad++ < 5) fprintf(stderr, "item %ld: %.9g, want %.9g\\n", (long)i, got, want);
    }}
    unsigned long long wt[2] = {{A.words[2 * t], A.words[2 * t + 1]}};
#if REC
    float px; unsigned ux = (unsigned)(wt[0] >> 32); memcpy(&px, &ux, 4);
    const bool pub = wt[1] == 2 && fabs(px - inc[n - 1].x) <= 1e-4 * fabs(inc[n - 1].x) + 1e-4;
#else
    const bool pub = wt[1] == 2 && (int64_t)wt[0] == (int64_t)inc[n - 1].x;
#endif
    if (!pub) {{ bad++; fprintf(stderr, "tile %ld published status %llu, a wrong prefix\\n", (long)t, wt[1]); }}
    printf("{name} tile %ld, prefix %ld back, late %ld: %ld mismatches\\n", (long)t, (long)d, (long)late, bad);
    return bad != 0;
}}
''']
open(sys.argv[3], 'w').write('\n'.join(out))
