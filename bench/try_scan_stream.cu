/* try_scan_stream.cu: the streaming form of bench/try_softmax_stream.cu for
 * an inclusive scan (issue 16: the H200's 4-byte scans are 8-10% short of
 * 0.90 of the copy rate, the H100's 0.4-0.5%). A prototype, not gpuc's code.
 *
 * gpuc's scan (backend/cuda/scan.c, SCAN BULK 2) runs one 56 KiB tile a
 * block, 4 blocks an SM: each block waits for its one bulk load, then at its
 * barriers and its look-back, with nothing else in flight (seventh round's
 * profile). Here a persistent grid of one block an SM takes tiles b, b + G,
 * b + 2G, ... (static: every block is resident, so a tile's predecessors are
 * all running or done) through a ring of S shared-memory slots:
 *   producer   one thread: bulk loads into the ring (mbarrier full[s]); bulk
 *              stores of scanned tiles (after done[s]); a slot is reloaded
 *              once the store D behind has read it;
 *   consumers  NC warps, each a contiguous part of the tile: its total to
 *              shared memory (pready[s]); L tiles later, with its offset
 *              (totready[s]), the part scanned in place (done[s]);
 *   publisher  one warp: the tile's aggregate, status 1 in a 64-bit word
 *              {value, status} (an atomic maximum, so that it never
 *              overwrites the status 2 a look-back warp may have put there
 *              first), as soon as the consumers' totals are in;
 *   look-back  GW warps, tiles in turn: the decoupled look-back (Merrill and
 *              Garland) over 32 predecessors at a time, then the tile's
 *              inclusive prefix, status 2, and each consumer warp's offset.
 * A second kernel (scan_ws_dyn) takes the tiles in order from a counter,
 * so that it needs no co-residency; it is timed with the resident grid and
 * with a grid twice that (half of it waits to start: the static form would
 * hang there).
 * Values are int32 (wrapping sums: every result checked exactly against a
 * host scan, on fresh random data). The status words are zeroed by a memset
 * inside the timing, as gpuc does. Times: medians of 20 calls, CUDA events,
 * after 3 warm-ups; the copy rate (cudaMemcpy device to device, 1 GiB)
 * in the same process.
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 -o bench/bin/try_scan_stream bench/try_scan_stream.cu
 * Run:   bench/bin/try_scan_stream */
#include "try_common.cuh"

static __device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
static __device__ __forceinline__ void bar_init(uint64_t *bar, unsigned n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_addr(bar)), "r"(n) : "memory");
}
static __device__ __forceinline__ void bar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(smem_addr(bar)) : "memory");
}
static __device__ __forceinline__ void bar_wait(uint64_t *bar, unsigned parity) {
    unsigned done = 0;
    while (!done) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
    }
}
static __device__ __forceinline__ uint64_t evict_first(void) {
    uint64_t p;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}
template <int HINT> static __device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes, uint64_t *bar) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
    if (HINT)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                     :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)), "l"(evict_first()) : "memory");
    else
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}
template <int HINT> static __device__ __forceinline__ void bulk_store(void *dst, const void *src, unsigned bytes) {
    if (HINT)
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;\n\tcp.async.bulk.commit_group;"
                     :: "l"(dst), "r"(smem_addr(src)), "r"(bytes), "l"(evict_first()) : "memory");
    else
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n\tcp.async.bulk.commit_group;"
                     :: "l"(dst), "r"(smem_addr(src)), "r"(bytes) : "memory");
}
template <int D> static __device__ __forceinline__ void bulk_wait_read(void) {
    asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(D) : "memory");
}
static __device__ __forceinline__ unsigned long long ld_relaxed64(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
static __device__ __forceinline__ int warp_incl(int v, int lane) {
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int u = __shfl_up_sync(~0u, v, o);
        if (lane >= o) v += u;
    }
    return v;
}
static __device__ __forceinline__ int warp_sum(int v) {
#pragma unroll
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(~0u, v, o);
    return v;
}

template <int NC, int GW, int CH, int S, int L, int D, int HINT>
__global__ void __launch_bounds__((NC + GW + 2) * 32, 1)
scan_ws(const int *__restrict__ x, int *__restrict__ y, long long ntiles, unsigned long long *__restrict__ words) {
    constexpr int WE = CH / NC;            /* elements a consumer warp */
    constexpr int V = WE / 128;            /* int4 a lane */
    static_assert(WE % 128 == 0, "whole vectors a lane");
    static_assert(L + D < S, "slots for the lag, the pending stores and the loads in flight");
    extern __shared__ __align__(128) int4 ring[];
    __shared__ uint64_t full[S], pready[S], totready[S], done[S];
    __shared__ int wtot[S][NC], woff[S][NC];
    const int t = threadIdx.x, w = t >> 5, lane = t & 31;
    const long long G = gridDim.x;
    const long long nb = ntiles > blockIdx.x ? (ntiles - blockIdx.x + G - 1) / G : 0;
    if (t == 0) {
        for (int s = 0; s < S; s++) {
            bar_init(&full[s], 1);
            bar_init(&pready[s], NC);
            bar_init(&totready[s], 1);
            bar_init(&done[s], NC * 32 + 1);   /* the consumers' threads and the publisher */
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (w < NC) {
        for (long long j = 0; j < nb + L; j++) {
            if (j < nb) {
                /* the warp's total of its part */
                const int s = (int)(j % S);
                bar_wait(&full[s], (unsigned)((j / S) & 1));
                const int4 *c = ring + s * (CH / 4) + w * (WE / 4);
                int v = 0;
#pragma unroll
                for (int k = 0; k < V; k++) {
                    const int4 q = c[lane + 32 * k];
                    v += q.x + q.y + q.z + q.w;
                }
                v = warp_sum(v);
                if (lane == 0) {
                    wtot[s][w] = v;
                    bar_arrive(&pready[s]);
                }
            }
            if (j >= L) {
                /* tile k = j - L: its part scanned in place from the warp's offset */
                const long long k = j - L;
                const int s = (int)(k % S);
                bar_wait(&totready[s], (unsigned)((k / S) & 1));
                int carry = woff[s][w];
                int4 *c = ring + s * (CH / 4) + w * (WE / 4);
#pragma unroll
                for (int i = 0; i < V; i++) {
                    int4 q = c[lane + 32 * i];
                    q.y += q.x;
                    q.z += q.y;
                    q.w += q.z;
                    const int incl = warp_incl(q.w, lane);
                    const int before = carry + incl - q.w;
                    q.x += before;
                    q.y += before;
                    q.z += before;
                    q.w += before;
                    c[lane + 32 * i] = q;
                    carry += __shfl_sync(~0u, incl, 31);
                }
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                bar_arrive(&done[s]);
            }
        }
    } else if (w == NC) {
        /* the publisher: each tile's aggregate (status 1), or its inclusive prefix (status 2) for tile 0 */
        for (long long j = 0; j < nb; j++) {
            const int s = (int)(j % S);
            bar_wait(&pready[s], (unsigned)((j / S) & 1));
            const int v = warp_sum(lane < NC ? wtot[s][lane] : 0);
            const long long tile = blockIdx.x + j * G;
            if (lane == 0) {
                /* a maximum: the look-back warp's status 2 may be there already */
                atomicMax(&words[tile], (unsigned long long)(unsigned)v | ((unsigned long long)(tile == 0 ? 2 : 1) << 32));
                bar_arrive(&done[s]);   /* it has read wtot[s]: the slot may be reloaded */
            }
        }
    } else if (w <= NC + GW) {
        /* look-back warps, tiles in turn */
        const int g = w - NC - 1;
        for (long long k = g; k < nb; k += GW) {
            const int s = (int)(k % S);
            bar_wait(&pready[s], (unsigned)((k / S) & 1));
            const int wv = lane < NC ? wtot[s][lane] : 0;
            const int agg = warp_sum(wv);
            const long long tile = blockIdx.x + k * G;
            int prefix = 0;
            long long j = tile - 1;
            while (j >= 0) {
                /* lane l: tile j - l; wait until none of the 32 is unpublished */
                const long long q = j - lane;
                unsigned long long word;
                for (;;) {
                    word = q >= 0 ? ld_relaxed64(&words[q]) : (2ull << 32);
                    if (!__any_sync(~0u, (word >> 32) == 0)) break;
                    __nanosleep(32);
                }
                const unsigned p2 = __ballot_sync(~0u, (word >> 32) == 2);
                /* the nearest inclusive prefix at lane f: lanes 0..f count, lanes past it do not */
                const int f = p2 ? __ffs(p2) - 1 : 32;
                int v = lane <= f ? (int)(unsigned)word : 0;
                prefix += warp_sum(v);
                if (p2) break;
                j -= 32;
            }
            if (lane == 0 && tile != 0)
                atomicMax(&words[tile], (unsigned long long)(unsigned)(prefix + agg) | (2ull << 32));
            /* each consumer warp's offset: the prefix and the warps before it */
            const int ex = warp_incl(wv, lane) - wv;
            if (lane < NC) woff[s][lane] = prefix + ex;
            __syncwarp();
            if (lane == 0) bar_arrive(&totready[s]);
        }
    } else if (lane == 0) {
        /* the producer */
        for (long long j = 0; j < S && j < nb; j++)
            bulk_load<HINT>(ring + j * (CH / 4), x + (blockIdx.x + j * G) * CH, CH * 4, &full[j]);
        for (long long k = 0; k < nb; k++) {
            const int s = (int)(k % S);
            bar_wait(&done[s], (unsigned)((k / S) & 1));
            bulk_store<HINT>(y + (blockIdx.x + k * G) * CH, ring + s * (CH / 4), CH * 4);
            const long long r = k - D;
            if (r >= 0 && r + S < nb) {
                bulk_wait_read<D>();
                bulk_load<HINT>(ring + (r % S) * (CH / 4), x + (blockIdx.x + (r + S) * G) * CH, CH * 4, &full[r % S]);
            }
        }
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}

/* The same with tiles taken in order from a counter (words[ntiles]) instead
 * of tile b + jG: the producer claims a tile as it fills a slot, so a tile's
 * predecessors were all claimed earlier, by blocks that are running or done,
 * and the kernel needs no co-residency (the static form hangs where part of
 * its grid cannot start: MPS limits, green contexts, another such kernel).
 * The producer writes the slot's tile (tile_of) before its arrival on full;
 * past the last tile it writes -1 and the block's end (s_end), and every
 * warp stops there. */
static __device__ __forceinline__ bool bar_try(uint64_t *bar, unsigned parity) {
    unsigned done;
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
    return done != 0;
}
static __device__ __forceinline__ void bar_arrive1(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_addr(bar)) : "memory");
}

template <int NC, int GW, int CH, int S, int L, int D>
__global__ void __launch_bounds__((NC + GW + 2) * 32, 1)
scan_ws_dyn(const int *__restrict__ x, int *__restrict__ y, long long ntiles, unsigned long long *__restrict__ words) {
    constexpr int WE = CH / NC;
    constexpr int V = WE / 128;
    static_assert(WE % 128 == 0, "whole vectors a lane");
    static_assert(L + D < S, "slots for the lag, the pending stores and the loads in flight");
    constexpr long long NONE = 0x7fffffffffffffffll;
    extern __shared__ __align__(128) int4 ring[];
    __shared__ uint64_t full[S], pready[S], totready[S], done[S];
    __shared__ int wtot[S][NC], woff[S][NC];
    __shared__ long long tile_of[S];
    __shared__ long long s_end;
    const int t = threadIdx.x, w = t >> 5, lane = t & 31;
    if (t == 0) {
        for (int s = 0; s < S; s++) {
            bar_init(&full[s], 1);
            bar_init(&pready[s], NC);
            bar_init(&totready[s], 1);
            bar_init(&done[s], NC * 32 + 1);
        }
        s_end = NONE;
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (w < NC) {
        long long end = NONE;
        for (long long j = 0;; j++) {
            if (j < end) {
                const int s = (int)(j % S);
                bar_wait(&full[s], (unsigned)((j / S) & 1));
                if (tile_of[s] < 0) {
                    end = j;
                } else {
                    const int4 *c = ring + s * (CH / 4) + w * (WE / 4);
                    int v = 0;
#pragma unroll
                    for (int k = 0; k < V; k++) {
                        const int4 q = c[lane + 32 * k];
                        v += q.x + q.y + q.z + q.w;
                    }
                    v = warp_sum(v);
                    if (lane == 0) wtot[s][w] = v;
                }
                if (lane == 0) bar_arrive(&pready[s]);   /* at the end too: the publisher stops there */
            }
            if (j >= L && j - L < end) {
                const long long k = j - L;
                const int s = (int)(k % S);
                bar_wait(&totready[s], (unsigned)((k / S) & 1));
                int carry = woff[s][w];
                int4 *c = ring + s * (CH / 4) + w * (WE / 4);
#pragma unroll
                for (int i = 0; i < V; i++) {
                    int4 q = c[lane + 32 * i];
                    q.y += q.x;
                    q.z += q.y;
                    q.w += q.z;
                    const int incl = warp_incl(q.w, lane);
                    const int before = carry + incl - q.w;
                    q.x += before;
                    q.y += before;
                    q.z += before;
                    q.w += before;
                    c[lane + 32 * i] = q;
                    carry += __shfl_sync(~0u, incl, 31);
                }
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                bar_arrive(&done[s]);
            }
            if (j >= L && j - L + 1 >= end) break;
        }
    } else if (w == NC) {
        for (long long j = 0;; j++) {
            const int s = (int)(j % S);
            bar_wait(&pready[s], (unsigned)((j / S) & 1));
            const long long tile = tile_of[s];
            if (tile < 0) break;
            const int v = warp_sum(lane < NC ? wtot[s][lane] : 0);
            if (lane == 0) {
                atomicMax(&words[tile], (unsigned long long)(unsigned)v | ((unsigned long long)(tile == 0 ? 2 : 1) << 32));
                bar_arrive(&done[s]);
            }
        }
    } else if (w <= NC + GW) {
        const int g = w - NC - 1;
        for (long long k = g;; k += GW) {
            const int s = (int)(k % S);
            /* the slot's phase, or the block's end before it (no phase comes then) */
            int go = 0;
            if (lane == 0) {
                for (;;) {
                    if (bar_try(&pready[s], (unsigned)((k / S) & 1))) { go = 1; break; }
                    if (*(volatile long long *)&s_end <= k) break;
                }
            }
            go = __shfl_sync(~0u, go, 0);
            if (!go) break;
            bar_wait(&pready[s], (unsigned)((k / S) & 1));   /* complete: every lane's acquire */
            const long long tile = tile_of[s];
            if (tile < 0) break;
            const int wv = lane < NC ? wtot[s][lane] : 0;
            const int agg = warp_sum(wv);
            int prefix = 0;
            long long j = tile - 1;
            while (j >= 0) {
                const long long q = j - lane;
                unsigned long long word;
                for (;;) {
                    word = q >= 0 ? ld_relaxed64(&words[q]) : (2ull << 32);
                    if (!__any_sync(~0u, (word >> 32) == 0)) break;
                    __nanosleep(32);
                }
                const unsigned p2 = __ballot_sync(~0u, (word >> 32) == 2);
                const int f = p2 ? __ffs(p2) - 1 : 32;
                prefix += warp_sum(lane <= f ? (int)(unsigned)word : 0);
                if (p2) break;
                j -= 32;
            }
            if (lane == 0 && tile != 0)
                atomicMax(&words[tile], (unsigned long long)(unsigned)(prefix + agg) | (2ull << 32));
            const int ex = warp_incl(wv, lane) - wv;
            if (lane < NC) woff[s][lane] = prefix + ex;
            __syncwarp();
            if (lane == 0) bar_arrive(&totready[s]);
        }
    } else if (lane == 0) {
        /* the producer: slot j gets the next tile from the counter, or the end */
        long long end = NONE;
        auto fill = [&](long long j) {
            const int s = (int)(j % S);
            const unsigned long long tile = atomicAdd(&words[ntiles], 1ull);
            if (tile >= (unsigned long long)ntiles) {
                tile_of[s] = -1;
                *(volatile long long *)&s_end = j;
                end = j;
                bar_arrive1(&full[s]);
            } else {
                tile_of[s] = (long long)tile;
                bulk_load<0>(ring + s * (CH / 4), x + (long long)tile * CH, CH * 4, &full[s]);
            }
        };
        for (long long j = 0; j < S && end == NONE; j++) fill(j);
        for (long long k = 0; k < end; k++) {
            const int s = (int)(k % S);
            bar_wait(&done[s], (unsigned)((k / S) & 1));
            bulk_store<0>(y + tile_of[s] * CH, ring + s * (CH / 4), CH * 4);
            const long long r = k - D;
            if (r >= 0 && end == NONE) {
                bulk_wait_read<D>();
                fill(r + S);
            }
        }
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}

template <int NC, int GW, int CH, int S, int L, int D>
static float run_dyn(const int *x, int *y, long long n, unsigned long long *words, int nsm, int grid_scale, int *grid_out) {
    auto kern = scan_ws_dyn<NC, GW, CH, S, L, D>;
    constexpr int T = (NC + GW + 2) * 32;
    const size_t smem = (size_t)S * CH * 4;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, T, smem));
    if (per_sm < 1) { fprintf(stderr, "variant does not fit\n"); exit(2); }
    const int grid = per_sm * nsm * grid_scale;   /* grid_scale 2: half the grid cannot start at first */
    *grid_out = grid;
    const long long ntiles = n / CH;
    return median_us([&] {
        CK(cudaMemsetAsync(words, 0, (ntiles + 1) * sizeof(unsigned long long)));
        kern<<<grid, T, smem>>>(x, y, ntiles, words);
    });
}

template <int NC, int GW, int CH, int S, int L, int D, int HINT>
static float run(const int *x, int *y, long long n, unsigned long long *words, int nsm, int *grid_out) {
    auto kern = scan_ws<NC, GW, CH, S, L, D, HINT>;
    constexpr int T = (NC + GW + 2) * 32;
    const size_t smem = (size_t)S * CH * 4;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, T, smem));
    if (per_sm < 1) { fprintf(stderr, "variant does not fit\n"); exit(2); }
    const int grid = per_sm * nsm;
    *grid_out = grid;
    const long long ntiles = n / CH;
    return median_us([&] {
        CK(cudaMemsetAsync(words, 0, ntiles * sizeof(unsigned long long)));
        kern<<<grid, T, smem>>>(x, y, ntiles, words);
    });
}

int main() {
    const long long n = 1ll << 28;
    cudaDeviceProp prop;
    const int nsm = device_sms(&prop);
    int *x, *y;
    unsigned long long *words;
    CK(cudaMalloc(&x, n * 4));
    CK(cudaMalloc(&y, n * 4));
    CK(cudaMalloc(&words, (n / 2048 + 1) * sizeof(unsigned long long)));
    std::vector<int> hx(n), hy(n), ref(n);
    uint64_t st = 0x9e3779b97f4a7c15ull ^ (uint64_t)time(nullptr);
    for (long long i = 0; i < n; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        hx[i] = (int)(st >> 33);
    }
    unsigned acc = 0;
    for (long long i = 0; i < n; i++) { acc += (unsigned)hx[i]; ref[i] = (int)acc; }
    CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
    const double gbs0 = copy_rate(y, x, n * 4);
    printf("device %s, %d SMs; copy rate %.1f GB/s\n", prop.name, nsm, gbs0);
    printf("| inclusive scan, i32, 2^28 | blocks | us | of copy rate | check |\n|---|---|---|---|---|\n");
    int bad = 0;
    auto one = [&](const char *name, auto fn) {
        CK(cudaMemset(y, 0xff, n * 4));
        int grid = 0;
        const float us = fn(&grid);
        CK(cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost));
        long long first = -1;
        for (long long i = 0; i < n && first < 0; i++) if (hy[i] != ref[i]) first = i;
        bad += first >= 0;
        printf("| %s | %d | %.1f | %.3f | ", name, grid, us, 2.0 * n * 4 / us / 1e3 / gbs0);
        if (first < 0) printf("ok |\n");
        else printf("WRONG at %lld: %d, expected %d |\n", first, hy[first], ref[first]);
        fflush(stdout);
    };
#define W(NC, GW, CH, S, L, D, H) one(#NC " consumers, " #GW " look-back, " #CH " items, " #S " slots, lag " #L ", " #D " stores, hint " #H, \
        [&](int *g) { return run<NC, GW, CH, S, L, D, H>(x, y, n, words, nsm, g); })
    W(16, 2, 8192, 6, 2, 1, 0);
    W(16, 4, 8192, 6, 2, 1, 0);
    W(16, 2, 8192, 6, 2, 1, 1);
    W(16, 4, 4096, 13, 4, 2, 0);
    W(8, 4, 4096, 13, 5, 2, 0);
    W(16, 4, 4096, 13, 5, 2, 1);
    /* tiles from a counter: no co-residency needed (a grid twice the resident blocks must not hang) */
    one("dynamic tiles: 16 consumers, 2 look-back, 8192 items, 6 slots, lag 2, 1 store", [&](int *g) { return run_dyn<16, 2, 8192, 6, 2, 1>(x, y, n, words, nsm, 1, g); });
    one("dynamic tiles, a grid of twice the resident blocks", [&](int *g) { return run_dyn<16, 2, 8192, 6, 2, 1>(x, y, n, words, nsm, 2, g); });
    W(16, 2, 8192, 6, 2, 1, 0);   /* the first again: drift */
#undef W
    printf("copy rate after: %.1f GB/s\n", copy_rate(y, x, n * 4));
    return bad ? 1 : 0;
}
