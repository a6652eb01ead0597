/* try_matmul.cu: the @tile matrix products of bench/programs/matmul.gdsl
 * (f64 `matmul`, f32 `matmul_f32`) against cuBLAS DGEMM and SGEMM
 * (CUBLAS_DEFAULT_MATH: no TF32) on the same random inputs, issue 16 item 5.
 * Built by bench/try_matmul.sh with the emitted CUDA C included first
 * (nvcc -DGPUC_CUDA_HOST -include bench/gen/matmul.cu). For each type and
 * shape n x k x m: gpuc's result (gpuc_dev_ENTRY_into, into a buffer
 * allocated here) must match cuBLAS's within a relative error bound
 * (max |gpuc - cuBLAS| / max |cuBLAS|: 1e-12 for f64, 1e-5 for f32), then
 * both are timed with a CUDA event pair per call, 3 warm-up calls and the
 * median of 15. Shapes the launcher splits in k (few tiles) are among the
 * checked ones, and at 1024^3 and 1000^3 two runs of gpuc must give the same
 * bits (the parts are added in a fixed order). A second table launches the
 * fast kernels directly with 1, 2, 3, 4, 6 and 8 parts (g_ks) at those sizes,
 * each checked and timed the same way (memset of the counters included), to
 * show which split the launcher's rule should pick. Exits 1 if any result
 * is wrong. `--f64` or `--f32` runs one type only (bench/try_matmul.sh builds
 * one binary per GPUC_MM_F64_K and runs f64 on each, f32 once). */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(2); } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, (int)s_); exit(2); } } while (0)

template <class F> static double median_us(F f) {
    for (int i = 0; i < 3; i++) { f(); }
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int i = 0; i < 15; i++) {
        CK(cudaEventRecord(a, 0));
        f();
        CK(cudaEventRecord(b, 0));
        CK(cudaEventSynchronize(b));
        float t = 0;
        CK(cudaEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1e3;
}

template <class T> static T *dev_random(size_t n, unsigned seed) {
    std::vector<T> h(n);
    srand(seed);
    for (auto &x : h) { x = (T)(2.0 * rand() / RAND_MAX - 1.0); }
    T *d = nullptr;
    CK(cudaMalloc(&d, n * sizeof(T)));
    CK(cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

/* row-major C = A B through column-major cuBLAS: C^T = B^T A^T */
static void gemm(cublasHandle_t h, int64_t n, int64_t k, int64_t m, const double *A, const double *B, double *C) {
    const double one = 1.0, zero = 0.0;
    CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &one, B, (int)m, A, (int)k, &zero, C, (int)m));
}
static void gemm(cublasHandle_t h, int64_t n, int64_t k, int64_t m, const float *A, const float *B, float *C) {
    const float one = 1.0f, zero = 0.0f;
    CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &one, B, (int)m, A, (int)k, &zero, C, (int)m));
}
static int gpuc(int64_t n, int64_t k, int64_t m, const double *A, const double *B, double *C) {
    return gpuc_dev_matmul_into(0, n, k, m, A, B, C);
}
static int gpuc(int64_t n, int64_t k, int64_t m, const float *A, const float *B, float *C) {
    return gpuc_dev_matmul_f32_into(0, n, k, m, A, B, C);
}

static int wrong = 0;

/* The relative error max |c - r| / max |r| (infinite where c is NaN). */
template <class T> static double rel_error(const T *C, const T *R, size_t count) {
    std::vector<T> hc(count), hr(count);
    CK(cudaMemcpy(hc.data(), C, count * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hr.data(), R, count * sizeof(T), cudaMemcpyDeviceToHost));
    double diff = 0, scale = 0;
    for (size_t i = 0; i < count; i++) {
        double d = std::fabs((double)hc[i] - (double)hr[i]);
        diff = std::isnan(d) || d > diff ? (std::isnan(d) ? INFINITY : d) : diff;
        scale = std::max(scale, std::fabs((double)hr[i]));
    }
    return scale > 0 ? diff / scale : diff;
}

/* Two buffers of count elements with the same bits? */
template <class T> static bool same_bits(const T *X, const T *Y, size_t count) {
    std::vector<T> hx(count), hy(count);
    CK(cudaMemcpy(hx.data(), X, count * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hy.data(), Y, count * sizeof(T), cudaMemcpyDeviceToHost));
    return memcmp(hx.data(), hy.data(), count * sizeof(T)) == 0;
}

template <class T> static void one(cublasHandle_t h, const char *type, int64_t n, int64_t k, int64_t m, double bound, bool timed) {
    T *A = dev_random<T>((size_t)(n * k), 1), *B = dev_random<T>((size_t)(k * m), 2), *C = nullptr, *R = nullptr;
    CK(cudaMalloc(&C, (size_t)(n * m) * sizeof(T)));
    CK(cudaMalloc(&R, (size_t)(n * m) * sizeof(T)));
    CK(cudaMemset(C, 0xff, (size_t)(n * m) * sizeof(T)));  /* NaN where gpuc writes nothing */
    if (gpuc(n, k, m, A, B, C) != 0) { fprintf(stderr, "gpuc_dev_matmul failed\n"); exit(2); }
    gemm(h, n, k, m, A, B, R);
    CK(cudaDeviceSynchronize());
    double rel = rel_error(C, R, (size_t)(n * m));
    bool ok = rel <= bound;
    if (timed && n < 2048) {
        /* a second run into another buffer: the same bits */
        T *C2 = nullptr;
        CK(cudaMalloc(&C2, (size_t)(n * m) * sizeof(T)));
        if (gpuc(n, k, m, A, B, C2) != 0) { fprintf(stderr, "gpuc_dev_matmul failed\n"); exit(2); }
        CK(cudaDeviceSynchronize());
        if (!same_bits(C, C2, (size_t)(n * m))) {
            printf("| %s | %lldx%lldx%lld | two runs differ | | | | | | WRONG |\n", type, (long long)n, (long long)k, (long long)m);
            ok = false;
        }
        CK(cudaFree(C2));
    }
    if (!ok) { wrong++; }
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)n, (long long)k, (long long)m);
    if (timed) {
        double tg = median_us([&] { gpuc(n, k, m, A, B, C); });
        double tc = median_us([&] { gemm(h, n, k, m, A, B, R); });
        double fl = 2.0 * n * k * m;
        printf("| %s | %s | %.1f | %.2f | %.1f | %.2f | %.2f | %.1e | %s |\n", type, shape, tg, fl / tg * 1e-6, tc,
               fl / tc * 1e-6, tc / tg, rel, ok ? "ok" : "WRONG");
    } else {
        printf("| %s | %s | - | - | - | - | - | %.1e | %s |\n", type, shape, rel, ok ? "ok" : "WRONG");
    }
    fflush(stdout);
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(R));
}

/* The fast kernel launched directly with ks parts, as the launcher does
 * (backend/cuda/launch.c, matmul.c "Split k"): checked against R, timed. */
static void launch_parts(const double *A, const double *B, double *C, int64_t n, int64_t k, int64_t m, int ks, double *parts,
                         unsigned *cnt, unsigned gx, unsigned gy) {
    matmul_k0_matmul<<<dim3(gx * (unsigned)ks, gy), 256>>>(n, m, k, A, B, C, ks, parts, cnt);
}
static void launch_parts(const float *A, const float *B, float *C, int64_t n, int64_t k, int64_t m, int ks, float *parts,
                         unsigned *cnt, unsigned gx, unsigned gy) {
    matmul_f32_k0_matmul<<<dim3(gx * (unsigned)ks, gy), 128>>>(n, m, k, A, B, C, ks, parts, cnt);
}

template <class T> static void sweep(cublasHandle_t h, const char *type, int64_t n, int64_t k, int64_t m, double bound) {
    T *A = dev_random<T>((size_t)(n * k), 1), *B = dev_random<T>((size_t)(k * m), 2), *C = nullptr, *R = nullptr, *P = nullptr;
    unsigned *cnt = nullptr;
    const unsigned gx = (unsigned)((m + 63) / 64), gy = (unsigned)((n + 127) / 128);
    const size_t tiles = (size_t)gx * gy;
    CK(cudaMalloc(&C, (size_t)(n * m) * sizeof(T)));
    CK(cudaMalloc(&R, (size_t)(n * m) * sizeof(T)));
    CK(cudaMalloc(&P, tiles * 8 * 128 * 64 * sizeof(T)));
    CK(cudaMalloc(&cnt, tiles * sizeof(unsigned)));
    gemm(h, n, k, m, A, B, R);
    const int parts[] = { 1, 2, 3, 4, 6, 8 };
    for (int ks : parts) {
        CK(cudaMemset(C, 0xff, (size_t)(n * m) * sizeof(T)));
        auto run = [&] {
            CK(cudaMemsetAsync(cnt, 0, tiles * sizeof(unsigned), 0));
            launch_parts(A, B, C, n, k, m, ks, P, cnt, gx, gy);
        };
        run();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        double rel = rel_error(C, R, (size_t)(n * m));
        bool ok = rel <= bound;
        if (!ok) { wrong++; }
        double t = median_us(run);
        printf("| %s | %lldx%lldx%lld | %d | %u | %.1f | %.2f | %.1e | %s |\n", type, (long long)n, (long long)k, (long long)m, ks,
               (unsigned)(tiles * ks), t, 2.0 * n * k * m / t * 1e-6, rel, ok ? "ok" : "WRONG");
        fflush(stdout);
    }
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));
    CK(cudaFree(R));
    CK(cudaFree(P));
    CK(cudaFree(cnt));
}

int main(int argc, char **argv) {
    bool f64 = true, f32 = true;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--f64") == 0) {
            f32 = false;
        } else if (strcmp(argv[i], "--f32") == 0) {
            f64 = false;
        } else {
            fprintf(stderr, "usage: %s [--f64 | --f32]\n", argv[0]);
            return 2;
        }
    }
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s (sm_%d%d, %d SMs)\n", p.name, p.major, p.minor, p.multiProcessorCount);
#ifdef GPUC_MM_F64_K
    printf("f64 products: GPUC_MM_F64_K %d\n", GPUC_MM_F64_K);
#endif
    printf("\n");
    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    printf("| type | n x k x m | gpuc us | gpuc TFLOP/s | cuBLAS us | cuBLAS TFLOP/s | gpuc / cuBLAS speed | rel. error | check |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    const int64_t odd[][3] = { { 1, 1, 1 }, { 7, 7, 7 }, { 65, 63, 129 }, { 129, 130, 127 }, { 200, 300, 170 }, { 1000, 6, 998 },
                               { 3, 1000, 5 }, { 65, 777, 33 }, { 256, 2048, 256 }, { 1000, 300, 998 } };  /* the last 4: k split */
    for (auto &s : odd) { if (f64) { one<double>(h, "f64", s[0], s[1], s[2], 1e-12, false); } }
    for (auto &s : odd) { if (f32) { one<float>(h, "f32", s[0], s[1], s[2], 1e-5, false); } }
    const int64_t big[][3] = { { 1024, 1024, 1024 }, { 4096, 4096, 4096 }, { 1000, 1000, 1000 }, { 4095, 4097, 4093 } };
    for (auto &s : big) { if (f64) { one<double>(h, "f64", s[0], s[1], s[2], 1e-12, true); } }
    for (auto &s : big) { if (f32) { one<float>(h, "f32", s[0], s[1], s[2], 1e-5, true); } }
    printf("\nthe fast kernels launched with g_ks parts (k split), counters zeroed in each timed call:\n\n");
    printf("| type | n x k x m | parts | blocks | us | TFLOP/s | rel. error | check |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    if (f64) {
        sweep<double>(h, "f64", 1024, 1024, 1024, 1e-12);
        sweep<double>(h, "f64", 1000, 1000, 1000, 1e-12);
    }
    if (f32) {
        sweep<float>(h, "f32", 1024, 1024, 1024, 1e-5);
        sweep<float>(h, "f32", 1000, 1000, 1000, 1e-5);
    }
    CB(cublasDestroy(h));
    printf("\n%s: %d wrong\n", wrong ? "FAIL" : "PASS", wrong);
    return wrong ? 1 : 0;
}
