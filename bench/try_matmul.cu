/* try_matmul.cu: the @tile matrix products of bench/programs/matmul.gdsl
 * (f64 `matmul`, f32 `matmul_f32`) against cuBLAS DGEMM and SGEMM
 * (CUBLAS_DEFAULT_MATH: no TF32) on the same random inputs, issue 16 item 5.
 * Built by bench/try_matmul.sh with the emitted CUDA C included first
 * (nvcc -DGPUC_CUDA_HOST -include bench/gen/matmul.cu). For each type and
 * shape n x k x m: gpuc's result (gpuc_dev_ENTRY_into, into a buffer
 * allocated here) must match cuBLAS's within a relative error bound
 * (max |gpuc - cuBLAS| / max |cuBLAS|: 1e-12 for f64, 1e-5 for f32), then
 * both are timed with a CUDA event pair per call, 3 warm-up calls and the
 * median of 15. Prints one table; exits 1 if any result is wrong. */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

template <class T> static void one(cublasHandle_t h, const char *type, int64_t n, int64_t k, int64_t m, double bound, bool timed) {
    T *A = dev_random<T>((size_t)(n * k), 1), *B = dev_random<T>((size_t)(k * m), 2), *C = nullptr, *R = nullptr;
    CK(cudaMalloc(&C, (size_t)(n * m) * sizeof(T)));
    CK(cudaMalloc(&R, (size_t)(n * m) * sizeof(T)));
    CK(cudaMemset(C, 0xff, (size_t)(n * m) * sizeof(T)));  /* NaN where gpuc writes nothing */
    if (gpuc(n, k, m, A, B, C) != 0) { fprintf(stderr, "gpuc_dev_matmul failed\n"); exit(2); }
    gemm(h, n, k, m, A, B, R);
    CK(cudaDeviceSynchronize());
    std::vector<T> hc((size_t)(n * m)), hr((size_t)(n * m));
    CK(cudaMemcpy(hc.data(), C, hc.size() * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hr.data(), R, hr.size() * sizeof(T), cudaMemcpyDeviceToHost));
    double diff = 0, scale = 0;
    for (size_t i = 0; i < hc.size(); i++) {
        double d = std::fabs((double)hc[i] - (double)hr[i]);
        diff = std::isnan(d) || d > diff ? (std::isnan(d) ? INFINITY : d) : diff;
        scale = std::max(scale, std::fabs((double)hr[i]));
    }
    double rel = scale > 0 ? diff / scale : diff;
    bool ok = rel <= bound;
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

int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s (sm_%d%d, %d SMs)\n\n", p.name, p.major, p.minor, p.multiProcessorCount);
    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    printf("| type | n x k x m | gpuc us | gpuc TFLOP/s | cuBLAS us | cuBLAS TFLOP/s | gpuc / cuBLAS speed | rel. error | check |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    const int64_t odd[][3] = { { 1, 1, 1 }, { 7, 7, 7 }, { 65, 63, 129 }, { 129, 130, 127 }, { 200, 300, 170 }, { 1000, 6, 998 } };
    for (auto &s : odd) { one<double>(h, "f64", s[0], s[1], s[2], 1e-12, false); }
    for (auto &s : odd) { one<float>(h, "f32", s[0], s[1], s[2], 1e-5, false); }
    const int64_t big[][3] = { { 1024, 1024, 1024 }, { 4096, 4096, 4096 }, { 1000, 1000, 1000 }, { 4095, 4097, 4093 } };
    for (auto &s : big) { one<double>(h, "f64", s[0], s[1], s[2], 1e-12, true); }
    for (auto &s : big) { one<float>(h, "f32", s[0], s[1], s[2], 1e-5, true); }
    CB(cublasDestroy(h));
    printf("\n%s: %d wrong\n", wrong ? "FAIL" : "PASS", wrong);
    return wrong ? 1 : 0;
}
