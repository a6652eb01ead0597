/* try_common.cuh: what the hand-written prototypes bench/try_*.cu share:
 * every CUDA call checked, event timing (the median of 20 calls after 3
 * warm-ups, an event pair each), the copy rate measured in the same
 * process, and for the row softmax prototypes their input and their check
 * against a double-precision host softmax. */
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
