/* try_softmax_warp.cu: row softmax for short rows with a warp a row (issue
 * 16: rows of 256, where gpuc took 1.012x torch eager's time in the
 * 2026-11-29 whole run). A prototype, not gpuc's code. torch's
 * softmax_warp_forward takes a warp a row, 8 elements a lane, 30 registers,
 * 86% occupancy; gpuc's register kernel 8 lanes a row, 32 elements each, 80
 * registers, 33% occupancy, and at 8 elements a lane (@items(2)) it executes
 * 1.44x torch's instructions (docs/performance.md, fifteenth round, call 5)
 * because its per-row work (64-bit offsets, head and tail loops, guarded
 * loads) is paid by fewer elements. Here the per-row work is the least it
 * can be for rows whose length is a multiple of 4 and at most 128 x VPL:
 * one 64-bit row offset, VPL guarded 16-byte loads a lane, the maximum and
 * the sum by 5 shuffles each, IEEE division (as gpuc's `e / s`), VPL
 * guarded 16-byte stores. If it beats torch, gpuc gets this as a row-kernel
 * variant for short rows.
 * Every result is compared with a double-precision host softmax of every
 * row (bench/try_common.cuh: random data in [-8, 8), output poisoned with
 * NaN first); medians of 20 calls after 3; the copy rate in the same
 * process before and after.
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 -Xcompiler -fopenmp -o bench/bin/try_softmax_warp bench/try_softmax_warp.cu
 * Run:   bench/bin/try_softmax_warp [ROW_LENGTH ...]   (powers of two, 128..1024) */
#include "try_common.cuh"

/* rows of len (a multiple of 4, at most 128 * VPL) floats, a warp a row, T/32 rows a block */
template <int VPL, int T>
__global__ void __launch_bounds__(T) softmax_warp(const float *__restrict__ x, float *__restrict__ y, int rows, int len) {
    const int lane = threadIdx.x & 31;
    const int row = blockIdx.x * (T / 32) + (threadIdx.x >> 5);
    if (row >= rows) return;
    const float4 *xr = (const float4 *)(x + (size_t)row * len);
    float4 *yr = (float4 *)(y + (size_t)row * len);
    const int nv = len >> 2;
    float4 q[VPL];
#pragma unroll
    for (int k = 0; k < VPL; k++) {
        const int v = lane + 32 * k;
        q[k] = v < nv ? xr[v] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    }
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < VPL; k++) mx = fmaxf(mx, fmaxf(fmaxf(q[k].x, q[k].y), fmaxf(q[k].z, q[k].w)));
#pragma unroll
    for (int o = 16; o; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(~0u, mx, o));
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < VPL; k++) {
        q[k].x = expf(q[k].x - mx);
        q[k].y = expf(q[k].y - mx);
        q[k].z = expf(q[k].z - mx);
        q[k].w = expf(q[k].w - mx);
        s += (q[k].x + q[k].y) + (q[k].z + q[k].w);
    }
#pragma unroll
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
#pragma unroll
    for (int k = 0; k < VPL; k++) {
        const int v = lane + 32 * k;
        if (v < nv) yr[v] = make_float4(q[k].x / s, q[k].y / s, q[k].z / s, q[k].w / s);
    }
}

template <int VPL, int T>
static float run_warp(const SoftmaxCase &c, int *grid_out, int *regs) {
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, softmax_warp<VPL, T>));
    *regs = fa.numRegs;
    *grid_out = 0;
    if (c.len % 4 || c.len > 128 * VPL) return 0.f;
    const int grid = (c.rows + T / 32 - 1) / (T / 32);
    *grid_out = grid;
    return median_us([&] { softmax_warp<VPL, T><<<grid, T>>>(c.x, c.y, c.rows, c.len); });
}

int main(int argc, char **argv) {
    return softmax_main(argc, argv, "try_softmax_warp", 128, [&](const SoftmaxCase &c, auto &&one) {
#define V(VPL, T) one(#VPL " vectors a lane, " #T " threads", [&](int *g, int *r) { return run_warp<VPL, T>(c, g, r); })
        V(2, 128);
        V(2, 256);
        V(2, 512);
        V(4, 128);
        V(4, 256);
        V(8, 128);
        V(8, 256);
        V(2, 128);  /* the first again: drift */
#undef V
    });
}
