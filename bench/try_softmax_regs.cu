/* try_softmax_regs.cu: row softmax at rows of 262144 with the long-row
 * stream's order and exchange but its ring in registers (issue 16: the
 * long-row target 0.90 of the copy rate, 0.864 on the H200 in the latest
 * whole run). A prototype, not gpuc's code. Run on an H200 (2026-11-28,
 * session 15, call A): correct, and 0.28-0.52 of the copy rate in every
 * variant against gpuc's ring's 0.864 in the same call (a block's loads
 * stop while it waits for its row): dropped (docs/performance.md,
 * fourteenth round).
 *
 * What the earlier prototypes showed (docs/performance.md, eleventh and
 * thirteenth rounds): gpuc's kernel (backend/cuda/rows.c, NAME_st) moves
 * every chunk through a ring of shared memory with bulk copies, one block
 * an SM, and even with no exchange at all that structure reached only
 * 0.877-0.888; reloading each chunk from L2 instead (try_softmax_l2.cu)
 * reached 0.61-0.65, because a block waiting for its row had nothing in
 * flight and every chunk crossed L2 twice. Plain 16-byte loads and
 * stores at full occupancy reach the copy rate (saxpy 1.02). So here each
 * thread keeps its part of the chunks in registers: R = L + P + 1 slots of
 * V float4 each. At step j a block
 *   1. issues the loads of chunk j + P (P chunks in flight ahead),
 *   2. folds chunk j (loaded P steps ago) into (max, sum of exp), and
 *      publishes the pair with a release count on its row's counter,
 *   3. takes chunk j - L: warp 0 waits (acquire) for the row's count,
 *      combines the row's pairs, and every thread writes its registers of
 *      that chunk normalized, with streaming stores.
 * Chunk c = b + i G of the flat matrix goes to block b at step i (G the
 * persistent grid, every block resident). Deadlock-free when a row spans
 * at most L steps of the grid (the host checks). DRAM sees each element
 * read once and written once; shared memory holds only the warps' pairs.
 * The register slots are indexed by constants: the step loop is unrolled
 * R times, so slot u of step j0 + u is q[u].
 * Variants: threads a block, vectors a thread a chunk, lag, loads ahead
 * (ptxas, sm_90: 92-128 registers; 512 x 4 with lag 3 or 3 ahead spills
 * 16-20 bytes, 1024 x 2 44 bytes; 256 threads are bound to 2 blocks an SM).
 * Every result is compared with a double-precision host softmax of every
 * row (random data in [-8, 8), output poisoned with NaN first); medians of
 * 20 calls after 3, the counters' memset inside; the copy rate in the same
 * process before and after (bench/try_common.cuh).
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler -fopenmp -o bench/bin/try_softmax_regs bench/try_softmax_regs.cu
 * Run:   bench/bin/try_softmax_regs [ROW_LENGTH ...]   (default 262144 32768) */
#include "try_common.cuh"

template <int V>
static __device__ __forceinline__ void load_chunk(float4 (&q)[V], const float4 *p) {
#pragma unroll
    for (int v = 0; v < V; v++) q[v] = __ldcs(p + v * blockDim.x);
}

template <int T, int V, int L, int P>
__global__ void __launch_bounds__(T, T < 512 ? 512 / T : 1) softmax_regs(const float *__restrict__ x, float *__restrict__ y, long long nchunks,
                                                     int ppr, MS *__restrict__ part, unsigned *__restrict__ cnt) {
    constexpr int CH = 4 * T * V;  /* floats a chunk */
    constexpr int R = L + P + 1;   /* register slots: L waiting for their rows, P loading, 1 folding */
    constexpr int NW = T / 32;
    __shared__ MS red[2][NW];
    __shared__ MS tot[2];
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const long long G = gridDim.x;
    const long long nb = nchunks > blockIdx.x ? (nchunks - blockIdx.x + G - 1) / G : 0;  /* this block's chunks */
    auto at = [&](long long j) { return (const float4 *)(x + (blockIdx.x + j * G) * CH) + threadIdx.x; };
    float4 q[R][V];
#pragma unroll
    for (int u = 0; u < P; u++)
        if (u < nb) load_chunk<V>(q[u], at(u));
    for (long long j0 = 0; j0 < nb + L; j0 += R) {
#pragma unroll
        for (int u = 0; u < R; u++) {
            const long long j = j0 + u;
            if (j >= nb + L) break;
            /* 1. chunk j + P into its slot (last used by chunk j - L - 1, written at step j - 1) */
            if (j + P < nb) load_chunk<V>(q[(u + P) % R], at(j + P));
            /* 2. fold chunk j, publish its pair */
            if (j < nb) {
                float m = -INFINITY;
#pragma unroll
                for (int v = 0; v < V; v++) m = fmaxf(m, fmaxf(fmaxf(q[u][v].x, q[u][v].y), fmaxf(q[u][v].z, q[u][v].w)));
                float s = 0.f;
#pragma unroll
                for (int v = 0; v < V; v++)
                    s += __expf(q[u][v].x - m) + __expf(q[u][v].y - m) + __expf(q[u][v].z - m) + __expf(q[u][v].w - m);
                MS b = ms_warp({m, s});
                if (lane == 0) red[j & 1][w] = b;
                __syncthreads();
                if (w == 0) {
                    b = ms_warp(lane < NW ? red[j & 1][lane] : MS{-INFINITY, 0.f});
                    if (lane == 0) {
                        const long long c = blockIdx.x + j * G;
                        __stcg((float2 *)&part[c], make_float2(b.m, b.s));
                        count_release(&cnt[c / ppr]);
                    }
                }
            }
            /* 3. chunk j - L: its row's totals, then its registers normalized and stored */
            if (j >= L) {
                const long long k = blockIdx.x + (j - L) * G, row = k / ppr;
                if (w == 0) {
                    while (ld_acquire(&cnt[row]) < (unsigned)ppr) __nanosleep(32);  /* every lane: its loads below come after */
                    MS r = {-INFINITY, 0.f};
                    for (int i = lane; i < ppr; i += 32) {
                        const float2 p2 = __ldcg((const float2 *)&part[row * ppr + i]);
                        r = ms_comb(r, {p2.x, p2.y});
                    }
                    r = ms_warp(r);
                    if (lane == 0) tot[j & 1] = {r.m, 1.f / r.s};
                }
                __syncthreads();
                const MS t = tot[j & 1];
                float4 *o = (float4 *)(y + k * CH) + threadIdx.x;
                const int s = (u + R - L) % R;  /* a constant once the loop is unrolled */
#pragma unroll
                for (int v = 0; v < V; v++) {
                    float4 a = q[s][v];
                    a.x = __expf(a.x - t.m) * t.s;
                    a.y = __expf(a.y - t.m) * t.s;
                    a.z = __expf(a.z - t.m) * t.s;
                    a.w = __expf(a.w - t.m) * t.s;
                    __stcs(o + v * T, a);
                }
            }
        }
    }
}

int main(int argc, char **argv) {
    const long long n = 1ll << 28;
    MS *part;
    unsigned *cnt;
    CK(cudaMalloc(&part, (n / 2048) * sizeof(MS)));  /* chunks of 2048 floats or more */
    CK(cudaMalloc(&cnt, (n / 8192) * sizeof(unsigned)));  /* rows of 8192 or more */
    return softmax_main(argc, argv, "try_softmax_regs", 8192, [&](const SoftmaxCase &c, auto &&one) {
#define V(T, VV, L, P) one(#T " threads, " #VV " vectors, lag " #L ", " #P " ahead", [&](int *g, int *r) { \
            return run_exchange(softmax_regs<T, VV, L, P>, T, 4 * T * VV, L, c, part, cnt, g, r); })
        V(512, 4, 2, 2);
        V(512, 4, 1, 2);
        V(512, 4, 2, 1);
        V(512, 4, 3, 2);
        V(512, 4, 2, 3);
        V(512, 2, 2, 3);
        V(1024, 2, 2, 2);
        V(256, 4, 2, 2);
        V(512, 4, 2, 2);  /* the first again: drift */
#undef V
    });
}
