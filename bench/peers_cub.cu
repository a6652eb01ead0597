/* peers_cub.cu: the nvcc-built peer harness of the gpuc benchmark suite.
 * Times, with CUDA events (median of many runs after warm-up, random data):
 *   - cudaMemcpy device-to-device copies (the bandwidth reference),
 *   - CUB DeviceReduce (sum, max; TransformReduce for sum of squares and dot),
 *   - CUB DeviceScan (inclusive/exclusive sum; an affine-recurrence scan over
 *     float2 pairs with a non-commutative operator),
 *   - CUB DeviceSelect (If and Flagged compaction),
 *   - CUB DeviceSegmentedReduce (row sums of a 2-D array),
 *   - the seed notebook's tiled float64 matmul kernel (N=1024, BLOCK_SIZE 32)
 *     and cuBLAS DGEMM on the same inputs,
 * for f32, f64, i32, i64 at the sizes given (log2 list). Results are JSON
 * lines (bench/report.py reads them). Each result is checked against a host
 * reference at sizes up to 2^22 (CUB is the peer, not the subject; the check
 * validates this harness).
 *
 *   peers_cub [--out FILE] [--sizes 10,12,...,28] [--case NAME] [--big]
 */
#include <cub/cub.cuh>
#include <cublas_v2.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include "common.cuh"

using namespace bench;

static Args g_args;
static bool g_big = false;
static const int64_t CHECK_MAX = (int64_t)1 << 22;

static bool want(const char *name) { return g_args.only.empty() || g_args.only == name; }

/* the sizes of a case: the list, plus 2^30 for f32 where --big and memory allow */
static std::vector<int64_t> sizes_for(size_t elem, bool allow_big, int buffers)
{
    std::vector<int64_t> v;
    for (int k : g_args.log2s) v.push_back((int64_t)1 << k);
    if (g_big && allow_big && elem == 4) {
        int64_t n = (int64_t)1 << 30;
        if ((size_t)n * elem * buffers + ((size_t)1 << 30) < free_mem()) v.push_back(n);
    }
    return v;
}

/* ---------------- copy ---------------- */
static void case_copy()
{
    if (!want("copy")) return;
    for (int64_t n : sizes_for(4, true, 2)) {
        Timing t = time_copy((size_t)n * 4);
        char ex[64];
        snprintf(ex, sizeof ex, ", \"GBps\": %.1f", 2.0 * n * 4 / (t.med_us * 1e3));
        emit("copy", "f32", n, 0, &t, "ok", ex);
    }
    /* the reference: 2^28 f32 (1 GiB), and 2^28 f64 (2 GiB) */
    for (int64_t bytes : {(int64_t)1 << 30, (int64_t)1 << 31}) {
        Timing t = time_copy((size_t)bytes);
        char ex[64];
        snprintf(ex, sizeof ex, ", \"GBps\": %.1f", 2.0 * bytes / (t.med_us * 1e3));
        emit("copy_ref", "u8", bytes, 0, &t, "ok", ex);
    }
}

/* ---------------- reductions ---------------- */
struct MaxOp {
    template <typename T>
    __host__ __device__ T operator()(const T &a, const T &b) const { return a < b ? b : a; }
};
struct Square {
    __host__ __device__ float operator()(float v) const { return v * v; }
};
struct DotAt {
    const float *x, *y;
    __host__ __device__ float operator()(int64_t i) const { return x[i] * y[i]; }
};

template <typename T>
static void case_reduce(bool is_max)
{
    const char *name = is_max ? "max" : "sum";
    if (!want(name)) return;
    const bool flt = (T)0.5 != (T)0;
    int kind = is_max ? (flt ? UNIFORM : FULLINT) : (flt ? DYADIC : SMALLINT);
    for (int64_t n : sizes_for(sizeof(T), true, 1)) {
        T *x = dev_random<T>(n, 11 + n, kind);
        T *r = nullptr;
        BK(cudaMalloc(&r, sizeof(T)));
        void *tmp = nullptr;
        size_t tb = 0;
        if (is_max) BK(cub::DeviceReduce::Max(tmp, tb, x, r, n));
        else BK(cub::DeviceReduce::Sum(tmp, tb, x, r, n));
        BK(cudaMalloc(&tmp, tb));
        auto run = [&] {
            if (is_max) BK(cub::DeviceReduce::Max(tmp, tb, x, r, n));
            else BK(cub::DeviceReduce::Sum(tmp, tb, x, r, n));
        };
        Timing t = time_it(run);
        std::string chk = "unchecked";
        if (n <= CHECK_MAX) {
            poison(r, sizeof(T));
            run();
            std::vector<T> h = to_host(x, n), g = to_host(r, 1);
            T ref = is_max ? h[0] : (T)0;
            for (int64_t i = 0; i < n; i++) {
                if (is_max) ref = h[i] > ref ? h[i] : ref;
                else ref = (T)(ref + h[i]); /* exact: dyadic floats, small ints */
            }
            chk = g[0] == ref ? "ok" : "WRONG";
        }
        emit(name, dtype_name<T>(), n, 0, &t, chk.c_str());
        BK(cudaFree(tmp));
        BK(cudaFree(r));
        BK(cudaFree(x));
    }
}

static void case_sumsq_dot(bool dot)
{
    const char *name = dot ? "dot" : "sumsq";
    if (!want(name)) return;
    for (int64_t n : sizes_for(4, false, 2)) {
        float *x = dev_random<float>(n, 21 + n, DYADIC);
        float *y = dev_random<float>(n, 22 + n, DYADIC);
        float *r = nullptr;
        BK(cudaMalloc(&r, sizeof(float)));
        void *tmp = nullptr;
        size_t tb = 0;
        auto it = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), DotAt{x, y});
        if (dot) BK(cub::DeviceReduce::Reduce(tmp, tb, it, r, n, cuda::std::plus<float>(), 0.0f));
        else BK(cub::DeviceReduce::TransformReduce(tmp, tb, x, r, n, cuda::std::plus<float>(), Square(), 0.0f));
        BK(cudaMalloc(&tmp, tb));
        auto run = [&] {
            if (dot) BK(cub::DeviceReduce::Reduce(tmp, tb, it, r, n, cuda::std::plus<float>(), 0.0f));
            else BK(cub::DeviceReduce::TransformReduce(tmp, tb, x, r, n, cuda::std::plus<float>(), Square(), 0.0f));
        };
        Timing t = time_it(run);
        std::string chk = "unchecked";
        if (n <= CHECK_MAX) {
            poison(r, 4);
            run();
            std::vector<float> hx = to_host(x, n), hy = to_host(y, n), g = to_host(r, 1);
            double ref = 0, scale = 0;
            for (int64_t i = 0; i < n; i++) {
                double p = dot ? (double)hx[i] * hy[i] : (double)hx[i] * hx[i];
                ref += p;
                scale += std::fabs(p);
            }
            chk = std::fabs(g[0] - ref) <= 1e-5 * scale + 1e-6 ? "ok" : "WRONG";
        }
        emit(name, "f32", n, 0, &t, chk.c_str());
        BK(cudaFree(tmp));
        BK(cudaFree(r));
        BK(cudaFree(x));
        BK(cudaFree(y));
    }
}

/* ---------------- scans ---------------- */
template <typename T>
static void case_scan(bool inclusive)
{
    const char *name = inclusive ? "scan_incl" : "scan_excl";
    if (!want(name)) return;
    const bool flt = (T)0.5 != (T)0;
    for (int64_t n : sizes_for(sizeof(T), inclusive, 2)) {
        T *x = dev_random<T>(n, 31 + n, flt ? DYADIC : SMALLINT);
        T *y = nullptr;
        BK(cudaMalloc(&y, (size_t)n * sizeof(T)));
        void *tmp = nullptr;
        size_t tb = 0;
        if (inclusive) BK(cub::DeviceScan::InclusiveSum(tmp, tb, x, y, n));
        else BK(cub::DeviceScan::ExclusiveSum(tmp, tb, x, y, n));
        BK(cudaMalloc(&tmp, tb));
        auto run = [&] {
            if (inclusive) BK(cub::DeviceScan::InclusiveSum(tmp, tb, x, y, n));
            else BK(cub::DeviceScan::ExclusiveSum(tmp, tb, x, y, n));
        };
        Timing t = time_it(run);
        std::string chk = "unchecked";
        if (n <= CHECK_MAX) {
            poison(y, (size_t)n * sizeof(T));
            run();
            std::vector<T> h = to_host(x, n), g = to_host(y, n), ref((size_t)n);
            T acc = 0;
            for (int64_t i = 0; i < n; i++) {
                if (!inclusive) ref[i] = acc;
                acc = (T)(acc + h[i]);
                if (inclusive) ref[i] = acc;
            }
            chk = compare(g.data(), ref.data(), n, 0, 0);
        }
        emit(name, dtype_name<T>(), n, 0, &t, chk.c_str());
        BK(cudaFree(tmp));
        BK(cudaFree(y));
        BK(cudaFree(x));
    }
}

/* the affine recurrence x[i] = a[i] * x[i-1] + b[i] as a scan of (a, b) maps */
struct Pair {
    const float *a, *b;
    __host__ __device__ float2 operator()(int64_t i) const { return make_float2(a[i], b[i]); }
};
struct Compose { /* apply p, then q */
    __host__ __device__ float2 operator()(const float2 &p, const float2 &q) const
    {
        return make_float2(p.x * q.x, p.y * q.x + q.y);
    }
};
struct Second {
    __host__ __device__ float operator()(const float2 &p) const { return p.y; }
};

static void case_recurrence()
{
    if (!want("recurrence")) return;
    for (int64_t n : sizes_for(4, false, 3)) {
        float *a = dev_random<float>(n, 41 + n, UNIFORM);
        float *b = dev_random<float>(n, 42 + n, UNIFORM);
        float *y = nullptr;
        BK(cudaMalloc(&y, (size_t)n * 4));
        auto in = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), Pair{a, b});
        auto outp = thrust::make_transform_output_iterator(y, Second());
        void *tmp = nullptr;
        size_t tb = 0;
        BK(cub::DeviceScan::InclusiveScan(tmp, tb, in, outp, Compose(), n));
        BK(cudaMalloc(&tmp, tb));
        auto run = [&] { BK(cub::DeviceScan::InclusiveScan(tmp, tb, in, outp, Compose(), n)); };
        Timing t = time_it(run);
        std::string chk = "unchecked";
        if (n <= CHECK_MAX) {
            poison(y, (size_t)n * 4);
            run();
            std::vector<float> ha = to_host(a, n), hb = to_host(b, n), g = to_host(y, n);
            std::vector<double> ref((size_t)n);
            double v = 0;
            for (int64_t i = 0; i < n; i++) ref[i] = v = ha[i] * v + hb[i];
            chk = compare(g.data(), ref.data(), n, 1e-3, 1e-4);
        }
        emit("recurrence", "f32", n, 0, &t, chk.c_str());
        BK(cudaFree(tmp));
        BK(cudaFree(y));
        BK(cudaFree(a));
        BK(cudaFree(b));
    }
}

/* ---------------- compaction ---------------- */
struct Positive {
    template <typename T>
    __host__ __device__ bool operator()(const T &v) const { return v > (T)0; }
};
__global__ void flags_kernel(const float *x, char *f, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        f[i] = x[i] > 0.0f;
}

template <typename T>
static void case_select(bool flagged)
{
    const char *name = flagged ? "filter_flagged" : "filter";
    if (!want(name)) return;
    const bool flt = (T)0.5 != (T)0;
    for (int64_t n : sizes_for(sizeof(T), false, 3)) {
        T *x = dev_random<T>(n, 51 + n, flt ? UNIFORM : SMALLINT);
        T *y = nullptr;
        char *flags = nullptr;
        int64_t *cnt = nullptr;
        BK(cudaMalloc(&y, (size_t)n * sizeof(T)));
        BK(cudaMalloc(&cnt, sizeof(int64_t)));
        if (flagged) {
            BK(cudaMalloc(&flags, (size_t)n));
            flags_kernel<<<1024, 256>>>((const float *)x, flags, n);
            BK(cudaGetLastError());
        }
        void *tmp = nullptr;
        size_t tb = 0;
        if (flagged) BK(cub::DeviceSelect::Flagged(tmp, tb, x, flags, y, cnt, n));
        else BK(cub::DeviceSelect::If(tmp, tb, x, y, cnt, n, Positive()));
        BK(cudaMalloc(&tmp, tb));
        auto run = [&] {
            if (flagged) BK(cub::DeviceSelect::Flagged(tmp, tb, x, flags, y, cnt, n));
            else BK(cub::DeviceSelect::If(tmp, tb, x, y, cnt, n, Positive()));
        };
        Timing t = time_it(run);
        int64_t kept = 0;
        BK(cudaMemcpy(&kept, cnt, sizeof kept, cudaMemcpyDeviceToHost));
        std::string chk = "unchecked";
        if (n <= CHECK_MAX) {
            poison(y, (size_t)n * sizeof(T));
            run();
            BK(cudaMemcpy(&kept, cnt, sizeof kept, cudaMemcpyDeviceToHost));
            std::vector<T> h = to_host(x, n), g = to_host(y, kept), ref;
            for (int64_t i = 0; i < n; i++)
                if (h[i] > (T)0) ref.push_back(h[i]);
            chk = (int64_t)ref.size() != kept ? "WRONG count" : compare(g.data(), ref.data(), kept, 0, 0);
        }
        char ex[64];
        snprintf(ex, sizeof ex, ", \"out_n\": %lld", (long long)kept);
        emit(name, dtype_name<T>(), n, 0, &t, chk.c_str(), ex);
        BK(cudaFree(tmp));
        BK(cudaFree(cnt));
        BK(cudaFree(y));
        if (flags) BK(cudaFree(flags));
        BK(cudaFree(x));
    }
}

/* ---------------- row sums (segmented reduce) ---------------- */
__global__ void offsets_kernel(int64_t *o, int64_t rows, int64_t m)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= rows; i += (int64_t)gridDim.x * blockDim.x)
        o[i] = i * m;
}

static void case_row_sums()
{
    if (!want("row_sums")) return;
    int64_t total = (int64_t)1 << g_args.log2s.back();
    for (int64_t m : {256, 1024, 4096, 32768}) {
        if (m > total) continue;
        int64_t rows = total / m;
        float *a = dev_random<float>(total, 61 + m, DYADIC);
        float *r = nullptr;
        int64_t *off = nullptr;
        BK(cudaMalloc(&r, (size_t)rows * 4));
        BK(cudaMalloc(&off, (size_t)(rows + 1) * 8));
        offsets_kernel<<<256, 256>>>(off, rows, m);
        BK(cudaGetLastError());
        void *tmp = nullptr;
        size_t tb = 0;
        BK(cub::DeviceSegmentedReduce::Sum(tmp, tb, a, r, rows, off, off + 1));
        BK(cudaMalloc(&tmp, tb));
        auto run = [&] { BK(cub::DeviceSegmentedReduce::Sum(tmp, tb, a, r, rows, off, off + 1)); };
        Timing t = time_it(run);
        poison(r, (size_t)rows * 4);
        run();
        std::vector<float> h = to_host(a, total), g = to_host(r, rows), ref((size_t)rows);
        for (int64_t i = 0; i < rows; i++) {
            float s = 0;
            for (int64_t j = 0; j < m; j++) s += h[i * m + j]; /* exact: dyadic */
            ref[i] = s;
        }
        std::string chk = compare(g.data(), ref.data(), rows, 0, 0);
        emit("row_sums", "f32", total, m, &t, chk.c_str());
        BK(cudaFree(tmp));
        BK(cudaFree(off));
        BK(cudaFree(r));
        BK(cudaFree(a));
    }
}

/* ---------------- the seed's tiled f64 matmul, and cuBLAS ---------------- */
/* The kernel of shared/seeds/002 (PyCUDA notebook) with N = 1024 and
 * BLOCK_SIZE = 32 substituted, as it was metaprogrammed there. */
#define SEED_N 1024
#define SEED_BS 32
__global__ void seed_mm(double *A, double *B, double *C)
{
    const uint bx = blockIdx.x;
    const uint by = blockIdx.y;
    const uint tx = threadIdx.x;
    const uint ty = threadIdx.y;
    const uint aBegin = SEED_N * SEED_BS * by;
    const uint aEnd = aBegin + SEED_N - 1;
    const uint aStep = SEED_BS;
    const uint bBegin = SEED_BS * bx;
    const uint bStep = SEED_BS * SEED_N;
    double Csub = 0;
    for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
        __shared__ double As[SEED_BS][SEED_BS];
        __shared__ double Bs[SEED_BS][SEED_BS];
        As[ty][tx] = A[a + SEED_N * ty + tx];
        Bs[ty][tx] = B[b + SEED_N * ty + tx];
        __syncthreads();
        for (int k = 0; k < SEED_BS; ++k) Csub += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    const uint c = SEED_N * SEED_BS * by + SEED_BS * bx;
    C[c + SEED_N * ty + tx] = Csub;
}

static void case_matmul()
{
    if (!want("matmul")) return;
    const int64_t N = SEED_N;
    double *A = dev_random<double>(N * N, 71, POSITIVE);
    double *B = dev_random<double>(N * N, 72, POSITIVE);
    double *C = nullptr, *C2 = nullptr;
    BK(cudaMalloc(&C, N * N * 8));
    BK(cudaMalloc(&C2, N * N * 8));
    auto run_seed = [&] {
        seed_mm<<<dim3(N / SEED_BS, N / SEED_BS), dim3(SEED_BS, SEED_BS)>>>(A, B, C);
    };
    Timing ts = time_it(run_seed, 100, 100.0);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate failed\n");
        exit(3);
    }
    const double one = 1.0, zero = 0.0;
    /* row-major C = A B is column-major C^T = B^T A^T: pass B first */
    auto run_blas = [&] {
        if (cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, B, N, A, N, &zero, C2, N) !=
            CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "cublasDgemm failed\n");
            exit(3);
        }
    };
    Timing tb = time_it(run_blas, 100, 100.0);
    poison(C, N * N * 8);
    poison(C2, N * N * 8);
    run_seed();
    run_blas();
    BK(cudaDeviceSynchronize());
    std::vector<double> g = to_host(C, N * N), r = to_host(C2, N * N);
    std::string chk = compare(g.data(), r.data(), N * N, 1e-12, 0);
    char ex[64];
    snprintf(ex, sizeof ex, ", \"gflops\": %.1f", 2.0 * N * N * N / (ts.med_us * 1e3));
    emit("matmul_seed", "f64", N, N, &ts, chk.c_str(), ex);
    snprintf(ex, sizeof ex, ", \"gflops\": %.1f", 2.0 * N * N * N / (tb.med_us * 1e3));
    emit("matmul_cublas", "f64", N, N, &tb, chk.c_str(), ex);
    cublasDestroy(h);
    BK(cudaFree(A));
    BK(cudaFree(B));
    BK(cudaFree(C));
    BK(cudaFree(C2));
}

int main(int argc, char **argv)
{
    /* --big is ours; the rest is common */
    std::vector<char *> rest;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--big")) g_big = true;
        else rest.push_back(argv[i]);
    }
    g_args = parse_args((int)rest.size(), rest.data(), "cub");
    if (g_args.list) {
        printf("copy sum max sumsq dot scan_incl scan_excl recurrence filter filter_flagged row_sums matmul\n");
        return 0;
    }
    BK(cudaSetDevice(0));
    BK(cudaFree(0));
    case_copy();
    case_reduce<float>(false);
    case_reduce<double>(false);
    case_reduce<int32_t>(false);
    case_reduce<int64_t>(false);
    case_reduce<float>(true);
    case_reduce<double>(true);
    case_reduce<int32_t>(true);
    case_reduce<int64_t>(true);
    case_sumsq_dot(false);
    case_sumsq_dot(true);
    case_scan<float>(true);
    case_scan<double>(true);
    case_scan<int32_t>(true);
    case_scan<int64_t>(true);
    case_scan<float>(false);
    case_scan<double>(false);
    case_scan<int32_t>(false);
    case_scan<int64_t>(false);
    case_recurrence();
    case_select<float>(false);
    case_select<int32_t>(false);
    case_select<float>(true);
    case_row_sums();
    case_matmul();
    return 0;
}
