/* try_softmax_stream.cu: can row softmax at rows of 262144 reach 0.90 of the
 * copy rate without clusters (issue 16)? A prototype, not gpuc's code.
 *
 * gpuc's kernel for long rows (backend/cuda/rows.c, NAME_cl) holds a row on
 * a cluster of 8 blocks and combines their parts through distributed shared
 * memory; a cluster must sit in one GPC, so an H100 runs 30 of them on 240 of
 * its 264 block slots and quantizes 1024 rows into 35 rounds (0.80 of the
 * copy rate). This kernel instead streams the matrix as one flat sequence of
 * chunks (CH floats, a whole number of chunks a row): a persistent grid of
 * one block an SM takes chunk b, b + G, b + 2G, ... through a ring of S
 * shared-memory slots filled by bulk copies (cp.async.bulk, mbarrier). When
 * a chunk arrives the block folds it into (max, sum of exp) and publishes
 * that pair to global memory, then counts it on its row's counter (release);
 * L chunks later it waits for the row's counter to reach the row's chunk
 * count (acquire), combines the row's pairs, normalizes the chunk in place
 * and writes it back with a bulk store, and reuses the slot for the chunk S
 * ahead. Each element is read once from DRAM and written once. The row's
 * chunks are taken by neighbouring blocks at the same step, so with L steps
 * of lag the wait is usually over before it starts. The grid must be all
 * resident (it is the occupancy; gpuc would use a cooperative launch).
 *
 * H100, 2026-11-28: with one warp both publishing chunk j and gathering
 * chunk j - L, the consumers waited a gather's L2 round trip every chunk
 * (16 KiB chunks 0.64 of the copy rate even with no exchange at all); hence
 * the publisher and the gatherers are separate warps.
 * Variants: chunk size, ring slots S, lag L, blocks an SM. Every result is
 * compared with a double-precision host softmax of every row (random data
 * in [-8, 8), poisoned output); times are medians of 20 calls with an event
 * pair each (the counters' memset inside), after 3 warm-ups; the copy rate
 * (cudaMemcpy device to device, 1 GiB read + written) in the same process.
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler -fopenmp -o bench/bin/try_softmax_stream bench/try_softmax_stream.cu
 * Run:   bench/bin/try_softmax_stream [ROW_LENGTH ...]   (default 262144 32768) */
#include "try_common.cuh"

static __device__ __forceinline__ unsigned smem_addr(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
static __device__ __forceinline__ void bar_init(uint64_t *bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_addr(bar)) : "memory");
}
static __device__ __forceinline__ void bulk_load(void *dst, const void *src, unsigned bytes, uint64_t *bar) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}
static __device__ __forceinline__ void bar_wait(uint64_t *bar, unsigned parity) {
    unsigned done = 0;
    while (!done) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(smem_addr(bar)), "r"(parity) : "memory");
    }
}
static __device__ __forceinline__ void bulk_store(void *dst, const void *src, unsigned bytes) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n\tcp.async.bulk.commit_group;"
                 :: "l"(dst), "r"(smem_addr(src)), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void bulk_wait_read(void) {
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
static __device__ __forceinline__ void bulk_wait_all(void) {
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
template <int T, int CH, int S, int L>
__global__ void __launch_bounds__(T) softmax_stream(const float *__restrict__ x, float *__restrict__ y,
                                                    long long nchunks, int ppr, MS *__restrict__ part,
                                                    unsigned *__restrict__ cnt) {
    static_assert(CH % (4 * T) == 0, "a thread takes whole vectors");
    static_assert(L < S, "the lag fits the ring");
    constexpr int V = CH / (4 * T);          /* float4 a thread a chunk */
    constexpr int NW = T / 32;
    extern __shared__ __align__(128) float4 ring[];   /* S x CH floats */
    __shared__ uint64_t bars[S];
    __shared__ MS red[2][NW];
    __shared__ MS total;
    const int t = threadIdx.x, w = t >> 5, lane = t & 31;
    const long long G = gridDim.x;
    const long long nb = nchunks > blockIdx.x ? (nchunks - blockIdx.x + G - 1) / G : 0;
    if (t == 0) {
        for (int s = 0; s < S; s++) bar_init(&bars[s]);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (long long j = 0; j < S && j < nb; j++)
            bulk_load(ring + j * (CH / 4), x + (blockIdx.x + j * G) * CH, CH * 4, &bars[j]);
    }
    __syncthreads();
    for (long long j = 0; j < nb + L; j++) {
        if (j < nb) {
            /* chunk j has arrived: its (max, sum) to the row's slot */
            const int s = (int)(j % S);
            bar_wait(&bars[s], (unsigned)((j / S) & 1));
            const float4 *c = ring + s * (CH / 4);
            MS v = {-INFINITY, 0.f};
            float4 q[V];
#pragma unroll
            for (int k = 0; k < V; k++) {
                q[k] = c[t + k * T];
                v.m = fmaxf(v.m, fmaxf(fmaxf(q[k].x, q[k].y), fmaxf(q[k].z, q[k].w)));
            }
            if (v.m != -INFINITY) {
#pragma unroll
                for (int k = 0; k < V; k++)
                    v.s += __expf(q[k].x - v.m) + __expf(q[k].y - v.m) + __expf(q[k].z - v.m) + __expf(q[k].w - v.m);
            }
            v = ms_warp(v);
            if (lane == 0) red[j & 1][w] = v;
            __syncthreads();
            if (w == 0) {
                MS u = lane < NW ? red[j & 1][lane] : MS{-INFINITY, 0.f};
                u = ms_warp(u);
                if (lane == 0) {
                    const long long ch = blockIdx.x + j * G;
                    __stcg(&part[ch].m, u.m);
                    __stcg(&part[ch].s, u.s);
                    __threadfence();
                    atomicAdd(&cnt[ch / ppr], 1u);
                }
            }
        }
        if (j >= L) {
            /* chunk k = j - L: wait for its row, normalize it, write it back */
            const long long k = j - L;
            const int s = (int)(k % S);
            const long long ch = blockIdx.x + k * G, row = ch / ppr;
            if (w == 0) {
                while (ld_acquire(&cnt[row]) < (unsigned)ppr) __nanosleep(64);
                MS u = {-INFINITY, 0.f};
                for (int p = lane; p < ppr; p += 32) {
                    MS q = {__ldcg(&part[row * ppr + p].m), __ldcg(&part[row * ppr + p].s)};
                    u = ms_comb(u, q);
                }
                u = ms_warp(u);
                if (lane == 0) total = {u.m, 1.f / u.s};
            }
            __syncthreads();
            const MS tot = total;
            float4 *c = ring + s * (CH / 4);
#pragma unroll
            for (int i = 0; i < V; i++) {
                float4 q = c[t + i * T];
                q.x = __expf(q.x - tot.m) * tot.s;
                q.y = __expf(q.y - tot.m) * tot.s;
                q.z = __expf(q.z - tot.m) * tot.s;
                q.w = __expf(q.w - tot.m) * tot.s;
                c[t + i * T] = q;
            }
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            __syncthreads();
            if (t == 0) {
                bulk_store(y + ch * CH, c, CH * 4);
                if (k + S < nb) {
                    bulk_wait_read();
                    bulk_load(c, x + (blockIdx.x + (k + S) * G) * CH, CH * 4, &bars[s]);
                }
            }
        }
    }
    if (t == 0) bulk_wait_all();
}


/* The warp-specialized form ("ws"): NC consumer warps fold and normalize
 * chunks, GW gatherer warps publish each chunk's pair and gather each row's
 * total, one producer thread issues every bulk load and store. They meet on
 * mbarriers, so no warp waits on another's latency unless the data is
 * missing (one publisher warp, GW gatherer warps taking chunks in turn): full[s] (the chunk's bytes landed), pready[s] (the consumers'
 * warp pairs are in red[s]), totready[s] (the row's total is in tot[s]),
 * done[s] (the chunk is normalized in place). A chunk's pair is one 64-bit
 * word {max, sum} stored relaxed over a sentinel of all ones (the launch's
 * memset): a gatherer polls the row's words until none is the sentinel, with
 * no counter and no fence. The producer lets D bulk stores read their
 * shared memory before it reloads a slot. */
static __device__ __forceinline__ void bar_init_n(uint64_t *bar, unsigned n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_addr(bar)), "r"(n) : "memory");
}
static __device__ __forceinline__ void bar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" :: "r"(smem_addr(bar)) : "memory");
}
static __device__ __forceinline__ void st_relaxed64(unsigned long long *p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
static __device__ __forceinline__ unsigned long long ld_relaxed64(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
template <int D> static __device__ __forceinline__ void bulk_wait_read_n(void) {
    asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(D) : "memory");
}

template <int NC, int GW, int CH, int S, int L, int D, int EX>
__global__ void __launch_bounds__((NC + GW + 2) * 32, 1)
softmax_ws(const float *__restrict__ x, float *__restrict__ y, long long nchunks, int ppr,
           unsigned long long *__restrict__ pw) {
    constexpr int WF = CH / NC;             /* floats a consumer warp a chunk */
    constexpr int V = WF / 128;             /* float4 a lane */
    static_assert(WF % 128 == 0, "whole vectors a lane");
    static_assert(L + D < S, "slots for the lag, the pending stores and loads in flight");
    extern __shared__ __align__(128) float4 ring[];
    __shared__ uint64_t full[S], pready[S], totready[S], done[S];
    __shared__ MS red[S][NC];
    __shared__ MS tot[S];
    const int t = threadIdx.x, w = t >> 5, lane = t & 31;
    const long long G = gridDim.x;
    const long long nb = nchunks > blockIdx.x ? (nchunks - blockIdx.x + G - 1) / G : 0;
    if (t == 0) {
        for (int s = 0; s < S; s++) {
            bar_init_n(&full[s], 1);
            bar_init_n(&pready[s], NC);
            bar_init_n(&totready[s], 1);
            bar_init_n(&done[s], NC * 32);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (w < NC) {
        /* consumers */
        for (long long j = 0; j < nb + L; j++) {
            if (j < nb) {
                const int s = (int)(j % S);
                bar_wait(&full[s], (unsigned)((j / S) & 1));
                const float4 *c = ring + s * (CH / 4) + w * (WF / 4);
                MS v = {-INFINITY, 0.f};
                float4 q[V];
#pragma unroll
                for (int k = 0; k < V; k++) {
                    q[k] = c[lane + 32 * k];
                    v.m = fmaxf(v.m, fmaxf(fmaxf(q[k].x, q[k].y), fmaxf(q[k].z, q[k].w)));
                }
                if (v.m != -INFINITY) {
#pragma unroll
                    for (int k = 0; k < V; k++)
                        v.s += __expf(q[k].x - v.m) + __expf(q[k].y - v.m) + __expf(q[k].z - v.m) + __expf(q[k].w - v.m);
                }
                v = ms_warp(v);
                if (lane == 0) {
                    red[s][w] = v;
                    bar_arrive(&pready[s]);
                }
            }
            if (j >= L) {
                const long long k = j - L;
                const int s = (int)(k % S);
                bar_wait(&totready[s], (unsigned)((k / S) & 1));
                const MS tt = tot[s];
                float4 *c = ring + s * (CH / 4) + w * (WF / 4);
#pragma unroll
                for (int i = 0; i < V; i++) {
                    float4 q = c[lane + 32 * i];
                    q.x = __expf(q.x - tt.m) * tt.s;
                    q.y = __expf(q.y - tt.m) * tt.s;
                    q.z = __expf(q.z - tt.m) * tt.s;
                    q.w = __expf(q.w - tt.m) * tt.s;
                    c[lane + 32 * i] = q;
                }
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                bar_arrive(&done[s]);
            }
        }
    } else if (w == NC) {
        /* the publisher: each chunk's pair, from the consumers' warp pairs, to its word */
        for (long long j = 0; j < nb; j++) {
            const int s = (int)(j % S);
            bar_wait(&pready[s], (unsigned)((j / S) & 1));
            MS u = lane < NC ? red[s][lane] : MS{-INFINITY, 0.f};
            u = ms_warp(u);
            if (lane == 0) {
                const unsigned long long word = (unsigned long long)__float_as_uint(u.m) |
                                                ((unsigned long long)__float_as_uint(u.s) << 32);
                st_relaxed64(&pw[blockIdx.x + j * G], word);
            }
        }
    } else if (w <= NC + GW) {
        /* gatherers: warp g polls the rows of chunks g, g + GW, ... (their words
         * appear as the row's blocks publish; slot s's total is not written
         * again before the consumers have read it: chunk k + S is published
         * only after chunk k was normalized and its slot reloaded) */
        const int g = w - NC - 1;
        for (long long k = g; k < nb; k += GW) {
            const int s = (int)(k % S);
            const long long row = EX ? (blockIdx.x + k * G) / ppr : 0;
            const unsigned long long *rw = EX ? pw + row * ppr : pw + blockIdx.x + k * G;
            const int npr = EX ? ppr : 1;
            MS u = {-INFINITY, 0.f};
            for (int p0 = 0; p0 < npr; p0 += 32) {
                const int p = p0 + lane;
                const bool mine = p < npr;
                unsigned long long word = 0;
                for (;;) {   /* every lane polls in step until the row's words are all there */
                    if (mine) word = ld_relaxed64(&rw[p]);
                    if (!__any_sync(~0u, mine && word == ~0ull)) break;
                    __nanosleep(64);
                }
                if (mine) u = ms_comb(u, MS{__uint_as_float((unsigned)word), __uint_as_float((unsigned)(word >> 32))});
            }
            u = ms_warp(u);
            if (lane == 0) {
                tot[s] = MS{u.m, 1.f / u.s};
                bar_arrive(&totready[s]);
            }
        }
    } else if (lane == 0) {
        /* the producer */
        for (long long j = 0; j < S && j < nb; j++)
            bulk_load(ring + j * (CH / 4), x + (blockIdx.x + j * G) * CH, CH * 4, &full[j]);
        for (long long k = 0; k < nb; k++) {
            const int s = (int)(k % S);
            bar_wait(&done[s], (unsigned)((k / S) & 1));
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n\tcp.async.bulk.commit_group;"
                         :: "l"(y + (blockIdx.x + k * G) * CH), "r"(smem_addr(ring + s * (CH / 4))), "r"(CH * 4) : "memory");
            /* the store D before this one has read its slot: reload that slot */
            const long long r = k - D;
            if (r >= 0 && r + S < nb) {
                bulk_wait_read_n<D>();
                bulk_load(ring + (r % S) * (CH / 4), x + (blockIdx.x + (r + S) * G) * CH, CH * 4, &full[r % S]);
            }
        }
        bulk_wait_all();
    }
}

template <int T, int CH, int S, int L>
static float run_variant(const float *x, float *y, int rows, int len, MS *part, unsigned *cnt,
                         int nsm, int *grid_out) {
    auto kern = softmax_stream<T, CH, S, L>;
    const size_t smem = (size_t)S * CH * 4;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, T, smem));
    if (per_sm < 1) { fprintf(stderr, "variant does not fit\n"); exit(2); }
    const int grid = per_sm * nsm;
    *grid_out = grid;
    const int ppr = len / CH;
    const long long nchunks = (long long)rows * ppr;
    return median_us([&] {
        CK(cudaMemsetAsync(cnt, 0, rows * sizeof(unsigned)));
        kern<<<grid, T, smem>>>(x, y, nchunks, ppr, part, cnt);
    });
}


template <int NC, int GW, int CH, int S, int L, int D, int EX = 1>
static float run_ws(const float *x, float *y, int rows, int len, unsigned long long *pw, int nsm, int *grid_out) {
    auto kern = softmax_ws<NC, GW, CH, S, L, D, EX>;
    constexpr int T = (NC + GW + 2) * 32;
    const size_t smem = (size_t)S * CH * 4;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, T, smem));
    if (per_sm < 1) { fprintf(stderr, "variant does not fit\n"); exit(2); }
    const int grid = per_sm * nsm;
    *grid_out = grid;
    const int ppr = len / CH;
    const long long nchunks = (long long)rows * ppr;
    return median_us([&] {
        CK(cudaMemsetAsync(pw, 0xff, nchunks * sizeof(unsigned long long)));
        kern<<<grid, T, smem>>>(x, y, nchunks, ppr, pw);
    });
}

int main(int argc, char **argv) {
    const long long n = 1ll << 28;
    MS *part;
    unsigned *cnt;
    unsigned long long *pw;
    CK(cudaMalloc(&part, (n / 2048) * sizeof(MS)));
    CK(cudaMalloc(&cnt, (n / 256) * sizeof(unsigned)));
    CK(cudaMalloc(&pw, (n / 2048) * sizeof(unsigned long long)));
    return softmax_main(argc, argv, "try_softmax_stream", 8192, [&](const SoftmaxCase &c, auto &&one) {
        const float *x = c.x;
        float *y = c.y;
        const int rows = c.rows, len = c.len, nsm = c.nsm;
#define V(T, CH, S, L) one(#T " thr, " #CH " floats, " #S " slots, lag " #L, [&](int *g, int *) { \
            return run_variant<T, CH, S, L>(x, y, rows, len, part, cnt, nsm, g); })
        V(512, 4096, 6, 2);      /* the first prototype's best: 2 blocks an SM */
#define W(NC, GW, CH, S, L, D) one("ws " #NC " consumers, " #GW " gatherers, " #CH " floats, " #S " slots, lag " #L ", " #D " stores", \
            [&](int *g, int *) { return run_ws<NC, GW, CH, S, L, D>(x, y, rows, len, pw, nsm, g); })
        W(16, 2, 8192, 6, 2, 1);
        W(16, 4, 8192, 6, 2, 1);
        W(16, 4, 8192, 6, 3, 1);
        W(8, 4, 4096, 13, 3, 2);
        W(16, 4, 4096, 13, 3, 2);
        W(8, 4, 4096, 13, 5, 2);
        W(8, 4, 2048, 26, 6, 3);
        one("ws 16/2/8192/6/2/1, no exchange", [&](int *g, int *) { return run_ws<16, 2, 8192, 6, 2, 1, 0>(x, y, rows, len, pw, nsm, g); }, false);
        one("ws 8/4/4096/13/3/2, no exchange", [&](int *g, int *) { return run_ws<8, 4, 4096, 13, 3, 2, 0>(x, y, rows, len, pw, nsm, g); }, false);
        W(16, 2, 8192, 6, 2, 1);   /* the first again: drift */
#undef W
#undef V
    });
}
