// Times gpuc's kernels (through the generated gpuc_dev_* launchers) against
// the device-to-device copy bandwidth measured in the same run.
#define GPUC_CUDA_HOST
#include "bench.cu"
#include <algorithm>
#include <vector>

__global__ void fill_f32(float *p, int64_t n, unsigned seed) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        p[i] = ((int)(h % 2001u) - 1000) / 1000.0f;
    }
}
__global__ void fill_i32(int *p, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) { p[i] = (int)(i % 7) - 3; }
}
__global__ void fill_i64(long long *p, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) { p[i] = (i % 7) - 3; }
}

template <typename F> static double time_ms(F f, int reps) {
    cudaEvent_t a, b;
    cudaEventCreate(&a); cudaEventCreate(&b);
    f(); f();
    std::vector<float> t;
    for (int r = 0; r < reps; r++) {
        cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : (1LL << 28);
    int reps = argc > 2 ? atoi(argv[2]) : 15;
    cudaDeviceProp prop; cudaGetDeviceProperties(&prop, 0);
    printf("device: %s, n = %lld\n", prop.name, (long long)n);
    float *x, *y, *z; int *xi; long long *xl;
    GPUC_CK(cudaMalloc(&x, n * 4)); GPUC_CK(cudaMalloc(&y, n * 4)); GPUC_CK(cudaMalloc(&z, n * 4));
    GPUC_CK(cudaMalloc(&xi, n * 4)); GPUC_CK(cudaMalloc(&xl, n * 8));
    fill_f32<<<4096, 256>>>(x, n, 1); fill_f32<<<4096, 256>>>(y, n, 2); fill_i32<<<4096, 256>>>(xi, n); fill_i64<<<4096, 256>>>(xl, n);
    GPUC_CK(cudaDeviceSynchronize());
    double copy = time_ms([&] { cudaMemcpyAsync(z, x, n * 4, cudaMemcpyDeviceToDevice); }, reps);
    double copy_gbs = 2.0 * n * 4 / copy / 1e6;
    printf("%-14s %10s %10s %8s\n", "case", "ms", "GB/s", "vs copy");
    printf("%-14s %10.3f %10.1f %8.2f\n", "copy", copy, copy_gbs, 1.0);
    auto report = [&](const char *name, double ms, double bytes) {
        double gbs = bytes / ms / 1e6;
        printf("%-18s %10.3f %10.1f %8.2f\n", name, ms, gbs, gbs / copy_gbs);
    };
    int64_t shape[2];
    float *o = NULL; int *oi = NULL; long long *ol = NULL; float s = 0, s2 = 0;
    report("saxpy", time_ms([&] { gpuc_dev_saxpy(n, 2.0f, x, y, &o, shape); gpuc_dfree(o); }, reps), 12.0 * n);
    report("chain", time_ms([&] { gpuc_dev_chain(n, x, y, &o, shape); gpuc_dfree(o); }, reps), 12.0 * n);
    report("sum", time_ms([&] { gpuc_dev_sum32(n, x, &s); }, reps), 4.0 * n);
    report("dot", time_ms([&] { gpuc_dev_dot(n, x, y, &s); }, reps), 8.0 * n);
    report("max", time_ms([&] { gpuc_dev_max32(n, x, &s); }, reps), 4.0 * n);
    report("cumsum_i32", time_ms([&] { gpuc_dev_cumsum_i32(n, xi, &oi, shape); gpuc_dfree(oi); }, reps), 8.0 * n);
    report("cumsum_f32", time_ms([&] { gpuc_dev_cumsum_f32(n, x, &o, shape); gpuc_dfree(o); }, reps), 8.0 * n);
    report("exscan_f32", time_ms([&] { gpuc_dev_exscan_f32(n, x, &o, shape); gpuc_dfree(o); }, reps), 8.0 * n);
    report("cumsum_i64", time_ms([&] { gpuc_dev_cumsum_i64(n, (const int64_t *)xl, (int64_t **)&ol, shape); gpuc_dfree(ol); }, reps), 16.0 * n);
    report("cumsum_i32/24", time_ms([&] { gpuc_dev_cumsum_i32_i24(n, xi, &oi, shape); gpuc_dfree(oi); }, reps), 8.0 * n);
    report("cumsum_i32/256x16", time_ms([&] { gpuc_dev_cumsum_i32_b256(n, xi, &oi, shape); gpuc_dfree(oi); }, reps), 8.0 * n);
    report("filter/24", time_ms([&] { gpuc_dev_positives_i24(n, x, &o, shape); gpuc_dfree(o); }, reps), 4.0 * n);
    int64_t kept = 0;
    report("filter", time_ms([&] { gpuc_dev_positives(n, x, &o, shape); kept = shape[0]; gpuc_dfree(o); }, reps), 4.0 * n);
    printf("  (filter kept %lld of %lld; bytes counted: read only)\n", (long long)kept, (long long)n);
    report("logsumexp", time_ms([&] { gpuc_dev_logsumexp(n, x, &s); }, reps), 4.0 * n);
    report("meanvar", time_ms([&] { gpuc_dev_meanvar(n, x, &s, &s2); }, reps), 4.0 * n);
    report("recurrence", time_ms([&] { gpuc_dev_recurrence(n, x, y, &o, shape); gpuc_dfree(o); }, reps), 12.0 * n);
    /* determinism: the same sum twice */
    float r1, r2; gpuc_dev_sum32(n, x, &r1); gpuc_dev_sum32(n, x, &r2);
    printf("sum deterministic: %s (%.9g)\n", r1 == r2 ? "yes" : "NO", r1);
    return 0;
}
