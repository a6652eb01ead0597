/* try_softmax_l2.cu: row softmax at rows of 262144 through L2 instead of a
 * shared-memory ring (issue 16: the long-row target 0.90 of the copy rate,
 * not met on the H200). A prototype, not gpuc's code; not yet run on a GPU.
 *
 * gpuc's long-row kernel (backend/cuda/rows.c, NAME_st) and the prototype
 * it came from (bench/try_softmax_stream.cu) move every chunk with bulk
 * copies through a ring in shared memory, one 640-thread block an SM. On
 * the H200 even that prototype with no exchange at all reached only
 * 0.877-0.888 of the copy rate (docs/performance.md, eleventh round),
 * while plain vector loads and stores at full occupancy reach the copy
 * rate (saxpy 1.02). So this kernel keeps the stream's order and exchange
 * but not its ring: a persistent grid at full occupancy takes chunk
 * b, b + G, b + 2G, ... (b its block, G the grid); at step j a block
 *   1. loads chunk j's CH floats with 16-byte loads, folds them into
 *      (max, sum of exp), stores the pair and counts it on the row's counter
 *      (a release reduction), and
 *   2. takes chunk j - L again: waits (acquire) until the row's counter is
 *      the row's chunk count, combines the row's pairs, reloads the chunk
 *      (it was read L steps ago, so it should still be in L2: L x G x CH x 4
 *      bytes, 17 MiB for L 2, G 264, CH 8192, of the H200's 50 MB) and
 *      writes exp(x - max) / sum with streaming stores.
 * DRAM sees each element read once and written once if the reloads hit L2;
 * L2 sees the reads twice. Deadlock-free when the whole grid is resident
 * and a row spans at most L steps of it (as NAME_st; the host checks both).
 * Variants: threads a block, chunk size, lag, and an L2 evict_last policy
 * on the first loads (HINT 1) so the reloads find them. Every result is
 * compared with a double-precision host softmax of every row (random data
 * in [-8, 8), output poisoned with NaN first); times are medians of 20
 * calls with an event pair each (the counters' memset inside), after 3
 * warm-ups; the copy rate (cudaMemcpy device to device, 1 GiB read and
 * written) in the same process, before and after (bench/try_common.cuh).
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler -fopenmp -o bench/bin/try_softmax_l2 bench/try_softmax_l2.cu
 * Run:   bench/bin/try_softmax_l2 [ROW_LENGTH ...]   (default 262144 32768) */
#include "try_common.cuh"

/* the block's combination of every thread's pair, in every thread */
template <int T>
static __device__ __forceinline__ MS ms_block(MS v, MS *sh) {
    v = ms_warp(v);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < T / 32 ? sh[threadIdx.x & 31] : MS{-INFINITY, 0.f};
    v = ms_warp(v);
    __syncthreads();  /* sh is rewritten by the next call */
    return v;
}

/* a 16-byte load, with an L2 evict_last policy when HINT (kept for the reload) */
template <int HINT>
static __device__ __forceinline__ float4 ld_first(const float4 *p, unsigned long long policy) {
    if (!HINT) return __ldg(p);
    float4 v;
    asm volatile("ld.global.nc.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(policy));
    return v;
}

template <int T, int CH, int L, int HINT>
__global__ void __launch_bounds__(T) softmax_l2(const float *__restrict__ x, float *__restrict__ y, long long nchunks,
                                                int ppr, MS *__restrict__ part, unsigned *__restrict__ cnt) {
    static_assert(CH % (4 * T) == 0, "whole 16-byte vectors a thread");
    constexpr int V = CH / (4 * T);  /* vectors a thread a chunk */
    __shared__ MS sh[32];
    __shared__ MS tot;
    unsigned long long policy = 0;
    if (HINT) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    const long long G = gridDim.x;
    const long long count = nchunks > blockIdx.x ? (nchunks - blockIdx.x + G - 1) / G : 0;
    for (long long j = 0; j < count + L; j++) {
        if (j < count) {  /* 1. fold chunk j, publish its pair */
            const long long c = blockIdx.x + j * G;
            const float4 *p = (const float4 *)(x + c * CH) + threadIdx.x;
            float4 q[V];
#pragma unroll
            for (int v = 0; v < V; v++) q[v] = ld_first<HINT>(p + v * T, policy);
            float m = -INFINITY;
#pragma unroll
            for (int v = 0; v < V; v++) m = fmaxf(m, fmaxf(fmaxf(q[v].x, q[v].y), fmaxf(q[v].z, q[v].w)));
            float s = 0.f;
#pragma unroll
            for (int v = 0; v < V; v++) s += __expf(q[v].x - m) + __expf(q[v].y - m) + __expf(q[v].z - m) + __expf(q[v].w - m);
            const MS b = ms_block<T>({m, s}, sh);
            if (threadIdx.x == 0) {
                __stcg((float2 *)&part[c], make_float2(b.m, b.s));
                count_release(&cnt[c / ppr]);
            }
        }
        if (j >= L) {  /* 2. chunk j - L: the row's totals, the chunk again, normalized */
            const long long k = blockIdx.x + (j - L) * G;
            const long long row = k / ppr;
            if (threadIdx.x == 0) {
                while (ld_acquire(&cnt[row]) < (unsigned)ppr) __nanosleep(64);
            }
            __syncthreads();
            MS r = {-INFINITY, 0.f};
            for (int i = threadIdx.x; i < ppr; i += T) {
                const float2 w = __ldcg((const float2 *)&part[row * ppr + i]);
                r = ms_comb(r, {w.x, w.y});
            }
            r = ms_block<T>(r, sh);
            if (threadIdx.x == 0) tot = r;
            __syncthreads();
            const float mx = tot.m, inv = 1.f / tot.s;
            const float4 *p = (const float4 *)(x + k * CH) + threadIdx.x;
            float4 *o = (float4 *)(y + k * CH) + threadIdx.x;
#pragma unroll
            for (int v = 0; v < V; v++) {
                float4 a = __ldcs(p + v * T);
                a.x = __expf(a.x - mx) * inv;
                a.y = __expf(a.y - mx) * inv;
                a.z = __expf(a.z - mx) * inv;
                a.w = __expf(a.w - mx) * inv;
                __stcs(o + v * T, a);
            }
        }
    }
}

int main(int argc, char **argv) {
    const long long n = 1ll << 28;
    MS *part;
    unsigned *cnt;
    CK(cudaMalloc(&part, (n / 1024) * sizeof(MS)));  /* chunks of 1024 floats or more */
    CK(cudaMalloc(&cnt, (n / 4096) * sizeof(unsigned)));  /* rows of 4096 or more */
    return softmax_main(argc, argv, "try_softmax_l2", 4096, [&](const SoftmaxCase &c, auto &&one) {
#define V(T, CH, L, H) one(#T " threads, " #CH " floats, lag " #L ", hint " #H, [&](int *g, int *r) { \
            return run_exchange(softmax_l2<T, CH, L, H>, T, CH, L, c, part, cnt, g, r); })
        V(512, 8192, 2, 0);
        V(512, 8192, 2, 1);
        V(512, 8192, 1, 1);
        V(512, 8192, 4, 1);
        V(256, 4096, 2, 1);
        V(1024, 8192, 2, 1);
        V(512, 16384, 2, 1);
        V(512, 8192, 2, 0);  /* the first again: drift */
#undef V
    });
}
