/* bench_matmul.cu: gpuc driver for bench/programs/matmul.gdsl (the seed's
 * templated tiled product, `@tile`, on f64 (`matmul`) and f32
 * (`matmul_f32`)), square n^3 for n = 1024 and 4096, against cuBLAS DGEMM and
 * SGEMM on the same inputs (CUBLAS_DEFAULT_MATH: no TF32), issue 16 item 5.
 * gpuc's result goes into a buffer allocated here (gpuc_dev_ENTRY_into), as
 * cuBLAS's does. Checks: at 1024 the f64 product against a host float64
 * product (within 1e-12 of the largest element); at every size gpuc's against cuBLAS's, max
 * |gpuc - cuBLAS| / max |cuBLAS| within 1e-12 (f64) or 1e-5 (f32), after the
 * output was poisoned. cuBLAS rows have src "cublas" (case "matmul").
 * Built with the emitted CUDA C included first (see driver.cuh), -lcublas. */
#include <cublas_v2.h>

#include "driver.cuh"

using namespace bench;

static cublasHandle_t blas()
{
    static cublasHandle_t h = nullptr;
    if (!h && cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "bench: cublasCreate failed\n");
        exit(3);
    }
    return h;
}

/* row-major C = A B through column-major cuBLAS: C^T = B^T A^T */
static cublasStatus_t gemm(int64_t n, const double *A, const double *B, double *C)
{
    const double one = 1.0, zero = 0.0;
    return cublasDgemm(blas(), CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, B, (int)n, A, (int)n, &zero, C,
                       (int)n);
}
static cublasStatus_t gemm(int64_t n, const float *A, const float *B, float *C)
{
    const float one = 1.0f, zero = 0.0f;
    return cublasSgemm(blas(), CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, B, (int)n, A, (int)n, &zero, C,
                       (int)n);
}
static int gpuc(int64_t n, const double *A, const double *B, double *C) { return gpuc_dev_matmul_into(0, n, n, n, A, B, C); }
static int gpuc(int64_t n, const float *A, const float *B, float *C) { return gpuc_dev_matmul_f32_into(0, n, n, n, A, B, C); }

/* max |c - r| / max |r| of two device arrays of count elements ("ok" or WRONG) */
template <typename T> static std::string close_to(const T *C, const T *R, int64_t count, double bound)
{
    std::vector<T> c = to_host(C, count), r = to_host(R, count);
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < count; i++) {
        double d = std::fabs((double)c[i] - (double)r[i]);
        diff = std::isnan(d) ? INFINITY : std::max(diff, d);
        scale = std::max(scale, std::fabs((double)r[i]));
    }
    double rel = scale > 0 ? diff / scale : diff;
    if (rel <= bound) return "ok";
    char b[96];
    snprintf(b, sizeof b, "WRONG: max relative difference to cuBLAS %.2g (bound %.0g)", rel, bound);
    return b;
}

template <typename T> static void product(double bound)
{
    for (int64_t n : {1024, 4096}) {
        T *A = dev_random<T>(n * n, 71 + n, UNIFORM);
        T *B = dev_random<T>(n * n, 72 + n, UNIFORM);
        T *C = nullptr, *R = nullptr;
        BK(cudaMalloc(&C, (size_t)(n * n) * sizeof(T)));
        BK(cudaMalloc(&R, (size_t)(n * n) * sizeof(T)));
        auto run = [&] {
            if (gpuc(n, A, B, C) != 0) {
                fprintf(stderr, "bench: gpuc_dev_matmul failed\n");
                exit(1);
            }
        };
        auto run_blas = [&] {
            if (gemm(n, A, B, R) != CUBLAS_STATUS_SUCCESS) {
                fprintf(stderr, "bench: cuBLAS gemm failed\n");
                exit(3);
            }
        };
        Timing t = time_it(run, 100, 20.0);
        Timing tb = time_it(run_blas, 100, 20.0);
        poison(C, (size_t)(n * n) * sizeof(T));
        poison_cache();
        run();
        run_blas();
        BK(cudaDeviceSynchronize());
        std::string chk = close_to(C, R, n * n, bound);
        if (chk == "ok" && n == 1024 && sizeof(T) == 8) {
            /* cuBLAS itself against the host, once */
            std::vector<T> ha = to_host(A, n * n), hb = to_host(B, n * n), g = to_host(C, n * n);
            std::vector<double> ref((size_t)(n * n), 0.0);
            for (int64_t i = 0; i < n; i++)
                for (int64_t k = 0; k < n; k++) {
                    const double aik = ha[i * n + k];
                    for (int64_t j = 0; j < n; j++) ref[i * n + j] += aik * hb[k * n + j];
                }
            double scale = 0;
            for (double v : ref) scale = std::max(scale, std::fabs(v));
            chk = compare(g.data(), ref.data(), n * n, 0, 1e-12 * scale);
        }
        char ex[64];
        snprintf(ex, sizeof ex, ", \"gflops\": %.1f", 2.0 * n * n * n / (t.med_us * 1e3));
        emit("matmul", dtype_name<T>(), n, n, &t, chk.c_str(), ex);
        snprintf(ex, sizeof ex, ", \"gflops\": %.1f", 2.0 * n * n * n / (tb.med_us * 1e3));
        std::string src = out().src;
        out().src = "cublas";
        emit("matmul", dtype_name<T>(), n, n, &tb, "ok", ex);
        out().src = src;
        BK(cudaFree(A));
        BK(cudaFree(B));
        BK(cudaFree(C));
        BK(cudaFree(R));
    }
}

BENCH_CASE(matmul, [] { product<double>(1e-12); });
BENCH_CASE(matmul_f32, [] { product<float>(1e-5); });
