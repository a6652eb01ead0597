/* scan_stream_emu.h: a CPU emulation of what the SCAN BULK 3 WIDE kernels
 * (backend/cuda/scan.c, grep "SCAN BULK 3 WIDE") use, so that a generated
 * <name>_stream kernel runs as C++ on a machine without a GPU
 * (scan_stream_wide_emu.test): one process a block (fork: __shared__ are
 * statics), one pthread a CUDA thread, global memory in a MAP_SHARED
 * mapping; warp collectives through per-warp barriers; mbarriers with
 * phases, pending arrivals and transaction bytes (a bulk load lands a little
 * after its arrival); 16-byte status words under a lock (single-copy
 * atomic). It checks the kernel's indexing, the order of its combines, its
 * barrier counts and phases, and its tile order: not the GPU's memory model
 * (x86 with locks is stronger), the async proxy or the timing of bulk stores
 * (synchronous here). scan_stream_emu.py turns a kernel into a program;
 * row_stream_emu.py does the same for the long-row stream kernel (rows.c,
 * "ROW STREAM", row_stream_emu.test). */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <math.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <map>
#include <mutex>
#include <condition_variable>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define GPUC_SCAN_STREAM_DEVICE 1
#ifndef GPUC_SCAN_BULK_DEVICE
#define GPUC_SCAN_BULK_DEVICE 1
#endif
struct uint4 { unsigned x, y, z, w; };
struct dim3e { unsigned x, y, z; };
static thread_local dim3e threadIdx;
static dim3e blockIdx, gridDim;
static unsigned char emu_anchor[16];
static unsigned char emu_ring[229376] __attribute__((aligned(128)));  /* 7 slots of 32 KiB: the most an SM holds */
static inline unsigned gpuc_smem32(const void *p) { return (unsigned)((intptr_t)p - (intptr_t)emu_anchor + 0x40000000); }
static inline unsigned char *emu_ptr(unsigned a) { return (unsigned char *)((intptr_t)emu_anchor + ((intptr_t)a - 0x40000000)); }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
static inline long long __double_as_longlong(double f) { long long u; memcpy(&u, &f, 8); return u; }
static inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static inline void __trap(void) { abort(); }
// ---- warps ----
static pthread_barrier_t emu_warp_bar[32];
static unsigned long long emu_xchg[32][32];
static pthread_barrier_t emu_block_bar;
static inline void __syncthreads(void) { pthread_barrier_wait(&emu_block_bar); }
static inline void __syncwarp(void) { pthread_barrier_wait(&emu_warp_bar[threadIdx.x >> 5]); }
template <class T> static T emu_pick(T v, int src) {
    unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31;
    unsigned long long bits = 0; memcpy(&bits, &v, sizeof v);
    emu_xchg[w][l] = bits;
    pthread_barrier_wait(&emu_warp_bar[w]);
    unsigned long long r = emu_xchg[w][src];
    pthread_barrier_wait(&emu_warp_bar[w]);
    T out; memcpy(&out, &r, sizeof out); return out;
}
template <class T> static T __shfl_sync(unsigned, T v, int src) { return emu_pick(v, src & 31); }
template <class T> static T gpuc_shfl_up(T v, int d) { int l = threadIdx.x & 31; return emu_pick(v, l - d >= 0 ? l - d : l); }
template <class T> static T gpuc_shfl_down(T v, int d) { int l = threadIdx.x & 31; return emu_pick(v, l + d < 32 ? l + d : l); }
static unsigned __ballot_sync(unsigned, bool p) {
    unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31;
    emu_xchg[w][l] = p;
    pthread_barrier_wait(&emu_warp_bar[w]);
    unsigned m = 0; for (int i = 0; i < 32; i++) { if (emu_xchg[w][i]) { m |= 1u << i; } }
    pthread_barrier_wait(&emu_warp_bar[w]);
    return m;
}
static bool __any_sync(unsigned m, bool p) { return __ballot_sync(m, p) != 0; }
static inline void gpuc_backoff(void) { sched_yield(); }
// ---- global memory: words under a process-shared lock (16-byte single-copy atomicity) ----
static int *emu_glock;
static void emu_lock(void) { while (__atomic_exchange_n(emu_glock, 1, __ATOMIC_ACQUIRE)) { sched_yield(); } }
static void emu_unlock(void) { __atomic_store_n(emu_glock, 0, __ATOMIC_RELEASE); }
static void gpuc_st_word2(unsigned long long *p, unsigned long long v, unsigned long long s) { emu_lock(); p[0] = v; p[1] = s; emu_unlock(); }
static void gpuc_ld_word2(const unsigned long long *p, unsigned long long *v, unsigned long long *s) { emu_lock(); *v = p[0]; *s = p[1]; emu_unlock(); }
static void gpuc_st_word(unsigned long long *p, unsigned long long v) { emu_lock(); *p = v; emu_unlock(); }
static unsigned long long gpuc_ld_word(const unsigned long long *p) { emu_lock(); unsigned long long v = *p; emu_unlock(); return v; }
// ---- shared memory scalars ----
#define EMU_LS(S, T) static inline void gpuc_sts_##S(unsigned a, T v) { memcpy(emu_ptr(a), &v, sizeof v); } \
    static inline T gpuc_lds_##S(unsigned a) { T v; memcpy(&v, emu_ptr(a), sizeof v); return v; }
EMU_LS(f32, float) EMU_LS(f64, double) EMU_LS(i32, int32_t) EMU_LS(u32, uint32_t) EMU_LS(i64, int64_t) EMU_LS(u64, uint64_t)
// ---- mbarriers ----
struct EmuBar { std::mutex m; std::condition_variable cv; int count = 0, pending = 0; long tx = 0; unsigned phase = 0; bool init = false; };
static std::mutex emu_bars_m;
static std::map<unsigned, EmuBar *> emu_bars;
static EmuBar *emu_bar(unsigned a) { std::lock_guard<std::mutex> g(emu_bars_m); EmuBar *&b = emu_bars[a]; if (!b) { b = new EmuBar; } return b; }
static void emu_check(EmuBar *b) { if (b->pending == 0 && b->tx == 0) { b->phase++; b->pending = b->count; b->cv.notify_all(); } }
static void gpuc_ss_init(unsigned a, unsigned n) { EmuBar *b = emu_bar(a); std::lock_guard<std::mutex> g(b->m); if (b->init) { fprintf(stderr, "EMU: barrier initialised twice\n"); abort(); } b->init = true; b->count = b->pending = (int)n; }
static void gpuc_ss_arrive(unsigned a) {
    EmuBar *b = emu_bar(a); std::lock_guard<std::mutex> g(b->m);
    if (!b->init) { fprintf(stderr, "EMU: arrive on an uninitialised barrier\n"); abort(); }
    if (b->pending <= 0) { fprintf(stderr, "EMU: too many arrivals\n"); abort(); }
    b->pending--; emu_check(b);
}
static void gpuc_ss_wait(unsigned a, unsigned parity) {
    EmuBar *b = emu_bar(a); std::unique_lock<std::mutex> g(b->m);
    b->cv.wait(g, [&] { return (b->phase & 1u) != parity; });
}
static long emu_bulk_loads, emu_bulk_stores;
static void gpuc_ss_load(unsigned dst, const void *src, unsigned bytes, unsigned a) {
    if ((dst & 15) || ((uintptr_t)src & 15) || (bytes & 15)) { fprintf(stderr, "EMU: misaligned bulk load\n"); abort(); }
    EmuBar *b = emu_bar(a);
    { std::lock_guard<std::mutex> g(b->m); b->tx += bytes; b->pending--; if (b->pending < 0) { fprintf(stderr, "EMU: too many arrivals (load)\n"); abort(); } emu_check(b); }
    usleep(rand() % 50);  /* the copy lands a little later */
    memcpy(emu_ptr(dst), src, bytes);
    __atomic_add_fetch(&emu_bulk_loads, 1, __ATOMIC_RELAXED);
    { std::lock_guard<std::mutex> g(b->m); b->tx -= bytes; emu_check(b); }
}
static void gpuc_ss_store(void *dst, unsigned src, unsigned bytes) {
    if ((src & 15) || ((uintptr_t)dst & 15) || (bytes & 15)) { fprintf(stderr, "EMU: misaligned bulk store\n"); abort(); }
    memcpy(dst, emu_ptr(src), bytes);
    __atomic_add_fetch(&emu_bulk_stores, 1, __ATOMIC_RELAXED);
}
static void gpuc_ss_store_read(void) {}
static void gpuc_sb_store_done(void) {}
static void gpuc_sb_fence(void) {}
// ---- the grid ----
/* Run fn on every thread of `grid` blocks of `threads` threads, all at once
 * (a persistent grid's blocks wait on each other): a process a block, a
 * pthread a thread. 0 when every block finished. */
static int emu_run_grid(unsigned grid, int threads, void *(*fn)(void *)) {
    blockIdx.y = blockIdx.z = 0; gridDim.x = grid; gridDim.y = gridDim.z = 1;
    for (unsigned b = 0; b < grid; b++) {
        if (fork() == 0) {
            blockIdx.x = b;
            for (int w = 0; w < 32; w++) { pthread_barrier_init(&emu_warp_bar[w], NULL, 32); }
            pthread_barrier_init(&emu_block_bar, NULL, (unsigned)threads);
            pthread_attr_t at; pthread_attr_init(&at); pthread_attr_setstacksize(&at, 1 << 18);
            pthread_t *th = (pthread_t *)malloc(sizeof *th * (size_t)threads);
            for (int t = 0; t < threads; t++) { if (pthread_create(&th[t], &at, fn, (void *)(uintptr_t)t)) { fprintf(stderr, "pthread_create\n"); _exit(3); } }
            for (int t = 0; t < threads; t++) { pthread_join(th[t], NULL); }
            fprintf(stderr, "block %u: %ld bulk loads, %ld bulk stores\n", b, emu_bulk_loads, emu_bulk_stores);
            _exit(0);
        }
    }
    int bad = 0;
    for (unsigned b = 0; b < grid; b++) { int st; wait(&st); if (!WIFEXITED(st) || WEXITSTATUS(st)) { bad = 1; } }
    return bad;
}
