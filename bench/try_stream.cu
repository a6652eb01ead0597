/* try_stream.cu: does a cache hint or another shape make a streaming
 * elementwise kernel faster than gpuc's (issue 16: the fused chain trails
 * torch.compile by about 1%, saxpy is at 0.985 of the copy rate)?
 *
 * The kernels copy the structure gpuc emits for bench/programs/elementwise.gdsl
 * (backend/cuda/stride.c: 256 threads, a grid-stride loop over 16-byte
 * vectors, V vectors of each input in flight a thread, a grid of at most 32
 * blocks an SM) and vary one thing at a time:
 *   LD  0 plain loads, 1 __ldcs (evict first), 2 ld.global.nc.L1::no_allocate,
 *       3 an L2 evict_first policy (createpolicy + .L2::cache_hint)
 *   ST  0 plain stores, 1 __stcs (evict first), 2 an L2 evict_first policy
 *   V   vectors a thread in flight: 1, 2 (gpuc's), 4
 *   G   grid: 32 blocks an SM at most (gpuc's), 8 an SM (one wave), or one
 *       block per 256 x V vectors (no grid-stride loop)
 * for saxpy (a * x + y) and the chain (exp(-x*x) * sin(y) + 2x), 2^28 f32.
 * Each variant's result is compared with a host reference on a sample of
 * 2^20 indices and the last vector (the output is poisoned before); times
 * are medians of 20 calls with a CUDA event pair each, after 3 warm-ups,
 * and the copy rate (cudaMemcpy device to device, 1 GiB, read + written) is
 * measured in the same process. Prints one table; exit 1 on a wrong result.
 * Build (here or there): nvcc -O3 -arch=sm_90 -o bench/bin/try_stream bench/try_stream.cu */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(2); } } while (0)

template <int LD> __device__ __forceinline__ float4 ld(const float4 *p, uint64_t pol) {
    if (LD == 1) return __ldcs(p);
    if (LD == 2) {
        float4 v;
        asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
        return v;
    }
    if (LD == 3) {
        float4 v;
        asm volatile("ld.global.nc.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(pol));
        return v;
    }
    return *p;
}
template <int ST> __device__ __forceinline__ void st(float4 *p, float4 v, uint64_t pol) {
    if (ST == 1) { __stcs(p, v); return; }
    if (ST == 2) {
        asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1,%2,%3,%4}, %5;"
                     :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "l"(pol) : "memory");
        return;
    }
    *p = v;
}
template <int OP> __device__ __forceinline__ float f(float a, float x, float y) {
    if (OP == 0) return a * x + y;
    return expf(-x * x) * sinf(y) + 2.0f * x;
}

template <int OP, int LD, int ST, int V>
__global__ void __launch_bounds__(256) stream_k(int64_t nv, float a, const float4 *__restrict__ x,
                                                const float4 *__restrict__ y, float4 *__restrict__ out) {
    uint64_t pol = 0;
    if (LD == 3 || ST == 2) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    for (int64_t b = (int64_t)blockIdx.x * 256 * V + threadIdx.x; b < nv; b += (int64_t)gridDim.x * 256 * V) {
        float4 xa[V], ya[V];
#pragma unroll
        for (int u = 0; u < V; u++) {
            int64_t i = b + 256 * u;
            if (i < nv) { xa[u] = ld<LD>(x + i, pol); ya[u] = ld<LD>(y + i, pol); }
        }
#pragma unroll
        for (int u = 0; u < V; u++) {
            int64_t i = b + 256 * u;
            if (i < nv) {
                float4 w;
                w.x = f<OP>(a, xa[u].x, ya[u].x);
                w.y = f<OP>(a, xa[u].y, ya[u].y);
                w.z = f<OP>(a, xa[u].z, ya[u].z);
                w.w = f<OP>(a, xa[u].w, ya[u].w);
                st<ST>(out + i, w, pol);
            }
        }
    }
}

struct Variant {
    const char *name;
    void (*k)(int64_t, float, const float4 *, const float4 *, float4 *);
    int op, v;
};
#define VAR(OP, LD, ST, V) {#OP " ld" #LD " st" #ST " v" #V, stream_k<OP, LD, ST, V>, OP, V}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main() {
    const int64_t n = (int64_t)1 << 28, nv = n / 4;
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float *x, *y, *out;
    CK(cudaMalloc(&x, n * 4));
    CK(cudaMalloc(&y, n * 4));
    CK(cudaMalloc(&out, n * 4));
    std::vector<float> hx(n), hy(n);
    srand(12345);
    for (int64_t i = 0; i < n; i++) {
        hx[i] = (float)rand() / RAND_MAX * 4.0f - 2.0f;
        hy[i] = (float)rand() / RAND_MAX * 6.0f - 3.0f;
    }
    CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(y, hy.data(), n * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    auto timed = [&](auto fn) {
        for (int i = 0; i < 3; i++) fn();
        std::vector<double> t;
        for (int i = 0; i < 20; i++) {
            CK(cudaEventRecord(e0));
            fn();
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            t.push_back(ms * 1000.0);
        }
        CK(cudaGetLastError());
        return median(t);
    };
    /* the copy rate: 1 GiB device to device, bytes read + written */
    double copy_us = timed([&] { CK(cudaMemcpyAsync(out, x, n * 4, cudaMemcpyDeviceToDevice)); });
    double copy_gbs = 2.0 * n * 4 / copy_us / 1e3;
    printf("copy rate: %.1f GB/s (%.1f us for 1 GiB)\n", copy_gbs, copy_us);

    Variant vars[] = {
        VAR(0, 0, 0, 2), VAR(0, 1, 0, 2), VAR(0, 0, 1, 2), VAR(0, 1, 1, 2), VAR(0, 2, 0, 2), VAR(0, 3, 2, 2), VAR(0, 0, 2, 2),
        VAR(0, 0, 0, 1), VAR(0, 0, 0, 4), VAR(0, 1, 1, 4),
        VAR(1, 0, 0, 2), VAR(1, 1, 0, 2), VAR(1, 0, 1, 2), VAR(1, 1, 1, 2), VAR(1, 2, 0, 2), VAR(1, 3, 2, 2), VAR(1, 0, 2, 2),
        VAR(1, 0, 0, 1), VAR(1, 0, 0, 4), VAR(1, 1, 1, 4),
    };
    const char *gname[] = {"32/SM", "8/SM", "full"};
    bool bad = false;
    std::vector<float> hout(n);
    printf("| variant | grid | us | ratio to copy |\n|---|---|---|---|\n");
    for (auto &v : vars) {
        for (int g = 0; g < 3; g++) {
            int64_t blocks = (nv + 256 * v.v - 1) / (256 * v.v);
            int64_t cap = g == 0 ? (int64_t)sms * 32 : g == 1 ? (int64_t)sms * 8 : blocks;
            unsigned grid = (unsigned)std::min(blocks, cap);
            CK(cudaMemset(out, 0xff, n * 4));
            auto run = [&] { v.k<<<grid, 256>>>(nv, 2.5f, (const float4 *)x, (const float4 *)y, (float4 *)out); };
            run();
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hout.data(), out, n * 4, cudaMemcpyDeviceToHost));
            int64_t wrong = 0;
            for (int64_t s = 0; s < (1 << 20) + 4; s++) {
                int64_t i = s < (1 << 20) ? (s * 2654435761LL) % n : n - 4 + (s - (1 << 20));
                double ref = v.op == 0 ? 2.5 * (double)hx[i] + hy[i]
                                       : std::exp(-(double)hx[i] * hx[i]) * std::sin((double)hy[i]) + 2.0 * hx[i];
                if (!(std::fabs(hout[i] - ref) <= 1e-5 * (1.0 + std::fabs(ref)))) wrong++;
            }
            double us = timed(run);
            printf("| %s | %s | %.1f | %.3f |%s\n", v.name, gname[g], us, 3.0 * n * 4 / us / 1e3 / copy_gbs,
                   wrong ? " WRONG" : "");
            if (wrong) bad = true;
        }
    }
    printf("%s\n", bad ? "FAIL: a wrong result" : "PASS: every result checked");
    return bad ? 1 : 0;
}
