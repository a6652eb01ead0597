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
chunk's slot), which must show; --untagged: another (the gatherers take
the partials' words without waiting for their tags: ROW STREAM TAGS'
words become visible here only after the chunk's count, and a pause). It checks the kernel's indexing, combine
order, barrier counts and phases, the ring's turns and the chunk order
across blocks (the rows' counters and partials in shared memory between
processes), not the GPU's memory model."""
import re, sys
from emu_kernel import kernel
import row_emu
src = open(sys.argv[1]).read()
name = sys.argv[2]
k = name + '_k0_rowred_st'
body, threads = kernel(src, k)
if '--wrong-slot' in sys.argv:
    body = re.sub(r'= (g_tot\d+_\d+_\d+)\[g_s\];', r'= \1[0];', body)
if '--untagged' in sys.argv:  # the gatherers read the words without waiting for their tags
    body, n = re.subn(r'gpuc_st_get_tagged<(\w+)>\((g_pp \+ \d+)\)', r'(\1)gpuc_st_get<float>(\2)', body)
    assert n > 0, 'no tagged reads'
body = re.sub(r'extern __shared__ __align__\(128\) gpuc_v16_f32 gpuc_stash\[\];[^\n]*',
              'gpuc_v16_f32 *const gpuc_stash = (gpuc_v16_f32 *)emu_ring;', body)
params, outs, stored = row_emu.params(body)
case = row_emu.CASES[name]
args = []
for p in params:
    args.append({'v_n': 'A.n', 'v_m': 'A.m', 'v_A': 'A.a', 'v_w': 'A.w', 'v_b': 'A.b', 'g_ppr': 'A.ppr',
                 'g_sparts': 'A.parts', 'g_scnt': 'A.cnt'}.get(p, None) or
                '(%s *)A.out[%d]' % ('double' if name == 'center10_f32' and p == outs[0] else 'float', outs.index(p)))
out = ['#define %s 1\n%s\n#include "scan_stream_emu.h"\n#include <unistd.h>\ntypedef float elem_t;' % (case, '\n'.join(stored)), '''
''' + row_emu.DEVICE + '''static inline void __nanosleep(unsigned) { sched_yield(); }
static void gpuc_st_bar_init(unsigned long long *bar, unsigned n) { gpuc_ss_init(gpuc_smem32(bar), n); }
static void gpuc_st_arrive(unsigned long long *bar) { gpuc_ss_arrive(gpuc_smem32(bar)); }
static void gpuc_st_wait(unsigned long long *bar, unsigned parity) { gpuc_ss_wait(gpuc_smem32(bar), parity); }
static void gpuc_st_load(void *dst, const void *src, unsigned bytes, unsigned long long *bar) { gpuc_ss_load(gpuc_smem32(dst), src, bytes, gpuc_smem32(bar)); }
static void gpuc_st_count(unsigned *p) { __atomic_add_fetch(p, 1u, __ATOMIC_RELEASE); }
static unsigned gpuc_st_acquire(const unsigned *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
template <class T> static void gpuc_st_put(unsigned long long *p, T v) { unsigned long long w = 0; memcpy(&w, &v, sizeof v); __atomic_store_n(p, w, __ATOMIC_RELAXED); }
template <class T> static T gpuc_st_get(const unsigned long long *p) { unsigned long long w = __atomic_load_n(p, __ATOMIC_RELAXED); T v; memcpy(&v, &w, sizeof v); return v; }
/* ROW STREAM TAGS, with the words made visible only after the count (the
 * latest a GPU may show them: nothing orders them before it), after a pause */
static thread_local unsigned long long *emu_late_p[8];
static thread_local unsigned long long emu_late_w[8];
static thread_local int emu_nlate;
template <class T> static void gpuc_st_put_tagged(unsigned long long *p, T v) {
    unsigned u; memcpy(&u, &v, 4);
    emu_late_p[emu_nlate] = p; emu_late_w[emu_nlate++] = (1ull << 32) | u;
}
static void gpuc_st_count_relaxed(unsigned *p) {
    __atomic_add_fetch(p, 1u, __ATOMIC_RELAXED);
    usleep(200);
    for (int i = 0; i < emu_nlate; i++) __atomic_store_n(emu_late_p[i], emu_late_w[i], __ATOMIC_RELAXED);
    emu_nlate = 0;
}
static unsigned gpuc_st_peek(const unsigned *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
template <class T> static T gpuc_st_get_tagged(const unsigned long long *p) {
    unsigned long long w;
    while (((w = __atomic_load_n(p, __ATOMIC_RELAXED)) >> 32) != 1u) sched_yield();
    unsigned u = (unsigned)w; T v; memcpy(&v, &u, 4); return v;
}
''', 'static void ' + body]
out.append(row_emu.host_start(k, args, ' int ppr; unsigned long long *parts; unsigned *cnt;', '4096 + 4 * n * 2 + 8 * m + 64 * (size_t)rows * 4 + 8 * n + 1024') + f'''
    A.out[0] = emu_take(&at, 8 * rows); A.out[1] = emu_take(&at, 8 * rows); A.out[2] = emu_take(&at, 4 * n);
    A.cnt = (unsigned *)emu_take(&at, 4 * rows);
    A.parts = (unsigned long long *)emu_take(&at, 8 * n / 256);  /* at most 2 words a chunk of 8192 or more */
    float *res = (float *){'A.out[%d]' % (len(outs) - 1)};
    for (size_t e = 0; e < n; e++) res[e] = NAN;
    A.ppr = (int)(m / EMU_CHUNK);
    if (emu_run_grid(grid, {threads}, emu_thread)) {{ printf("a block failed\\n"); return 1; }}
''' + row_emu.check(name).replace('EXTRA_CHECKS', '') + f'''}}
''')
chunk = re.search(r'const int64_t g_head = \(g_ch % g_ppr\) \* (\d+)', body)
out.insert(0, '#define EMU_CHUNK %s' % chunk.group(1))
open(sys.argv[3], 'w').write('\n'.join(out))
