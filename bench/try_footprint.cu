/* try_footprint.cu: does the copy rate itself fall with the bytes a case
 * touches? (issue 16: on the H200 the 4-byte scans reach 0.95 of the copy
 * rate, but the i64 scans, which read and write 2 GiB each at 2^28, stay at
 * 0.835, CUB's too, and the recurrence, 1 GiB each of a, b and x, at
 * 0.78-0.80; on the H100 both meet their targets.) bench/run.sh's copy rate
 * is a cudaMemcpy of 1 GiB (2^28 floats). This times, in one process:
 *   memcpy    cudaMemcpy device to device of 256 MiB .. 3 GiB;
 *   kernel    a 16-byte-vector copy kernel (a grid of 8 blocks of 512 an
 *             SM, each a contiguous run of vectors) over the same sizes;
 *   stride    the same copy grid-stride over one wave (4 blocks of 512 an
 *             SM; each step 4 x 512 consecutive vectors a block, blocks
 *             side by side: the order gpuc's maps keep);
 *   2-in      x = a + b over arrays of 1 GiB each (the recurrence's 12
 *             bytes an element), both ways, as bytes read and written / time;
 * each as GB/s (bytes read + written / time) and as a share of the 1 GiB
 * memcpy's rate. Every output is compared on the device with what it should
 * hold (mismatches counted; any is an error). Medians of 20 calls after 3
 * (try_common.cuh).
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler -fopenmp -o bench/bin/try_footprint bench/try_footprint.cu
 * Run:   bench/bin/try_footprint */
#include "try_common.cuh"

__global__ void fill(float4 *p, long long nv, unsigned seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nv; i += (long long)gridDim.x * blockDim.x) {
        const unsigned h = (unsigned)i * 2654435761u ^ seed;
        p[i] = make_float4((float)(h & 1023), (float)((h >> 10) & 1023), (float)((h >> 20) & 1023), (float)(i & 1023));
    }
}

/* each block a contiguous run of vectors, 4 vectors a thread in flight */
__global__ void __launch_bounds__(512) copy_kernel(const float4 *__restrict__ a, float4 *__restrict__ y, long long nv) {
    const long long per = (nv + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per, hi = min(nv, lo + per);
    for (long long i = lo + threadIdx.x; i < hi; i += 4 * 512) {
        float4 q[4];
#pragma unroll
        for (int u = 0; u < 4; u++) if (i + u * 512 < hi) q[u] = __ldcs(a + i + u * 512);
#pragma unroll
        for (int u = 0; u < 4; u++) if (i + u * 512 < hi) __stcs(y + i + u * 512, q[u]);
    }
}

__global__ void __launch_bounds__(512) add_kernel(const float4 *__restrict__ a, const float4 *__restrict__ b, float4 *__restrict__ y, long long nv) {
    const long long per = (nv + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per, hi = min(nv, lo + per);
    for (long long i = lo + threadIdx.x; i < hi; i += 4 * 512) {
        float4 p[4], q[4];
#pragma unroll
        for (int u = 0; u < 4; u++) if (i + u * 512 < hi) { p[u] = __ldcs(a + i + u * 512); q[u] = __ldcs(b + i + u * 512); }
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (i + u * 512 < hi) __stcs(y + i + u * 512, make_float4(p[u].x + q[u].x, p[u].y + q[u].y, p[u].z + q[u].z, p[u].w + q[u].w));
    }
}

/* grid-stride: at each step the grid takes 4 x 512 consecutive vectors a
 * block, blocks side by side (the order gpuc's maps and scans keep) */
__global__ void __launch_bounds__(512) copy_stride(const float4 *__restrict__ a, float4 *__restrict__ y, long long nv) {
    for (long long i = blockIdx.x * 2048ll + threadIdx.x; i < nv; i += gridDim.x * 2048ll) {
        float4 q[4];
#pragma unroll
        for (int u = 0; u < 4; u++) if (i + u * 512 < nv) q[u] = __ldcs(a + i + u * 512);
#pragma unroll
        for (int u = 0; u < 4; u++) if (i + u * 512 < nv) __stcs(y + i + u * 512, q[u]);
    }
}

__global__ void __launch_bounds__(512) add_stride(const float4 *__restrict__ a, const float4 *__restrict__ b, float4 *__restrict__ y, long long nv) {
    for (long long i = blockIdx.x * 2048ll + threadIdx.x; i < nv; i += gridDim.x * 2048ll) {
        float4 p[4], q[4];
#pragma unroll
        for (int u = 0; u < 4; u++) if (i + u * 512 < nv) { p[u] = __ldcs(a + i + u * 512); q[u] = __ldcs(b + i + u * 512); }
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (i + u * 512 < nv) __stcs(y + i + u * 512, make_float4(p[u].x + q[u].x, p[u].y + q[u].y, p[u].z + q[u].z, p[u].w + q[u].w));
    }
}

/* mismatches of y against a (+ b when b is given) */
__global__ void compare(const float4 *a, const float4 *b, const float4 *y, long long nv, unsigned long long *bad) {
    unsigned long long mine = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < nv; i += (long long)gridDim.x * blockDim.x) {
        float4 w = a[i];
        if (b) { const float4 v = b[i]; w.x += v.x; w.y += v.y; w.z += v.z; w.w += v.w; }
        const float4 g = y[i];
        mine += (g.x != w.x) + (g.y != w.y) + (g.z != w.z) + (g.w != w.w);
    }
    if (mine) atomicAdd(bad, mine);
}

int main() {
    cudaDeviceProp prop;
    const int nsm = device_sms(&prop);
    const long long most = 3ll << 30;  /* the largest copy: 3 GiB each way */
    float4 *a, *b, *y;
    CK(cudaMalloc(&a, most));
    CK(cudaMalloc(&b, 1ll << 30));
    CK(cudaMalloc(&y, most));
    unsigned long long *bad;
    CK(cudaMalloc(&bad, sizeof *bad));
    fill<<<4 * nsm, 512>>>(a, most / 16, 12345u ^ (unsigned)time(nullptr));
    fill<<<4 * nsm, 512>>>(b, (1ll << 30) / 16, 777u ^ (unsigned)time(nullptr));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const double ref = copy_rate(y, a, 1ll << 30);
    printf("device %s, %d SMs; reference copy rate (cudaMemcpy, 1 GiB) %.1f GB/s\n", prop.name, nsm, ref);
    printf("| what | bytes each way | us | GB/s | of the 1 GiB memcpy | mismatches |\n|---|---|---|---|---|---|\n");
    int wrong = 0;
    auto check = [&](const float4 *bb, long long bytes) {
        CK(cudaMemset(bad, 0, sizeof *bad));
        compare<<<4 * nsm, 512>>>(a, bb, y, bytes / 16, bad);
        CK(cudaGetLastError());
        unsigned long long h = 0;
        CK(cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost));
        wrong += h != 0;
        return h;
    };
    const int grid = 8 * nsm;
    for (long long bytes : {1ll << 28, 1ll << 30, 3ll << 29, 1ll << 31, 3ll << 30}) {
        CK(cudaMemset(y, 0xff, bytes));
        const float us = median_us([&] { CK(cudaMemcpyAsync(y, a, (size_t)bytes, cudaMemcpyDeviceToDevice)); });
        unsigned long long h = check(nullptr, bytes);
        printf("| memcpy | %lld MiB | %.1f | %.1f | %.3f | %llu |\n", bytes >> 20, us, 2.0 * bytes / us / 1e3, 2.0 * bytes / us / 1e3 / ref, h);
        CK(cudaMemset(y, 0xff, bytes));
        const float uk = median_us([&] { copy_kernel<<<grid, 512>>>(a, y, bytes / 16); });
        h = check(nullptr, bytes);
        printf("| kernel | %lld MiB | %.1f | %.1f | %.3f | %llu |\n", bytes >> 20, uk, 2.0 * bytes / uk / 1e3, 2.0 * bytes / uk / 1e3 / ref, h);
        CK(cudaMemset(y, 0xff, bytes));
        const float us2 = median_us([&] { copy_stride<<<4 * nsm, 512>>>(a, y, bytes / 16); });
        h = check(nullptr, bytes);
        printf("| stride | %lld MiB | %.1f | %.1f | %.3f | %llu |\n", bytes >> 20, us2, 2.0 * bytes / us2 / 1e3, 2.0 * bytes / us2 / 1e3 / ref, h);
        fflush(stdout);
    }
    {
        const long long bytes = 1ll << 30;
        CK(cudaMemset(y, 0xff, bytes));
        const float us = median_us([&] { add_kernel<<<grid, 512>>>(a, b, y, bytes / 16); });
        const unsigned long long h = check(b, bytes);
        printf("| 2-in (x = a + b) | 1024 MiB x 3 | %.1f | %.1f | %.3f | %llu |\n", us, 3.0 * bytes / us / 1e3, 3.0 * bytes / us / 1e3 / ref, h);
        CK(cudaMemset(y, 0xff, bytes));
        const float us2 = median_us([&] { add_stride<<<4 * nsm, 512>>>(a, b, y, bytes / 16); });
        const unsigned long long h2 = check(b, bytes);
        printf("| 2-in stride | 1024 MiB x 3 | %.1f | %.1f | %.3f | %llu |\n", us2, 3.0 * bytes / us2 / 1e3, 3.0 * bytes / us2 / 1e3 / ref, h2);
    }
    printf("reference copy rate after: %.1f GB/s\n", copy_rate(y, a, 1ll << 30));
    return wrong ? 1 : 0;
}
