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

/* this device's multiprocessors (and its properties in *prop) */
static int device_sms(cudaDeviceProp *prop) {
    int dev = 0, nsm = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaGetDeviceProperties(prop, dev));
    return nsm;
}

/* One row length of a row softmax prototype's run: x the 2^28 inputs, y
 * the outputs, rows x len of them, nsm the device's multiprocessors. */
struct SoftmaxCase {
    const float *x;
    float *y;
    long long n;
    int rows, len, nsm;
};

/* The row softmax prototypes' main. The row lengths come from argv (powers
 * of two from min_len to 2^28; default 262144 and 32768); x holds 2^28
 * random floats (softmax_input); the copy rate is measured before and
 * after. For each length, variants(c, one) names its variants:
 * one(name, fn, check = true) poisons y with NaN, times fn(&grid, &regs)
 * (a float of microseconds; grid 0: the variant does not fit this length),
 * checks every row against the host softmax unless told not to, and prints
 * a table row. Returns 1 if any result was wrong, 2 on a bad argument. */
template <class Variants>
static int softmax_main(int argc, char **argv, const char *prog, long min_len, Variants variants) {
    std::vector<int> lens;
    for (int i = 1; i < argc; i++) {
        char *end = nullptr;
        const long v = strtol(argv[i], &end, 10);
        if (!*argv[i] || *end || v < min_len || v > (1l << 28) || ((1l << 28) % v)) {
            fprintf(stderr, "%s: '%s' is not a row length (a power of two from %ld to 2^28)\n", prog, argv[i], min_len);
            return 2;
        }
        lens.push_back((int)v);
    }
    if (lens.empty()) lens = {262144, 32768};
    const long long n = 1ll << 28;
    cudaDeviceProp prop;
    const int nsm = device_sms(&prop);
    float *x, *y;
    CK(cudaMalloc(&x, n * 4));
    CK(cudaMalloc(&y, n * 4));
    const std::vector<float> hx = softmax_input(n);
    std::vector<float> hy(n);
    CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
    const double gbs0 = copy_rate(y, x, n * 4);
    printf("device %s, %d SMs; copy rate %.1f GB/s\n", prop.name, nsm, gbs0);
    printf("| rows x length | variant | grid | registers | us | of copy rate | max rel err |\n|---|---|---|---|---|---|---|\n");
    int bad = 0;
    for (int len : lens) {
        const SoftmaxCase c = {x, y, n, (int)(n / len), len, nsm};
        auto one = [&](const char *name, auto fn, bool check = true) {
            CK(cudaMemset(y, 0xff, n * 4));  /* NaN: a chunk not written fails */
            int grid = 0, regs = 0;
            const float us = fn(&grid, &regs);
            char rg[16] = "-";
            if (regs) snprintf(rg, sizeof rg, "%d", regs);
            if (grid == 0) {
                printf("| %d x %d | %s | - | %s | not run: the variant does not fit this row length | - | - |\n", c.rows, len, name, rg);
                return;
            }
            const double share = 2.0 * n * 4 / us / 1e3 / gbs0;
            if (!check) {
                printf("| %d x %d | %s | %d | %s | %.1f | %.3f | (not checked) |\n", c.rows, len, name, grid, rg, us, share);
                return;
            }
            CK(cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost));
            const double err = softmax_check(hx, hy, c.rows, len);
            const bool ok = err < 1e-4;
            bad += !ok;
            printf("| %d x %d | %s | %d | %s | %.1f | %.3f | %.2e%s |\n", c.rows, len, name, grid, rg, us, share, err, ok ? "" : " WRONG");
            fflush(stdout);
        };
        variants(c, one);
    }
    printf("copy rate after: %.1f GB/s\n", copy_rate(y, x, n * 4));
    CK(cudaFree(x));
    CK(cudaFree(y));
    return bad ? 1 : 0;
}

/* A persistent kernel of the exchange prototypes, k(x, y, nchunks, ppr,
 * part, cnt) with T threads and chunks of ch floats, on as many blocks as
 * the device holds at once: the median of 20 launches (after 3), the row
 * counters zeroed in each; *regs its registers; *grid_out the grid, or 0
 * where a row is not whole chunks or spans more than `lag` steps of the
 * grid (the exchange could deadlock: not run). */
template <class K>
static float run_exchange(K k, int T, int ch, int lag, const SoftmaxCase &c, MS *part, unsigned *cnt, int *grid_out, int *regs) {
    int fit = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, k, T, 0));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, k));
    *regs = fa.numRegs;
    const long long grid = (long long)fit * c.nsm, nchunks = c.n / ch;
    const int ppr = c.len / ch;
    *grid_out = 0;
    if (c.len % ch || grid < 1 || ppr > lag * grid) return 0.f;
    *grid_out = (int)grid;
    return median_us([&] {
        CK(cudaMemsetAsync(cnt, 0, c.rows * sizeof(unsigned)));
        k<<<(unsigned)grid, T>>>(c.x, c.y, nchunks, ppr, part, cnt);
    });
}
