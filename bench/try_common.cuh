/* try_common.cuh: what the hand-written prototypes bench/try_*.cu share:
 * every CUDA call checked, event timing (the median of 20 calls after 3
 * warm-ups, an event pair each), the copy rate measured in the same
 * process, and for the row softmax prototypes their input, their check
 * against a double-precision host softmax, the (max, sum of exp) pairs they
 * combine and the release count / acquire load of their exchange. */
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(2); } } while (0)

/* median microseconds of 20 calls of launch() (after 3 warm-ups), an event
 * pair around each; launch enqueues on the default stream */
template <class F>
static float median_us(F launch) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ts;
    for (int i = 0; i < 23; i++) {
        CK(cudaEventRecord(a));
        launch();
        CK(cudaGetLastError());
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (i >= 3) ts.push_back(ms * 1000.f);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}

/* the copy rate in GB/s, read and written: cudaMemcpy of `bytes` device to device */
static double copy_rate(void *dst, const void *src, long long bytes) {
    const float us = median_us([&] { CK(cudaMemcpyAsync(dst, src, (size_t)bytes, cudaMemcpyDeviceToDevice)); });
    return 2.0 * bytes / us / 1e3;
}

/* n floats uniform in [-8, 8), from a seed that changes every run */
static std::vector<float> softmax_input(long long n) {
    std::vector<float> hx(n);
    uint64_t st = 0x9e3779b97f4a7c15ull ^ (uint64_t)time(nullptr);
    for (long long i = 0; i < n; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        hx[i] = (float)((st >> 40) * (1.0 / (1ull << 24)) * 16.0 - 8.0);
    }
    return hx;
}

/* max relative error of y against a double softmax of x, every row (rows in
 * parallel; a NaN anywhere makes the result NaN) */
static double softmax_check(const std::vector<float> &hx, const std::vector<float> &hy, int rows, int len) {
    std::vector<double> errs(rows);
#pragma omp parallel for schedule(dynamic, 4)
    for (int r = 0; r < rows; r++) {
        const float *xr = &hx[(size_t)r * len];
        const float *yr = &hy[(size_t)r * len];
        double m = -INFINITY, s = 0, worst = 0;
        for (int i = 0; i < len; i++) m = std::max(m, (double)xr[i]);
        for (int i = 0; i < len; i++) s += std::exp(xr[i] - m);
        for (int i = 0; i < len; i++) {
            const double ref = std::exp(xr[i] - m) / s;
            const double e = std::fabs(yr[i] - ref) / (ref + 1e-30);
            if (!(e <= worst)) worst = e;
        }
        errs[r] = worst;
    }
    double worst = 0;
    for (double e : errs) if (!(e <= worst)) worst = e;
    return worst;
}

/* (max, sum of exp(x - max)) pairs and their combination */
struct MS { float m, s; };
static __device__ __forceinline__ MS ms_comb(MS a, MS b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return {m, 0.f};
    return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}
static __device__ __forceinline__ MS ms_warp(MS v) {
    for (int o = 16; o; o >>= 1) v = ms_comb(v, {__shfl_xor_sync(~0u, v.m, o), __shfl_xor_sync(~0u, v.s, o)});
    return v;
}

/* one more on a row's counter, ordered after this thread's earlier stores
 * (a release reduction), and its acquire load */
static __device__ __forceinline__ void count_release(unsigned *p) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" :: "l"(p) : "memory");
}
static __device__ __forceinline__ unsigned ld_acquire(const unsigned *p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
